"""The course component of the minimum-time planner (its Tunables: ``fields.py``)."""

from __future__ import annotations

from ...core.component import Component, buffer_bytes
from ...core.ranges import EnvSplit
from .fields import GRAVITY, ITERATIONS, SAMPLES
from .utility import MinTimePlanner, check_settings, check_work


class MinTime(Component):
    """Course component ``"min_time"`` of a gate course: the minimum lap time (the par) of a
    point mass through the gate centres in order, a flying lap from gate 0 back to it, and
    its trajectory (:class:`MinTimePlanner` with ``closed=True`` on the generator's
    ``GateSequence``), re-planned for the regenerated envs (``on_generate``; unmasked envs keep
    every byte). An invalid course has no par (NaN, status ``INPUT``).

    Args:
        t_max: keyword-only thrust acceleration bound, track units/s^2 (``T_MAX``).
        v_max: keyword-only speed bound, track units/s (``V_MAX``).
        gravity: keyword-only, track units/s^2 (``GRAVITY``); ``t_max >= 1.001 gravity``.
        samples: keyword-only intervals per gate-to-gate segment (``SAMPLES``).
        iterations: keyword-only Newton iteration budget per env (``ITERATIONS``).

    ``result`` is the :class:`MinTimeSet` (a per-generation result: read it through
    ``course.components["min_time"].result``), ``utility`` the :class:`MinTimePlanner`.
    Every argument is checked here, before any course is built (the cost bound with the
    course's ``max_gates`` when it attaches).
    """

    name = "min_time"
    families = ("gates",)

    def __init__(
        self,
        *,
        t_max: float,
        v_max: float,
        gravity: float = GRAVITY.default,
        samples: int = SAMPLES.default,
        iterations: int = ITERATIONS.default,
        name: str | None = None,
        after=None,
    ):
        super().__init__(name=name, after=after)
        self.settings = check_settings("MinTime", t_max, v_max, gravity, samples, iterations)

    def attach(self, ctx) -> None:
        seq = ctx.generator.result
        self.utility = MinTimePlanner(
            seq.position, seq.count, closed=True, valid=seq.valid, **self.settings
        )
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.result

    def planned_bytes(self, layout, config) -> int:
        """The :class:`MinTimePlanner`'s buffers (:meth:`MinTimePlanner.buffers`); refuses a
        ``max_gates`` whose plan would cost more than ``MAX_WORK`` per env."""
        check_work("MinTime", layout.N_max, self.settings["samples"], self.settings["iterations"])
        return buffer_bytes(
            MinTimePlanner.buffers(layout.num_envs, layout.N_max, self.settings["samples"])
        )

    def on_generate(self, ctx, mask) -> None:
        self._split.run(MinTimePlanner.plan, mask)  # on the generator's env ranges
