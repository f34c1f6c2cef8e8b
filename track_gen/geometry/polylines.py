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
def resample_closed_box(
    src: wp.array(dtype=wp.vec2f),
    src_base: int,
    n_src: int,
    seg_len: wp.array(dtype=wp.float32),
    len_base: int,
    dst: wp.array(dtype=wp.vec2f),
    dst_base: int,
    n_dst: int,
) -> wp.vec4f:
    """:func:`resample_closed` bit for bit, faster; returns the bounding box
    ``(lo x, lo y, hi x, hi y)`` of the written points as :func:`bbox_normalize` finds it.

    ``seg_len[len_base .. len_base + n_src)`` is scratch: each segment's length is computed
    once (the perimeter pass) and read back by the walk instead of recomputed there.
    """
    total = wp.float64(0.0)
    for i in range(n_src):
        j = i + 1
        if j == n_src:
            j = 0
        sl = wp.length(src[src_base + j] - src[src_base + i])
        seg_len[len_base + i] = sl
        total += wp.float64(sl)
    arc_den = wp.float64(n_dst)
    j = int(0)
    acc = wp.float64(0.0)
    seg = wp.float64(seg_len[len_base])
    lo = wp.vec2f(0.0, 0.0)
    hi = wp.vec2f(0.0, 0.0)
    for k in range(n_dst):
        target = wp.float64(k) * total / arc_den
        while acc + seg < target and j < n_src - 1:
            acc += seg
            j += 1
            seg = wp.float64(seg_len[len_base + j])
        jn = j + 1
        if jn == n_src:
            jn = 0
        t = float((target - acc) / wp.max(seg, wp.float64(1.0e-12)))
        t = wp.clamp(t, 0.0, 1.0)
        q = src[src_base + j] + t * (src[src_base + jn] - src[src_base + j])
        dst[dst_base + k] = q
        if k == 0:
            lo = q
            hi = q
        lo = wp.min(lo, q)
        hi = wp.max(hi, q)
    return wp.vec4f(lo[0], lo[1], hi[0], hi[1])


@wp.func
def _knot_dt(a: wp.vec2f, b: wp.vec2f) -> float:
    return wp.max(wp.sqrt(wp.length(b - a)), 1.0e-4)


@wp.func
def _catmull_rom_span(
    p0: wp.vec2f,
    p1: wp.vec2f,
    p2: wp.vec2f,
    p3: wp.vec2f,
    t1: float,
    t2: float,
    t3: float,
    u: float,
) -> wp.vec2f:
    """Point at fraction u of the span p1 -> p2 given its knot times t1 < t2 < t3 (t0 = 0)."""
    t = t1 + u * (t2 - t1)
    a1 = ((t1 - t) * p0 + t * p1) / t1
    a2 = ((t2 - t) * p1 + (t - t1) * p2) / (t2 - t1)
    a3 = ((t3 - t) * p2 + (t - t2) * p3) / (t3 - t2)
    b1 = ((t2 - t) * a1 + t * a2) / t2
    b2 = ((t3 - t) * a2 + (t - t1) * a3) / (t3 - t1)
    return ((t2 - t) * b1 + (t - t1) * b2) / (t2 - t1)


@wp.func
def _catmull_rom_axis4(
    c0: float,
    c1: float,
    c2: float,
    c3: float,
    t1: float,
    t2: float,
    t3: float,
    t: wp.vec4f,
) -> wp.vec4f:
    """One coordinate of :func:`_catmull_rom_span` at four knot times ``t`` (the same float
    operations per lane, on four lanes at once)."""
    t1v = wp.vec4f(t1)
    t2v = wp.vec4f(t2)
    t3v = wp.vec4f(t3)
    a1 = ((t1v - t) * c0 + t * c1) / t1
    a2 = ((t2v - t) * c1 + (t - t1v) * c2) / (t2 - t1)
    a3 = ((t3v - t) * c2 + (t - t2v) * c3) / (t3 - t2)
    b1 = (wp.cw_mul(t2v - t, a1) + wp.cw_mul(t, a2)) / t2
    b2 = (wp.cw_mul(t3v - t, a2) + wp.cw_mul(t - t1v, a3)) / (t3 - t1)
    return (wp.cw_mul(t2v - t, b1) + wp.cw_mul(t - t1v, b2)) / (t2 - t1)


