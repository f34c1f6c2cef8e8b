"""Kernels and ``@wp.func`` helpers of the checkpoint placer."""

from __future__ import annotations

import warp as wp

from ...core.extents import in_range3
from ...geometry.arcs import bead_at_arc as _bead_at_arc
from ..shared import switched_off as _switched_off

wp.set_module_options({"enable_backward": False})


#: ``up_half`` of a track cross-section: no vertical limit.
UNBOUNDED_UP_HALF = 1.0e30


_NAN = wp.constant(float("nan"))


_UP_HALF = wp.constant(UNBOUNDED_UP_HALF)


# ---------------------------------------------------------------------------------- kernel
@wp.func
def _lerp3(a: wp.vec3f, b: wp.vec3f, t: float) -> wp.vec3f:
    return a + t * (b - a)


@wp.kernel
def _sample_kernel(
    # inputs
    center: wp.array(dtype=wp.vec3f),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    arclen: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    bead_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    # static
    use_mask: int,
    n_max: int,
    spacing: float,
    cap: int,
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    left_out: wp.array(dtype=wp.vec3f),
    right_out: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
    up_half_out: wp.array(dtype=wp.float32),
    count_out: wp.array(dtype=wp.int32),
    clipped_out: wp.array(dtype=wp.int32),
    step_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    if _switched_off(mask, use_mask, e):
        return
    nb = bead_count[e]
    total = length[e]
    base = e * n_max
    out = e * cap
    n = int(0)
    clipped = int(0)
    step = float(0.0)
    ok = valid[e] != 0 and nb >= 3 and nb <= n_max and wp.isfinite(total) and total > 0.0
    if ok:
        # the beads' coordinates in range (core/extents.py): every interpolation stays finite
        for i in range(nb):
            rows_ok = in_range3(center[base + i]) and in_range3(inner[base + i])
            if not (rows_ok and in_range3(outer[base + i])):
                ok = False
    if ok:
        r = wp.floor(total / spacing + 0.5)  # nearest integer, halves up
        if r > float(cap):
            n = cap
            clipped = 1
        else:
            n = wp.max(int(r), 3)
        step = total / float(n)
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    for k in range(cap):
        if k < n:
            s = float(k) * step
            # largest bead i with arclen[i] <= s (arclen[0] = 0 <= s)
            lo = _bead_at_arc(arclen, base, nb, s)
            j = lo + 1
            a1 = total
            if j == nb:
                j = 0
            else:
                a1 = arclen[base + j]
            a0 = arclen[base + lo]
            t = float(0.0)
            if a1 > a0:
                t = wp.clamp((s - a0) / (a1 - a0), 0.0, 1.0)
            c0 = center[base + lo]
            c1 = center[base + j]
            chord = c1 - c0
            chord = wp.vec3f(chord[0], chord[1], 0.0)  # vertical checkpoint planes
            clen = wp.length(chord)
            tan = wp.vec3f(0.0, 0.0, 0.0)
            if clen > 0.0:
                tan = chord / clen
            position_out[out + k] = _lerp3(c0, c1, t)
            left_out[out + k] = _lerp3(inner[base + lo], inner[base + j], t)
            right_out[out + k] = _lerp3(outer[base + lo], outer[base + j], t)
            tangent_out[out + k] = tan
            up_half_out[out + k] = _UP_HALF
        else:
            position_out[out + k] = nan3
            left_out[out + k] = nan3
            right_out[out + k] = nan3
            tangent_out[out + k] = nan3
            up_half_out[out + k] = _NAN
    count_out[e] = n
    clipped_out[e] = clipped
    step_out[e] = step
