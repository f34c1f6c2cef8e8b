"""DroneRaceEnv: the quadrotor dynamics against an independent float64 NumPy integration,
hover, gate passes and crashes, capture == eager, cpu_threads, the next-gates term's columns
against the sensor, the adapters and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from track_gen import tools
from track_gen.envs import (
    DroneConfig,
    DroneCrash,
    DroneRaceEnv,
    RaceDone,
    drone_config,
    drone_gates_spec,
    fly_drones,
)
from track_gen.pipeline import presets

E = 8
PRESETS = ("racing_5inch", "crazyflie")


# ------------------------------------------------------------------------------ the oracle
def _rotation(q: np.ndarray) -> np.ndarray:
    """World-from-body rotation matrix of a unit quaternion (x, y, z, w), float64."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    av, aw, bv, bw = a[:3], a[3], b[:3], b[3]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), [aw * bw - av @ bv]])


def oracle_step(c: DroneConfig, action, p, v, q, w, T):
    """One control step of the documented dynamics in float64 (docs/drone-racing.md)."""
    a = np.clip(np.where(np.isfinite(action), action, 0.0), -1.0, 1.0)
    g = c.gravity
    t_cmd = g + a[0] * ((c.thrust_max - g) if a[0] >= 0 else (g - c.thrust_min))
    w_cmd = a[1:] * np.array(c.max_rate)
    h = c.dt / c.substeps
    kt, kw = 1 - math.exp(-h / c.tau_thrust), 1 - math.exp(-h / c.tau_rate)
    drag = np.array(c.drag)
    for _ in range(c.substeps):
        T = T + (t_cmd - T) * kt
        w = w + (w_cmd - w) * kw
        r = np.linalg.norm(w)
        dq = np.array([0, 0, 0, 1.0])
        if r > 0:
            dq = np.concatenate([w / r * math.sin(0.5 * r * h), [math.cos(0.5 * r * h)]])
        q = _qmul(q, dq)
        q = q / np.linalg.norm(q)
        R = _rotation(q)
        f = -drag * (R.T @ v) + np.array([0, 0, T])
        v = v + (R @ f + np.array([0, 0, -g])) * h
        p = p + v * h
    return p, v, q, w, T


def _arrays(n, p, v, q, w, T):
    return (
        wp.array(np.tile(p, (n, 1)), dtype=wp.vec3f, device="cpu"),
        wp.array(np.tile(v, (n, 1)), dtype=wp.vec3f, device="cpu"),
        wp.array(np.tile(q, (n, 1)), dtype=wp.quatf, device="cpu"),
        wp.array(np.tile(w, (n, 1)), dtype=wp.vec3f, device="cpu"),
        wp.array(np.full(n, T), dtype=wp.float32, device="cpu"),
    )


@pytest.mark.parametrize("preset", PRESETS)
def test_hover_is_an_exact_equilibrium(preset):
    """Zero actions at hover thrust, level and at rest: every state byte is kept."""
    c = drone_config(preset)
    state = _arrays(3, [1.5, -2.25, 3.0], [0, 0, 0], [0, 0, 0, 1.0], [0, 0, 0], c.gravity)
    before = [a.numpy().tobytes() for a in state]
    actions = wp.zeros((3, 4), dtype=wp.float32, device="cpu")
    for _ in range(200):
        fly_drones(c, actions, *state)
    assert [a.numpy().tobytes() for a in state] == before


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize(
    "action", [(0.1, 0.02, -0.015, 0.03), (-0.05, -0.01, 0.02, -0.04), (0.3, 0.0, 0.0, 0.0)]
)
def test_thrust_and_rate_steps_match_the_float64_oracle(preset, action):
    """A step in thrust and body rates from hover: 200 control steps within 1e-4 m of the
    float64 NumPy integration of the same equations (velocity within 1e-4 m/s)."""
    c = drone_config(preset)
    p, v, q = np.array([0.0, 0.0, 5.0]), np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0])
    w, T = np.zeros(3), c.gravity
    state = _arrays(1, p, v, q, w, T)
    actions = wp.array(np.array([action], np.float32), dtype=wp.float32, device="cpu")
    a64 = np.array(action, np.float32).astype(np.float64)
    worst = 0.0
    for _ in range(200):
        fly_drones(c, actions, *state)
        p, v, q, w, T = oracle_step(c, a64, p, v, q, w, T)
        worst = max(worst, float(np.abs(state[0].numpy()[0] - p).max()))
    assert worst < 1e-4, worst
    assert np.abs(state[1].numpy()[0] - v).max() < 1e-4
    assert np.abs(state[3].numpy()[0] - w).max() < 1e-5
    assert np.linalg.norm(p - [0, 0, 5]) > 0.5  # the step moved it


