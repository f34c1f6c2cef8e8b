"""The course component of the height-field baker (its Tunables: ``fields.py``)."""

from __future__ import annotations

from ...core.component import Component, buffer_bytes
from ...core.ranges import EnvSplit
from ...core.settings import HasSettings, Settings, resolve_settings
from ...results import Track
from ..shared import generator_result
from .fields import SIZE_HI, HeightFieldSettings
from .utility import HeightFieldUtility, check_grid_resolution


class HeightFieldBake(HasSettings, Component):
    """Course component ``"heightfield"``: the road height field of every env, rebaked for
    the regenerated envs in the regeneration body (``on_generate``).

    Args:
        settings: a :class:`HeightFieldSettings` (positionally or as ``settings=``), or
            ``resolution`` (texels per side, ``RESOLUTION``) by position; a second
            positional value is ``size_hi``.
        size_hi: the largest course scale the course will draw (``SIZE_HI``), for the
            resolution check; None reads it from the generator (a size randomizer's
            construction hi, else the construction scale). Pass a curriculum's final hi.
        name: component name (default ``"heightfield"``).
        **fields: any field of :class:`HeightFieldSettings` by keyword: ``resolution``,
            ``margin`` (around each env's borders, track units, ``MARGIN``; None: 10%),
            ``fill`` (off-road height, ``FILL``; None: each env's lowest road height).

    ``attach`` warns (:class:`GridResolutionWarning`, :func:`check_grid_resolution`) when the
    grid cannot resolve the largest course, and raises TypeError on a gate course. ``utility``
    is the :class:`HeightFieldUtility` (``course.heightfield``), ``result`` its
    :class:`HeightFieldResult`. No per-step work.
    """

    name = "heightfield"
    families = ("track",)

    SETTINGS = HeightFieldSettings

    def __init__(
        self,
        *settings: HeightFieldSettings | int | float | None,
        size_hi: float | None = None,
        name: str | None = None,
        **fields,
    ):
        if len(settings) == 2 and not isinstance(settings[0], Settings):
            settings, size_hi = settings[:1], settings[1]  # HeightFieldBake(resolution, size_hi)
        super().__init__(name=name)
        self.settings = resolve_settings(HeightFieldSettings, "HeightFieldBake", settings, fields)
        self.size_hi = SIZE_HI.check(size_hi, "HeightFieldBake.size_hi")

    def attach(self, ctx) -> None:
        why = "a gate course has no road surface"
        track = generator_result(ctx, Track, "HeightFieldBake", why)
        check_grid_resolution(
            f"HeightFieldBake(resolution={self.resolution})",
            ctx.generator,
            self.resolution,
            size_hi=self.size_hi,
            margin=self.margin,
        )
        self.utility = HeightFieldUtility(track, self.settings)
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.field

    def planned_bytes(self, layout, config) -> int:
        """The :class:`HeightFieldUtility`'s buffers (:meth:`HeightFieldUtility.buffers`)."""
        return buffer_bytes(HeightFieldUtility.buffers(self.settings, layout.num_envs))

    def on_generate(self, ctx, mask) -> None:
        self._split.run(HeightFieldUtility.bake, mask)  # on the generator's env ranges
