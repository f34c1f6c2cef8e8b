"""Kernels of the cone detector (private: use :class:`ConeDetectionsUtility`)."""

from __future__ import annotations

import enum

import warp as wp

from ...geometry import finite3, xy
from ...seeds import effective_seed_wp, fmix32_wp
from ..lookahead import heading_axis, to_agent_frame
from ..props import PropSide

wp.set_module_options({"enable_backward": False})


class ConeColour(enum.IntEnum):
    """Which side of the road a detected cone stands on (``ConeDetectionsResult.colour``; -1 for
    padding), in the road's direction of travel."""

    LEFT = 0
    RIGHT = 1


_NAN = wp.constant(float("nan"))
_INNER = wp.constant(int(PropSide.INNER))
_LEFT = wp.constant(int(ConeColour.LEFT))
_RIGHT = wp.constant(int(ConeColour.RIGHT))
#: Salts of the detector's random stream (per env, per step, per prop row).
_ENV_SALT = wp.constant(wp.uint32(0x3C6EF372))
_STEP_SALT = wp.constant(wp.uint32(0xA54FF53A))
_ROW_SALT = wp.constant(wp.uint32(0x510E527F))
_GOLDEN = wp.constant(wp.uint32(0x9E3779B9))


@wp.kernel
def _refresh_kernel(
    # inputs
    center: wp.array(dtype=wp.vec3f),
    inner: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    # outputs
    left_out: wp.array(dtype=wp.int32),
    key_out: wp.array(dtype=wp.int32),
):
    """For a masked env: which border is on the left (1 the inner one, 0 the outer one, -1 an
    env without a usable track) and the key of its random stream, a hash of the course's
    effective seed and epoch (``Track.generation``)."""
    e = wp.tid()
    if mask[e] == 0:
        return
    n = count[e]
    b = e * n_max
    side = int(-1)
    if valid[e] != 0 and n >= 3 and n <= n_max:
        d = wp.dot(xy(inner[b]) - xy(center[b]), xy(normal[b]))
        if d > 0.0:
            side = 1
        elif d < 0.0:
            side = 0
    left_out[e] = side
    epoch = generation[e]
    eff = effective_seed_wp(seeds[e], epoch)
    mix = fmix32_wp(wp.uint32(epoch) * _GOLDEN + _ENV_SALT)
    key_out[e] = wp.int32(fmix32_wp(wp.uint32(eff) ^ mix))


@wp.kernel
def _reset_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    # outputs
    step_out: wp.array(dtype=wp.int64),
):
    e = wp.tid()
    if mask[e] != 0:
        step_out[e] = wp.int64(0)


@wp.func
def _row_rng(key: wp.uint32, row: int) -> wp.uint32:
    """The Warp RNG state of prop row ``row`` under the step's key."""
    return wp.rand_init(wp.int32(fmix32_wp(key ^ fmix32_wp(wp.uint32(row) * _GOLDEN + _ROW_SALT))))


@wp.func
def _gauss3(rng: wp.uint32) -> wp.vec3f:
    """Three independent standard normal draws (Box-Muller on four uniforms; the uniforms
    below 2**-32 are raised to it, so the log stays finite)."""
    u1 = wp.max(wp.randf(rng), 2.3283064e-10)
    u2 = wp.randf(rng)
    u3 = wp.max(wp.randf(rng), 2.3283064e-10)
    u4 = wp.randf(rng)
    r1 = wp.sqrt(-2.0 * wp.log(u1))
    r2 = wp.sqrt(-2.0 * wp.log(u3))
    a = 6.2831855 * u2
    return wp.vec3f(r1 * wp.cos(a), r1 * wp.sin(a), r2 * wp.cos(6.2831855 * u4))


@wp.kernel
def _detect_kernel(
    # inputs
    prop_position: wp.array(dtype=wp.vec3f),
    prop_side: wp.array(dtype=wp.int32),
    prop_count: wp.array(dtype=wp.int32),
    left: wp.array(dtype=wp.int32),
    key: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    # static
    max_props: int,
    max_cones: int,
    cos_half_fov: float,
    max_range: float,
    dropout: float,
    noise: float,
    # outputs
    position_inout: wp.array(dtype=wp.vec3f),
    distance_inout: wp.array(dtype=wp.float32),
    colour_inout: wp.array(dtype=wp.int32),
    prop_inout: wp.array(dtype=wp.int32),
    count_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
    step_inout: wp.array(dtype=wp.int64),
):
    """Env ``e``'s cones: those within ``max_range`` and the field of view (``x >=
    hypot(x, y) * cos(fov / 2)``: ``|bearing| <= fov / 2``) on their true position, less the
    dropped ones, each reported with its noise, nearest reported distance first (ties: the
    lower prop row), then padding; the env's step counter advances by one (its random
    stream's position)."""
    e = wp.tid()
    t = step_inout[e]
    step_inout[e] = t + wp.int64(1)
    lo = wp.uint32(t & wp.int64(0xFFFFFFFF))
    hi = wp.uint32(t >> wp.int64(32))
    k = fmix32_wp(wp.uint32(key[e]) ^ fmix32_wp(lo ^ fmix32_wp(hi + _STEP_SALT)))
    side = left[e]
    p = position[e]
    axis = heading_axis(orientation[e])
    out = e * max_cones
    m = int(0)
    ok = side >= 0 and finite3(p) and axis[2] != 0.0
    if ok:
        n = wp.clamp(prop_count[e], 0, max_props)
        base = e * max_props
        for r in range(n):
            w = prop_position[base + r]
            if not finite3(w):
                continue
            v = to_agent_frame(w, p, axis)
            h = wp.sqrt(v[0] * v[0] + v[1] * v[1])
            if not (wp.length(v) <= max_range) or not (v[0] >= h * cos_half_fov):
                continue  # out of range or out of the field of view
            if dropout > 0.0 or noise > 0.0:
                rng = _row_rng(k, r)
                if dropout > 0.0:
                    if wp.randf(rng) < dropout:
                        continue
                if noise > 0.0:
                    v = v + noise * _gauss3(rng)
            d = wp.length(v)
            slot = m
            if m < max_cones:
                m += 1
            elif d >= distance_inout[out + max_cones - 1]:
                continue
            else:
                slot = max_cones - 1
            while slot > 0 and distance_inout[out + slot - 1] > d:
                position_inout[out + slot] = position_inout[out + slot - 1]
                distance_inout[out + slot] = distance_inout[out + slot - 1]
                colour_inout[out + slot] = colour_inout[out + slot - 1]
                prop_inout[out + slot] = prop_inout[out + slot - 1]
                slot -= 1
            colour = _RIGHT
            if (prop_side[base + r] == _INNER) == (side == 1):
                colour = _LEFT
            position_inout[out + slot] = v
            distance_inout[out + slot] = d
            colour_inout[out + slot] = colour
            prop_inout[out + slot] = r
    pad = float(0.0)
    if not ok:
        pad = _NAN
    for i in range(m, max_cones):
        position_inout[out + i] = wp.vec3f(pad, pad, pad)
        distance_inout[out + i] = pad
        colour_inout[out + i] = -1
        prop_inout[out + i] = -1
    count_out[e] = m
    valid_out[e] = 0
    if ok:
        valid_out[e] = 1
