"""Closed polylines: perimeter, arc-uniform resampling, centroid and angle sort, bounding-box
scaling, curvature, finiteness, and the samplers' tail (resample the first of up to three
loops that does not cross itself, scale it).

All functions work on one env's rows of a flat array: ``pts[base + i]`` for ``i < n``, the
loop closing from ``n - 1`` back to ``0``.
"""

from __future__ import annotations

import warp as wp

from .crossings import has_self_crossing
from .vectors import cross2

wp.set_module_options({"enable_backward": False})


@wp.func
def closed_length(pts: wp.array(dtype=wp.vec2f), base: int, n: int) -> wp.float64:
    """Perimeter of the closed loop (float64 accumulation)."""
    total = wp.float64(0.0)
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        total += wp.float64(wp.length(pts[base + j] - pts[base + i]))
    return total


@wp.func
def arc_fraction(target: wp.float64, acc: wp.float64, seg: wp.float64) -> float:
    """How far along an edge that starts at arc ``acc`` and is ``seg`` long the arc
    ``target`` lies, clamped to [0, 1] (float64 arc, float32 fraction)."""
    t = float((target - acc) / wp.max(seg, wp.float64(1.0e-12)))
    return wp.clamp(t, 0.0, 1.0)


@wp.func
def lerp_on_edge(values: wp.array(dtype=wp.vec2f), base: int, n: int, j: int, t: float) -> wp.vec2f:
    """The value at fraction ``t`` along edge ``j -> j + 1`` of the closed loop
    ``values[base .. base + n)`` (linear interpolation): a point of the loop, or any per-point
    data interpolated like it (road widths)."""
    jn = j + 1
    if jn == n:
        jn = 0
    v0 = values[base + j]
    return v0 + t * (values[base + jn] - v0)


@wp.func
def emit_along_loop(
    src: wp.array(dtype=wp.vec2f),
    src_base: int,
    n_src: int,
    dst: wp.array(dtype=wp.vec2f),
    dst_base: int,
    n_out: int,
    arc_num: wp.float64,
    arc_den: wp.float64,
):
    """Write ``n_out`` points of the closed loop ``src`` at arc ``k * arc_num / arc_den``
    (k = 0 .. n_out-1; float64 arc, one forward walk, linear interpolation)."""
    j = int(0)
    acc = wp.float64(0.0)
    seg = wp.float64(wp.length(src[src_base + 1] - src[src_base]))
    for k in range(n_out):
        target = wp.float64(k) * arc_num / arc_den
        while acc + seg < target and j < n_src - 1:
            acc += seg
            j += 1
            jn = j + 1
            if jn == n_src:
                jn = 0
            seg = wp.float64(wp.length(src[src_base + jn] - src[src_base + j]))
        t = arc_fraction(target, acc, seg)
        dst[dst_base + k] = lerp_on_edge(src, src_base, n_src, j, t)


@wp.func
def resample_closed(
    src: wp.array(dtype=wp.vec2f),
    src_base: int,
    n_src: int,
    dst: wp.array(dtype=wp.vec2f),
    dst_base: int,
    n_dst: int,
):
    """Arc-uniform resampling of a closed loop: ``dst[k]`` at arc ``k * L / n_dst``."""
    total = closed_length(src, src_base, n_src)
    emit_along_loop(src, src_base, n_src, dst, dst_base, n_dst, total, wp.float64(n_dst))


