"""Kernels and ``@wp.func`` helpers of the lookahead sampler (and the agent frame the cone
detector shares: :func:`heading_axis`, :func:`to_agent_frame`)."""

from __future__ import annotations

import warp as wp

from ...core.extents import clamp3, scaled_quat
from ...geometry import (
    arc_ahead,
    bead_at_arc64,
    bead_fraction,
    finite,
    finite3,
    plan_x_axis,
    unit_heading,
    xy,
)

wp.set_module_options({"enable_backward": False})

_NAN = wp.constant(float("nan"))


# ------------------------------------------------------------------------ the agent frame
@wp.func
def heading_axis(rot: wp.quatf) -> wp.vec3f:
    """``(cos yaw, sin yaw, ok)`` of a world-from-body quaternion (x, y, z, w): the plan-view
    direction of its rotated local x axis, as the band collision reads it (any scale: a
    quaternion whose largest component lies outside ``[2**-30, 2**30]`` is divided by it
    first; a rotated x axis that is vertical, or a zero quaternion: +x). ``ok`` is 0 for a
    non-finite quaternion."""
    a = plan_x_axis(scaled_quat(rot))
    ok = float(0.0)
    if finite(a[0]) and finite(a[1]):
        ok = 1.0
    u = unit_heading(a)
    return wp.vec3f(u[0], u[1], ok)


@wp.func
def to_agent_frame(p: wp.vec3f, origin: wp.vec3f, axis: wp.vec3f) -> wp.vec3f:
    """World point ``p`` in the frame of an agent at ``origin`` (clamped to ``COORD_LIMIT``)
    heading ``axis`` (:func:`heading_axis`): x forward, y left, z up."""
    d = p - clamp3(origin)
    c = axis[0]
    s = axis[1]
    return wp.vec3f(c * d[0] + s * d[1], c * d[1] - s * d[0], d[2])


# ------------------------------------------------------------------------ the line
@wp.func
def _widths(
    center: wp.array(dtype=wp.vec3f),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    row: int,
) -> wp.vec2f:
    """``(left, right)`` plan-view widths at bead ``row``: the borders' distances along the
    left normal (the larger positive one is the left width, as the racing line reads them)."""
    c = xy(center[row])
    n = xy(normal[row])
    da = wp.dot(xy(outer[row]) - c, n)
    db = wp.dot(xy(inner[row]) - c, n)
    return wp.vec2f(wp.max(da, db), wp.max(-da, -db))


@wp.func
def _point(
    center: wp.array(dtype=wp.vec3f),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    arclen: wp.array(dtype=wp.float32),
    line_position: wp.array(dtype=wp.vec3f),
    line_offset: wp.array(dtype=wp.float32),
    line_speed: wp.array(dtype=wp.float32),
    curvature: wp.array(dtype=wp.float32),
    row: int,
    n: int,
    total: float,
    u: wp.float64,
    p: wp.vec3f,
    axis: wp.vec3f,
    racing: int,
    out: int,
    position_out: wp.array(dtype=wp.vec3f),
    width_left_out: wp.array(dtype=wp.float32),
    width_right_out: wp.array(dtype=wp.float32),
    curvature_out: wp.array(dtype=wp.float32),
    speed_out: wp.array(dtype=wp.float32),
    arc_out: wp.array(dtype=wp.float32),
):
    """Row ``out``: the line at centre-line arc ``u`` (in ``[0, total)``), linear between the
    two beads around it, in the agent's frame."""
    i = bead_at_arc64(arclen, row, n, u)
    j = i + 1
    if j >= n:
        j = 0
    t = bead_fraction(arclen, row, n, total, i, u)
    pi = line_position[row + i]
    pj = line_position[row + j]
    w_i = _widths(center, inner, outer, normal, row + i)
    w_j = _widths(center, inner, outer, normal, row + j)
    w = w_i + t * (w_j - w_i)
    if racing != 0:
        off = line_offset[row + i] + t * (line_offset[row + j] - line_offset[row + i])
        w = wp.vec2f(w[0] - off, w[1] + off)
        speed_out[out] = line_speed[row + i] + t * (line_speed[row + j] - line_speed[row + i])
    position_out[out] = to_agent_frame(pi + t * (pj - pi), p, axis)
    width_left_out[out] = w[0]
    width_right_out[out] = w[1]
    curvature_out[out] = curvature[row + i] + t * (curvature[row + j] - curvature[row + i])
    arc = float(u)
    if arc >= total:
        arc = 0.0  # rounded up to the loop's length: the start line
    arc_out[out] = arc


@wp.kernel
def _lookahead_kernel(
    # inputs
    center: wp.array(dtype=wp.vec3f),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    arclen: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    line_position: wp.array(dtype=wp.vec3f),
    line_offset: wp.array(dtype=wp.float32),
    line_speed: wp.array(dtype=wp.float32),
    line_length: wp.array(dtype=wp.float32),
    curvature: wp.array(dtype=wp.float32),
    s: wp.array(dtype=wp.float32),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    # static
    n_max: int,
    num_points: int,
    spacing: wp.float64,
    racing: int,
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    width_left_out: wp.array(dtype=wp.float32),
    width_right_out: wp.array(dtype=wp.float32),
    curvature_out: wp.array(dtype=wp.float32),
    speed_out: wp.array(dtype=wp.float32),
    arc_out: wp.array(dtype=wp.float32),
    valid_out: wp.array(dtype=wp.int32),
):
    """Env ``e``'s points ``k = 1 .. K``: the line at centre-line arc ``s[e] + k * spacing``
    (modulo the loop's length, float64), in the agent's frame, with its widths, curvature (and
    speed); NaN rows and ``valid = 0`` for an env without an answer."""
    e = wp.tid()
    out = e * num_points
    n = count[e]
    total = length[e]
    u0 = s[e]
    p = position[e]
    axis = heading_axis(orientation[e])
    ok = valid[e] != 0 and n >= 2 and n <= n_max and finite(u0) and finite3(p)
    ok = ok and axis[2] != 0.0 and finite(total) and total > 0.0
    if racing != 0:
        ok = ok and finite(line_length[e])
    if not ok:
        valid_out[e] = 0
        nan3 = wp.vec3f(_NAN, _NAN, _NAN)
        for k in range(num_points):
            position_out[out + k] = nan3
            width_left_out[out + k] = _NAN
            width_right_out[out + k] = _NAN
            curvature_out[out + k] = _NAN
            arc_out[out + k] = _NAN
            if racing != 0:
                speed_out[out + k] = _NAN
        return
    valid_out[e] = 1
    for k in range(num_points):
        u = arc_ahead(u0, wp.float64(k + 1) * spacing, total)  # into [0, total)
        _point(
            center,
            inner,
            outer,
            normal,
            arclen,
            line_position,
            line_offset,
            line_speed,
            curvature,
            e * n_max,
            n,
            total,
            u,
            p,
            axis,
            racing,
            out + k,
            position_out,
            width_left_out,
            width_right_out,
            curvature_out,
            speed_out,
            arc_out,
        )
