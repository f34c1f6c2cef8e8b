"""Kernels of the band collider (see :mod:`track_gen.tools.band_collision`).

Shared box/segment functions, the segments query (chunk-pruned exact test against the border
quad strip) and the narrow-band SDF bake and query. One thread per env (refresh) or per box
(query).
"""

from __future__ import annotations

import warp as wp

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
def _finite2(v: wp.vec2f) -> bool:
    return wp.isfinite(v[0]) and wp.isfinite(v[1])


@wp.func
def _make_box(pos: wp.vec3f, rot: wp.quatf, he: wp.vec2f) -> _Box:
    """Plan-view box: centre, yaw axes from the quaternion's rotated local x, half extents."""
    b = _Box()
    # rotated local x: (w^2 + x^2 - y^2 - z^2, 2 (x y + w z)); valid for non-unit quaternions
    c = rot[3] * rot[3] + rot[0] * rot[0] - rot[1] * rot[1] - rot[2] * rot[2]
    s = 2.0 * (rot[0] * rot[1] + rot[3] * rot[2])
    ln = wp.sqrt(c * c + s * s)
    ax = wp.vec2f(1.0, 0.0)
    if ln > 1.0e-30:
        ax = wp.vec2f(c / ln, s / ln)
    h = wp.vec2f(wp.abs(he[0]), wp.abs(he[1]))
    b.p = _xy(pos)
    b.ax = ax
    b.ay = wp.vec2f(-ax[1], ax[0])
    b.h = h
    b.ext = wp.vec2f(
        wp.abs(ax[0]) * h[0] + wp.abs(ax[1]) * h[1], wp.abs(ax[1]) * h[0] + wp.abs(ax[0]) * h[1]
    )
    b.ok = 0
    if _finite2(b.p) and wp.isfinite(pos[2]) and wp.isfinite(c) and wp.isfinite(s) and _finite2(h):
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
def _inward_normal(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    border: int,
    i: int,
) -> wp.vec2f:
    """Unit normal of border segment i -> i+1, pointing to the quad's other border."""
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


# ----------------------------------------------------------------------------- segments


@wp.func
def _usable_beads(count: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32), e: int) -> int:
    """count[e] for a valid env with a band (>= 3 beads), else 0."""
    n = count[e]
    if valid[e] == 0 or n < 3:
        n = 0
    return n


