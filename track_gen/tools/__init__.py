"""Runtime tools that work on generated courses: course components and their utilities.

Components (``Component`` subclasses, used by :class:`track_gen.course.Course`):

* track courses: ``Checkpoints``, ``Progress``, ``BandCollision``, ``Localizer``,
  ``HeightFieldBake``, ``Props``, ``RacingLine``, ``EgoRaster``, ``CourseStats``
  (``CourseStats(source="centerline")`` on a gate course); the per-step sensors
  ``Lookahead`` (-> ``LookaheadResult``), ``ConeDetections`` (-> ``ConeDetectionsResult``) and
  ``Lidar`` (-> ``LidarResult``);
* gate courses: ``GateCheckpoints``, ``CenterlineFromGates``, ``Progress``, ``DiscCollision``
  or ``FrameCollision``, ``Localizer(source="centerline")``, ``Lidar``, ``NextGates``,
  ``MinTime`` (the point-mass par of a lap, -> ``MinTimeResult``).

Utilities they wrap: ``CheckpointsUtility`` (-> ``CheckpointsResult``), ``ProgressUtility``
(-> ``ProgressEvents``), ``BandCollisionUtility`` (-> ``BandCollisionResult``),
``CourseLineUtility`` (-> ``CourseLineResult``), ``LocalizerUtility`` (-> ``TrackFrame``),
``DiscCollisionUtility`` (-> ``DiscContact``), ``FrameCollisionUtility`` (-> ``FrameContact``),
``MinTimeUtility`` (-> ``MinTimeResult``; also any batch of waypoint paths). The component contract
(``Component``, ``ComponentContext``, ``InputSpec``, ``order_components``) lives in
:mod:`track_gen.course` and is re-exported here, with ``check_component`` (which call of a
component a conditional regeneration body cannot hold).
"""

from ..core.capture_check import CaptureProblem, check_component
from ..core.component import Component, ComponentContext, InputSpec, order_components
from ..core.deprecation import deprecated_names
from .band_collision import (
    BandCollision,
    BandCollisionResult,
    BandCollisionSettings,
    BandCollisionUtility,
)
from .checkpoints import (
    Checkpoints,
    CheckpointsResult,
    CheckpointsSettings,
    CheckpointsUtility,
    GateCheckpoints,
)
from .cones import (
    ConeColour,
    ConeDetections,
    ConeDetectionsResult,
    ConeDetectionsSettings,
    ConeDetectionsUtility,
)
from .cones.term import ConesSettings, ConesTerm
from .course_line import (
    CenterlineFromGates,
    CourseLineResult,
    CourseLineSettings,
    CourseLineUtility,
)
from .course_stats import CourseStats, CourseStatsResult, CourseStatsSettings, CourseStatsUtility
from .gate_collision import (
    DiscCollision,
    DiscCollisionSettings,
    DiscCollisionUtility,
    DiscContact,
    FrameCollision,
    FrameCollisionSettings,
    FrameCollisionUtility,
    FrameContact,
    FrameMember,
)
from .heightfield import (
    GridResolutionWarning,
    HeightFieldBake,
    HeightFieldResult,
    HeightFieldSettings,
    HeightFieldUtility,
    check_grid_resolution,
)
from .lidar import Lidar, LidarResult, LidarSettings, LidarUtility
from .lidar.term import LidarTerm
from .localizer import Localizer, LocalizerSettings, LocalizerUtility, TrackFrame
from .lookahead import Lookahead, LookaheadResult, LookaheadSettings, LookaheadUtility
from .lookahead.term import LookaheadTerm
from .min_time import MinTime, MinTimeResult, MinTimeSettings, MinTimeStatus, MinTimeUtility
from .next_gates import NextGates, NextGatesResult, NextGatesSettings, NextGatesUtility
from .next_gates.term import NextGatesTerm
from .progress import Progress, ProgressEvents, ProgressUtility
from .props import PropKind, Props, PropSide, PropsResult, PropsSettings, PropsUtility
from .racing_line import RacingLine, RacingLineResult, RacingLineSettings, RacingLineUtility
from .raster import EgoRaster, EgoRasterResult, EgoRasterSettings, EgoRasterUtility, RasterCell
from .raster.term import RasterTerm
from .terms import (
    ObservationTerm,
    TermContext,
    TermOutputs,
    final_flag,
    observation_term,
    observation_terms,
    put_column,
    register_term,
    settings_class,
    unit_or_zero,
    unregister_term,
)

