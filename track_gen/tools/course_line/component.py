"""The course component of the course line builder (its Tunables: ``fields.py``)."""

from __future__ import annotations

from ...core.component import Component, buffer_bytes
from ...core.ranges import EnvSplit
from ...core.settings import HasSettings, resolve_settings
from ...results import GateSequence
from .fields import CourseLineSettings
from .utility import CourseLineUtility


class CenterlineFromGates(HasSettings, Component):
    """Course component ``"centerline"`` of a gate course: the closed Hermite line through the
    gates (:class:`CourseLineUtility`), rebuilt for the regenerated envs (``on_generate``).

    Args:
        settings: a :class:`CourseLineSettings` (positionally or as ``settings=``), or
            ``samples_per_gate`` (beads K per span, ``SAMPLES_PER_GATE``) by position or
            keyword.

    ``result`` is the :class:`CourseLineResult`, ``utility`` the :class:`CourseLineUtility`
    (``course.course_line``). A :class:`~track_gen.tools.localizer.Localizer` reads it with
    ``source="centerline"``.
    """

    name = "centerline"
    families = ("gates",)

    SETTINGS = CourseLineSettings

    def __init__(self, *settings: CourseLineSettings | int, name: str | None = None, **fields):
        super().__init__(name=name)
        self.settings = resolve_settings(
            CourseLineSettings, "CenterlineFromGates", settings, fields
        )

    def attach(self, ctx) -> None:
        result = ctx.generator.result
        if not isinstance(result, GateSequence):
            raise TypeError(
                "CenterlineFromGates needs a gate generator; a track has its own centerline: "
                f"Localizer() reads it (got a {type(result).__name__})"
            )
        self.utility = CourseLineUtility(result, self.settings)
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.line

    def planned_line_rows(self, layout) -> int:
        """Rows per env of the line (``max_gates * samples_per_gate``)."""
        return layout.N_max * self.samples_per_gate

    def planned_bytes(self, layout, config) -> int:
        """The :class:`CourseLineUtility`'s buffers (:meth:`CourseLineUtility.buffers`)."""
        return buffer_bytes(CourseLineUtility.buffers(self.settings, layout.num_envs, layout.N_max))

    def on_generate(self, ctx, mask) -> None:
        self._split.run(CourseLineUtility.build, mask)  # on the generator's env ranges
