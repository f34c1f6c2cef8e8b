"""The course component of the course line builder (its Tunables: ``fields.py``)."""

from __future__ import annotations

from ...core.component import Component, buffer_bytes
from ...core.ranges import EnvSplit
from ...results import GateSequence
from .fields import SAMPLES_PER_GATE
from .utility import CourseLineBuilder


class CenterlineFromGates(Component):
    """Course component ``"centerline"`` of a gate course: the closed Hermite line through the
    gates (:class:`CourseLineBuilder`), rebuilt for the regenerated envs (``on_generate``).

    Args:
        samples_per_gate: beads K per span (``SAMPLES_PER_GATE``).

    ``result`` is the :class:`CourseLine`, ``utility`` the :class:`CourseLineBuilder`
    (``course.course_line``). A :class:`~track_gen.tools.localizer.Localizer` reads it with
    ``source="centerline"``.
    """

    name = "centerline"
    families = ("gates",)

    def __init__(self, samples_per_gate: int = 8, *, name: str | None = None):
        super().__init__(name=name)
        self.samples_per_gate = SAMPLES_PER_GATE.check(
            samples_per_gate, "CenterlineFromGates samples_per_gate"
        )

    def attach(self, ctx) -> None:
        result = ctx.generator.result
        if not isinstance(result, GateSequence):
            raise TypeError(
                "CenterlineFromGates needs a gate generator; a track has its own centerline: "
                f"Localizer() reads it (got a {type(result).__name__})"
            )
        self.utility = CourseLineBuilder(result, self.samples_per_gate)
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.line

    def planned_line_rows(self, layout) -> int:
        """Rows per env of the line (``max_gates * samples_per_gate``)."""
        return layout.N_max * self.samples_per_gate

    def planned_bytes(self, layout, config) -> int:
        """The :class:`CourseLineBuilder`'s buffers (:meth:`CourseLineBuilder.buffers`)."""
        E, K = layout.num_envs, self.samples_per_gate
        return buffer_bytes(CourseLineBuilder.buffers(E, layout.N_max, K))

    def on_generate(self, ctx, mask) -> None:
        self._split.run(CourseLineBuilder.build, mask)  # on the generator's env ranges
