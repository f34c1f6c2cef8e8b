"""Bezier sampler: corners in distinct grid cells, angle-sorted, joined by cubic segments.

Per env (one thread): draw ``m`` corners in distinct cells of a ``cells x cells`` grid over
the unit square, sort them by angle around their centroid (counter-clockwise), give each
corner a tangent blended between its incident edges (``edgy``), join consecutive corners
with cubics whose handles are ``min(rad * chord, handle_clamp_frac * shorter edge)``,
arc-resample to ``num_points`` and scale the bounding box to ``1.44 * scale``. A loop whose
curves cross itself falls back to the straight corner polygon, which is simple because the
corners are angle-sorted around an interior point (the relaxation rounds it later).

In a gate pipeline the kernel stops at the corners: the angle-sorted corner polygon after one
corner-cutting round (its edge midpoints, ``emit_knots``) is the loop, scaled the same way;
``rad``, ``edgy``, ``handle_clamp_frac`` and ``num_points_per_segment`` shape the cubics only.
"""

from __future__ import annotations

import warp as wp

from ..core.extents import EXTENT
from ..core.tunable import Tunable
from ..geometry import PI, resample_first_simple, safe_normalize
from ..seeds import stage_rng
from .common import SCALE, SEGMENT_POINTS, DenseScratch, emit_knots
from .corners import GRID_FIELDS, GridCorners, GridDraw, SamplerGridBase, draw_grid_corners

wp.set_module_options({"enable_backward": False})

SALT_BEZIER = wp.constant(wp.uint32(0xB321E001))
#: Corner-cutting rounds of the gate loop (``emit_knots``).
KNOT_ROUNDS = wp.constant(1)


@wp.func
def _corner_tangent(c: wp.array(dtype=wp.vec2f), cb: int, m: int, i: int, p: float) -> wp.vec2f:
    ip = (i + m - 1) % m
    inx = (i + 1) % m
    u_in = safe_normalize(c[cb + i] - c[cb + ip])
    u_out = safe_normalize(c[cb + inx] - c[cb + i])
    return safe_normalize(p * u_out + (1.0 - p) * u_in)


@wp.func
def _shorter_edge(c: wp.array(dtype=wp.vec2f), cb: int, m: int, i: int) -> float:
    ip = (i + m - 1) % m
    inx = (i + 1) % m
    return wp.min(wp.length(c[cb + i] - c[cb + ip]), wp.length(c[cb + inx] - c[cb + i]))


@wp.kernel
def _bezier_kernel(
    # inputs
    eff_seed: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    # parameters
    rad: wp.array(dtype=wp.float32),
    edgy: wp.array(dtype=wp.float32),
    clamp_frac: wp.array(dtype=wp.float32),
    scale: wp.array(dtype=wp.float32),
    # static
    draw: GridDraw,
    npseg: int,
    num_points: int,
    cross_nch: int,
    knots_only: int,
    # scratch
    grid: GridCorners,
    loop: DenseScratch,
    # outputs
    line_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    st = stage_rng(eff_seed[e], SALT_BEZIER)
    max_pts = draw.max_pts
    cb = e * max_pts
    m, st = draw_grid_corners(st, draw, grid, cb, 1 - knots_only)
    corners = grid.corners
    if knots_only != 0:
        # a gate loop: the corner polygon (the spent sort keys are the resampling scratch of
        # a corner loop longer than num_points)
        emit_knots(corners, cb, m, KNOT_ROUNDS, grid.keys, cb, line_out, e * num_points,
                   num_points, EXTENT * scale[e])  # fmt: skip
        return
    # cubic segments into the dense buffer (endpoint of each segment excluded)
    pblend = wp.atan(edgy[e]) / PI + 0.5
    r = rad[e]
    cf = clamp_frac[e]
    db = e * max_pts * npseg
    for i in range(m):
        i1 = (i + 1) % m
        c0 = corners[cb + i]
        c1 = corners[cb + i1]
        chord = wp.length(c1 - c0)
        h0 = wp.min(r * chord, cf * _shorter_edge(corners, cb, m, i))
        h1 = wp.min(r * chord, cf * _shorter_edge(corners, cb, m, i1))
        p1 = c0 + h0 * _corner_tangent(corners, cb, m, i, pblend)
        p2 = c1 - h1 * _corner_tangent(corners, cb, m, i1, pblend)
        for s in range(npseg):
            u = float(s) / float(npseg)
            v = 1.0 - u
            loop.dense[db + i * npseg + s] = (
                (v * v * v) * c0
                + (3.0 * v * v * u) * p1
                + (3.0 * v * u * u) * p2
                + (u * u * u) * c1
            )
    lb = e * num_points
    # the cubics, else the corner polygon (simple: angle-sorted around its centroid)
    resample_first_simple(
        loop.dense, db, m * npseg, corners, cb, 0, corners, cb, m, loop.dense_len, db,
        loop.cross_boxes, loop.cross_turns, e * cross_nch, line_out, lb, num_points,
        EXTENT * scale[e],
    )  # fmt: skip


RAD = Tunable(
    "rad",
    0.4,
    lo=0.0,
    hi=2.0,
    dynamic=True,
    unit="chord",
    doc="handle length as a fraction of the chord (curviness). The handle is min(rad * "
    "chord, handle_clamp_frac * shorter incident edge) and that edge is at most the chord, so "
    "values above handle_clamp_frac change nothing: raise both for rounder corners.",
)
EDGY = Tunable(
    "edgy",
    0.0,
    lo=-1.0e6,
    hi=1.0e6,
    dynamic=True,
    doc="corner tangent blend p = atan(edgy) / pi + 0.5: 0 is the bisector, large values follow "
    "the outgoing edge.",
)
HANDLE_CLAMP_FRAC = Tunable(
    "handle_clamp_frac",
    0.4,
    lo=0.0,
    hi=1.0,
    dynamic=True,
    unit="edge",
    doc="handles are capped at this fraction of the shorter incident edge.",
)


class SamplerBezier(SamplerGridBase):
    """Bezier corner-loop sampler (``generator="bezier"``); loops are counter-clockwise."""

    FIELDS = (*GRID_FIELDS, SEGMENT_POINTS, RAD, EDGY, HANDLE_CLAMP_FRAC, SCALE)
    KERNEL = _bezier_kernel
    PARAMETERS = ("rad", "edgy", "handle_clamp_frac", "scale")


__all__ = ["EDGY", "HANDLE_CLAMP_FRAC", "RAD", "SamplerBezier"]
