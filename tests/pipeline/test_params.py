"""``generator.params`` writes for every dynamic field of both families.

A write (``params[name] = scalar | [E] host values | [E] float32 wp.array``) is either refused
with the documented exception and nothing written (the whole params block byte-identical), or
accepted, stored exactly (as float32) and followed by a generation satisfying the invariant
with no env failing the device range check (the host checks the float32 the device stores).
Host values are one number per env: a bool anywhere is a TypeError, a nested or
multi-dimensional value a ValueError. A value written into the array directly (``fill_``,
``assign``) is never checked on the host: the next regeneration marks the envs holding it
invalid with ``FailBit.PARAM_RANGE``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen import FailBit, GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.pipeline import build, default_registry, presets
from track_gen.pipeline.presets import gates_from_config, track_from_config

from ..support.invariants import check_result, env_rows
from ..support.strategies import (
    METRE_SAMPLERS,
    SAMPLERS,
    examples,
    expected_error,
    expected_host_values,
    expected_randomizer_error,
    float32_edges,
    float32_survives,
    in_range,
    is_bool,
    is_number,
    out_of_range,
    range_pairs,
    sampler_config,
    special_values,
    to_float,
    wrong_arrays,
)

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 3
PARAM_RANGE = int(FailBit.PARAM_RANGE)


def _config(family: str, sampler: str, device="cpu"):
    if sampler in METRE_SAMPLERS:
        return sampler_config(sampler, num_envs=E, device=device)
    kw = {"num_envs": E, "device": device, "num_points": 64, "generator": sampler}
    if sampler == "repulsive":
        kw["repulsive_iters"] = 4
    if family == "gates":
        return GateGenConfig(gate_width=0.1, **kw)
    return TrackGenConfig(**kw)


def _param_names(family: str, sampler: str) -> list[str]:
    """The dynamic fields of a pipeline, from its stages' declarations (no device needed)."""
    cfg = _config(family, sampler)
    spec = gates_from_config(cfg) if family == "gates" else track_from_config(cfg)
    reg = default_registry()
    names = []
    for s in spec.stages:
        stage = reg.get(s.kind).cls(s.name, cfg, dict(s.options))
        names += [n for n, _, _ in stage.dynamic_fields()]
    return names


def _cases():
    seen, out = set(), []
    for family, samplers in (("track", SAMPLERS), ("gates", ("bezier",))):
        for sampler in samplers:
            for name in _param_names(family, sampler):
                if (family, name) not in seen:
                    seen.add((family, name))
                    out.append((family, sampler, name))
    return out


CASES = _cases()
CASE_IDS = [f"{f}-{n}" for f, _, n in CASES]


@pytest.fixture(scope="module")
def generators():
    """A memo of built generators ``(family, sampler, device) -> (gen, pristine params)``."""
    cache = {}

    def get(family, sampler, device):
        key = (family, sampler, str(device))
        if key not in cache:
            cfg = _config(family, sampler, device)
            gen = (GateGenerator if family == "gates" else TrackGenerator)(cfg, seeds=5)
            gen.generate()
            cache[key] = (gen, gen.params.block.numpy().copy())
        gen, pristine = cache[key]
        gen.params.block.assign(pristine)  # every example starts from the config's values
        return gen

    return get


# ------------------------------------------------------------------------------ oracle
def expected_write(t, value, device):
    """``(error, stored float32 [E] values)`` of ``params[name] = value`` (a write checks the
    field's own range, ``write_lo_open`` included, never a cross-field rule: the kernel orders
    z_min / z_max)."""
    if is_number(value):
        err = expected_error(t, value, None, write=True)
        return err, None if err else np.full(E, np.float32(float(value)))
    if isinstance(value, wp.array):
        if value.dtype != wp.float32:
            return TypeError, None
        if value.ndim != 1 or value.shape[0] != E:
            return ValueError, None
        if value.device != wp.get_device(device) or not value.is_contiguous:
            return ValueError, None
        host = value.numpy().astype(np.float64).tolist()
    else:
        err, host = expected_host_values(value, "float")
        if err is not None:
            return err, None
        if len(host) != E:
            return ValueError, None
    if any(expected_error(t, v, None, write=True) for v in host):
        return ValueError, None
    return None, np.asarray(host, np.float64).astype(np.float32)


