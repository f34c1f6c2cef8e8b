"""track_gen.envs.RaceEnv: observations against a NumPy oracle, rewards and terminations along a
hand-made trajectory, same-step auto-reset (new course or same course), partial resets, the
invalid-env rules, determinism, batch-slot independence and graph replay == eager."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen.envs import RaceConfig, RaceDone, RaceEnv
from track_gen.generators import GeneratorBase
from track_gen.pipeline import presets

E = 8
SEED = 21


def _host(env) -> dict[str, np.ndarray]:
    names = (
        "obs final_obs reward done time_out done_reason episode_length episode_progress "
        "final_progress position yaw speed steer"
    ).split()
    out = {n: getattr(env, n).numpy().copy() for n in names}
    r = env.course.result
    out["center"] = r.center.numpy().copy()
    out["generation"] = r.generation.numpy().copy()
    out["epochs"] = env.epochs.numpy().copy()
    return out


def _follow(obs: np.ndarray, speed: float, gain: float = 3.0) -> np.ndarray:
    """A line follower on the observation: steer at the first look-ahead point."""
    steer = np.clip(gain * np.arctan2(obs[:, 9], np.maximum(obs[:, 8], 1e-3)), -1, 1)
    throttle = np.clip(4.0 * (speed - obs[:, 0]), -1, 1)
    return np.stack([throttle, steer], 1).astype(np.float32)


def _polyline_point(center, arclen, length, count, target):
    """NumPy: the point at arc length ``target`` (mod length) of a closed polyline."""
    a = np.append(arclen[:count].astype(np.float64), float(length))
    pts = np.vstack([center[:count], center[:1]]).astype(np.float64)
    t = target % float(length)
    i = min(int(np.searchsorted(a, t, side="right")) - 1, count - 1)
    f = (t - a[i]) / max(a[i + 1] - a[i], 1e-12)
    return pts[i] + f * (pts[i + 1] - pts[i])


def _closest_s(center, arclen, length, count, p):
    """NumPy: arc length of the closest point of the closed polyline to ``p`` (2D)."""
    pts = np.vstack([center[:count], center[:1]]).astype(np.float64)[:, :2]
    a, b = pts[:-1], pts[1:]
    ab = b - a
    t = np.clip(((p[:2] - a) * ab).sum(1) / np.maximum((ab * ab).sum(1), 1e-18), 0, 1)
    q = a + t[:, None] * ab
    i = int(np.argmin(((q - p[:2]) ** 2).sum(1)))
    return float(arclen[i]) + t[i] * np.linalg.norm(ab[i])


def _lookahead_oracle(env) -> np.ndarray:
    """NumPy: the look-ahead columns from the course, the car pose and the observed lap
    fraction (the localizer's s)."""
    r, n = env.course.result, env.n_max
    center = r.center.numpy().reshape(env.num_envs, n, 3)
    arclen = r.arclen.numpy().reshape(env.num_envs, n)
    length, count = r.length.numpy(), r.count.numpy()
    obs, pos, yaw = env.obs.numpy(), env.position.numpy(), env.yaw.numpy()
    out = np.zeros((env.num_envs, 2 * len(env.config.lookahead)))
    for e in range(env.num_envs):
        s = obs[e, 7] * float(length[e])
        c, sn = np.cos(yaw[e]), np.sin(yaw[e])
        for k, d in enumerate(env.config.lookahead):
            q = _polyline_point(center[e], arclen[e], length[e], count[e], s + d)
            dx, dy = q[0] - pos[e, 0], q[1] - pos[e, 1]
            out[e, 2 * k : 2 * k + 2] = (c * dx + sn * dy, -sn * dx + c * dy)
    return out


def test_shapes_dtypes_and_first_observation(device):
    env = RaceEnv(E, device, SEED)
    D = env.obs_dim
    assert D == 8 + 2 * len(RaceConfig().lookahead)
    for name, dtype, shape in [
        ("obs", wp.float32, (E, D)),
        ("final_obs", wp.float32, (E, D)),
        ("actions", wp.float32, (E, 2)),
        ("reward", wp.float32, (E,)),
        ("done", wp.int32, (E,)),
        ("time_out", wp.int32, (E,)),
        ("done_reason", wp.int32, (E,)),
        ("episode_length", wp.int32, (E,)),
        ("episode_progress", wp.float32, (E,)),
    ]:
        a = getattr(env, name)
        assert a.dtype == dtype and tuple(a.shape) == shape, name
    obs = env.obs.numpy()
    assert np.isfinite(obs).all()
    valid = env.course.result.valid.numpy() != 0
    assert valid.all()
    # at rest, on the centerline behind the start line, facing along it
    np.testing.assert_array_equal(obs[:, 0], 0.0)
    np.testing.assert_array_equal(obs[:, 1], 0.0)
    assert np.abs(obs[:, 2]).max() < 0.01  # along the tangent at bead 0, not the chord
    assert (obs[:, 4] > 0.97).all()
    assert (obs[:, 5] > 0).all()  # on the road
    assert (obs[:, 7] > 0.97).all()  # spawn_back before the start line: s just below length
    np.testing.assert_allclose(obs[:, 8:], _lookahead_oracle(env), atol=2e-5)


def test_lookahead_matches_oracle_while_driving(device):
    env = RaceEnv(E, device, SEED, config=RaceConfig(max_episode_steps=10**6))
    acts = wp.zeros((E, 2), dtype=wp.float32, device=env.device)
    for t in range(60):
        acts.assign(_follow(env.obs.numpy(), 0.3))
        env.step(acts)
        if t % 15 == 14:
            np.testing.assert_allclose(env.obs.numpy()[:, 8:], _lookahead_oracle(env), atol=5e-5)


def test_rewards_and_termination_along_a_straight_line(device):
    """Full throttle, wheels straight: the car runs off the road. NumPy oracle of the car
    (kinematics), of ds (closest point) and of the reward; done exactly once, with OOB."""
    cfg = RaceConfig()
    env = RaceEnv(1, device, SEED, config=cfg)
    r = env.course.result
    center = r.center.numpy()[: env.n_max].copy()  # copies: the course regenerates in place
    arclen = r.arclen.numpy()[: env.n_max].copy()
    length, count = float(r.length.numpy()[0]), int(r.count.numpy()[0])
    p = env.position.numpy()[0].astype(np.float64)
    yaw = float(env.yaw.numpy()[0])
    s_prev, v, progress = _closest_s(center, arclen, length, count, p), 0.0, 0.0
    acts = wp.array(np.array([[1.0, 0.0]], np.float32), device=env.device)
    ended = None
    for t in range(200):
        env.step(acts)
        v = min(v + cfg.max_accel * cfg.dt, cfg.max_speed)
        p = p + np.array([v * np.cos(yaw), v * np.sin(yaw), 0.0]) * cfg.dt
        s = _closest_s(center, arclen, length, count, p)
        ds = (s - s_prev + length / 2) % length - length / 2
        s_prev = s
        progress += ds / length
        h = _host(env)
        done = bool(h["done"][0])
        expect = cfg.reward_progress * ds - (cfg.penalty_oob if done else 0.0)
        assert h["reward"][0] == pytest.approx(expect, abs=2e-4), t
        if done:
            ended = t
            assert h["done_reason"][0] == int(RaceDone.OOB), h["done_reason"]
            assert h["time_out"][0] == 0
            assert h["final_obs"][0, 5] < 0  # the last observation: off the road
            assert h["final_progress"][0] == pytest.approx(progress, abs=1e-4)
            break
        np.testing.assert_allclose(h["position"][0], p, atol=1e-4)
        assert h["episode_length"][0] == t + 1
    assert ended is not None and ended > 3
    # same-step reset: a new course (epoch 1), the car at rest on it, counters at 0
    h = _host(env)
    assert h["epochs"][0] == 1 and h["generation"][0] == 1
    assert h["obs"][0, 0] == 0 and h["episode_length"][0] == 0 and h["episode_progress"][0] == 0
    assert h["obs"][0, 5] > 0
    st = env.stats()
    assert st.episodes == 1 and st.lap_rate == 0.0
    assert st.mean_progress == pytest.approx(progress, abs=1e-4)
    assert st.mean_length == ended + 1


def test_time_out_is_a_truncation_and_same_course_reset(device):
    cfg = RaceConfig(max_episode_steps=5)
    env = RaceEnv(E, device, SEED, config=cfg, new_course_on_reset=False)
    before = _host(env)
    for t in range(5):
        env.step()  # actions stay 0: the cars stand still
        h = _host(env)
        np.testing.assert_array_equal(h["reward"], 0.0)
        if t < 4:
            assert not h["done"].any()
    assert h["done"].all() and h["time_out"].all()
    np.testing.assert_array_equal(h["done_reason"], int(RaceDone.TIME_OUT))
    # same course, same epoch, the car back at the start
    assert h["center"].tobytes() == before["center"].tobytes()
    np.testing.assert_array_equal(h["epochs"], 0)
    np.testing.assert_array_equal(h["obs"], before["obs"])
    np.testing.assert_array_equal(h["final_obs"], before["obs"])  # it never moved
    np.testing.assert_array_equal(h["episode_length"], 0)


def test_auto_reset_new_course_only_where_done(device):
    env = RaceEnv(E, device, SEED)
    acts = wp.zeros((E, 2), dtype=wp.float32, device=env.device)
    speeds = np.linspace(0.2, 1.0, E)
    n_done = 0
    for _ in range(120):
        before = _host(env)
        a = _follow(before["obs"], 0.0)
        a[:, 0] = np.clip(4.0 * (speeds - before["obs"][:, 0]), -1, 1)
        acts.assign(a)
        env.step(acts)
        h = _host(env)
        done = h["done"] != 0
        n_done += int(done.sum())
        assert np.array_equal(h["epochs"] != before["epochs"], done)
        np.testing.assert_array_equal(h["epochs"][done], before["epochs"][done] + 1)
        rows_b = before["center"].reshape(E, -1)
        rows_a = h["center"].reshape(E, -1)
        for e in np.flatnonzero(~done):
            assert rows_a[e].tobytes() == rows_b[e].tobytes()
        # done: final_obs holds the ended episode, obs the new one's first observation
        assert (h["obs"][done, 0] == 0).all() and (h["episode_length"][done] == 0).all()
        np.testing.assert_array_equal(h["final_obs"][~done], h["obs"][~done])
        assert np.isfinite(h["obs"]).all() and np.isfinite(h["reward"]).all()
    assert n_done >= 3  # the fast cars crashed


def test_a_lap_ends_the_episode(device):
    env = RaceEnv(2, device, SEED, config=RaceConfig(max_laps=1, max_episode_steps=2000))
    acts = wp.zeros((2, 2), dtype=wp.float32, device=env.device)
    for _ in range(600):
        acts.assign(_follow(env.obs.numpy(), 0.25))
        env.step(acts)
        if env.done.numpy().any():
            break
    reason = env.done_reason.numpy()
    assert (reason & int(RaceDone.LAPS)).any(), reason
    lapped = (reason & int(RaceDone.LAPS)) != 0
    # a lap completes at the last checkpoint: most of the loop was driven
    assert (env.final_progress.numpy()[lapped] > 0.7).all()
    assert env.stats().lap_rate > 0


def test_partial_reset_leaves_others_unchanged(device):
    env = RaceEnv(E, device, SEED)
    acts = wp.array(np.tile([[0.5, 0.1]], (E, 1)).astype(np.float32), device=env.device)
    for _ in range(3):
        env.step(acts)
    before = _host(env)
    m = np.zeros(E, np.int32)
    m[[1, 4]] = 1
    env.reset(wp.array(m, device=env.device))
    h = _host(env)
    keep = m == 0
    for k in ("obs", "position", "speed", "episode_length", "episode_progress", "epochs"):
        assert h[k][keep].tobytes() == before[k][keep].tobytes(), k
    assert (h["speed"][~keep] == 0).all() and (h["episode_length"][~keep] == 0).all()
    np.testing.assert_array_equal(h["epochs"], before["epochs"])  # same course


def test_invalid_env_is_dead_and_gated(device):
    env = RaceEnv(4, device, SEED)
    scale = env.course.generator.params["bezier.scale"]
    host = scale.numpy().copy()
    host[2] = np.nan  # written straight into the array: the env is built invalid
    scale.assign(host)
    env.course.regenerate()
    env.reset()
    assert env.course.result.valid.numpy()[2] == 0
    obs = env.obs.numpy()
    np.testing.assert_array_equal(obs[2, :4], 0.0)
    assert obs[2, 4] == 1.0
    np.testing.assert_array_equal(obs[2, 5:], 0.0)
    env.step(wp.array(np.ones((4, 2), np.float32), device=env.device))
    h = _host(env)
    assert h["done"][2] == 1 and h["done_reason"][2] & int(RaceDone.INVALID)
    assert h["reward"][2] == 0.0
    assert np.isfinite(h["obs"]).all() and np.isfinite(h["reward"]).all()
    assert not (h["done_reason"][[0, 1, 3]] & int(RaceDone.INVALID)).any()


def test_deterministic_and_independent_of_the_batch_slot(device):
    """Envs 4..7 of an 8-env batch seeded 100 + e equal a 4-env batch seeded 104 + e."""
    big = RaceEnv(8, device, 100)
    small = RaceEnv(4, device, 104)
    again = RaceEnv(4, device, 104)
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = rng.uniform(-1, 1, (8, 2)).astype(np.float32)
        a[:, 0] = np.abs(a[:, 0])
        big.step(wp.array(a, device=big.device))
        small.step(wp.array(a[4:], device=small.device))
        again.step(wp.array(a[4:], device=again.device))
    hb, hs, ha = _host(big), _host(small), _host(again)
    for k in ("obs", "reward", "position", "epochs", "episode_progress"):
        assert hs[k].tobytes() == ha[k].tobytes(), k
        assert hb[k][4:].tobytes() == hs[k].tobytes(), k
    assert hb["center"].reshape(8, -1)[4:].tobytes() == hs["center"].tobytes()
    assert hs["epochs"].sum() > 0  # some courses were regenerated on the way


def test_captured_replay_equals_eager(device):
    eager = RaceEnv(E, device, SEED)
    graph = RaceEnv(E, device, SEED, captured=True)
    assert graph.graph is not None
    rng = np.random.default_rng(1)
    for _ in range(30):
        a = rng.uniform(-1, 1, (E, 2)).astype(np.float32)
        a[:, 0] = np.abs(a[:, 0])
        graph.obs.fill_(float("nan"))  # poisoned: a stale buffer cannot pass
        graph.reward.fill_(float("nan"))
        eager.step(wp.array(a, device=eager.device))
        graph.step(wp.array(a, device=graph.device))
        he, hg = _host(eager), _host(graph)
        for k in he:
            assert he[k].tobytes() == hg[k].tobytes(), k


def test_reseed_restarts_at_epoch_zero(device):
    env = RaceEnv(4, device, 7)
    first = _host(env)
    env.step(wp.array(np.ones((4, 2), np.float32), device=env.device))
    env.reseed(7)
    h = _host(env)
    np.testing.assert_array_equal(h["epochs"], 0)
    assert h["center"].tobytes() == first["center"].tobytes()
    np.testing.assert_array_equal(h["obs"], first["obs"])
    np.testing.assert_array_equal(env.seeds.numpy(), 7 + np.arange(4))


def test_imported_circuit_through_a_spec(device):
    """A circuit imported with io.tracks_spec (an ellipse, 28 m wide, normalized): the env
    drives it like a generated course; a wrong spec is refused before anything is built."""
    from track_gen.io import RealTrack, tracks_spec
    from track_gen.pipeline import presets

    t = np.linspace(0.0, 2 * np.pi, 160, endpoint=False)
    xy = np.stack([200.0 * np.cos(t), 120.0 * np.sin(t)], axis=1)
    oval = RealTrack("ellipse", xy, np.full(160, 14.0), np.full(160, 14.0))
    spec = tracks_spec([oval], num_envs=2, device=device, units="normalized")
    env = RaceEnv(2, None, 0, spec=spec, new_course_on_reset=False)
    assert (env.course.result.valid.numpy() == 1).all()
    np.testing.assert_allclose(env.obs.numpy()[:, 8:], _lookahead_oracle(env), atol=2e-5)
    acts = wp.zeros((2, 2), dtype=wp.float32, device=env.device)
    for _ in range(40):
        acts.assign(_follow(env.obs.numpy(), 0.2))
        env.step(acts)
    assert env.episode_progress.numpy().min() > 0.05 and not env.done.numpy().any()
    with pytest.raises(ValueError, match="num_envs"):
        RaceEnv(3, None, 0, spec=spec)
    with pytest.raises(TypeError, match="spec"):
        RaceEnv(2, None, 0, spec="bezier")
    other = presets.track(num_envs=2, device="cpu")
    if wp.get_device(device) != wp.get_device("cpu"):
        with pytest.raises(ValueError, match="device"):
            RaceEnv(2, device, 0, spec=other)


def test_lookahead_any_order_and_past_a_lap(device):
    """Look-ahead distances in any order, one longer than a lap (it wraps)."""
    cfg = RaceConfig(lookahead=(0.5, 0.1, 7.3, 0.05))
    env = RaceEnv(4, device, SEED, config=cfg)
    acts = wp.zeros((4, 2), dtype=wp.float32, device=env.device)
    for _ in range(20):
        acts.assign(_follow(env.obs.numpy(), 0.3))
        env.step(acts)
    assert env.obs_dim == 16
    np.testing.assert_allclose(env.obs.numpy()[:, 8:], _lookahead_oracle(env), atol=5e-5)


# ------------------------------------------------------------------------------ early checks
def test_checkpoint_spacing_below_the_checkpoints_range_is_refused_by_the_config():
    # the message the course gave when the env was built, now from RaceConfig itself
    with pytest.raises(
        ValueError,
        match=r"checkpoint_spacing = 1e-07 is out of range: must be >= 1e-06 and <= 1000000\.0",
    ):
        RaceConfig(checkpoint_spacing=1e-7)
    # in range, but too many checkpoints on the default generator's longest loop: refused by
    # RaceConfig itself (the field named as the user wrote it, the spacing that fits)
    with pytest.raises(
        ValueError,
        match=r"RaceConfig\.checkpoint_spacing = 1e-06 gives 23,100,000 checkpoints .* raise "
        r"RaceConfig\.checkpoint_spacing \(a spacing >= 0\.000352 fits\)",
    ):
        RaceConfig(checkpoint_spacing=1e-6)
    assert RaceConfig(checkpoint_spacing=4e-4).checkpoint_spacing == 4e-4


def test_cones_spacing_capacity_is_refused_by_the_config():
    with pytest.raises(
        ValueError,
        match=r"RaceConfig\.cones_spacing = 1e-06 gives 47,931,204 props .* raise "
        r"RaceConfig\.cones_spacing \(a spacing >= 0\.000731 fits\)",
    ):
        RaceConfig(observations="state+cones", cones_spacing=1e-6)
    # not observed: the cones are never placed, any spacing in range is kept
    assert RaceConfig(cones_spacing=1e-6).cones_spacing == 1e-6
    assert RaceConfig(observations="cones", cones_spacing=8e-4).cones_spacing == 8e-4


def test_checkpoint_capacity_of_a_spec_is_refused_before_anything_is_built(monkeypatch):
    built = []
    real = GeneratorBase.__init__
    monkeypatch.setattr(
        GeneratorBase, "__init__", lambda obj, *a, **k: built.append(1) or real(obj, *a, **k)
    )
    # fits the default generator's loops, not those of a spec 100 times larger
    config = RaceConfig(checkpoint_spacing=4e-4)
    spec = presets.track(num_envs=2, device="cpu", scale=100.0, half_width=10.0)
    with pytest.raises(ValueError, match=r"config\.checkpoint_spacing = 0\.0004 gives"):
        RaceEnv(2, "cpu", config=config, spec=spec)
    assert built == []


def test_numpy_str_generator_is_stored_as_str():
    cfg = RaceConfig(generator=np.str_("polar"))
    assert type(cfg.generator) is str and cfg.generator == "polar"


def test_non_finite_actions_drive_like_zero(device):
    """RaceEnv's rule: a NaN or infinite action component is read as 0 (then clamped)."""
    a, b = RaceEnv(4, device, 3), RaceEnv(4, device, 3)
    odd = np.array([[np.nan, 0.0], [np.inf, -np.inf], [0.0, np.nan], [-np.inf, np.inf]])
    for _ in range(3):
        a.step(wp.array(odd.astype(np.float32), dtype=wp.float32, device=device))
        b.step(wp.zeros((4, 2), dtype=wp.float32, device=device))
    for name in ("position", "yaw", "speed", "steer", "obs"):
        assert getattr(a, name).numpy().tobytes() == getattr(b, name).numpy().tobytes(), name
