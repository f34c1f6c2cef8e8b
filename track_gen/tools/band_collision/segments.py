"""``per_env`` kernels of the band collider's ``"segments"`` method (see
:mod:`track_gen.tools.band_collision`): the refresh (after ``kernels.band_beads_kernel``)
packs each env's borders into one ``(inner.xy, outer.xy)`` row per bead and bounds every
chunk of ``CHUNK_QUADS`` quads (one thread per env); the query tests each box exactly
against the border segments the chunk boxes do not prune (one thread per box).

The scans and the answer (:func:`_scan_box`, :func:`_scan_point`, :func:`_in_band`,
:func:`_write_answer`) are shared with the ``per_item`` kernels of
:mod:`~track_gen.tools.band_collision.items`.
"""

from __future__ import annotations

import warp as wp

from ..shared import Box as _Box
from ..shared import next_bead as _next
from .kernels import (
    _BIG,
    _CHUNK,
    _NAN,
    _closest_on_seg,
    _corner,
    _gap2,
    _Hit,
    _in_quad,
    _inner,
    _outer,
    _query_box,
    _unit_or,
)

# fuse_fp off: no multiply-add contraction, so the per_env and per_item kernels round alike
# on every device (CUDA would otherwise contract them differently).
wp.set_module_options({"enable_backward": False, "fuse_fp": False})

#: What :func:`_scan` measures the borders against: a solid box, or a point.
_SCAN_BOX = wp.constant(0)
_SCAN_POINT = wp.constant(1)


@wp.func
def _inward_normal(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    border: int,
    i: int,
) -> wp.vec2f:
    """Unit normal of border segment i -> i+1, pointing to the quad's other border
    (``(0, 0)`` for no segment, ``border < 0``: never read out of the env's rows)."""
    if border < 0 or i < 0:
        return wp.vec2f(0.0, 0.0)
    si = strip[base + i]
    sj = strip[base + _next(i, n)]
    a = _inner(si)
    b = _inner(sj)
    oa = _outer(si)
    ob = _outer(sj)
    if border == 1:
        a = _outer(si)
        b = _outer(sj)
        oa = _inner(si)
        ob = _inner(sj)
    t = b - a
    nrm = wp.vec2f(-t[1], t[0])
    if wp.dot(nrm, (oa + ob) - (a + b)) < 0.0:
        nrm = -nrm
    return nrm / wp.max(wp.length(nrm), 1.0e-30)


@wp.func
def _chunks(n: int) -> int:
    """Chunks of ``CHUNK_QUADS`` quads covering an env's ``n`` quads."""
    return (n + _CHUNK - 1) // _CHUNK


@wp.struct
class _Band:
    """One env's packed band as the query reads it (see :func:`_band`)."""

    strip: wp.array(dtype=wp.vec4f)  # [E*N_max]: (inner.xy, outer.xy) per bead
    chunk_box: wp.array(dtype=wp.vec4f)  # [E*nch]: (x0, y0, x1, y1) per chunk
    base: int  # the env's first strip row (e * N_max)
    cb: int  # the env's first chunk row (e * nch)
    n: int  # the env's beads


@wp.func
def _band(
    strip: wp.array(dtype=wp.vec4f),
    chunk_box: wp.array(dtype=wp.vec4f),
    e: int,
    n_max: int,
    nch: int,
    n: int,
) -> _Band:
    """Env ``e``'s rows of the strip and the chunk boxes, with its ``n`` beads."""
    band = _Band()
    band.strip = strip
    band.chunk_box = chunk_box
    band.base = e * n_max
    band.cb = e * nch
    band.n = n
    return band


@wp.func
def _strip_row(
    inner: wp.array(dtype=wp.vec3f), outer: wp.array(dtype=wp.vec3f), row: int, i: int, n: int
) -> wp.vec4f:
    """The strip row of bead ``i`` (at ``row`` of the borders): ``(inner.xy, outer.xy)``,
    NaN past the env's ``n`` beads."""
    v = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
    if i < n:
        pi = inner[row]
        po = outer[row]
        v = wp.vec4f(pi[0], pi[1], po[0], po[1])
    return v


@wp.func
def _chunk_bounds(strip: wp.array(dtype=wp.vec4f), base: int, n: int, c: int) -> wp.vec4f:
    """Bounding box ``(x0, y0, x1, y1)`` of the quads of chunk ``c`` (both borders, the
    chunk's closing bead included); NaN past the env's chunks."""
    bb = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
    if c < _chunks(n):
        a0 = c * _CHUNK
        a1 = wp.min(a0 + _CHUNK, n)
        lo = _inner(strip[base + a0])
        hi = lo
        for k in range(a0, a1 + 1):
            sk = strip[base + k % n]
            lo = wp.min(lo, wp.min(_inner(sk), _outer(sk)))
            hi = wp.max(hi, wp.max(_inner(sk), _outer(sk)))
        bb = wp.vec4f(lo[0], lo[1], hi[0], hi[1])
    return bb