def test_non_finite_actions_are_read_as_zero_and_clamped():
    c = DroneConfig()
    bad = np.array([[np.nan, np.inf, -np.inf, 5.0]], np.float32)
    s1 = _arrays(1, [0, 0, 2.0], [1, 0, 0], [0, 0, 0, 1.0], [0, 0, 0], c.gravity)
    s2 = _arrays(1, [0, 0, 2.0], [1, 0, 0], [0, 0, 0, 1.0], [0, 0, 0], c.gravity)
    fly_drones(c, wp.array(bad, dtype=wp.float32, device="cpu"), *s1)
    good = np.array([[0.0, 0.0, 0.0, 1.0]], np.float32)
    fly_drones(c, wp.array(good, dtype=wp.float32, device="cpu"), *s2)
    assert [a.numpy().tobytes() for a in s1] == [a.numpy().tobytes() for a in s2]


# ------------------------------------------------------------------------------ the env
@pytest.fixture(scope="module")
def env():
    return DroneRaceEnv(E, "cpu", 0, new_course_on_reset=False)


def _zeros(n=E):
    return wp.zeros((n, 4), dtype=wp.float32, device="cpu")


def test_the_env_hovers_in_place(env):
    env.reset()
    before = env.position.numpy().copy()
    for _ in range(50):
        env.step(_zeros())
        assert not env.done.numpy().any()
    assert env.position.numpy().tobytes() == before.tobytes()
    assert np.isfinite(env.obs.numpy()).all()
    assert env.obs_dim == 18 + 2 * 7 and env.term_slices()["next_gates"] == (18, 32)


def test_flying_through_gate_0_passes_it_and_scores(env):
    env.reset()
    f = env.course.result.host("forward")[:, 0].astype(np.float64)
    f[:, 2] = 0
    f /= np.linalg.norm(f, axis=1, keepdims=True)
    env.velocity.assign((5.0 * f).astype(np.float32))
    passed_reward = np.zeros(E)
    for _ in range(40):
        env.step(_zeros())
        passed = env.course.progress.events.passed.numpy() != 0
        passed_reward[passed] = env.reward.numpy()[passed]
    assert (env.final_gates.numpy() == 1).all()
    assert (env.crash.numpy() == 0).all() and not env.done.numpy().any()
    assert (passed_reward > env.config.reward_gate - 0.5).all()


def _launch_along_gate_0(env, speed: float, sideways: float = 0.0) -> None:
    """Reset ``env`` and send every drone along gate 0's horizontal forward axis at ``speed``
    m/s, shifted ``sideways`` m to its left (level, zero rates)."""
    env.reset()
    f = env.course.result.host("forward")[:, 0].astype(np.float64)
    f[:, 2] = 0
    f /= np.linalg.norm(f, axis=1, keepdims=True)
    left = np.stack([-f[:, 1], f[:, 0], np.zeros(len(f))], axis=1)
    p = env.position.numpy().astype(np.float64) + sideways * left
    env.position.assign(p.astype(np.float32))
    env.velocity.assign((speed * f).astype(np.float32))


