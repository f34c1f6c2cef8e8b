"""Fuzz of every new input of the next-gates sensor and the ego raster.

Settings (``num_gates``, ``reveal_range``, ``nominal_noise``, ``resolution``, ``extent``) take
edge, in-range and out-of-range values of every kind: each is refused with the error its
declaration implies (plus the documented rules: a nominal noise needs a reveal range; a cell
must be at least 1e-30 track units) before anything is built. Poses take any float32 (NaN,
inf, huge, subnormal), progress targets any int32: answers of a valid env with a finite
position and a finite, nonzero orientation are finite, every other env answers the documented
"no answer", and nothing crashes. Raster resolutions and extents across their ranges match the
float64 oracle of ``test_raster.py``.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import GateGenerator, TrackGenerator
from track_gen.pipeline import presets
from track_gen.tools import (
    EgoRaster,
    EgoRasterUtility,
    HeightFieldUtility,
    NextGates,
    NextGatesUtility,
    PropsUtility,
    RasterCell,
)
from track_gen.tools.next_gates import NOMINAL_NOISE, NUM_GATES, REVEAL_RANGE
from track_gen.tools.raster import EXTENT, RESOLUTION

from ..support.strategies import (
    agent_rows,
    examples,
    expected_error,
    other_objects,
    values,
    wrong_arrays,
)
from ..support.strategies import in_range as in_range_of
from .test_raster import arrays, check_image, poses_on_track

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 3
UNKNOWN = int(RasterCell.UNKNOWN)


def _first_error(*errors):
    return next((e for e in errors if e is not None), None)


# ------------------------------------------------------------------------------ settings
@settings(max_examples=examples(60))
@given(values(NUM_GATES), st.one_of(st.none(), values(REVEAL_RANGE)), values(NOMINAL_NOISE))
def test_next_gates_settings(num_gates, reveal_range, nominal_noise):
    want = _first_error(
        expected_error(NUM_GATES, num_gates),
        expected_error(REVEAL_RANGE, reveal_range),
        expected_error(NOMINAL_NOISE, nominal_noise),
    )
    if want is None and float(nominal_noise) > 0.0 and reveal_range is None:
        want = ValueError
    if want is None:
        comp = NextGates(num_gates, reveal_range=reveal_range, nominal_noise=nominal_noise)
        assert comp.num_gates == int(num_gates)
        return
    with pytest.raises(want):
        NextGates(num_gates, reveal_range=reveal_range, nominal_noise=nominal_noise)


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


# ------------------------------------------------------------------------------ next gates
@functools.lru_cache(maxsize=1)
def _gates():
    gen = GateGenerator(presets.gates(num_envs=E, device="cpu", gate_width=0.1), seeds=4)
    gen.generate()
    return gen


@settings(max_examples=examples(40))
@given(
    agent_rows(E, 3),
    agent_rows(E, 4),
    st.lists(st.integers(-(2**31), 2**31 - 1), min_size=E, max_size=E),
    st.integers(1, 40),
    in_range_of(REVEAL_RANGE),
    in_range_of(NOMINAL_NOISE),
)
def test_next_gates_any_pose_target_and_range(pos, quat, target, k, reveal, noise):
    gen = _gates()
    nxt = wp.array(np.asarray(target, np.int32), dtype=wp.int32, device="cpu")
    sensor = NextGatesUtility(
        gen.result,
        nxt,
        k,
        seeds=gen.seeds.seeds,
        reveal_range=float(reveal),
        nominal_noise=float(noise),
    )
    count = gen.result.count.numpy()
    nominal = sensor.nominal_position.numpy().reshape(E, -1, 3)
    for e in range(E):
        assert np.isfinite(nominal[e, : count[e]]).all()
    poses = sensor.sense(
        wp.array(pos, dtype=wp.vec3f, device="cpu"), wp.array(quat, dtype=wp.quatf, device="cpu")
    )
    idx, rel, rot = poses.host("index"), poses.host("position"), poses.host("orientation")
    for e in range(E):
        live = np.isfinite(pos[e]).all() and np.isfinite(quat[e]).all() and np.any(quat[e])
        n = min(k, int(count[e]))
        if not live:
            assert (idx[e] == -1).all() and np.isnan(rel[e]).all() and np.isnan(rot[e]).all()
            continue
        assert (idx[e, :n] >= 0).all() and (idx[e, :n] < count[e]).all()
        assert np.isfinite(rel[e, :n]).all() and np.isfinite(rot[e, :n]).all()
        assert (idx[e, n:] == -1).all() and np.isnan(rel[e, n:]).all()
        np.testing.assert_allclose(np.linalg.norm(rot[e, :n], axis=1), 1.0, atol=1e-5)


def test_next_gates_wrong_arrays_refused_before_launch():
    gen = _gates()
    nxt = wp.zeros(E, dtype=wp.int32, device="cpu")
    sensor = NextGatesUtility(gen.result, nxt, 2)
    good_p = wp.zeros(E, dtype=wp.vec3f, device="cpu")
    good_q = wp.zeros(E, dtype=wp.quatf, device="cpu")
    before = [a.numpy().tobytes() for a in sensor.poses.arrays()]
    for _label, error, make in wrong_arrays(E, wp.vec3f, "cpu"):
        with pytest.raises(error, match="position"):
            sensor.sense(make(), good_q)
    for _label, error, make in wrong_arrays(E, wp.quatf, "cpu"):
        with pytest.raises(error, match="orientation"):
            sensor.sense(good_p, make())
    for _label, error, make in wrong_arrays(E, wp.int32, "cpu"):
        with pytest.raises(error, match="next_index"):
            NextGatesUtility(gen.result, make(), 2)
    assert [a.numpy().tobytes() for a in sensor.poses.arrays()] == before


# ------------------------------------------------------------------------------ raster
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


# ------------------------------------------------------------------------------ bad course data
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


@settings(max_examples=examples(25))
@given(
    st.lists(st.sampled_from([-5, 0, 1, 2, 40, 2**31 - 1]), min_size=E, max_size=E),
    st.lists(st.tuples(st.integers(0, E - 1), st.sampled_from(_POISON)), max_size=4),
    st.integers(0, 2**31 - 1),
)
def test_next_gates_on_hand_made_bad_gates(counts, poison, seed):
    """Gate counts beyond the capacity and NaN / huge gate coordinates: no crash; a slot
    answers either a finite pose or NaN with index -1."""
    gen = _gates()
    seq = gen.result.clone()
    rng = np.random.default_rng(seed)
    seq.count.assign(np.asarray(counts, np.int32))
    M = seq.max_gates
    gp = seq.position.numpy().reshape(E, M, 3)
    for e, value in poison:
        gp[e, rng.integers(M), rng.integers(3)] = value
    seq.position.assign(gp.reshape(-1, 3))
    nxt = wp.array(rng.integers(-3, 50, E).astype(np.int32), dtype=wp.int32, device="cpu")
    sensor = NextGatesUtility(
        seq, nxt, 4, seeds=gen.seeds.seeds, reveal_range=0.3, nominal_noise=0.1
    )
    pos = wp.array(rng.normal(0, 0.5, (E, 3)).astype(np.float32), dtype=wp.vec3f, device="cpu")
    quat = wp.array(np.tile([0, 0, 0, 1], (E, 1)).astype(np.float32), dtype=wp.quatf)
    poses = sensor.sense(pos, quat)
    idx, rel = poses.host("index"), poses.host("position")
    live = idx >= 0
    assert np.isfinite(rel[live]).all() and np.isnan(rel[~live]).all()
    assert (idx < np.clip(seq.count.numpy(), 0, M)[:, None]).all()


# ------------------------------------------------------------------------------ object arguments
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


@settings(max_examples=examples(30))
@given(seeds=st.sampled_from(_wrong_objects()))
def test_next_gates_seeds_are_checked_also_without_reveal_range(seeds):
    """A seeds of the wrong kind was accepted and ignored without ``reveal_range``."""
    gen = _gates()
    nxt = wp.zeros(E, dtype=wp.int32, device="cpu")
    with pytest.raises(TypeError, match="seeds must be"):
        NextGatesUtility(gen.result, nxt, 2, seeds=seeds)
    assert NextGatesUtility(gen.result, nxt, 2, seeds=gen.seeds.seeds).seeds is gen.seeds.seeds


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
