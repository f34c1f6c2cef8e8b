"""The course component of the racing line planner (its Tunables: ``fields.py``)."""

from __future__ import annotations

from ...core.component import Component, buffer_bytes
from ...core.ranges import EnvSplit
from .fields import ITERATIONS, KAPPA_ITERATIONS, LINEARISATIONS
from .utility import RacingLinePlanner, check_settings


class RacingLine(Component):
    """Course component ``"racing_line"`` of a track course: the minimum-curvature line, its
    speed profile and par lap time per env (:class:`RacingLinePlanner`), recomputed for the
    regenerated envs (``on_generate``; unmasked envs keep every byte).

    Args:
        vehicle_width: track units (``VEHICLE_WIDTH``).
        a_lat: keyword-only lateral acceleration limit, track units / s^2 (``A_LAT``).
        a_lon: keyword-only longitudinal acceleration limit, track units / s^2 (``A_LON``).
        v_max: keyword-only top speed, track units / s (``V_MAX``).
        kappa_max: keyword-only curvature bound, 1 / track units, or None (``KAPPA_MAX``).
        iterations: keyword-only active-set iterations per linearisation (``ITERATIONS``).
        linearisations: keyword-only QP solves, each around the last line
            (``LINEARISATIONS``).
        kappa_iterations: keyword-only ADMM iterations of the ``kappa_max`` phase
            (``KAPPA_ITERATIONS``).

    ``result`` is the :class:`RacingLineSet` (a per-generation result: read it through
    ``course.components["racing_line"].result``), ``utility`` the :class:`RacingLinePlanner`.
    Every argument is checked here, before any course is built.
    """

    name = "racing_line"
    families = ("track",)

    def __init__(
        self,
        vehicle_width: float,
        *,
        a_lat: float,
        a_lon: float,
        v_max: float,
        kappa_max: float | None = None,
        iterations: int = ITERATIONS.default,
        linearisations: int = LINEARISATIONS.default,
        kappa_iterations: int = KAPPA_ITERATIONS.default,
        name: str | None = None,
        after=None,
    ):
        super().__init__(name=name, after=after)
        self.settings = check_settings(
            "RacingLine",
            vehicle_width,
            a_lat,
            a_lon,
            v_max,
            kappa_max,
            iterations,
            linearisations,
            kappa_iterations,
        )

    def attach(self, ctx) -> None:
        s = dict(self.settings)
        width = s.pop("vehicle_width")
        self.utility = RacingLinePlanner(ctx.generator.result, width, **s)
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.line

    def planned_bytes(self, layout, config) -> int:
        """The :class:`RacingLinePlanner`'s buffers (:meth:`RacingLinePlanner.buffers`)."""
        return buffer_bytes(RacingLinePlanner.buffers(layout.num_envs, layout.N_max))

    def on_generate(self, ctx, mask) -> None:
        self._split.run(RacingLinePlanner.plan, mask)  # on the generator's env ranges
