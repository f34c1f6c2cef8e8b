"""The course component of the cone detector (its Tunables: ``fields.py``)."""

from __future__ import annotations

import warp as wp

from ...core.component import Component, buffer_bytes
from ...core.settings import HasSettings, resolve_settings
from ...results import Track
from ..shared import POSE_INPUTS, generator_result
from .fields import ConeDetectionsSettings
from .utility import ConeDetectionsUtility


class ConeDetections(HasSettings, Component):
    """Course component ``"cones"``: the cones of the course's ``tools.Props(kind="cone")``
    component seen from the agent, in its frame, nearest first, padded to ``max_cones`` with a
    count per env, each with its colour (left / right) (:class:`ConeDetectionsUtility`).

    Args:
        settings: a :class:`ConeDetectionsSettings` (positionally or as ``settings=``), or
            ``max_cones`` (detections per env M) by position.
        source: the name of the props component it reads (default ``"props"``; the course
            orders it before this one).
        name: component name (default ``"cones"``).
        after: more names to run after.
        **fields: any field of :class:`ConeDetectionsSettings` by keyword (``max_cones``,
            ``fov`` and ``max_range`` required; ``dropout``, ``noise``), checked by it.

    Inputs: ``position`` vec3f ``[E]`` and ``orientation`` quatf ``[E]`` (world from body,
    the yaw about +z is used). ``on_generate(mask)`` refreshes the regenerated envs (after
    the props), ``step`` returns the :class:`ConeDetectionsResult` (``res["cones"]``) and
    ``reset(mask)`` restarts the masked envs' random streams. Track courses only; props of
    another kind are refused before the generator is built (``planned_bytes``) and again at
    attach.
    """

    name = "cones"
    source = "props"
    families = ("track",)
    INPUTS = POSE_INPUTS

    SETTINGS = ConeDetectionsSettings

    def __init__(
        self,
        *settings: ConeDetectionsSettings | int,
        source: str | None = None,
        name: str | None = None,
        after: tuple[str, ...] | None = None,
        **fields,
    ):
        super().__init__(name=name, after=after, source=source)
        self.settings = resolve_settings(ConeDetectionsSettings, "ConeDetections", settings, fields)

    def _check_props(self, props) -> None:
        kind = getattr(props, "kind", None)
        if kind != "cone":
            raise ValueError(
                f"ConeDetections reads the cones of {props!r}, whose props are {kind!r}s: use "
                f"tools.Props(kind='cone') (or pass source=<the name of a cone props component>)"
            )

    def planned_bytes(self, layout, config) -> int:
        """The :class:`ConeDetectionsUtility`'s buffers; refuses a source whose props are not cones
        (before the generator is built)."""
        if self.planned_source is not None:
            self._check_props(self.planned_source)
        return buffer_bytes(ConeDetectionsUtility.buffers(self.settings, layout.num_envs))

    def attach(self, ctx) -> None:
        track = generator_result(ctx, Track, "ConeDetections", "cones stand on road borders")
        props = ctx.get(self.source)
        self._check_props(props)
        seeds = getattr(getattr(ctx.generator, "seeds", None), "seeds", None)
        if not isinstance(seeds, wp.array):
            raise TypeError(
                "ConeDetections needs a generator with per-env seeds (generator.seeds.seeds, "
                "a TrackGenerator): its random stream derives from them"
            )
        self.utility = ConeDetectionsUtility(track, props.result, seeds, self.settings)
        self.result = self.utility.detections

    def on_generate(self, ctx, mask) -> None:
        self.utility.refresh(mask)

    def step(self, ctx):
        return self.utility.detect(self.bound["position"], self.bound["orientation"])

    def reset(self, ctx, mask) -> None:
        self.utility.reset(mask)
