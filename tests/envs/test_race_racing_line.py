"""RaceEnv with a racing line (its use in the training loop): the two observed racing-line
columns and the par-pace reward term against NumPy oracles built from the racing-line result
and the localizer's frame, lap times and par percentages against the laps the progress tool
counts, the line re-planned with each masked regeneration, defaults bit for bit, replay ==
eager, no allocation in a step, the adapters' observation sizes, and every refused value of
the new RaceConfig fields (fuzz)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import tools
from track_gen.envs import RaceConfig, RaceEnv

from ..support.strategies import examples, expected_error, other_objects

E = 4
SEED = 21
NAMES = (
    "obs final_obs reward done time_out done_reason episode_length episode_progress "
    "final_progress final_lap_time position yaw speed steer"
).split()


def _host(env) -> dict[str, np.ndarray]:
    out = {n: getattr(env, n).numpy().copy() for n in NAMES}
    out["center"] = env.course.result.center.numpy().copy()
    out["epochs"] = env.epochs.numpy().copy()
    if env.racing_line is not None:
        for n in ("offset", "speed", "lap_time"):
            out[f"line_{n}"] = getattr(env.racing_line, n).numpy().copy()
    return out


def _follow(obs: np.ndarray, speed, gain: float = 3.0) -> np.ndarray:
    """A line follower on the observation: steer at the first look-ahead point."""
    steer = np.clip(gain * np.arctan2(obs[:, 9], np.maximum(obs[:, 8], 1e-3)), -1, 1)
    throttle = np.clip(4.0 * (speed - obs[:, 0]), -1, 1)
    return np.stack([throttle, steer], 1).astype(np.float32)


def _frame(env) -> tuple[np.ndarray, np.ndarray]:
    """The localizer's arc ``s`` and lateral offset ``n`` of each car (float64 ``[E]``)."""
    f = env.course.components["localizer"].result
    return f.s.numpy().astype(np.float64), f.n.numpy().astype(np.float64)


