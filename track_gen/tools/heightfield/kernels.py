"""Kernels of the height-field bake (see :mod:`track_gen.tools.heightfield`).

Three launches per bake, each skipping the envs whose mask is 0: the frame (one thread per
env: the grid's origin, cell and fill value), the fill (one thread per grid row:
``tools.shared.fill_grid_kernel``, shared with the SDF bake) and the
raster (one thread per env: every quad of the band, row by row over its own span). The band's
inside test is the band collider's even-odd rule (:mod:`~track_gen.tools.shared`), evaluated with
the same expressions as the SDF bake (a texel is on the road here exactly when the collider's
SDF texel is inside the band, for the same resolution and margin).
"""

from __future__ import annotations

import warp as wp

from ..shared import band_beads as _band_beads
from ..shared import border_box, square_grid
from ..shared import crosses_right_of as _crosses_right_of
from ..shared import next_bead as _next
from ..shared import quad_row_crosses as _quad_row_crosses
from ..shared import slope as _slope
from ..shared import xy as _xy

wp.set_module_options({"enable_backward": False})

_NAN = wp.constant(float("nan"))
_BIG = wp.constant(3.0e38)


@wp.func
def _cross2(x: wp.vec2f, y: wp.vec2f) -> float:
    return x[0] * y[1] - x[1] * y[0]


@wp.func
def _rung_fit(
    p: wp.vec2f, a: wp.vec2f, b: wp.vec2f, c: wp.vec2f, d: wp.vec2f, v: float
) -> wp.vec3f:
    """``(u, v, d2)``: the rung of the quad at ``v`` (clamped to [0, 1]) runs from
    ``lerp(a, d, v)`` (inner side) to ``lerp(b, c, v)`` (outer side); ``u`` is p's clamped
    projection on it and ``d2`` the squared distance from p to that rung point."""
    vv = wp.clamp(v, 0.0, 1.0)
    r0 = a + vv * (d - a)
    r1 = b + vv * (c - b)
    t = r1 - r0
    den = wp.dot(t, t)
    u = float(0.0)
    if den > 0.0:
        u = wp.clamp(wp.dot(p - r0, t) / den, 0.0, 1.0)
    return wp.vec3f(u, vv, wp.length_sq(p - (r0 + u * t)))


@wp.func
def _better(
    best: wp.vec3f, p: wp.vec2f, a: wp.vec2f, b: wp.vec2f, c: wp.vec2f, d: wp.vec2f, v: float
) -> wp.vec3f:
    """The better fit of ``best`` and the rung at ``v`` (a non-finite ``v`` is skipped)."""
    if not wp.isfinite(v):
        return best
    cand = _rung_fit(p, a, b, c, d, v)
    if cand[2] < best[2]:
        return cand
    return best


@wp.func
def _quad_coords(p: wp.vec2f, a: wp.vec2f, b: wp.vec2f, c: wp.vec2f, d: wp.vec2f) -> wp.vec2f:
    """Bilinear coordinates ``(u, v)`` of p in the quad (a, b, c, d) = (inner_i, outer_i,
    outer_i+1, inner_i+1): ``p = lerp(lerp(a, d, v), lerp(b, c, v), u)``, u across the road
    (0 inner, 1 outer), v along it (0 at bead i, 1 at bead i+1), both clamped to [0, 1].

    ``v`` solves ``k2 v^2 + k1 v + k0 = 0`` (p lies on the line of the rung at v), with the
    cancellation-free pair of roots ``k0 / q`` (the smaller) and ``q / k2``: the smaller when
    its rung segment holds p (u and v in [0, 1]), else, of the finite roots, the one whose
    clamped rung passes nearest to p (the smaller on a tie). A quad whose inner side
    collapses to a point (``a == d``) gets the angular fraction ``v`` of p about that point."""
    e = b - a
    f = d - a
    g = (a - b) + (c - d)
    h = p - a
    k2 = _cross2(g, f)
    k1 = _cross2(e, f) + _cross2(h, g)
    k0 = _cross2(h, e)
    w = wp.sqrt(wp.max(k1 * k1 - 4.0 * k0 * k2, 0.0))
    q = -0.5 * (k1 + w)
    if k1 < 0.0:
        q = -0.5 * (k1 - w)
    best = wp.vec3f(0.5, 0.5, _BIG)
    if q != 0.0:
        v = k0 / q
        if v >= 0.0 and v <= 1.0:
            # the usual case: the smaller root's rung holds p (p is on the rung's line)
            r0 = a + v * f
            t = (b + v * (c - b)) - r0
            den = wp.dot(t, t)
            if den > 0.0:
                u = wp.dot(h - v * f, t) / den
                if u >= 0.0 and u <= 1.0:
                    return wp.vec2f(u, v)
        best = _better(best, p, a, b, c, d, v)
    if k2 != 0.0:
        best = _better(best, p, a, b, c, d, q / k2)
    if best[2] >= _BIG:
        # no usable root (a degenerate quad): the best of its two rungs and its middle
        best = _better(best, p, a, b, c, d, 0.0)
        best = _better(best, p, a, b, c, d, 0.5)
        best = _better(best, p, a, b, c, d, 1.0)
    return wp.vec2f(best[0], best[1])


