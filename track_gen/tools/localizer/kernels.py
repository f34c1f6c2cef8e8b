"""Kernels of :mod:`track_gen.tools.localizer` (private: use :class:`LocalizerUtility`).

Every kernel runs one thread per env (``e = wp.tid()``) or per (env, row) pair
(``e, i = wp.tid()``); every loop bound is clamped to the line's ``N_max`` so a bad count or a
non-finite input can never index out of bounds.
"""

from __future__ import annotations

import warp as wp

from ...core.extents import clamp3
from ...geometry import finite3 as _finite3
from ...geometry.arcs import bead_at_arc as _bead_at_arc

wp.set_module_options({"enable_backward": False})

_NAN = wp.constant(float("nan"))
_INF = wp.constant(float("inf"))
#: Below this plan-view length a unit chord counts as vertical (left axis falls back to +y).
_VERTICAL_EPS = wp.constant(1.0e-6)


@wp.func
def _next(i: int, n: int) -> int:
    j = i + 1
    if j >= n:
        j = 0
    return j


@wp.func
def _segment_sq(p: wp.vec3f, a: wp.vec3f, b: wp.vec3f) -> wp.vec2f:
    """``(squared distance from p to segment a-b, clamped parameter u)``; NaN for a zero-length
    (or non-finite) segment, which never wins a ``<`` comparison."""
    d = b - a
    dd = wp.dot(d, d)
    if not (dd > 0.0):
        return wp.vec2f(_NAN, _NAN)
    w = p - a
    u = wp.clamp(wp.dot(w, d) / dd, 0.0, 1.0)
    q = w - u * d
    return wp.vec2f(wp.dot(q, q), u)


@wp.func
def _left_axis(t: wp.vec3f) -> wp.vec3f:
    """Horizontal left axis ``normalize(cross(z, t)) = normalize(-t.y, t.x, 0)``; +y for a
    vertical ``t``."""
    h = wp.vec3f(-t[1], t[0], 0.0)
    hl = wp.length(h)
    if hl > _VERTICAL_EPS:
        return h / hl
    return wp.vec3f(0.0, 1.0, 0.0)


@wp.struct
class _Fix:
    """One env's answer (``seg = -1``: none, every other field NaN)."""

    seg: int  # segment index of the closest point
    s: float  # arc length of the closest point
    off: float  # signed lateral offset along the left axis
    off_up: float  # signed offset along the up axis
    dist: float  # distance to the closest point
    q: wp.vec3f  # closest point
    t: wp.vec3f  # unit tangent of the segment


@wp.func
def _fix(
    seg: int, s: float, off: float, off_up: float, dist: float, q: wp.vec3f, t: wp.vec3f
) -> _Fix:
    f = _Fix()
    f.seg = seg
    f.s = s
    f.off = off
    f.off_up = off_up
    f.dist = dist
    f.q = q
    f.t = t
    return f


@wp.func
def _no_fix() -> _Fix:
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    return _fix(-1, _NAN, _NAN, _NAN, _NAN, nan3, nan3)


@wp.func
def _nearest_segment(
    p: wp.vec3f, center: wp.array(dtype=wp.vec3f), base: int, n: int, start: int, span: int
):
    """The closest to ``p`` of the ``span`` consecutive segments from ``start`` (mod ``n``):
    ``(index, squared distance, clamped parameter, position in the run)``; ties go to the
    lowest index; ``(-1, inf, 0, -1)`` when every segment is degenerate or non-finite."""
    best = int(-1)
    best_d2 = float(_INF)
    best_u = float(0.0)
    best_j = int(-1)
    i = int(start)
    a = center[base + i]
    for j in range(span):
        nxt = _next(i, n)
        b = center[base + nxt]
        r = _segment_sq(p, a, b)
        if r[0] < best_d2 or (r[0] == best_d2 and i < best):
            best = i
            best_d2 = r[0]
            best_u = r[1]
            best_j = j
        a = b
        i = nxt
    return best, best_d2, best_u, best_j


@wp.func
def _locate(
    p: wp.vec3f,
    center: wp.array(dtype=wp.vec3f),
    arclen: wp.array(dtype=wp.float32),
    base: int,
    n: int,
    valid: int,
    total: float,
    last: int,
    window: int,
) -> _Fix:
    """The answer for position ``p`` on the line whose ``n`` beads start at ``base``
    (``valid``, closed length ``total``); ``last``: the env's previous segment (-1: none),
    searched around first when ``window > 0``."""
    line_ok = wp.isfinite(total) and total > 0.0
    if valid == 0 or n < 2 or not _finite3(p) or not line_ok:
        return _no_fix()
    p = clamp3(p)  # core/extents.py: a finite position beyond COORD_LIMIT is clamped
    best = int(-1)
    best_d2 = float(_INF)
    best_u = float(0.0)
    full = int(1)
    span = 2 * window + 1
    if window > 0 and span < n and last >= 0 and last < n:
        # warm: segments last-W .. last+W (mod n) only
        start = last - window
        if start < 0:
            start = start + n
        best, best_d2, best_u, best_j = _nearest_segment(p, center, base, n, start, span)
        if best_j > 0 and best_j < span - 1:
            bound = float(window) * total / float(n)
            if wp.sqrt(best_d2) <= bound:
                full = 0
    if full != 0:
        best, best_d2, best_u, best_j = _nearest_segment(p, center, base, n, 0, n)
    if best < 0:
        # every segment is degenerate or non-finite
        return _no_fix()
    nxt = _next(best, n)
    a = center[base + best]
    d = center[base + nxt] - a
    q = a + best_u * d
    t = wp.normalize(d)
    left = _left_axis(t)
    up = wp.normalize(wp.cross(t, left))
    a0 = arclen[base + best]
    a1 = total
    if nxt != 0:
        a1 = arclen[base + nxt]
    s = a0 + best_u * (a1 - a0)
    s = s - total * wp.floor(s / total)
    if s >= total or s < 0.0:
        s = 0.0  # float rounding at the seam
    rel = p - q
    off = wp.dot(rel, left)
    off_up = wp.dot(rel, up)
    dist = wp.length(rel)
    answered = wp.isfinite(s) and wp.isfinite(off) and wp.isfinite(off_up)
    if not (answered and wp.isfinite(dist) and _finite3(q) and _finite3(t)):
        # line data out of any usable range (a non-finite arclen, coordinates near the
        # float32 maximum): no answer rather than a non-finite one
        return _no_fix()
    return _fix(best, s, off, off_up, dist, q, t)