@wp.kernel
def _strip_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    beads: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    nch: int,
    # outputs
    strip_inout: wp.array(dtype=wp.vec4f),
    chunk_box_out: wp.array(dtype=wp.vec4f),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = beads[e]
    base = e * n_max
    cb = e * nch
    for i in range(n_max):
        strip_inout[base + i] = _strip_row(inner, outer, base + i, i, n)
    for c in range(nch):
        chunk_box_out[cb + c] = _chunk_bounds(strip_inout, base, n, c)


@wp.func
def _seg_box_pair(la: wp.vec2f, lb: wp.vec2f, h: wp.vec2f) -> wp.vec4f:
    """Closest pair (segment point, box point) between segment la-lb and the solid box
    [-h, h] (box-local frame), as (qx, qy, bx, by); equal points when they meet."""
    d = lb - la
    nh = -h
    # bounding boxes apart: they cannot meet, skip the clipping
    if wp.min(la[0], lb[0]) <= h[0] and wp.max(la[0], lb[0]) >= nh[0]:
        if wp.min(la[1], lb[1]) <= h[1] and wp.max(la[1], lb[1]) >= nh[1]:
            t0 = float(0.0)
            t1 = float(1.0)
            if d[0] != 0.0:
                ta = (nh[0] - la[0]) / d[0]
                tb = (h[0] - la[0]) / d[0]
                t0 = wp.max(t0, wp.min(ta, tb))
                t1 = wp.min(t1, wp.max(ta, tb))
            if d[1] != 0.0:
                ta = (nh[1] - la[1]) / d[1]
                tb = (h[1] - la[1]) / d[1]
                t0 = wp.max(t0, wp.min(ta, tb))
                t1 = wp.min(t1, wp.max(ta, tb))
            if t0 <= t1:
                m = la + (0.5 * (t0 + t1)) * d
                return wp.vec4f(m[0], m[1], m[0], m[1])
    # disjoint convex sets: the closest pair has a segment end point, or the box corner
    # nearest to the segment's line (the only corner that can be closest to the segment)
    q = la
    b = wp.min(wp.max(la, nh), h)
    best = wp.length_sq(q - b)
    bb = wp.min(wp.max(lb, nh), h)
    d2 = wp.length_sq(lb - bb)
    if d2 < best:
        best = d2
        q = lb
        b = bb
    nrm = wp.vec2f(-d[1], d[0])
    if wp.dot(nrm, la) > 0.0:
        nrm = -nrm  # now pointing from the line towards the box centre (the origin)
    c = wp.vec2f(wp.where(nrm[0] > 0.0, nh[0], h[0]), wp.where(nrm[1] > 0.0, nh[1], h[1]))
    qc = _closest_on_seg(c, la, lb)
    if wp.length_sq(qc - c) < best:
        q = qc
        b = c
    return wp.vec4f(q[0], q[1], b[0], b[1])


@wp.func
def _visit_seg_box(
    hit: _Hit,
    bx: _Box,
    blo: wp.vec2f,
    bhi: wp.vec2f,
    va: wp.vec2f,
    vb: wp.vec2f,
    border: int,
    seg: int,
) -> _Hit:
    """Update the closest (segment va-vb, solid box) pair."""
    r = hit
    slo = wp.min(va, vb)
    shi = wp.max(va, vb)
    gx = wp.max(wp.max(slo[0] - bhi[0], blo[0] - shi[0]), 0.0)
    gy = wp.max(wp.max(slo[1] - bhi[1], blo[1] - shi[1]), 0.0)
    if gx * gx + gy * gy >= r.d2:
        return r
    ra = va - bx.p
    rb = vb - bx.p
    la = wp.vec2f(wp.dot(ra, bx.ax), wp.dot(ra, bx.ay))
    lb = wp.vec2f(wp.dot(rb, bx.ax), wp.dot(rb, bx.ay))
    # the same bound in the box frame (tighter for a rotated box)
    gx = wp.max(wp.max(wp.min(la[0], lb[0]) - bx.h[0], -bx.h[0] - wp.max(la[0], lb[0])), 0.0)
    gy = wp.max(wp.max(wp.min(la[1], lb[1]) - bx.h[1], -bx.h[1] - wp.max(la[1], lb[1])), 0.0)
    if gx * gx + gy * gy >= r.d2:
        return r
    pr = _seg_box_pair(la, lb, bx.h)
    dq = wp.vec2f(pr[0] - pr[2], pr[1] - pr[3])
    d2 = wp.dot(dq, dq)
    if d2 < r.d2:
        r.d2 = d2
        r.q = bx.p + pr[0] * bx.ax + pr[1] * bx.ay
        r.b = bx.p + pr[2] * bx.ax + pr[3] * bx.ay
        r.border = border
        r.seg = seg
    return r


