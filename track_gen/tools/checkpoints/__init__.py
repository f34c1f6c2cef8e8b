"""The checkpoints tool (see :mod:`track_gen.tools.checkpoints.utility`)."""

from .utility import (
    MAX_CHECKPOINTS,
    SPACING,
    UNBOUNDED_UP_HALF,
    CheckpointPlacer,
    Checkpoints,
    CheckpointSet,
    GateCheckpoints,
    capacity_for,
    construction_result,
)

__all__ = [
    "CheckpointPlacer",
    "CheckpointSet",
    "Checkpoints",
    "GateCheckpoints",
    "MAX_CHECKPOINTS",
    "SPACING",
    "UNBOUNDED_UP_HALF",
    "capacity_for",
    "construction_result",
]
