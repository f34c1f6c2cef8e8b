"""Warp building blocks shared by stages: closed-polyline resampling, crossings, curvature.

All functions work on one env's rows of a flat array: ``pts[base + i]`` for ``i < n``,
the loop closing from ``n - 1`` back to ``0``.
"""

from __future__ import annotations

import warp as wp

wp.set_module_options({"enable_backward": False})

PI = wp.constant(3.14159265358979)
TWO_PI = wp.constant(6.28318530717959)
NAN = wp.constant(float("nan"))


@wp.func
def wrap_angle(a: float) -> float:
    """Wrap an angle in radians to [-pi, pi)."""
    return a - TWO_PI * wp.floor((a + PI) / TWO_PI)


@wp.func
def cross2(a: wp.vec2f, b: wp.vec2f) -> float:
    return a[0] * b[1] - a[1] * b[0]


@wp.func
def nan_vec2() -> wp.vec2f:
    return wp.vec2f(NAN, NAN)


@wp.func
def closed_length(pts: wp.array(dtype=wp.vec2f), base: int, n: int) -> wp.float64:
    """Perimeter of the closed loop (float64 accumulation)."""
    total = wp.float64(0.0)
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        total += wp.float64(wp.length(pts[base + j] - pts[base + i]))
    return total


@wp.func
def emit_along_loop(
    src: wp.array(dtype=wp.vec2f),
    src_base: int,
    n_src: int,
    dst: wp.array(dtype=wp.vec2f),
    dst_base: int,
    n_out: int,
    arc_num: wp.float64,
    arc_den: wp.float64,
):
    """Write ``n_out`` points of the closed loop ``src`` at arc ``k * arc_num / arc_den``
    (k = 0 .. n_out-1; float64 arc, one forward walk, linear interpolation)."""
    j = int(0)
    acc = wp.float64(0.0)
    seg = wp.float64(wp.length(src[src_base + 1] - src[src_base]))
    for k in range(n_out):
        target = wp.float64(k) * arc_num / arc_den
        while acc + seg < target and j < n_src - 1:
            acc += seg
            j += 1
            jn = j + 1
            if jn == n_src:
                jn = 0
            seg = wp.float64(wp.length(src[src_base + jn] - src[src_base + j]))
        jn = j + 1
        if jn == n_src:
            jn = 0
        t = float((target - acc) / wp.max(seg, wp.float64(1.0e-12)))
        t = wp.clamp(t, 0.0, 1.0)
        dst[dst_base + k] = src[src_base + j] + t * (src[src_base + jn] - src[src_base + j])


@wp.func
def resample_closed(
    src: wp.array(dtype=wp.vec2f),
    src_base: int,
    n_src: int,
    dst: wp.array(dtype=wp.vec2f),
    dst_base: int,
    n_dst: int,
):
    """Arc-uniform resampling of a closed loop: ``dst[k]`` at arc ``k * L / n_dst``."""
    total = closed_length(src, src_base, n_src)
    emit_along_loop(src, src_base, n_src, dst, dst_base, n_dst, total, wp.float64(n_dst))


@wp.func
def _knot_dt(a: wp.vec2f, b: wp.vec2f) -> float:
    return wp.max(wp.sqrt(wp.length(b - a)), 1.0e-4)


@wp.func
def catmull_rom_centripetal(
    p0: wp.vec2f, p1: wp.vec2f, p2: wp.vec2f, p3: wp.vec2f, u: float
) -> wp.vec2f:
    """Point at fraction u in [0, 1) of the centripetal Catmull-Rom segment p1 -> p2."""
    t1 = _knot_dt(p0, p1)
    t2 = t1 + _knot_dt(p1, p2)
    t3 = t2 + _knot_dt(p2, p3)
    t = t1 + u * (t2 - t1)
    a1 = ((t1 - t) * p0 + t * p1) / t1
    a2 = ((t2 - t) * p1 + (t - t1) * p2) / (t2 - t1)
    a3 = ((t3 - t) * p2 + (t - t2) * p3) / (t3 - t2)
    b1 = ((t2 - t) * a1 + t * a2) / t2
    b2 = ((t3 - t) * a2 + (t - t1) * a3) / (t3 - t1)
    return ((t2 - t) * b1 + (t - t1) * b2) / (t2 - t1)


@wp.func
def catmull_rom_closed(
    knots: wp.array(dtype=wp.vec2f),
    kb: int,
    k: int,
    npseg: int,
    dense_out: wp.array(dtype=wp.vec2f),
    db: int,
):
    """Sample the closed centripetal Catmull-Rom loop through ``k`` knots: ``npseg`` points
    per segment (segment end excluded) into ``dense_out[db .. db + k*npseg)``."""
    for i in range(k):
        p0 = knots[kb + (i + k - 1) % k]
        p1 = knots[kb + i]
        p2 = knots[kb + (i + 1) % k]
        p3 = knots[kb + (i + 2) % k]
        for s in range(npseg):
            u = float(s) / float(npseg)
            dense_out[db + i * npseg + s] = catmull_rom_centripetal(p0, p1, p2, p3, u)


