"""Kernels of the gate colliders (see :mod:`track_gen.tools.gate_collision`).

Posts (plan-view discs) against oriented boxes, one thread per box; frames (four boxes per
gate, in the gate's frame) against spheres, one thread per env. Refreshes run one thread per
env. Every loop over an env's gates is bounded by ``max_gates`` (counts are clamped). A post
or a gate whose coordinates are not in range (:mod:`~track_gen.core.extents`) is packed NaN
and never wins; the queries clamp the agents' positions and box centres to ``COORD_LIMIT``.
"""

from __future__ import annotations

from enum import IntEnum

import warp as wp

from ...core.extents import clamp3, in_range, in_range2, in_range3, scaled_quat
from ...geometry import finite3 as _finite3
from ..shared import make_box as _make_box

wp.set_module_options({"enable_backward": False})


class FrameMember(IntEnum):
    """Member ids of a gate frame (``FrameContact.member``)."""

    LEFT = 0  # +y side of the opening (the gate's left)
    RIGHT = 1  # -y side
    TOP = 2  # +z side
    BOTTOM = 3  # -z side


_NAN = wp.constant(float("nan"))
_BIG = wp.constant(3.0e38)
_LEFT = wp.constant(int(FrameMember.LEFT))
_TOP = wp.constant(int(FrameMember.TOP))
_BOTTOM = wp.constant(int(FrameMember.BOTTOM))


@wp.func
def _usable_gates(
    count: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32), e: int, g_max: int
) -> int:
    """count[e] clamped to [0, max_gates] for a valid env, else 0."""
    n = wp.clamp(count[e], 0, g_max)
    if valid[e] == 0:
        n = 0
    return n


# ----------------------------------------------------------------------------- posts


@wp.kernel
def _posts_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    left: wp.array(dtype=wp.vec3f),
    right: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    # static
    g_max: int,
    # outputs
    num_posts_out: wp.array(dtype=wp.int32),
    posts_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = _usable_gates(count, valid, e, g_max)
    num_posts_out[e] = 2 * n
    nan2 = wp.vec2f(_NAN, _NAN)
    base = e * g_max
    for g in range(g_max):
        a = nan2
        b = nan2
        if g < n:
            pl = left[base + g]
            pr = right[base + g]
            # a post beyond COORD_LIMIT (or non-finite) stays NaN: it never wins
            if in_range2(wp.vec2f(pl[0], pl[1])):
                a = wp.vec2f(pl[0], pl[1])
            if in_range2(wp.vec2f(pr[0], pr[1])):
                b = wp.vec2f(pr[0], pr[1])
        posts_out[2 * (base + g)] = a
        posts_out[2 * (base + g) + 1] = b


@wp.kernel
def _disc_query_kernel(
    # inputs
    num_posts: wp.array(dtype=wp.int32),
    posts: wp.array(dtype=wp.vec2f),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    # static
    g_max: int,
    nbox: int,
    radius: float,
    # outputs
    hit_out: wp.array(dtype=wp.int32),
    post_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec2f),
):
    tid = wp.tid()
    e = tid // nbox
    n = wp.clamp(num_posts[e], 0, 2 * g_max)
    bx = _make_box(position[tid], orientation[tid], half_extents[tid])
    best = float(_BIG)
    k_best = int(-1)
    if bx.ok == 1:
        base = 2 * e * g_max
        for k in range(n):
            post = posts[base + k]
            if not (wp.isfinite(post[0]) and wp.isfinite(post[1])):
                continue  # a NaN post never wins (wp.max would read its NaN as "missing")
            r = post - bx.p
            ox = wp.max(wp.abs(wp.dot(r, bx.ax)) - bx.h[0], 0.0)
            oy = wp.max(wp.abs(wp.dot(r, bx.ay)) - bx.h[1], 0.0)
            d2 = ox * ox + oy * oy
            # strict: ties keep the lowest post; a NaN post never wins, an overflowing
            # distance (a far box) still names a post
            if d2 < best or (k_best < 0 and not wp.isnan(d2)):
                best = d2
                k_best = k
    if k_best < 0:
        hit_out[tid] = 0
        post_out[tid] = -1
        distance_out[tid] = _NAN
        nearest_out[tid] = wp.vec2f(_NAN, _NAN)
        return
    dist = wp.sqrt(best) - radius
    hit_out[tid] = wp.where(dist <= 0.0, 1, 0)
    post_out[tid] = k_best
    distance_out[tid] = dist
    nearest_out[tid] = posts[2 * e * g_max + k_best]


# ----------------------------------------------------------------------------- frames


@wp.kernel
def _frames_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_size: wp.array(dtype=wp.float32),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    # static
    g_max: int,
    # outputs
    num_gates_out: wp.array(dtype=wp.int32),
    frame_out: wp.array(dtype=wp.vec4f),
    rotation_out: wp.array(dtype=wp.mat33f),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = _usable_gates(count, valid, e, g_max)
    num_gates_out[e] = n
    base = e * g_max
    nan4 = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
    nanm = wp.mat33f(_NAN, _NAN, _NAN, _NAN, _NAN, _NAN, _NAN, _NAN, _NAN)
    for g in range(g_max):
        fr = nan4
        rot = nanm
        if g < n:
            c = position[base + g]
            # a huge or tiny quaternion is scaled by its largest component first (core/extents.py)
            q = scaled_quat(orientation[base + g])
            h = wp.abs(half_size[base + g])
            ln = wp.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
            if ln > 1.0e-30 and wp.isfinite(ln) and in_range3(c) and in_range(h):
                qn = wp.quatf(q[0] / ln, q[1] / ln, q[2] / ln, q[3] / ln)
                # the rotation's columns are the gate axes in world: its transpose maps
                # world offsets into the gate frame
                rot = wp.transpose(wp.quat_to_matrix(qn))
                fr = wp.vec4f(c[0], c[1], c[2], h)
        frame_out[base + g] = fr
        rotation_out[base + g] = rot