def _write_and_check(gen, name, value, device):
    t = gen.params.spec(name)
    err, stored = expected_write(t, value, device)
    before = gen.params.block.numpy().tobytes()
    if err is not None:
        with pytest.raises(err):
            gen.params[name] = value
        assert gen.params.block.numpy().tobytes() == before, "a refused write changed params"
        return False
    gen.params[name] = value
    np.testing.assert_array_equal(gen.params[name].numpy(), stored)
    gen.generate(advance=True)
    out = check_result(gen)
    assert not (out["fail"] & PARAM_RANGE).any(), f"accepted {name}={value!r} -> PARAM_RANGE"
    return True


def _forms(value, device):
    """A scalar and the same value as every host / device form of a per-env write (and the
    malformed ones: wrong length, nested, 2-D, a bool mixed in)."""
    forms = [value]
    if is_number(value) and not is_bool(value):
        forms += [
            [value] * E,
            tuple([value] * E),
            [value] * (E + 1),
            [[value]] * E,
            [True] + [value] * (E - 1),
            [value] * (E - 1) + [np.bool_(False)],
        ]
        x = to_float(value)
        if x is not None:
            forms += [
                np.full(E, x, np.float64),
                np.full((E, 1), x),
                np.full((1, E), x),
                wp.array(np.full(E, x, np.float32), dtype=wp.float32, device=device),
                wp.array(np.full(E, x), dtype=wp.float64, device=device),
                np.full(E - 1, x, np.float32),
            ]
    return forms


# ------------------------------------------------------------------------------ tests
@pytest.mark.parametrize("family, sampler, name", CASES, ids=CASE_IDS)
def test_edge_writes_are_refused_unchanged_or_stored_and_generate(
    generators, family, sampler, name, device
):
    gen = generators(family, sampler, device)
    t = gen.params.spec(name)
    lo, hi = t.bounds()
    for value in special_values(t):
        x = to_float(value) if type(value) in (int, float) else 0.0
        full_forms = x is None or x in (lo, hi) or not math.isfinite(x)
        for form in _forms(value, device) if full_forms else [value]:
            _write_and_check(gen, name, form, device)
    for _label, _err, make in wrong_arrays(E, wp.float32, device):
        _write_and_check(gen, name, make(), device)


def _as_dtype(values: list, dtype) -> np.ndarray:
    """``values`` as a NumPy array of ``dtype`` (float64 when an int dtype cannot hold them;
    an int beyond float64 and a float16 / float32 overflow give inf, on purpose)."""
    floats = [
        (math.inf if v > 0 else -math.inf) if to_float(v) is None else float(v) for v in values
    ]
    if np.issubdtype(dtype, np.integer) and not all(
        math.isfinite(v) and abs(v) < 2**31 for v in floats
    ):
        dtype = np.float64
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(floats, np.float64).astype(dtype)


def _per_env(t, n: int = E):
    """``n`` numbers: all inside the range, or each inside or not (NaN, inf, ints beyond
    float64 and values that are outside the range only as float32 included)."""
    inside = in_range(t).map(float)
    any_value = st.one_of(
        inside,
        out_of_range(t).map(lambda v: v if to_float(v) is None else float(v)),
        float32_edges(t),
        st.sampled_from([math.nan, math.inf, -math.inf]),
    )
    return st.one_of(
        st.lists(inside, min_size=n, max_size=n), st.lists(any_value, min_size=n, max_size=n)
    )


#: Elements that spoil a host list: bools (TypeError even among numbers), nested values
#: (ValueError), other kinds (TypeError).
_SPOILERS = st.sampled_from(
    [True, False, np.bool_(True), [0.5], (0.5,), np.array([0.5]), np.array(0.5), None, "0.5", 1j]
)


def _spoiled(t):
    """``E`` per-env values with some replaced by a spoiler."""
    return st.tuples(
        _per_env(t), st.lists(st.tuples(st.integers(0, E - 1), _SPOILERS), min_size=1, max_size=E)
    ).map(lambda p: [dict(p[1]).get(i, v) for i, v in enumerate(p[0])])


def _object_array(items: list) -> np.ndarray:
    """A 1-D object array holding ``items`` as they are (np.array would nest them)."""
    out = np.empty(len(items), dtype=object)
    for i, v in enumerate(items):
        out[i] = v
    return out


