"""Per-env course descriptors (curriculum features, reports): :class:`CourseStats` (the
course component ``"stats"``), :class:`CourseStatsMeter` (its utility) and
:class:`CourseStatsSet` (its result). See ``docs/course-stats.md``."""

from .component import CourseStats
from .fields import (
    CORNER_ANGLE,
    CORNER_RADIUS,
    MAX_PERCENTILES,
    PERCENTILES,
    CourseStatsSettings,
)
from .result import DESCRIPTORS, CourseStatsSet
from .utility import CourseStatsMeter

__all__ = [
    "CORNER_ANGLE",
    "CORNER_RADIUS",
    "DESCRIPTORS",
    "MAX_PERCENTILES",
    "PERCENTILES",
    "CourseStats",
    "CourseStatsMeter",
    "CourseStatsSet",
    "CourseStatsSettings",
]
