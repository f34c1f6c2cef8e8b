"""Kernels and ``@wp.func`` helpers of the lidar (see :mod:`track_gen.tools.lidar`).

Track courses: :func:`_grid_kernel` (one thread per env) packs every border segment and prop
of an env into a uniform square grid (cell lists in CSR form, each item in every cell its
bounding box overlaps); :func:`_track_scan_kernel` (one thread per beam) marches each ray
through the grid cell by cell (DDA) and tests the items of the cells it crosses exactly,
stopping at the first cell whose exit lies beyond the nearest hit so far. Gate courses:
:func:`_gate_key_kernel` refreshes the per-env key and status, :func:`_gate_scan_kernel`
tests every gate of the env (posts or frame members) exactly. Every loop is bounded by the
fixed sizes (``N_max``, the prop capacity, ``max_gates``, ``2 * G + 2`` cells per ray).
"""

from __future__ import annotations

import enum

import warp as wp

from ...core.extents import clamp3, in_range, in_range2, in_range3, scaled_quat
from ...geometry import (
    bucket_clear,
    bucket_count,
    bucket_fill,
    bucket_scan,
    finite,
    finite3,
    heading_of,
    plan_x_axis,
    xy,
)
from ...seeds import effective_seed_wp, fmix32_wp

wp.set_module_options({"enable_backward": False})


class ScanStatus(enum.IntEnum):
    """How an env is scanned (``LidarUtility.status``), decided at its last refresh."""

    NONE = 0  # no course (invalid env, unusable data): NaN distances, hit 0
    GRID = 1  # track: the ray marches through the env's grid
    BRUTE = 2  # track whose items overflow the grid capacity: every item is tested
    GATES = 3  # gate course: every gate is tested


_NAN = wp.constant(float("nan"))
_BIG = wp.constant(3.0e38)
_NONE = wp.constant(int(ScanStatus.NONE))
_GRID = wp.constant(int(ScanStatus.GRID))
_BRUTE = wp.constant(int(ScanStatus.BRUTE))
_GATES = wp.constant(int(ScanStatus.GATES))
#: Relative slack of a segment's parameter range (closes float32 gaps at shared beads).
_SEG_EPS = wp.constant(1.0e-5)
#: A cell is this fraction of its size wider for insertion (an item on a cell edge is in
#: both cells).
_CELL_EPS = wp.constant(1.0e-3)
#: Cone and wall props (``PropKind`` values).
_WALL = wp.constant(1)
#: Salts of the noise streams.
_KEY_SALT = wp.constant(wp.uint32(0x6C1D4A5B))
_STEP_GOLDEN = wp.constant(wp.uint32(0x9E3779B9))
_STEP_MAX = wp.constant(2147483647)


# ----------------------------------------------------------------------------- geometry
@wp.func
def _seg_hit(o: wp.vec2f, d: wp.vec2f, seg: wp.vec4f, best: float) -> float:
    """``min(best, t)`` for the ray ``o + t d`` (t >= 0) crossing the segment ``seg = (a.x,
    a.y, b.x, b.y)``; the candidate is decided before the one division."""
    s = wp.vec2f(seg[2] - seg[0], seg[3] - seg[1])
    den = d[0] * s[1] - d[1] * s[0]
    if den == 0.0:
        return best  # parallel: its neighbours' end points are hit instead
    w = wp.vec2f(seg[0] - o[0], seg[1] - o[1])
    nt = w[0] * s[1] - w[1] * s[0]
    nu = w[0] * d[1] - w[1] * d[0]
    if den < 0.0:
        den = -den
        nt = -nt
        nu = -nu
    if nt < 0.0 or nu < -_SEG_EPS * den or nu > (1.0 + _SEG_EPS) * den:
        return best
    t = nt / den
    if t < best:
        return t
    return best


