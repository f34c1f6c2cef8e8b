"""What every sampler shares, declared once: the course size and the spline density fields,
and the tail of a sampler kernel (arc-resample the loop, fall back when it crosses itself,
scale its bounding box to ``EXTENT * scale``)."""

from __future__ import annotations

import warp as wp

from ..core.extents import EXTENT
from ..core.tunable import Tunable
from ..geometry import bbox_scale, has_self_crossing, resample_closed_box

wp.set_module_options({"enable_backward": False})

SCALE = Tunable(
    "scale",
    1.0,
    lo=0.0,
    hi=1.0e6,
    lo_open=True,
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
    scale: float,
):
    """Arc-resample the closed loop ``src[src_base .. src_base + n_src)`` to ``num_points``
    rows of ``line_out`` from ``lb`` and scale its bounding box's longest side to
    ``EXTENT * scale``, centred on the origin (``seg_len`` from ``len_base``: ``n_src``
    floats of scratch)."""
    box = resample_closed_box(src, src_base, n_src, seg_len, len_base, line_out, lb, num_points)
    bbox_scale(line_out, lb, num_points, box, EXTENT * scale)


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
    scale: float,
):
    """The sampler tail: :func:`resample_scaled` of the first of the closed loops ``first``,
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
    bbox_scale(line_out, lb, num_points, box, EXTENT * scale)


__all__ = ["SCALE", "SEGMENT_POINTS"]
