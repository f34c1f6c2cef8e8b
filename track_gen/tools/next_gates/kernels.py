"""Kernels of :mod:`track_gen.tools.next_gates` (private: use :class:`NextGatesUtility`).

Every kernel runs one thread per env (``e = wp.tid()``) and clamps every loop bound to the
gate capacity, so a bad count can never index out of bounds.
"""

from __future__ import annotations

import warp as wp

from ...core.extents import clamp3, in_range3, scaled_quat
from ...geometry import finite3 as _finite3
from ...seeds import effective_seed_wp, stage_rng

wp.set_module_options({"enable_backward": False})

#: Salt of the nominal-pose stream: gate ``g`` of an env draws from
#: ``stage_rng(effective seed, SALT_NOMINAL + g)``.
SALT_NOMINAL = 0x6E67A7E5

_SALT = wp.constant(wp.uint32(SALT_NOMINAL))
_NAN = wp.constant(float("nan"))


@wp.func
def _finite4(q: wp.quatf) -> bool:
    return q[0] - q[0] == 0.0 and q[1] - q[1] == 0.0 and q[2] - q[2] == 0.0 and q[3] - q[3] == 0.0


@wp.func
def _nan_quat() -> wp.quatf:
    return wp.quatf(_NAN, _NAN, _NAN, _NAN)


@wp.func
def _unit_quat(q: wp.quatf) -> wp.quatf:
    """``q`` scaled (core/extents.py) and normalized; NaN for a non-finite or zero ``q``."""
    if not _finite4(q):
        return _nan_quat()
    r = scaled_quat(q)
    n = wp.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3])
    if not (n > 0.0):
        return _nan_quat()
    return wp.quatf(r[0] / n, r[1] / n, r[2] / n, r[3] / n)


@wp.func
def _gate_usable(pos: wp.vec3f, rot: wp.quatf) -> bool:
    return in_range3(pos) and _finite4(rot)


@wp.kernel
def _nominal_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_size: wp.array(dtype=wp.float32),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    # static
    max_gates: int,
    noise: float,
    # outputs
    nominal_position_out: wp.array(dtype=wp.vec3f),
    nominal_orientation_out: wp.array(dtype=wp.quatf),
    seen_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = wp.clamp(count[e], 0, max_gates)
    if valid[e] == 0 or generation[e] < 0:
        n = 0
    eff = effective_seed_wp(seeds[e], wp.max(generation[e], 0))
    base = e * max_gates
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    for g in range(max_gates):
        row = base + g
        seen_out[row] = 0
        pos = nan3
        rot = _nan_quat()
        if g < n:
            pos = position[row]
            rot = orientation[row]
            if noise > 0.0 and _gate_usable(pos, rot):
                st = stage_rng(eff, _SALT + wp.uint32(g))
                dx = noise * wp.randf(st, -1.0, 1.0)
                dy = noise * wp.randf(st, -1.0, 1.0)
                dz = noise * wp.randf(st, -1.0, 1.0)
                d = noise * wp.randf(st, -1.0, 1.0)
                pos = clamp3(pos + wp.vec3f(dx, dy, dz))
                hs = half_size[row]
                if not (hs > 0.0):
                    hs = 0.0  # a zero (or non-finite) half size: the yaw error is +-90 degrees
                if not wp.isfinite(hs):
                    hs = 0.0
                yaw = wp.atan2(d, hs)
                turn = wp.quatf(0.0, 0.0, wp.sin(0.5 * yaw), wp.cos(0.5 * yaw))
                rot = turn * rot
        nominal_position_out[row] = pos
        nominal_orientation_out[row] = rot


@wp.kernel
def _clear_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    # static
    max_gates: int,
    # outputs
    seen_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    for g in range(max_gates):
        seen_out[e * max_gates + g] = 0


@wp.func
def _no_answer(
    row: int,
    position_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
    index_out: wp.array(dtype=wp.int32),
    revealed_out: wp.array(dtype=wp.int32),
):
    position_out[row] = wp.vec3f(_NAN, _NAN, _NAN)
    orientation_out[row] = _nan_quat()
    index_out[row] = -1
    revealed_out[row] = 0


@wp.kernel
def _sense_kernel(
    # inputs
    agent_position: wp.array(dtype=wp.vec3f),
    agent_orientation: wp.array(dtype=wp.quatf),
    next_index: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    nominal_position: wp.array(dtype=wp.vec3f),
    nominal_orientation: wp.array(dtype=wp.quatf),
    # static
    max_gates: int,
    slots: int,
    use_reveal: int,
    reveal_range: float,
    # outputs
    seen_inout: wp.array(dtype=wp.int32),
    position_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
    index_out: wp.array(dtype=wp.int32),
    revealed_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    n = wp.clamp(count[e], 0, max_gates)
    p = agent_position[e]
    q = _unit_quat(agent_orientation[e])
    live = valid[e] != 0 and n > 0 and _finite3(p) and _finite4(q)
    out = e * slots
    if not live:
        for k in range(slots):
            _no_answer(out + k, position_out, orientation_out, index_out, revealed_out)
        return
    p = clamp3(p)  # core/extents.py: a finite position beyond COORD_LIMIT is clamped
    base = e * max_gates
    if use_reveal != 0:
        r2 = reveal_range * reveal_range
        for g in range(n):
            gp = position[base + g]
            if seen_inout[base + g] == 0 and in_range3(gp):
                d = gp - p
                if wp.dot(d, d) <= r2:
                    seen_inout[base + g] = 1
    g0 = next_index[e]
    if g0 < 0 or g0 >= n:
        g0 = 0  # a stale target (regenerated without a reset)
    qc = wp.quat_inverse(q)
    for k in range(slots):
        row = out + k
        if k >= n:
            _no_answer(row, position_out, orientation_out, index_out, revealed_out)
            continue
        g = (g0 + k) % n
        true_pose = 1
        if use_reveal != 0:
            true_pose = seen_inout[base + g]
        gp = position[base + g]
        gq = orientation[base + g]
        if true_pose == 0:
            gp = nominal_position[base + g]
            gq = nominal_orientation[base + g]
        if not _gate_usable(gp, gq):
            _no_answer(row, position_out, orientation_out, index_out, revealed_out)
            continue
        position_out[row] = wp.quat_rotate(qc, gp - p)
        orientation_out[row] = wp.normalize(qc * gq)
        index_out[row] = g
        revealed_out[row] = true_pose
