"""Kernels and ``@wp.func`` helpers of the course descriptors (one thread per env, float64
arithmetic, float32 answers).

Notation (plan view): bead ``i`` of ``n`` has centre ``c_i``; the chords at it are
``a = c_i - c_{i-1}`` and ``b = c_{i+1} - c_i`` (indices mod ``n``), its turning angle
``theta_i = atan2(a x b, a . b)`` (0 when a chord has zero length), its arc
``ds_i = (|a| + |b|) / 2`` and its curvature ``|kappa_i| = |theta_i| / ds_i`` (0 when
``ds_i = 0``). ``docs/course-stats.md`` defines every descriptor from these.
"""

from __future__ import annotations

import warp as wp

from ...core.extents import in_range, in_range3

wp.set_module_options({"enable_backward": False})

_NAN = wp.constant(float("nan"))
_NAN64 = wp.constant(wp.float64(float("nan")))
_ZERO = wp.constant(wp.float64(0.0))
_ONE = wp.constant(wp.float64(1.0))
_HALF = wp.constant(wp.float64(0.5))
_TWO = wp.constant(wp.float64(2.0))
_BIG = wp.constant(wp.float64(1.0e308))
#: float32's largest finite value: answers are clamped to it.
_F32_MAX = wp.constant(wp.float64(3.4028234663852886e38))

#: Percentile fractions ``p / 100`` of a meter (the first ``P`` used), a kernel argument.
vec8d = wp.types.vector(length=8, dtype=wp.float64)


@wp.func
def _f32(x: wp.float64) -> wp.float32:
    """``x`` as float32, clamped to float32's finite range (NaN stays NaN)."""
    y = x
    if y > _F32_MAX:
        y = _F32_MAX
    if y < -_F32_MAX:
        y = -_F32_MAX
    return wp.float32(y)


@wp.func
def _xy(v: wp.vec3f) -> wp.vec2d:
    return wp.vec2d(wp.float64(v[0]), wp.float64(v[1]))


@wp.func
def _d3(v: wp.vec3f) -> wp.vec3d:
    return wp.vec3d(wp.float64(v[0]), wp.float64(v[1]), wp.float64(v[2]))


@wp.func
def _turn(center: wp.array(dtype=wp.vec3f), base: int, n: int, i: int) -> wp.vec2d:
    """``(theta_i, ds_i)`` of bead ``i`` of the closed line ``center[base : base + n]``."""
    p = _xy(center[base + i])
    a = p - _xy(center[base + (i + n - 1) % n])
    b = _xy(center[base + (i + 1) % n]) - p
    la = wp.length(a)
    lb = wp.length(b)
    theta = _ZERO
    if la > _ZERO and lb > _ZERO:
        theta = wp.atan2(a[0] * b[1] - a[1] * b[0], wp.dot(a, b))
    return wp.vec2d(theta, _HALF * (la + lb))


@wp.func
def _sift(a: wp.array(dtype=wp.float64), base: int, start: int, end: int):
    """Sift ``a[base + start]`` down the max-heap ``a[base : base + end]``."""
    root = start
    while 2 * root + 1 < end:
        child = 2 * root + 1
        if child + 1 < end and a[base + child] < a[base + child + 1]:
            child = child + 1
        if a[base + root] < a[base + child]:
            t = a[base + root]
            a[base + root] = a[base + child]
            a[base + child] = t
            root = child
        else:
            break


@wp.func
def _heapsort(a: wp.array(dtype=wp.float64), base: int, n: int):
    """Sort ``a[base : base + n]`` ascending in place (no NaN in it), O(n log n)."""
    start = n // 2 - 1
    while start >= 0:
        _sift(a, base, start, n)
        start = start - 1
    end = n - 1
    while end > 0:
        t = a[base]
        a[base] = a[base + end]
        a[base + end] = t
        _sift(a, base, 0, end)
        end = end - 1


