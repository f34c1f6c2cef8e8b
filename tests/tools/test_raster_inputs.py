"""Fuzz of every input of the ego raster (``tools.EgoRaster`` / ``EgoRasterUtility``).

Settings (``resolution``, ``extent``) take edge, in-range and out-of-range values of every
kind: each is refused with the error its declaration implies (plus the documented rule: a cell
must be at least 1e-30 track units) before anything is built. Poses take any float32 (NaN,
inf, huge, subnormal): a valid env with a finite position and a finite, nonzero orientation
answers finite flags, every other env UNKNOWN, and nothing crashes. Resolutions and extents
across their ranges match the float64 oracle of ``test_raster.py``; hand-made bad tracks,
``props`` / ``height_field`` of another kind and ``after`` are checked too.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import TrackGenerator
from track_gen.pipeline import presets
from track_gen.tools import (
    EgoRaster,
    EgoRasterUtility,
    HeightFieldUtility,
    PropsUtility,
    RasterCell,
)
from track_gen.tools.raster import EXTENT, RESOLUTION

from ..support.strategies import (
    agent_rows,
    examples,
    expected_error,
    other_objects,
    values,
    wrong_arrays,
)
from .test_raster import arrays, check_image, poses_on_track

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz


E = 3


UNKNOWN = int(RasterCell.UNKNOWN)


def _first_error(*errors):
    return next((e for e in errors if e is not None), None)


@settings(max_examples=examples(60))
@given(values(RESOLUTION), values(EXTENT))
def test_raster_settings(resolution, extent):
    want = _first_error(expected_error(RESOLUTION, resolution), expected_error(EXTENT, extent))
    if want is None and float(extent) / int(resolution) < 1e-30:
        want = ValueError
    if want is None:
        comp = EgoRaster(resolution, extent)
        assert comp.resolution == int(resolution) and comp.extent == float(extent)
        return
    with pytest.raises(want):
        EgoRaster(resolution, extent)


@functools.lru_cache(maxsize=1)
def _track():
    gen = TrackGenerator(presets.track(num_envs=E, device="cpu"), seeds=8)
    gen.generate()
    props = PropsUtility(gen.result, "cone", 0.1, max_props=256)
    field = HeightFieldUtility(gen.result, resolution=32)
    return gen, props, field


@settings(max_examples=examples(30))
@given(agent_rows(E, 3), agent_rows(E, 4))
def test_raster_any_pose(pos, quat):
    gen, props, field = _track()
    raster = EgoRasterUtility(gen.result, 16, 0.8, props=props.props, height_field=field.field)
    image = raster.render(
        wp.array(pos, dtype=wp.vec3f, device="cpu"), wp.array(quat, dtype=wp.quatf, device="cpu")
    )
    cells = image.host("cells").reshape(E, -1)
    heights = image.host("height").reshape(E, -1)
    for e in range(E):
        live = np.isfinite(pos[e]).all() and np.isfinite(quat[e]).all() and np.any(quat[e])
        if not live:
            assert (cells[e] == UNKNOWN).all() and np.isnan(heights[e]).all()
        else:
            assert not (cells[e] & UNKNOWN).any() and np.isfinite(heights[e]).all()
            assert (cells[e] & ~np.uint8(7) == 0).all()


@settings(max_examples=examples(20))
@given(
    st.integers(8, 40),
    st.one_of(st.floats(0.05, 6.0), st.sampled_from([1e-6, 1e-3, 50.0, 1e6])),
    st.integers(0, 2**31 - 1),
)
def test_raster_resolution_and_extent_match_the_oracle(res, extent, seed):
    gen, props, _ = _track()
    raster = EgoRasterUtility(gen.result, res, extent, props=props.props)
    pos, quat = poses_on_track(gen.result, np.random.default_rng(seed), spread=0.3)
    image = raster.render(*arrays("cpu", pos, quat))
    share, _ = check_image(gen.result, image, pos, quat, res, extent, cones=props.props)
    assert share < 0.05 or extent < 1e-3  # tiny cells: every cell sits near the agent's point


def test_raster_wrong_arrays_refused_before_launch():
    gen, _, _ = _track()
    raster = EgoRasterUtility(gen.result, 16, 1.0)
    good_p = wp.zeros(E, dtype=wp.vec3f, device="cpu")
    good_q = wp.zeros(E, dtype=wp.quatf, device="cpu")
    before = raster.image.cells.numpy().tobytes()
    for _label, error, make in wrong_arrays(E, wp.vec3f, "cpu"):
        with pytest.raises(error, match="position"):
            raster.render(make(), good_q)
    for _label, error, make in wrong_arrays(E, wp.quatf, "cpu"):
        with pytest.raises(error, match="orientation"):
            raster.render(good_p, make())
    assert raster.image.cells.numpy().tobytes() == before


_POISON = [np.nan, np.inf, -np.inf, 1e19, -1e30, 3.4e38, 1e-40]


@settings(max_examples=examples(25))
@given(
    st.lists(st.sampled_from([-5, 0, 1, 2, 3, 10**6, 2**31 - 1]), min_size=E, max_size=E),
    st.lists(st.sampled_from([1, 1, 0, 2, -1]), min_size=E, max_size=E),
    st.lists(st.tuples(st.integers(0, E - 1), st.sampled_from(_POISON)), max_size=4),
    st.integers(0, 2**31 - 1),
)
def test_raster_on_hand_made_bad_tracks(counts, valids, poison, seed):
    """Counts beyond the rows, odd valid flags and NaN / huge border coordinates: an env
    answers UNKNOWN exactly when the band rule refuses it (valid 0, fewer than 3 beads, a
    border coordinate not finite or beyond 1e18), else finite flags; nothing crashes."""
    gen, _, _ = _track()
    track = gen.result.clone()
    N = track.N_max
    real = track.count.numpy().copy()
    rng = np.random.default_rng(seed)
    use = [int(c) if c != 10**6 else int(real[e]) for e, c in enumerate(counts)]
    track.count.assign(np.asarray([min(c, 2**31 - 1) for c in use], np.int32))
    track.valid.assign(np.asarray(valids, np.int32))
    inner = track.inner.numpy().reshape(E, N, 3)
    for e, value in poison:
        n = max(int(real[e]), 1)
        inner[e, rng.integers(n), rng.integers(2)] = value
    track.inner.assign(inner.reshape(-1, 3))
    raster = EgoRasterUtility(track, 12, 0.8)
    pos, quat = poses_on_track(gen.result, rng)
    cells = raster.render(*arrays("cpu", pos, quat)).host("cells").reshape(E, -1)
    count = track.count.numpy()
    for e in range(E):
        n = int(np.clip(count[e], 0, N))
        rows = track.host("inner")[e, :n]
        ok_rows = np.isfinite(rows).all() and (np.abs(rows) <= 1e18).all()
        usable = valids[e] != 0 and n >= 3 and ok_rows
        if usable:
            assert not (cells[e] & UNKNOWN).any()
        else:
            assert (cells[e] == UNKNOWN).all()


def _wrong_objects():
    """Objects a props / height_field / seeds argument may be given by mistake: every other
    kind, the track, the placer and the baker instead of their results, each result as the
    other argument."""
    gen, props, field = _track()
    return [*other_objects(E), 3, gen.result, props, field, props.props, field.field]


@settings(max_examples=examples(40))
@given(data=st.data())
def test_raster_props_and_height_field_of_another_kind(data):
    """``EgoRasterUtility(track, 16, 1.0, height_field=3)`` was ``AttributeError: 'int' object
    has no attribute 'height'``, a props of another kind a ValueError: each is a TypeError
    naming the argument and what it takes; a PropsResult of walls stays a ValueError."""
    gen, props, field = _track()
    wrong = data.draw(st.sampled_from(_wrong_objects()))
    if wrong is not field.field:
        with pytest.raises(
            TypeError, match=r"EgoRasterUtility height_field must be a HeightFieldResult"
        ):
            EgoRasterUtility(gen.result, 16, 1.0, height_field=wrong)
    if wrong is not props.props:
        with pytest.raises(
            TypeError, match=r"EgoRasterUtility props must be a PropsResult of cones"
        ):
            EgoRasterUtility(gen.result, 16, 1.0, props=wrong)
    walls = PropsUtility(gen.result, "wall", 0.2, max_props=64).props
    with pytest.raises(ValueError, match="of kind 'cone'"):
        EgoRasterUtility(gen.result, 16, 1.0, props=walls)
    ok = EgoRasterUtility(gen.result, 16, 1.0, props=props.props, height_field=field.field)
    assert ok.props is props.props and ok.height_field is field.field


@settings(max_examples=examples(30))
@given(after=st.one_of(st.sampled_from(other_objects(E)), st.text(max_size=4)))
def test_raster_after_is_checked_like_every_components(after):
    """``EgoRaster(after="ab")`` was split into ("a", "b") and ``after=3`` a bare "not
    iterable": every value but a sequence of names is the components' TypeError."""
    with pytest.raises(TypeError, match="after must"):
        EgoRaster(16, 1.0, after=after)
    r = EgoRaster(16, 1.0, cones="props", height="heightfield", after=["stats"])
    assert r.after == ("stats", "props", "heightfield")


def test_raster_components_of_another_result_kind_are_type_errors():
    from track_gen.course import Course
    from track_gen.tools import HeightFieldBake, Props

    for extra, match in (
        ([HeightFieldBake(64), EgoRaster(16, 1.0, cones="heightfield")], "not a PropsResult"),
        ([Props("cone", 0.1), EgoRaster(16, 1.0, height="props")], "not a HeightFieldResult"),
    ):
        with pytest.raises(TypeError, match=match):
            Course.track(
                presets.track(num_envs=2, device="cpu"),
                checkpoint_spacing=0.6,
                extra=extra,
                seeds=1,
            )