@wp.func
def _disc_hit(o: wp.vec2f, d: wp.vec2f, c: wp.vec2f, r: float, best: float) -> float:
    """``min(best, t)`` for the ray entering the disc (0 when ``o`` is inside it)."""
    w = c - o
    m = wp.dot(w, d)
    q = w - m * d
    h2 = r * r - wp.dot(q, q)
    if h2 < 0.0:
        return best
    t = float(0.0)
    if wp.dot(w, w) > r * r:
        t = m - wp.sqrt(h2)
        if t < 0.0:
            return best  # behind the origin
    return wp.min(best, t)


@wp.func
def _slab(o: float, d: float, h: float, lo: float, hi: float) -> wp.vec2f:
    """The ray's interval ``[lo, hi]`` narrowed by one slab ``|o + t d| <= h`` (empty when
    ``lo > hi``)."""
    if d == 0.0:
        if wp.abs(o) > h:
            return wp.vec2f(1.0, 0.0)
        return wp.vec2f(lo, hi)
    t1 = (-h - o) / d
    t2 = (h - o) / d
    return wp.vec2f(wp.max(lo, wp.min(t1, t2)), wp.min(hi, wp.max(t1, t2)))


@wp.func
def _rect_hit(
    o: wp.vec2f, d: wp.vec2f, c: wp.vec2f, u: wp.vec2f, h: wp.vec2f, best: float
) -> float:
    """``min(best, t)`` for the ray entering the rectangle of centre ``c``, unit axis ``u``
    (its second axis ``u`` turned left) and half extents ``h`` (0 when ``o`` is inside)."""
    v = wp.vec2f(-u[1], u[0])
    w = o - c
    span = _slab(wp.dot(w, u), wp.dot(d, u), h[0], 0.0, _BIG)
    span = _slab(wp.dot(w, v), wp.dot(d, v), h[1], span[0], span[1])
    if span[0] <= span[1] and span[0] < best:
        return span[0]
    return best


@wp.func
def _box_hit(o: wp.vec3f, d: wp.vec3f, c: wp.vec3f, h: wp.vec3f, best: float) -> float:
    """``min(best, t)`` for the ray (in a box's frame) entering the box ``|x - c| <= h``."""
    w = o - c
    span = _slab(w[0], d[0], h[0], 0.0, _BIG)
    span = _slab(w[1], d[1], h[1], span[0], span[1])
    span = _slab(w[2], d[2], h[2], span[0], span[1])
    if span[0] <= span[1] and span[0] < best:
        return span[0]
    return best


@wp.func
def _wall_footprint(rot: wp.quatf, scale: wp.vec3f) -> wp.vec4f:
    """A wall's plan footprint (its base face seen from above): ``(u.x, u.y, half length,
    half thickness)``, ``u`` the plan direction of its local x (any scale of ``rot``)."""
    r = scaled_quat(rot)
    ax = plan_x_axis(r)
    ln = wp.length(ax)
    q2 = wp.dot(r, r)
    u = wp.vec2f(1.0, 0.0)
    plan = float(0.0)
    if ln > 1.0e-30 and q2 > 0.0:
        u = ax / ln
        plan = wp.min(ln / q2, 1.0)  # cos(pitch): the plan share of the local x axis
    return wp.vec4f(u[0], u[1], 0.5 * scale[0] * plan, 0.5 * scale[1])


@wp.func
def _prop_hit(
    o: wp.vec2f,
    d: wp.vec2f,
    pos: wp.vec3f,
    rot: wp.quatf,
    scale: wp.vec3f,
    kind: int,
    best: float,
) -> float:
    """A prop against the ray: a cone is the disc of its base, a wall its footprint."""
    c = xy(pos)
    if kind == _WALL:
        f = _wall_footprint(rot, scale)
        return _rect_hit(o, d, c, wp.vec2f(f[0], f[1]), wp.vec2f(f[2], f[3]), best)
    return _disc_hit(o, d, c, 0.5 * scale[0], best)


@wp.func
def _prop_box(pos: wp.vec3f, rot: wp.quatf, scale: wp.vec3f, kind: int) -> wp.vec4f:
    """Plan bounding box ``(min x, min y, max x, max y)`` of a prop's footprint."""
    c = xy(pos)
    ex = wp.vec2f(0.5 * scale[0], 0.5 * scale[0])
    if kind == _WALL:
        f = _wall_footprint(rot, scale)
        ux = wp.abs(f[0])
        uy = wp.abs(f[1])
        ex = wp.vec2f(ux * f[2] + uy * f[3], uy * f[2] + ux * f[3])
    return wp.vec4f(c[0] - ex[0], c[1] - ex[1], c[0] + ex[0], c[1] + ex[1])