def test_the_gate_progress_reward_matches_the_float64_oracle():
    """progress_reward="gate": each step pays reward_progress * (the decrease of the distance
    to the centre of the gate targeted at the step's start, clamped to |v| dt) +
    reward_gate * passed - penalty_rate * |w|^2, the target switching at the pass."""
    env = DroneRaceEnv(E, "cpu", 0, new_course_on_reset=False)
    c = env.config
    assert c.progress_reward == "gate"
    _launch_along_gate_0(env, 5.0)
    gates = env.course.result.host("position").astype(np.float64)
    n = env.course.result.host("count")
    rows = np.arange(E)
    target = np.zeros(E, np.int64)
    p = env.position.numpy().astype(np.float64)
    dist = np.linalg.norm(p - gates[rows, 0], axis=1)
    passes = np.zeros(E, np.int64)
    for _ in range(40):
        env.step(_zeros())
        assert not env.done.numpy().any() and (env.crash.numpy() == 0).all()
        p = env.position.numpy().astype(np.float64)
        v = env.velocity.numpy().astype(np.float64)
        w = env.rates.numpy().astype(np.float64)
        passed = env.course.progress.events.passed.numpy().astype(np.float64)
        reach = np.linalg.norm(v, axis=1) * c.dt
        dg = np.clip(dist - np.linalg.norm(p - gates[rows, target], axis=1), -reach, reach)
        want = c.reward_progress * dg + c.reward_gate * passed
        want -= c.penalty_rate * np.einsum("ij,ij->i", w, w)
        np.testing.assert_allclose(env.reward.numpy(), want, rtol=0, atol=2e-5)
        target = env.course.progress.events.next_index.numpy().astype(np.int64)
        assert ((target >= 0) & (target < n)).all()
        dist = np.linalg.norm(p - gates[rows, target], axis=1)
        np.testing.assert_array_equal(env.drone.target.numpy(), target)
        passes += passed.astype(np.int64)
    assert (passes == 1).all() and (target == 1).all()


def test_flying_beside_a_gate_pays_along_the_line_but_not_towards_the_gate():
    """1.5 m beside gate 0 (clear of its 1.5 m opening and frame), parallel to its axis: the
    course-line progress pays the whole flight, the distance to the gate's centre only until
    the drone is abeam (and takes it back after)."""
    totals = {}
    for mode in ("gate", "line"):
        env = DroneRaceEnv(
            E, "cpu", 0, config=drone_config(progress_reward=mode), new_course_on_reset=False
        )
        _launch_along_gate_0(env, 5.0, sideways=1.5)
        total = np.zeros(E)
        for _ in range(40):
            env.step(_zeros())
            assert not env.done.numpy().any()
            total += env.reward.numpy()
        assert (env.final_gates.numpy() == 0).all()
        totals[mode] = total
    assert (totals["line"] > 2.0).all(), totals
    assert (np.abs(totals["gate"]) < 0.5).all(), totals


def test_falling_crashes_on_the_ground(env):
    env.reset()
    actions = wp.array(np.tile([-1.0, 0, 0, 0], (E, 1)).astype(np.float32), device="cpu")
    ended = np.zeros(E, bool)
    crash = np.zeros(E, np.int64)
    reason = np.zeros(E, np.int64)
    for _ in range(200):
        env.step(actions)
        d = (env.done.numpy() != 0) & ~ended
        crash[d], reason[d] = env.crash.numpy()[d], env.done_reason.numpy()[d]
        ended |= d
        if ended.all():
            break
    assert ended.all()
    assert ((crash & DroneCrash.GROUND) != 0).all() and ((reason & RaceDone.OOB) != 0).all()


def test_leaving_the_bounding_volume_crashes(env):
    env.reset()
    env.velocity.fill_(wp.vec3f(0.0, 0.0, 40.0))
    up = np.zeros(E, bool)
    for _ in range(40):
        env.step(_zeros())
        up |= (env.crash.numpy() & DroneCrash.BOUNDS) != 0
    assert up.all()


def _poison(env):
    for a in (env.obs, env.final_obs, env.reward):
        a.fill_(math.nan)
    env.done.fill_(7)