@wp.func
def catmull_rom_centripetal(
    p0: wp.vec2f, p1: wp.vec2f, p2: wp.vec2f, p3: wp.vec2f, u: float
) -> wp.vec2f:
    """Point at fraction u in [0, 1) of the centripetal Catmull-Rom segment p1 -> p2."""
    t1 = _knot_dt(p0, p1)
    t2 = t1 + _knot_dt(p1, p2)
    t3 = t2 + _knot_dt(p2, p3)
    return _catmull_rom_span(p0, p1, p2, p3, t1, t2, t3, u)


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
    per segment (segment end excluded) into ``dense_out[db .. db + k*npseg)``.

    Each point is :func:`catmull_rom_centripetal`'s bit for bit: the span's knot times are
    computed once per span, and four points at a time go through the same float operations
    lane by lane (:func:`_catmull_rom_axis4`)."""
    for i in range(k):
        p0 = knots[kb + (i + k - 1) % k]
        p1 = knots[kb + i]
        p2 = knots[kb + (i + 1) % k]
        p3 = knots[kb + (i + 2) % k]
        t1 = _knot_dt(p0, p1)
        t2 = t1 + _knot_dt(p1, p2)
        t3 = t2 + _knot_dt(p2, p3)
        # four points at a time: the divisions of four points share vector divisions
        for g in range((npseg + 3) // 4):
            s0 = 4 * g
            u = wp.cw_div(
                wp.vec4f(float(s0), float(s0 + 1), float(s0 + 2), float(s0 + 3)),
                wp.vec4f(float(npseg)),
            )
            t = wp.vec4f(t1) + u * (t2 - t1)
            x = _catmull_rom_axis4(p0[0], p1[0], p2[0], p3[0], t1, t2, t3, t)
            y = _catmull_rom_axis4(p0[1], p1[1], p2[1], p3[1], t1, t2, t3, t)
            for lane in range(wp.min(4, npseg - s0)):
                dense_out[db + i * npseg + s0 + lane] = wp.vec2f(x[lane], y[lane])


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


# Odd polynomial atan(z) ~ z * P(z^2) on [0, 1] (coefficients fitted near-minimax); evaluated
# in float32 as _atan_unit writes it, its error is below 1.8e-6 for every float32 z in [0, 1]
# (checked exhaustively against float64 arctan).
ATAN_C0 = wp.constant(0.9999772310256958)
ATAN_C1 = wp.constant(-0.33262285590171814)
ATAN_C2 = wp.constant(0.19354061782360077)
ATAN_C3 = wp.constant(-0.11642708629369736)
ATAN_C4 = wp.constant(0.05264800041913986)
ATAN_C5 = wp.constant(-0.011719386093318462)
HALF_PI = wp.constant(1.5707963267949)
#: Bound on |estimate - wp.atan2| of :func:`_turn_estimate` (polynomial error 2e-6, the
#: division, the pi/2 and pi reflections and atan2f's own rounding well inside it).
TURN_TOL = wp.constant(1.0e-5)


@wp.func
def _atan_unit(z: float) -> float:
    z2 = z * z
    p = ATAN_C5 * z2 + ATAN_C4
    p = p * z2 + ATAN_C3
    p = p * z2 + ATAN_C2
    p = p * z2 + ATAN_C1
    p = p * z2 + ATAN_C0
    return z * p


@wp.func
def _turn_estimate(y: float, x: float) -> float:
    """``|atan2(y, x)|`` within ``TURN_TOL``, for finite ``x, y`` not both zero."""
    ax = wp.abs(x)
    ay = wp.abs(y)
    r = float(0.0)
    if ay <= ax:
        r = _atan_unit(ay / ax)
    else:
        r = HALF_PI - _atan_unit(ax / ay)
    if x < 0.0:
        r = PI - r
    return r


@wp.func
def atan2_estimate(y: float, x: float) -> float:
    """``wp.atan2(y, x)`` within ``TURN_TOL`` as a direction, for finite ``x, y`` not both
    zero (for ``y = -0``, ``x < 0`` it gives ``+pi`` where atan2 gives ``-pi``)."""
    r = _turn_estimate(y, x)
    if y < 0.0:
        r = -r
    return r


@wp.func
def _turn_lo(hi: float) -> float:
    """Lower bound of a chunk's float turning sum from the upper bound ``hi`` that
    :func:`_chunk_stats` stores: each vertex's bound exceeds its turning by at most
    ``2 TURN_TOL``, and the two float sums of up to CHUNK non-negative terms differ from the
    exact ones by less than ``4e-6`` relative (the margins are several times that)."""
    return hi * (1.0 - 1.0e-5) - 3.0 * TURN_TOL * float(CHUNK)


@wp.func
def _chunk_stats(
    buf: wp.array(dtype=wp.vec2f),
    b: int,
    n: int,
    nch: int,
    boxes: wp.array(dtype=wp.vec4f),
    turns: wp.array(dtype=wp.float32),
    sb: int,
) -> wp.vec2f:
    """Per chunk of CHUNK segments: bounding box, and an upper bound ``turns[c]`` of the
    absolute turning at its vertices as :func:`_exact_turns` sums it (:func:`_turn_lo` gives
    the matching lower bound). Returns the bounds ``(lo, hi)`` of the total.

    Each vertex's turning ``|atan2(cross, dot)|`` is bounded by a polynomial estimate
    ``+ TURN_TOL`` (the exact value where the estimate does not apply: a zero or non-finite
    edge); the bounds are summed in the order :func:`_exact_turns` sums the exact values, so
    by monotone rounding they bound those float sums."""
    tot_lo = float(0.0)
    tot_hi = float(0.0)
    e0 = buf[b] - buf[b + n - 1]
    for c in range(nch):
        a0 = c * CHUNK
        a1 = wp.min(a0 + CHUNK, n)
        lo = buf[b + a0]
        hi = lo
        shi = float(0.0)
        for k in range(a0, a1):
            k1 = k + 1
            if k1 == n:
                k1 = 0
            pn = buf[b + k1]
            lo = wp.min(lo, pn)
            hi = wp.max(hi, pn)
            e1 = pn - buf[b + k]
            y = e0[0] * e1[1] - e0[1] * e1[0]
            x = wp.dot(e0, e1)
            if wp.isfinite(x + y) and (x != 0.0 or y != 0.0):
                shi += _turn_estimate(y, x) + TURN_TOL
            else:
                shi += wp.abs(wp.atan2(y, x))
            e0 = e1
        boxes[sb + c] = wp.vec4f(lo[0], lo[1], hi[0], hi[1])
        turns[sb + c] = shi
        tot_lo += _turn_lo(shi)
        tot_hi += shi
    return wp.vec2f(tot_lo, tot_hi)


@wp.func
def _exact_turns(
    buf: wp.array(dtype=wp.vec2f),
    b: int,
    n: int,
    nch: int,
    turns: wp.array(dtype=wp.float32),
    sb: int,
) -> float:
    """Per chunk, the absolute turning at its vertices into ``turns[c]``; returns the loop's
    total absolute turning (float32 sums in vertex, then chunk order)."""
    total = float(0.0)
    for c in range(nch):
        a0 = c * CHUNK
        a1 = wp.min(a0 + CHUNK, n)
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
            e0 = pk - buf[b + kp]
            e1 = pn - pk
            tsum += wp.abs(wp.atan2(e0[0] * e1[1] - e0[1] * e1[0], wp.dot(e0, e1)))
        turns[sb + c] = tsum
        total += tsum
    return total


@wp.func
def _segment_crossings(
    buf: wp.array(dtype=wp.vec2f),
    b: int,
    n: int,
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    same: int,
    budget: int,
) -> int:
    """Proper crossings (:func:`segments_cross`) of the segments starting at ``a0 .. a1`` with
    those starting at ``b0 .. b1`` (``same``: one chunk, each pair once), non-adjacent pairs
    only, counted up to ``budget``.

    Per segment ``ab``, the orientations of the other chunk's points against it are computed
    once per point (each is shared by the two segments ending there) and the tolerance only
    where two consecutive ones differ in sign, which :func:`segments_cross` needs: the same
    float operations on the same values as ``segments_cross``, so the same verdicts.
    """
    count = int(0)
    for i in range(a0, a1):
        if count >= budget:
            return budget
        i1 = i + 1
        if i1 == n:
            i1 = 0
        pa = buf[b + i]
        pb = buf[b + i1]
        ab = pb - pa
        tol_a = 1.0e-9 * wp.length(ab)
        jstart = b0
        if same != 0:
            jstart = i + 2
        # segment j is buf[j] -> buf[j + 1]; skip the ones adjacent to segment i
        jlo = wp.max(jstart, i + 2)
        jhi = wp.min(b1, i + n - 1)
        if jlo >= jhi:
            continue
        pc = buf[b + jlo]
        oc = cross2(ab, pc - pa)
        for j in range(jlo, jhi):
            j1 = j + 1
            if j1 == n:
                j1 = 0
            pd = buf[b + j1]
            od = cross2(ab, pd - pa)
            if (oc > 0.0 and od < 0.0) or (oc < 0.0 and od > 0.0):
                cd = pd - pc
                tol = tol_a * wp.length(cd)
                if (oc > tol and od < -tol) or (oc < -tol and od > tol):
                    o3 = cross2(cd, pa - pc)
                    o4 = cross2(cd, pb - pc)
                    if (o3 > tol and o4 < -tol) or (o3 < -tol and o4 > tol):
                        count += 1
            pc = pd
            oc = od
    return wp.min(count, budget)


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
    counted up to ``stop_at`` (the count returned is ``min(crossings, stop_at)``).

    The loop is cut into chunks of CHUNK segments. A chunk pair is skipped when the chunks'
    bounding boxes are disjoint or when an arc joining them (``inner``: chunks ``ci .. cj``,
    ``outer``: the rest plus both ends) turns by less than ``pi - 1e-3``: such an arc is
    monotone along its mean direction. The turnings are the float32 sums of
    ``|atan2(cross, dot)|`` per vertex; they are bracketed first (:func:`_chunk_stats`), and
    computed exactly (:func:`_exact_turns`, for the rest of the loop) only once a bracket
    cannot decide a pair, so every pair gets the verdict the exact sums give.
    """
    nch = (n + CHUNK - 1) // CHUNK
    tot = _chunk_stats(buf, b, n, nch, boxes, turns, sb)
    thr = PI - 1.0e-3
    exact = int(0)  # 1 once turns[] holds the exact turnings
    total = float(0.0)
    count = int(0)
    for ci in range(nch):
        if count >= stop_at:
            break
        a0 = ci * CHUNK
        a1 = wp.min(a0 + CHUNK, n)
        ba = boxes[sb + ci]
        in_lo = float(0.0)  # bounds of the turning of chunks ci .. cj
        in_hi = float(0.0)
        inner = float(0.0)  # its exact value, kept once exact == 1
        for cj in range(ci, nch):
            if count >= stop_at:
                break
            tcj = turns[sb + cj]
            if exact == 1:
                inner += tcj
            else:
                in_lo += _turn_lo(tcj)
                in_hi += tcj
            bb = boxes[sb + cj]
            if ba[0] > bb[2] or bb[0] > ba[2] or ba[1] > bb[3] or bb[1] > ba[3]:
                continue
            decided = int(0)
            if exact == 0:
                tci = turns[sb + ci]
                out_lo = tot[0] - in_hi + _turn_lo(tci) + _turn_lo(tcj)
                out_hi = tot[1] - in_lo + tci + tcj
                if ci == 0 and cj == nch - 1:
                    # inner is the total itself (the same float sum), so outer = t_0 + t_last
                    out_lo = _turn_lo(tci) + _turn_lo(tcj)
                    out_hi = tci + tcj
                if in_hi < thr or out_hi < thr:
                    continue
                if in_lo >= thr and out_lo >= thr:
                    decided = 1
                else:
                    total = _exact_turns(buf, b, n, nch, turns, sb)
                    exact = 1
                    inner = float(0.0)
                    for c in range(ci, cj + 1):
                        inner += turns[sb + c]
            if decided == 0:
                outer = total - inner + turns[sb + ci] + turns[sb + cj]
                if inner < thr or outer < thr:
                    continue
            b0 = cj * CHUNK
            b1 = wp.min(b0 + CHUNK, n)
            same = int(0)
            if cj == ci:
                same = 1
            count += _segment_crossings(buf, b, n, a0, a1, b0, b1, same, stop_at - count)
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
def sort_by_angle_keyed(
    pts: wp.array(dtype=wp.vec2f),
    base: int,
    n: int,
    center: wp.vec2f,
    keys: wp.array(dtype=wp.float32),
    kbase: int,
):
    """:func:`sort_by_angle` bit for bit (the same permutation) with each point's angle
    computed once instead of at every comparison; afterwards ``keys[kbase + i]`` holds the
    angle ``atan2`` of ``pts[base + i] - center``."""
    for i in range(n):
        p = pts[base + i]
        keys[kbase + i] = wp.atan2(p[1] - center[1], p[0] - center[0])
    for i in range(1, n):
        p = pts[base + i]
        a = keys[kbase + i]
        j = i - 1
        while j >= 0:
            qa = keys[kbase + j]
            if qa <= a:
                break
            pts[base + j + 1] = pts[base + j]
            keys[kbase + j + 1] = qa
            j -= 1
        pts[base + j + 1] = p
        keys[kbase + j + 1] = a


@wp.func
def bbox_scale(pts: wp.array(dtype=wp.vec2f), base: int, n: int, box: wp.vec4f, extent: float):
    """Centre the bounding box ``box = (lo x, lo y, hi x, hi y)`` of the loop on the origin
    and scale its longest side to ``extent`` (the second half of :func:`bbox_normalize`)."""
    lo = wp.vec2f(box[0], box[1])
    hi = wp.vec2f(box[2], box[3])
    mid = 0.5 * (lo + hi)
    side = wp.max(hi[0] - lo[0], hi[1] - lo[1])
    s = extent / wp.max(side, 1.0e-12)
    for i in range(n):
        pts[base + i] = (pts[base + i] - mid) * s


@wp.func
def bbox_normalize(pts: wp.array(dtype=wp.vec2f), base: int, n: int, extent: float):
    """Centre the loop's bounding box on the origin and scale its longest side to ``extent``."""
    lo = pts[base]
    hi = lo
    for i in range(n):
        lo = wp.min(lo, pts[base + i])
        hi = wp.max(hi, pts[base + i])
    bbox_scale(pts, base, n, wp.vec4f(lo[0], lo[1], hi[0], hi[1]), extent)


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
