"""What the samplers share: the course size and spline density fields, and the gate tail.

In a gate pipeline (``ws.layout.family == "gates"``, :func:`knot_loop`) the bezier, hull,
polar and checkpoint samplers stop at their **knots** (the corners, polygon vertices, spline
knots or checkpoints a track's curve or walk is built from) and write a coarse loop made from
them with :func:`emit_knots`, their shared tail; ``gate_anchors`` places the gates along it by
arc length. No dense curve is built and no self-crossing is tested: a gate course may cross
itself in plan view.
"""

from __future__ import annotations

import warp as wp

from ..core.tunable import Tunable
from ..geometry import bbox_scale, resample_scaled

wp.set_module_options({"enable_backward": False})

SCALE = Tunable(
    "scale",
    1.0,
    lo=1.0e-6,
    hi=1.0e6,
    dynamic=True,
    unit="track units",
    doc="isotropic course size: each sampler scales its loop so the longest bounding-box side "
    "is 1.44 * scale.",
)
SEGMENT_POINTS = Tunable(
    "num_points_per_segment",
    30,
    lo=2,
    hi=256,
    unit="points",
    doc="dense samples per spline segment (bezier cubics, Catmull-Rom spans) before the loop "
    "is arc-resampled to num_points.",
)

#: The pipeline family whose samplers write a loop made from their knots (:func:`emit_knots`).
GATES = "gates"


def knot_loop(ws) -> bool:
    """True when a sampler writes the coarse loop of its knots (a gate pipeline) rather than
    its track centerline."""
    return ws.layout.family == GATES


@wp.func
def cut_corners(pts: wp.array(dtype=wp.vec2f), b: int, n: int):
    """One corner-cutting round on the closed polygon ``pts[b .. b + n)``, in place: vertex i
    becomes the midpoint of edge (i, i + 1). The midpoints are where the uniform quadratic
    B-spline of the polygon touches it; every round rounds the polygon further."""
    first = pts[b]
    for i in range(n - 1):
        pts[b + i] = 0.5 * (pts[b + i] + pts[b + i + 1])
    pts[b + n - 1] = 0.5 * (pts[b + n - 1] + first)


@wp.func
def emit_knots(
    knots: wp.array(dtype=wp.vec2f),
    kb: int,
    n: int,
    rounds: int,
    seg_len: wp.array(dtype=wp.float32),
    len_base: int,
    line_out: wp.array(dtype=wp.vec2f),
    lb: int,
    num_points: int,
    extent: float,
):
    """The gate samplers' tail: the closed knot polygon ``knots[kb .. kb + n)`` after
    ``rounds`` :func:`cut_corners` rounds (in place: ``knots`` is the caller's scratch) into
    the ``num_points`` rows of ``line_out`` from ``lb``, its bounding box centred on the
    origin with its longest side ``extent``.

    ``n <= num_points``: the ``n`` vertices, the last one repeated over the remaining rows
    (zero-length segments: the loop and its length are the polygon's). ``n > num_points``:
    the polygon arc-resampled to ``num_points`` (``seg_len`` from ``len_base``: ``n`` floats
    of scratch).
    """
    for _r in range(rounds):
        cut_corners(knots, kb, n)
    if n > num_points:
        resample_scaled(knots, kb, n, seg_len, len_base, line_out, lb, num_points, extent)
    else:
        lo = knots[kb]
        hi = lo
        for i in range(n):
            p = knots[kb + i]
            lo = wp.min(lo, p)
            hi = wp.max(hi, p)
            line_out[lb + i] = p
        bbox_scale(line_out, lb, n, wp.vec4f(lo[0], lo[1], hi[0], hi[1]), extent)
        last = line_out[lb + n - 1]
        for i in range(n, num_points):
            line_out[lb + i] = last


__all__ = ["GATES", "SCALE", "SEGMENT_POINTS", "cut_corners", "emit_knots", "knot_loop"]
