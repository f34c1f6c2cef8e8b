"""Fuzz of every input of ``tools.Lookahead`` / ``LookaheadUtility``.

Settings (``num_points``, ``spacing``, ``along``) take the shared strategies of their Tunable
declarations: each value is accepted exactly when the one error rule says so (else the
TypeError / ValueError names the argument), and an accepted value runs on a hand-made batch
with finite answers for the valid envs. Poses and arc positions take any float32: NaN, inf,
huge, tiny; a usable env with a finite pose answers finite values, any other the documented
"no answer", and nothing crashes or hangs.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import tools
from track_gen.tools.lookahead import ALONG, NUM_POINTS, SPACING

from ..support.sensor_batch import HEADING, ON_THE_LOOP, E, arrays, batch, usable_pose
from ..support.strategies import examples, expected_error, normalized, pose_rows, values

pytestmark = pytest.mark.fuzz


def finite_rows(points, envs, names) -> bool:
    return all(np.isfinite(points.host(k)[envs]).all() for k in names)


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