@wp.func
def _write_widths(
    ok: bool,
    total: wp.float64,
    low: wp.float64,
    n: int,
    e: int,
    width_mean_out: wp.array(dtype=wp.float32),
    width_min_out: wp.array(dtype=wp.float32),
    half_width_out: wp.array(dtype=wp.float64),
):
    """Env ``e``'s mean (``total / n``) and minimum (``low``) width, and half the mean in
    float64; NaN all three when not ``ok``. Shared by the track and gate width kernels."""
    mean = _NAN64
    if ok:
        mean = total / wp.float64(n)
    else:
        low = _NAN64
    width_mean_out[e] = _f32(mean)
    width_min_out[e] = _f32(low)
    half_width_out[e] = _HALF * mean


@wp.kernel
def _track_width_kernel(
    # inputs
    outer: wp.array(dtype=wp.vec3f),
    inner: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    # outputs
    width_mean_out: wp.array(dtype=wp.float32),
    width_min_out: wp.array(dtype=wp.float32),
    half_width_out: wp.array(dtype=wp.float64),
):
    """Road widths ``|outer_i - inner_i|`` (plan view) of a track's beads: mean, minimum
    and half the mean in float64 (the corner threshold's scale); NaN for an unusable env."""
    e = wp.tid()
    if mask[e] == 0:
        return
    n = count[e]
    ok = bool(valid[e] != 0 and n >= 3 and n <= n_max)
    base = e * n_max
    total = _ZERO
    low = _BIG
    if ok:
        for i in range(n):
            o = outer[base + i]
            q = inner[base + i]
            if not (in_range3(o) and in_range3(q)):
                ok = False
            else:
                w = wp.length(_xy(o) - _xy(q))
                total = total + w
                low = wp.min(low, w)
    _write_widths(ok, total, low, n, e, width_mean_out, width_min_out, half_width_out)


@wp.kernel
def _gate_width_kernel(
    # inputs
    half_size: wp.array(dtype=wp.float32),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    # static
    max_gates: int,
    # outputs
    width_mean_out: wp.array(dtype=wp.float32),
    width_min_out: wp.array(dtype=wp.float32),
    half_width_out: wp.array(dtype=wp.float64),
):
    """Gate openings ``2 * half_size_g`` of a gate course: mean, minimum and half the mean
    in float64; NaN for an unusable env (a half size negative, non-finite or beyond
    ``COORD_LIMIT``)."""
    e = wp.tid()
    if mask[e] == 0:
        return
    n = count[e]
    ok = bool(valid[e] != 0 and n >= 1 and n <= max_gates)
    base = e * max_gates
    total = _ZERO
    low = _BIG
    if ok:
        for i in range(n):
            h = half_size[base + i]
            if not (in_range(h) and h >= wp.float32(0.0)):
                ok = False
            else:
                w = _TWO * wp.float64(h)
                total = total + w
                low = wp.min(low, w)
    _write_widths(ok, total, low, n, e, width_mean_out, width_min_out, half_width_out)


