"""Runtime tools that work on generated courses: course components and their utilities.

Components (``Component`` subclasses, used by :class:`track_gen.course.Course`):
``Checkpoints``, ``Progress``, ``BandCollision``. Utilities they wrap: ``CheckpointSampler``
(-> ``CheckpointSet``), ``ProgressTracker`` (-> ``ProgressEvents``), ``BandCollider``
(-> ``BandContact``).
"""

from .band_collision import BandCollider, BandCollision, BandContact
from .checkpoints import Checkpoints, CheckpointSampler, CheckpointSet
from .component import Component, ComponentContext, InputSpec, order_components
from .progress import Progress, ProgressEvents, ProgressTracker

__all__ = [
    "BandCollider",
    "BandCollision",
    "BandContact",
    "CheckpointSampler",
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
