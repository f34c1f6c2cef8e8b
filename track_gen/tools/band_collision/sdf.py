"""SDF bake kernels of the band collider (see :mod:`track_gen.tools.band_collision`).

The narrow-band bake in two thread layouts, after ``kernels.band_beads_kernel`` and the
per-env frame (:func:`_sdf_frame_kernel`); the query is in
:mod:`~track_gen.tools.band_collision.sdf_query`:

* ``per_env``: ``tools.shared.fill_grid_kernel`` (one thread per grid row, shared
  with the height-field bake) clears the grid, then :func:`_sdf_raster_kernel` (one thread
  per env) rasterizes the env's extended quads in bead
  order, merging each texel they reach.
* ``per_item``: :func:`_sdf_quad_rect_kernel` (one thread per chunk of
  ``CHUNK_QUADS`` quads) stores the texel rectangle each quad (and chunk) rasterizes, then
  :func:`_sdf_texel_kernel` (one thread per texel) visits, in bead order, the quads whose
  rectangle holds the texel and merges them in registers.

Both layouts evaluate a (quad, texel) pair with the same functions (:func:`_quad_raster`,
:func:`_raster_row`, :func:`_texel_merge`) in the same quad order, so their grids are bitwise
identical; the per-env frame (:func:`_sdf_frame_kernel`) is shared.
"""

from __future__ import annotations

import warp as wp

from ..shared import border_box, square_grid
from ..shared import crosses_right_of as _crosses_right_of
from ..shared import next_bead as _next
from ..shared import quad_row_crosses as _quad_row_crosses
from ..shared import slope as _slope
from ..shared import xy as _xy
from .kernels import _BAND, _BIG, _CHUNK, _NAN, _chord

# fuse_fp off: no multiply-add contraction, so the per_env and per_item kernels round alike
# on every device (CUDA would otherwise contract them differently).
wp.set_module_options({"enable_backward": False, "fuse_fp": False})

#: Texel rectangle of nothing: (col0, row0, col1, row1) with col0 > col1.
_EMPTY_RECT = wp.constant(wp.vec4i(1 << 30, 1 << 30, -1, -1))


# ----------------------------------------------------------------------------- bake: shared


@wp.kernel
def _sdf_frame_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    beads: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    # static
    n_max: int,
    res: int,
    padding: float,
    # outputs
    frame_out: wp.array(dtype=wp.vec4f),
    aabb_out: wp.array(dtype=wp.vec4f),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = beads[e]
    if n == 0:
        nan4 = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
        frame_out[e] = nan4
        aabb_out[e] = nan4
        return
    bb = border_box(inner, outer, e * n_max, n)
    g = square_grid(bb, res, padding)
    frame_out[e] = wp.vec4f(g[0], g[1], g[2], _BAND * g[2])
    aabb_out[e] = bb


@wp.struct
class _Quad:
    """One border quad ``(a, b, c, d) = (inner_i, outer_i, outer_j, inner_j)`` set up for
    rasterizing: its hull extended by the band ``(p0, p1, p2, p3)``, the border segments
    ``a -> d`` and ``b -> c`` with their inverse squared lengths, the edge slopes and the grid
    rows ``r0 .. r1`` the hull may reach."""

    a: wp.vec2f
    b: wp.vec2f
    c: wp.vec2f
    d: wp.vec2f
    p0: wp.vec2f
    p1: wp.vec2f
    p2: wp.vec2f
    p3: wp.vec2f
    ad: wp.vec2f
    bc: wp.vec2f
    inv_ad: float
    inv_bc: float
    k01: float
    k12: float
    k23: float
    k30: float
    k02: float
    k13: float
    kab: float
    kbc: float
    kdc: float
    kda: float
    r0: int
    r1: int


@wp.struct
class _Row:
    """Where grid row ``yc`` meets a quad: texel columns ``c0 .. c1`` of the extended hull
    (empty when ``c0 > c1``) and the x of its crossings with the quad's four edges
    (``-BIG``: none), as :func:`_edge_flip` sees them."""

    c0: int
    c1: int
    x: wp.vec4f  # shared.quad_row_crosses