@wp.kernel
def _strip_kernel(
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    n_max: int,
    nch: int,
    beads_out: wp.array(dtype=wp.int32),
    strip_out: wp.array(dtype=wp.vec4f),
    chunk_box_out: wp.array(dtype=wp.vec4f),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = _usable_beads(count, valid, e)
    base = e * n_max
    cb = e * nch
    nan4 = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
    beads_out[e] = n
    for i in range(n_max):
        v = nan4
        if i < n:
            pi = inner[base + i]
            po = outer[base + i]
            v = wp.vec4f(pi[0], pi[1], po[0], po[1])
        strip_out[base + i] = v
    nc = (n + _CHUNK - 1) // _CHUNK
    for c in range(nch):
        bb = nan4
        if c < nc:
            a0 = c * _CHUNK
            a1 = wp.min(a0 + _CHUNK, n)
            lo = _inner(strip_out[base + a0])
            hi = lo
            for k in range(a0, a1 + 1):
                sk = strip_out[base + k % n]
                lo = wp.min(lo, wp.min(_inner(sk), _outer(sk)))
                hi = wp.max(hi, wp.max(_inner(sk), _outer(sk)))
            bb = wp.vec4f(lo[0], lo[1], hi[0], hi[1])
        chunk_box_out[cb + c] = bb


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
def _first_chunk(
    chunk_box: wp.array(dtype=wp.vec4f), cb: int, nc: int, lo: wp.vec2f, hi: wp.vec2f
) -> int:
    """The chunk whose bounding box is nearest to the box [lo, hi] (first of ties)."""
    first = int(0)
    lb_min = float(_BIG)
    for c in range(nc):
        g = _gap2(lo, hi, chunk_box[cb + c])
        if g < lb_min:
            lb_min = g
            first = c
    return first


@wp.func
def _seed_quad(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    c: int,
    p: wp.vec2f,
) -> int:
    """The bead of chunk c whose radial edge midpoint is nearest to p (a search start)."""
    a0 = c * _CHUNK
    a1 = wp.min(a0 + _CHUNK, n)
    seed = a0
    best = float(_BIG)
    for i in range(a0, a1):
        si = strip[base + i]
        d2 = wp.length_sq(0.5 * (_inner(si) + _outer(si)) - p)
        if d2 < best:
            best = d2
            seed = i
    return seed


@wp.func
def _scan_box(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    chunk_box: wp.array(dtype=wp.vec4f),
    cb: int,
    bx: _Box,
    first: int,
    seed: int,
) -> _Hit:
    """Closest pair between the solid box and both borders (d2 = 0: a border meets the box).

    The segments around ``seed`` go first (a tight bound), then chunk ``first``, then every
    other chunk whose bounding box is nearer than the best pair so far."""
    blo = bx.p - bx.ext
    bhi = bx.p + bx.ext
    nc = (n + _CHUNK - 1) // _CHUNK
    hit = _Hit()
    hit.d2 = _BIG
    hit.border = -1
    hit.seg = -1
    for s in range(2):
        i = (seed + n - 1 + s) % n
        si = strip[base + i]
        sj = strip[base + _next(i, n)]
        hit = _visit_seg_box(hit, bx, blo, bhi, _inner(si), _inner(sj), 0, i)
        hit = _visit_seg_box(hit, bx, blo, bhi, _outer(si), _outer(sj), 1, i)
    for k in range(-1, nc):
        c = first
        if k >= 0:
            c = k
        if k >= 0 and k == first:
            continue
        if hit.d2 <= 0.0:
            break
        if _gap2(blo, bhi, chunk_box[cb + c]) >= hit.d2:
            continue
        a0 = c * _CHUNK
        a1 = wp.min(a0 + _CHUNK, n)
        sa = strip[base + a0]
        ia = _inner(sa)
        oa = _outer(sa)
        for i in range(a0, a1):
            j = _next(i, n)
            sb = strip[base + j]
            ib = _inner(sb)
            ob = _outer(sb)
            hit = _visit_seg_box(hit, bx, blo, bhi, ia, ib, 0, i)
            hit = _visit_seg_box(hit, bx, blo, bhi, oa, ob, 1, i)
            ia = ib
            oa = ob
    return hit


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
def _scan_point(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    chunk_box: wp.array(dtype=wp.vec4f),
    cb: int,
    p: wp.vec2f,
    seed: int,
    stop: float,
) -> _Hit:
    """Closest border point to p: the segments around ``seed`` first, then the chunks
    nearest first, pruned by their bounding boxes. Gives up (returning an upper bound) once
    the squared distance drops to ``stop`` or below."""
    nc = (n + _CHUNK - 1) // _CHUNK
    hit = _Hit()
    hit.d2 = _BIG
    hit.b = p
    hit.border = -1
    hit.seg = -1
    for s in range(3):
        i = (seed + n - 1 + s) % n
        si = strip[base + i]
        sj = strip[base + _next(i, n)]
        hit = _visit_point(hit, p, _inner(si), _inner(sj), 0, i)
        hit = _visit_point(hit, p, _outer(si), _outer(sj), 1, i)
    first = _first_chunk(chunk_box, cb, nc, p, p)
    for k in range(-1, nc):
        c = first
        if k >= 0:
            c = k
        if k >= 0 and k == first:
            continue
        if hit.d2 <= stop:
            break
        if _gap2(p, p, chunk_box[cb + c]) >= hit.d2:
            continue
        a0 = c * _CHUNK
        a1 = wp.min(a0 + _CHUNK, n)
        sa = strip[base + a0]
        ia = _inner(sa)
        oa = _outer(sa)
        for i in range(a0, a1):
            j = _next(i, n)
            sb = strip[base + j]
            ib = _inner(sb)
            ob = _outer(sb)
            hit = _visit_point(hit, p, ia, ib, 0, i)
            hit = _visit_point(hit, p, oa, ob, 1, i)
            ia = ib
            oa = ob
    return hit


@wp.func
def _quad_has(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    i: int,
    p: wp.vec2f,
) -> int:
    si = strip[base + i]
    sj = strip[base + _next(i, n)]
    return _in_quad(p, _inner(si), _outer(si), _outer(sj), _inner(sj))


@wp.func
def _in_band(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    chunk_box: wp.array(dtype=wp.vec4f),
    cb: int,
    p: wp.vec2f,
    seed: int,
) -> int:
    """1 when p lies in some quad of the band: the quads around ``seed`` first, then every
    quad of the chunks whose bounding box holds p."""
    for s in range(3):
        if _quad_has(strip, base, n, (seed + n - 1 + s) % n, p) == 1:
            return 1
    nc = (n + _CHUNK - 1) // _CHUNK
    for c in range(nc):
        bb = chunk_box[cb + c]
        if p[0] < bb[0] or p[0] > bb[2] or p[1] < bb[1] or p[1] > bb[3]:
            continue
        a0 = c * _CHUNK
        a1 = wp.min(a0 + _CHUNK, n)
        sa = strip[base + a0]
        ia = _inner(sa)
        oa = _outer(sa)
        for i in range(a0, a1):
            j = _next(i, n)
            sb = strip[base + j]
            ib = _inner(sb)
            ob = _outer(sb)
            if _in_quad(p, ia, oa, ob, ib) == 1:
                return 1
            ia = ib
            oa = ob
    return 0


@wp.kernel
def _segments_query_kernel(
    beads: wp.array(dtype=wp.int32),
    strip: wp.array(dtype=wp.vec4f),
    chunk_box: wp.array(dtype=wp.vec4f),
    n_max: int,
    nch: int,
    nbox: int,
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    oob_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec2f),
    normal_out: wp.array(dtype=wp.vec2f),
    boundary_out: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    e = tid // nbox
    n = beads[e]
    if n < 3:
        _write_none(tid, 1, oob_out, distance_out, nearest_out, normal_out, boundary_out)
        return
    bx = _make_box(position[tid], orientation[tid], half_extents[tid])
    if bx.ok == 0:
        _write_none(tid, 0, oob_out, distance_out, nearest_out, normal_out, boundary_out)
        return
    base = e * n_max
    cb = e * nch
    nc = (n + _CHUNK - 1) // _CHUNK
    first = _first_chunk(chunk_box, cb, nc, bx.p - bx.ext, bx.p + bx.ext)
    seed = _seed_quad(strip, base, n, first, bx.p)
    hit = _scan_box(strip, base, n, chunk_box, cb, bx, first, seed)
    inside = int(0)  # bit k: corner k is inside the band
    for k in range(4):
        inside = inside | (_in_band(strip, base, n, chunk_box, cb, _corner(bx, k), seed) << k)
    if inside == 15 and hit.d2 > 0.0:
        fallback = _inward_normal(strip, base, n, hit.border, hit.seg)
        oob_out[tid] = 0
        distance_out[tid] = wp.sqrt(hit.d2)
        nearest_out[tid] = hit.q
        normal_out[tid] = _unit_or(hit.b - hit.q, fallback)
        boundary_out[tid] = hit.border
        return
    deep = _Hit()
    deep.d2 = -1.0
    deep.border = -1
    deep.seg = -1
    for k in range(4):
        if (inside >> k) & 1 == 0:
            # a corner nearer to the border than the deepest so far cannot be the deepest
            c = _corner(bx, k)
            ch = _scan_point(strip, base, n, chunk_box, cb, c, seed, deep.d2)
            if ch.d2 > deep.d2:
                deep = ch
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


# ----------------------------------------------------------------------------- sdf


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


@wp.kernel
def _sdf_frame_kernel(
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    n_max: int,
    res: int,
    padding: float,
    beads_out: wp.array(dtype=wp.int32),
    frame_out: wp.array(dtype=wp.vec4f),
    aabb_out: wp.array(dtype=wp.vec4f),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = _usable_beads(count, valid, e)
    beads_out[e] = n
    if n == 0:
        nan4 = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
        frame_out[e] = nan4
        aabb_out[e] = nan4
        return
    bb = border_box(inner, outer, e * n_max, n)
    g = square_grid(bb, res, padding)
    frame_out[e] = wp.vec4f(g[0], g[1], g[2], _BAND * g[2])
    aabb_out[e] = bb


@wp.kernel
def _sdf_fill_kernel(
    mask: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    res: int,
    sdf_out: wp.array(dtype=wp.float32),
    border_out: wp.array(dtype=wp.int8),
):
    e, r = wp.tid()
    if mask[e] == 0:
        return
    v = -frame[e][3]
    k0 = (e * res + r) * res
    for i in range(res):
        sdf_out[k0 + i] = v
        border_out[k0 + i] = wp.int8(-1)


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
def _sdf_raster_kernel(
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    beads: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    n_max: int,
    res: int,
    sdf_out: wp.array(dtype=wp.float32),
    border_out: wp.array(dtype=wp.int8),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = beads[e]
    if n < 3:
        return
    fr = frame[e]
    x0 = fr[0]
    y0 = fr[1]
    cell = fr[2]
    m = fr[3]
    inv = 1.0 / cell
    base = e * n_max
    gb = e * res * res
    eps = 1.0e-3
    for i in range(n):
        j = _next(i, n)
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
        r0 = wp.max(int(wp.ceil((ylo - y0) * inv - 0.5 - eps)), 0)
        r1 = wp.min(int(wp.floor((yhi - y0) * inv - 0.5 + eps)), res - 1)
        ad = d - a
        bc = c - b
        inv_ad = float(0.0)
        if wp.dot(ad, ad) > 0.0:
            inv_ad = 1.0 / wp.dot(ad, ad)
        inv_bc = float(0.0)
        if wp.dot(bc, bc) > 0.0:
            inv_bc = 1.0 / wp.dot(bc, bc)
        # slopes: the hull's six vertex pairs, the quad's four edges (as _in_quad sees them)
        k01 = _slope(p0, p1)
        k12 = _slope(p1, p2)
        k23 = _slope(p2, p3)
        k30 = _slope(p3, p0)
        k02 = _slope(p0, p2)
        k13 = _slope(p1, p3)
        kab = _slope(a, b)
        kbc = _slope(b, c)
        kdc = _slope(d, c)
        kda = _slope(d, a)
        for r in range(r0, r1 + 1):
            yc = y0 + (float(r) + 0.5) * cell
            span = wp.vec2f(_BIG, -_BIG)
            span = _chord(p0, p1, k01, yc, span)
            span = _chord(p1, p2, k12, yc, span)
            span = _chord(p2, p3, k23, yc, span)
            span = _chord(p3, p0, k30, yc, span)
            span = _chord(p0, p2, k02, yc, span)
            span = _chord(p1, p3, k13, yc, span)
            if span[0] > span[1]:
                continue
            c0 = wp.max(int(wp.ceil((span[0] - x0) * inv - 0.5 - eps)), 0)
            c1 = wp.min(int(wp.floor((span[1] - x0) * inv - 0.5 + eps)), res - 1)
            # where the row meets the quad's edges, as _in_quad sees them (bitwise)
            xa = _row_cross(yc, a, b, kab)
            xb = _row_cross(yc, b, c, kbc)
            xc = _row_cross(yc, d, c, kdc)
            xd = _row_cross(yc, d, a, kda)
            row = gb + r * res
            for col in range(c0, c1 + 1):
                px = x0 + (float(col) + 0.5) * cell
                ra = wp.vec2f(px - a[0], yc - a[1])
                ri = ra - wp.clamp(wp.dot(ra, ad) * inv_ad, 0.0, 1.0) * ad
                rb = wp.vec2f(px - b[0], yc - b[1])
                ro = rb - wp.clamp(wp.dot(rb, bc) * inv_bc, 0.0, 1.0) * bc
                di = wp.dot(ri, ri)
                do = wp.dot(ro, ro)
                dd = wp.sqrt(wp.min(di, do))
                bd = int(0)
                if do < di:
                    bd = 1
                flips = int(0)
                if px < xa:
                    flips += 1
                if px < xb:
                    flips += 1
                if px < xc:
                    flips += 1
                if px < xd:
                    flips += 1
                ins = flips % 2
                k = row + col
                cur = sdf_out[k]
                cid = int(border_out[k])
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
                sdf_out[k] = aa
                border_out[k] = wp.int8(cid)


@wp.func
def _sdf_at(
    sdf: wp.array(dtype=wp.float32),
    gb: int,
    res: int,
    fr: wp.vec4f,
    bb: wp.vec4f,
    s: wp.vec2f,
) -> float:
    """Bilinear phi at s (clamped to the edge texels), capped outside the borders' box."""
    top = float(res - 1)
    u = wp.clamp((s[0] - fr[0]) / fr[2] - 0.5, 0.0, top)
    v = wp.clamp((s[1] - fr[1]) / fr[2] - 0.5, 0.0, top)
    i0 = wp.min(int(wp.floor(u)), res - 2)
    j0 = wp.min(int(wp.floor(v)), res - 2)
    fu = u - float(i0)
    fv = v - float(j0)
    k = gb + j0 * res + i0
    v0 = sdf[k] + fu * (sdf[k + 1] - sdf[k])
    v1 = sdf[k + res] + fu * (sdf[k + res + 1] - sdf[k + res])
    phi = v0 + fv * (v1 - v0)
    gx = wp.max(wp.max(bb[0] - s[0], s[0] - bb[2]), 0.0)
    gy = wp.max(wp.max(bb[1] - s[1], s[1] - bb[3]), 0.0)
    if gx > 0.0 or gy > 0.0:
        d = wp.sqrt(gx * gx + gy * gy)
        m = wp.max(gx, gy)
        if m > 1.0e18:  # the squares would overflow float32: a scaled hypot
            d = m * wp.sqrt((gx / m) * (gx / m) + (gy / m) * (gy / m))
        phi = wp.min(phi, -d)
    return phi


@wp.func
def _texel_border(
    border: wp.array(dtype=wp.int8), gb: int, res: int, fr: wp.vec4f, s: wp.vec2f
) -> int:
    i = wp.clamp(int(wp.floor((s[0] - fr[0]) / fr[2])), 0, res - 1)
    j = wp.clamp(int(wp.floor((s[1] - fr[1]) / fr[2])), 0, res - 1)
    return int(border[gb + j * res + i])


@wp.kernel
def _sdf_query_kernel(
    beads: wp.array(dtype=wp.int32),
    sdf: wp.array(dtype=wp.float32),
    border: wp.array(dtype=wp.int8),
    frame: wp.array(dtype=wp.vec4f),
    aabb: wp.array(dtype=wp.vec4f),
    res: int,
    nbox: int,
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    oob_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec2f),
    normal_out: wp.array(dtype=wp.vec2f),
    boundary_out: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    e = tid // nbox
    if beads[e] < 3:
        _write_none(tid, 1, oob_out, distance_out, nearest_out, normal_out, boundary_out)
        return
    bx = _make_box(position[tid], orientation[tid], half_extents[tid])
    if bx.ok == 0:
        _write_none(tid, 0, oob_out, distance_out, nearest_out, normal_out, boundary_out)
        return
    fr = frame[e]
    bb = aabb[e]
    gb = e * res * res
    s = bx.p
    best = _sdf_at(sdf, gb, res, fr, bb, s)
    for k in range(4):
        c = _corner(bx, k)
        ph = _sdf_at(sdf, gb, res, fr, bb, c)
        if ph < best:
            best = ph
            s = c
    # central difference, one cell; where phi is flat (the clamped far field) the step
    # doubles until the stencil reaches the narrow band
    step = fr[2]
    g = wp.vec2f(0.0, 0.0)
    for _it in range(32):
        hx = wp.vec2f(step, 0.0)
        hy = wp.vec2f(0.0, step)
        g = wp.vec2f(
            _sdf_at(sdf, gb, res, fr, bb, s + hx) - _sdf_at(sdf, gb, res, fr, bb, s - hx),
            _sdf_at(sdf, gb, res, fr, bb, s + hy) - _sdf_at(sdf, gb, res, fr, bb, s - hy),
        )
        if wp.length_sq(g) > 0.0 or step > float(res) * fr[2]:
            break
        step = 2.0 * step
    mid = wp.vec2f(0.5 * (bb[0] + bb[2]), 0.5 * (bb[1] + bb[3]))
    nrm = _unit_or(g, _unit_or(mid - s, wp.vec2f(1.0, 0.0)))
    q = s - best * nrm
    bid = _texel_border(border, gb, res, fr, q)
    if bid < 0:
        bid = _texel_border(border, gb, res, fr, s)
    oob = int(0)
    if best <= 0.0:
        oob = 1
    oob_out[tid] = oob
    distance_out[tid] = best
    nearest_out[tid] = q
    normal_out[tid] = nrm
    boundary_out[tid] = bid


# ----------------------------------------------------------------------------- host class
