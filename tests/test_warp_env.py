"""examples/warp_env: the on-device car environment (captured step == eager step, bitwise;
auto-reset exactly where done; mask-based partial reset; refused masks change nothing)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import warp as wp

from examples.warp_env import OBS_DIM, CarRaceEnv, DoneBit, follow_line

E, T, SEED = 16, 60, 11
# a closed-loop schedule fast and jittery enough that some cars leave the road, and episodes
# short enough that others time out within T steps
POLICY = dict(target_speed=0.9, gain_lateral=10.0, gain_heading=2.0, jitter=0.8, seed=3)
MAX_STEPS = 25


def _make(device, **kw):
    return CarRaceEnv(E, device, SEED, max_episode_steps=MAX_STEPS, **kw)


def _act(env, out):
    p = POLICY
    wp.launch(
        follow_line,
        E,
        [env.obs, p["target_speed"], p["gain_lateral"], p["gain_heading"], p["jitter"], p["seed"]],
        [out],
        device=env.device,
    )


def _poison(env):
    """Every output the step must rewrite, filled with garbage first."""
    env.obs.fill_(float("nan"))
    env.reward.fill_(float("nan"))
    env.done.fill_(7)
    env.time_out.fill_(7)
    env.done_reason.fill_(-1)


def _state(env) -> dict[str, np.ndarray]:
    """Host copies (on the cpu ``.numpy()`` is a view) of every env array, the course's
    result, seeds and epochs, and every component's result (checkpoints, progress events,
    contacts, frame)."""
    arrays = {
        "obs": env.obs,
        "reward": env.reward,
        "done": env.done,
        "time_out": env.time_out,
        "done_reason": env.done_reason,
        "episode_length": env.episode_length,
        "actions": env.actions,
        "position": env.position,
        "orientation": env.orientation,
        "yaw": env.yaw,
        "speed": env.speed,
        "steer": env.steer,
        "course.epochs": env.course.seeds.epochs,
    }
    r = env.course.result
    for f in dataclasses.fields(r):
        arrays[f"course.{f.name}"] = getattr(r, f.name)
    for name, comp in env.course.components.items():
        for f in dataclasses.fields(comp.result):
            value = getattr(comp.result, f.name)
            if isinstance(value, wp.array):
                arrays[f"{name}.{f.name}"] = value
    return {k: v.numpy().copy() for k, v in arrays.items()}


def _rows(state: dict, envs) -> dict:
    """The rows of ``envs`` in every per-env array (flat ``[E*k]`` arrays: k rows per env)."""
    out = {}
    for k, a in state.items():
        if a.shape[0] % E == 0:
            out[k] = a.reshape(E, -1, *a.shape[1:])[envs]
    return out


def _same_bytes(a: dict, b: dict, where: str) -> None:
    for k in a:
        assert a[k].tobytes() == b[k].tobytes(), f"{where}: {k} differs"


def _spawn_oracle(env) -> tuple[np.ndarray, np.ndarray]:
    """NumPy: bead 0 of each course, spawn_back behind it along the horizontal tangent
    (the origin, yaw 0, where the course has no finite bead 0)."""
    r, n = env.course.result, env.n_max
    c = r.center.numpy().reshape(E, n, 3)[:, 0].astype(np.float64)
    t = r.tangent.numpy().reshape(E, n, 3)[:, 0].astype(np.float64)
    t[:, 2] = 0.0
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    pos, yaw = c - env.spawn_back * t, np.arctan2(t[:, 1], t[:, 0])
    lost = ~np.isfinite(pos).all(axis=1) | (r.count.numpy() < 2)  # no bead 0: the origin
    pos[lost], yaw[lost] = 0.0, 0.0
    return pos, yaw


def test_captured_step_equals_eager_and_resets_exactly_where_done(device):
    eager = _make(device)
    captured = _make(device, captured=True)
    assert captured.graph is not None and eager.graph is None
    _same_bytes(_state(eager), _state(captured), "after construction")
    acts_e = wp.zeros((E, 2), dtype=wp.float32, device=eager.device)
    acts_c = wp.zeros((E, 2), dtype=wp.float32, device=captured.device)
    dones = np.zeros(E, np.int64)
    reasons = 0
    for t in range(T):
        _act(eager, acts_e)
        _act(captured, acts_c)
        before = _state(eager)
        _poison(eager)
        _poison(captured)
        eager.step(acts_e)  # eager: copies the actions, then runs the stages
        captured.step(acts_c)  # captured: copies the actions, then replays the graph
        a, b = _state(eager), _state(captured)
        _same_bytes(a, b, f"step {t}")
        assert np.isfinite(a["obs"]).all() and np.isfinite(a["reward"]).all(), t
        assert a["obs"].shape == (E, OBS_DIM)
        done = a["done"] != 0
        assert set(np.unique(a["done"])) <= {0, 1}
        assert np.array_equal(done, a["done_reason"] != 0)
        # a new course exactly where done was set, and only there
        changed = a["course.generation"] != before["course.generation"]
        assert np.array_equal(changed, done), (t, changed, done)
        assert np.array_equal(a["course.generation"][done], before["course.generation"][done] + 1)
        # the done cars stand behind the start line of their new course, episode counter 0
        assert (a["episode_length"][done] == 0).all()
        assert (a["episode_length"][~done] == before["episode_length"][~done] + 1).all()
        assert (a["progress.laps"][done] == 0).all() and (a["progress.progress"][done] == 0).all()
        pos, yaw = _spawn_oracle(eager)
        np.testing.assert_allclose(a["position"][done], pos[done], atol=1e-6)
        np.testing.assert_allclose(a["yaw"][done], yaw[done], atol=1e-6)
        assert (a["speed"][done] == 0).all() and (a["steer"][done] == 0).all()
        assert (a["time_out"] == (a["done_reason"] == int(DoneBit.TIME_OUT))).all()
        dones += done
        for r in a["done_reason"]:
            reasons |= int(r)
    assert dones.sum() > 0
    # the schedule ends episodes both ways: leaving the road and timing out
    assert reasons & DoneBit.OOB and reasons & DoneBit.TIME_OUT, reasons


def test_reset_mask_respawns_only_masked_envs_on_their_course(device):
    env = _make(device, captured=True)
    for _ in range(10):
        _act(env, env.actions)
        env.step()
    before = _state(env)
    mask_np = np.zeros(E, np.int32)
    picked = np.array([1, 4, 9])
    mask_np[picked] = 1
    mask = wp.array(mask_np, dtype=wp.int32, device=env.device)
    env.reset(mask)
    after = _state(env)
    keep = mask_np == 0
    # every other env bitwise unchanged, every course (and its derived data) kept
    _same_bytes(_rows(before, keep), _rows(after, keep), "unmasked envs")
    for k in before:
        if k.startswith(("course.", "checkpoints.")):
            assert before[k].tobytes() == after[k].tobytes(), k
    # the masked cars at rest behind the start line of the SAME course, counters zeroed
    pos, yaw = _spawn_oracle(env)
    np.testing.assert_allclose(after["position"][picked], pos[picked], atol=1e-6)
    np.testing.assert_allclose(after["yaw"][picked], yaw[picked], atol=1e-6)
    assert (after["speed"][picked] == 0).all() and (after["steer"][picked] == 0).all()
    assert (after["episode_length"][picked] == 0).all()
    assert (before["episode_length"][picked] == 10).all()
    assert (after["progress.progress"][picked] == 0).all()
    assert (after["progress.next_index"][picked] == 0).all()
    # the recorded step keeps working after the reset
    _act(env, env.actions)
    env.step()
    assert (env.episode_length.numpy()[picked] == 1).all()
    # reset(None): everyone
    env.reset()
    pos, yaw = _spawn_oracle(env)
    np.testing.assert_allclose(env.position.numpy(), pos, atol=1e-6)
    assert (env.episode_length.numpy() == 0).all()


@pytest.mark.parametrize(
    "bad, error",
    [
        ("float32", TypeError),
        ("int64", TypeError),
        ("numpy", TypeError),
        ("list", TypeError),
        ("short", ValueError),
        ("2d", ValueError),
        ("strided", ValueError),
    ],
)
def test_refused_mask_changes_nothing(device, bad, error):
    env = _make(device)
    for _ in range(3):
        _act(env, env.actions)
        env.step()
    ones = np.ones(E, np.int32)
    masks = {
        "float32": lambda: wp.array(ones, dtype=wp.float32, device=device),
        "int64": lambda: wp.array(ones, dtype=wp.int64, device=device),
        "numpy": lambda: ones,
        "list": lambda: ones.tolist(),
        "short": lambda: wp.array(ones[:-1], dtype=wp.int32, device=device),
        "2d": lambda: wp.array(ones.reshape(E, 1), dtype=wp.int32, device=device),
        "strided": lambda: wp.array(np.ones(2 * E, np.int32), dtype=wp.int32, device=device)[::2],
    }
    mask = masks[bad]()
    before = _state(env)
    with pytest.raises(error):
        env.reset(mask)
    _same_bytes(before, _state(env), f"refused {bad} mask")


def test_refused_actions_change_nothing(device):
    env = _make(device, captured=True)
    before = _state(env)
    with pytest.raises(TypeError):
        env.step(wp.zeros((E, 2), dtype=wp.float64, device=device))
    with pytest.raises(ValueError):
        env.step(wp.zeros((E, 3), dtype=wp.float32, device=device))
    with pytest.raises(TypeError):
        env.step(np.zeros((E, 2), np.float32))
    _same_bytes(before, _state(env), "refused actions")


def test_non_finite_car_is_gated_and_respawned(device):
    env = _make(device, captured=True)
    _act(env, env.actions)
    env.step()
    pos = env.position.numpy().copy()
    pos[3] = np.nan
    env.position.assign(pos)
    gen = env.course.result.generation.numpy().copy()
    env.step()
    obs = env.obs.numpy()
    assert np.isfinite(obs).all() and np.isfinite(env.reward.numpy()).all()
    expect = np.zeros(OBS_DIM, np.float32)
    expect[4] = 1.0  # cos of a zero heading error
    assert np.array_equal(obs[3], expect) and env.reward.numpy()[3] == 0.0
    assert env.done_reason.numpy()[3] & DoneBit.INVALID
    assert env.course.result.generation.numpy()[3] == gen[3] + 1  # a new course
    assert np.isfinite(env.position.numpy()[3]).all()  # respawned