@wp.func
def _next(i: int, n: int) -> int:
    j = i + 1
    if j == n:
        j = 0
    return j


# ----------------------------------------------------------------------------- noise
@wp.func
def _stream_key(seed: wp.int32, epoch: wp.int32) -> wp.uint32:
    """The env's noise key: a hash of its effective seed and its epoch."""
    eff = effective_seed_wp(seed, wp.max(epoch, 0))
    return fmix32_wp(wp.uint32(eff) ^ fmix32_wp(wp.uint32(epoch) + _KEY_SALT))


@wp.func
def _uniform(h: wp.uint32) -> float:
    """A float32 in ``(0, 1)`` from the top 24 bits of a hash."""
    return (float(h >> wp.uint32(8)) + 0.5) * 5.9604644775390625e-08


@wp.func
def _noisy(
    dist: float,
    hit: int,
    key: wp.uint32,
    step: int,
    beam: int,
    noise_std: float,
    dropout: float,
    max_range: float,
) -> wp.vec2f:
    """``(distance, hit)`` after dropout and range noise, drawn from the stream of
    ``(key, step, beam)``: three chained hashes give the dropout draw and a Box-Muller
    normal."""
    h0 = fmix32_wp(key ^ fmix32_wp(wp.uint32(step) * _STEP_GOLDEN + wp.uint32(beam)))
    h1 = fmix32_wp(h0 + _STEP_GOLDEN)
    h2 = fmix32_wp(h1 + _STEP_GOLDEN)
    if dropout > 0.0 and _uniform(h0) < dropout:
        return wp.vec2f(max_range, 0.0)
    if hit != 0 and noise_std > 0.0:
        g = wp.sqrt(-2.0 * wp.log(_uniform(h1))) * wp.cos(6.2831853 * _uniform(h2))
        dist = wp.clamp(dist + noise_std * g, 0.0, max_range)
    return wp.vec2f(dist, float(hit))


@wp.func
def _pose(position: wp.vec3f, rot: wp.quatf) -> bool:
    """A pose is usable when every component is finite."""
    return (
        finite3(position)
        and finite(rot[0])
        and finite(rot[1])
        and finite(rot[2])
        and finite(rot[3])
    )


@wp.func
def _finish(
    best: float,
    e: int,
    b: int,
    out: int,
    key: wp.array(dtype=wp.uint32),
    step: wp.array(dtype=wp.int32),
    noise_std: float,
    dropout: float,
    max_range: float,
    distance_out: wp.array(dtype=wp.float32),
    hit_out: wp.array(dtype=wp.int32),
):
    hit = int(0)
    dist = max_range
    if best <= max_range:
        hit = 1
        dist = best
    if noise_std > 0.0 or dropout > 0.0:
        r = _noisy(dist, hit, key[e], step[e], b, noise_std, dropout, max_range)
        dist = r[0]
        hit = int(r[1])
    distance_out[out] = dist
    hit_out[out] = hit


@wp.func
def _beam(beams: wp.array(dtype=wp.vec2f), b: int, ax: wp.vec2f) -> wp.vec2f:
    """Beam ``b``'s local (cos, sin) turned by the agent's heading ``ax``."""
    lb = beams[b]
    return wp.vec2f(ax[0] * lb[0] - ax[1] * lb[1], ax[1] * lb[0] + ax[0] * lb[1])


