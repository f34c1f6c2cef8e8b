"""Runtime tools that work on generated courses: course components and their utilities.

Components (``Component`` subclasses, used by :class:`track_gen.course.Course`):
``Checkpoints``, ``Progress``, ``BandCollision``. Utilities they wrap: ``CheckpointPlacer``
(-> ``CheckpointSet``), ``ProgressTracker`` (-> ``ProgressEvents``), ``BandCollider``
(-> ``BandContact``). The component contract (``Component``, ``ComponentContext``,
``InputSpec``, ``order_components``) lives in :mod:`track_gen.course` and is re-exported here.
"""

from ..course.component import Component, ComponentContext, InputSpec, order_components
from .band_collision import BandCollider, BandCollision, BandContact
from .checkpoints import CheckpointPlacer, Checkpoints, CheckpointSet
from .progress import Progress, ProgressEvents, ProgressTracker

__all__ = [
    "BandCollider",
    "BandCollision",
    "BandContact",
    "CheckpointPlacer",
    "CheckpointSet",
    "Checkpoints",
    "Component",
    "ComponentContext",
    "InputSpec",
    "Progress",
    "ProgressEvents",
    "ProgressTracker",
    "order_components",
]
