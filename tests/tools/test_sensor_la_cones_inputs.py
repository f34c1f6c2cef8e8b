"""Fuzz of every input of tools.Lookahead / LookaheadUtility and tools.ConeDetections /
ConeDetectionsUtility (issue 25 items 2 and 3).

Settings (``num_points``, ``spacing``, ``source``, ``max_cones``, ``fov``, ``max_range``,
``dropout``, ``noise``) take the shared strategies of their Tunable declarations: each value
is accepted exactly when the one error rule says so (else the TypeError / ValueError names
the argument), and an accepted value runs on a hand-made batch with finite answers for the
valid envs. Poses (positions, quaternions, arc positions) take any float32: NaN, inf, huge,
tiny; a usable env with a finite pose answers finite values, any other the documented "no
answer", and nothing crashes or hangs.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import tools
from track_gen.results import Track
from track_gen.tools.cones import DROPOUT, FOV, MAX_CONES, MAX_RANGE, NOISE
from track_gen.tools.lookahead import ALONG, NUM_POINTS, SPACING

from ..support.strategies import examples, expected_error, normalized, pose_rows, values

pytestmark = pytest.mark.fuzz

E = 3  # env 0 a circle, env 1 an ellipse, env 2 invalid
N = 64


@functools.cache
def batch():
    """A hand-made track batch, its localizer and its cones (cpu)."""
    n_max = N + 3
    track = Track.allocate(E, n_max, "cpu")
    a = 2 * np.pi * np.arange(N) / N
    rows = {k: np.full((E, n_max, 3), np.nan, np.float32) for k in ("center", "normal")}
    rows |= {k: np.full((E, n_max, 3), np.nan, np.float32) for k in ("inner", "outer")}
    arclen = np.full((E, n_max), np.nan, np.float32)
    length = np.zeros(E, np.float32)
    for e, (rx, ry) in enumerate(((1.0, 1.0), (1.6, 0.8), (1.0, 1.0))):
        c = np.c_[rx * np.cos(a), ry * np.sin(a), np.zeros(N)]
        d = np.roll(c, -1, 0) - np.roll(c, 1, 0)
        t = d / np.linalg.norm(d, axis=1)[:, None]
        nrm = np.c_[-t[:, 1], t[:, 0], np.zeros(N)]
        rows["center"][e, :N], rows["normal"][e, :N] = c, nrm
        rows["inner"][e, :N], rows["outer"][e, :N] = c + 0.1 * nrm, c - 0.1 * nrm
        chord = np.linalg.norm(np.roll(c, -1, 0) - c, axis=1)
        arclen[e, :N] = np.r_[0.0, np.cumsum(chord)[:-1]]
        length[e] = chord.sum()
    for k, v in rows.items():
        getattr(track, k).assign(v.reshape(-1, 3))
    track.arclen.assign(arclen.reshape(-1))
    track.length.assign(length)
    track.count.assign(np.full(E, N, np.int32))
    track.valid.assign(np.array([1, 1, 0], np.int32))
    loc = tools.LocalizerUtility(track)
    props = tools.PropsUtility(track, "cone", 0.15, max_props=128).props
    seeds = wp.array(np.array([3, 4, 5], np.int32), dtype=wp.int32)
    return track, loc, props, seeds


def arrays(pos, quat):
    return (
        wp.array(np.asarray(pos, np.float32), dtype=wp.vec3f),
        wp.array(np.asarray(quat, np.float32), dtype=wp.quatf),
    )


ON_THE_LOOP = np.array([[1.0, 0.02, 0.0], [0.0, 0.8, 0.01], [1.0, 0.0, 0.0]], np.float32)
HEADING = np.array([[0.0, 0.0, 0.7071, 0.7071]] * E, np.float32)


def finite_rows(points, envs, names) -> bool:
    return all(np.isfinite(points.host(k)[envs]).all() for k in names)


# ------------------------------------------------------------------------------ settings
LA = {"num_points": (NUM_POINTS, 4), "spacing": (SPACING, 0.1), "along": (ALONG, "center")}


@pytest.mark.parametrize("field", sorted(LA))
def test_lookahead_settings(field):
    tunable, _ = LA[field]

    @settings(max_examples=examples(40), deadline=None)
    @given(value=values(tunable))
    def run(value):
        args = {k: v for k, (_, v) in LA.items()} | {field: value}
        error = expected_error(tunable, value)
        if value is None:
            error = TypeError  # num_points and spacing are required, along has a default
        if error is not None:
            with pytest.raises(error, match=field):
                tools.Lookahead(args.pop("num_points"), args.pop("spacing"), **args)
            return
        comp = tools.Lookahead(args.pop("num_points"), args.pop("spacing"), **args)
        assert getattr(comp, field) == normalized(tunable, value)
        if field == "along" or (field == "num_points" and int(value) > 512):
            return
        track, loc, _, _ = batch()
        sampler = tools.LookaheadUtility(track, loc.curvature, comp.num_points, comp.spacing)
        pos, q = arrays(ON_THE_LOOP, HEADING)
        pts = sampler.sample(loc.locate(pos).s, pos, q)
        assert pts.host("valid").tolist() == [1, 1, 0]
        assert finite_rows(pts, [0, 1], ("position", "width_left", "width_right", "arc"))
        assert finite_rows(pts, [0, 1], ("curvature",))
        arc = pts.host("arc")[:2]
        assert ((arc >= 0) & (arc < track.length.numpy()[:2, None])).all()
        assert np.isnan(pts.host("position")[2]).all()

    run()


CONES = {
    "max_cones": (MAX_CONES, 8),
    "fov": (FOV, 2.0),
    "max_range": (MAX_RANGE, 1.0),
    "dropout": (DROPOUT, 0.0),
    "noise": (NOISE, 0.0),
}


@pytest.mark.parametrize("field", sorted(CONES))
def test_cone_settings(field):
    tunable, _ = CONES[field]

    @settings(max_examples=examples(40), deadline=None)
    @given(value=values(tunable))
    def run(value):
        args = {k: v for k, (_, v) in CONES.items()} | {field: value}
        error = expected_error(tunable, value)
        if value is None:
            error = TypeError  # every setting is required or has a non-None default
        if error is not None:
            with pytest.raises(error, match=field):
                tools.ConeDetections(args.pop("max_cones"), **args)
            return
        comp = tools.ConeDetections(args.pop("max_cones"), **args)
        s = dict(comp.settings)
        assert s[field] == normalized(tunable, value)
        track, _, props, seeds = batch()
        det = tools.ConeDetectionsUtility(track, props, seeds, s.pop("max_cones"), **s).detect(
            *arrays(ON_THE_LOOP, HEADING)
        )
        check_detections(det, comp.settings, [True, True, False])

    run()


def check_detections(det, s, usable) -> None:
    """Counts within the capacity, sorted finite distances, within range and the field of
    view without noise (noise moves a seen cone's reported position), the documented
    padding, valid = usable."""
    count, valid = det.count.numpy(), det.valid.numpy()
    pos, dist = det.host("position"), det.host("distance")
    colour, prop = det.host("colour"), det.host("prop")
    M = s["max_cones"]
    assert valid.tolist() == [int(u) for u in usable]
    for e in range(E):
        m = int(count[e])
        assert 0 <= m <= M
        if not usable[e]:
            assert m == 0 and np.isnan(pos[e]).all() and np.isnan(dist[e]).all()
            assert (colour[e] == -1).all() and (prop[e] == -1).all()
            continue
        assert np.isfinite(pos[e]).all() and np.isfinite(dist[e]).all()
        assert (np.diff(dist[e, :m]) >= 0).all()
        if s.get("noise", 0.0) == 0.0:
            assert (dist[e, :m] <= s["max_range"]).all()
            bearing = np.abs(np.arctan2(pos[e, :m, 1], pos[e, :m, 0]))
            assert (bearing <= s["fov"] / 2 + 1e-4).all()
        assert set(colour[e, :m]) <= {0, 1} and (prop[e, :m] >= 0).all()
        assert (pos[e, m:] == 0).all() and (colour[e, m:] == -1).all() and (prop[e, m:] == -1).all()


# ------------------------------------------------------------------------------ poses
def usable_pose(pos, quat) -> np.ndarray:
    return np.isfinite(pos).all(axis=1) & np.isfinite(quat).all(axis=1)


@settings(max_examples=examples(60), deadline=None)
@given(
    pos=pose_rows(E, 3),
    quat=pose_rows(E, 4, quaternion=True),
    s=st.lists(st.floats(width=32), min_size=E, max_size=E),
)
def test_lookahead_any_pose_and_arc(pos, quat, s):
    track, loc, _, _ = batch()
    sampler = _sampler(16, 0.25)
    p, q = arrays(pos, quat)
    arc = wp.array(np.asarray(s, np.float32), dtype=wp.float32)
    pts = sampler.sample(arc, p, q)
    ok = usable_pose(pos, quat) & np.isfinite(np.asarray(s, np.float32)) & [True, True, False]
    assert pts.host("valid").tolist() == ok.astype(int).tolist()
    names = ("position", "width_left", "width_right", "curvature", "arc")
    for e in range(E):
        if ok[e]:
            assert finite_rows(pts, [e], names)
            a = pts.host("arc")[e]
            assert ((a >= 0) & (a < track.length.numpy()[e])).all()
        else:
            assert all(np.isnan(pts.host(k)[e]).all() for k in names)


@functools.cache
def _sampler(num_points, spacing):
    track, loc, _, _ = batch()
    return tools.LookaheadUtility(track, loc.curvature, num_points, spacing)


@functools.cache
def _detector(dropout, noise):
    track, _, props, seeds = batch()
    return tools.ConeDetectionsUtility(
        track, props, seeds, 16, fov=4.0, max_range=2.5, dropout=dropout, noise=noise
    )


@settings(max_examples=examples(60), deadline=None)
@given(
    pos=pose_rows(E, 3),
    quat=pose_rows(E, 4, quaternion=True),
    noisy=st.booleans(),
)
def test_cones_any_pose(pos, quat, noisy):
    det = _detector(0.2, 0.05) if noisy else _detector(0.0, 0.0)
    out = det.detect(*arrays(pos, quat))
    ok = usable_pose(pos, quat) & [True, True, False]
    s = {"max_cones": 16, "fov": 4.0, "max_range": 2.5, "noise": 0.05 if noisy else 0.0}
    check_detections(out, s, ok.tolist())


@settings(max_examples=examples(20), deadline=None)
@given(steps=st.integers(0, 5), mask=st.lists(st.integers(0, 1), min_size=E, max_size=E))
def test_cone_streams_are_a_function_of_the_step_counter(steps, mask):
    """After ``steps`` detections and a reset(mask), a masked env answers the bytes of a
    fresh detector's first step and an unmasked one those of its step ``steps + 1``."""
    track, _, props, seeds = batch()
    kw = {"fov": 4.0, "max_range": 2.5, "dropout": 0.3, "noise": 0.05}
    a = tools.ConeDetectionsUtility(track, props, seeds, 16, **kw)
    b = tools.ConeDetectionsUtility(track, props, seeds, 16, **kw)
    p, q = arrays(ON_THE_LOOP, HEADING)
    names = ("position", "distance", "colour", "prop", "count")
    fresh = []
    for _ in range(steps + 1):
        d = b.detect(p, q)
        fresh.append({k: d.host(k).copy() for k in names})
    for _ in range(steps):
        a.detect(p, q)
    a.reset(wp.array(np.asarray(mask, np.int32), dtype=wp.int32))
    assert a.step.numpy().tolist() == [0 if m else steps for m in mask]
    got = a.detect(p, q)
    for e in range(E):
        want = fresh[0 if mask[e] else steps]
        for k in names:
            assert got.host(k)[e].tobytes() == want[k][e].tobytes(), (k, e)