# ----------------------------------------------------------------------------- kernels


@wp.kernel
def _frame_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    res: int,
    margin: float,
    fill: float,
    auto_fill: int,
    # outputs
    frame_out: wp.array(dtype=wp.vec4f),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    # the band collider's rule (a valid env, >= 3 beads, in-range borders): its grid too
    n = _band_beads(count, valid, inner, outer, inner, 0, e, n_max)
    if n == 0:
        frame_out[e] = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
        return
    base = e * n_max
    g = square_grid(border_box(inner, outer, base, n), res, margin)  # the SDF bake's grid
    value = fill
    if auto_fill != 0:
        value = float(_BIG)
        for i in range(n):
            value = wp.min(value, wp.min(outer[base + i][2], inner[base + i][2]))
    frame_out[e] = wp.vec4f(g[0], g[1], g[2], value)


@wp.kernel
def _raster_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    # static
    n_max: int,
    res: int,
    # outputs (read for the overlap rule)
    height_inout: wp.array(dtype=wp.float32),
    on_road_inout: wp.array(dtype=wp.int8),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    # the frame kernel decided: a NaN frame is an env without a usable band
    n = wp.clamp(count[e], 0, n_max)
    fr = frame[e]
    if n < 3 or not wp.isfinite(fr[2]):
        return
    x0 = fr[0]
    y0 = fr[1]
    cell = fr[2]
    inv = 1.0 / cell
    base = e * n_max
    gb = e * res * res
    eps = 1.0e-3
    for i in range(n):
        j = _next(i, n)
        pa = inner[base + i]
        pb = outer[base + i]
        pc = outer[base + j]
        pd = inner[base + j]
        a = _xy(pa)
        b = _xy(pb)
        c = _xy(pc)
        d = _xy(pd)
        ylo = wp.min(wp.min(a[1], b[1]), wp.min(c[1], d[1]))
        yhi = wp.max(wp.max(a[1], b[1]), wp.max(c[1], d[1]))
        r0 = wp.max(int(wp.ceil((ylo - y0) * inv - 0.5 - eps)), 0)
        r1 = wp.min(int(wp.floor((yhi - y0) * inv - 0.5 + eps)), res - 1)
        # the quad's edges as _in_quad sees them (bitwise the SDF bake's crossings)
        kab = _slope(a, b)
        kbc = _slope(b, c)
        kdc = _slope(d, c)
        kda = _slope(d, a)
        for r in range(r0, r1 + 1):
            yc = y0 + (float(r) + 0.5) * cell
            xs = _quad_row_crosses(yc, a, b, c, d, kab, kbc, kdc, kda)
            lo = float(_BIG)
            hi = float(-_BIG)
            for k in range(4):
                if xs[k] > -_BIG:
                    lo = wp.min(lo, xs[k])
                    hi = wp.max(hi, xs[k])
            if lo >= hi:
                continue
            c0 = wp.max(int(wp.ceil((lo - x0) * inv - 0.5 - eps)), 0)
            c1 = wp.min(int(wp.floor((hi - x0) * inv - 0.5 + eps)), res - 1)
            row = gb + r * res
            for col in range(c0, c1 + 1):
                px = x0 + (float(col) + 0.5) * cell
                if _crosses_right_of(px, xs) % 2 == 0:
                    continue
                uv = _quad_coords(wp.vec2f(px, yc), a, b, c, d)
                zl = pa[2] + uv[1] * (pd[2] - pa[2])
                zr = pb[2] + uv[1] * (pc[2] - pb[2])
                z = zl + uv[0] * (zr - zl)
                k = row + col
                if on_road_inout[k] == wp.int8(0):
                    height_inout[k] = z
                    on_road_inout[k] = wp.int8(1)
                else:
                    height_inout[k] = wp.max(height_inout[k], z)
