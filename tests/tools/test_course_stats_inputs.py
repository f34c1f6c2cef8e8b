"""Fuzz cases of every input of tools.CourseStats / CourseStatsUtility.

The settings (``corner_radius``, ``corner_angle``, ``percentiles``, ``racing_line``) take
any value: a refused one raises the error the declaration implies, before anything is built;
an accepted one measures finite descriptors. Hand-made tracks hold NaN, inf, huge and tiny
values anywhere, counts below 0 and beyond the row stride and any valid flag: the meter
answers finite descriptors for every usable env (the documented rule) and NaN for the others.
Any int32 mask writes exactly the envs it selects; any float32 lap time is reported as is.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import warp as wp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from track_gen import tools
from track_gen.results import Track
from track_gen.tools.course_stats import CORNER_ANGLE, CORNER_RADIUS, DESCRIPTORS, PERCENTILES

from ..support.strategies import (
    INT32_MAX,
    INT32_MIN,
    examples,
    expected_error,
    mask_contents,
    poison_floats,
    values,
)

pytestmark = pytest.mark.fuzz

E, N_MAX = 4, 12
LIMIT = 1.0e18  # COORD_LIMIT


def _loop_rows(n=10, r=1.0):
    t = 2 * np.pi * np.arange(n) / n
    c = np.c_[r * np.cos(t), r * np.sin(t), 0.1 * np.sin(2 * t)]
    nrm = np.c_[np.cos(t), np.sin(t), np.zeros(n)]
    return c, c + 0.1 * nrm, c - 0.1 * nrm


def build_track(center, outer, inner, count, valid) -> Track:
    track = Track.allocate(E, N_MAX, "cpu")
    for name, rows in (("center", center), ("outer", outer), ("inner", inner)):
        getattr(track, name).assign(np.asarray(rows, np.float32).reshape(-1, 3))
    track.count.assign(np.asarray(count, np.int32))
    track.valid.assign(np.asarray(valid, np.int32))
    return track


@functools.cache
def base_arrays():
    c, o, i = _loop_rows()
    pad = np.full((E, N_MAX, 3), np.nan, np.float32)
    center, outer, inner = pad.copy(), pad.copy(), pad.copy()
    for e in range(E):
        s = 1.0 + e
        center[e, :10], outer[e, :10], inner[e, :10] = c * s, o * s, i * s
    return center, outer, inner


@functools.cache
def base_track() -> Track:
    center, outer, inner = base_arrays()
    return build_track(center, outer, inner, [10] * E, [1] * E)


def usable(center, outer, inner, count, valid) -> np.ndarray:
    """The documented rule, in float64 NumPy: valid, 3 <= count <= N_max, every bead and
    border coordinate within COORD_LIMIT, and a plan-view length > 0."""
    out = np.zeros(E, bool)
    for e in range(E):
        n = int(count[e])
        if valid[e] == 0 or not 3 <= n <= N_MAX:
            continue
        rows = np.concatenate([a[e, :n].astype(np.float64) for a in (center, outer, inner)])
        if not (np.abs(rows) <= LIMIT).all():
            continue
        xy = center[e, :n, :2].astype(np.float64)
        out[e] = np.linalg.norm(np.roll(xy, -1, 0) - xy, axis=1).sum() > 0
    return out


def assert_answers(stats, ok: np.ndarray, lap=None) -> None:
    for name in DESCRIPTORS:
        got = getattr(stats, name).numpy()
        for e in range(E):
            if not ok[e]:
                assert np.isnan(got[e]), (name, e)
            elif name == "par_time":
                want = np.float32(np.nan) if lap is None else np.float32(lap[e])
                assert got[e].tobytes() == want.tobytes(), e
            else:
                assert np.isfinite(got[e]), (name, e, got[e])
    pct = stats.host("curvature_percentile")
    assert np.isfinite(pct[ok]).all() and np.isnan(pct[~ok]).all()


# ------------------------------------------------------------------------------ settings
@settings(max_examples=examples(40), deadline=None)
@given(st.sampled_from([CORNER_RADIUS, CORNER_ANGLE]), st.data())
def test_corner_settings_refused_or_measured(t, data):
    value = data.draw(values(t))
    want = expected_error(t, value, lookup=None)
    if want is not None:
        with pytest.raises(want, match=f"CourseStats.{t.name}"):
            tools.CourseStats(**{t.name: value})
        return
    tools.CourseStats(**{t.name: value})
    meter = tools.CourseStatsUtility(base_track(), **{t.name: value})
    assert_answers(meter.stats, np.ones(E, bool))


def _expected_percentiles_error(value):
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
        return TypeError
    if not 1 <= len(value) <= PERCENTILES.length[1]:
        return ValueError
    for v in value:
        if isinstance(v, (bool, np.bool_)) or not isinstance(
            v, (int, float, np.integer, np.floating)
        ):
            return TypeError
        if not (math.isfinite(float(v)) and 0.0 <= float(v) <= 100.0):
            return ValueError
        if float(v) != 0.0 and abs(float(v)) < float(np.finfo(np.float32).tiny):
            return ValueError  # a kernel would read 0 or a denormal (the float32 rule)
    return None


percentile_items = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(0.0, 100.0),
    st.sampled_from(
        [0, 100, 50, -0.0, 100.00000000000001, -1e-300, True, "50", None, np.float32(99.5)]
    ),
)


@settings(max_examples=examples(40), deadline=None)
@given(
    st.one_of(
        st.lists(percentile_items, min_size=0, max_size=10),
        st.lists(percentile_items, min_size=0, max_size=10).map(tuple),
        st.sampled_from([50.0, "50", None, {50.0}, np.array([50.0]), range(3)]),
    )
)
@example([1.4477838747326422e-259])  # a float32 kernel would read 0: refused
def test_percentiles_refused_or_their_nearest_ranks(value):
    want = _expected_percentiles_error(value)
    if want is not None:
        with pytest.raises(want, match="CourseStats.percentiles"):
            tools.CourseStats(percentiles=value)
        return
    meter = tools.CourseStatsUtility(base_track(), percentiles=value)
    pct = meter.stats.host("curvature_percentile")
    assert pct.shape == (E, len(value))
    whole = tools.CourseStatsUtility(base_track(), percentiles=(0.0, 100.0)).stats
    lo, hi = whole.host("curvature_percentile")[:, 0], whole.host("curvature_percentile")[:, 1]
    assert ((pct >= lo[:, None]) & (pct <= hi[:, None])).all()
    order = np.argsort(np.asarray(value, np.float64), kind="stable")
    assert (np.diff(pct[:, order], axis=1) >= 0).all()  # monotone in the percentile


@settings(max_examples=examples(20), deadline=None)
@given(
    st.one_of(st.none(), st.text(max_size=12), st.integers(), st.sampled_from([b"x", 1.0, ("a",)]))
)
def test_racing_line_name_refused_unless_a_name(value):
    if value is None or (isinstance(value, str) and value):
        comp = tools.CourseStats(racing_line=value)
        assert (value in comp.after) == (value is not None)
        return
    with pytest.raises(TypeError, match="CourseStats.racing_line"):
        tools.CourseStats(racing_line=value)


# ------------------------------------------------------------------------------ course data
@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["center", "outer", "inner"]),
            st.integers(0, E - 1),
            st.integers(0, N_MAX - 1),
            st.integers(0, 2),
            poison_floats,
        ),
        max_size=6,
    ),
    st.lists(
        st.one_of(st.integers(-3, N_MAX + 3), st.sampled_from([INT32_MIN, INT32_MAX, 10])),
        min_size=E,
        max_size=E,
    ),
    st.lists(st.sampled_from([0, 1, 2, -1, INT32_MAX]), min_size=E, max_size=E),
    st.sampled_from([1.0, 1e-30, 1e15, 1e-44]),
)
def test_hand_made_tracks_answer_finite_or_nan(pokes, count, valid, scale):
    center, outer, inner = (a.copy() for a in base_arrays())
    arrays = {"center": center, "outer": outer, "inner": inner}
    with np.errstate(over="ignore", under="ignore"):
        for a in arrays.values():
            a *= np.float32(scale)
        for name, e, i, k, v in pokes:
            arrays[name][e, i, k] = np.float32(v)
    track = build_track(center, outer, inner, count, valid)
    meter = tools.CourseStatsUtility(track)
    ok = usable(center, outer, inner, np.asarray(count), np.asarray(valid))
    assert_answers(meter.stats, ok)
    assert (meter.stats.straight_fraction.numpy()[ok] >= 0).all()
    assert (meter.stats.straight_fraction.numpy()[ok] <= 1).all()


@settings(max_examples=examples(30), deadline=None)
@given(mask_contents(E), st.lists(poison_floats, min_size=E, max_size=E))
def test_any_mask_writes_the_envs_it_selects_and_any_lap_time_is_reported(mask, laps):
    lap = wp.array(np.asarray(laps, np.float32), dtype=wp.float32, device="cpu")
    meter = tools.CourseStatsUtility(base_track(), lap_time=lap)
    full = [a.numpy().copy() for a in meter.stats.arrays()]
    assert_answers(meter.stats, np.ones(E, bool), lap=laps)
    for a in meter.stats.arrays():
        a.fill_(-7.0)
    meter.measure(wp.array(mask, dtype=wp.int32, device="cpu"))
    sel = mask != 0
    for now, want in zip(meter.stats.arrays(), full, strict=True):
        got = now.numpy().reshape(E, -1)
        want = want.reshape(E, -1)
        assert np.array_equal(got[sel], want[sel], equal_nan=True)
        assert (got[~sel] == -7.0).all()
