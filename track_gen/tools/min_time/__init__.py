"""Minimum-time trajectories of a point mass through gates or waypoints (drone racing pars):
:class:`MinTime` (the course component ``"min_time"`` of gate courses),
:class:`MinTimeUtility` (its utility, for any batch of point sequences),
:class:`MinTimeResult` (its result) and :class:`MinTimeSettings` (their settings). See
``docs/drone-racing.md``."""

from ...core.deprecation import deprecated_names
from .component import MinTime
from .fields import GRAVITY, ITERATIONS, MAX_WORK, SAMPLES, T_MAX, V_MAX, MinTimeSettings
from .result import MinTimeResult, MinTimeStatus
from .utility import MAX_POINTS, MinTimeUtility, work_estimate

__all__ = [
    "GRAVITY",
    "ITERATIONS",
    "MAX_POINTS",
    "MAX_WORK",
    "MinTime",
    "MinTimeResult",
    "MinTimeSettings",
    "MinTimeStatus",
    "MinTimeUtility",
    "SAMPLES",
    "T_MAX",
    "V_MAX",
    "work_estimate",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "MinTimePlanner": "MinTimeUtility",
    "MinTimeSet": "MinTimeResult",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
