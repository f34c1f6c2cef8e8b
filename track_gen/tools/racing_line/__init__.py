"""Minimum-curvature racing lines, target speeds and par lap times per env:
:class:`RacingLine` (the course component ``"racing_line"``), :class:`RacingLineUtility` (its
utility) and :class:`RacingLineResult` (its result). See ``docs/racing-line.md``."""

from ...core.deprecation import deprecated_names
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
from .result import RacingLineResult
from .utility import RacingLineUtility

__all__ = [
    "A_LAT",
    "A_LON",
    "ITERATIONS",
    "KAPPA_ITERATIONS",
    "KAPPA_MAX",
    "LINEARISATIONS",
    "MIN_BEADS",
    "RacingLine",
    "RacingLineUtility",
    "RacingLineResult",
    "RacingLineSettings",
    "V_MAX",
    "VEHICLE_WIDTH",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "RacingLinePlanner": "RacingLineUtility",
    "RacingLineSet": "RacingLineResult",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
