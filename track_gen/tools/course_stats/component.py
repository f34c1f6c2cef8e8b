"""The course component of the course descriptors (its Tunables: ``fields.py``)."""

from __future__ import annotations

import warp as wp

from ...core.component import Component, buffer_bytes
from ...core.ranges import EnvSplit
from ...core.settings import HasSettings, resolve_settings
from ...results import GateSequence, Track
from .fields import CourseStatsSettings
from .utility import CourseStatsUtility

_GATE_HINT = (
    "a gate course has no centre line of its own: pass source='centerline' (the "
    "tools.CenterlineFromGates component of Course.gates) to measure its course line"
)


class CourseStats(HasSettings, Component):
    """Course component ``"stats"``: per-env descriptors of every course the generator
    builds (:class:`CourseStatsUtility`), recomputed for the regenerated envs (``on_generate``;
    unmasked envs keep every byte). A per-generation component: no entry of ``StepResult``,
    read ``course.components["stats"].result``.

    Args:
        settings: a :class:`CourseStatsSettings` (positionally or as ``settings=``), or its
            fields (``corner_radius``, ``corner_angle``, ``percentiles``) by position or
            keyword (``**fields``).
        racing_line: None, or the name of a :class:`~track_gen.tools.RacingLine` component
            of the course (``"racing_line"``) whose ``lap_time`` becomes ``par_time``; this
            component then runs after it.
        source: None measures the generator's Track; on a gate course, the name of the
            component whose result is the course line (``"centerline"``), the gate openings
            giving the widths.

    ``result`` is the :class:`CourseStatsResult`, ``utility`` the :class:`CourseStatsUtility`.
    Every argument is checked here, before any course is built.
    """

    name = "stats"

    SETTINGS = CourseStatsSettings

    def __init__(
        self,
        *settings: CourseStatsSettings | float | tuple,
        racing_line: str | None = None,
        source: str | None = None,
        name: str | None = None,
        after=None,
        **fields,
    ):
        self.settings = resolve_settings(
            CourseStatsSettings, "CourseStats", settings, fields, positional=3
        )
        if racing_line is not None and (not isinstance(racing_line, str) or not racing_line):
            raise TypeError(
                f"CourseStats.racing_line must be None or the name of a RacingLine component "
                f"(such as 'racing_line'), got {racing_line!r}"
            )
        super().__init__(name=name, after=after, source=source)
        self.racing_line = racing_line
        if racing_line is not None and racing_line not in self.after:
            self.after = (*self.after, racing_line)

    def check_family(self, family: str) -> None:
        """A gate course needs ``source`` (ValueError naming the fix)."""
        if self.source is None and family == "gates":
            raise ValueError(f"CourseStats(): {_GATE_HINT}")

    def attach(self, ctx) -> None:
        course = ctx.generator.result
        line = None
        if self.source is None:
            if isinstance(course, GateSequence):
                raise ValueError(f"CourseStats(): {_GATE_HINT}")
        else:
            line = ctx.get(self.source).result
            if isinstance(course, Track):
                raise ValueError(
                    f"CourseStats(source={self.source!r}): a track course is measured along "
                    "its own centre line: leave source=None"
                )
        lap = None
        if self.racing_line is not None:
            lap = getattr(ctx.get(self.racing_line).result, "lap_time", None)
            if not isinstance(lap, wp.array):
                raise TypeError(
                    f"CourseStats(racing_line={self.racing_line!r}): that component's result "
                    "has no lap_time array: name a tools.RacingLine component"
                )
        self.utility = CourseStatsUtility(course, self.settings, line=line, lap_time=lap)
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.stats

    def planned_bytes(self, layout, config) -> int:
        """The :class:`CourseStatsUtility`'s buffers: on the generator's centre line
        (``layout.N_max`` rows per env) or on the line of the ``source`` component (its
        ``planned_line_rows(layout)``, else ``layout.N_max``)."""
        rows = layout.N_max
        line_rows = getattr(self.planned_source, "planned_line_rows", None)
        if self.source is not None and callable(line_rows):
            rows = int(line_rows(layout))
        return buffer_bytes(CourseStatsUtility.buffers(self.settings, layout.num_envs, rows))

    def on_generate(self, ctx, mask) -> None:
        self._split.run(CourseStatsUtility.measure, mask)  # on the generator's env ranges
