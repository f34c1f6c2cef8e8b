"""track_gen.envs and track_gen.distributed inputs: absurd values give a clean TypeError /
ValueError naming the argument, before anything is built or stepped; accepted values work.

Oracles: a number field takes ints and finite floats inside its range (bools are not
numbers); an int field takes ints only; everything else is refused (wrong kind: TypeError,
out of range or non-finite: ValueError).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from track_gen import TrackGenConfig
from track_gen.distributed import RankLayout
from track_gen.envs import RaceConfig, RaceEnv
from track_gen.generators import GeneratorBase

from ..support.strategies import examples, other_objects

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 3

ODD = [o for o in other_objects(E) if not isinstance(o, (list, tuple))] + [None]
NUMBERS = st.one_of(
    st.sampled_from([0, -1, 1, 2**31, 10**400, 1e30, -1e-30, 0.5, 1.5, 1e4, 1e6]),
    st.sampled_from([1e-40, 1e-38, 1.1754944e-38, 3.4e38, 1e300, -0.0, 5e-324]),
    st.sampled_from([math.nan, math.inf, -math.inf, True, False, np.float32(0.25), np.int8(2)]),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(ODD),
)


def _is_number(v) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return False
    return isinstance(v, (int, float, np.integer, np.floating))


def _int_error(value, lo, hi):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return TypeError
    return None if lo <= int(value) <= hi else ValueError


@pytest.mark.parametrize(
    "name, value",
    [
        ("max_speed", 1e-38),
        ("max_speed", 1e-300),
        ("max_steer", 1e-300),
        ("max_lateral_accel", 1e-300),
        ("reward_checkpoint", 3.5e38),
        ("reward_progress", 1e300),
        ("reward_par", -1e300),
        ("penalty_oob", 1e300),
        ("penalty_oob", 1e-300),  # 0 in float32
        ("reward_progress", 1e-40),  # a float32 denormal
        ("raster_extent", 1e-30),
        ("lidar_max_range", 1e-38),
    ],
)
def test_float32_holes_of_the_sweep_are_refused(name, value):
    """The silent inf / NaN cases the hostile-input sweep found: each is refused by
    RaceConfig, naming the field and its bound, before anything is built (every field is
    fuzzed from its declaration in tests/test_config_fields.py)."""
    with pytest.raises(ValueError, match=rf"RaceConfig\.{name} = .* out of range"):
        RaceConfig(**{name: value})


@settings(max_examples=examples(20), deadline=None)
@given(
    value=st.sampled_from(
        ODD + ["Bezier", "mix", "centerline", "", "polar", np.str_("polar"), np.str_("mix")]
    )
)
@example(value=np.str_("polar"))  # stored as np.str_ before
def test_race_config_generator(value):
    if isinstance(value, str) and value == "polar":
        got = RaceConfig(generator=value).generator
        assert got == "polar" and type(got) is str  # np.str_ stored as str
        return
    with pytest.raises(TypeError if not isinstance(value, str) else ValueError):
        RaceConfig(generator=value)


@settings(max_examples=examples(40), deadline=None)
@given(
    num_envs=st.one_of(
        st.sampled_from([0, -3, 2**20 + 1, 2**40, 2.0, True]),
        st.sampled_from([o for o in ODD if not isinstance(o, (int, np.integer))]),
    ),
)
def test_race_env_num_envs_refused(num_envs):
    with pytest.raises((TypeError, ValueError), match="num_envs"):
        RaceEnv(num_envs, "cpu")


@settings(max_examples=examples(40), deadline=None)
@given(
    seeds=st.one_of(
        st.sampled_from([2**31 - 1, 2**31 - 2, -(2**31), 2**31, -(2**31) - 1, 2**64]),
        st.sampled_from([1.0, math.nan, True, None, "0", [1, 2], [1, 2, 3.5], [1, 2, 2**31]]),
        st.lists(st.integers(-(2**31), 2**31 - 1), min_size=E, max_size=E),
    ),
    flag=st.sampled_from([True, False, 1, None, "yes", np.bool_(True)]),
)
def test_race_env_seeds_and_flags(seeds, flag):
    if isinstance(flag, (bool, np.bool_)):
        flag_err = None
    else:
        flag_err = TypeError
    if isinstance(seeds, list):
        ok = all(isinstance(s, int) and -(2**31) <= s < 2**31 for s in seeds) and len(seeds) == E
        seeds_err = (
            None if ok else (TypeError if any(isinstance(s, float) for s in seeds) else ValueError)
        )
    elif isinstance(seeds, bool) or seeds is None or isinstance(seeds, (float, str)):
        seeds_err = TypeError
    else:
        seeds_err = None if -(2**31) <= seeds <= 2**31 - E else ValueError
    if flag_err is not None:
        with pytest.raises(flag_err, match="new_course_on_reset"):
            RaceEnv(E, "cpu", seeds, new_course_on_reset=flag)
    elif seeds_err is not None:
        with pytest.raises(seeds_err, match="seeds"):
            RaceEnv(E, "cpu", seeds, new_course_on_reset=flag)
    else:
        env = RaceEnv(E, "cpu", seeds, new_course_on_reset=flag)
        expect = np.asarray(seeds) if isinstance(seeds, list) else seeds + np.arange(E)
        np.testing.assert_array_equal(env.seeds.numpy(), expect)


@pytest.fixture(scope="module")
def env():
    return RaceEnv(E, "cpu", 5)


def _arrays():
    return [
        ("float64", TypeError, lambda: wp.zeros((E, 2), dtype=wp.float64)),
        ("int32", TypeError, lambda: wp.zeros((E, 2), dtype=wp.int32)),
        ("shape E", ValueError, lambda: wp.zeros(E, dtype=wp.float32)),
        ("shape E,3", ValueError, lambda: wp.zeros((E, 3), dtype=wp.float32)),
        ("shape E+1,2", ValueError, lambda: wp.zeros((E + 1, 2), dtype=wp.float32)),
        ("numpy", TypeError, lambda: np.zeros((E, 2), np.float32)),
        ("list", TypeError, lambda: [[0.0, 0.0]] * E),
        ("non-contiguous", ValueError, lambda: wp.zeros((E, 4), dtype=wp.float32)[:, ::2]),
    ]


@settings(max_examples=examples(30), deadline=None)
@given(case=st.sampled_from(_arrays()), which=st.sampled_from(["step", "reset"]))
def test_step_and_reset_refuse_bad_arrays_and_change_nothing(env, case, which):
    _, err, make = case
    arr = make()
    before = env.position.numpy().copy(), env.obs.numpy().copy(), env.epochs.numpy().copy()
    if which == "reset":
        if isinstance(arr, wp.array) and arr.dtype == wp.int32 and arr.shape == (E,):
            return
        with pytest.raises((TypeError, ValueError), match="mask"):
            env.reset(arr)
    else:
        with pytest.raises(err, match="actions"):
            env.step(arr)
    after = env.position.numpy(), env.obs.numpy(), env.epochs.numpy()
    for a, b in zip(before, after, strict=True):
        assert a.tobytes() == b.tobytes()


@settings(max_examples=examples(40), deadline=None)
@given(
    values=st.fixed_dictionaries(
        {},
        optional={
            "rank": NUMBERS,
            "world_size": NUMBERS,
            "num_envs": NUMBERS,
        },
    ),
    base=NUMBERS,
)
def test_rank_layout_inputs(values, base):
    kw = {"rank": 0, "world_size": 2, "num_envs": 4, **values}
    errs = [
        ("world_size", _int_error(kw["world_size"], 1, 2**20)),
        ("rank", None),
        ("num_envs", _int_error(kw["num_envs"], 1, 2**24)),
    ]
    if errs[0][1] is None:
        errs[1] = ("rank", _int_error(kw["rank"], 0, int(kw["world_size"]) - 1))
    first = next(((n, e) for n, e in errs if e is not None), None)
    if first is None and int(kw["world_size"]) * int(kw["num_envs"]) > 2**31:
        first = ("world_size", ValueError)
    if first is not None:
        with pytest.raises(first[1], match=first[0]):
            RankLayout(**kw)
        return
    layout = RankLayout(**kw)
    total = layout.world_size * layout.num_envs
    err = _int_error(base, -(2**31), 2**31 - 1)
    if err is None and int(base) + total - 1 > 2**31 - 1:
        err = ValueError
    if err is not None:
        with pytest.raises(err, match="base_seed"):
            layout.seeds(base)
    elif layout.num_envs <= 64:
        s = layout.seeds(base)
        assert s.dtype == np.int32 and s[0] == int(base) + layout.rank * layout.num_envs


ACTION_VALUES = st.one_of(
    st.sampled_from([0.0, 1.0, -1.0, 1e30, -1e30, 2**40, math.nan, math.inf, -math.inf]),
    st.floats(allow_nan=True, allow_infinity=True, width=32),
)


@pytest.fixture(scope="module")
def gym_env():
    pytest.importorskip("gymnasium")
    from track_gen.envs.gym import RaceVectorEnv

    env = RaceVectorEnv(E, "cpu", seed=2)
    env.reset()
    return env


@settings(max_examples=examples(40), deadline=None)
@given(
    values=st.lists(ACTION_VALUES, min_size=2 * E, max_size=2 * E),
    shape=st.sampled_from([(E, 2), (E, 3), (2, E), (E,), (E + 1, 2), (2 * E,)]),
    kind=st.sampled_from(["float32", "float64", "int64", "bool", "object", "str"]),
)
def test_gym_step_actions(gym_env, values, shape, kind):
    """Numbers of shape (E, 2) step: copied as float32, each component clamped to [-1, 1] in
    the env and a NaN / inf one (as float32) read as 0, RaceEnv's rule; a wrong shape or a
    non-number is refused before the env moves."""
    a = np.resize(np.asarray(values, dtype=np.float64), shape)
    if kind == "str":
        a = a.astype(str)
    elif kind == "object":
        a = a.astype(object)
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            a = a.astype(kind)
    before = gym_env.env.position.numpy().copy()
    if shape != (E, 2):
        err = ValueError
    elif kind in ("str", "object", "bool"):
        err = TypeError  # bools are not numbers
    else:
        err = None  # non-finite components included: read as 0 by the env
    if err is None:
        obs, rew, term, trunc, _ = gym_env.step(a)
        assert np.isfinite(obs).all() and np.isfinite(rew).all()
        with np.errstate(over="ignore", invalid="ignore"):
            want = a.astype(np.float32)
        np.testing.assert_array_equal(gym_env.env.actions.numpy(), want)
    else:
        with pytest.raises(err, match="actions"):
            gym_env.step(a)
        np.testing.assert_array_equal(gym_env.env.position.numpy(), before)


@settings(max_examples=examples(30), deadline=None)
@given(
    seed=st.one_of(st.none(), st.integers(-(2**40), 2**40), st.sampled_from(ODD)),
    options=st.one_of(
        st.none(),
        st.sampled_from([{}, {"reset_mask": np.ones(E, bool)}, {"reset_mask": [1] * E}]),
        st.sampled_from([{"reset_mask": np.ones(E + 1, bool)}, {"seed": 1}, [], "x"]),
    ),
)
def test_gym_reset_arguments(gym_env, seed, options):
    if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, int)):
        if not isinstance(seed, np.integer):
            err = TypeError
        else:
            err = None if -(2**31) <= int(seed) <= 2**31 - E else ValueError
    elif seed is not None:
        err = None if -(2**31) <= seed <= 2**31 - E else ValueError
    else:
        err = None
    opt_err = None
    if options is not None:
        if not isinstance(options, dict):
            opt_err = TypeError
        elif set(options) - {"reset_mask"}:
            opt_err = ValueError
        elif "reset_mask" in options:
            m = np.asarray(options["reset_mask"])
            if m.dtype != np.bool_ or m.shape != (E,):
                opt_err = ValueError
            elif seed is not None and err is None:
                opt_err = ValueError  # a seed reseeds every env: no mask with it
    expected = opt_err or err
    if expected is None:
        obs, info = gym_env.reset(seed=seed, options=options)
        assert obs.shape == (E, gym_env.env.obs_dim) and np.isfinite(obs).all()
    else:
        with pytest.raises(expected):
            gym_env.reset(seed=seed, options=options)


@settings(max_examples=examples(30), deadline=None)
@given(
    shape=st.sampled_from([(E, 2), (E, 3), (E,), (E + 1, 2), (0, 2)]),
    dtype=st.sampled_from(["float32", "float64", "float16", "int64"]),
    fill=ACTION_VALUES,
    kind=st.sampled_from(["tensor", "numpy", "list"]),
)
def test_rsl_rl_step_actions(env, shape, dtype, fill, kind):
    torch = pytest.importorskip("torch")
    pytest.importorskip("rsl_rl")
    from track_gen.envs.rsl_rl import RslRlRaceEnv

    vec = RslRlRaceEnv(env)
    with np.errstate(invalid="ignore", over="ignore"):
        host = np.full(shape, fill).astype(dtype)
    value = {"tensor": lambda: torch.from_numpy(host), "numpy": lambda: host}.get(
        kind, lambda: host.tolist()
    )()
    before = env.position.numpy().copy()
    if kind != "tensor":
        with pytest.raises(TypeError, match="torch.Tensor"):
            vec.step(value)
    elif shape != (E, 2):
        with pytest.raises(ValueError, match="shape"):
            vec.step(value)
    else:
        obs, rew, dones, extras = vec.step(value)  # non-finite actions read as 0 in the env
        assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()
        return
    np.testing.assert_array_equal(env.position.numpy(), before)


@settings(max_examples=examples(30), deadline=None)
@given(
    seeds=st.one_of(
        st.integers(-(2**33), 2**33),
        st.sampled_from([1.5, None, True, "1", [1] * (E - 1), [1.0] * E, [2**31] * E]),
        st.lists(st.integers(-(2**31), 2**31 - 1), min_size=E, max_size=E),
    ),
    clear=st.sampled_from([True, False, 1, None, "no", np.bool_(False)]),
)
def test_reseed_and_stats(env, seeds, clear):
    before = env.seeds.numpy().copy(), env.course.result.center.numpy().copy()
    if isinstance(seeds, list):
        ok = len(seeds) == E and all(isinstance(s, int) and -(2**31) <= s < 2**31 for s in seeds)
    elif isinstance(seeds, bool) or not isinstance(seeds, int):
        ok = False
    else:
        ok = -(2**31) <= seeds <= 2**31 - E
    if ok:
        env.reseed(seeds)
        expect = np.asarray(seeds) if isinstance(seeds, list) else seeds + np.arange(E)
        np.testing.assert_array_equal(env.seeds.numpy(), expect)
        np.testing.assert_array_equal(env.epochs.numpy(), 0)
    else:
        with pytest.raises((TypeError, ValueError), match="seeds"):
            env.reseed(seeds)
        np.testing.assert_array_equal(env.seeds.numpy(), before[0])
        assert env.course.result.center.numpy().tobytes() == before[1].tobytes()
    if isinstance(clear, (bool, np.bool_)):
        st_ = env.stats(clear=clear)
        assert st_.episodes >= 0
    else:
        with pytest.raises(TypeError, match="clear"):
            env.stats(clear=clear)


@settings(max_examples=examples(20), deadline=None)
@given(
    captured=st.sampled_from([1, 0, None, "yes", 2.0]),
    spec=st.sampled_from([None, "bezier", 3, object()]),
    config=st.sampled_from([None, {}, "cfg", RaceConfig]),
)
def test_race_env_other_arguments(captured, spec, config):
    if config is not None:
        with pytest.raises(TypeError, match="config"):
            RaceEnv(E, "cpu", config=config)
    with pytest.raises(TypeError, match="captured"):
        RaceEnv(E, "cpu", captured=captured)
    if spec is not None:
        with pytest.raises(TypeError, match="spec"):
            RaceEnv(E, "cpu", spec=spec)


@settings(max_examples=examples(20), deadline=None)
@given(device=st.sampled_from(["nonsense", "cuda:99", "gpu", "", 123, 1.5, object(), "CPU "]))
def test_race_env_device_refused(device):
    with pytest.raises(ValueError, match="device"):
        RaceEnv(E, device)


@settings(max_examples=examples(10), deadline=None)
@given(spacing=st.one_of(st.floats(1e-6, 1e-3), st.sampled_from([1e-6, 3.5e-4, 3.6e-4, 0.5])))
def test_race_env_checkpoint_capacity_is_refused_before_building(spacing):
    """A spacing giving more checkpoints than a course holds on the longest loop the default
    track config allows (``(N_max + 1) * bead spacing``) is refused before any generator is
    built; any other spacing builds."""

    cfg = TrackGenConfig()
    capacity = max(3, math.ceil((cfg.N_max + 1) * cfg.resolved_spacing / spacing))
    built = []
    real = GeneratorBase.__init__
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(
            GeneratorBase, "__init__", lambda obj, *a, **k: built.append(1) or real(obj, *a, **k)
        )
        if capacity > 65536:
            with pytest.raises(ValueError, match="checkpoint_spacing"):
                RaceEnv(E, "cpu", config=RaceConfig(checkpoint_spacing=spacing))
            assert built == []
        else:
            env = RaceEnv(E, "cpu", config=RaceConfig(checkpoint_spacing=spacing))
            assert built and env.course.checkpoints.position.shape[0] == E * capacity
