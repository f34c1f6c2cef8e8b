"""Hull sampler: grid corners, angle-sorted, edge midpoints pushed in or out, Catmull-Rom.

Per env (one thread): draw ``m`` corners in distinct cells of the bezier grid
(``cells x cells`` over the unit square, ``cells = int(1 / (2 * min_point_distance))``) with
a salt of its own, sort them counter-clockwise by angle around their centroid, and insert
after each corner the midpoint of its outgoing edge moved along the centroid -> midpoint ray
by ``U(-d, d) * |midpoint - centroid|`` (``d = displacement``: positive makes a lobe,
negative a pinch). A closed centripetal Catmull-Rom spline through the ``2m`` vertices is
sampled densely, arc-resampled to ``num_points`` and scaled so the longest bounding-box side
is ``1.44 * scale``. Loops are counter-clockwise.

Fallbacks, each re-checked on the resampled loop: when the spline crosses itself the
straight ``2m``-vertex polygon is used; when that crosses too, the plain angle-sorted corner
polygon, which is simple because it is star-shaped around the centroid (the relaxation rounds
a polygon later). A displaced midpoint stays on its ray from the centroid, inside its edge's
angular wedge, so for ``d < 1`` the ``2m``-vertex polygon is star-shaped as well and the last
fallback is only a guard (a nearly degenerate corner set).

In a gate pipeline the kernel stops at the ``2m`` vertices: their polygon after one
corner-cutting round (its edge midpoints, ``emit_knots``) is the loop, scaled the same way
(``num_points_per_segment`` shapes the spline only).
"""

from __future__ import annotations

import warp as wp

from ..core.extents import EXTENT
from ..core.tunable import Tunable
from ..engine.stage import Workspace
from ..geometry import centroid
from ..seeds import stage_rng
from .common import SCALE, SEGMENT_POINTS, DenseScratch, emit_knots, emit_spline
from .corners import GRID_FIELDS, GridCorners, GridDraw, SamplerGridBase, draw_grid_corners

wp.set_module_options({"enable_backward": False})

SALT_HULL = wp.constant(wp.uint32(0x40111A03))
#: Corner-cutting rounds of the gate loop (``emit_knots``).
KNOT_ROUNDS = wp.constant(1)


@wp.func
def _vertices(
    st: wp.uint32,
    m: int,
    d: float,
    corners: wp.array(dtype=wp.vec2f),
    cb: int,
    verts: wp.array(dtype=wp.vec2f),
    vb: int,
) -> wp.uint32:
    """The ``2m``-vertex polygon into ``verts[vb ..]``: each corner, then the midpoint of its
    outgoing edge moved along the centroid ray by ``U(-d, d)`` times its distance to the
    centroid. Returns the advanced RNG state."""
    cen = centroid(corners, cb, m)
    for i in range(m):
        c0 = corners[cb + i]
        c1 = corners[cb + (i + 1) % m]
        mid = 0.5 * (c0 + c1)
        r = (2.0 * wp.randf(st) - 1.0) * d
        verts[vb + 2 * i] = c0
        verts[vb + 2 * i + 1] = mid + r * (mid - cen)
    return st


@wp.kernel
def _hull_kernel(
    # inputs
    eff_seed: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    # parameters
    displacement: wp.array(dtype=wp.float32),
    scale: wp.array(dtype=wp.float32),
    # static
    draw: GridDraw,
    npseg: int,
    num_points: int,
    cross_nch: int,
    knots_only: int,
    # scratch
    grid: GridCorners,
    verts: wp.array(dtype=wp.vec2f),
    loop: DenseScratch,
    # outputs
    line_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    st = stage_rng(eff_seed[e], SALT_HULL)
    max_pts = draw.max_pts
    cb = e * max_pts
    m, st = draw_grid_corners(st, draw, grid, cb, 1 - knots_only)
    # augmented polygon: corner, displaced midpoint of its outgoing edge, ...
    vb = e * 2 * max_pts
    nv = 2 * m
    st = _vertices(st, m, displacement[e], grid.corners, cb, verts, vb)
    if knots_only != 0:
        # a gate loop: the 2m-vertex polygon (the dense segment lengths are the resampling
        # scratch of a polygon longer than num_points)
        emit_knots(verts, vb, nv, KNOT_ROUNDS, loop.dense_len, e * 2 * max_pts * npseg,
                   line_out, e * num_points, num_points, EXTENT * scale[e])  # fmt: skip
        return
    # the spline, else the 2m-vertex polygon, else the corner polygon
    emit_spline(verts, vb, nv, npseg, grid.corners, cb, m, loop, cross_nch, e, num_points,
                EXTENT * scale[e], line_out)  # fmt: skip


DISPLACEMENT = Tunable(
    "displacement",
    0.15,
    lo=0.0,
    hi=0.9,
    dynamic=True,
    config="hull_displacement",
    doc="edge midpoints move along the centroid ray by U(-d, d) times their distance to the "
    "centroid (< 1 keeps the polygon star-shaped).",
)


class SamplerHull(SamplerGridBase):
    """Hull sampler (``generator="hull"``); loops are counter-clockwise. Its dense loop has two
    spans per corner (the ``2m``-vertex polygon, ``verts``: vec2f ``[E * 2 * max_corners]``)."""

    FIELDS = (*GRID_FIELDS, SEGMENT_POINTS, DISPLACEMENT, SCALE)
    KERNEL = _hull_kernel
    PARAMETERS = ("displacement", "scale")
    SPANS_PER_CORNER = 2

    def allocate(self, ws: Workspace) -> None:
        super().allocate(ws)
        n = ws.layout.num_envs * 2 * self.values.max_corners
        self.verts = ws.zeros(n, wp.vec2f, f"{self.name} vertices")

    def curve_scratch(self) -> list:
        return [self.verts]


__all__ = ["DISPLACEMENT", "SamplerHull"]
