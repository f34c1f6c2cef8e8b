"""Minimum-time trajectories of a point mass through gates or waypoints (drone racing pars):
:class:`MinTime` (the course component ``"min_time"`` of gate courses),
:class:`MinTimePlanner` (its utility, for any batch of point sequences) and :class:`MinTimeSet`
(its result). See ``docs/drone-racing.md``."""

from .component import MinTime
from .fields import GRAVITY, ITERATIONS, MAX_WORK, SAMPLES, T_MAX, V_MAX, MinTimeSettings
from .result import MinTimeSet, MinTimeStatus
from .utility import MAX_POINTS, MinTimePlanner, work_estimate

__all__ = [
    "GRAVITY",
    "ITERATIONS",
    "MAX_POINTS",
    "MAX_WORK",
    "MinTime",
    "MinTimePlanner",
    "MinTimeSet",
    "MinTimeSettings",
    "MinTimeStatus",
    "SAMPLES",
    "T_MAX",
    "V_MAX",
    "work_estimate",
]