def _host_values(t):
    """Per-env values as a list, a tuple or a NumPy array of some dtype or shape, of the right
    length or not, clean or spoiled."""
    dtypes = st.sampled_from([np.float64, np.float32, np.float16, np.int64, np.int32])
    return st.one_of(
        _per_env(t),
        _per_env(t).map(tuple),
        st.integers(0, 2 * E).filter(lambda n: n != E).flatmap(lambda n: _per_env(t, n)),
        st.tuples(_per_env(t), dtypes).map(lambda p: _as_dtype(*p)),
        st.tuples(_per_env(t), st.sampled_from([(E, 1), (1, E)])).map(
            lambda p: _as_dtype(p[0], np.float64).reshape(p[1])
        ),
        st.lists(st.integers(-(2**63), 2**63 - 1), min_size=E, max_size=E),
        st.lists(
            st.one_of(st.integers(), st.sampled_from([2**64, 10**400])), min_size=E, max_size=E
        ),
        _spoiled(t),
        _spoiled(t).map(_object_array),
        st.sampled_from([[], (), np.array([]), np.zeros((0, E))]),
    )


@pytest.mark.parametrize("family, sampler, name", CASES, ids=CASE_IDS)
@settings(max_examples=examples(25))
@given(data=st.data())
def test_fuzzed_write_is_refused_unchanged_or_generates_a_consistent_batch(
    generators, family, sampler, name, device, data
):
    gen = generators(family, sampler, device)
    t = gen.params.spec(name)
    kind = data.draw(st.sampled_from(["scalar", "host", "device", "wrong"]), label="form")
    if kind == "scalar":
        value = data.draw(
            st.one_of(
                st.sampled_from(special_values(t)), in_range(t), out_of_range(t), float32_edges(t)
            )
        )
    elif kind == "host":
        value = data.draw(_host_values(t))
    elif kind == "device":
        host = _as_dtype(data.draw(_per_env(t)), np.float32)
        value = wp.array(host, dtype=wp.float32, device=device)
    else:
        _label, _err, make = data.draw(st.sampled_from(wrong_arrays(E, wp.float32, device)))
        value = make()
    event(f"{kind}: {'accepted' if _write_and_check(gen, name, value, device) else 'refused'}")


def _bad_values(t) -> list[float]:
    """Values the device check must flag: NaN, inf, huge and just outside the range."""
    lo, hi, flags = t.device_bounds()

    def step(x: float, direction: float) -> float:
        if flags & (1 if direction < 0 else 2):
            return x  # an exclusive bound is itself out of range
        if x == 0.0:
            return math.copysign(1e-30, direction)
        return float(np.nextafter(np.float32(x), np.float32(direction)))

    out = [math.nan, math.inf, -math.inf, 1e30, -1e30, 3.0e38]
    out += [step(lo, -math.inf), step(hi, math.inf), lo - 1.0, hi + 1.0, lo * 2 - 1.0]
    return [v for v in out if not float32_survives(t, v)]


@pytest.mark.parametrize("family, sampler, name", CASES, ids=CASE_IDS)
def test_direct_in_place_bad_values_mark_envs_param_range(
    generators, family, sampler, name, device
):
    gen = generators(family, sampler, device)
    t = gen.params.spec(name)
    pristine = gen.params[name].numpy().copy()
    for v in _bad_values(t):
        gen.params[name].fill_(v)
        gen.generate()
        out = check_result(gen)
        assert (out["fail"] & PARAM_RANGE).all() and not out["valid"].any(), (name, v)
    # one env only: that env is flagged, the others are not
    host = pristine.copy()
    host[1] = np.float32(_bad_values(t)[0])
    gen.params[name].assign(host)
    gen.generate()
    out = check_result(gen)
    assert out["fail"][1] & PARAM_RANGE
    assert not (out["fail"][[0, 2]] & PARAM_RANGE).any()


def test_direct_block_fill_and_masked_regeneration(generators, device):
    gen = generators("track", "bezier", device)
    gen.generate()
    before = env_rows(gen.result, E)
    epochs = gen.seeds.epochs.numpy().copy()
    gen.params.block.fill_(math.nan)
    mask = gen.inputs["regen_mask"]
    mask.assign(np.array([0, 1, 0], np.int32))
    try:
        gen.generate(advance=True, mask=mask)
    finally:
        mask.zero_()
    after = env_rows(gen.result, E)
    out = check_result(gen)
    assert out["fail"][1] & PARAM_RANGE and not out["valid"][1]
    assert after[0] == before[0] and after[2] == before[2]
    np.testing.assert_array_equal(gen.seeds.epochs.numpy(), epochs + np.array([0, 1, 0]))