@wp.kernel
def _line_stats_kernel(
    # inputs
    center: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    half_width: wp.array(dtype=wp.float64),
    lap_time: wp.array(dtype=wp.float32),
    # static
    has_lap: int,
    n_max: int,
    corner_radius: wp.float64,
    corner_angle: wp.float64,
    fractions: vec8d,
    num_percentiles: int,
    # scratch
    kappa: wp.array(dtype=wp.float64),
    # outputs
    length_out: wp.array(dtype=wp.float32),
    turning_out: wp.array(dtype=wp.float32),
    curvature_max_out: wp.array(dtype=wp.float32),
    percentile_out: wp.array(dtype=wp.float32),
    corners_out: wp.array(dtype=wp.float32),
    corner_curvature_out: wp.array(dtype=wp.float32),
    corner_angle_out: wp.array(dtype=wp.float32),
    straight_fraction_out: wp.array(dtype=wp.float32),
    elevation_range_out: wp.array(dtype=wp.float32),
    par_time_out: wp.array(dtype=wp.float32),
    width_mean_inout: wp.array(dtype=wp.float32),
    width_min_inout: wp.array(dtype=wp.float32),
):
    """Every line descriptor of env ``e`` (after a width kernel wrote ``half_width`` and the
    widths, which become NaN here when the line is unusable)."""
    e = wp.tid()
    if mask[e] == 0:
        return
    n = count[e]
    hw = half_width[e]
    base = e * n_max
    ok = bool(valid[e] != 0 and n >= 3 and n <= n_max and hw == hw)
    if ok:
        for i in range(n):
            if not in_range3(center[base + i]):
                ok = False
    length = _ZERO
    plan = _ZERO
    turning = _ZERO
    kmax = _ZERO
    zlo = _BIG
    zhi = -_BIG
    if ok:
        for i in range(n):
            c = center[base + i]
            length = length + wp.length(_d3(center[base + (i + 1) % n]) - _d3(c))
            t = _turn(center, base, n, i)
            k = _ZERO
            if t[1] > _ZERO:
                k = wp.abs(t[0]) / t[1]
            kappa[base + i] = k
            turning = turning + wp.abs(t[0])
            plan = plan + t[1]
            kmax = wp.max(kmax, k)
            z = wp.float64(c[2])
            zlo = wp.min(zlo, z)
            zhi = wp.max(zhi, z)
        if not (plan > _ZERO):
            ok = False  # every bead at one plan-view point
    P = num_percentiles
    if not ok:
        length_out[e] = _NAN
        turning_out[e] = _NAN
        curvature_max_out[e] = _NAN
        corners_out[e] = _NAN
        corner_curvature_out[e] = _NAN
        corner_angle_out[e] = _NAN
        straight_fraction_out[e] = _NAN
        elevation_range_out[e] = _NAN
        par_time_out[e] = _NAN
        width_mean_inout[e] = _NAN
        width_min_inout[e] = _NAN
        for q in range(P):
            percentile_out[e * P + q] = _NAN
        return
    # corners: maximal cyclic runs of beads with |kappa| * corner_radius * hw > 1
    thr = hw * corner_radius
    start = int(-1)
    for i in range(n):
        if start < 0 and not (kappa[base + i] * thr > _ONE):
            start = i
    corners = int(0)
    peaks = _ZERO
    angles = _ZERO
    in_corners = _ZERO
    if start < 0:  # the whole loop is one run
        if turning >= corner_angle:
            corners = 1
            peaks = kmax
            angles = turning
            in_corners = plan
    else:
        open_run = bool(False)
        peak = _ZERO
        angle = _ZERO
        arc = _ZERO
        for j in range(1, n + 1):
            i = (start + j) % n
            k = kappa[base + i]
            if k * thr > _ONE:
                t = _turn(center, base, n, i)
                if not open_run:
                    open_run = True
                    peak = _ZERO
                    angle = _ZERO
                    arc = _ZERO
                peak = wp.max(peak, k)
                angle = angle + wp.abs(t[0])
                arc = arc + t[1]
            elif open_run:
                open_run = False
                if angle >= corner_angle:
                    corners = corners + 1
                    peaks = peaks + peak
                    angles = angles + angle
                    in_corners = in_corners + arc
    corner_k = _ZERO
    corner_a = _ZERO
    if corners > 0:
        corner_k = peaks / wp.float64(corners)
        corner_a = angles / wp.float64(corners)
    straight = wp.clamp((plan - in_corners) / plan, _ZERO, _ONE)
    # nearest-rank percentiles of |kappa|
    _heapsort(kappa, base, n)
    for q in range(P):
        r = int(wp.ceil(fractions[q] * wp.float64(n)))
        r = wp.clamp(r, 1, n)
        percentile_out[e * P + q] = _f32(kappa[base + r - 1])
    length_out[e] = _f32(length)
    turning_out[e] = _f32(turning)
    curvature_max_out[e] = _f32(kmax)
    corners_out[e] = wp.float32(corners)
    corner_curvature_out[e] = _f32(corner_k)
    corner_angle_out[e] = _f32(corner_a)
    straight_fraction_out[e] = _f32(straight)
    elevation_range_out[e] = _f32(zhi - zlo)
    lap = _NAN
    if has_lap != 0:
        lap = lap_time[e]
    par_time_out[e] = lap
