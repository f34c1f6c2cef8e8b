"""The heightfield tool (see :mod:`track_gen.tools.heightfield.utility`)."""

from .utility import (
    FILL,
    MARGIN,
    MIN_TEXELS_ACROSS,
    RESOLUTION,
    SIZE_HI,
    GridResolutionWarning,
    HeightField,
    HeightFieldBake,
    HeightFieldBaker,
    check_grid_resolution,
    fill_grid_kernel,
    largest_course_scale,
)

__all__ = [
    "FILL",
    "GridResolutionWarning",
    "HeightField",
    "HeightFieldBake",
    "HeightFieldBaker",
    "MARGIN",
    "MIN_TEXELS_ACROSS",
    "RESOLUTION",
    "SIZE_HI",
    "check_grid_resolution",
    "fill_grid_kernel",
    "largest_course_scale",
]