@pytest.mark.parametrize(
    "key, err", [(3, TypeError), (None, TypeError), ("bezier.nope", KeyError), ("", KeyError)]
)
def test_unknown_or_non_str_param_names_are_refused(generators, key, err, device):
    gen = generators("track", "bezier", device)
    before = gen.params.block.numpy().tobytes()
    with pytest.raises(err):
        gen.params[key] = 0.1
    with pytest.raises(err):
        gen.params[key]  # noqa: B018
    assert gen.params.block.numpy().tobytes() == before


# ------------------------------------------------------------------------------ fixed findings
@pytest.mark.parametrize(
    "sampler, name, value",
    [
        ("bezier", "bezier.rad", 1e-50),  # in [0, 2] as float64, 0 in float32
        ("bezier", "bezier.rad", 1e-40),  # a float32 denormal
        ("bezier", "bezier.rad", 5e-324),
        ("checkpoint", "checkpoint.radius_min_frac", 1 - 1e-12),
        ("checkpoint", "checkpoint.radius_min_frac", float(np.nextafter(1.0, 0.0))),
    ],
)
def test_write_outside_the_range_as_float32_is_refused(generators, sampler, name, value):
    gen = generators("track", sampler, "cpu")
    before = gen.params.block.numpy().tobytes()
    for form in (value, [value] * E, np.full(E, value)):
        with pytest.raises(ValueError, match="float32"):
            gen.params[name] = form
        assert gen.params.block.numpy().tobytes() == before


@pytest.mark.parametrize(
    "sampler, name, value",
    [
        ("bezier", "bezier.scale", 1e-6),  # the smallest scale
        ("bezier", "bezier.rad", 1.1754944e-38),  # the smallest normal float32
        ("checkpoint", "checkpoint.radius_min_frac", 0.99999994),
    ],
)
def test_write_inside_the_range_as_float32_passes_the_device_check(
    generators, sampler, name, value
):
    gen = generators("track", sampler, "cpu")
    gen.params[name] = value
    gen.generate()
    assert not (gen.result.fail_mask.numpy() & PARAM_RANGE).any()


@pytest.mark.parametrize(
    "value",
    [np.full((E, 1), 0.3), np.full((1, E), 0.3), [[0.1], [0.2], [0.3]], [0.1, [0.2], 0.3]],
    ids=["[E,1]", "[1,E]", "nested", "one nested"],
)
def test_host_values_of_another_shape_are_refused(generators, value):
    gen = generators("track", "bezier", "cpu")
    before = gen.params.block.numpy().tobytes()
    with pytest.raises(ValueError, match="1-D|nested"):
        gen.params["bezier.rad"] = value
    assert gen.params.block.numpy().tobytes() == before


@pytest.mark.parametrize(
    "value", [[True, 0.5, 0.5], [0.5, 0.5, np.bool_(False)], np.array([True, False, True])]
)
def test_bools_inside_host_values_are_refused(generators, value):
    gen = generators("track", "bezier", "cpu")
    before = gen.params.block.numpy().tobytes()
    with pytest.raises(TypeError, match="bezier.rad"):
        gen.params["bezier.rad"] = value
    assert gen.params.block.numpy().tobytes() == before


@pytest.mark.parametrize("value", [[2**64, 0.5, 0.5], [0.5, 10**400, 0.5]], ids=["2^64", "1e400"])
def test_out_of_range_ints_in_host_values_raise_value_error(generators, value):
    gen = generators("track", "bezier", "cpu")
    before = gen.params.block.numpy().tobytes()
    with pytest.raises(ValueError, match="bezier.rad"):
        gen.params["bezier.rad"] = value
    assert gen.params.block.numpy().tobytes() == before


@pytest.mark.parametrize("value", [10**400, -(10**400)], ids=["1e400", "-1e400"])
def test_int_too_large_for_a_float_raises_value_error(generators, value):
    gen = generators("track", "bezier", "cpu")
    with pytest.raises(ValueError, match="bezier.rad.*beyond the float64 range"):
        gen.params["bezier.rad"] = value