# ----------------------------------------------------------------------------- track items
@wp.func
def _item_hit(
    code: int,
    o: wp.vec2f,
    d: wp.vec2f,
    best: float,
    segments: wp.array(dtype=wp.vec4f),
    seg_base: int,
    n_max: int,
    prop_pos: wp.array(dtype=wp.vec3f),
    prop_rot: wp.array(dtype=wp.quatf),
    prop_scale: wp.array(dtype=wp.vec3f),
    prop_base: int,
    prop_kind: int,
) -> float:
    """Item ``code`` of an env: inner segment ``i`` (``code = i``), outer segment ``i``
    (``n_max + i``), both rows of the packed ``segments``, or prop ``k`` (``2 n_max + k``)."""
    if code < 2 * n_max:
        return _seg_hit(o, d, segments[seg_base + code], best)
    k = prop_base + code - 2 * n_max
    return _prop_hit(o, d, prop_pos[k], prop_rot[k], prop_scale[k], prop_kind, best)


@wp.func
def _cell_range(lo: float, hi: float, g0: float, h: float, g: int) -> wp.vec2i:
    """Cells ``[first, last]`` along one axis that the interval ``[lo, hi]`` overlaps."""
    pad = _CELL_EPS * h
    a = wp.clamp(wp.floor((lo - pad - g0) / h), 0.0, float(g - 1))
    b = wp.clamp(wp.floor((hi + pad - g0) / h), 0.0, float(g - 1))
    return wp.vec2i(int(a), int(b))


@wp.func
def _item_box(
    code: int,
    segments: wp.array(dtype=wp.vec4f),
    seg_base: int,
    n_max: int,
    prop_pos: wp.array(dtype=wp.vec3f),
    prop_rot: wp.array(dtype=wp.quatf),
    prop_scale: wp.array(dtype=wp.vec3f),
    prop_base: int,
    prop_kind: int,
) -> wp.vec4f:
    """Plan bounding box ``(min x, min y, max x, max y)`` of item ``code``."""
    if code < 2 * n_max:
        g = segments[seg_base + code]
        return wp.vec4f(
            wp.min(g[0], g[2]), wp.min(g[1], g[3]), wp.max(g[0], g[2]), wp.max(g[1], g[3])
        )
    k = prop_base + code - 2 * n_max
    return _prop_box(prop_pos[k], prop_rot[k], prop_scale[k], prop_kind)


@wp.func
def _item_code(j: int, n: int, n_max: int) -> int:
    """The code of the env's j-th item: inner segments, outer segments, then props."""
    if j < n:
        return j
    if j < 2 * n:
        return n_max + j - n
    return 2 * n_max + j - 2 * n


@wp.func
def _prop_usable(pos: wp.vec3f, rot: wp.quatf, scale: wp.vec3f) -> bool:
    return (
        in_range3(pos)
        and in_range3(scale)
        and in_range(rot[0])
        and in_range(rot[1])
        and in_range(rot[2])
        and in_range(rot[3])
    )


