"""Shared functions of the band collider's kernels (see :mod:`track_gen.tools.band_collision`).

Box and segment geometry (the plan-view box, the even-odd quad test, the answer records) and
the grid helpers the SDF and height-field bakes share (:func:`border_box`,
:func:`square_grid`, :func:`_chord`, :func:`_row_cross`). The kernels live beside them:
:mod:`~track_gen.tools.band_collision_segments` (``per_env`` segments refresh and query),
:mod:`~track_gen.tools.band_collision_items` (their ``per_item`` layout) and
:mod:`~track_gen.tools.band_collision_sdf` (the SDF bake in both layouts and its query).
"""

from __future__ import annotations

import warp as wp

from ..core.extents import clamp2, clamp_coord, in_range3, scaled_quat

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
class _Box:
    p: wp.vec2f  # centre
    ax: wp.vec2f  # unit local x (yaw)
    ay: wp.vec2f  # unit local y
    h: wp.vec2f  # half extents (>= 0)
    ext: wp.vec2f  # half extents of the world-axis bounding box
    ok: int  # 0: inactive slot (non-finite input)


@wp.struct
class _Hit:
    d2: float  # squared distance of the pair
    q: wp.vec2f  # border point
    b: wp.vec2f  # box point (or query point)
    border: int  # 0 inner, 1 outer, -1 none
    seg: int  # border segment index i (i -> i+1)


@wp.func
def _xy(v: wp.vec3f) -> wp.vec2f:
    return wp.vec2f(v[0], v[1])


@wp.func
def _inner(s: wp.vec4f) -> wp.vec2f:
    return wp.vec2f(s[0], s[1])


@wp.func
def _outer(s: wp.vec4f) -> wp.vec2f:
    return wp.vec2f(s[2], s[3])


@wp.func
def _finite(x: float) -> bool:
    """``wp.isfinite(x)`` inline (``x - x`` is 0 exactly for a finite x, NaN otherwise)."""
    return x - x == 0.0


@wp.func
def _finite2(v: wp.vec2f) -> bool:
    return _finite(v[0]) and _finite(v[1])


@wp.func
def _make_box(pos: wp.vec3f, rot: wp.quatf, he: wp.vec2f) -> _Box:
    """Plan-view box: centre, yaw axes from the quaternion's rotated local x, half extents.

    A non-finite input gives ``ok = 0`` (an inactive slot). Otherwise the centre and the half
    extents are clamped to ``COORD_LIMIT`` and the quaternion is scaled by its largest
    component first when that is huge or tiny (:mod:`~track_gen.core.extents`), so the box is
    finite and its arithmetic cannot overflow; inputs within those ranges are used bit for
    bit."""
    b = _Box()
    r = scaled_quat(rot)
    # rotated local x: (w^2 + x^2 - y^2 - z^2, 2 (x y + w z)); valid for non-unit quaternions
    c = r[3] * r[3] + r[0] * r[0] - r[1] * r[1] - r[2] * r[2]
    s = 2.0 * (r[0] * r[1] + r[3] * r[2])
    ln = wp.sqrt(c * c + s * s)
    ax = wp.vec2f(1.0, 0.0)
    if ln > 1.0e-30:
        ax = wp.vec2f(c / ln, s / ln)
    ha = wp.vec2f(wp.abs(he[0]), wp.abs(he[1]))
    h = wp.vec2f(clamp_coord(ha[0]), clamp_coord(ha[1]))
    p = _xy(pos)
    b.p = clamp2(p)
    b.ax = ax
    b.ay = wp.vec2f(-ax[1], ax[0])
    b.h = h
    b.ext = wp.vec2f(
        wp.abs(ax[0]) * h[0] + wp.abs(ax[1]) * h[1], wp.abs(ax[1]) * h[0] + wp.abs(ax[0]) * h[1]
    )
    b.ok = 0
    if _finite2(p) and _finite(pos[2]) and _finite(c) and _finite(s) and _finite2(ha):
        b.ok = 1
    return b


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
def _slope(u: wp.vec2f, v: wp.vec2f) -> float:
    """dx/dy of the edge u -> v (0 for a horizontal edge)."""
    dy = v[1] - u[1]
    if dy != 0.0:
        return (v[0] - u[0]) / dy
    return 0.0


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
def _next(i: int, n: int) -> int:
    j = i + 1
    if j == n:
        j = 0
    return j


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
def _band_beads(
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    center: wp.array(dtype=wp.vec3f),
    use_center: int,
    e: int,
    n_max: int,
) -> int:
    """The beads of env ``e``'s band: ``count[e]`` clamped to ``[0, n_max]`` for a valid env
    (``valid != 0``) with at least 3 beads whose inner and outer borders (and centerline,
    with ``use_center``) are in range (finite, ``|x| <= COORD_LIMIT``); else 0 (the env
    answers as invalid)."""
    n = wp.clamp(count[e], 0, n_max)
    if valid[e] == 0 or n < 3:
        return 0
    base = e * n_max
    for i in range(n):
        if not (in_range3(inner[base + i]) and in_range3(outer[base + i])):
            return 0
        if use_center != 0:
            if not in_range3(center[base + i]):
                return 0
    return n


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
    """:func:`_band_beads` of every masked env (one thread per env): the per-env decision the
    ``per_item`` refresh kernels read."""
    e = wp.tid()
    if mask[e] == 0:
        return
    beads_out[e] = _band_beads(count, valid, inner, outer, center, use_center, e, n_max)


