"""Kernels and ``@wp.func`` helpers of the course line builder."""

from __future__ import annotations

import warp as wp

from ...core.extents import in_range3
from ..shared import switched_off as _switched_off

wp.set_module_options({"enable_backward": False})


#: Below this plan-view length a unit tangent counts as vertical (normal ``(0, 1, 0)``).
VERTICAL_EPS = 1.0e-6


_NAN = wp.constant(float("nan"))


_VERTICAL_EPS = wp.constant(VERTICAL_EPS)


# ---------------------------------------------------------------------------------- kernel
@wp.func
def _hermite(p0: wp.vec3f, m0: wp.vec3f, p1: wp.vec3f, m1: wp.vec3f, u: float) -> wp.vec3f:
    u2 = u * u
    u3 = u2 * u
    h00 = 2.0 * u3 - 3.0 * u2 + 1.0
    h10 = u3 - 2.0 * u2 + u
    h01 = -2.0 * u3 + 3.0 * u2
    h11 = u3 - u2
    return h00 * p0 + h10 * m0 + h01 * p1 + h11 * m1


@wp.kernel
def _build_kernel(
    # inputs
    gate_position: wp.array(dtype=wp.vec3f),
    gate_tangent: wp.array(dtype=wp.vec3f),
    gate_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    # static
    use_mask: int,
    max_gates: int,
    samples: int,
    # outputs
    center_inout: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
    normal_out: wp.array(dtype=wp.vec3f),
    arclen_out: wp.array(dtype=wp.float32),
    length_out: wp.array(dtype=wp.float32),
    count_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if _switched_off(mask, use_mask, e):
        return
    cap = max_gates * samples
    gb = e * max_gates
    base = e * cap
    m = wp.clamp(gate_count[e], 0, max_gates)
    ok = int(1)
    if valid[e] == 0 or m < 3:
        ok = 0
    for g in range(m):
        # non-finite or beyond COORD_LIMIT (core/extents.py): no line
        if not (in_range3(gate_position[gb + g]) and in_range3(gate_tangent[gb + g])):
            ok = 0
    n = m * ok
    nb = n * samples
    inv_k = 1.0 / float(samples)
    # beads: the gate centre itself at k = 0, the Hermite span at u = k / K after it
    for g in range(n):
        g1 = g + 1
        if g1 == n:
            g1 = 0
        p0 = gate_position[gb + g]
        p1 = gate_position[gb + g1]
        d = wp.length(p1 - p0)
        m0 = d * gate_tangent[gb + g]
        m1 = d * gate_tangent[gb + g1]
        row = base + g * samples
        center_inout[row] = p0
        for k in range(1, samples):
            center_inout[row + k] = _hermite(p0, m0, p1, m1, float(k) * inv_k)
    # frames and cumulative chord lengths (float64 sum)
    run = wp.float64(0.0)
    for i in range(nb):
        c = center_inout[base + i]
        ip = i + 1
        if ip == nb:
            ip = 0
        im = i - 1
        if i == 0:
            im = nb - 1
        cp = center_inout[base + ip]
        diff = cp - center_inout[base + im]
        dl = wp.length(diff)
        t = wp.vec3f(0.0, 0.0, 0.0)
        if dl > 0.0:
            t = diff / dl
        h = wp.sqrt(t[0] * t[0] + t[1] * t[1])
        nrm = wp.vec3f(0.0, 1.0, 0.0)
        if h > _VERTICAL_EPS:
            nrm = wp.vec3f(-t[1] / h, t[0] / h, 0.0)
        tangent_out[base + i] = t
        normal_out[base + i] = nrm
        arclen_out[base + i] = float(run)
        run += wp.float64(wp.length(cp - c))
    total = float(run)
    if not (wp.isfinite(total) and total > 0.0):
        nb = 0  # overflowing (or vanishing: chords that underflow to 0) geometry: no line
        total = 0.0
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    for i in range(nb, cap):
        center_inout[base + i] = nan3
        tangent_out[base + i] = nan3
        normal_out[base + i] = nan3
        arclen_out[base + i] = _NAN
    length_out[e] = total
    count_out[e] = nb
