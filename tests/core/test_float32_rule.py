"""The one rule for floats (core/tunable.py): every float a kernel reads is a sane float32.

* Every float declaration of the package (config fields, stage options, component and
  utility keywords, RaceConfig, LevelReplay, the dynamic per-env parameters) has float32-safe
  bounds: finite, each nonzero bound's magnitude in ``[F32_SAFE_MIN, F32_SAFE_MAX]``, never an
  exclusive 0. A new float field without such a bound fails here (and at its declaration).
* Every accepted value is a finite float32 that is 0 or normal and inside the bounds as
  float32; the float32 extremes (denormals, 1e-38, 3.4e38, 1e300, -0.0) of every float field
  are refused with a ValueError naming the field and its bound, or accepted as such a value.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil

import numpy as np
import pytest

import track_gen
from track_gen.core.tunable import (
    F32_NORMAL_MIN,
    F32_SAFE_MAX,
    F32_SAFE_MIN,
    Tunable,
    float32_bound_problem,
)

#: The float32 extremes every float field meets.
EXTREMES = (
    5e-324,
    1e-300,
    1e-45,
    1e-40,
    -1e-40,
    1e-38,
    1.1754942e-38,
    1.1754944e-38,
    -1.1754944e-38,
    1e-37,
    3.4e38,
    3.4028235e38,
    3.5e38,
    -3.5e38,
    1e300,
    -1e300,
    0.0,
    -0.0,
)


def _collect(obj, found: dict, seen: set) -> None:
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, Tunable):
        found[id(obj)] = obj
    elif isinstance(obj, (tuple, list, set, frozenset)):
        for o in obj:
            _collect(o, found, seen)
    elif isinstance(obj, dict) or type(obj).__name__ == "mappingproxy":
        for o in obj.values():
            _collect(o, found, seen)
    elif inspect.isclass(obj) and obj.__module__.startswith("track_gen"):
        for o in vars(obj).values():
            _collect(o, found, seen)


def declarations() -> list[Tunable]:
    """Every Tunable the package declares: walked from each module's globals, through
    tuples, lists, dicts and the classes of the package (config classes' ``__tunables__``,
    their narrowed copies, stages' ``FIELDS``)."""
    found: dict = {}
    seen: set = set()
    for info in pkgutil.walk_packages(track_gen.__path__, "track_gen."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            _collect(value, found, seen)
    return list(found.values())


DECLARED = declarations()
FLOATS = [t for t in DECLARED if t.kind in ("float", "floats")]


def _id(t: Tunable) -> str:
    return f"{t.name}:{id(t)}"


def test_the_walk_finds_the_declarations():
    # the config classes alone hold this many; the walk must see at least those
    from track_gen import GateGenConfig, TrackGenConfig
    from track_gen.envs import RaceConfig

    for cls in (TrackGenConfig, GateGenConfig, RaceConfig):
        for t in cls.__tunables__:
            assert id(t) in {id(u) for u in DECLARED}, (cls.__name__, t.name)
    assert len(FLOATS) >= 90
    assert any(t.dynamic for t in FLOATS)


@pytest.mark.parametrize("t", FLOATS, ids=[t.name for t in FLOATS])
def test_every_float_declaration_has_float32_safe_bounds(t):
    assert float32_bound_problem(t) is None, (t, float32_bound_problem(t))
    for b in (t.lo, t.hi):
        if isinstance(b, Tunable):
            continue
        assert b == 0 or F32_SAFE_MIN <= abs(b) <= F32_SAFE_MAX
    assert not (t.lo == 0 and t.lo_open) and not (t.hi == 0 and t.hi_open)


@pytest.mark.parametrize(
    "bounds, text",
    [
        ({"lo": 0.0, "lo_open": True, "hi": 1.0}, "exclusive"),
        ({"lo": 0.0, "hi": 1.0e30}, "outside the float32-safe"),
        ({"lo": 1.0e-12, "hi": 1.0}, "outside the float32-safe"),
        ({"lo": -1.0e300, "hi": 1.0}, "outside the float32-safe"),
        ({"lo": -1.0, "hi": 0.0, "hi_open": True}, "exclusive"),
    ],
)
def test_a_float_declaration_without_a_safe_bound_is_refused(bounds, text):
    with pytest.raises(ValueError, match=text):
        Tunable("x", 0.5, **bounds)
    with pytest.raises(ValueError, match=text):
        Tunable("xs", (0.5,), kind="floats", length=(1, 1), **bounds)


def _f32(x: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def _accepted_is_sane(t: Tunable, x: float, got) -> None:
    assert isinstance(got, float)
    g32 = _f32(got)
    assert math.isfinite(g32)
    assert got == 0 or abs(g32) >= F32_NORMAL_MIN
    assert math.copysign(1.0, got) > 0 or got != 0  # -0.0 is stored as +0.0
    lo, hi = t.bounds(lambda u: u.default)
    if lo is not None and not isinstance(t.lo, Tunable):
        assert g32 > _f32(lo) if t.lo_open else g32 >= _f32(lo)
    if hi is not None and not isinstance(t.hi, Tunable):
        assert g32 < _f32(hi) if t.hi_open else g32 <= _f32(hi)


@pytest.mark.parametrize("t", FLOATS, ids=[t.name for t in FLOATS])
def test_float32_extremes_are_refused_or_sane(t):
    scalar = dataclasses.replace(t, kind="float", length=(0, 0)) if t.kind == "floats" else t
    lo, hi = (None if isinstance(b, Tunable) else b for b in (t.lo, t.hi))
    for x in EXTREMES:
        try:
            got = scalar.check(x, "F.x", lambda u: u.default)
        except ValueError as exc:
            text = str(exc)
            assert text.startswith("F.x = ") and "out of range" in text, text
            # the refusal states the bound (the declared range, or a rule between fields)
            declared = f"{lo}" in text or f"{hi}" in text
            assert declared or (t.rule is not None and "must be" in text), text
            continue
        _accepted_is_sane(t, x, got)


def test_a_value_that_float32_rounds_to_zero_or_a_denormal_is_refused():
    t = Tunable("noise", 0.0, lo=0.0, hi=1.0e6, unit="m", doc="d.")
    for x in (1e-300, 5e-324, 1e-40, 1e-45, 1.1754942e-38):
        with pytest.raises(ValueError, match=r"0 or a normal float32"):
            t.check(x, "T.noise")
    assert t.check(0.0, "T.noise") == 0.0
    assert math.copysign(1.0, t.check(-0.0, "T.noise")) == 1.0
    assert t.check(1.1754944e-38, "T.noise") == 1.1754944e-38
    # a params write of a per-env array follows the same rule
    d = Tunable("gain", 0.5, lo=0.0, hi=1.0, dynamic=True, doc="d.")
    d.check_host_array(np.array([0.0, 0.5, 1.0]), "params['x.gain']")
    with pytest.raises(ValueError, match=r"env 1 has 1e-40"):
        d.check_host_array(np.array([0.0, 1e-40, 1.0]), "params['x.gain']")


def test_floats_tuples_follow_the_rule_per_element():
    t = Tunable("pair", (0.5, 0.5), kind="floats", length=(2, 2), lo=0.0, hi=1.0)
    with pytest.raises(ValueError, match=r"pair\[1\] = 1e-40 .* normal float32"):
        t.check((0.5, 1e-40), "pair")
    assert t.check((0.5, -0.0), "pair") == (0.5, 0.0)