@wp.func
def _first_chunk(band: _Band, lo: wp.vec2f, hi: wp.vec2f) -> int:
    """The chunk whose bounding box is nearest to the box [lo, hi] (first of ties)."""
    first = int(0)
    lb_min = float(_BIG)
    for c in range(_chunks(band.n)):
        g = _gap2(lo, hi, band.chunk_box[band.cb + c])
        if g < lb_min:
            lb_min = g
            first = c
    return first


@wp.func
def _seed_quad(band: _Band, c: int, p: wp.vec2f) -> int:
    """The bead of chunk c whose radial edge midpoint is nearest to p (a search start)."""
    a0 = c * _CHUNK
    a1 = wp.min(a0 + _CHUNK, band.n)
    seed = a0
    best = float(_BIG)
    for i in range(a0, a1):
        si = band.strip[band.base + i]
        d2 = wp.length_sq(0.5 * (_inner(si) + _outer(si)) - p)
        if d2 < best:
            best = d2
            seed = i
    return seed


@wp.func
def _visit_point(hit: _Hit, p: wp.vec2f, va: wp.vec2f, vb: wp.vec2f, border: int, seg: int) -> _Hit:
    r = hit
    q = _closest_on_seg(p, va, vb)
    d2 = wp.length_sq(p - q)
    if d2 < r.d2:
        r.d2 = d2
        r.q = q
        r.border = border
        r.seg = seg
    return r


@wp.func
def _visit_quad(
    hit: _Hit,
    mode: int,
    bx: _Box,
    blo: wp.vec2f,
    bhi: wp.vec2f,
    band: _Band,
    i: int,
) -> _Hit:
    """Update ``hit`` with both border segments ``i -> i+1`` (inner, then outer) against the
    solid box ``bx`` (``mode == _SCAN_BOX``, world bounds ``[blo, bhi]``) or the point
    ``bx.p`` (``_SCAN_POINT``)."""
    si = band.strip[band.base + i]
    sj = band.strip[band.base + _next(i, band.n)]
    if mode == _SCAN_BOX:
        r = _visit_seg_box(hit, bx, blo, bhi, _inner(si), _inner(sj), 0, i)
        return _visit_seg_box(r, bx, blo, bhi, _outer(si), _outer(sj), 1, i)
    r = _visit_point(hit, bx.p, _inner(si), _inner(sj), 0, i)
    return _visit_point(r, bx.p, _outer(si), _outer(sj), 1, i)


@wp.func
def _scan(
    band: _Band,
    mode: int,
    bx: _Box,
    blo: wp.vec2f,
    bhi: wp.vec2f,
    first: int,
    seed: int,
    seeds: int,
    stop: float,
) -> _Hit:
    """Closest pair between the borders and the box or point of :func:`_visit_quad`: the
    ``seeds`` segments from ``seed - 1`` go first (a tight bound), then chunk ``first``, then
    every other chunk whose bounding box is nearer than the best pair so far. Gives up
    (returning an upper bound) once the squared distance drops to ``stop`` or below."""
    n = band.n
    nc = _chunks(n)
    hit = _Hit()
    hit.d2 = _BIG
    if mode == _SCAN_POINT:
        hit.b = bx.p
    hit.border = -1
    hit.seg = -1
    for s in range(seeds):
        hit = _visit_quad(hit, mode, bx, blo, bhi, band, (seed + n - 1 + s) % n)
    for k in range(-1, nc):
        c = first
        if k >= 0:
            c = k
        if k >= 0 and k == first:
            continue
        if hit.d2 <= stop:
            break
        if _gap2(blo, bhi, band.chunk_box[band.cb + c]) >= hit.d2:
            continue
        a0 = c * _CHUNK
        for i in range(a0, wp.min(a0 + _CHUNK, n)):
            hit = _visit_quad(hit, mode, bx, blo, bhi, band, i)
    return hit


@wp.func
def _scan_box(band: _Band, bx: _Box, first: int, seed: int) -> _Hit:
    """Closest pair between the solid box and both borders (d2 = 0: a border meets the box);
    :func:`_scan` from the two segments around ``seed``."""
    blo = bx.p - bx.ext
    bhi = bx.p + bx.ext
    return _scan(band, _SCAN_BOX, bx, blo, bhi, first, seed, 2, 0.0)


