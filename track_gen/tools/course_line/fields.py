"""The Tunable declarations of the course line builder (read by its utility and its component)."""

from __future__ import annotations

from ...core.tunable import Tunable

SAMPLES_PER_GATE = Tunable(
    "samples_per_gate",
    8,
    kind="int",
    lo=2,
    hi=256,
    unit="beads per gate",
    doc="beads K sampled on each span between consecutive gates (bead g*K is gate g).",
    surfaces=(
        "tools.CenterlineFromGates",
        "tools.CourseLineBuilder",
        "course.Course.gates",
        "course.CourseConfig",
    ),
)