@wp.func
def _quad_raster(
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    base: int,
    n: int,
    i: int,
    fr: wp.vec4f,
    res: int,
) -> _Quad:
    """Quad ``i`` of the env whose beads start at ``base``, on the grid ``fr``."""
    y0 = fr[1]
    m = fr[3]
    inv = 1.0 / fr[2]
    eps = 1.0e-3
    j = _next(i, n)
    q = _Quad()
    a = _xy(inner[base + i])
    b = _xy(outer[base + i])
    c = _xy(outer[base + j])
    d = _xy(inner[base + j])
    ui = (b - a) / wp.max(wp.length(b - a), 1.0e-30)
    uj = (c - d) / wp.max(wp.length(c - d), 1.0e-30)
    # the quad extended across the road by m beyond both borders; its convex hull
    # (all six vertex pairs) holds the quad itself
    p0 = a - m * ui
    p1 = b + m * ui
    p2 = c + m * uj
    p3 = d - m * uj
    ylo = wp.min(wp.min(p0[1], p1[1]), wp.min(p2[1], p3[1]))
    yhi = wp.max(wp.max(p0[1], p1[1]), wp.max(p2[1], p3[1]))
    q.r0 = wp.max(int(wp.ceil((ylo - y0) * inv - 0.5 - eps)), 0)
    q.r1 = wp.min(int(wp.floor((yhi - y0) * inv - 0.5 + eps)), res - 1)
    ad = d - a
    bc = c - b
    q.inv_ad = float(0.0)
    if wp.dot(ad, ad) > 0.0:
        q.inv_ad = 1.0 / wp.dot(ad, ad)
    q.inv_bc = float(0.0)
    if wp.dot(bc, bc) > 0.0:
        q.inv_bc = 1.0 / wp.dot(bc, bc)
    # slopes: the hull's six vertex pairs, the quad's four edges (as _in_quad sees them)
    q.k01 = _slope(p0, p1)
    q.k12 = _slope(p1, p2)
    q.k23 = _slope(p2, p3)
    q.k30 = _slope(p3, p0)
    q.k02 = _slope(p0, p2)
    q.k13 = _slope(p1, p3)
    q.kab = _slope(a, b)
    q.kbc = _slope(b, c)
    q.kdc = _slope(d, c)
    q.kda = _slope(d, a)
    q.a = a
    q.b = b
    q.c = c
    q.d = d
    q.p0 = p0
    q.p1 = p1
    q.p2 = p2
    q.p3 = p3
    q.ad = ad
    q.bc = bc
    return q


@wp.func
def _raster_row(q: _Quad, r: int, fr: wp.vec4f, res: int) -> _Row:
    """The texel columns quad ``q`` rasterizes in row ``r`` and its edge crossings there."""
    x0 = fr[0]
    y0 = fr[1]
    cell = fr[2]
    inv = 1.0 / cell
    eps = 1.0e-3
    yc = y0 + (float(r) + 0.5) * cell
    span = wp.vec2f(_BIG, -_BIG)
    span = _chord(q.p0, q.p1, q.k01, yc, span)
    span = _chord(q.p1, q.p2, q.k12, yc, span)
    span = _chord(q.p2, q.p3, q.k23, yc, span)
    span = _chord(q.p3, q.p0, q.k30, yc, span)
    span = _chord(q.p0, q.p2, q.k02, yc, span)
    span = _chord(q.p1, q.p3, q.k13, yc, span)
    w = _Row()
    w.c0 = 1
    w.c1 = 0
    if span[0] <= span[1]:
        w.c0 = wp.max(int(wp.ceil((span[0] - x0) * inv - 0.5 - eps)), 0)
        w.c1 = wp.min(int(wp.floor((span[1] - x0) * inv - 0.5 + eps)), res - 1)
    # where the row meets the quad's edges, as _in_quad sees them (bitwise)
    w.x = _quad_row_crosses(yc, q.a, q.b, q.c, q.d, q.kab, q.kbc, q.kdc, q.kda)
    return w


@wp.func
def _texel_merge(q: _Quad, w: _Row, r: int, col: int, fr: wp.vec4f, texel: wp.vec2f) -> wp.vec2f:
    """Texel ``(col, r)`` reached by quad ``q`` (row crossings ``w``), holding ``texel`` =
    ``(phi, border)`` (border -1: no quad reached it yet): the distance to the quad's nearer
    border segment replaces ``|phi|`` when smaller (its border with it), and the texel is
    inside when it was or the quad holds its centre (even-odd). Returns the new pair."""
    cell = fr[2]
    yc = fr[1] + (float(r) + 0.5) * cell
    px = fr[0] + (float(col) + 0.5) * cell
    ra = wp.vec2f(px - q.a[0], yc - q.a[1])
    ri = ra - wp.clamp(wp.dot(ra, q.ad) * q.inv_ad, 0.0, 1.0) * q.ad
    rb = wp.vec2f(px - q.b[0], yc - q.b[1])
    ro = rb - wp.clamp(wp.dot(rb, q.bc) * q.inv_bc, 0.0, 1.0) * q.bc
    di = wp.dot(ri, ri)
    do = wp.dot(ro, ro)
    dd = wp.sqrt(wp.min(di, do))
    bd = int(0)
    if do < di:
        bd = 1
    ins = _crosses_right_of(px, w.x) % 2
    cur = texel[0]
    cid = int(texel[1])
    aa = float(_BIG)
    if cid >= 0:
        aa = wp.abs(cur)
        if cur > 0.0:
            ins = 1
    if dd < aa:
        aa = dd
        cid = bd
    if ins == 0:
        aa = -aa
    return wp.vec2f(aa, float(cid))


