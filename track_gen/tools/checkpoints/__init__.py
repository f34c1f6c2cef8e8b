"""Checkpoints along a course: :class:`CheckpointsResult` and :class:`CheckpointsUtility`.

A checkpoint is a planar opening an agent passes through: a centre, two end points ``left``
and ``right`` across the course, a unit ``tangent`` (the plane normal, the direction of
travel) and a vertical half-opening ``up_half``. A road-band track gets evenly spaced
cross-sections from :class:`CheckpointsUtility`; a gate course is its own checkpoint set
(:meth:`CheckpointsResult.from_gates`, no copy). :class:`~track_gen.tools.progress.ProgressUtility`
counts passes through them.
"""

from ...core.deprecation import deprecated_names
from .component import Checkpoints, GateCheckpoints, construction_result
from .fields import MAX_CHECKPOINTS, SPACING, CheckpointsSettings
from .kernels import UNBOUNDED_UP_HALF
from .result import CheckpointsResult
from .utility import CheckpointsUtility, capacity_for

__all__ = [
    "CheckpointsUtility",
    "CheckpointsResult",
    "CheckpointsSettings",
    "Checkpoints",
    "GateCheckpoints",
    "MAX_CHECKPOINTS",
    "SPACING",
    "UNBOUNDED_UP_HALF",
    "capacity_for",
    "construction_result",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "CheckpointPlacer": "CheckpointsUtility",
    "CheckpointSet": "CheckpointsResult",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
