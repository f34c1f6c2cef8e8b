"""Courses: a generator plus ordered components (``track_gen.tools``)."""

from .course import Course
from .result import StepResult

__all__ = ["Course", "StepResult"]
