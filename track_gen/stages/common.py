"""Fields every sampler shares, declared once: the course size and the spline density."""

from __future__ import annotations

from ..core.tunable import Tunable

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


__all__ = ["SCALE", "SEGMENT_POINTS"]
