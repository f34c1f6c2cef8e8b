"""The course component of the minimum-time planner (its Tunables: ``fields.py``)."""

from __future__ import annotations

from ...core.component import Component, buffer_bytes
from ...core.ranges import EnvSplit
from ...core.settings import HasSettings, resolve_settings
from .fields import MinTimeSettings
from .utility import MinTimeUtility, check_work


class MinTime(HasSettings, Component):
    """Course component ``"min_time"`` of a gate course: the minimum lap time (the par) of a
    point mass through the gate centres in order, a flying lap from gate 0 back to it, and
    its trajectory (:class:`MinTimeUtility` with ``closed=True`` on the generator's
    ``GateSequence``), re-planned for the regenerated envs (``on_generate``; unmasked envs keep
    every byte). An invalid course has no par (NaN, status ``INPUT``).

    Args:
        settings: a :class:`MinTimeSettings` (positionally or as ``settings=``), or its fields
            by keyword (``**fields``): ``t_max`` (thrust acceleration bound, track units/s^2)
            and ``v_max`` (speed bound, track units/s) required, ``gravity`` (track
            units/s^2; ``t_max >= 1.001 gravity``), ``samples`` (intervals per gate-to-gate
            segment) and ``iterations`` (Newton iteration budget per env).
        name: component name (default ``"min_time"``).
        after: names this component runs after.

    ``result`` is the :class:`MinTimeResult` (a per-generation result: read it through
    ``course.components["min_time"].result``), ``utility`` the :class:`MinTimeUtility`.
    Every argument is checked here, before any course is built (the cost bound with the
    course's ``max_gates`` when it attaches).
    """

    name = "min_time"
    families = ("gates",)

    SETTINGS = MinTimeSettings

    def __init__(self, *settings: MinTimeSettings, name: str | None = None, after=None, **fields):
        super().__init__(name=name, after=after)
        self.settings = resolve_settings(MinTimeSettings, "MinTime", settings, fields, positional=0)

    def attach(self, ctx) -> None:
        seq = ctx.generator.result
        self.utility = MinTimeUtility(
            seq.position, seq.count, self.settings, closed=True, valid=seq.valid
        )
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.result

    def planned_bytes(self, layout, config) -> int:
        """The :class:`MinTimeUtility`'s buffers (:meth:`MinTimeUtility.buffers`); refuses a
        ``max_gates`` whose plan would cost more than ``MAX_WORK`` per env."""
        check_work("MinTime", layout.N_max, self.samples, self.iterations)
        return buffer_bytes(MinTimeUtility.buffers(self.settings, layout.num_envs, layout.N_max))

    def on_generate(self, ctx, mask) -> None:
        self._split.run(MinTimeUtility.plan, mask)  # on the generator's env ranges
