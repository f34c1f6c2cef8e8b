"""The course component of the racing line planner (its Tunables: ``fields.py``)."""

from __future__ import annotations

from ...core.component import Component, buffer_bytes
from ...core.ranges import EnvSplit
from ...core.settings import HasSettings, resolve_settings
from .fields import RacingLineSettings
from .utility import RacingLineUtility


class RacingLine(HasSettings, Component):
    """Course component ``"racing_line"`` of a track course: the minimum-curvature line, its
    speed profile and par lap time per env (:class:`RacingLineUtility`), recomputed for the
    regenerated envs (``on_generate``; unmasked envs keep every byte).

    Args:
        settings: a :class:`RacingLineSettings` (positionally or as ``settings=``), or
            ``vehicle_width`` by position.
        name: component name (default ``"racing_line"``).
        after: names this component runs after.
        **fields: any field of :class:`RacingLineSettings` by keyword (``vehicle_width``,
            ``a_lat``, ``a_lon``, ``v_max`` required; its doc gives each one's meaning, unit
            and range).

    ``result`` is the :class:`RacingLineResult` (a per-generation result: read it through
    ``course.components["racing_line"].result``), ``utility`` the :class:`RacingLineUtility`.
    Every argument is checked here, before any course is built.
    """

    name = "racing_line"
    families = ("track",)

    SETTINGS = RacingLineSettings

    def __init__(
        self,
        *settings: RacingLineSettings | float,
        name: str | None = None,
        after=None,
        **fields,
    ):
        super().__init__(name=name, after=after)
        self.settings = resolve_settings(RacingLineSettings, "RacingLine", settings, fields)

    def attach(self, ctx) -> None:
        self.utility = RacingLineUtility(ctx.generator.result, self.settings)
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.line

    def planned_bytes(self, layout, config) -> int:
        """The :class:`RacingLineUtility`'s buffers (:meth:`RacingLineUtility.buffers`)."""
        return buffer_bytes(RacingLineUtility.buffers(self.settings, layout.num_envs, layout.N_max))

    def on_generate(self, ctx, mask) -> None:
        self._split.run(RacingLineUtility.plan, mask)  # on the generator's env ranges
