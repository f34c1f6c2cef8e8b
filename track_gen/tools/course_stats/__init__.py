"""Per-env course descriptors (curriculum features, reports): :class:`CourseStats` (the
course component ``"stats"``), :class:`CourseStatsUtility` (its utility) and
:class:`CourseStatsResult` (its result). See ``docs/course-stats.md``."""

from ...core.deprecation import deprecated_names
from .component import CourseStats
from .fields import (
    CORNER_ANGLE,
    CORNER_RADIUS,
    MAX_PERCENTILES,
    PERCENTILES,
    CourseStatsSettings,
)
from .result import DESCRIPTORS, CourseStatsResult
from .utility import CourseStatsUtility

__all__ = [
    "CORNER_ANGLE",
    "CORNER_RADIUS",
    "DESCRIPTORS",
    "MAX_PERCENTILES",
    "PERCENTILES",
    "CourseStats",
    "CourseStatsUtility",
    "CourseStatsResult",
    "CourseStatsSettings",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "CourseStatsMeter": "CourseStatsUtility",
    "CourseStatsSet": "CourseStatsResult",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
