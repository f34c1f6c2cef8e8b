"""The Tunable declarations of the checkpoint placer (read by its utility and its component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ..fields import arc_spacing, count

_SURFACES = (
    "tools.Checkpoints",
    "tools.CheckpointsUtility",
    "course.Course.track",
    "course.CourseConfig",
)

# ---------------------------------------------------------------------------------- fields
SPACING = arc_spacing(
    doc="arc distance between checkpoints (no default: Checkpoints, CheckpointsUtility, "
    "Course.track and CourseConfig require it).",
    surfaces=_SURFACES,
    aliases={
        "Course.track": "checkpoint_spacing",
        "CourseConfig": "checkpoint_spacing",
        "RaceConfig": "checkpoint_spacing",
    },
)


MAX_CHECKPOINTS = count(
    "max_checkpoints",
    None,
    hi=65536,
    unit="checkpoints",
    lo=3,
    optional=True,
    doc="per-env checkpoint capacity; None ('auto') derives it from the longest loop.",
    surfaces=_SURFACES,
)

#: Every field of the tool, in its keyword order.
FIELDS = (SPACING, MAX_CHECKPOINTS)

CheckpointsSettings = settings_class(
    "CheckpointsSettings",
    FIELDS,
    title="Checkpoints",
    doc="The settings of the checkpoints of a track course (tools.Checkpoints, "
    "tools.CheckpointsUtility). ``spacing`` is required; ``max_checkpoints`` None lets the "
    "component choose the capacity (Checkpoints' 'auto').",
    module="track_gen.tools.checkpoints",
)