@wp.kernel
def _grid_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    bead_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    prop_pos: wp.array(dtype=wp.vec3f),
    prop_rot: wp.array(dtype=wp.quatf),
    prop_scale: wp.array(dtype=wp.vec3f),
    prop_count: wp.array(dtype=wp.int32),
    # static
    use_seeds: int,
    use_props: int,
    prop_kind: int,
    prop_cap: int,
    n_max: int,
    g: int,
    cap: int,
    # outputs
    status_out: wp.array(dtype=wp.int32),
    key_out: wp.array(dtype=wp.uint32),
    grid_out: wp.array(dtype=wp.vec4f),
    cell_start_inout: wp.array(dtype=wp.int32),
    cell_item_out: wp.array(dtype=wp.int32),
    num_items_out: wp.array(dtype=wp.int32),
    segments_inout: wp.array(dtype=wp.vec4f),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    seed = int(0)
    if use_seeds != 0:
        seed = seeds[e]
    key_out[e] = _stream_key(seed, generation[e])
    n = bead_count[e]
    base = e * n_max
    ok = valid[e] != 0 and n >= 3 and n <= n_max
    if ok:
        for i in range(n):
            if not (in_range2(xy(inner[base + i])) and in_range2(xy(outer[base + i]))):
                ok = False
    m = int(0)
    prop_base = e * prop_cap
    if use_props != 0:
        m = wp.clamp(prop_count[e], 0, prop_cap)
        for k in range(m):
            if not _prop_usable(
                prop_pos[prop_base + k], prop_rot[prop_base + k], prop_scale[prop_base + k]
            ):
                ok = False
    cs = e * (g * g + 1)
    sb = 2 * base
    # the packed segments (a.x, a.y, b.x, b.y): inner i at row i, outer i at row n_max + i
    for i in range(n_max):
        a = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
        b = a
        if ok and i < n:
            j = _next(i, n)
            p = inner[base + i]
            q = inner[base + j]
            a = wp.vec4f(p[0], p[1], q[0], q[1])
            p = outer[base + i]
            q = outer[base + j]
            b = wp.vec4f(p[0], p[1], q[0], q[1])
        segments_inout[sb + i] = a
        segments_inout[sb + n_max + i] = b
    if not ok:
        status_out[e] = _NONE
        num_items_out[e] = 0
        grid_out[e] = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
        bucket_clear(cell_start_inout, cs, g * g)
        return
    items = 2 * n + m
    num_items_out[e] = items
    # the square grid over every item's bounding box
    lo = wp.vec2f(_BIG, _BIG)
    hi = wp.vec2f(-_BIG, -_BIG)
    for j in range(items):
        bb = _item_box(
            _item_code(j, n, n_max),
            segments_inout,
            sb,
            n_max,
            prop_pos,
            prop_rot,
            prop_scale,
            prop_base,
            prop_kind,
        )
        lo = wp.vec2f(wp.min(lo[0], bb[0]), wp.min(lo[1], bb[1]))
        hi = wp.vec2f(wp.max(hi[0], bb[2]), wp.max(hi[1], bb[3]))
    side = wp.max(wp.max(hi[0] - lo[0], hi[1] - lo[1]), 1.0e-6)
    pad = 1.0e-3 * side
    side = side + 2.0 * pad
    h = side / float(g)
    g0 = lo - wp.vec2f(pad, pad)
    grid_out[e] = wp.vec4f(g0[0], g0[1], h, side)
    # the compressed rows of the cells (geometry/buckets.py): count each item in the cells
    # its box overlaps, scan, then fill the items in descending order
    bucket_clear(cell_start_inout, cs, g * g)
    for j in range(items):
        code = _item_code(j, n, n_max)
        bb = _item_box(
            code, segments_inout, sb, n_max, prop_pos, prop_rot, prop_scale, prop_base, prop_kind
        )
        rx = _cell_range(bb[0], bb[2], g0[0], h, g)
        ry = _cell_range(bb[1], bb[3], g0[1], h, g)
        bucket_count(cell_start_inout, cs, g, rx, ry)
    total = bucket_scan(cell_start_inout, cs, g * g)
    if total > cap:
        status_out[e] = _BRUTE  # exact by brute force: the lists would not fit
        return
    status_out[e] = _GRID
    ci = e * cap
    for k in range(items):
        code = _item_code(items - 1 - k, n, n_max)
        bb = _item_box(
            code, segments_inout, sb, n_max, prop_pos, prop_rot, prop_scale, prop_base, prop_kind
        )
        rx = _cell_range(bb[0], bb[2], g0[0], h, g)
        ry = _cell_range(bb[1], bb[3], g0[1], h, g)
        bucket_fill(cell_start_inout, cs, g, rx, ry, cell_item_out, ci, code)


