"""Look-ups on a row of cumulative arc lengths (``arclen[i]``: the arc before bead ``i``)."""

from __future__ import annotations

import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.func
def bead_at_arc(arclen: wp.array(dtype=wp.float32), base: int, n: int, s: float) -> int:
    """The last bead ``i`` in ``[0, n - 1]`` with ``arclen[base + i] <= s`` (bead 0 when
    none): a binary search of the non-decreasing row ``arclen[base .. base + n - 1]``."""
    lo = int(0)
    hi = n - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if arclen[base + mid] <= s:
            lo = mid
        else:
            hi = mid - 1
    return lo


@wp.func
def bead_at_arc64(arclen: wp.array(dtype=wp.float32), base: int, n: int, u: wp.float64) -> int:
    """:func:`bead_at_arc` compared in float64: the last bead ``i`` in ``[0, n - 1]`` with
    ``arclen[base + i] <= u`` (bead 0 when none)."""
    lo = int(0)
    hi = n - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if wp.float64(arclen[base + mid]) <= u:
            lo = mid
        else:
            hi = mid - 1
    return lo


@wp.func
def arc_ahead(s: float, d: wp.float64, total: float) -> wp.float64:
    """The closed line's arc ``s + d`` wrapped into ``[0, total)``, in float64 (a result
    rounded up to ``total``: the start line, 0)."""
    big = wp.float64(total)
    u = wp.float64(s) + d
    u = u - wp.floor(u / big) * big
    if not (u < big) or not (u >= wp.float64(0.0)):
        u = wp.float64(0.0)
    return u


@wp.func
def bead_fraction(
    arclen: wp.array(dtype=wp.float32), base: int, n: int, total: float, i: int, u: wp.float64
) -> float:
    """Where arc ``u`` lies between bead ``i`` and the next one (the start line after the
    last), in ``[0, 1]``: 0 where the two coincide."""
    end = wp.float64(total)
    if i + 1 < n:
        end = wp.float64(arclen[base + i + 1])
    a = wp.float64(arclen[base + i])
    t = float(0.0)
    if end - a > wp.float64(0.0):
        t = float(wp.clamp((u - a) / (end - a), wp.float64(0.0), wp.float64(1.0)))
    return t


@wp.func
def point_at_arc(
    points: wp.array(dtype=wp.vec3f),
    arclen: wp.array(dtype=wp.float32),
    base: int,
    n: int,
    total: float,
    u: wp.float64,
) -> wp.vec3f:
    """The closed polyline ``points[base .. base + n - 1]`` at arc ``u`` in ``[0, total)``:
    linear between the two beads around it (:func:`bead_at_arc64`, :func:`bead_fraction`)."""
    i = bead_at_arc64(arclen, base, n, u)
    j = i + 1
    if j >= n:
        j = 0
    t = bead_fraction(arclen, base, n, total, i, u)
    pi = points[base + i]
    return pi + t * (points[base + j] - pi)