def test_capture_equals_eager():
    """The same actions, eager and replayed: every output byte equal, the replay's outputs
    poisoned before every step (a column the graph forgot cannot pass)."""
    config = drone_config("crazyflie", observations=("state", "next_gates"), max_episode_steps=60)
    a = DroneRaceEnv(E, "cpu", 5, config=config)
    b = DroneRaceEnv(E, "cpu", 5, config=config, captured=True)
    rng = np.random.default_rng(0)
    dones = 0
    for t in range(120):
        act = wp.array(rng.normal(0, 0.4, (E, 4)).astype(np.float32), device="cpu")
        _poison(b)
        a.step(act)
        b.step(act)
        for name in ("obs", "final_obs", "reward", "done", "done_reason", "crash", "position"):
            x, y = getattr(a, name).numpy(), getattr(b, name).numpy()
            assert x.tobytes() == y.tobytes(), f"step {t}: {name}"
        dones += int(a.done.numpy().sum())
    assert dones > 0 and (a.epochs.numpy() > 0).any()


def test_cpu_threads_give_the_same_bits():
    config = drone_config("crazyflie", max_episode_steps=40)
    rng = np.random.default_rng(1)
    acts = [rng.normal(0, 0.4, (12, 4)).astype(np.float32) for _ in range(90)]
    runs = []
    for threads in (1, 2, 3):
        spec = drone_gates_spec(config, 12, "cpu", cpu_threads=threads)
        env = DroneRaceEnv(12, None, 9, config=config, spec=spec)
        out = []
        for x in acts:
            env.step(wp.array(x, device="cpu"))
            out.append(env.obs.numpy().tobytes() + env.reward.numpy().tobytes())
        assert (env.epochs.numpy() > 0).any()
        runs.append(out)
    assert runs[0] == runs[1] == runs[2]


def test_next_gates_columns_match_the_sensor():
    config = drone_config(
        "racing_5inch",
        next_gates_num_gates=3,
        next_gates_reveal_range=8.0,
        next_gates_nominal_noise=0.5,
    )
    env = DroneRaceEnv(E, "cpu", 3, config=config, new_course_on_reset=False)
    rng = np.random.default_rng(2)
    scale = config.next_gates.position_scale
    a, b = env.term_slices()["next_gates"]
    for _ in range(30):
        env.step(wp.array(rng.normal(0, 0.2, (E, 4)).astype(np.float32), device="cpu"))
        poses = env.sensors["next_gates"]
        pos = poses.position.numpy().astype(np.float64).reshape(E, 3, 3)
        quat = poses.orientation.numpy().astype(np.float64).reshape(E, 3, 4)
        seen = poses.revealed.numpy().reshape(E, 3)
        ok = env.outputs.ok.numpy() != 0
        cols = env.obs.numpy()[:, a:b].reshape(E, 3, 7)
        for e in range(E):
            for k in range(3):
                want = np.zeros(7)
                if ok[e] and np.isfinite(pos[e, k]).all():
                    want[:3] = pos[e, k] / (np.linalg.norm(pos[e, k]) + scale)
                    want[3:6] = _rotation(quat[e, k])[:, 0]
                    want[6] = float(seen[e, k] != 0)
                np.testing.assert_allclose(cols[e, k], want, atol=2e-6)
        assert np.abs(env.obs.numpy()[:, a:b]).max() <= 1.0


def test_the_par_and_its_stats():
    env = DroneRaceEnv(4, "cpu", 0, config=drone_config("crazyflie", par=True))
    par = env.par.time.numpy()
    assert np.isfinite(par).all() and (par > 0).all()


def test_gym_and_rsl_rl_adapters():
    pytest.importorskip("gymnasium")
    from track_gen.envs.gym import DroneVectorEnv

    vec = DroneVectorEnv(4, "cpu", 0, config=drone_config("crazyflie"))
    obs, _ = vec.reset(seed=3)
    assert obs.shape == (4, 32) and vec.single_action_space.shape == (4,)
    obs, rew, term, trunc, info = vec.step(np.zeros((4, 4), np.float32))
    assert obs.shape == (4, 32) and rew.shape == (4,) and np.isfinite(obs).all()
    pytest.importorskip("rsl_rl")
    import torch

    from track_gen.envs.rsl_rl import RslRlEnv

    r = RslRlEnv(DroneRaceEnv(4, "cpu", 0, config=drone_config("crazyflie")))
    o, rew, done, _ = r.step(torch.zeros(4, 4))
    assert o["policy"].shape == (4, 32) and r.num_actions == 4