@wp.func
def resample_closed_box(
    src: wp.array(dtype=wp.vec2f),
    src_base: int,
    n_src: int,
    seg_len: wp.array(dtype=wp.float32),
    len_base: int,
    dst: wp.array(dtype=wp.vec2f),
    dst_base: int,
    n_dst: int,
) -> wp.vec4f:
    """:func:`resample_closed` bit for bit, faster; returns the bounding box
    ``(lo x, lo y, hi x, hi y)`` of the written points as :func:`bbox_normalize` finds it.

    ``seg_len[len_base .. len_base + n_src)`` is scratch: each segment's length is computed
    once (the perimeter pass) and read back by the walk instead of recomputed there.
    """
    total = wp.float64(0.0)
    for i in range(n_src):
        j = i + 1
        if j == n_src:
            j = 0
        sl = wp.length(src[src_base + j] - src[src_base + i])
        seg_len[len_base + i] = sl
        total += wp.float64(sl)
    arc_den = wp.float64(n_dst)
    j = int(0)
    acc = wp.float64(0.0)
    seg = wp.float64(seg_len[len_base])
    lo = wp.vec2f(0.0, 0.0)
    hi = wp.vec2f(0.0, 0.0)
    for k in range(n_dst):
        target = wp.float64(k) * total / arc_den
        while acc + seg < target and j < n_src - 1:
            acc += seg
            j += 1
            seg = wp.float64(seg_len[len_base + j])
        q = lerp_on_edge(src, src_base, n_src, j, arc_fraction(target, acc, seg))
        dst[dst_base + k] = q
        if k == 0:
            lo = q
            hi = q
        lo = wp.min(lo, q)
        hi = wp.max(hi, q)
    return wp.vec4f(lo[0], lo[1], hi[0], hi[1])


@wp.func
def centroid(pts: wp.array(dtype=wp.vec2f), base: int, n: int) -> wp.vec2f:
    """Mean of the ``n`` points."""
    c = wp.vec2f(0.0, 0.0)
    for i in range(n):
        c += pts[base + i]
    return c / float(wp.max(n, 1))


@wp.func
def sort_by_angle(pts: wp.array(dtype=wp.vec2f), base: int, n: int, center: wp.vec2f):
    """Counter-clockwise insertion sort of ``n`` points by their angle around ``center``."""
    for i in range(1, n):
        p = pts[base + i]
        a = wp.atan2(p[1] - center[1], p[0] - center[0])
        j = i - 1
        while j >= 0:
            q = pts[base + j]
            if wp.atan2(q[1] - center[1], q[0] - center[0]) <= a:
                break
            pts[base + j + 1] = q
            j -= 1
        pts[base + j + 1] = p


@wp.func
def sort_by_angle_keyed(
    pts: wp.array(dtype=wp.vec2f),
    base: int,
    n: int,
    center: wp.vec2f,
    keys: wp.array(dtype=wp.float32),
    kbase: int,
):
    """:func:`sort_by_angle` bit for bit (the same permutation) with each point's angle
    computed once instead of at every comparison; afterwards ``keys[kbase + i]`` holds the
    angle ``atan2`` of ``pts[base + i] - center``."""
    for i in range(n):
        p = pts[base + i]
        keys[kbase + i] = wp.atan2(p[1] - center[1], p[0] - center[0])
    for i in range(1, n):
        p = pts[base + i]
        a = keys[kbase + i]
        j = i - 1
        while j >= 0:
            qa = keys[kbase + j]
            if qa <= a:
                break
            pts[base + j + 1] = pts[base + j]
            keys[kbase + j + 1] = qa
            j -= 1
        pts[base + j + 1] = p
        keys[kbase + j + 1] = a


@wp.func
def bbox_scale(pts: wp.array(dtype=wp.vec2f), base: int, n: int, box: wp.vec4f, extent: float):
    """Centre the bounding box ``box = (lo x, lo y, hi x, hi y)`` of the loop on the origin
    and scale its longest side to ``extent`` (the second half of :func:`bbox_normalize`)."""
    lo = wp.vec2f(box[0], box[1])
    hi = wp.vec2f(box[2], box[3])
    mid = 0.5 * (lo + hi)
    side = wp.max(hi[0] - lo[0], hi[1] - lo[1])
    s = extent / wp.max(side, 1.0e-12)
    for i in range(n):
        pts[base + i] = (pts[base + i] - mid) * s