@wp.kernel
def _track_scan_kernel(
    # inputs
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    beams: wp.array(dtype=wp.vec2f),
    status: wp.array(dtype=wp.int32),
    key: wp.array(dtype=wp.uint32),
    step: wp.array(dtype=wp.int32),
    grid: wp.array(dtype=wp.vec4f),
    cell_start: wp.array(dtype=wp.int32),
    cell_item: wp.array(dtype=wp.int32),
    num_items: wp.array(dtype=wp.int32),
    segments: wp.array(dtype=wp.vec4f),
    bead_count: wp.array(dtype=wp.int32),
    prop_pos: wp.array(dtype=wp.vec3f),
    prop_rot: wp.array(dtype=wp.quatf),
    prop_scale: wp.array(dtype=wp.vec3f),
    # static
    num_beams: int,
    prop_kind: int,
    prop_cap: int,
    n_max: int,
    g: int,
    cap: int,
    max_range: float,
    noise_std: float,
    dropout: float,
    # outputs
    distance_out: wp.array(dtype=wp.float32),
    hit_out: wp.array(dtype=wp.int32),
):
    e, b = wp.tid()
    out = e * num_beams + b
    st = status[e]
    pos = position[e]
    rot = orientation[e]
    if st == _NONE or not _pose(pos, rot):
        distance_out[out] = _NAN
        hit_out[out] = 0
        return
    o = xy(clamp3(pos))
    d = _beam(beams, b, heading_of(rot))
    n = bead_count[e]
    sb = 2 * e * n_max
    prop_base = e * prop_cap
    best = float(_BIG)
    if st == _BRUTE:
        for j in range(num_items[e]):
            best = _item_hit(
                _item_code(j, n, n_max),
                o,
                d,
                best,
                segments,
                sb,
                n_max,
                prop_pos,
                prop_rot,
                prop_scale,
                prop_base,
                prop_kind,
            )
    else:
        gb = grid[e]
        h = gb[2]
        side = gb[3]
        # the ray's part inside the grid square, within max_range
        span = _slab(o[0] - (gb[0] + 0.5 * side), d[0], 0.5 * side, 0.0, max_range)
        span = _slab(o[1] - (gb[1] + 0.5 * side), d[1], 0.5 * side, span[0], span[1])
        if span[0] <= span[1]:
            t0 = span[0]
            t_end = span[1]
            ix = int(wp.clamp(wp.floor((o[0] + t0 * d[0] - gb[0]) / h), 0.0, float(g - 1)))
            iy = int(wp.clamp(wp.floor((o[1] + t0 * d[1] - gb[1]) / h), 0.0, float(g - 1)))
            sx = int(0)
            sy = int(0)
            if d[0] > 0.0:
                sx = 1
            elif d[0] < 0.0:
                sx = -1
            if d[1] > 0.0:
                sy = 1
            elif d[1] < 0.0:
                sy = -1
            cs = e * (g * g + 1)
            ci = e * cap
            for _it in range(2 * g + 2):
                c = cs + iy * g + ix
                for k in range(cell_start[c], cell_start[c + 1]):
                    best = _item_hit(
                        cell_item[ci + k],
                        o,
                        d,
                        best,
                        segments,
                        sb,
                        n_max,
                        prop_pos,
                        prop_rot,
                        prop_scale,
                        prop_base,
                        prop_kind,
                    )
                # where the ray leaves this cell along each axis
                tx = float(_BIG)
                ty = float(_BIG)
                if sx != 0:
                    tx = (gb[0] + float(ix + wp.max(sx, 0)) * h - o[0]) / d[0]
                if sy != 0:
                    ty = (gb[1] + float(iy + wp.max(sy, 0)) * h - o[1]) / d[1]
                t_exit = wp.min(tx, ty)
                if best <= t_exit or t_exit > t_end:
                    break
                if tx < ty:
                    ix += sx
                else:
                    iy += sy
                if ix < 0 or ix >= g or iy < 0 or iy >= g:
                    break
    _finish(best, e, b, out, key, step, noise_std, dropout, max_range, distance_out, hit_out)


# ----------------------------------------------------------------------------- gates
@wp.kernel
def _gate_key_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    gate_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    # static
    use_seeds: int,
    # outputs
    status_out: wp.array(dtype=wp.int32),
    key_out: wp.array(dtype=wp.uint32),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    seed = int(0)
    if use_seeds != 0:
        seed = seeds[e]
    key_out[e] = _stream_key(seed, generation[e])
    st = _NONE
    if valid[e] != 0 and gate_count[e] > 0:
        st = _GATES
    status_out[e] = st


@wp.func
def _gate_usable(c: wp.vec3f, rot: wp.quatf, hs: float) -> bool:
    q2 = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2] + rot[3] * rot[3]
    return in_range3(c) and in_range(hs) and finite(q2) and q2 > 0.0


