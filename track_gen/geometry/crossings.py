"""Crossings of closed loops: the one crossing counter :func:`count_crossings` (with
:func:`has_self_crossing` on top of it), its per-env scratch :class:`CrossingScratch`, the
segment test :func:`segments_cross` and the turning estimates the counter prunes with.

A loop is one env's rows of a flat array: ``pts[base + i]`` for ``i < n``, closing from
``n - 1`` back to ``0``.
"""

from __future__ import annotations

import warp as wp

from .vectors import HALF_PI, PI, cross2

wp.set_module_options({"enable_backward": False})

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
            y = cross2(e0, e1)
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
def ring_neighbours(i: int, n: int):
    """The indices before and after ``i`` on a closed loop of ``n`` points (``n - 1`` before
    0, 0 after ``n - 1``)."""
    ip = i - 1
    if ip < 0:
        ip = n - 1
    inx = i + 1
    if inx == n:
        inx = 0
    return ip, inx


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
            kp, k1 = ring_neighbours(k, n)
            pk = buf[b + k]
            pn = buf[b + k1]
            e0 = pk - buf[b + kp]
            e1 = pn - pk
            tsum += wp.abs(wp.atan2(cross2(e0, e1), wp.dot(e0, e1)))
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
