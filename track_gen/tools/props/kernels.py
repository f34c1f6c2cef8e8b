"""Kernels and ``@wp.func`` helpers of the prop placer."""

from __future__ import annotations

import enum

import warp as wp

from ...core.extents import in_range3
from ...geometry import yaw_quat
from ..shared import switched_off as _switched_off

wp.set_module_options({"enable_backward": False})


class PropKind(enum.IntEnum):
    """What a prop is (``PropsUtility.kind`` inside the kernel)."""

    CONE = 0  # upright, on a border point
    WALL = 1  # a segment between two consecutive border points


class PropSide(enum.IntEnum):
    """Which border a prop row belongs to (``PropsResult.side``; -1 past ``count``)."""

    INNER = 0
    OUTER = 1


_NAN = wp.constant(float("nan"))


_WALL = wp.constant(int(PropKind.WALL))


_INNER = wp.constant(int(PropSide.INNER))


_OUTER = wp.constant(int(PropSide.OUTER))


# ---------------------------------------------------------------------------------- kernel
@wp.func
def _border_length(pts: wp.array(dtype=wp.vec3f), base: int, nb: int) -> wp.float64:
    """Closed 3D length of the polyline ``pts[base .. base + nb - 1]`` (float64 sum)."""
    total = wp.float64(0.0)
    for i in range(nb):
        j = i + 1
        if j == nb:
            j = 0
        total += wp.float64(wp.length(pts[base + j] - pts[base + i]))
    return total


@wp.func
def _border_in_range(pts: wp.array(dtype=wp.vec3f), base: int, nb: int) -> bool:
    """Every bead of the border finite and within ``COORD_LIMIT`` (core/extents.py)."""
    for i in range(nb):
        if not in_range3(pts[base + i]):
            return False
    return True


@wp.func
def _demand(length: wp.float64, spacing: wp.float64) -> wp.float64:
    """``max(1, round(length / spacing))`` (halves up) as a float64; 0 for a non-finite or
    non-positive length."""
    n = wp.float64(0.0)
    if wp.isfinite(length) and length > wp.float64(0.0):
        n = wp.max(wp.floor(length / spacing + wp.float64(0.5)), wp.float64(1.0))
    return n


@wp.func
def _pose(d: wp.vec3f, pitched: int) -> wp.quatf:
    """Yaw from the plan-view direction of ``d`` (0 when it vanishes); with ``pitched``, then
    a pitch about the local y axis that turns the local x onto ``d`` (roll-free)."""
    h = wp.sqrt(d[0] * d[0] + d[1] * d[1])
    yaw = float(0.0)
    if h > 0.0:
        yaw = wp.atan2(d[1], d[0])
    q = yaw_quat(yaw)
    if pitched != 0:
        pitch = float(0.0)
        if h > 0.0 or d[2] != 0.0:
            pitch = wp.atan2(d[2], h)
        q = q * wp.quat_from_axis_angle(wp.vec3f(0.0, 1.0, 0.0), -pitch)
    return q


@wp.func
def _write_wall(
    a: wp.vec3f,
    b: wp.vec3f,
    fallback: wp.vec3f,
    row: int,
    side: int,
    thickness: float,
    height: float,
    position_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
    scale_out: wp.array(dtype=wp.vec3f),
    side_out: wp.array(dtype=wp.int32),
):
    chord = b - a
    clen = wp.length(chord)
    d = chord
    if clen == 0.0:
        d = fallback
    position_out[row] = 0.5 * (a + b)
    orientation_out[row] = _pose(d, 1)
    scale_out[row] = wp.vec3f(clen, thickness, height)
    side_out[row] = side


