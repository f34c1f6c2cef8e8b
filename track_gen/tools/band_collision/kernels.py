"""Shared functions of the band collider's kernels (see :mod:`track_gen.tools.band_collision`).

Segment geometry (the even-odd quad test, the answer records), the SDF bake's row span
(:func:`_chord`) and the clearance height check (:func:`_height_kernel`); the plan-view box
and the grid helpers the SDF and height-field bakes share are in :mod:`track_gen.tools.shared`.
The kernels live beside them:
:mod:`~track_gen.tools.band_collision.segments` (``per_env`` segments refresh and query),
:mod:`~track_gen.tools.band_collision.items` (their ``per_item`` layout) and
:mod:`~track_gen.tools.band_collision.sdf` (the SDF bake in both layouts and its query).
"""

from __future__ import annotations

import warp as wp

from ...core.extents import clamp3
from ..shared import Box as _Box
from ..shared import band_beads as _band_beads
from ..shared import make_box as _make_box
from ..shared import slope as _slope

wp.set_module_options({"enable_backward": False})

#: Quads per chunk of the segments acceleration (bounding box per chunk).
CHUNK_QUADS = 8
#: Half width, in cells, of the exactly baked SDF band beyond each border.
SDF_BAND_CELLS = 4

_CHUNK = wp.constant(CHUNK_QUADS)
_BAND = wp.constant(float(SDF_BAND_CELLS))
_NAN = wp.constant(float("nan"))
_BIG = wp.constant(3.0e38)


# ----------------------------------------------------------------------------- shared funcs


@wp.struct
class _Hit:
    d2: float  # squared distance of the pair
    q: wp.vec2f  # border point
    b: wp.vec2f  # box point (or query point)
    border: int  # 0 inner, 1 outer, -1 none
    seg: int  # border segment index i (i -> i+1)


@wp.func
def _inner(s: wp.vec4f) -> wp.vec2f:
    return wp.vec2f(s[0], s[1])


@wp.func
def _outer(s: wp.vec4f) -> wp.vec2f:
    return wp.vec2f(s[2], s[3])


@wp.func
def _corner(bx: _Box, k: int) -> wp.vec2f:
    sx = float(2 * (k % 2) - 1)
    sy = float(2 * (k // 2) - 1)
    return bx.p + (sx * bx.h[0]) * bx.ax + (sy * bx.h[1]) * bx.ay


@wp.func
def _gap2(lo: wp.vec2f, hi: wp.vec2f, bb: wp.vec4f) -> float:
    """Squared distance between the box [lo, hi] and the box (x0, y0, x1, y1) = bb."""
    gx = wp.max(wp.max(bb[0] - hi[0], lo[0] - bb[2]), 0.0)
    gy = wp.max(wp.max(bb[1] - hi[1], lo[1] - bb[3]), 0.0)
    return gx * gx + gy * gy


@wp.func
def _closest_on_seg(p: wp.vec2f, a: wp.vec2f, b: wp.vec2f) -> wp.vec2f:
    ab = b - a
    den = wp.dot(ab, ab)
    t = float(0.0)
    if den > 0.0:
        t = wp.clamp(wp.dot(p - a, ab) / den, 0.0, 1.0)
    return a + t * ab


@wp.func
def _edge_flip(p: wp.vec2f, u: wp.vec2f, v: wp.vec2f) -> int:
    """1 when the ray from p towards +x crosses the edge u -> v (even-odd rule)."""
    above_u = u[1] > p[1]
    above_v = v[1] > p[1]
    if above_u != above_v:
        x = u[0] + (p[1] - u[1]) * _slope(u, v)
        if p[0] < x:
            return 1
    return 0


@wp.func
def _in_quad(p: wp.vec2f, a: wp.vec2f, b: wp.vec2f, c: wp.vec2f, d: wp.vec2f) -> int:
    """Even-odd test of the quad (a, b, c, d) = (inner_i, outer_i, outer_j, inner_j).

    Both radial edges are evaluated inner -> outer, so the edge two neighbouring quads share
    gives them bitwise the same answer: a point on it lies in exactly one of them."""
    s = _edge_flip(p, a, b) + _edge_flip(p, b, c) + _edge_flip(p, d, c) + _edge_flip(p, d, a)
    return s % 2


@wp.func
def _unit_or(v: wp.vec2f, fallback: wp.vec2f) -> wp.vec2f:
    ln = wp.length(v)
    if ln > 1.0e-9:
        return v / ln
    return fallback


@wp.func
def _write_none(
    tid: int,
    oob: int,
    oob_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec2f),
    normal_out: wp.array(dtype=wp.vec2f),
    boundary_out: wp.array(dtype=wp.int32),
):
    nan2 = wp.vec2f(_NAN, _NAN)
    oob_out[tid] = oob
    distance_out[tid] = _NAN
    nearest_out[tid] = nan2
    normal_out[tid] = nan2
    boundary_out[tid] = -1


@wp.func
def _query_box(
    tid: int,
    beads: int,
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    oob_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec2f),
    normal_out: wp.array(dtype=wp.vec2f),
    boundary_out: wp.array(dtype=wp.int32),
) -> _Box:
    """The prologue of a segments query: box ``tid``'s plan-view box; ``ok = 0`` after
    writing its "no answer" (oob 1 on a course of fewer than 3 beads, 0 for a non-finite
    box), so the kernel returns."""
    bx = _make_box(position[tid], orientation[tid], half_extents[tid])
    if beads < 3:
        _write_none(tid, 1, oob_out, distance_out, nearest_out, normal_out, boundary_out)
        bx.ok = 0
    elif bx.ok == 0:
        _write_none(tid, 0, oob_out, distance_out, nearest_out, normal_out, boundary_out)
    return bx


