"""The Tunable declarations of the checkpoint placer (read by its utility and its component)."""

from __future__ import annotations

from ...core.tunable import Tunable
from ..fields import arc_spacing

_SURFACES = (
    "tools.Checkpoints",
    "tools.CheckpointPlacer",
    "course.Course.track",
    "course.CourseConfig",
)

# ---------------------------------------------------------------------------------- fields
SPACING = arc_spacing(
    doc="arc distance between checkpoints (no default: Checkpoints, CheckpointPlacer, "
    "Course.track and CourseConfig require it).",
    surfaces=_SURFACES,
    aliases={
        "Course.track": "checkpoint_spacing",
        "CourseConfig": "checkpoint_spacing",
        "RaceConfig": "checkpoint_spacing",
    },
)


MAX_CHECKPOINTS = Tunable(
    "max_checkpoints",
    None,
    kind="int",
    lo=3,
    hi=65536,
    optional=True,
    unit="checkpoints",
    doc="per-env checkpoint capacity; None ('auto') derives it from the longest loop.",
    surfaces=_SURFACES,
)
