"""Kernels and ``@wp.func`` helpers of the progress tracker."""

from __future__ import annotations

import warp as wp

from ...core.extents import clamp3, in_range3
from ...geometry import finite3 as _finite3
from ..shared import switched_off as _switched_off

wp.set_module_options({"enable_backward": False})


_NAN = wp.constant(float("nan"))


@wp.kernel
def _update_kernel(
    # inputs
    position: wp.array(dtype=wp.vec3f),
    cp_position: wp.array(dtype=wp.vec3f),
    cp_left: wp.array(dtype=wp.vec3f),
    cp_right: wp.array(dtype=wp.vec3f),
    cp_tangent: wp.array(dtype=wp.vec3f),
    cp_up_half: wp.array(dtype=wp.float32),
    cp_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    # static
    use_valid: int,
    cap: int,
    # outputs
    prev_inout: wp.array(dtype=wp.vec3f),
    passed_out: wp.array(dtype=wp.int32),
    wrong_way_out: wp.array(dtype=wp.int32),
    laps_inout: wp.array(dtype=wp.int32),
    progress_inout: wp.array(dtype=wp.int32),
    next_inout: wp.array(dtype=wp.int32),
    dist_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    n = wp.min(cp_count[e], cap)
    live = int(0)
    if n > 0:
        live = 1
    if _switched_off(valid, use_valid, e):
        live = 0
    passed_out[e] = 0
    wrong_way_out[e] = 0
    if live == 0:
        # frozen: laps / progress / target unchanged, no crossing on the next live update
        prev_inout[e] = wp.vec3f(_NAN, _NAN, _NAN)
        dist_out[e] = 0.0
        return
    g = next_inout[e]
    if g < 0 or g >= n:
        g = 0  # regenerated without a reset
    base = e * cap
    p1 = position[e]
    finite = _finite3(p1)  # inline (wp.isfinite calls into the runtime on the CPU)
    if finite:
        p1 = clamp3(p1)  # core/extents.py: the crossing test and the distance stay finite
    p0 = prev_inout[e]
    step = int(0)  # +1 forward pass, -1 wrong way
    if _finite3(p0):
        left = cp_left[base + g]
        right = cp_right[base + g]
        nrm = cp_tangent[base + g]
        mid = 0.5 * (left + right)
        d0 = wp.dot(p0 - mid, nrm)
        d1 = wp.dot(p1 - mid, nrm)
        direction = int(0)
        if d0 < 0.0 and d1 >= 0.0:
            direction = 1
        elif d0 > 0.0 and d1 <= 0.0:
            direction = -1
        if direction != 0:
            across = right - left
            width = wp.length(across)
            if width > 0.0:
                u_axis = across / width
                vc = wp.cross(u_axis, nrm)
                vlen = wp.length(vc)
                if vlen > 1.0e-12:
                    v_axis = vc / vlen
                    x = p0 + (d0 / (d0 - d1)) * (p1 - p0)
                    u = wp.dot(x - mid, u_axis)
                    v = wp.dot(x - mid, v_axis)
                    if wp.abs(u) <= 0.5 * width and wp.abs(v) <= cp_up_half[base + g]:
                        step = direction
    if step > 0:
        passed_out[e] = 1
        progress_inout[e] = progress_inout[e] + 1
        g = g + 1
        if g >= n:
            g = 0
            laps_inout[e] = laps_inout[e] + 1
    elif step < 0:
        wrong_way_out[e] = 1
    next_inout[e] = g
    prev_inout[e] = p1
    target = cp_position[base + g]
    dist = float(_NAN)  # a non-finite position: no distance
    if finite:
        dist = 0.0  # a target out of range: none either
        if in_range3(target):
            dist = wp.length(p1 - target)
    dist_out[e] = dist


@wp.kernel
def _reset_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    # static
    use_mask: int,
    # outputs
    prev_out: wp.array(dtype=wp.vec3f),
    passed_out: wp.array(dtype=wp.int32),
    wrong_way_out: wp.array(dtype=wp.int32),
    laps_out: wp.array(dtype=wp.int32),
    progress_out: wp.array(dtype=wp.int32),
    next_out: wp.array(dtype=wp.int32),
    dist_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    if _switched_off(mask, use_mask, e):
        return
    prev_out[e] = wp.vec3f(_NAN, _NAN, _NAN)
    passed_out[e] = 0
    wrong_way_out[e] = 0
    laps_out[e] = 0
    progress_out[e] = 0
    next_out[e] = 0
    dist_out[e] = 0.0
