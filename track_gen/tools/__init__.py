"""Runtime tools that work on generated courses: course components and their utilities.

Components (``Component`` subclasses, used by :class:`track_gen.course.Course`):

* track courses: ``Checkpoints``, ``Progress``, ``BandCollision``, ``Localizer``,
  ``HeightFieldBake``, ``Props``, ``RacingLine``, ``EgoRaster``, ``CourseStats``
  (``CourseStats(source="centerline")`` on a gate course); the per-step sensors
  ``Lookahead`` (-> ``LookaheadPoints``), ``ConeDetections`` (-> ``ConeDetectionSet``) and
  ``Lidar`` (-> ``LidarScan``);
* gate courses: ``GateCheckpoints``, ``CenterlineFromGates``, ``Progress``, ``DiscCollision``
  or ``FrameCollision``, ``Localizer(source="centerline")``, ``Lidar``, ``NextGates``,
  ``MinTime`` (the point-mass par of a lap, -> ``MinTimeSet``).

Utilities they wrap: ``CheckpointPlacer`` (-> ``CheckpointSet``), ``ProgressTracker``
(-> ``ProgressEvents``), ``BandCollider`` (-> ``BandContact``), ``CourseLineBuilder``
(-> ``CourseLine``), ``TrackLocalizer`` (-> ``TrackFrame``), ``DiscCollider``
(-> ``DiscContact``), ``FrameCollider`` (-> ``FrameContact``), ``MinTimePlanner``
(-> ``MinTimeSet``; also any batch of waypoint paths). The component contract
(``Component``, ``ComponentContext``, ``InputSpec``, ``order_components``) lives in
:mod:`track_gen.course` and is re-exported here, with ``check_component`` (which call of a
component a conditional regeneration body cannot hold).
"""

from ..core.capture_check import CaptureProblem, check_component
from ..core.component import Component, ComponentContext, InputSpec, order_components
from .band_collision import BandCollider, BandCollision, BandContact
from .checkpoints import CheckpointPlacer, Checkpoints, CheckpointSet, GateCheckpoints
from .cones import (
    ConeColour,
    ConeDetections,
    ConeDetectionSet,
    ConeDetectionsSettings,
    ConeDetector,
)
from .cones.term import ConesSettings, ConesTerm
from .course_line import CenterlineFromGates, CourseLine, CourseLineBuilder
from .course_stats import CourseStats, CourseStatsMeter, CourseStatsSet
from .gate_collision import (
    DiscCollider,
    DiscCollision,
    DiscContact,
    FrameCollider,
    FrameCollision,
    FrameContact,
    FrameMember,
)
from .heightfield import (
    GridResolutionWarning,
    HeightField,
    HeightFieldBake,
    HeightFieldBaker,
    check_grid_resolution,
)
from .lidar import Lidar, LidarScan, LidarScanner, LidarSettings
from .lidar.term import LidarTerm
from .localizer import Localizer, TrackFrame, TrackLocalizer
from .lookahead import Lookahead, LookaheadPoints, LookaheadSampler, LookaheadSettings
from .lookahead.term import LookaheadTerm
from .min_time import MinTime, MinTimePlanner, MinTimeSet, MinTimeStatus
from .next_gates import NextGatePoses, NextGates, NextGateSensor, NextGatesSettings
from .next_gates.term import NextGatesTerm
from .progress import Progress, ProgressEvents, ProgressTracker
from .props import PropKind, PropPlacer, Props, PropSet, PropSide
from .racing_line import RacingLine, RacingLinePlanner, RacingLineSet
from .raster import EgoRaster, EgoRasterImage, EgoRasterizer, EgoRasterSettings, RasterCell
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
    "ConesTerm",
    "ConesSettings",
    "BandCollider",
    "BandCollision",
    "BandContact",
    "CaptureProblem",
    "CenterlineFromGates",
    "CheckpointPlacer",
    "CheckpointSet",
    "Checkpoints",
    "Component",
    "ConeColour",
    "ConeDetectionSet",
    "ConeDetectionsSettings",
    "ConeDetections",
    "ConeDetector",
    "ComponentContext",
    "EgoRaster",
    "EgoRasterImage",
    "EgoRasterizer",
    "EgoRasterSettings",
    "CourseLine",
    "CourseLineBuilder",
    "CourseStats",
    "CourseStatsMeter",
    "CourseStatsSet",
    "DiscCollider",
    "DiscCollision",
    "DiscContact",
    "FrameCollider",
    "FrameCollision",
    "FrameContact",
    "FrameMember",
    "GateCheckpoints",
    "GridResolutionWarning",
    "HeightField",
    "HeightFieldBake",
    "HeightFieldBaker",
    "InputSpec",
    "Lidar",
    "LidarScan",
    "LidarScanner",
    "LidarSettings",
    "Localizer",
    "Lookahead",
    "LookaheadPoints",
    "LookaheadSampler",
    "MinTime",
    "MinTimePlanner",
    "MinTimeSet",
    "MinTimeStatus",
    "LookaheadSettings",
    "NextGatePoses",
    "NextGateSensor",
    "NextGatesSettings",
    "NextGates",
    "Progress",
    "ProgressEvents",
    "ProgressTracker",
    "PropKind",
    "PropPlacer",
    "PropSet",
    "PropSide",
    "Props",
    "RacingLine",
    "RacingLinePlanner",
    "RacingLineSet",
    "RasterCell",
    "TrackFrame",
    "TrackLocalizer",
    "check_component",
    "check_grid_resolution",
    "order_components",
]