# ----------------------------------------------------------------------------- bake: per_env


@wp.kernel
def _sdf_raster_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    beads: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    # static
    n_max: int,
    res: int,
    # outputs (read and merged: the fill's values first)
    sdf_inout: wp.array(dtype=wp.float32),
    border_inout: wp.array(dtype=wp.int8),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = beads[e]
    if n < 3:
        return
    fr = frame[e]
    base = e * n_max
    gb = e * res * res
    for i in range(n):
        q = _quad_raster(inner, outer, base, n, i, fr, res)
        for r in range(q.r0, q.r1 + 1):
            w = _raster_row(q, r, fr, res)
            row = gb + r * res
            for col in range(w.c0, w.c1 + 1):
                k = row + col
                t = wp.vec2f(sdf_inout[k], float(border_inout[k]))
                t = _texel_merge(q, w, r, col, fr, t)
                sdf_inout[k] = t[0]
                border_inout[k] = wp.int8(int(t[1]))


# ----------------------------------------------------------------------------- bake: per_item


@wp.kernel
def _sdf_quad_rect_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    beads: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    # static
    n_max: int,
    nch: int,
    res: int,
    # outputs
    quad_rect_out: wp.array(dtype=wp.vec4i),
    chunk_rect_out: wp.array(dtype=wp.vec4i),
):
    """Per (env, chunk): the texel rectangle ``(col0, row0, col1, row1)`` each of the chunk's
    quads rasterizes (exactly the rows and columns :func:`_sdf_raster_kernel` visits) and
    their union for the chunk; empty past the env's quads."""
    e, ch = wp.tid()
    if mask[e] == 0:
        return
    n = beads[e]
    if n < 3:
        n = 0
    fr = frame[e]
    base = e * n_max
    a0 = ch * _CHUNK
    box = _EMPTY_RECT
    for i in range(a0, wp.min(a0 + _CHUNK, n_max)):
        rect = _EMPTY_RECT
        if i < n:
            q = _quad_raster(inner, outer, base, n, i, fr, res)
            for r in range(q.r0, q.r1 + 1):
                w = _raster_row(q, r, fr, res)
                if w.c0 <= w.c1:
                    rect = wp.vec4i(
                        wp.min(rect[0], w.c0),
                        wp.min(rect[1], r),
                        wp.max(rect[2], w.c1),
                        wp.max(rect[3], r),
                    )
            box = wp.vec4i(
                wp.min(box[0], rect[0]),
                wp.min(box[1], rect[1]),
                wp.max(box[2], rect[2]),
                wp.max(box[3], rect[3]),
            )
        quad_rect_out[base + i] = rect
    chunk_rect_out[e * nch + ch] = box


@wp.func
def _rect_has(rect: wp.vec4i, col: int, r: int) -> bool:
    return col >= rect[0] and col <= rect[2] and r >= rect[1] and r <= rect[3]


@wp.kernel
def _sdf_texel_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    beads: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    quad_rect: wp.array(dtype=wp.vec4i),
    chunk_rect: wp.array(dtype=wp.vec4i),
    # static
    n_max: int,
    nch: int,
    res: int,
    # outputs
    sdf_out: wp.array(dtype=wp.float32),
    border_out: wp.array(dtype=wp.int8),
):
    """One texel: the fill value, then every quad whose rectangle holds it, in bead order
    (chunk rectangles first), merged as :func:`_sdf_raster_kernel` merges them."""
    e, r, col = wp.tid()
    if mask[e] == 0:
        return
    fr = frame[e]
    t = wp.vec2f(-fr[3], -1.0)
    n = beads[e]
    if n >= 3:
        base = e * n_max
        for ch in range((n + _CHUNK - 1) // _CHUNK):
            if not _rect_has(chunk_rect[e * nch + ch], col, r):
                continue
            a0 = ch * _CHUNK
            for i in range(a0, wp.min(a0 + _CHUNK, n)):
                if _rect_has(quad_rect[base + i], col, r):
                    q = _quad_raster(inner, outer, base, n, i, fr, res)
                    w = _raster_row(q, r, fr, res)
                    if col >= w.c0 and col <= w.c1:
                        t = _texel_merge(q, w, r, col, fr, t)
    k = (e * res + r) * res + col
    sdf_out[k] = t[0]
    border_out[k] = wp.int8(int(t[1]))
