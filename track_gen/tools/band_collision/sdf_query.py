"""SDF query kernel of the band collider (see :mod:`track_gen.tools.band_collision`).

One thread per box: five bilinear samples of the env's grid (centre, corners; the lowest,
first of equals, chosen without branches) and a central difference at the lowest, from the
twelve texels around it where they lie inside the grid. The borders' bounding-box cap, the
edge of the grid and the flat far field take the general path (capped samples, the step
doubling while the difference is zero). The distance, oob and boundary are computed as the
earlier per-sample query computed them, bit for bit.
"""

from __future__ import annotations

import warp as wp

from ...core.extents import clamp_coord, scaled_quat
from ...geometry import plan_x_axis, unit_heading
from ..shared import finite as _finite
from .kernels import _unit_or, _write_none

# fuse_fp off: no multiply-add contraction, so the per_env and per_item kernels round alike
# on every device (CUDA would otherwise contract them differently).
wp.set_module_options({"enable_backward": False, "fuse_fp": False})


# ----------------------------------------------------------------------------- query


@wp.func
def _texel_coord(x: float, top: float) -> float:
    """``clamp(x, 0, top)`` as two selects (a NaN maps to 0, like ``wp.clamp``)."""
    return wp.where(x < top, wp.where(x > 0.0, x, 0.0), top)


@wp.func
def _grid_uv(fr: wp.vec4f, top: float, s: wp.vec2f) -> wp.vec2f:
    """Grid coordinates of the world point s (texel centres at integers), clamped to the
    edge texels."""
    return wp.vec2f(
        _texel_coord((s[0] - fr[0]) / fr[2] - 0.5, top),
        _texel_coord((s[1] - fr[1]) / fr[2] - 0.5, top),
    )


@wp.func
def _bilinear_uv(sdf: wp.array(dtype=wp.float32), gb: int, res: int, uv: wp.vec2f) -> float:
    """Bilinear phi at clamped grid coordinates uv (>= 0, so ``int`` is the floor)."""
    i0 = wp.min(int(uv[0]), res - 2)
    j0 = wp.min(int(uv[1]), res - 2)
    fu = uv[0] - float(i0)
    fv = uv[1] - float(j0)
    k = gb + j0 * res + i0
    s00 = sdf[k]
    s01 = sdf[k + res]
    v0 = s00 + fu * (sdf[k + 1] - s00)
    v1 = s01 + fu * (sdf[k + res + 1] - s01)
    return v0 + fv * (v1 - v0)


@wp.func
def _lerp(a: float, b: float, t: float) -> float:
    return a + t * (b - a)


@wp.func
def _stencil_gradient(sdf: wp.array(dtype=wp.float32), gb: int, res: int, uv: wp.vec2f) -> wp.vec2f:
    """Central difference of the bilinear phi one cell either side of uv, from the 12 texels
    around it (uv at least one texel inside the grid's edge texels: no clamping)."""
    i0 = int(uv[0])
    j0 = int(uv[1])
    fu = uv[0] - float(i0)
    fv = uv[1] - float(j0)
    k = gb + j0 * res + i0
    a0 = sdf[k - 1]  # row j0, columns i0-1 .. i0+2
    a1 = sdf[k]
    a2 = sdf[k + 1]
    a3 = sdf[k + 2]
    b0 = sdf[k + res - 1]  # row j0+1
    b1 = sdf[k + res]
    b2 = sdf[k + res + 1]
    b3 = sdf[k + res + 2]
    c1 = sdf[k - res]  # row j0-1, columns i0, i0+1
    c2 = sdf[k - res + 1]
    d1 = sdf[k + 2 * res]  # row j0+2
    d2 = sdf[k + 2 * res + 1]
    gx0 = _lerp(a2, a3, fu) - _lerp(a0, a1, fu)
    gx1 = _lerp(b2, b3, fu) - _lerp(b0, b1, fu)
    gy0 = _lerp(b1, b2, fu) - _lerp(c1, c2, fu)
    gy1 = _lerp(d1, d2, fu) - _lerp(a1, a2, fu)
    return wp.vec2f(_lerp(gx0, gx1, fv), _lerp(gy0, gy1, fv))


@wp.func
def _bilinear(
    sdf: wp.array(dtype=wp.float32), gb: int, res: int, fr: wp.vec4f, s: wp.vec2f
) -> float:
    """Bilinear phi at the world point s, grid coordinates clamped to the edge texels."""
    return _bilinear_uv(sdf, gb, res, _grid_uv(fr, float(res - 1), s))


@wp.func
def _sdf_at(
    sdf: wp.array(dtype=wp.float32),
    gb: int,
    res: int,
    fr: wp.vec4f,
    bb: wp.vec4f,
    s: wp.vec2f,
) -> float:
    """Bilinear phi at s, capped by minus the distance to the borders' box bb outside it."""
    phi = _bilinear(sdf, gb, res, fr, s)
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
def _border_at(
    border: wp.array(dtype=wp.int8), gb: int, res: int, fr: wp.vec4f, s: wp.vec2f
) -> int:
    """Border id of the texel under the world point s (clamped to the grid)."""
    top = float(res - 1)
    i = int(_texel_coord((s[0] - fr[0]) / fr[2], top))
    j = int(_texel_coord((s[1] - fr[1]) / fr[2], top))
    return int(border[gb + j * res + i])