@wp.func
def _place_border(
    # inputs
    pts: wp.array(dtype=wp.vec3f),
    base: int,
    nb: int,
    total: wp.float64,
    n: int,
    side: int,
    kind: int,
    size: wp.vec4f,
    row0: int,
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
    scale_out: wp.array(dtype=wp.vec3f),
    side_out: wp.array(dtype=wp.int32),
):
    """Props ``0 .. n-1`` of one border at arcs ``k * total / n`` into rows ``row0 + k``.

    One merge walk: segment ``i`` (bead ``i`` to bead ``i+1``, the last one closing the loop)
    holds the arcs ``[a, a + seg)``; a zero-length segment is stepped over."""
    i = int(0)
    j = wp.min(1, nb - 1)
    p0 = pts[base]
    p1 = pts[base + j]
    seg = wp.float64(wp.length(p1 - p0))
    a = wp.float64(0.0)
    first = wp.vec3f(0.0, 0.0, 0.0)
    prev = wp.vec3f(0.0, 0.0, 0.0)
    prev_dir = wp.vec3f(0.0, 0.0, 0.0)
    # k == n: no new prop, the loop closes (a wall's last segment ends on prop 0)
    for k in range(n + 1):
        p = first
        dseg = prev_dir
        if k < n:
            s = wp.float64(k) * total / wp.float64(n)
            while i < nb - 1 and a + seg <= s:
                a += seg
                i += 1
                j = i + 1
                if j == nb:
                    j = 0
                p0 = pts[base + i]
                p1 = pts[base + j]
                seg = wp.float64(wp.length(p1 - p0))
            t = float(0.0)
            if seg > wp.float64(0.0):
                t = float(wp.clamp((s - a) / seg, wp.float64(0.0), wp.float64(1.0)))
            p = p0 + t * (p1 - p0)
            dseg = p1 - p0
        if kind == _WALL:
            if k == 0:
                first = p
            else:
                _write_wall(
                    prev,
                    p,
                    prev_dir,
                    row0 + k - 1,
                    side,
                    size[2],
                    size[3],
                    position_out,
                    orientation_out,
                    scale_out,
                    side_out,
                )
            prev = p
            prev_dir = dseg
        elif k < n:
            position_out[row0 + k] = p
            orientation_out[row0 + k] = _pose(dseg, 0)
            scale_out[row0 + k] = wp.vec3f(size[0], size[0], size[1])
            side_out[row0 + k] = side


@wp.kernel
def _place_kernel(
    # inputs
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    bead_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    # static
    use_mask: int,
    n_max: int,
    spacing: wp.float64,
    cap: int,
    use_inner: int,
    use_outer: int,
    kind: int,
    size: wp.vec4f,
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
    scale_out: wp.array(dtype=wp.vec3f),
    side_out: wp.array(dtype=wp.int32),
    count_out: wp.array(dtype=wp.int32),
    truncated_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if _switched_off(mask, use_mask, e):
        return
    nb = bead_count[e]
    base = e * n_max
    out = e * cap
    len_in = wp.float64(0.0)
    len_out = wp.float64(0.0)
    want_in = wp.float64(0.0)
    want_out = wp.float64(0.0)
    if valid[e] != 0 and nb >= 3 and nb <= n_max:
        # a used border out of range has no usable length (it voids the env below)
        if use_inner != 0 and _border_in_range(inner, base, nb):
            len_in = _border_length(inner, base, nb)
            want_in = _demand(len_in, spacing)
        if use_outer != 0 and _border_in_range(outer, base, nb):
            len_out = _border_length(outer, base, nb)
            want_out = _demand(len_out, spacing)
        # a used border of unusable length voids the env
        if (use_inner != 0 and want_in == wp.float64(0.0)) or (
            use_outer != 0 and want_out == wp.float64(0.0)
        ):
            want_in = wp.float64(0.0)
            want_out = wp.float64(0.0)
    want = want_in + want_out
    n_in = int(0)
    n_out = int(0)
    truncated = int(0)
    if want > wp.float64(cap):
        # share the M rows in proportion to the demands (each border keeps <= its demand)
        truncated = 1
        if want_out == wp.float64(0.0):
            n_in = cap
        elif want_in > wp.float64(0.0):
            n_in = int(wp.floor(wp.float64(cap) * want_in / want))
        n_out = cap - n_in
    else:
        n_in = int(want_in)  # exact: want <= cap <= 65536
        n_out = int(want_out)
    if n_in > 0:
        _place_border(
            inner,
            base,
            nb,
            len_in,
            n_in,
            _INNER,
            kind,
            size,
            out,
            position_out,
            orientation_out,
            scale_out,
            side_out,
        )
    if n_out > 0:
        _place_border(
            outer,
            base,
            nb,
            len_out,
            n_out,
            _OUTER,
            kind,
            size,
            out + n_in,
            position_out,
            orientation_out,
            scale_out,
            side_out,
        )
    n = n_in + n_out
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    for k in range(n, cap):
        position_out[out + k] = nan3
        orientation_out[out + k] = wp.quatf(_NAN, _NAN, _NAN, _NAN)
        scale_out[out + k] = nan3
        side_out[out + k] = -1
    count_out[e] = n
    truncated_out[e] = truncated
