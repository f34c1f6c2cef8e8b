"""Closed centripetal Catmull-Rom splines through a loop of knots."""

from __future__ import annotations

import warp as wp

wp.set_module_options({"enable_backward": False})


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
