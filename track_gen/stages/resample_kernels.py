"""Arc-length tables and point emission shared by the resample and inflate stages, in both
thread layouts (one thread per env, one thread per output point), and the per-row emission
kernel of the resample stage's per_item layout and of the bead widths.

A closed polyline's arc is tabulated once per env (:func:`tabulate_arc`: float64 arc at
each vertex, float32 length of each edge, accumulated in vertex order); output point ``k`` of
``n_out`` sits at arc :func:`arc_target` ``= k * total / n_out``. The edge holding it is the
first edge ``j`` whose end arc ``arc[j+1]`` is not below the target (the last edge when none
is): a forward walk finds it (:func:`walk_to_arc`, one thread per env, targets in order) and
so does a binary search (:func:`search_arc`, one thread per point), because the table never
decreases and the targets never decrease. ``geometry.lerp_on_edge`` interpolates on that edge, with
the fraction :func:`edge_fraction`.

The arithmetic is the one of ``geometry.emit_along_loop`` (float64 arc, ``acc + seg`` being
the next table entry bitwise), so both layouts and the previous single walk give
bitwise-identical points.
"""

from __future__ import annotations

import warp as wp

from ..geometry import NAN
from ..geometry.polylines import arc_fraction, lerp_on_edge

# fuse_fp off: no multiply-add contraction, so the per_env and per_item kernels round alike
# on every device (CUDA would otherwise contract them differently).
wp.set_module_options({"enable_backward": False, "fuse_fp": False})


@wp.func
def tabulate_arc(
    # inputs
    src: wp.array(dtype=wp.vec2f),
    base: int,
    n: int,
    # outputs
    arc_out: wp.array(dtype=wp.float64),
    arc_base: int,
    edge_out: wp.array(dtype=wp.float32),
    edge_base: int,
):
    """Tabulate the closed loop ``src[base .. base+n)``: ``arc_out[arc_base + j]`` (float64,
    ``j = 0 .. n``) is the arc length at vertex ``j`` (``arc_out[arc_base + n]`` the
    perimeter), ``edge_out[edge_base + j]`` (float32) the length of edge ``j -> j+1`` (the
    last one closing the loop).

    Returns ``(perimeter, finite)``: ``finite`` is 1 when every vertex is finite (the table
    is meaningless otherwise)."""
    acc = wp.float64(0.0)
    # 0 * x is NaN exactly when x is NaN or infinite: one running sum, no branch per vertex
    probe = float(0.0)
    for j in range(n):
        jn = j + 1
        if jn == n:
            jn = 0
        p = src[base + j]
        probe += p[0] * 0.0 + p[1] * 0.0
        le = wp.length(src[base + jn] - p)
        arc_out[arc_base + j] = acc
        edge_out[edge_base + j] = le
        acc += wp.float64(le)
    arc_out[arc_base + n] = acc
    finite = int(0)
    if wp.isfinite(probe):
        finite = 1
    return acc, finite


@wp.func
def arc_target(k: int, arc_num: wp.float64, arc_den: wp.float64) -> wp.float64:
    """Arc of output point ``k``: ``k * arc_num / arc_den`` in float64."""
    return wp.float64(k) * arc_num / arc_den


@wp.func
def walk_to_arc(
    arc: wp.array(dtype=wp.float64), arc_base: int, n: int, j: int, target: wp.float64
) -> int:
    """From edge ``j`` forward: the first edge whose end arc is not below ``target``, or the
    last edge ``n - 1`` (targets visited in non-decreasing order)."""
    e = j
    while arc[arc_base + e + 1] < target and e < n - 1:
        e += 1
    return e


@wp.func
def search_arc(arc: wp.array(dtype=wp.float64), arc_base: int, n: int, target: wp.float64) -> int:
    """The edge :func:`walk_to_arc` reaches for ``target``, by binary search over the whole
    table (``arc[j + 1] < target`` holds for a leading run of edges and then never again)."""
    lo = int(0)
    hi = n - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if arc[arc_base + mid + 1] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@wp.func
def edge_fraction(
    arc: wp.array(dtype=wp.float64),
    arc_base: int,
    edge: wp.array(dtype=wp.float32),
    edge_base: int,
    j: int,
    target: wp.float64,
) -> float:
    """How far along edge ``j`` of the tabulated loop the arc ``target`` lies, in [0, 1]
    (what ``geometry.lerp_on_edge`` interpolates the points with, and other per-point data such
    as road widths)."""
    return arc_fraction(target, arc[arc_base + j], wp.float64(edge[edge_base + j]))


@wp.func
def locate(
    arc: wp.array(dtype=wp.float64),
    arc_base: int,
    n: int,
    edge: wp.array(dtype=wp.float32),
    edge_base: int,
    k: int,
    n_out: int,
    j_from: int,
):
    """Where output point ``k`` of ``n_out`` lies on the tabulated loop of ``n`` points:
    ``(edge j, fraction along it)`` at arc :func:`arc_target` of the perimeter
    ``arc[arc_base + n]``. ``j_from >= 0`` walks forward from edge ``j_from``
    (:func:`walk_to_arc`: one thread placing the points in increasing ``k``), ``j_from < 0``
    searches the whole table (:func:`search_arc`: one thread per point); both find the same
    edge."""
    target = arc_target(k, arc[arc_base + n], wp.float64(n_out))
    j = int(0)
    if j_from >= 0:
        j = walk_to_arc(arc, arc_base, n, j_from, target)
    else:
        j = search_arc(arc, arc_base, n, target)
    return j, edge_fraction(arc, arc_base, edge, edge_base, j, target)


@wp.kernel
def emit_rows_kernel(
    # inputs
    values: wp.array(dtype=wp.vec2f),
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    arc: wp.array(dtype=wp.float64),
    edge: wp.array(dtype=wp.float32),
    # static
    num_points: int,
    n_max: int,
    # outputs
    rows_out: wp.array(dtype=wp.vec2f),
):
    """per_item, one thread per bead row: the loop's ``values`` (``[E*num_points]``: its
    points, or their road widths) at bead k's arc position on the tabulated loop, NaN past
    the count: the resample stage's beads, and the beads' widths (``stages/widths.py``)."""
    e, k = wp.tid()
    if active[e] == 0:
        return
    n = count[e]
    if k >= n:
        rows_out[e * n_max + k] = wp.vec2f(NAN, NAN)
        return
    lb = e * num_points
    ab = e * (num_points + 1)
    j, frac = locate(arc, ab, num_points, edge, lb, k, n, -1)
    rows_out[e * n_max + k] = lerp_on_edge(values, lb, num_points, j, frac)
