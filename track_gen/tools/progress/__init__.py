"""The progress tool (see :mod:`track_gen.tools.progress.utility`)."""

from .utility import (
    CheckpointSet,
    Progress,
    ProgressEvents,
    ProgressTracker,
)

__all__ = [
    "CheckpointSet",
    "Progress",
    "ProgressEvents",
    "ProgressTracker",
]