# the built-in observation terms, in their documented order: one line per term
register_term(LidarTerm())
register_term(LookaheadTerm())
register_term(ConesTerm())
register_term(RasterTerm())
register_term(NextGatesTerm())

__all__ = [
    "unregister_term",
    "unit_or_zero",
    "settings_class",
    "put_column",
    "final_flag",
    "register_term",
    "observation_terms",
    "observation_term",
    "TermOutputs",
    "TermContext",
    "RasterTerm",
    "ObservationTerm",
    "LookaheadTerm",
    "LidarTerm",
    "NextGatesTerm",
    "ConesTerm",
    "ConesSettings",
    "BandCollisionUtility",
    "BandCollision",
    "BandCollisionSettings",
    "BandCollisionResult",
    "CaptureProblem",
    "CenterlineFromGates",
    "CheckpointsUtility",
    "CheckpointsResult",
    "Checkpoints",
    "CheckpointsSettings",
    "Component",
    "ComponentContext",
    "ConeColour",
    "ConeDetectionsResult",
    "ConeDetections",
    "ConeDetectionsSettings",
    "ConeDetectionsUtility",
    "CourseLineResult",
    "CourseLineUtility",
    "CourseLineSettings",
    "CourseStats",
    "CourseStatsUtility",
    "CourseStatsResult",
    "CourseStatsSettings",
    "DiscCollisionUtility",
    "DiscCollision",
    "DiscCollisionSettings",
    "DiscContact",
    "EgoRaster",
    "EgoRasterResult",
    "EgoRasterSettings",
    "EgoRasterUtility",
    "FrameCollisionUtility",
    "FrameCollision",
    "FrameCollisionSettings",
    "FrameContact",
    "FrameMember",
    "GateCheckpoints",
    "GridResolutionWarning",
    "HeightFieldResult",
    "HeightFieldBake",
    "HeightFieldUtility",
    "HeightFieldSettings",
    "InputSpec",
    "Lidar",
    "LidarResult",
    "LidarUtility",
    "LidarSettings",
    "Localizer",
    "LocalizerSettings",
    "Lookahead",
    "LookaheadResult",
    "LookaheadUtility",
    "MinTime",
    "MinTimeResult",
    "MinTimeSettings",
    "MinTimeStatus",
    "MinTimeUtility",
    "LookaheadSettings",
    "NextGatesResult",
    "NextGatesUtility",
    "NextGates",
    "NextGatesSettings",
    "Progress",
    "ProgressEvents",
    "ProgressUtility",
    "PropKind",
    "PropsUtility",
    "PropsResult",
    "PropSide",
    "Props",
    "PropsSettings",
    "RacingLine",
    "RacingLineUtility",
    "RacingLineResult",
    "RacingLineSettings",
    "RasterCell",
    "TrackFrame",
    "LocalizerUtility",
    "check_component",
    "check_grid_resolution",
    "order_components",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "BandCollider": "BandCollisionUtility",
    "BandContact": "BandCollisionResult",
    "CheckpointPlacer": "CheckpointsUtility",
    "CheckpointSet": "CheckpointsResult",
    "ConeDetectionSet": "ConeDetectionsResult",
    "ConeDetector": "ConeDetectionsUtility",
    "CourseLine": "CourseLineResult",
    "CourseLineBuilder": "CourseLineUtility",
    "CourseStatsMeter": "CourseStatsUtility",
    "CourseStatsSet": "CourseStatsResult",
    "DiscCollider": "DiscCollisionUtility",
    "EgoRasterImage": "EgoRasterResult",
    "EgoRasterizer": "EgoRasterUtility",
    "FrameCollider": "FrameCollisionUtility",
    "HeightField": "HeightFieldResult",
    "HeightFieldBaker": "HeightFieldUtility",
    "LidarScan": "LidarResult",
    "LidarScanner": "LidarUtility",
    "LookaheadPoints": "LookaheadResult",
    "LookaheadSampler": "LookaheadUtility",
    "MinTimePlanner": "MinTimeUtility",
    "MinTimeSet": "MinTimeResult",
    "NextGatePoses": "NextGatesResult",
    "NextGateSensor": "NextGatesUtility",
    "ProgressTracker": "ProgressUtility",
    "PropPlacer": "PropsUtility",
    "PropSet": "PropsResult",
    "RacingLinePlanner": "RacingLineUtility",
    "RacingLineSet": "RacingLineResult",
    "TrackLocalizer": "LocalizerUtility",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