@wp.kernel
def _locate_kernel(
    # inputs
    position: wp.array(dtype=wp.vec3f),
    center: wp.array(dtype=wp.vec3f),
    arclen: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    window: int,
    # outputs
    memory_inout: wp.array(dtype=wp.int32),
    s_out: wp.array(dtype=wp.float32),
    n_out: wp.array(dtype=wp.float32),
    n_up_out: wp.array(dtype=wp.float32),
    distance_out: wp.array(dtype=wp.float32),
    segment_out: wp.array(dtype=wp.int32),
    closest_out: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
):
    e = wp.tid()
    n = wp.clamp(count[e], 0, n_max)
    last = memory_inout[e]
    f = _locate(position[e], center, arclen, e * n_max, n, valid[e], length[e], last, window)
    memory_inout[e] = f.seg
    s_out[e] = f.s
    n_out[e] = f.off
    n_up_out[e] = f.off_up
    distance_out[e] = f.dist
    segment_out[e] = f.seg
    closest_out[e] = f.q
    tangent_out[e] = f.t


@wp.kernel
def _curvature_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    center: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    # outputs
    curvature_out: wp.array(dtype=wp.float32),
    memory_out: wp.array(dtype=wp.int32),
):
    e, i = wp.tid()
    if mask[e] == 0:
        return
    if i == 0:
        memory_out[e] = -1
    row = e * n_max + i
    n = wp.clamp(count[e], 0, n_max)
    if valid[e] == 0 or n < 2 or i >= n:
        curvature_out[row] = _NAN
        return
    base = e * n_max
    prev = i - 1
    if prev < 0:
        prev = n - 1
    c = center[row]
    a = c - center[base + prev]
    b = center[base + _next(i, n)] - c
    cr = wp.cross(a, b)
    angle = wp.atan2(wp.length(cr), wp.dot(a, b))
    mean = 0.5 * (wp.length(a) + wp.length(b))
    k = float(0.0)
    if mean > 0.0:
        k = angle / mean
    if cr[2] < 0.0:
        k = -k
    curvature_out[row] = k


@wp.kernel
def _reset_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    # outputs
    memory_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if mask[e] != 0:
        memory_out[e] = -1


@wp.kernel
def _curvature_at_kernel(
    # inputs
    s: wp.array(dtype=wp.float32),
    curvature: wp.array(dtype=wp.float32),
    arclen: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    k_per_env: int,
    # outputs
    curvature_at_out: wp.array(dtype=wp.float32),
):
    e, k = wp.tid()
    row = e * k_per_env + k
    n = wp.clamp(count[e], 0, n_max)
    total = length[e]
    q = s[row]
    if valid[e] == 0 or n < 2 or not wp.isfinite(q) or not wp.isfinite(total) or total <= 0.0:
        curvature_at_out[row] = _NAN
        return
    q = q - total * wp.floor(q / total)
    if q >= total or q < 0.0:
        q = 0.0
    base = e * n_max
    lo = _bead_at_arc(arclen, base, n, q)  # the last bead i with arclen[i] <= q (0: none)
    nxt = _next(lo, n)
    a0 = arclen[base + lo]
    a1 = total
    if nxt != 0:
        a1 = arclen[base + nxt]
    t = float(0.0)
    if a1 - a0 > 0.0:
        t = wp.clamp((q - a0) / (a1 - a0), 0.0, 1.0)
    curvature_at_out[row] = (1.0 - t) * curvature[base + lo] + t * curvature[base + nxt]


@wp.kernel
def _speed_profile_kernel(
    # inputs
    curvature: wp.array(dtype=wp.float32),
    # static
    max_lateral_accel: float,
    max_speed: float,
    # outputs
    speed_out: wp.array(dtype=wp.float32),
):
    row = wp.tid()
    k = wp.abs(curvature[row])
    if not wp.isfinite(k):
        speed_out[row] = _NAN
    elif k > 0.0:
        speed_out[row] = wp.min(max_speed, wp.sqrt(max_lateral_accel / k))
    else:
        speed_out[row] = max_speed
