"""Runtime tools that work on generated courses: course components and their utilities.

Components (``Component`` subclasses, used by :class:`track_gen.course.Course`):

* track courses: ``Checkpoints``, ``Progress``, ``BandCollision``, ``Localizer``,
  ``HeightFieldBake``, ``Props``, ``RacingLine``, ``EgoRaster``, ``CourseStats``
  (``CourseStats(source="centerline")`` on a gate course); the per-step sensors
  ``Lookahead`` (-> ``LookaheadPoints``), ``ConeDetections`` (-> ``ConeDetectionSet``) and
  ``Lidar`` (-> ``LidarScan``);
* gate courses: ``GateCheckpoints``, ``CenterlineFromGates``, ``Progress``, ``DiscCollision``
  or ``FrameCollision``, ``Localizer(source="centerline")``, ``Lidar``, ``NextGates``.

Utilities they wrap: ``CheckpointPlacer`` (-> ``CheckpointSet``), ``ProgressTracker``
(-> ``ProgressEvents``), ``BandCollider`` (-> ``BandContact``), ``CourseLineBuilder``
(-> ``CourseLine``), ``TrackLocalizer`` (-> ``TrackFrame``), ``DiscCollider``
(-> ``DiscContact``), ``FrameCollider`` (-> ``FrameContact``). The component contract
(``Component``, ``ComponentContext``, ``InputSpec``, ``order_components``) lives in
:mod:`track_gen.course` and is re-exported here, with ``check_component`` (which call of a
component a conditional regeneration body cannot hold).
"""

from ..core.capture_check import CaptureProblem, check_component
from ..core.component import Component, ComponentContext, InputSpec, order_components
from .band_collision import BandCollider, BandCollision, BandCollisionSettings, BandContact
from .checkpoints import (
    CheckpointPlacer,
    Checkpoints,
    CheckpointSet,
    CheckpointsSettings,
    GateCheckpoints,
)
from .cones import (
    ConeColour,
    ConeDetections,
    ConeDetectionSet,
    ConeDetectionsSettings,
    ConeDetector,
)
from .course_line import CenterlineFromGates, CourseLine, CourseLineBuilder, CourseLineSettings
from .course_stats import CourseStats, CourseStatsMeter, CourseStatsSet, CourseStatsSettings
from .gate_collision import (
    DiscCollider,
    DiscCollision,
    DiscCollisionSettings,
    DiscContact,
    FrameCollider,
    FrameCollision,
    FrameCollisionSettings,
    FrameContact,
    FrameMember,
)
from .heightfield import (
    GridResolutionWarning,
    HeightField,
    HeightFieldBake,
    HeightFieldBaker,
    HeightFieldSettings,
    check_grid_resolution,
)
from .lidar import Lidar, LidarScan, LidarScanner, LidarSettings
from .localizer import Localizer, LocalizerSettings, TrackFrame, TrackLocalizer
from .lookahead import Lookahead, LookaheadPoints, LookaheadSampler, LookaheadSettings
from .next_gates import NextGatePoses, NextGates, NextGateSensor, NextGatesSettings
from .progress import Progress, ProgressEvents, ProgressTracker
from .props import PropKind, PropPlacer, Props, PropSet, PropSide, PropsSettings
from .racing_line import RacingLine, RacingLinePlanner, RacingLineSet, RacingLineSettings
from .raster import EgoRaster, EgoRasterImage, EgoRasterizer, EgoRasterSettings, RasterCell

__all__ = [
    "BandCollider",
    "BandCollision",
    "BandCollisionSettings",
    "BandContact",
    "CaptureProblem",
    "CenterlineFromGates",
    "CheckpointPlacer",
    "CheckpointSet",
    "Checkpoints",
    "CheckpointsSettings",
    "Component",
    "ComponentContext",
    "ConeColour",
    "ConeDetectionSet",
    "ConeDetections",
    "ConeDetectionsSettings",
    "ConeDetector",
    "CourseLine",
    "CourseLineBuilder",
    "CourseLineSettings",
    "CourseStats",
    "CourseStatsMeter",
    "CourseStatsSet",
    "CourseStatsSettings",
    "DiscCollider",
    "DiscCollision",
    "DiscCollisionSettings",
    "DiscContact",
    "EgoRaster",
    "EgoRasterImage",
    "EgoRasterSettings",
    "EgoRasterizer",
    "FrameCollider",
    "FrameCollision",
    "FrameCollisionSettings",
    "FrameContact",
    "FrameMember",
    "GateCheckpoints",
    "GridResolutionWarning",
    "HeightField",
    "HeightFieldBake",
    "HeightFieldBaker",
    "HeightFieldSettings",
    "InputSpec",
    "Lidar",
    "LidarScan",
    "LidarScanner",
    "LidarSettings",
    "Localizer",
    "LocalizerSettings",
    "Lookahead",
    "LookaheadPoints",
    "LookaheadSampler",
    "LookaheadSettings",
    "NextGatePoses",
    "NextGateSensor",
    "NextGates",
    "NextGatesSettings",
    "Progress",
    "ProgressEvents",
    "ProgressTracker",
    "PropKind",
    "PropPlacer",
    "PropSet",
    "PropSide",
    "Props",
    "PropsSettings",
    "RacingLine",
    "RacingLinePlanner",
    "RacingLineSet",
    "RacingLineSettings",
    "RasterCell",
    "TrackFrame",
    "TrackLocalizer",
    "check_component",
    "check_grid_resolution",
    "order_components",
]