# ----------------------------------------------------------------------------- grids


@wp.func
def border_box(
    inner: wp.array(dtype=wp.vec3f), outer: wp.array(dtype=wp.vec3f), base: int, n: int
) -> wp.vec4f:
    """Plan-view bounding box ``(x0, y0, x1, y1)`` of beads ``base .. base+n`` of both
    borders."""
    lo = _xy(outer[base])
    hi = lo
    for i in range(n):
        po = _xy(outer[base + i])
        pi = _xy(inner[base + i])
        lo = wp.min(lo, wp.min(po, pi))
        hi = wp.max(hi, wp.max(po, pi))
    return wp.vec4f(lo[0], lo[1], hi[0], hi[1])


@wp.func
def square_grid(bb: wp.vec4f, res: int, padding: float) -> wp.vec3f:
    """``(x0, y0, cell)`` of the ``res x res`` square grid centred on the box ``bb``, its side
    the box's larger extent plus ``padding`` on each side (``padding < 0``: 10% of that
    extent); shared by the SDF bake and the height-field bake, so their grids coincide."""
    ext = wp.max(bb[2] - bb[0], bb[3] - bb[1])
    pad = padding
    if pad < 0.0:
        pad = 0.1 * ext
    side = ext + 2.0 * pad
    cell = wp.max(side / float(res), 1.0e-12)
    half = 0.5 * cell * float(res)
    return wp.vec3f(0.5 * (bb[0] + bb[2]) - half, 0.5 * (bb[1] + bb[3]) - half, cell)


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


@wp.func
def _row_cross(y: float, u: wp.vec2f, v: wp.vec2f, k: float) -> float:
    """x where the row y crosses the edge u -> v (slope k) by :func:`_edge_flip`'s rule,
    or -BIG (no crossing)."""
    above_u = u[1] > y
    above_v = v[1] > y
    if above_u != above_v:
        return u[0] + (y - u[1]) * k
    return -_BIG


@wp.kernel
def fill_grid_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    # static
    res: int,
    negate: int,
    label: wp.int8,
    # outputs
    values_out: wp.array(dtype=wp.float32),
    labels_out: wp.array(dtype=wp.int8),
):
    """Clear row ``r`` of env ``e``'s ``res x res`` grid (one thread per masked env and row):
    every value to the frame's fill ``frame[e][3]`` (negated with ``negate != 0``: the SDF's
    far field), every label to ``label``. The SDF bake (-fill, border -1) and the height-field
    bake (fill, off road 0) both start from it."""
    e, r = wp.tid()
    if mask[e] == 0:
        return
    v = frame[e][3]
    if negate != 0:
        v = -v
    k0 = (e * res + r) * res
    for i in range(res):
        values_out[k0 + i] = v
        labels_out[k0 + i] = label