def _line_at(env, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NumPy float64: each env's racing-line offset and target speed at arc ``s[e]`` of its
    centerline, linear between the beads around it (the closing chord from the last bead
    back to bead 0 included)."""
    r, n_max = env.course.result, env.n_max
    arclen = r.arclen.numpy().reshape(env.num_envs, n_max).astype(np.float64)
    length, count = r.length.numpy().astype(np.float64), r.count.numpy()
    off = env.racing_line.offset.numpy().reshape(env.num_envs, n_max).astype(np.float64)
    spd = env.racing_line.speed.numpy().reshape(env.num_envs, n_max).astype(np.float64)
    out_o, out_v = np.zeros(env.num_envs), np.zeros(env.num_envs)
    for e in range(env.num_envs):
        c, L = int(count[e]), float(length[e])
        a = np.append(arclen[e, :c], L)
        u = float(s[e]) % L
        out_o[e] = np.interp(u, a, np.append(off[e, :c], off[e, 0]))
        out_v[e] = np.interp(u, a, np.append(spd[e, :c], spd[e, 0]))
    return out_o, out_v


def _invalidate(env, e: int) -> None:
    """Make env ``e``'s course invalid (a NaN scale written into its params) and restart."""
    scale = env.course.generator.params["bezier.scale"]
    host = scale.numpy().copy()
    host[e] = np.nan
    scale.assign(host)
    env.course.regenerate()
    env.reset()


# ------------------------------------------------------------------------------ defaults
def test_defaults_plan_no_line_and_keep_the_observation():
    cfg = RaceConfig()
    assert cfg.racing_line == "off" and cfg.reward_par == 0.0 and not cfg.plans_racing_line
    assert cfg.obs_dim == 8 + 2 * len(cfg.lookahead)
    env = RaceEnv(2, "cpu", SEED)
    assert env.racing_line is None and "racing_line" not in env.course.components
    assert env.course.racing_line is None


def test_par_mode_changes_no_output_of_the_default_env(device):
    """racing_line="par" plans the line but observes and rewards exactly as the default env:
    every output bit for bit, through crashes and regenerations."""
    base = RaceEnv(E, device, SEED)
    par = RaceEnv(E, device, SEED, config=RaceConfig(racing_line="par"))
    assert par.obs_dim == base.obs_dim and par.racing_line is not None
    rng = np.random.default_rng(3)
    for _ in range(60):
        a = rng.uniform(-1, 1, (E, 2)).astype(np.float32)
        a[:, 0] = np.abs(a[:, 0])
        base.step(wp.array(a, device=base.device))
        par.step(wp.array(a, device=par.device))
        hb, hp = _host(base), _host(par)
        for k in hb:
            assert hb[k].tobytes() == hp[k].tobytes(), k
    assert base.epochs.numpy().sum() > 0  # some courses were regenerated on the way


# ------------------------------------------------------------------------------ the line
def test_the_line_has_the_cars_limits_and_follows_each_regeneration(device):
    """The planner gets the documented mapping; after masked regenerations the env's line is
    the one a fresh planner computes on the current tracks (bit for bit)."""
    cfg = RaceConfig(racing_line="observe", half_extents=(0.02, 0.015), max_speed=1.5)
    env = RaceEnv(E, device, SEED, config=cfg)
    p = env.course.racing_line
    assert p.vehicle_width == pytest.approx(0.03)
    assert (p.a_lat, p.a_lon, p.v_max) == (cfg.max_lateral_accel, cfg.max_accel, 1.5)
    assert p.kappa_max is None
    rng = np.random.default_rng(5)
    partial = 0  # steps in which some envs, not all, got a new course
    for _ in range(40):
        a = rng.uniform(0, 1, (E, 2)).astype(np.float32)
        env.step(wp.array(a, device=env.device))
        partial += int(0 < env.done.numpy().sum() < E)
    assert partial > 0
    fresh = tools.RacingLineUtility(
        env.course.result, p.vehicle_width, a_lat=p.a_lat, a_lon=p.a_lon, v_max=p.v_max
    ).line
    for name in ("offset", "speed", "curvature", "lap_time", "length"):
        got = getattr(env.racing_line, name).numpy()
        assert got.tobytes() == getattr(fresh, name).numpy().tobytes(), name
    assert np.isfinite(env.racing_line.lap_time.numpy()).all()


def test_observed_line_columns_match_the_oracle(device):
    """The two appended columns: the line's offset at the car's arc minus the car's lateral
    offset, and the line's target speed / max_speed (NumPy from the racing-line result and the
    localizer frame); the other columns are the default env's, bit for bit."""
    cfg = RaceConfig(racing_line="observe", max_episode_steps=10**6)
    env = RaceEnv(E, device, SEED, config=cfg)
    base = RaceEnv(E, device, SEED, config=RaceConfig(max_episode_steps=10**6))
    D = env.obs_dim
    assert D == base.obs_dim + 2 == 8 + 2 * len(cfg.lookahead) + 2
    acts = wp.zeros((E, 2), dtype=wp.float32, device=env.device)
    checked = 0
    for t in range(61):
        if t:
            acts.assign(_follow(env.obs.numpy(), np.linspace(0.2, 0.5, E)))
            env.step(acts)
            base.step(acts)
        obs = env.obs.numpy()
        assert obs[:, : D - 2].tobytes() == base.obs.numpy().tobytes()
        if t % 10 == 0:
            s, n = _frame(env)
            off, spd = _line_at(env, s)
            np.testing.assert_allclose(obs[:, D - 2], off - n, atol=2e-5)
            np.testing.assert_allclose(obs[:, D - 1], spd / cfg.max_speed, atol=2e-5)
            checked += 1
    assert checked == 7
    assert np.isfinite(env.obs.numpy()).all()


def test_first_observation_after_a_reset_has_the_line_columns(device):
    env = RaceEnv(E, device, SEED, config=RaceConfig(racing_line="observe"))
    ones = wp.array(np.tile([[1.0, 0.0]], (E, 1)).astype(np.float32), device=env.device)
    for _ in range(200):
        env.step(ones)  # full throttle, straight: the cars crash and respawn
        if env.done.numpy().any():
            break
    done = env.done.numpy() != 0
    assert done.any()
    s, n = _frame(env)
    off, spd = _line_at(env, s)
    obs = env.obs.numpy()
    np.testing.assert_allclose(obs[done, -2], (off - n)[done], atol=2e-5)
    np.testing.assert_allclose(obs[done, -1], (spd / env.config.max_speed)[done], atol=2e-5)
    np.testing.assert_array_equal(obs[done, 0], 0.0)  # at rest on the new course


# ------------------------------------------------------------------------------ the reward
def test_par_reward_matches_the_oracle(device):
    """reward_par * (ds / length * par - dt) on top of the default reward (ds from the
    localizer's arcs of consecutive steps); racing_line='off' plans the line for it."""
    w = 0.7
    cfg = RaceConfig(reward_par=w, max_episode_steps=10**6)
    assert cfg.plans_racing_line and cfg.obs_dim == RaceConfig().obs_dim
    env = RaceEnv(E, device, SEED, config=cfg)
    base = RaceEnv(E, device, SEED, config=RaceConfig(max_episode_steps=10**6))
    par = env.racing_line.lap_time.numpy().astype(np.float64)
    assert np.isfinite(par).all() and (par > 0).all()
    acts = wp.zeros((E, 2), dtype=wp.float32, device=env.device)
    s_prev, _ = _frame(env)
    terms = []
    for _ in range(50):
        acts.assign(_follow(env.obs.numpy(), np.linspace(0.0, 0.6, E)))
        env.step(acts)
        base.step(acts)
        s, _ = _frame(env)  # a done env's: its new episode's first (its next step's s_prev)
        keep = env.done.numpy() == 0
        length = env.course.result.length.numpy().astype(np.float64)
        ds = (s - s_prev + length / 2) % length - length / 2
        s_prev = s
        term = w * (ds / length * par - cfg.dt)
        got = env.reward.numpy().astype(np.float64) - base.reward.numpy()
        np.testing.assert_allclose(got[keep], term[keep], atol=2e-6)
        par = env.racing_line.lap_time.numpy().astype(np.float64)  # a new course's par
        terms.append(term)
        assert keep[0]
    terms = np.array(terms)
    assert (terms[:, 0] < 0).all()  # env 0 stands still: it loses w * dt per step
    np.testing.assert_allclose(terms[:, 0], -w * cfg.dt, atol=1e-12)


def test_invalid_env_gets_zero_par_reward(device):
    env = RaceEnv(E, device, SEED, config=RaceConfig(reward_par=1.0, racing_line="observe"))
    _invalidate(env, 2)
    assert env.course.result.valid.numpy()[2] == 0
    assert math.isnan(env.racing_line.lap_time.numpy()[2])  # no line on an invalid course
    obs = env.obs.numpy()
    np.testing.assert_array_equal(obs[2, -2:], 0.0)
    env.step(wp.zeros((E, 2), dtype=wp.float32, device=env.device))
    h = _host(env)
    assert h["reward"][2] == 0.0 and h["done"][2] == 1
    assert np.isfinite(h["obs"]).all() and np.isfinite(h["reward"]).all()
    # the valid envs stand still: they pay the par term's -dt
    np.testing.assert_allclose(h["reward"][[0, 1, 3]], -env.config.dt, atol=1e-7)


# ------------------------------------------------------------------------------ lap times
def test_lap_times_and_par_percent_match_the_counted_laps(device):
    """Each timed lap is the steps between two consecutive lap completions (progress laps,
    counted on the host here) times dt; the first lap of an episode is not timed."""
    n = 2
    cfg = RaceConfig(racing_line="par", max_laps=3, max_episode_steps=5000)
    env = RaceEnv(n, device, SEED, config=cfg, new_course_on_reset=False)
    par = env.racing_line.lap_time.numpy().astype(np.float64)
    laps = env.course.components["progress"].result.laps
    acts = wp.zeros((n, 2), dtype=wp.float32, device=env.device)
    last = [None] * n
    seen = [0] * n
    expect: list[list[float]] = [[] for _ in range(n)]
    env.stats(clear=True)
    for step in range(1, 3000):
        acts.assign(_follow(env.obs.numpy(), np.array([0.35, 0.45])))
        env.step(acts)
        done = env.done.numpy() != 0
        count = laps.numpy()  # a done env's was reset in the step: LAPS says it lapped
        reason = env.done_reason.numpy()
        for e in range(n):
            k = (seen[e] + 1 if reason[e] & 2 else seen[e]) if done[e] else int(count[e])
            if k > seen[e]:
                if last[e] is not None:
                    expect[e].append((step - last[e]) * cfg.dt)
                    assert env.final_lap_time.numpy()[e] == pytest.approx(expect[e][-1])
                last[e], seen[e] = step, k
            if done[e]:
                last[e], seen[e] = None, 0  # a new episode: its first lap is not timed
        if all(len(x) >= 2 for x in expect):
            break
    flat = [t for x in expect for t in x]
    assert len(flat) >= 4
    st_ = env.stats(clear=True)
    assert st_.laps_timed == len(flat)
    assert st_.mean_lap_time == pytest.approx(np.mean(flat), rel=1e-5)
    pct = [100 * t / par[e] for e in range(n) for t in expect[e]]
    assert st_.mean_par_percent == pytest.approx(np.mean(pct), rel=1e-5)
    assert 100 < st_.mean_par_percent < 1000  # slower than the line's par
    assert env.stats().laps_timed == 0 and math.isnan(env.stats().mean_lap_time)


def test_lap_times_without_a_line_have_no_par(device):
    env = RaceEnv(1, device, SEED, config=RaceConfig(max_laps=2, max_episode_steps=5000))
    acts = wp.zeros((1, 2), dtype=wp.float32, device=env.device)
    for _ in range(3000):
        acts.assign(_follow(env.obs.numpy(), 0.35))
        env.step(acts)
        if env.done.numpy()[0]:
            break
    assert env.done_reason.numpy()[0] & 2
    st_ = env.stats()
    assert st_.laps_timed == 1 and st_.mean_lap_time == env.final_lap_time.numpy()[0] > 0
    assert math.isnan(st_.mean_par_percent)


# ------------------------------------------------------------------------------ hot path
def test_captured_replay_equals_eager_with_the_line(device):
    cfg = RaceConfig(racing_line="observe", reward_par=0.5)
    eager = RaceEnv(E, device, SEED, config=cfg)
    graph = RaceEnv(E, device, SEED, config=cfg, captured=True)
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
    assert eager.epochs.numpy().sum() > 0


def test_a_step_allocates_nothing():
    env = RaceEnv(E, "cpu", SEED, config=RaceConfig(racing_line="observe", reward_par=1.0))
    ones = wp.array(np.tile([[1.0, 0.3]], (E, 1)).astype(np.float32), device="cpu")
    env.step(ones)  # warm: kernels loaded
    allocator = type(wp.get_device("cpu").get_allocator())
    calls = []
    original = allocator.allocate

    def allocate(self, size):
        calls.append(size)
        return original(self, size)

    allocator.allocate = allocate
    try:
        for _ in range(30):
            env.step(ones)  # crashes included: masked regenerations re-plan the line
    finally:
        allocator.allocate = original
    assert env.epochs.numpy().sum() > 0
    assert calls == []


# ------------------------------------------------------------------------------ adapters
def test_adapters_follow_obs_dim():
    pytest.importorskip("gymnasium")
    from track_gen.envs.gym import RaceVectorEnv

    cfg = RaceConfig(racing_line="observe")
    vec = RaceVectorEnv(2, "cpu", seed=0, config=cfg)
    assert vec.single_observation_space.shape == (cfg.obs_dim,)
    obs, _ = vec.reset(seed=0)
    assert obs.shape == (2, cfg.obs_dim)
    pytest.importorskip("torch")
    pytest.importorskip("rsl_rl")
    from track_gen.envs.rsl_rl import RslRlRaceEnv

    rsl = RslRlRaceEnv(RaceEnv(2, "cpu", 0, config=cfg))
    assert rsl.get_observations()["policy"].shape == (2, cfg.obs_dim)
    assert rsl.cfg["racing_line"] == "observe"


# ------------------------------------------------------------------------------ fuzz
ODD = [o for o in other_objects(3) if not isinstance(o, str)] + [None, b"par"]


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(
    value=st.one_of(
        st.sampled_from(["off", "par", "observe", "Observe", "", "on", "par "]),
        st.text(max_size=8),
        st.sampled_from(ODD + [True, False, 0, 1, 2.0, np.str_("par")]),
    )
)
def test_racing_line_values(value):
    if not isinstance(value, str):
        with pytest.raises(TypeError, match="racing_line"):
            RaceConfig(racing_line=value)
    elif value not in ("off", "par", "observe"):
        with pytest.raises(ValueError, match=r"racing_line = .* must be one of"):
            RaceConfig(racing_line=value)
    else:
        cfg = RaceConfig(racing_line=value)
        assert type(cfg.racing_line) is str and cfg.racing_line == value
        assert cfg.plans_racing_line == (value != "off")
        assert cfg.obs_dim == 18 + (2 if value == "observe" else 0)


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(
    value=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(2**70), 2**70),
        st.sampled_from([0, 0.0, -0.0, 1e308, -1e308, 10**400, np.float32(2.5), np.int8(-3)]),
        st.sampled_from([1e6, -1e6, 1e-40, 1e-300, 3.4e38, 1.1754944e-38]),
        st.sampled_from(ODD + [True, False, "1.0", (1.0,)]),
    ),
    line=st.sampled_from(["off", "par", "observe"]),
)
def test_reward_par_values(value, line):
    number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )
    if not number:
        with pytest.raises(TypeError, match="reward_par"):
            RaceConfig(reward_par=value, racing_line=line)
        return
    fields = dict(zip(RaceConfig.__field_names__, RaceConfig.__tunables__, strict=True))
    reward_par = fields["reward_par"]
    if expected_error(reward_par, value, None) is not None:  # beyond +-1e6, or 0 in float32
        with pytest.raises(ValueError, match="reward_par"):
            RaceConfig(reward_par=value, racing_line=line)
        return
    x = float(value)
    cfg = RaceConfig(reward_par=value, racing_line=line)
    assert type(cfg.reward_par) is float and cfg.reward_par == x
    assert cfg.plans_racing_line == (line != "off" or x != 0.0)
    assert cfg.obs_dim == 18 + (2 if line == "observe" else 0)


@pytest.mark.fuzz
@pytest.mark.parametrize(
    "field, value",
    [("racing_line", "on"), ("racing_line", None), ("racing_line", True)]
    + [("reward_par", v) for v in (math.nan, math.inf, None, True, [1.0], 10**400)],
)
def test_a_refused_field_builds_nothing(field, value, monkeypatch):
    """A refused value of a new field stops at RaceConfig: no course, no planner."""
    built = []
    real = tools.RacingLineUtility.__init__
    monkeypatch.setattr(
        tools.RacingLineUtility,
        "__init__",
        lambda obj, *a, **k: built.append(1) or real(obj, *a, **k),
    )
    with pytest.raises((TypeError, ValueError), match=field):
        RaceEnv(2, "cpu", config=RaceConfig(**{field: value}))
    assert built == []
