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
from track_gen.io import RealTrack
from track_gen.io.spec import tracks_spec

from ..support.strategies import examples, other_objects

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

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
    """A circle of ``n`` points, radius ``r``, widths ``w`` (a duck-typed circuit)."""
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


# ----------------------------------------------------------------------------- dtypes, widths
#: dtypes of every kind an array field may arrive in (only int and float ones are real numbers).
ARRAY_DTYPES = (
    np.float64,
    np.float32,
    np.float16,
    np.int64,
    np.int16,
    np.uint8,
    np.bool_,
    np.complex128,
    np.complex64,
    np.str_,
    np.bytes_,
    "datetime64[s]",
    object,
)


def _as_kind(values: np.ndarray, dtype) -> np.ndarray:
    """``values`` (float64) in ``dtype``; object arrays hold Python floats or None."""
    if dtype is object:
        return np.array(
            [None if v < 0 else float(v) for v in values.ravel()], dtype=object
        ).reshape(values.shape)
    if dtype in (np.str_, np.bytes_):
        return values.astype(str).astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        return values.astype(dtype)


@settings(max_examples=examples(60), deadline=None)
@given(
    field=st.sampled_from(["xy", "width_right", "width_left"]),
    dtype=st.sampled_from(ARRAY_DTYPES),
    imag=st.floats(-1.0, 1.0),
)
def test_realtrack_fields_of_every_dtype(field, dtype, imag):
    ring_ = ring(n=8)
    fields = {"xy": ring_.xy, "width_right": ring_.width_right, "width_left": ring_.width_left}
    arr = _as_kind(fields[field], dtype)
    if np.dtype(dtype).kind == "c":
        arr = arr + 1j * imag  # used to drop the imaginary part silently
    fields[field] = arr
    kind = np.dtype(dtype).kind
    real = kind in "iuf" or (kind == "O" and all(v is not None for v in arr.ravel()))
    if not real:
        with pytest.raises(TypeError, match=f"RealTrack.{field} must be an array of real numbers"):
            RealTrack("r", **fields)
        return
    try:
        t = RealTrack("r", **fields)
    except ValueError as exc:  # an int cast made points repeat or widths 0
        assert field in str(exc) or "xy" in str(exc)
        return
    np.testing.assert_array_equal(getattr(t, field), np.asarray(arr, dtype=np.float64))


WIDTHS = st.one_of(
    st.sampled_from([1e-300, 5e-324, 1e-45, 1e-12, 9.9e-7, 1e-6, 1e6, 1.0000001e6, 1e7, 1e300]),
    st.floats(1e-8, 1e7),
)


@settings(max_examples=examples(40), deadline=None)
@given(width=WIDTHS, units=st.sampled_from(["metres", "normalized"]), scale=WIDTHS)
def test_tracks_spec_widths_tiny_and_huge(width, units, scale):
    """A width outside the half_width range (as float32, in the spec's units) is refused with
    the library's ValueError, never a ZeroDivisionError or an overflow; else the spec runs."""
    r = ring(n=16, r=30.0)
    circuit = types.SimpleNamespace(
        xy=r.xy * min(scale, 1e7) / 30.0, width_left=np.full(16, width), width_right=r.width_right
    )
    try:
        spec = tracks_spec([circuit], num_envs=1, device="cpu", units=units, N_max=2048)
    except ValueError as exc:
        assert "tracks[0]" in str(exc) or "spacing" in str(exc) or "beads" in str(exc)
        return
    table = spec.stages[0].options["table"]
    assert np.isfinite(table).all() and table[:, :, 2:].min() >= np.float32(1e-6)
    RAN_WIDTHS.append(1)
    _run(spec)


RAN_WIDTHS: list = []


def test_some_fuzzed_widths_ran():
    assert RAN_WIDTHS


@settings(max_examples=examples(40), deadline=None)
@given(
    key=st.sampled_from(["half_width", "spacing", "width_variation", "units", "assign"]),
    value=st.sampled_from(other_objects(2) + [0.0, 0.5, 1e-300, 1e300, float("nan")]),
)
def test_tracks_spec_fields_of_every_kind(key, value):
    """tracks_spec's own keywords and the config fields it reads before the config does are
    checked by their declarations: TypeError / ValueError naming the keyword, never a raw
    error from float() or a division."""
    try:
        spec = tracks_spec([ring()], num_envs=1, device="cpu", **{key: value})
    except (TypeError, ValueError) as exc:
        assert key in str(exc)
        return
    assert spec.config.num_envs == 1
