"""The Tunable declarations of the course descriptors (read by their utility and their
component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ...core.tunable import Tunable
from ..fields import positive

_SURFACES = ("tools.CourseStats", "tools.CourseStatsUtility")

#: Most percentiles one meter reports.
MAX_PERCENTILES = 8

CORNER_RADIUS = positive(
    "corner_radius",
    20.0,
    unit="half widths",
    doc="a bead is in a corner where its curvature radius 1/|kappa| is below corner_radius "
    "times the env's mean half width (|kappa| * corner_radius * width_mean / 2 > 1), so the "
    "threshold scales with the road (or the gates' opening).",
    surfaces=_SURFACES,
)

CORNER_ANGLE = Tunable(
    "corner_angle",
    0.2,
    kind="float",
    lo=0.0,
    hi=1000.0,
    unit="rad",
    doc="least turning sum |theta| of a run of corner beads for it to count as a corner "
    "(shorter runs, such as a kink of one bead, count as straight).",
    surfaces=_SURFACES,
)

PERCENTILES = Tunable(
    "percentiles",
    (50.0, 90.0, 99.0),
    kind="floats",
    lo=0.0,
    hi=100.0,
    length=(1, MAX_PERCENTILES),
    unit="%",
    doc="the nearest-rank percentiles of the beads' |curvature| reported per env "
    "(curvature_percentile, in this order).",
    surfaces=_SURFACES,
)

#: Every field of the tool, in its keyword order.
FIELDS = (CORNER_RADIUS, CORNER_ANGLE, PERCENTILES)

CourseStatsSettings = settings_class(
    "CourseStatsSettings",
    FIELDS,
    title="Course stats",
    doc="The settings of the course descriptors (tools.CourseStats, tools.CourseStatsUtility).",
    module="track_gen.tools.course_stats",
)