@pytest.mark.parametrize("value", [1e-50, 5e-324, 0.0, [1e-50] * E])
def test_gate_width_write_is_never_stored_as_zero(generators, value):
    gen = generators("gates", "bezier", "cpu")
    before = gen.params.block.numpy().tobytes()
    with pytest.raises(ValueError, match="gate_width"):
        gen.params["gate_frames.gate_width"] = value
    assert gen.params.block.numpy().tobytes() == before
    gen.params["gate_frames.gate_width"] = 1.1754944e-38  # the smallest normal float32
    assert (gen.params["gate_frames.gate_width"].numpy() > 0).all()
    with pytest.raises(ValueError, match="gate_width.*normal"):
        gen.params["gate_frames.gate_width"] = 1e-45  # a denormal: refused, not stored


@pytest.mark.parametrize(
    "name, lo_hi",
    [
        ("bezier.rad", (1e-50, 0.5)),
        ("bezier.rad", (5e-324, 5e-324)),
        ("bezier.rad", (1e-40, 0.5)),
        ("validate.thickness_tol", (1e-50, 0.1)),
    ],
)
def test_randomizer_range_outside_as_float32_is_refused(name, lo_hi):
    spec = presets.track(num_envs=E, device="cpu", num_points=64)
    with pytest.raises(ValueError, match="float32"):
        build(spec.with_randomize({name: lo_hi}), seeds=1)
    gen = build(spec.with_randomize({name: (0.5, 0.5)}), seeds=1)
    with pytest.raises(ValueError, match="float32"):
        gen.randomizers[name] = lo_hi
    assert gen.randomizers[name] == (0.5, 0.5)


def test_randomizer_of_the_smallest_float32_passes_the_device_check():
    spec = presets.track(num_envs=E, device="cpu", num_points=64)
    gen = build(spec.with_randomize({"bezier.rad": (1.1754944e-38, 1.1754944e-38)}), seeds=1)
    gen.generate()
    assert not (gen.result.fail_mask.numpy() & PARAM_RANGE).any()


# ------------------------------------------------------------------------------ with_randomize
#: Names that are no dynamic field (or no name): refused by with_randomize itself.
ODD_NAMES = ["rad", "bezier.nope", "", ".", "bezier.", "nope.rad", 3, None, b"bezier.rad", ("a",)]


@pytest.mark.parametrize(
    "family, sampler", [("track", "bezier"), ("track", "polar"), ("gates", "bezier")]
)
@settings(max_examples=examples(30))
@given(data=st.data())
def test_with_randomize_is_refused_where_it_is_given_or_builds(generators, family, sampler, data):
    """``spec.with_randomize({name: (lo, hi)})`` raises what the build raised before (the same
    checks, made when the range is given) or returns a spec that builds with that live range
    and generates a batch satisfying the invariant."""
    gen = generators(family, sampler, "cpu")
    declarations = {name: gen.params.spec(name) for name in gen.params}
    known = sorted(declarations)
    name = data.draw(
        st.one_of(st.sampled_from(known), st.sampled_from(ODD_NAMES + [np.str_(known[0])])),
        label="name",
    )
    t = declarations.get(name) if isinstance(name, str) else None
    lo_hi = data.draw(range_pairs(t or declarations[known[0]]), label="lo_hi")
    cfg = _config(family, sampler)
    spec = gates_from_config(cfg) if family == "gates" else track_from_config(cfg)
    err = expected_randomizer_error(declarations, name, lo_hi)
    event("refused" if err else "accepted")
    if err is not None:
        with pytest.raises(err):
            spec.with_randomize({name: lo_hi})
        return
    randomized = spec.with_randomize({name: lo_hi})
    lo, hi = lo_hi
    assert dict(randomized.randomize) == {name: (float(lo), float(hi))}
    assert all(type(k) is str for k, _ in randomized.randomize)
    built = build(randomized, seeds=2)
    assert built.randomizers[name] == (float(lo), float(hi))
    built.generate()
    check_result(built)


# ------------------------------------------------------------------------------ known issues
@pytest.mark.parametrize(
    "value", [{0: 0.5, 1: 0.6, 2: 0.7}, {0.5, 0.6, 0.7}, frozenset({0.1, 0.2, 0.3})]
)
def test_mapping_or_set_host_values_are_refused(generators, value):
    gen = generators("track", "bezier", "cpu")
    before = gen.params.block.numpy().tobytes()
    try:
        gen.params["bezier.rad"] = value
    except TypeError:
        pass
    assert gen.params.block.numpy().tobytes() == before
