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
from ..engine.stage import Stage, Workspace
from ..geometry import (
    CrossingScratch,
    catmull_rom_closed,
    centroid,
    resample_first_simple,
)
from ..seeds import stage_rng
from .common import SCALE, SEGMENT_POINTS, emit_knots, knot_loop
from .corners import GRID_FIELDS, draw_grid_corners, grid_cells

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
    min_pts: int,
    max_pts: int,
    cells: int,
    npseg: int,
    num_points: int,
    cross_nch: int,
    knots_only: int,
    # scratch
    corners: wp.array(dtype=wp.vec2f),
    cell_ids: wp.array(dtype=wp.int32),
    corner_keys: wp.array(dtype=wp.float32),
    verts: wp.array(dtype=wp.vec2f),
    dense: wp.array(dtype=wp.vec2f),
    dense_len: wp.array(dtype=wp.float32),
    cross_boxes: wp.array(dtype=wp.vec4f),
    cross_turns: wp.array(dtype=wp.float32),
    # outputs
    line_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    st = stage_rng(eff_seed[e], SALT_HULL)
    m = min_pts + int(wp.randf(st) * float(max_pts - min_pts + 1))
    m = wp.min(m, max_pts)
    cb = e * max_pts
    st = draw_grid_corners(st, m, cells, corners, cell_ids, corner_keys, cb, 1 - knots_only)
    # augmented polygon: corner, displaced midpoint of its outgoing edge, ...
    vb = e * 2 * max_pts
    nv = 2 * m
    st = _vertices(st, m, displacement[e], corners, cb, verts, vb)
    if knots_only != 0:
        # a gate loop: the 2m-vertex polygon (the dense segment lengths are the resampling
        # scratch of a polygon longer than num_points)
        emit_knots(verts, vb, nv, KNOT_ROUNDS, dense_len, e * 2 * max_pts * npseg, line_out,
                   e * num_points, num_points, EXTENT * scale[e])  # fmt: skip
        return
    db = e * 2 * max_pts * npseg
    catmull_rom_closed(verts, vb, nv, npseg, dense, db)
    lb = e * num_points
    sb = e * cross_nch
    # the spline, else the 2m-vertex polygon, else the corner polygon
    resample_first_simple(
        dense, db, nv * npseg, verts, vb, nv, corners, cb, m, dense_len, db,
        cross_boxes, cross_turns, sb, line_out, lb, num_points, EXTENT * scale[e],
    )  # fmt: skip


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


class SamplerHull(Stage):
    """Hull sampler (``generator="hull"``); loops are counter-clockwise."""

    role = "sampler"
    FIELDS = (*GRID_FIELDS, SEGMENT_POINTS, DISPLACEMENT, SCALE)

    def allocate(self, ws: Workspace) -> None:
        v, E = self.values, ws.layout.num_envs
        self.cells = grid_cells(v.min_point_distance)
        self.corners = ws.zeros(E * v.max_corners, wp.vec2f, f"{self.name} corners")
        self.cell_ids = ws.zeros(E * v.max_corners, wp.int32, f"{self.name} cell ids")
        self.corner_keys = ws.zeros(E * v.max_corners, wp.float32, f"{self.name} corner angles")
        self.verts = ws.zeros(E * 2 * v.max_corners, wp.vec2f, f"{self.name} vertices")
        self.cross = CrossingScratch(ws, ws.layout.num_points, self.name)
        n_dense = E * 2 * v.max_corners * v.num_points_per_segment
        self.dense = ws.zeros(n_dense, wp.vec2f, f"{self.name} dense loop")
        self.dense_len = ws.zeros(n_dense, wp.float32, f"{self.name} dense segment lengths")

    def enqueue(self, ws: Workspace, params: dict) -> None:
        v = self.values
        wp.launch(
            _hull_kernel,
            ws.layout.num_envs,
            inputs=[
                ws.eff_seed,
                ws.active,
                params["displacement"],
                params["scale"],
                v.min_corners,
                v.max_corners,
                self.cells,
                v.num_points_per_segment,
                ws.layout.num_points,
                self.cross.nch,
                int(knot_loop(ws)),
                self.corners,
                self.cell_ids,
                self.corner_keys,
                self.verts,
                self.dense,
                self.dense_len,
                self.cross.boxes,
                self.cross.turns,
            ],
            outputs=[ws.line],
            device=ws.layout.device,
        )


__all__ = ["DISPLACEMENT", "SamplerHull"]
