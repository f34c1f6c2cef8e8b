"""The course line tool (see :mod:`track_gen.tools.course_line.utility`)."""

from .utility import (
    SAMPLES_PER_GATE,
    VERTICAL_EPS,
    CenterlineFromGates,
    CourseLine,
    CourseLineBuilder,
)

__all__ = [
    "CenterlineFromGates",
    "CourseLine",
    "CourseLineBuilder",
    "SAMPLES_PER_GATE",
    "VERTICAL_EPS",
]