@wp.func
def _member_center(m: int, h: float, th: float) -> wp.vec3f:
    """Centre of member m in the gate frame."""
    off = h + 0.5 * th
    if m == _LEFT:
        return wp.vec3f(0.0, off, 0.0)
    if m == _TOP:
        return wp.vec3f(0.0, 0.0, off)
    if m == _BOTTOM:
        return wp.vec3f(0.0, 0.0, -off)
    return wp.vec3f(0.0, -off, 0.0)


@wp.func
def _member_half(m: int, h: float, th: float, dp: float) -> wp.vec3f:
    """Half extents of member m (posts for left/right, bars for top/bottom)."""
    if m >= _TOP:
        return wp.vec3f(0.5 * dp, h + th, 0.5 * th)
    return wp.vec3f(0.5 * dp, 0.5 * th, h + th)


@wp.func
def _box_signed(d: wp.vec3f, hm: wp.vec3f):
    """Signed distance from the point ``d`` (member frame) to the solid box ``[-hm, hm]``:
    ``(distance, offset, normal)`` with ``offset = d - closest surface point`` and the outward
    unit normal there. Outside: the Euclidean distance (> 0), ``d - clamp(d)`` and the unit
    offset; on or inside: minus the depth to the nearest face (<= 0; ties: x, then y, then
    z), the offset from that face and its outward axis (``+`` on a zero coordinate)."""
    cl = wp.vec3f(
        wp.clamp(d[0], -hm[0], hm[0]),
        wp.clamp(d[1], -hm[1], hm[1]),
        wp.clamp(d[2], -hm[2], hm[2]),
    )
    o = d - cl
    dist = wp.length(o)
    if dist > 0.0:
        return dist, o, o / dist
    # inside (or on the surface): the face nearest to d
    gx = wp.abs(d[0]) - hm[0]
    gy = wp.abs(d[1]) - hm[1]
    gz = wp.abs(d[2]) - hm[2]
    axis = int(0)
    depth = gx
    if gy > depth:
        axis = 1
        depth = gy
    if gz > depth:
        axis = 2
        depth = gz
    sgn = wp.where(d[axis] < 0.0, -1.0, 1.0)
    nrm = wp.vec3f(0.0, 0.0, 0.0)
    nrm[axis] = sgn
    off = wp.vec3f(0.0, 0.0, 0.0)
    off[axis] = d[axis] - sgn * hm[axis]
    return depth, off, nrm


@wp.kernel
def _frame_query_kernel(
    # inputs
    num_gates: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    rotation: wp.array(dtype=wp.mat33f),
    position: wp.array(dtype=wp.vec3f),
    # static
    g_max: int,
    thickness: float,
    depth: float,
    agent_radius: float,
    # outputs
    hit_out: wp.array(dtype=wp.int32),
    gate_out: wp.array(dtype=wp.int32),
    member_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec3f),
    normal_out: wp.array(dtype=wp.vec3f),
):
    e = wp.tid()
    n = wp.clamp(num_gates[e], 0, g_max)
    p = position[e]
    base = e * g_max
    best = float(_BIG)  # signed: negative inside a member
    g_best = int(-1)
    m_best = int(-1)
    n_best = wp.vec3f(0.0)  # outward unit normal at the closest point, gate frame
    near_best = wp.vec3f(0.0)  # closest point, gate frame
    if _finite3(p):
        p = clamp3(p)  # core/extents.py: every distance stays finite
        for g in range(n):
            fr = frame[base + g]
            h = fr[3]
            if not wp.isfinite(h):
                continue  # an unusable gate (NaN frame) is never hit
            rel = p - wp.vec3f(fr[0], fr[1], fr[2])
            # bounding sphere of the frame: skip a gate that cannot be nearer (the slack
            # keeps the rounding of the bound from skipping a nearer member; inside a member
            # only a gate whose sphere holds the centre can be deeper)
            ho = h + thickness
            rb = wp.sqrt(0.25 * depth * depth + 2.0 * ho * ho)
            dc = wp.length(rel)
            if dc - rb > wp.max(best, 0.0) + 1.0e-5 * (dc + rb):
                continue
            q = rotation[base + g] * rel
            for m in range(4):
                d = q - _member_center(m, h, thickness)
                sd, off, nrm = _box_signed(d, _member_half(m, h, thickness, depth))
                if sd < best or (g_best < 0 and not wp.isnan(sd)):
                    best = sd
                    g_best = g
                    m_best = m
                    n_best = nrm
                    near_best = q - off
    if g_best < 0:
        nan3 = wp.vec3f(_NAN, _NAN, _NAN)
        hit_out[e] = 0
        gate_out[e] = -1
        member_out[e] = -1
        distance_out[e] = _NAN
        nearest_out[e] = nan3
        normal_out[e] = nan3
        return
    fr = frame[base + g_best]
    to_world = wp.transpose(rotation[base + g_best])
    dist = best - agent_radius
    hit_out[e] = wp.where(dist <= 0.0, 1, 0)
    gate_out[e] = g_best
    member_out[e] = m_best
    distance_out[e] = dist
    nearest_out[e] = wp.vec3f(fr[0], fr[1], fr[2]) + to_world * near_best
    normal_out[e] = to_world * n_best
