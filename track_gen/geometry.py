"""Warp building blocks shared by stages: closed-polyline resampling, crossings, curvature.

The one crossing counter is :func:`count_crossings` (with :func:`has_self_crossing` on top of
it); its per-env scratch comes from :class:`CrossingScratch`. All functions work on one env's
rows of a flat array: ``pts[base + i]`` for ``i < n``,
the loop closing from ``n - 1`` back to ``0``.
"""

from __future__ import annotations

import warp as wp

wp.set_module_options({"enable_backward": False})

PI = wp.constant(3.14159265358979)
TWO_PI = wp.constant(6.28318530717959)
NAN = wp.constant(float("nan"))
#: Segments per chunk of the crossing counter.
CHUNK = wp.constant(16)


class CrossingScratch:
    """Per-env scratch of :func:`count_crossings` for loops of up to ``max_points`` points,
    allocated through a stage's workspace (``ws.zeros``).

    Pass ``boxes``, ``turns`` to the kernel and ``sb = e * nch`` to the function.
    """

    def __init__(self, ws, max_points: int, owner: str):
        E = ws.layout.num_envs
        self.nch = (int(max_points) + 15) // 16
        self.boxes = ws.zeros(E * self.nch, wp.vec4f, f"{owner} crossing boxes")
        self.turns = ws.zeros(E * self.nch, wp.float32, f"{owner} crossing turns")


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
def _chunk_stats(
    buf: wp.array(dtype=wp.vec2f),
    b: int,
    n: int,
    nch: int,
    boxes: wp.array(dtype=wp.vec4f),
    turns: wp.array(dtype=wp.float32),
    sb: int,
) -> float:
    """Per chunk of CHUNK segments: bounding box and absolute turning at its vertices.

    Returns the loop's total absolute turning."""
    total = float(0.0)
    for c in range(nch):
        a0 = c * CHUNK
        a1 = wp.min(a0 + CHUNK, n)
        lo = buf[b + a0]
        hi = lo
        tsum = float(0.0)
        for k in range(a0, a1):
            kp = k - 1
            if kp < 0:
                kp = n - 1
            k1 = k + 1
            if k1 == n:
                k1 = 0
            pk = buf[b + k]
            pn = buf[b + k1]
            lo = wp.min(lo, pn)
            hi = wp.max(hi, pn)
            e0 = pk - buf[b + kp]
            e1 = pn - pk
            tsum += wp.abs(wp.atan2(e0[0] * e1[1] - e0[1] * e1[0], wp.dot(e0, e1)))
        boxes[sb + c] = wp.vec4f(lo[0], lo[1], hi[0], hi[1])
        turns[sb + c] = tsum
        total += tsum
    return total


@wp.func
def count_crossings(
    buf: wp.array(dtype=wp.vec2f),
    b: int,
    n: int,
    boxes: wp.array(dtype=wp.vec4f),
    turns: wp.array(dtype=wp.float32),
    sb: int,
    stop_at: int,
) -> int:
    """Proper crossings between non-adjacent segments of the closed loop ``buf[b .. b+n)``,
    counted up to ``stop_at`` (the count returned is ``min(crossings, stop_at)``)."""
    nch = (n + CHUNK - 1) // CHUNK
    total = _chunk_stats(buf, b, n, nch, boxes, turns, sb)
    count = int(0)
    for ci in range(nch):
        if count >= stop_at:
            break
        a0 = ci * CHUNK
        a1 = wp.min(a0 + CHUNK, n)
        ba = boxes[sb + ci]
        inner = float(0.0)  # turning of chunks ci .. cj
        for cj in range(ci, nch):
            if count >= stop_at:
                break
            inner += turns[sb + cj]
            bb = boxes[sb + cj]
            if ba[0] > bb[2] or bb[0] > ba[2] or ba[1] > bb[3] or bb[1] > ba[3]:
                continue
            # an arc turning less than pi is monotone along its mean direction: no crossing
            outer = total - inner + turns[sb + ci] + turns[sb + cj]
            if inner < PI - 1.0e-3 or outer < PI - 1.0e-3:
                continue
            b0 = cj * CHUNK
            b1 = wp.min(b0 + CHUNK, n)
            for i in range(a0, a1):
                i1 = i + 1
                if i1 == n:
                    i1 = 0
                pa = buf[b + i]
                pb = buf[b + i1]
                jstart = b0
                if cj == ci:
                    jstart = i + 2
                for j in range(jstart, b1):
                    dij = j - i
                    if dij < 2 or dij > n - 2:
                        continue
                    j1 = j + 1
                    if j1 == n:
                        j1 = 0
                    if segments_cross(pa, pb, buf[b + j], buf[b + j1]):
                        count += 1
            if count > stop_at:
                count = stop_at
    return count


@wp.func
def has_self_crossing(
    pts: wp.array(dtype=wp.vec2f),
    base: int,
    n: int,
    boxes: wp.array(dtype=wp.vec4f),
    turns: wp.array(dtype=wp.float32),
    sb: int,
) -> bool:
    """True when two non-adjacent segments of the closed loop properly cross
    (:func:`count_crossings` stopped at the first crossing; scratch as there)."""
    return count_crossings(pts, base, n, boxes, turns, sb, 1) > 0


@wp.func
def centroid(pts: wp.array(dtype=wp.vec2f), base: int, n: int) -> wp.vec2f:
    """Mean of the ``n`` points."""
    c = wp.vec2f(0.0, 0.0)
    for i in range(n):
        c += pts[base + i]
    return c / float(wp.max(n, 1))


@wp.func
def sort_by_angle(pts: wp.array(dtype=wp.vec2f), base: int, n: int, center: wp.vec2f):
    """Counter-clockwise insertion sort of ``n`` points by their angle around ``center``."""
    for i in range(1, n):
        p = pts[base + i]
        a = wp.atan2(p[1] - center[1], p[0] - center[0])
        j = i - 1
        while j >= 0:
            q = pts[base + j]
            if wp.atan2(q[1] - center[1], q[0] - center[0]) <= a:
                break
            pts[base + j + 1] = q
            j -= 1
        pts[base + j + 1] = p


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
