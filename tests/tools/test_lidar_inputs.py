"""Fuzz cases of the lidar's public inputs: every option of ``Lidar`` / ``LidarUtility``
(checked before anything is built, TypeError vs ValueError), and scans of any beam count,
field of view, range, noise and grid size from any float32 pose (NaN, inf, huge, tiny
quaternions) on a crafted track with an invalid env and on gate courses: answers stay in
``[0, max_range]`` for a usable env and finite pose, NaN with hit 0 otherwise, and equal the
float64 oracle when there is no noise."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import GateGenerator
from track_gen.pipeline import presets
from track_gen.tools import HeightFieldUtility, Lidar, LidarUtility, PropsUtility
from track_gen.tools.lidar import (
    CELL_ENTRIES,
    DROPOUT,
    FOV,
    FRAME_DEPTH,
    FRAME_THICKNESS,
    GATE_MODEL,
    GRID_CELLS,
    MAX_RANGE,
    NOISE_STD,
    NUM_BEAMS,
    POST_RADIUS,
)

from ..support.strategies import examples, expected_error, other_objects, values
from .test_lidar import assert_matches, crafted, oracle

FIELDS = (
    NUM_BEAMS,
    FOV,
    MAX_RANGE,
    GATE_MODEL,
    POST_RADIUS,
    FRAME_THICKNESS,
    FRAME_DEPTH,
    NOISE_STD,
    DROPOUT,
    GRID_CELLS,
    CELL_ENTRIES,
)


@pytest.mark.fuzz
@given(data=st.data())
def test_every_option_is_checked_before_construction(data):
    t = data.draw(st.sampled_from(FIELDS))
    value = data.draw(values(t))
    err = expected_error(t, value)
    args = {"num_beams": 8, t.name: value}
    if err is None:
        lidar = Lidar(args.pop("num_beams"), **args)
        assert lidar.utility is None  # nothing built before a course attaches it
        scanner = LidarUtility(crafted("cpu").result, **{t.name: value})
        beams = int(value) if t is NUM_BEAMS else NUM_BEAMS.default
        assert scanner.scan_result.num_beams == beams
    else:
        with pytest.raises(err, match=t.name):
            Lidar(args.pop("num_beams"), **args)
        with pytest.raises(err, match=t.name):
            LidarUtility(crafted("cpu").result, **{t.name: value})


@functools.cache
def gates():
    """One gate batch (three envs), shared by both gate models."""
    return GateGenerator(presets.gates(num_envs=3, device="cpu", gate_width=0.2), seeds=2).result


_F32_MAX = float(np.finfo(np.float32).max)
COORD = st.one_of(
    st.floats(-3.0, 3.0, width=32),
    st.sampled_from([np.nan, np.inf, -np.inf, 1e19, -1e30, _F32_MAX, 1e-30]),
    st.floats(width=32, allow_nan=True, allow_infinity=True),
)
QUAT = st.one_of(
    st.floats(-1.0, 1.0, width=32),
    st.sampled_from([0.0, np.nan, np.inf, 1e-30, 1e30, _F32_MAX]),
)


def _poses(data, E: int):
    pos = np.array(data.draw(st.lists(COORD, min_size=3 * E, max_size=3 * E)), np.float32)
    quat = np.array(data.draw(st.lists(QUAT, min_size=4 * E, max_size=4 * E)), np.float32)
    return pos.reshape(E, 3), quat.reshape(E, 4)


def _check(scanner, source, pos, quat, noisy: bool):
    dev = scanner.device
    p = wp.array(pos, dtype=wp.vec3f, device=dev)
    q = wp.array(quat, dtype=wp.quatf, device=dev)
    scan = scanner.scan(p, q)
    E, B = scanner.num_envs, scanner.num_beams
    d = scan.distance.numpy().reshape(E, B)
    h = scan.hit.numpy().reshape(E, B)
    rng = np.float32(scanner.max_range)
    usable = scanner.status.numpy() != 0
    finite = np.isfinite(pos).all(1) & np.isfinite(quat).all(1)
    for e in range(E):
        if usable[e] and finite[e]:
            assert np.isfinite(d[e]).all() and (d[e] >= 0).all() and (d[e] <= rng).all()
            assert set(np.unique(h[e])) <= {0, 1}
            assert (d[e][h[e] == 0] == rng).all()
        else:
            assert np.isnan(d[e]).all() and (h[e] == 0).all()
    moderate = (np.abs(pos) <= 10).all() and (np.abs(quat[finite]) >= 1e-3).any()
    if not noisy and moderate:
        assert_matches(scan, oracle(scanner, source, None, pos, quat), scanner.max_range)


OPTIONS = st.fixed_dictionaries(
    {
        "num_beams": st.integers(1, 300),
        "fov": st.floats(1e-3, 2 * np.pi),
        "max_range": st.one_of(st.floats(1e-3, 4.0), st.sampled_from([1e6, 1e-6])),
        "noise_std": st.sampled_from([0.0, 0.0, 0.01, 1.0]),
        "dropout": st.sampled_from([0.0, 0.0, 0.5, 1.0]),
        "grid_cells": st.integers(1, 96),
        "cell_entries": st.integers(1, 6),
    }
)


@pytest.mark.fuzz
@given(data=st.data(), options=OPTIONS)
def test_track_scans_for_any_pose_and_options(data, options):
    gen = crafted("cpu")  # a circle, an ellipse and an invalid env
    scanner = LidarUtility(gen.result, **options)
    pos, quat = _poses(data, 3)
    noisy = options["noise_std"] > 0 or options["dropout"] > 0
    _check(scanner, gen.result, pos, quat, noisy)


@pytest.mark.fuzz
@given(data=st.data(), options=OPTIONS, model=st.sampled_from(["posts", "frames"]))
def test_gate_scans_for_any_pose_and_options(data, options, model):
    options = {k: v for k, v in options.items() if k not in ("grid_cells", "cell_entries")}
    source = gates()
    scanner = LidarUtility(source, gate_model=model, post_radius=0.03, **options)
    pos, quat = _poses(data, 3)
    noisy = options["noise_std"] > 0 or options["dropout"] > 0
    _check(scanner, source, pos, quat, noisy)


@pytest.mark.fuzz
@given(props=st.one_of(st.none(), st.text(max_size=8), st.integers(), st.floats(), st.booleans()))
def test_props_option_is_a_name_auto_or_none(props):
    if props is None or (isinstance(props, str) and props):
        lidar = Lidar(8, props=props)
        assert lidar.props_name == props
        if props not in (None, "auto"):
            assert props in lidar.after  # it runs after the props component it names
    else:
        with pytest.raises(TypeError, match="props"):
            Lidar(8, props=props)


@functools.cache
def _track_and_props():
    """A crafted track, its cones and its height field (the objects of other kinds a props
    argument may be given by mistake)."""
    track = crafted("cpu").result
    placer = PropsUtility(track, "cone", 0.1, max_props=256)
    return track, placer, HeightFieldUtility(track, resolution=16)


@pytest.mark.fuzz
@settings(max_examples=examples(40))
@given(props=st.one_of(st.sampled_from(other_objects(3)), st.sampled_from(range(4))))
def test_scanner_props_of_another_kind_is_a_type_error(props):
    """``LidarUtility(track, props=3)`` was ``AttributeError: 'int' object has no attribute
    'position'``: any object but a PropsResult or None is a TypeError naming props and what it
    takes (the track, the placer instead of its ``.props``, a height field included)."""
    track, placer, baker = _track_and_props()
    if isinstance(props, int) and not isinstance(props, bool) and props in range(4):
        props = (3, track, placer, baker.field)[props]
    with pytest.raises(
        TypeError, match=r"LidarUtility props must be a PropsResult .* or None, got"
    ):
        LidarUtility(track, props=props)
    assert LidarUtility(track, 8, props=placer.props).props is placer.props  # the right kind
