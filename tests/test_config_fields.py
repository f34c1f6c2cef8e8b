"""Every field of TrackGenConfig and GateGenConfig, fuzzed from its declaration.

A value is either refused at construction with the documented exception (TypeError for the
wrong kind, ValueError for a value outside the range, a number beyond float64 or, for a
dynamic field, a float32 rounding outside it) naming the field, or accepted, stored as a
Python value (a NumPy scalar, ``np.str_`` included, as its Python kind), and a generator built
from it at E=2 generates a batch satisfying the invariant (``invariants.py``) without any env
failing the device range check.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import warp as wp
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen import (
    FailBit,
    GateGenConfig,
    GateGenerator,
    Track,
    TrackGenConfig,
    TrackGenerator,
)
from track_gen.course import Course
from track_gen.pipeline import build, default_registry, presets
from track_gen.tools import BandCollisionUtility, Checkpoints

from .support.invariants import check_result
from .support.strategies import (
    CONFIGS,
    GATE_SAMPLERS,
    METRE_SAMPLERS,
    SAMPLERS,
    examples,
    expected_config_error,
    expected_error,
    expected_race_config_error,
    in_range,
    normalized,
    sampler_config,
    section_prefix,
    special_values,
    tunable,
    values,
)

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 2
FIELDS = [(cls, t.field) for cls in CONFIGS for t in cls.__tunables__]
FIELD_IDS = [f"{cls.__name__}.{field}" for cls, field in FIELDS]
#: The geometry fields whose pairs are fuzzed together (scale, spacing and sizes interact).
GEOMETRY = ("scale", "spacing", "half_width", "N_max", "num_points", "min_point_distance")
#: Largest N_max / num_points of a generated pair: the relaxation of tens of thousands of
#: beads per env takes minutes on a CPU.
PAIR_SIZE_CAP = 2048


def base_kwargs(cls, field: str, device) -> dict:
    """Defaults but a small batch on ``device``, and the sampler that reads ``field``."""
    kw = {"num_envs": E, "device": device, "num_points": 64}
    prefix = section_prefix(cls, field)
    if prefix in SAMPLERS:
        kw["generator"] = prefix
    if prefix in METRE_SAMPLERS and cls is TrackGenConfig:  # metres: the preset's config
        cfg = sampler_config(prefix, num_envs=E, device=device)
        kw = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}
    if kw.get("generator") == "repulsive" or field == "generator":
        kw["repulsive_iters"] = 4  # the repulsive sampler only at tiny iteration counts
    kw.pop(field, None)
    return kw


def cheap_to_generate(field: str, value) -> bool:
    if field == "num_envs":
        return int(value) <= 4
    if field == "repulsive_iters":
        return int(value) <= 50
    return True


def construct(cls, field: str, value, device):
    """Build ``cls`` with ``field=value``; assert the documented outcome. Returns the config,
    or None when it was (correctly) refused."""
    t = tunable(cls, field)
    kwargs = base_kwargs(cls, field, device)
    kwargs[field] = value
    err, _culprit = expected_config_error(cls, kwargs)
    if err is not None:
        # the culprit may be another field whose bound or rule refers to this one: its
        # message then names this one as the bound (``must be >= min_corners = 20``)
        with pytest.raises(err) as info:
            cls(**kwargs)
        assert field in str(info.value), f"{info.value!r} does not name {field}"
        return None
    cfg = cls(**kwargs)
    stored = getattr(cfg, field)
    if value is None:
        assert stored is None
    elif t.kind == "int" and isinstance(value, str):  # one of the field's names
        assert type(stored) is str and stored == value
    elif t.kind == "int":
        assert type(stored) is int and stored == int(value)
    elif t.kind == "float":
        assert type(stored) is float and stored == float(value)
    elif t.kind == "bool":
        assert type(stored) is bool and stored == bool(value)
    else:  # choice, name, device: a Python str (np.str_ normalized)
        assert type(stored) is str and stored == value
    return cfg


def generate_and_check(cls, cfg, field: str, value) -> None:
    """Build a generator from an accepted config, generate, assert the invariant."""
    gen_cls = GateGenerator if cls is GateGenConfig else TrackGenerator
    if field == "generator":
        reg = default_registry()
        gates_refuse = cls is GateGenConfig and value not in GATE_SAMPLERS and value in SAMPLERS
        if (
            value not in reg
            or reg.get(value).cls.role != "sampler"
            or value == "mix"
            or gates_refuse  # a track-only sampler (circuit) in a gate pipeline
        ):
            with pytest.raises(ValueError):
                gen_cls(cfg, seeds=1)
            return
    if field == "device" and value is not None:
        try:
            wp.get_device(value)
        except (ValueError, RuntimeError):  # not a device of this machine
            with pytest.raises(ValueError, match="device"):
                gen_cls(cfg, seeds=1)
            return
    gen = gen_cls(cfg, seeds=11)
    gen.generate()
    out = check_result(gen)
    bad = out["fail"] & int(FailBit.PARAM_RANGE)
    assert not bad.any(), f"{field}={value!r} was accepted but fails the device check"
    gen.generate(advance=True)
    check_result(gen)


@pytest.mark.parametrize("cls, field", FIELDS, ids=FIELD_IDS)
def test_field_edge_values_are_refused_with_the_field_name_or_accepted(cls, field, device):
    t = tunable(cls, field)
    for value in special_values(t):
        cfg = construct(cls, field, value, device)
        is_bound = type(value) in (int, float) and value in t.bounds(lambda o: o.default)
        if cfg is not None and is_bound and cheap_to_generate(field, value):
            generate_and_check(cls, cfg, field, value)


@pytest.mark.parametrize("cls, field", FIELDS, ids=FIELD_IDS)
@settings(max_examples=examples(25))
@given(data=st.data())
def test_fuzzed_field_is_refused_or_generates_a_consistent_batch(cls, field, device, data):
    t = tunable(cls, field)
    value = data.draw(values(t), label=field)
    cfg = construct(cls, field, value, device)
    event("accepted" if cfg is not None else "refused")
    if cfg is not None and cheap_to_generate(field, value):
        generate_and_check(cls, cfg, field, value)


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_numpy_scalars_in_range_are_accepted_as_python_values(cls):
    kw = {}
    for t in cls.__tunables__:
        if t.default is None:
            continue
        if t.kind == "int" and isinstance(t.default, str):  # cpu_threads="auto"
            kw[t.field] = np.str_(t.default)
        elif t.kind == "int":
            kw[t.field] = np.int64(t.default)
        elif t.kind == "float":
            kw[t.field] = np.float32(t.default) if t.default == 0 else np.float64(t.default)
        elif t.kind == "bool":
            kw[t.field] = np.bool_(t.default)
    cfg = cls(**kw)
    for field, v in kw.items():
        stored = getattr(cfg, field)
        kinds = {np.int64: int, np.float32: float, np.float64: float, np.str_: str}
        assert type(stored) is kinds.get(type(v), bool), field
        assert stored == v


def _pair_value(cls, field, data):
    t = tunable(cls, field)
    v = data.draw(in_range(t), label=field)
    if field in ("N_max", "num_points"):
        v = min(int(v), PAIR_SIZE_CAP)
    return v


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
@settings(max_examples=examples(40))
@given(data=st.data())
def test_geometry_field_pairs_generate_a_consistent_batch(cls, device, data):
    names = [f for f in GEOMETRY if any(t.field == f for t in cls.__tunables__)]
    pair = data.draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))
    kw = {"num_envs": E, "device": device, "num_points": 64}
    for field in pair:
        kw[field] = _pair_value(cls, field, data)
    err, culprit = expected_config_error(cls, kw)
    if err is not None:  # the corner grid rule of min_point_distance
        assert culprit == "min_point_distance" and culprit in pair
        with pytest.raises(err, match="min_point_distance"):
            cls(**kw)
        return
    cfg = cls(**kw)
    gen_cls = GateGenerator if cls is GateGenConfig else TrackGenerator
    gen = gen_cls(cfg, seeds=3)
    gen.generate()
    out = check_result(gen)
    assert not (out["fail"] & int(FailBit.PARAM_RANGE)).any()


#: ``(lower field, upper field, other fields set so that only the pair decides)``.
CROSS_PAIRS = [
    ("min_corners", "max_corners", {"min_point_distance": 0.001}),
    ("voronoi_control_points", "voronoi_num_sites", {}),
    ("repulsive_grow_mult_min", "repulsive_grow_mult_max", {}),
    ("repulsive_obstacle_count_min", "repulsive_obstacle_count_max", {}),
    ("min_gates", "num_gates_min", {"num_gates_max": 256, "max_gates": 256}),
    ("num_gates_min", "num_gates_max", {"min_gates": 2, "max_gates": 256}),
    ("num_gates_max", "max_gates", {"min_gates": 2, "num_gates_min": 2}),
    ("z_min", "z_max", {}),
]


def _widest(cls, t):
    """A strategy over ``t``'s range with every field reference at its loosest."""

    def loosest(o):
        lo, _ = o.bounds(loosest)
        return lo

    return in_range(t, loosest)


