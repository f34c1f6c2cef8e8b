"""``io.tracks_spec``: every input (the circuits' arrays, units, assign, num_points, the
config fields it passes on).

Any circuit, however absurd (NaN, inf, huge, zero or negative widths, too few points, wrong
shapes, repeated points), is either refused with a TypeError / ValueError before anything is
built, or gives a spec whose generator builds and runs without a crash and with finite
beads on every valid env (an env may be invalid: a self-crossing or too-thin source)."""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from track_gen import TrackGenerator
from track_gen.io.spec import tracks_spec

from .strategies import examples, other_objects

FLOATS = st.one_of(
    st.floats(-1.0e3, 1.0e3, width=64),
    st.sampled_from([0.0, -1.0, np.nan, np.inf, -np.inf, 1.0e12, 1.0e-12]),
)


@st.composite
def circuits(draw):
    n = draw(st.integers(0, 24))
    sane = draw(st.booleans())  # half the circuits are plausible: finite, positive widths
    coord = st.floats(-100.0, 100.0) if sane else FLOATS
    width = st.floats(0.01, 20.0) if sane else FLOATS
    xy = draw(hnp.arrays(np.float64, (n, draw(st.sampled_from([2, 2, 2, 3]))), elements=coord))
    wl = draw(hnp.arrays(np.float64, (n,), elements=width))
    wr = draw(hnp.arrays(np.float64, (draw(st.sampled_from([n, n, n + 1])),), elements=width))
    return types.SimpleNamespace(name="f", xy=xy, width_left=wl, width_right=wr)


def ring(n=24, r=30.0, w=3.0):
    th = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    return types.SimpleNamespace(
        name="ring",
        xy=np.stack([r * np.cos(th), r * np.sin(th)], 1),
        width_left=np.full(n, w),
        width_right=np.full(n, w),
    )


def _run(spec):
    tr = TrackGenerator(spec).generate()
    valid = tr.valid.numpy().astype(bool)
    n_max = spec.config.N_max
    center = tr.center.numpy().reshape(spec.num_envs, n_max, 3)
    for e in np.flatnonzero(valid):
        assert np.isfinite(center[e, : tr.count.numpy()[e]]).all()
    return tr


@settings(max_examples=examples(40), deadline=None)
@given(track=circuits())
def test_any_circuit_is_refused_or_runs(track):
    try:
        spec = tracks_spec([track], num_envs=1, device="cpu", N_max=2048)
    except (TypeError, ValueError):
        return
    RAN.append(1)
    _run(spec)


RAN: list = []


def test_some_fuzzed_circuits_ran():
    # the test above, run first in this module, built and ran generators for some circuits
    assert RAN


@settings(max_examples=examples(40), deadline=None)
@given(
    tracks=st.one_of(
        st.sampled_from(other_objects(2)),
        st.just([]),
        st.just("Monza.csv"),
        st.lists(st.sampled_from([1, None, "x", object()]), min_size=1, max_size=2),
    ),
)
def test_not_a_list_of_circuits(tracks):
    with pytest.raises((TypeError, ValueError), match="tracks"):
        tracks_spec(tracks, num_envs=1, device="cpu")


@settings(max_examples=examples(40), deadline=None)
@given(
    units=st.one_of(st.sampled_from(["metres", "normalized", "meters", "", None, 1])),
    assign=st.one_of(st.sampled_from(["env", "draw", "random", "", None, 0])),
    num_points=st.one_of(
        st.none(), st.integers(-5, 20000), st.sampled_from([16.0, True, "32", np.int64(64)])
    ),
)
def test_options(units, assign, num_points):
    ok_units = units in ("metres", "normalized")
    ok_assign = assign in ("env", "draw")
    ok_np = num_points is None or (
        isinstance(num_points, (int, np.integer))
        and not isinstance(num_points, bool)
        and 16 <= num_points <= 16384
    )
    kw = dict(num_envs=1, device="cpu", units=units, assign=assign, num_points=num_points)
    if ok_units and ok_assign and ok_np:
        spec = tracks_spec([ring()], **kw)
        if spec.config.num_points <= 4096:
            _run(spec)
    else:
        with pytest.raises((TypeError, ValueError)):
            tracks_spec([ring()], **kw)


def test_the_generator_field_is_refused():
    with pytest.raises(TypeError, match="generator"):
        tracks_spec([ring()], num_envs=1, device="cpu", generator="polar")


def test_config_fields_are_checked_by_the_config():
    with pytest.raises(ValueError, match="half_width"):
        tracks_spec([ring()], num_envs=1, device="cpu", half_width=-1.0)
    with pytest.raises(TypeError):
        tracks_spec([ring()], num_envs=1, device="cpu", no_such_field=1)
