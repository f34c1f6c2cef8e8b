"""Checkpoints along a course: :class:`CheckpointSet` and :class:`CheckpointPlacer`.

A checkpoint is a planar opening an agent passes through: a centre, two end points ``left``
and ``right`` across the course, a unit ``tangent`` (the plane normal, the direction of
travel) and a vertical half-opening ``up_half``. A road-band track gets evenly spaced
cross-sections from :class:`CheckpointPlacer`; a gate course is its own checkpoint set
(:meth:`CheckpointSet.from_gates`, no copy). :class:`~track_gen.tools.progress.ProgressTracker`
counts passes through them.
"""

from .component import Checkpoints, GateCheckpoints, construction_result
from .fields import MAX_CHECKPOINTS, SPACING, CheckpointsSettings
from .kernels import UNBOUNDED_UP_HALF
from .result import CheckpointSet
from .utility import CheckpointPlacer, capacity_for

__all__ = [
    "CheckpointPlacer",
    "CheckpointSet",
    "CheckpointsSettings",
    "Checkpoints",
    "GateCheckpoints",
    "MAX_CHECKPOINTS",
    "SPACING",
    "UNBOUNDED_UP_HALF",
    "capacity_for",
    "construction_result",
]
