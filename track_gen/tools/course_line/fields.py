"""The Tunable declarations of the course line builder (read by its utility and its component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ..fields import count

SAMPLES_PER_GATE = count(
    "samples_per_gate",
    8,
    hi=256,
    unit="beads per gate",
    lo=2,
    doc="beads K sampled on each span between consecutive gates (bead g*K is gate g).",
    surfaces=(
        "tools.CenterlineFromGates",
        "tools.CourseLineUtility",
        "course.Course.gates",
        "course.CourseConfig",
    ),
)

#: Every field of the tool, in its keyword order.
FIELDS = (SAMPLES_PER_GATE,)

CourseLineSettings = settings_class(
    "CourseLineSettings",
    FIELDS,
    title="Course line",
    doc="The settings of the course line through a gate course's gates "
    "(tools.CenterlineFromGates, tools.CourseLineUtility).",
    module="track_gen.tools.course_line",
)