@pytest.mark.parametrize("lo_field, hi_field, others", CROSS_PAIRS, ids=[p[1] for p in CROSS_PAIRS])
@settings(max_examples=examples(30))
@given(data=st.data())
def test_cross_field_bounds_refuse_exactly_the_inverted_pairs(lo_field, hi_field, others, data):
    cls = GateGenConfig if lo_field in {t.field for t in GateGenConfig.__tunables__} else None
    if lo_field in {t.field for t in TrackGenConfig.__tunables__}:
        cls = TrackGenConfig
    lo_v = data.draw(_widest(cls, tunable(cls, lo_field)), label=lo_field)
    hi_v = data.draw(_widest(cls, tunable(cls, hi_field)), label=hi_field)
    kw = {**others, lo_field: lo_v, hi_field: hi_v}
    if float(hi_v) < float(lo_v):
        with pytest.raises(ValueError) as info:
            cls(**kw)
        assert lo_field in str(info.value) and hi_field in str(info.value)
    else:
        cfg = cls(**kw)
        assert getattr(cfg, lo_field) == lo_v and getattr(cfg, hi_field) == hi_v


# ------------------------------------------------------------------------------ fixed findings
@pytest.mark.parametrize("value", [10**400, -(10**400), 2**1024], ids=["1e400", "-1e400", "2^1024"])
@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_int_too_large_for_a_float_field_is_a_value_error(cls, value):
    with pytest.raises(ValueError, match="scale.*beyond the float64 range"):
        cls(scale=value)
    with pytest.raises(ValueError, match="grow_mult_min.*beyond the float64 range"):
        cls(repulsive_grow_mult_min=value)  # a float field that is not dynamic


