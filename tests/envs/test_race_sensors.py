"""``RaceConfig(observations=...)``: the sensor columns of a RaceEnv against the sensors' own
results (a NumPy oracle of the documented scaling), the state columns against a state-only
env, invalid envs, the observation spaces of the adapters, graph replay == eager, and the
refusals and fuzz of the new fields."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import tools
from track_gen.envs import RaceConfig, RaceEnv

from ..support.strategies import expected_error, normalized, values

#: Registered terms of gate courses only (their sensor reads gates; a track course refuses
#: them: tests/envs/test_drone.py covers them).
GATE_ONLY = ("next_gates",)
#: The terms a RaceConfig observes: the car's state, then the registered sensor terms.
OBSERVATION_TERMS = ("state", *(n for n in tools.observation_terms() if n not in GATE_ONLY))
#: Every nonempty subset of the terms, in registration order.
OBSERVATION_CHOICES = tuple(
    "+".join(c)
    for r in range(1, len(OBSERVATION_TERMS) + 1)
    for c in itertools.combinations(OBSERVATION_TERMS, r)
)

E = 4
SEED = 11
ALL = "state+lidar+lookahead+cones+raster"
SMALL = dict(lidar_num_beams=12, lookahead_num_points=3, cones_max_cones=4, raster_resolution=8)


def _follow(obs: np.ndarray, speed: float, gain: float = 3.0) -> np.ndarray:
    steer = np.clip(gain * np.arctan2(obs[:, 9], np.maximum(obs[:, 8], 1e-3)), -1, 1)
    throttle = np.clip(4.0 * (speed - obs[:, 0]), -1, 1)
    return np.stack([throttle, steer], 1).astype(np.float32)


def _oracle(env) -> np.ndarray:
    """The flat sensor columns from the sensors' own results (float32 math, as documented):
    lidar distance / max_range; per look-ahead point x / span, y / span, widths, curvature *
    spacing (+ speed / max_speed); per cone slot x / max_range, y / max_range, side."""
    c, n = env.config, env.num_envs
    ok = env.course.result.valid.numpy() != 0
    cols = []
    for name in env.sensor_dims:
        r = env.sensors[name]
        if name == "lidar":
            d = r.distance.numpy().reshape(n, -1) * np.float32(1.0 / c.lidar_max_range)
            cols.append(d)
        elif name == "lookahead":
            K, h = c.lookahead_num_points, c.lookahead_spacing
            p = r.position.numpy().reshape(n, K, 3)
            inv = np.float32(1.0 / (K * h))
            parts = [
                p[..., 0] * inv,
                p[..., 1] * inv,
                r.width_left.numpy().reshape(n, K),
                r.width_right.numpy().reshape(n, K),
                r.curvature.numpy().reshape(n, K) * np.float32(h),
            ]
            if r.speed is not None:
                parts.append(r.speed.numpy().reshape(n, K) * np.float32(1.0 / c.max_speed))
            good = (r.valid.numpy() != 0)[:, None, None]
            cols.append(np.where(good, np.stack(parts, -1), 0.0).reshape(n, -1))
        elif name == "raster":
            cells = r.cells.numpy().reshape(n, -1).astype(np.int64)
            known = (cells & 128) == 0
            chans = [(cells & bit) != 0 for bit in (1, 2, 4)[: 3 if "cones" in env.observed else 2]]
            cols.append(np.concatenate([(ch & known).astype(np.float32) for ch in chans], 1))
        else:
            M = c.cones_max_cones
            p = r.position.numpy().reshape(n, M, 3)
            inv = np.float32(1.0 / c.cones_max_range)
            seen = (np.arange(M)[None] < r.count.numpy()[:, None]) & (r.valid.numpy() != 0)[:, None]
            side = np.where(r.colour.numpy().reshape(n, M) == 0, 1.0, -1.0)
            part = np.stack([p[..., 0] * inv, p[..., 1] * inv, side], -1)
            cols.append(np.where(seen[..., None], part, 0.0).reshape(n, -1))
    out = np.concatenate([np.zeros((n, 0), np.float32), *cols], 1).astype(np.float32)
    out = np.where(np.isfinite(out), out, 0.0)
    return np.where(ok[:, None], out, 0.0).astype(np.float32)


def _sensor_cols(env) -> np.ndarray:
    start = env.config.state_dim if "state" in env.observed else 0
    return env.obs.numpy()[:, start:]


@pytest.mark.parametrize(
    "observations, extra",
    [
        (ALL, {}),
        ("lidar", {}),
        ("raster", {"raster_extent": 0.6}),
        ("lookahead+cones", {"lookahead_along": "racing_line", "cones_dropout": 0.3}),
        ("state+lidar", {"lidar_noise_std": 0.01, "lidar_dropout": 0.1, "lidar_fov": 3.0}),
    ],
)
def test_columns_equal_the_sensors_results_while_driving(observations, extra):
    config = RaceConfig(observations=observations, **SMALL, **extra)
    env = RaceEnv(E, "cpu", SEED, config=config)
    state = RaceEnv(E, "cpu", SEED)  # the state-only twin: the same cars, the same courses
    assert env.obs.shape == (E, config.obs_dim)
    cone_ch = 3 if "cones" in observations else 2
    look = 3 * (6 if "lookahead_along" in extra else 5)
    dims = {"lidar": 12, "lookahead": look, "cones": 12, "raster": 64 * cone_ch}
    assert env.sensor_dims == {t: dims[t] for t in observations.split("+") if t != "state"}
    rng = np.random.default_rng(0)
    for t in range(40):
        a = _follow(state.obs.numpy(), 0.3) if t % 3 else rng.uniform(-1, 1, (E, 2))
        a = wp.array(a.astype(np.float32), device="cpu")
        env.step(a)
        state.step(a)
        want = _oracle(env)
        got = _sensor_cols(env)
        np.testing.assert_array_equal(got, want, err_msg=f"step {t}")
        assert np.isfinite(env.obs.numpy()).all()
        if "state" in env.observed:
            S = config.state_dim
            assert env.obs.numpy()[:, :S].tobytes() == state.obs.numpy().tobytes()
            assert env.final_obs.numpy()[:, :S].tobytes() == state.final_obs.numpy().tobytes()
        np.testing.assert_array_equal(env.reward.numpy(), state.reward.numpy())
        np.testing.assert_array_equal(env.done.numpy(), state.done.numpy())
    assert state.stats().episodes > 0  # auto-resets happened: first observations checked too


class Snooped(RaceEnv):
    """A RaceEnv that keeps the oracle of its sensor columns just before each auto-reset."""

    def _auto_reset(self) -> None:
        self.before_reset = _oracle(self)
        super()._auto_reset()


def test_final_obs_holds_the_ended_episodes_sensor_columns():
    config = RaceConfig(observations="lidar+cones", **SMALL)
    env = Snooped(E, "cpu", SEED, config=config)
    ended = 0
    for _ in range(60):
        env.step(wp.array(np.tile([1.0, 1.0], (E, 1)).astype(np.float32), device="cpu"))
        done = env.done.numpy() != 0
        # an env that did not end: final_obs is this step's observation
        np.testing.assert_array_equal(env.final_obs.numpy()[~done], env.obs.numpy()[~done])
        if done.any():
            ended += 1
            np.testing.assert_array_equal(env.final_obs.numpy()[done], env.before_reset[done])
            np.testing.assert_array_equal(env.obs.numpy()[done], _oracle(env)[done])
    assert ended


def test_invalid_env_observes_zero_sensor_columns():
    config = RaceConfig(observations=ALL, **SMALL)
    env = RaceEnv(E, "cpu", SEED, config=config)
    scale = env.course.generator.params["bezier.scale"]
    host = scale.numpy().copy()
    host[2] = np.nan
    scale.assign(host)
    env.course.regenerate()
    env.reset()
    S = config.state_dim
    np.testing.assert_array_equal(env.obs.numpy()[2, S:], 0.0)
    env.step(wp.array(np.ones((E, 2), np.float32), device="cpu"))
    np.testing.assert_array_equal(env.obs.numpy()[2, S:], 0.0)
    np.testing.assert_array_equal(env.final_obs.numpy()[2, S:], 0.0)
    assert np.isfinite(env.obs.numpy()).all()
    assert np.abs(env.obs.numpy()[[0, 1, 3], S:]).sum() > 0


def test_captured_replay_equals_eager():
    config = RaceConfig(observations=ALL, **SMALL, lidar_noise_std=0.01, cones_noise=0.01)
    eager = RaceEnv(E, "cpu", SEED, config=config)
    graph = RaceEnv(E, "cpu", SEED, config=config, captured=True)
    rng = np.random.default_rng(3)
    for t in range(40):
        a = rng.uniform(-1, 1, (E, 2)).astype(np.float32)
        a[:, 0] = np.abs(a[:, 0])
        graph.obs.fill_(float("nan"))
        graph.final_obs.fill_(float("nan"))
        eager.step(wp.array(a, device="cpu"))
        graph.step(wp.array(a, device="cpu"))
        for k in ("obs", "final_obs", "reward", "done"):
            assert getattr(eager, k).numpy().tobytes() == getattr(graph, k).numpy().tobytes(), (
                t,
                k,
            )


def test_default_observation_is_the_state():
    c = RaceConfig()
    assert c.observations == ("state",) and c.observed == ("state",)
    assert c.obs_dim == c.state_dim == 18
    env = RaceEnv(2, "cpu", 0)
    assert env.sensors == {} and env.sensor_dims == {}
    names = [c.name for c in env.course.components.values()]
    assert not {"lidar", "lookahead", "cones", "props", "raster"} & set(names), names


def test_obs_dim_and_plans():
    c = RaceConfig(observations="lidar+lookahead+cones", lidar_num_beams=7)
    assert c.obs_dim == 7 + 8 * 5 + 8 * 3
    assert RaceConfig(observations="raster").obs_dim == 2 * 16 * 16
    assert RaceConfig(observations="cones+raster").obs_dim == 8 * 3 + 3 * 16 * 16
    c = RaceConfig(observations="lookahead", lookahead_along="racing_line")
    assert c.plans_racing_line and c.obs_dim == 8 * 6
    assert not RaceConfig(lookahead_along="racing_line").plans_racing_line  # not observed


def test_lookahead_source_is_a_deprecated_alias_of_along():
    """``lookahead_source`` (the flat keyword before ``along``) and ``source=`` of the
    settings still work for one release, with a DeprecationWarning naming the new name."""
    with pytest.warns(DeprecationWarning, match="lookahead_along"):
        c = RaceConfig(observations="lookahead", lookahead_source="racing_line")
    assert c == RaceConfig(observations="lookahead", lookahead_along="racing_line")
    with pytest.warns(DeprecationWarning, match="along"):
        assert c.lookahead_source == "racing_line"
    with pytest.warns(DeprecationWarning, match="along"):
        s = tools.LookaheadSettings(num_points=4, spacing=0.1, source="racing_line")
    assert s.along == "racing_line"
    with pytest.raises(ValueError, match="RaceConfig.lookahead_source"):
        with pytest.warns(DeprecationWarning):
            RaceConfig(lookahead_source="left")


# ------------------------------------------------------------------------------ adapters
def test_gym_spaces_box_and_dict():
    gym = pytest.importorskip("gymnasium")
    from track_gen.envs.gym import RaceVectorEnv

    config = RaceConfig(observations="state+lidar+cones+raster", **SMALL)
    box = RaceVectorEnv(3, "cpu", 0, config=config)
    assert box.single_observation_space.shape == (config.obs_dim,)
    obs, _ = box.reset()
    assert obs.shape == (3, config.obs_dim) and box.observation_space.contains(obs)
    d = RaceVectorEnv(3, "cpu", 0, obs_format="dict", config=config)
    space = d.single_observation_space
    assert isinstance(space, gym.spaces.Dict)
    assert {k: v.shape for k, v in space.items()} == {
        "state": (config.state_dim,),
        "lidar": (12,),
        "cones": (12,),
        "raster": (3 * 64,),
    }
    obs_d, _ = d.reset()
    terms = ("state", "lidar", "cones", "raster")
    assert np.concatenate([obs_d[k] for k in terms], 1).tobytes() == (obs.tobytes())
    assert d.observation_space.contains(obs_d)
    for _ in range(30):
        o, _, term, trunc, info = d.step(np.tile([1.0, 1.0], (3, 1)))
        assert d.observation_space.contains(o)
        if "final_obs" in info:
            e = int(np.flatnonzero(info["_final_obs"])[0])
            assert set(info["final_obs"][e]) == set(terms)
    with pytest.raises(ValueError, match="obs_format"):
        RaceVectorEnv(3, "cpu", 0, obs_format="tuple")


def test_rsl_rl_is_flat():
    pytest.importorskip("rsl_rl")
    from track_gen.envs.rsl_rl import RslRlRaceEnv

    config = RaceConfig(observations="lidar", lidar_num_beams=16)
    vec = RslRlRaceEnv(RaceEnv(3, "cpu", 0, config=config))
    assert tuple(vec.get_observations()["policy"].shape) == (3, 16)


# ------------------------------------------------------------------------------ refusals
@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"observations": "lidar+lidar"}, ValueError, "RaceConfig.observations"),
        ({"observations": ""}, ValueError, "RaceConfig.observations"),
        ({"observations": ("state", 1)}, TypeError, "RaceConfig.observations"),
        ({"observations": "sonar"}, ValueError, "RaceConfig.observations"),
        ({"observations": {"state"}}, TypeError, "RaceConfig.observations"),
        ({"raster_resolution": 4}, ValueError, "RaceConfig.raster_resolution"),
        ({"raster_extent": 0.0}, ValueError, "RaceConfig.raster_extent"),
        ({"lidar_num_beams": 0}, ValueError, "RaceConfig.lidar_num_beams"),
        ({"lidar_max_range": 0.0}, ValueError, "RaceConfig.lidar_max_range"),
        ({"lidar_dropout": 1.5}, ValueError, "RaceConfig.lidar_dropout"),
        ({"lookahead_num_points": 2.5}, TypeError, "RaceConfig.lookahead_num_points"),
        ({"lookahead_spacing": -1.0}, ValueError, "RaceConfig.lookahead_spacing"),
        ({"lookahead_along": "left"}, ValueError, "RaceConfig.lookahead_along"),
        ({"cones_max_cones": 0}, ValueError, "RaceConfig.cones_max_cones"),
        ({"cones_fov": 7.0}, ValueError, "RaceConfig.cones_fov"),
        ({"cones_max_range": math.inf}, ValueError, "RaceConfig.cones_max_range"),
        ({"cones_spacing": 0.0}, ValueError, "RaceConfig.cones_spacing"),
        ({"cones_noise": math.nan}, ValueError, "RaceConfig.cones_noise"),
    ],
)
def test_refusals_name_the_field(kwargs, error, words):
    with pytest.raises(error, match=words.replace(".", r"\.")):
        RaceConfig(**kwargs)


def test_observations_is_a_list_of_registered_terms_in_column_order():
    """``observations`` is a list-valued field: a tuple or a list of term names (or the
    ``'a+b'`` text), in the order of the columns; a term twice, an unknown term, an empty
    name or a non-str is refused naming the field."""
    assert RaceConfig().observations == ("state",)
    assert RaceConfig(observations=["lidar", "state"]).observations == ("lidar", "state")
    assert RaceConfig(observations="state+lidar").observations == ("state", "lidar")
    c = RaceConfig(observations=("cones", "state"), lidar_num_beams=4)
    assert list(RaceEnv(2, "cpu", 1, config=c).term_slices()) == ["cones", "state"]
    for bad, error, words in (
        (("state", "state"), ValueError, "twice"),
        (("state", "sonar"), ValueError, r"\['sonar'\] is not an observation term"),
        ((), ValueError, "1 to 16 names"),
        (("state", 3), TypeError, "names"),
        ("", ValueError, "empty"),
        (3, TypeError, "tuple of names"),
    ):
        with pytest.raises(error, match=rf"RaceConfig\.observations.*{words}"):
            RaceConfig(observations=bad)


# ------------------------------------------------------------------------------ fuzz
#: Every flat keyword of a sensor term's settings (``lidar_num_beams``) with its declaration.
FIELDS = {
    t.flat_prefix + sub: sub_t
    for t in RaceConfig.__tunables__
    if t.kind == "settings"
    for sub, sub_t in zip(
        t.settings_class.__field_names__, t.settings_class.__tunables__, strict=True
    )
}
VALUES = st.one_of(
    st.integers(-(2**33), 2**33),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([None, True, "state", "lidar", "racing_line", "center", (1,), b"x"]),
    st.sampled_from(OBSERVATION_CHOICES),
)


def _error(name, value):
    """The oracle: the declaration's (tests/support/strategies.py), None if valid; a
    required field (no default) takes no None."""
    t = FIELDS[name]
    if value is None and t.default is None and not t.optional:
        return TypeError
    return expected_error(t, value, None)


@pytest.mark.fuzz
@given(st.data())
def test_fuzz_sensor_flat_fields_from_their_declarations(data):
    name = data.draw(st.sampled_from(sorted(FIELDS)), label="name")
    value = data.draw(st.one_of(values(FIELDS[name], None), VALUES), label="value")
    want = _error(name, value)
    if want is not None:
        with pytest.raises(want, match=f"RaceConfig.{name}"):
            RaceConfig(**{name: value})
        return
    config = RaceConfig(**{name: value})
    assert getattr(config, name) == normalized(FIELDS[name], value)
    assert config.obs_dim >= 1


@pytest.mark.fuzz
@settings(max_examples=12)  # each example builds an env
@given(
    st.sampled_from(OBSERVATION_CHOICES),
    st.integers(1, 24),
    st.integers(1, 6),
    st.integers(1, 6),
    st.sampled_from(["center", "racing_line"]),
    st.integers(8, 12),
)
def test_fuzz_valid_observations_build_and_step(observations, beams, points, cones, source, res):
    config = RaceConfig(
        observations=observations,
        lidar_num_beams=beams,
        lookahead_num_points=points,
        cones_max_cones=cones,
        lookahead_along=source,
        raster_resolution=res,
    )
    env = RaceEnv(2, "cpu", 5, config=config)
    env.step(wp.array(np.ones((2, 2), np.float32), device="cpu"))
    obs = env.obs.numpy()
    assert obs.shape == (2, config.obs_dim) and np.isfinite(obs).all()
    np.testing.assert_array_equal(_sensor_cols(env), _oracle(env))


# ------------------------------------------------------------------------------ example
def test_train_ppo_obs_lidar_runs(tmp_path):
    """``examples/train_ppo.py --obs lidar``, a tiny run (the full one is measured in
    docs/training.md): it trains and evaluates on the LiDAR columns alone."""
    pytest.importorskip("rsl_rl")
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    args = ["--device", "cpu", "--obs", "lidar", "--lidar-beams", "16", "--iterations", "2"]
    args += ["--num-envs", "8", "--eval-envs", "2", "--out", str(tmp_path)]
    out = subprocess.run(
        [sys.executable, str(root / "examples" / "train_ppo.py"), *args],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok:" in out.stdout
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["config"]["observations"] == ["lidar"]
    assert metrics["config"]["lidar"]["num_beams"] == 16
    bad = subprocess.run(
        [sys.executable, str(root / "examples" / "train_ppo.py"), "--obs", "sonar"],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=600,
    )
    assert bad.returncode == 2 and "--obs" in bad.stderr