@wp.func
def _scan_point(band: _Band, p: wp.vec2f, seed: int, stop: float) -> _Hit:
    """Closest border point to p: :func:`_scan` from the three segments around ``seed``,
    the nearest chunk first, stopping at ``stop``."""
    pt = _Box()
    pt.p = p
    first = _first_chunk(band, p, p)
    return _scan(band, _SCAN_POINT, pt, p, p, first, seed, 3, stop)


@wp.func
def _quad_has(band: _Band, i: int, p: wp.vec2f) -> int:
    si = band.strip[band.base + i]
    sj = band.strip[band.base + _next(i, band.n)]
    return _in_quad(p, _inner(si), _outer(si), _outer(sj), _inner(sj))


@wp.func
def _in_band(band: _Band, p: wp.vec2f, seed: int) -> int:
    """1 when p lies in some quad of the band: the quads around ``seed`` first, then every
    quad of the chunks whose bounding box holds p."""
    n = band.n
    for s in range(3):
        if _quad_has(band, (seed + n - 1 + s) % n, p) == 1:
            return 1
    for c in range(_chunks(n)):
        bb = band.chunk_box[band.cb + c]
        if p[0] < bb[0] or p[0] > bb[2] or p[1] < bb[1] or p[1] > bb[3]:
            continue
        a0 = c * _CHUNK
        for i in range(a0, wp.min(a0 + _CHUNK, n)):
            if _quad_has(band, i, p) == 1:
                return 1
    return 0


@wp.func
def _no_hit() -> _Hit:
    """The deepest-corner accumulator's start: no outside corner yet (d2 = -1)."""
    h = _Hit()
    h.d2 = -1.0
    h.border = -1
    h.seg = -1
    return h


@wp.func
def _write_answer(
    tid: int,
    inside: int,
    hit: _Hit,
    deep: _Hit,
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    oob_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec2f),
    normal_out: wp.array(dtype=wp.vec2f),
    boundary_out: wp.array(dtype=wp.int32),
):
    """A box's answer from its corner flags ``inside`` (bit k: corner k in the band), the
    closest (border, box) pair ``hit`` and the deepest outside corner ``deep`` (d2 < 0:
    none): clear of the borders, a corner outside, or a border crossing the box."""
    if inside == 15 and hit.d2 > 0.0:
        fallback = _inward_normal(strip, base, n, hit.border, hit.seg)
        oob_out[tid] = 0
        distance_out[tid] = wp.sqrt(hit.d2)
        nearest_out[tid] = hit.q
        normal_out[tid] = _unit_or(hit.b - hit.q, fallback)
        boundary_out[tid] = hit.border
        return
    oob_out[tid] = 1
    if deep.d2 >= 0.0:
        fallback = _inward_normal(strip, base, n, deep.border, deep.seg)
        distance_out[tid] = -wp.sqrt(deep.d2)
        nearest_out[tid] = deep.q
        normal_out[tid] = _unit_or(deep.q - deep.b, fallback)
        boundary_out[tid] = deep.border
    else:
        distance_out[tid] = 0.0
        nearest_out[tid] = hit.q
        normal_out[tid] = _inward_normal(strip, base, n, hit.border, hit.seg)
        boundary_out[tid] = hit.border


@wp.kernel
def _segments_query_kernel(
    # inputs
    beads: wp.array(dtype=wp.int32),
    strip: wp.array(dtype=wp.vec4f),
    chunk_box: wp.array(dtype=wp.vec4f),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    # static
    n_max: int,
    nch: int,
    nbox: int,
    # outputs
    oob_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec2f),
    normal_out: wp.array(dtype=wp.vec2f),
    boundary_out: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    e = tid // nbox
    n = beads[e]
    bx = _query_box(
        tid,
        n,
        position,
        orientation,
        half_extents,
        oob_out,
        distance_out,
        nearest_out,
        normal_out,
        boundary_out,
    )
    if bx.ok == 0:
        return
    band = _band(strip, chunk_box, e, n_max, nch, n)
    first = _first_chunk(band, bx.p - bx.ext, bx.p + bx.ext)
    seed = _seed_quad(band, first, bx.p)
    hit = _scan_box(band, bx, first, seed)
    inside = int(0)  # bit k: corner k is inside the band
    for k in range(4):
        inside = inside | (_in_band(band, _corner(bx, k), seed) << k)
    deep = _no_hit()
    if not (inside == 15 and hit.d2 > 0.0):
        for k in range(4):
            if (inside >> k) & 1 == 0:
                # a corner nearer to the border than the deepest so far cannot be the deepest
                c = _corner(bx, k)
                ch = _scan_point(band, c, seed, deep.d2)
                if ch.d2 > deep.d2:
                    deep = ch
    _write_answer(
        tid,
        inside,
        hit,
        deep,
        strip,
        band.base,
        n,
        oob_out,
        distance_out,
        nearest_out,
        normal_out,
        boundary_out,
    )