def test_empty_generator_name_is_a_value_error():
    with pytest.raises(ValueError, match="generator.*out of range"):
        TrackGenConfig(generator="")


@pytest.mark.parametrize("value", [1e-50, 5e-324, 7e-46])
@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_scale_that_is_zero_in_float32_is_refused(cls, value):
    with pytest.raises(ValueError, match=r"scale = .* out of range: must be >= 1e-06"):
        cls(scale=value)


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_smallest_scale_is_accepted_and_passes_the_device_check(cls):
    cfg = cls(num_envs=E, device="cpu", num_points=64, scale=1e-6)  # the declared smallest
    gen = (GateGenerator if cls is GateGenConfig else TrackGenerator)(cfg, seeds=1)
    gen.generate()
    out = check_result(gen)
    assert not (out["fail"] & int(FailBit.PARAM_RANGE)).any()


def test_z_min_above_z_max_names_both_fields():
    with pytest.raises(
        ValueError, match=r"GateGenConfig\.z_min = 5\.0 is out of range: must be <= z_max = 1\.0"
    ):
        GateGenConfig(z_min=5.0, z_max=1.0)
    cfg = GateGenConfig(z_min=1.0, z_max=1.0)
    assert cfg.z_min == cfg.z_max == 1.0


def _randomizer_write():
    spec = presets.track(num_envs=E, device="cpu", num_points=64)
    gen = build(spec.with_randomize({"bezier.rad": (0.1, 0.5)}), seeds=1)
    gen.randomizers["bezier.rad"] = (0.1, 10**400)