@wp.kernel
def _sdf_query_kernel(
    # inputs
    beads: wp.array(dtype=wp.int32),
    sdf: wp.array(dtype=wp.float32),
    border: wp.array(dtype=wp.int8),
    frame: wp.array(dtype=wp.vec4f),
    aabb: wp.array(dtype=wp.vec4f),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    # static
    res: int,
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
    if beads[e] < 3:
        _write_none(tid, 1, oob_out, distance_out, nearest_out, normal_out, boundary_out)
        return
    pos = position[tid]
    # a huge or tiny quaternion is scaled by its largest component first (core/extents.py)
    rot = scaled_quat(orientation[tid])
    he = half_extents[tid]
    axis = plan_x_axis(rot)  # geometry/frames.py: the rotated local x, any scale of rot
    cy = axis[0]
    sy = axis[1]
    hx = wp.abs(he[0])
    hy = wp.abs(he[1])
    ok = _finite(pos[0]) and _finite(pos[1]) and _finite(pos[2]) and _finite(cy)
    if not (ok and _finite(sy) and _finite(hx) and _finite(hy)):
        _write_none(tid, 0, oob_out, distance_out, nearest_out, normal_out, boundary_out)
        return
    # centre and half extents clamped to COORD_LIMIT: every sample stays finite
    hx = clamp_coord(hx)
    hy = clamp_coord(hy)
    ax = unit_heading(axis)
    ay = wp.vec2f(-ax[1], ax[0])
    fr = frame[e]
    bb = aabb[e]
    cell = fr[2]
    gb = e * res * res
    p = wp.vec2f(clamp_coord(pos[0]), clamp_coord(pos[1]))
    wx = hx * ax  # half axes
    wy = hy * ay
    # the box and its gradient stencil at least a cell inside the borders' box: no cap
    ex = wp.abs(wx[0]) + wp.abs(wy[0]) + 2.0 * cell
    ey = wp.abs(wx[1]) + wp.abs(wy[1]) + 2.0 * cell
    capped = not (p[0] - ex >= bb[0] and p[0] + ex <= bb[2])
    capped = capped or not (p[1] - ey >= bb[1] and p[1] + ey <= bb[3])
    # the lowest of the centre and the corners (corner k at p + sx wx + sy wy), first of ties
    top = float(res - 1)
    best = float(0.0)
    s = p
    grad = wp.vec2f(0.0, 0.0)
    if capped:
        best = _sdf_at(sdf, gb, res, fr, bb, p)
        for k in range(4):
            c = p + float(2 * (k % 2) - 1) * wx + float(2 * (k // 2) - 1) * wy
            ph = _sdf_at(sdf, gb, res, fr, bb, c)
            if ph < best:
                best = ph
                s = c
    else:
        uv = _grid_uv(fr, top, p)
        best = _bilinear_uv(sdf, gb, res, uv)
        sel = int(-1)
        for k in range(4):
            c = p + float(2 * (k % 2) - 1) * wx + float(2 * (k // 2) - 1) * wy
            cuv = _grid_uv(fr, top, c)
            ph = _bilinear_uv(sdf, gb, res, cuv)
            lower = ph < best
            sel = wp.where(lower, k, sel)
            best = wp.where(lower, ph, best)
            uv = wp.where(lower, cuv, uv)
        if sel >= 0:
            s = p + float(2 * (sel % 2) - 1) * wx + float(2 * (sel // 2) - 1) * wy
        if uv[0] >= 1.0 and uv[1] >= 1.0 and uv[0] < top - 1.0 and uv[1] < top - 1.0:
            grad = _stencil_gradient(sdf, gb, res, uv)
    # central difference, one cell (the stencil above where it fits, else capped samples);
    # where phi is flat (the clamped far field) the step doubles until it reaches the band
    step = cell
    hx2 = wp.vec2f(cell, 0.0)
    hy2 = wp.vec2f(0.0, cell)
    if capped or wp.length_sq(grad) == 0.0:
        grad = wp.vec2f(
            _sdf_at(sdf, gb, res, fr, bb, s + hx2) - _sdf_at(sdf, gb, res, fr, bb, s - hx2),
            _sdf_at(sdf, gb, res, fr, bb, s + hy2) - _sdf_at(sdf, gb, res, fr, bb, s - hy2),
        )
    while wp.length_sq(grad) == 0.0 and step <= float(res) * cell:
        step = 2.0 * step
        hx2 = wp.vec2f(step, 0.0)
        hy2 = wp.vec2f(0.0, step)
        grad = wp.vec2f(
            _sdf_at(sdf, gb, res, fr, bb, s + hx2) - _sdf_at(sdf, gb, res, fr, bb, s - hx2),
            _sdf_at(sdf, gb, res, fr, bb, s + hy2) - _sdf_at(sdf, gb, res, fr, bb, s - hy2),
        )
    nrm = grad
    gl = wp.length(grad)
    if gl > 1.0e-9:
        nrm = grad / gl
    else:
        mid = wp.vec2f(0.5 * (bb[0] + bb[2]), 0.5 * (bb[1] + bb[3]))
        nrm = _unit_or(mid - s, wp.vec2f(1.0, 0.0))
    q = s - best * nrm
    bid = _border_at(border, gb, res, fr, q)
    if bid < 0:
        bid = _border_at(border, gb, res, fr, s)
    oob = int(0)
    if best <= 0.0:
        oob = 1
    oob_out[tid] = oob
    distance_out[tid] = best
    nearest_out[tid] = q
    normal_out[tid] = nrm
    boundary_out[tid] = bid