# ------------------------------------------------------------------------------ refusals
@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"thrust_max": 10.0}, ValueError, r"DroneConfig\.thrust_max"),
        ({"thrust_min": 9.81}, ValueError, r"DroneConfig\.thrust_min"),
        ({"substeps": 1, "drag": (30.0, 1.0, 1.0)}, ValueError, r"DroneConfig\.substeps"),
        ({"z_min": 5.0, "z_max": 4.0}, ValueError, r"DroneConfig\.z_min"),
        ({"z_min": 0.5}, ValueError, r"DroneConfig\.z_min"),
        ({"num_gates_min": 9, "num_gates_max": 8}, ValueError, r"DroneConfig\.num_gates_min"),
        ({"frame_thickness": 2.0}, ValueError, r"DroneConfig\.frame_thickness"),
        ({"radius": 0.8}, ValueError, r"DroneConfig\.radius"),
        ({"dt": 0.0}, ValueError, r"DroneConfig\.dt"),
        ({"max_rate": (1.0, 2.0)}, ValueError, r"DroneConfig\.max_rate"),
        ({"gate_collision": "walls"}, ValueError, r"DroneConfig\.gate_collision"),
        ({"par": "yes"}, TypeError, r"DroneConfig\.par"),
        ({"observations": ("state", "sonar")}, ValueError, r"observations"),
    ],
)
def test_config_refusals(kwargs, err, match):
    with pytest.raises(err, match=match):
        DroneConfig(**kwargs)


def test_presets_are_checked_configs():
    assert drone_config("racing_5inch") == DroneConfig()
    cf = drone_config("crazyflie")
    assert cf.gate_width == 0.4 and cf.thrust_max / cf.gravity == pytest.approx(2.0)
    with pytest.raises(ValueError, match="preset"):
        drone_config("mavic")
    with pytest.raises(ValueError, match=r"DroneConfig\.scale"):
        drone_config("crazyflie", scale=-1.0)


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"num_envs": 0}, ValueError, "num_envs"),
        ({"config": object()}, TypeError, "config"),
        ({"seeds": "x"}, TypeError, "seeds"),
        ({"captured": 1}, TypeError, "captured"),
        (
            {"curriculum": {"buffer_size": 4, "replay_prob": 0.5, "score": "regret"}},
            ValueError,
            "regret",
        ),
        ({"spec": presets.track(num_envs=2, device="cpu")}, TypeError, "gates PipelineSpec"),
        ({"spec": presets.gates(num_envs=2, device="cpu", gate_width=0.1)}, ValueError, "unit"),
        ({"spec": drone_gates_spec(DroneConfig(), 3, "cpu")}, ValueError, "num_envs"),
        ({"device": "tpu:0"}, ValueError, "device"),
    ],
)
def test_constructor_refusals(kwargs, err, match):
    kw = {"num_envs": 2, **kwargs}
    with pytest.raises(err, match=match):
        DroneRaceEnv(kw.pop("num_envs"), **kw)


def test_fly_drones_refusals():
    c = DroneConfig()
    state = _arrays(2, [0, 0, 1.0], [0, 0, 0], [0, 0, 0, 1.0], [0, 0, 0], c.gravity)
    before = [a.numpy().tobytes() for a in state]
    with pytest.raises(TypeError, match="config"):
        fly_drones(None, _zeros(2), *state)
    with pytest.raises(ValueError, match="actions"):
        fly_drones(c, wp.zeros((2, 3), dtype=wp.float32), *state)
    with pytest.raises(ValueError, match="thrust"):
        fly_drones(c, _zeros(2), *state[:4], wp.zeros(3, dtype=wp.float32))
    with pytest.raises(TypeError, match="rates"):
        fly_drones(c, _zeros(2), *state[:3], np.zeros((2, 3)), state[4])
    assert [a.numpy().tobytes() for a in state] == before


def test_the_term_is_registered_and_refused_on_tracks():
    assert "next_gates" in tools.observation_terms()
    from track_gen.envs import RaceConfig, RaceEnv

    with pytest.raises((TypeError, ValueError), match="gate"):
        RaceEnv(2, "cpu", config=RaceConfig(observations=("state", "next_gates")))
