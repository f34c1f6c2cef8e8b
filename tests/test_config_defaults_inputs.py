"""The gate pipeline's sampler resolution: ``GateGenConfig``'s own defaults of the shared
``num_points`` / ``num_points_per_segment`` (``GATE_RESOLUTION``), and the per-class default
override of ``config_class(..., defaults=)`` that declares them.

* Omitted, each field takes the gate default; passed, the value is checked exactly as any
  config field (the oracle of ``strategies.expected_config_error``) and, when accepted, is the
  one the generator runs at (its loop stride) and builds a consistent batch with.
* A ``defaults=`` override is checked against its declaration when the class is made
  (TypeError / ValueError as a config value would get), becomes the class's default (its
  dataclass field, docstring and ``field_rows`` row), never another class's, and a value
  passed at construction wins.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig
from track_gen.config import GATE_RESOLUTION
from track_gen.core.tunable import Tunable, class_default, config_class, field_rows

from .support.strategies import examples, expected_config_error, expected_error, normalized, values

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 2
FIELDS = tuple(GATE_RESOLUTION)
#: samplers whose build stays quick at any resolution drawn below
BUILD_SAMPLERS = ("polar", "bezier", "hull", "voronoi")
#: largest num_points a drawn batch is built at (larger accepted values are checked only)
BUILD_MAX_POINTS = 1024


def _tunable(field: str) -> Tunable:
    return next(t for t in GateGenConfig.__tunables__ if t.field == field)


def _maybe(field: str):
    """Omitted (None) or any value of the field's declaration."""
    return st.one_of(st.none(), values(_tunable(field)))


@settings(max_examples=examples(40), deadline=None)
@given(
    num_points=_maybe("num_points"),
    per_segment=_maybe("num_points_per_segment"),
    generator=st.sampled_from(BUILD_SAMPLERS),
)
def test_gate_resolution_is_the_default_or_the_checked_value(num_points, per_segment, generator):
    given_fields = {
        k: v
        for k, v in (("num_points", num_points), ("num_points_per_segment", per_segment))
        if v is not None
    }
    kwargs = dict(generator=generator, num_envs=E, device="cpu", gate_width=0.1, **given_fields)
    err, field = expected_config_error(GateGenConfig, kwargs)
    if err is not None:
        with pytest.raises(err, match=rf"GateGenConfig\.{field}\b"):
            GateGenConfig(**kwargs)
        return
    cfg = GateGenConfig(**kwargs)
    for k in FIELDS:
        t = _tunable(k)
        want = normalized(t, given_fields[k]) if k in given_fields else GATE_RESOLUTION[k]
        assert getattr(cfg, k) == want and type(getattr(cfg, k)) is int
    if cfg.num_points > BUILD_MAX_POINTS:
        return
    gen = GateGenerator(cfg, seeds=3)
    assert gen.layout.num_points == cfg.num_points
    seq = gen.generate(advance=True)
    count = seq.count.numpy()
    G = cfg.max_gates
    pos = seq.position.numpy().reshape(E, G, 3)
    for e in range(E):
        assert cfg.num_gates_min <= count[e] <= cfg.num_gates_max
        assert np.isfinite(pos[e, : count[e]]).all() and np.isnan(pos[e, count[e] :]).all()
    np.testing.assert_array_equal(seq.valid.numpy(), (seq.fail_mask.numpy() == 0).astype(int))


def test_track_config_keeps_the_declared_resolution():
    for k in FIELDS:
        assert getattr(TrackGenConfig(), k) == _tunable(k).default
        assert class_default(TrackGenConfig, _tunable(k)) == _tunable(k).default
        assert class_default(GateGenConfig, _tunable(k)) == GATE_RESOLUTION[k]


# ------------------------------------------------------------------ config_class(defaults=)
COUNT = Tunable("count", 5, lo=1, hi=64, unit="things", doc="a count.")
RATE = Tunable("rate", 0.5, lo=1e-6, hi=1.0, doc="a rate.")
MODE = Tunable("mode", "a", choices=("a", "b"), doc="a mode.")
Base = config_class("Base", [("Things", "thing", (COUNT, RATE, MODE))], doc="A base.")


@settings(max_examples=examples(60), deadline=None)
@given(
    data=st.data(),
    tunable=st.sampled_from((COUNT, RATE, MODE)),
    inherited=st.booleans(),
)
def test_default_override_is_checked_and_scoped_to_its_class(data, tunable, inherited):
    value = data.draw(
        values(tunable)
        if tunable.kind != "choice"
        else st.sampled_from(["a", "b", "c", "", None, 1])
    )
    err = expected_error(tunable, value, None)
    groups = [] if inherited else [("Things", "thing", (COUNT, RATE, MODE))]
    make = (
        (lambda: config_class("Child", groups, base=Base, defaults={tunable.field: value}))
        if inherited
        else (lambda: config_class("Child", groups, defaults={tunable.field: value}))
    )
    if err is not None:
        with pytest.raises(err, match=tunable.field):
            make()
        return
    child = make()
    want = normalized(tunable, value)
    assert getattr(child(), tunable.field) == want
    assert class_default(child, tunable) == want
    assert {f.name: f.default for f in dataclasses.fields(child)}[tunable.field] == want
    rows = {r["field"]: r for _, rs in field_rows(child) for r in rs}
    assert rows[tunable.field]["default"] == repr(want)
    assert f"{tunable.field} ({tunable.kind}, default {want!r}" in child.__doc__
    # the base and the declaration keep theirs; a passed value wins
    assert getattr(Base(), tunable.field) == tunable.default == class_default(Base, tunable)
    other = tunable.default if tunable.default != want else None
    if other is not None:
        assert getattr(child(**{tunable.field: other}), tunable.field) == other
    # a subclass inherits the override
    grandchild = config_class("Grandchild", [], base=child)
    assert getattr(grandchild(), tunable.field) == want


@pytest.mark.parametrize("name", ["nope", "", "counts"])
def test_default_override_of_an_unknown_field_is_refused(name):
    with pytest.raises(ValueError, match="unknown field"):
        config_class("Child", [], base=Base, defaults={name: 3})