@wp.func
def segments_cross(a: wp.vec2f, b: wp.vec2f, c: wp.vec2f, d: wp.vec2f) -> bool:
    """Proper crossing of segments ab and cd (touching or collinear pairs do not count)."""
    tol = 1.0e-9 * wp.length(b - a) * wp.length(d - c)
    o1 = cross2(b - a, c - a)
    o2 = cross2(b - a, d - a)
    o3 = cross2(d - c, a - c)
    o4 = cross2(d - c, b - c)
    s1 = (o1 > tol and o2 < -tol) or (o1 < -tol and o2 > tol)
    s2 = (o3 > tol and o4 < -tol) or (o3 < -tol and o4 > tol)
    return s1 and s2


@wp.func
def chunk_bounds(pts: wp.array(dtype=wp.vec2f), base: int, n: int, c0: int, c1: int) -> wp.vec4f:
    """(xmin, ymin, xmax, ymax) of the segments starting at c0..c1-1 (closing wrap)."""
    lo = pts[base + c0]
    hi = lo
    for i in range(c0, c1 + 1):
        j = i
        if j >= n:
            j = j - n
        p = pts[base + j]
        lo = wp.min(lo, p)
        hi = wp.max(hi, p)
    return wp.vec4f(lo[0], lo[1], hi[0], hi[1])


@wp.func
def has_self_crossing(pts: wp.array(dtype=wp.vec2f), base: int, n: int) -> bool:
    """True when two non-adjacent segments of the closed loop properly cross.

    Segments are grouped in chunks of 16; only pairs of chunks whose bounding boxes overlap
    are tested segment by segment.
    """
    CH = int(16)
    nch = (n + CH - 1) // CH
    for ci in range(nch):
        a0 = ci * CH
        a1 = wp.min(a0 + CH, n)
        ba = chunk_bounds(pts, base, n, a0, a1)
        for cj in range(ci, nch):
            b0 = cj * CH
            b1 = wp.min(b0 + CH, n)
            bb = chunk_bounds(pts, base, n, b0, b1)
            if ba[0] > bb[2] or bb[0] > ba[2] or ba[1] > bb[3] or bb[1] > ba[3]:
                continue
            for i in range(a0, a1):
                i1 = i + 1
                if i1 == n:
                    i1 = 0
                jstart = b0
                if cj == ci:
                    jstart = i + 2
                for j in range(jstart, b1):
                    # skip neighbours (circular index distance < 2)
                    dij = j - i
                    if dij < 0:
                        dij = -dij
                    if dij < 2 or dij > n - 2:
                        continue
                    j1 = j + 1
                    if j1 == n:
                        j1 = 0
                    if segments_cross(pts[base + i], pts[base + i1], pts[base + j], pts[base + j1]):
                        return True
    return False


@wp.func
def bbox_normalize(pts: wp.array(dtype=wp.vec2f), base: int, n: int, extent: float):
    """Centre the loop's bounding box on the origin and scale its longest side to ``extent``."""
    lo = pts[base]
    hi = lo
    for i in range(n):
        lo = wp.min(lo, pts[base + i])
        hi = wp.max(hi, pts[base + i])
    mid = 0.5 * (lo + hi)
    side = wp.max(hi[0] - lo[0], hi[1] - lo[1])
    s = extent / wp.max(side, 1.0e-12)
    for i in range(n):
        pts[base + i] = (pts[base + i] - mid) * s


@wp.func
def menger_curvature(a: wp.vec2f, b: wp.vec2f, c: wp.vec2f) -> float:
    """Unsigned curvature (1/radius) of the circle through a, b, c; 0 for collinear points."""
    la = wp.length(b - a)
    lb = wp.length(c - b)
    lc = wp.length(c - a)
    den = la * lb * lc
    if den <= 1.0e-20:
        return 0.0
    return 2.0 * wp.abs(cross2(b - a, c - a)) / den


@wp.func
def safe_normalize(v: wp.vec2f) -> wp.vec2f:
    return v / wp.max(wp.length(v), 1.0e-8)


@wp.func
def all_finite(pts: wp.array(dtype=wp.vec2f), base: int, n: int) -> bool:
    for i in range(n):
        p = pts[base + i]
        if not (wp.isfinite(p[0]) and wp.isfinite(p[1])):
            return False
    return True
