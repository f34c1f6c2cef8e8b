"""Courses: a generator plus ordered components (``track_gen.tools``)."""

from .config import CourseConfig
from .course import Course
from .result import StepResult

__all__ = ["Course", "CourseConfig", "StepResult"]
