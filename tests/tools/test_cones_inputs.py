"""Fuzz of every input of ``tools.ConeDetections`` / ``ConeDetectionsUtility``.

Settings (``max_cones``, ``fov``, ``max_range``, ``dropout``, ``noise``) take the shared
strategies of their Tunable declarations: each value is accepted exactly when the one error
rule says so (else the TypeError / ValueError names the argument), and an accepted value
detects on a hand-made batch with the documented counts, order, range, field of view and
padding. Poses take any float32: NaN, inf, huge, tiny; a usable env with a finite pose answers
finite detections, any other none, and nothing crashes or hangs. The dropout and noise
streams are a function of the step counter (reset included).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import tools
from track_gen.tools.cones import DROPOUT, FOV, MAX_CONES, MAX_RANGE, NOISE

from ..support.sensor_batch import HEADING, ON_THE_LOOP, E, arrays, batch, usable_pose
from ..support.strategies import examples, expected_error, normalized, pose_rows, values

pytestmark = pytest.mark.fuzz


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