@wp.func
def _frame_hit(
    o: wp.vec3f,
    d: wp.vec3f,
    c: wp.vec3f,
    rot: wp.quatf,
    hs: float,
    th: float,
    dp: float,
    best: float,
) -> float:
    """The four members of a gate frame (gate frame: x forward, y left, z up)."""
    q = wp.normalize(scaled_quat(rot))
    lo = wp.quat_rotate_inv(q, o - c)
    ld = wp.quat_rotate_inv(q, d)
    a = wp.abs(hs)
    m = a + 0.5 * th
    side = wp.vec3f(0.5 * dp, 0.5 * th, a + th)
    bar = wp.vec3f(0.5 * dp, a + th, 0.5 * th)
    best = _box_hit(lo, ld, wp.vec3f(0.0, m, 0.0), side, best)
    best = _box_hit(lo, ld, wp.vec3f(0.0, -m, 0.0), side, best)
    best = _box_hit(lo, ld, wp.vec3f(0.0, 0.0, m), bar, best)
    best = _box_hit(lo, ld, wp.vec3f(0.0, 0.0, -m), bar, best)
    return best


@wp.kernel
def _gate_scan_kernel(
    # inputs
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    beams: wp.array(dtype=wp.vec2f),
    status: wp.array(dtype=wp.int32),
    key: wp.array(dtype=wp.uint32),
    step: wp.array(dtype=wp.int32),
    gate_pos: wp.array(dtype=wp.vec3f),
    gate_rot: wp.array(dtype=wp.quatf),
    gate_half: wp.array(dtype=wp.float32),
    gate_left: wp.array(dtype=wp.vec3f),
    gate_right: wp.array(dtype=wp.vec3f),
    gate_count: wp.array(dtype=wp.int32),
    # static
    num_beams: int,
    g_max: int,
    frames: int,
    post_radius: float,
    frame_thickness: float,
    frame_depth: float,
    max_range: float,
    noise_std: float,
    dropout: float,
    # outputs
    distance_out: wp.array(dtype=wp.float32),
    hit_out: wp.array(dtype=wp.int32),
):
    e, b = wp.tid()
    out = e * num_beams + b
    pos = position[e]
    rot = orientation[e]
    if status[e] == _NONE or not _pose(pos, rot):
        distance_out[out] = _NAN
        hit_out[out] = 0
        return
    p3 = clamp3(pos)
    o = xy(p3)
    d = _beam(beams, b, heading_of(rot))
    d3 = wp.vec3f(d[0], d[1], 0.0)
    n = wp.clamp(gate_count[e], 0, g_max)
    best = float(_BIG)
    for i in range(n):
        k = e * g_max + i
        if frames != 0:
            c = gate_pos[k]
            hs = gate_half[k]
            gr = gate_rot[k]
            if _gate_usable(c, gr, hs):
                # skip a gate whose bounding circle the ray misses or lies beyond the best
                r = 1.5 * (wp.abs(hs) + frame_thickness) + frame_depth
                w = xy(c) - o
                m = wp.dot(w, d)
                q = w - m * d
                if wp.dot(q, q) <= r * r and m - r < best:
                    best = _frame_hit(p3, d3, c, gr, hs, frame_thickness, frame_depth, best)
        else:
            pl = xy(gate_left[k])
            pr = xy(gate_right[k])
            if in_range2(pl):
                best = _disc_hit(o, d, pl, post_radius, best)
            if in_range2(pr):
                best = _disc_hit(o, d, pr, post_radius, best)
    _finish(best, e, b, out, key, step, noise_std, dropout, max_range, distance_out, hit_out)


# ----------------------------------------------------------------------------- runtime state
@wp.kernel
def _advance_kernel(
    # outputs
    step_inout: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    s = step_inout[e]
    if s < _STEP_MAX:
        step_inout[e] = s + 1  # saturates: never wraps


@wp.kernel
def _reset_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    # static
    num_beams: int,
    # outputs
    step_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    hit_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    step_out[e] = 0
    for b in range(num_beams):
        distance_out[e * num_beams + b] = _NAN
        hit_out[e * num_beams + b] = 0