@wp.func
def bbox_normalize(pts: wp.array(dtype=wp.vec2f), base: int, n: int, extent: float):
    """Centre the loop's bounding box on the origin and scale its longest side to ``extent``."""
    lo = pts[base]
    hi = lo
    for i in range(n):
        lo = wp.min(lo, pts[base + i])
        hi = wp.max(hi, pts[base + i])
    bbox_scale(pts, base, n, wp.vec4f(lo[0], lo[1], hi[0], hi[1]), extent)


@wp.func
def menger_curvature(a: wp.vec2f, b: wp.vec2f, c: wp.vec2f) -> float:
    """Unsigned curvature (1/radius) of the circle through a, b, c; 0 for collinear points."""
    la = wp.length(b - a)
    lb = wp.length(c - b)
    lc = wp.length(c - a)
    den = la * lb * lc
    if den <= 1.0e-20:
        return 0.0
    return 2.0 * wp.abs(cross2(b - a, c - a)) / den


@wp.func
def all_finite(pts: wp.array(dtype=wp.vec2f), base: int, n: int) -> bool:
    for i in range(n):
        p = pts[base + i]
        if not (wp.isfinite(p[0]) and wp.isfinite(p[1])):
            return False
    return True


@wp.func
def resample_scaled(
    src: wp.array(dtype=wp.vec2f),
    src_base: int,
    n_src: int,
    seg_len: wp.array(dtype=wp.float32),
    len_base: int,
    line_out: wp.array(dtype=wp.vec2f),
    lb: int,
    num_points: int,
    extent: float,
):
    """Arc-resample the closed loop ``src[src_base .. src_base + n_src)`` to ``num_points``
    rows of ``line_out`` from ``lb`` and scale its bounding box's longest side to ``extent``,
    centred on the origin (``seg_len`` from ``len_base``: ``n_src`` floats of scratch)."""
    box = resample_closed_box(src, src_base, n_src, seg_len, len_base, line_out, lb, num_points)
    bbox_scale(line_out, lb, num_points, box, extent)


@wp.func
def resample_first_simple(
    first: wp.array(dtype=wp.vec2f),
    first_base: int,
    n_first: int,
    middle: wp.array(dtype=wp.vec2f),
    middle_base: int,
    n_middle: int,
    last: wp.array(dtype=wp.vec2f),
    last_base: int,
    n_last: int,
    seg_len: wp.array(dtype=wp.float32),
    len_base: int,
    cross_boxes: wp.array(dtype=wp.vec4f),
    cross_turns: wp.array(dtype=wp.float32),
    cross_base: int,
    line_out: wp.array(dtype=wp.vec2f),
    lb: int,
    num_points: int,
    extent: float,
):
    """The tail of the samplers: :func:`resample_scaled` of the first of the closed loops ``first``,
    ``middle``, ``last`` whose resampling does not cross itself (``has_self_crossing`` on the
    resampled rows), ``last`` when both others cross; ``n_middle = 0`` skips ``middle``.

    ``seg_len`` from ``len_base`` is scratch for the longest loop's segment lengths,
    ``cross_boxes`` / ``cross_turns`` from ``cross_base`` the :class:`CrossingScratch` of a
    ``num_points`` loop.
    """
    box = resample_closed_box(
        first, first_base, n_first, seg_len, len_base, line_out, lb, num_points
    )
    if has_self_crossing(line_out, lb, num_points, cross_boxes, cross_turns, cross_base):
        crossed = bool(True)
        if n_middle > 0:
            box = resample_closed_box(
                middle, middle_base, n_middle, seg_len, len_base, line_out, lb, num_points
            )
            crossed = has_self_crossing(
                line_out, lb, num_points, cross_boxes, cross_turns, cross_base
            )
        if crossed:
            box = resample_closed_box(
                last, last_base, n_last, seg_len, len_base, line_out, lb, num_points
            )
    bbox_scale(line_out, lb, num_points, box, extent)