@wp.kernel
def band_beads_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    center: wp.array(dtype=wp.vec3f),
    # static
    use_center: int,
    n_max: int,
    # outputs
    beads_out: wp.array(dtype=wp.int32),
):
    """:func:`_band_beads` of every masked env (one thread per env): the per-env decision
    every refresh reads next (both methods, both layouts)."""
    e = wp.tid()
    if mask[e] == 0:
        return
    beads_out[e] = _band_beads(count, valid, inner, outer, center, use_center, e, n_max)


# ----------------------------------------------------------------------------- grids


@wp.func
def _chord(pa: wp.vec2f, pb: wp.vec2f, k: float, y: float, span: wp.vec2f) -> wp.vec2f:
    """Grow span (xmin, xmax) by where the row y meets the segment pa-pb (slope k)."""
    lo = span[0]
    hi = span[1]
    if (pa[1] - y) * (pb[1] - y) <= 0.0:
        if pb[1] != pa[1]:
            x = pa[0] + (y - pa[1]) * k
            lo = wp.min(lo, x)
            hi = wp.max(hi, x)
        else:
            lo = wp.min(lo, wp.min(pa[0], pb[0]))
            hi = wp.max(hi, wp.max(pa[0], pb[0]))
    return wp.vec2f(lo, hi)


_NAN_F = wp.constant(float("nan"))


_INF_F = wp.constant(float("inf"))


@wp.kernel
def _height_kernel(
    # inputs
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    center: wp.array(dtype=wp.vec3f),
    beads: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    boxes: int,
    clearance: float,
    # outputs
    oob_out: wp.array(dtype=wp.int32),
    height_out: wp.array(dtype=wp.float32),
):
    """Height of each box centre above the road surface (the centerline's z at the centre's
    plan-view projection onto the nearest centerline segment); beyond ``clearance``: oob.
    Distances are compared in float64, so a box far away still finds its segment; the centre
    is clamped to ``COORD_LIMIT`` first, as the query clamps it (the height stays finite)."""
    row = wp.tid()
    e = row // boxes
    n = wp.clamp(beads[e], 0, n_max)
    p = position[row]
    q = orientation[row]
    h2 = half_extents[row]
    height_out[row] = _NAN_F
    active = wp.isfinite(p[0]) and wp.isfinite(p[1]) and wp.isfinite(p[2])
    active = active and wp.isfinite(q[0]) and wp.isfinite(q[1]) and wp.isfinite(q[2])
    active = active and wp.isfinite(q[3]) and wp.isfinite(h2[0]) and wp.isfinite(h2[1])
    if n < 3 or not active:
        return  # an invalid env or an inactive slot: the query's answer stands
    p = clamp3(p)  # as the query clamps it (core/extents.py): the height stays finite
    base = e * n_max
    px = wp.float64(p[0])
    py = wp.float64(p[1])
    best = wp.float64(_INF_F)
    z = float(_NAN_F)
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        a = center[base + i]
        b = center[base + j]
        ax = wp.float64(a[0])
        ay = wp.float64(a[1])
        dx = wp.float64(b[0]) - ax
        dy = wp.float64(b[1]) - ay
        dd = dx * dx + dy * dy
        t = wp.float64(0.0)
        if dd > wp.float64(0.0):
            t = wp.clamp(((px - ax) * dx + (py - ay) * dy) / dd, wp.float64(0.0), wp.float64(1.0))
        qx = ax + t * dx - px
        qy = ay + t * dy - py
        d2 = qx * qx + qy * qy
        if d2 < best:
            best = d2
            z = a[2] + float(t) * (b[2] - a[2])
    h = p[2] - z
    height_out[row] = h
    if wp.abs(h) > clearance:
        oob_out[row] = 1
