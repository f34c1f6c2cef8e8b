"""The course component of the ego raster (its Tunables: ``fields.py``)."""

from __future__ import annotations

from ...core.component import Component, buffer_bytes
from ...core.exec import is_capturing
from ...core.ranges import EnvSplit, run_ranges
from ...core.settings import HasSettings, resolve_settings
from ...results import Track
from ..heightfield import HeightFieldResult
from ..props import PropsResult
from ..shared import POSE_INPUTS, generator_result
from .fields import EgoRasterSettings
from .utility import EgoRasterUtility


def _name(owner: str, keyword: str, value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise TypeError(
            f"{owner}.{keyword} must be a component name (a non-empty str) or None, got {value!r}"
        )
    return value


class EgoRaster(HasSettings, Component):
    """Course component ``"raster"`` of a track course: a top-down, agent-centred,
    heading-up raster per env (:class:`EgoRasterResult`, ``res["raster"]``).

    Args:
        settings: an :class:`EgoRasterSettings` (positionally or as ``settings=``), or
            ``resolution`` (cells per side) and ``extent`` (side of the square window, track
            units; required) by position, or by keyword (``**fields``).
        cones: keyword-only name of a ``tools.Props`` component of kind ``"cone"`` (e.g.
            ``"props"``) whose cones set the ``CONE`` bit, or None.
        height: keyword-only name of a ``tools.HeightFieldBake`` component (e.g.
            ``"heightfield"``) whose heights fill ``height``, or None (``height`` is None).

    Reads the bound ``position`` (vec3f ``[E]``) and ``orientation`` (quatf ``[E]``,
    world-from-body; the raster's up axis is the plan view of its body x).
    ``on_generate(mask)`` rebuilds the regenerated envs' bucket grids and ``step`` renders,
    both on the generator's CPU env ranges (``cpu_threads``; one call inside a capture and
    on CUDA), with the same bytes for any thread count; no runtime state (``reset`` does
    nothing). ``utility`` is the
    :class:`EgoRasterUtility`. Track courses only.
    """

    name = "raster"
    families = ("track",)
    INPUTS = POSE_INPUTS

    SETTINGS = EgoRasterSettings

    def __init__(
        self,
        *settings: EgoRasterSettings | int | float,
        cones: str | None = None,
        height: str | None = None,
        name: str | None = None,
        after=None,
        **fields,
    ):
        self.settings = resolve_settings(
            EgoRasterSettings, "EgoRaster", settings, fields, positional=2
        )
        self.cones = _name("EgoRaster", "cones", cones)
        self.height = _name("EgoRaster", "height", height)
        super().__init__(name=name, after=after)  # checks after: a sequence of names
        reads = tuple(n for n in (self.cones, self.height) if n)
        if reads:
            self.after = (*self.after, *reads)

    def attach(self, ctx) -> None:
        why = "a gate course has no road to draw"
        track = generator_result(ctx, Track, "EgoRaster", why)
        props = field = None
        if self.cones is not None:
            props = ctx.get(self.cones).result
            if not isinstance(props, PropsResult):
                raise TypeError(
                    f"EgoRaster(cones={self.cones!r}): that component's result is a "
                    f"{type(props).__name__}, not a PropsResult: pass the name of a "
                    "tools.Props('cone', ...) component"
                )
            if props.kind != "cone":
                raise ValueError(
                    f"EgoRaster(cones={self.cones!r}): that component's result is not a "
                    "PropsResult of cones: pass the name of a tools.Props('cone', ...) component"
                )
        if self.height is not None:
            field = ctx.get(self.height).result
            if not isinstance(field, HeightFieldResult):
                raise TypeError(
                    f"EgoRaster(height={self.height!r}): that component's result is not a "
                    "HeightFieldResult: pass the name of a tools.HeightFieldBake component"
                )
        self.utility = EgoRasterUtility(track, self.settings, props=props, height_field=field)
        self._split = EnvSplit(self.utility, ctx.generator)
        self._tasks = []  # one render per CPU env range, on the bound inputs' slices
        self.result = self.utility.image

    def on_bind(self, arrays) -> None:
        """Cut the bound inputs to the generator's CPU env ranges (none on one thread or on
        CUDA): a step then renders each range on its own thread."""
        pos, quat = arrays.get("position"), arrays.get("orientation")
        self._tasks = []
        if pos is None or quat is None:
            return
        for view, (lo, hi) in zip(self._split.views, self._split.ranges, strict=True):
            p, q = pos[lo:hi], quat[lo:hi]
            self._tasks.append(lambda v=view, p=p, q=q: v.render(p, q))

    def planned_bytes(self, layout, config) -> int:
        """The :class:`EgoRasterUtility`'s buffers (:meth:`EgoRasterUtility.buffers`)."""
        height = self.height is not None
        return buffer_bytes(
            EgoRasterUtility.buffers(self.settings, layout.num_envs, layout.N_max, height=height)
        )

    def on_generate(self, ctx, mask) -> None:
        self._split.run(EgoRasterUtility.refresh, mask)  # on the generator's env ranges

    def step(self, ctx):
        if not self._tasks or is_capturing(ctx.device):
            return self.utility.render(self.bound["position"], self.bound["orientation"])
        run_ranges(self._tasks)  # disjoint env ranges: the same bytes on any thread count
        return self.result