_TOO_LARGE = {
    "with_randomize": lambda: presets.track(num_envs=E).with_randomize(
        {"bezier.rad": (0.1, 10**400)}
    ),
    "with_randomize lo": lambda: presets.track(num_envs=E).with_randomize(
        {"bezier.rad": (-(10**400), 0.5)}
    ),
    "randomizers[name] =": _randomizer_write,
    "Checkpoints(spacing)": lambda: Checkpoints(10**400),
    "Course.track(checkpoint_spacing)": lambda: Course.track(
        presets.track(num_envs=E, device="cpu"), checkpoint_spacing=10**400, seeds=1
    ),
    "BandCollisionUtility(sdf_padding)": lambda: BandCollisionUtility(
        Track.allocate(E, 8, "cpu"), method="sdf", sdf_resolution=8, sdf_padding=10**400
    ),
    "track_mix weight": lambda: build(
        presets.track_mix({"bezier": 10**400, "polar": 1}, num_envs=E, device="cpu")
    ),
}


@pytest.mark.parametrize("call", list(_TOO_LARGE.values()), ids=list(_TOO_LARGE))
def test_int_too_large_for_a_float_is_a_value_error_in_every_checked_api(call):
    with pytest.raises(ValueError, match="out of range"):
        call()


# ------------------------------------------------------------------------------ known issues
@pytest.mark.parametrize("value", ["5", None, [1], 1j])
def test_non_number_z_max_is_a_type_error_naming_the_field(value):
    with pytest.raises(TypeError, match="z_max"):
        GateGenConfig(z_max=value)


# ------------------------------------------------------------------------------ RaceConfig
def _race_fields(kinds):
    from track_gen.envs import RaceConfig

    pairs = zip(RaceConfig.__field_names__, RaceConfig.__tunables__, strict=True)
    return [(name, t) for name, t in pairs if t.kind in kinds]


#: np.nextafter past the largest float (the reward fields' bounds) is inf: expected.
@pytest.mark.filterwarnings("ignore:overflow encountered in nextafter")
@pytest.mark.parametrize(
    "name,t", _race_fields(("int", "float", "choice")), ids=lambda v: getattr(v, "name", v)
)
@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_race_config_fields_follow_their_declarations(name, t, data):
    """Each RaceConfig number or choice field, fuzzed from its declaration: refused naming
    ``RaceConfig.<field>`` (the declaration's range first, then RaceConfig's narrowed one), or
    stored as a Python value."""
    from track_gen.envs import RaceConfig

    value = data.draw(values(t, None), label=name)
    observations = "state"
    if name == "cones_spacing":  # its capacity rule holds only when the cones are observed
        observations = data.draw(st.sampled_from(["state", "state+cones"]), label="obs")
    kwargs = (
        {name: value} if name == "observations" else {name: value, "observations": observations}
    )
    err = expected_race_config_error(name, t, value, observations)
    event(f"{name}: {err.__name__ if err else 'accepted'}")
    if err is not None:
        with pytest.raises(err, match=rf"RaceConfig\.{name}\b"):
            RaceConfig(**kwargs)
        return
    got = getattr(RaceConfig(**kwargs), name)
    # stored as its Python kind (an int beyond float precision in a float field: its float)
    assert got == normalized(t, value) and type(got) in (int, float, str)


#: np.nextafter past the largest float (the reward fields' bounds) is inf: expected.
@pytest.mark.filterwarnings("ignore:overflow encountered in nextafter")
@pytest.mark.parametrize("name,t", _race_fields(("floats",)), ids=lambda v: getattr(v, "name", v))
@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_race_config_float_tuples_follow_their_declarations(name, t, data):
    """A ``floats`` field: a tuple or list of ``length`` numbers, each in the declared range;
    the count and every value come from the declaration."""
    from track_gen.envs import RaceConfig

    a, b = t.length
    element = dataclasses.replace(t, kind="float", default=None, optional=False, length=(0, 0))
    items = data.draw(st.lists(values(element, None), min_size=0, max_size=b + 2), label=name)
    value = tuple(items) if data.draw(st.booleans(), label="tuple") else list(items)
    if not a <= len(value) <= b:
        err = ValueError
    else:
        err = next((e for e in (expected_error(element, v, None) for v in value) if e), None)
    event(f"{name}: {err.__name__ if err else 'accepted'}")
    if err is not None:
        with pytest.raises(err, match=rf"RaceConfig\.{name}"):
            RaceConfig(**{name: value})
        return
    assert getattr(RaceConfig(**{name: value}), name) == tuple(float(v) for v in value)
