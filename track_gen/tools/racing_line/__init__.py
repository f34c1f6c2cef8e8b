"""Minimum-curvature racing lines, target speeds and par lap times per env:
:class:`RacingLine` (the course component ``"racing_line"``), :class:`RacingLinePlanner` (its
utility) and :class:`RacingLineSet` (its result). See ``docs/racing-line.md``."""

from .component import RacingLine
from .fields import (
    A_LAT,
    A_LON,
    ITERATIONS,
    KAPPA_ITERATIONS,
    KAPPA_MAX,
    LINEARISATIONS,
    V_MAX,
    VEHICLE_WIDTH,
    RacingLineSettings,
)
from .kernels import MIN_BEADS
from .result import RacingLineSet
from .utility import RacingLinePlanner

__all__ = [
    "A_LAT",
    "A_LON",
    "ITERATIONS",
    "KAPPA_ITERATIONS",
    "KAPPA_MAX",
    "LINEARISATIONS",
    "MIN_BEADS",
    "RacingLine",
    "RacingLinePlanner",
    "RacingLineSet",
    "RacingLineSettings",
    "V_MAX",
    "VEHICLE_WIDTH",
]
