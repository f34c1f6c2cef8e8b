"""The course component of the band collider (its Tunables: ``fields.py``)."""

from __future__ import annotations

import warp as wp

from ...core.component import Component, InputSpec, buffer_bytes
from ...core.layout import resolve_kernel_layout
from ...core.ranges import EnvSplit
from ...core.settings import HasSettings, resolve_settings
from ..heightfield import SIZE_HI, check_grid_resolution
from .fields import BandCollisionSettings
from .utility import BandCollisionUtility


def box_inputs(max_boxes: int) -> tuple[InputSpec, ...]:
    """The course inputs of ``max_boxes`` oriented boxes per env, shared by every box
    collision: ``box_position`` vec3f (routed from ``position`` at one box per env),
    ``orientation`` quatf (yaw used), ``half_extents`` vec2f, each ``[E * max_boxes]``."""
    return (
        InputSpec(
            "box_position",
            wp.vec3f,
            slots=max_boxes,
            default="position" if max_boxes == 1 else None,
            doc="box centres, track units",
        ),
        InputSpec("orientation", wp.quatf, slots=max_boxes, doc="box orientations (yaw)"),
        InputSpec("half_extents", wp.vec2f, slots=max_boxes, doc="box half length, width"),
    )


class BandCollision(HasSettings, Component):
    """Course component ``"collision"``: oriented boxes against the road band.

    Args:
        settings: a :class:`BandCollisionSettings` (positionally or as ``settings=``), or
            ``method`` by position: ``"segments"`` (exact, reads the borders) or ``"sdf"``
            (a baked grid per env, refreshed for the regenerated envs).
        size_hi: keyword-only: the largest course scale a later curriculum reaches, for the
            SDF grid's resolution warning (``"sdf"``; None: the generator's construction
            range).
        name: component name (default ``"collision"``).
        **fields: any field of :class:`BandCollisionSettings` by keyword (see
            :class:`BandCollisionUtility`): ``max_boxes`` (boxes per env B, inputs ``[E*B]``),
            ``sdf_resolution`` (grid side for ``"sdf"``), ``sdf_padding``, ``clearance``
            (elevated tracks: a box centre farther than this above or below the road is off
            the road; None checks no height), ``kernel_layout`` (``"auto"``, ``"per_env"``,
            ``"per_item"``).

    Inputs: ``box_position`` vec3f ``[E*B]`` (defaults to ``position`` when B == 1),
    ``orientation`` quatf ``[E*B]`` (yaw used), ``half_extents`` vec2f ``[E*B]``.
    ``step`` returns the :class:`BandCollisionResult` (``res.contacts``); an invalid env answers
    oob = 1 with NaN distance, nearest and normal. ``utility`` is the :class:`BandCollisionUtility`.
    """

    name = "collision"
    families = ("track",)

    SETTINGS = BandCollisionSettings

    def __init__(
        self,
        *settings: BandCollisionSettings | str,
        size_hi: float | None = None,
        name: str | None = None,
        **fields,
    ):
        super().__init__(name=name)
        self.settings = resolve_settings(BandCollisionSettings, "BandCollision", settings, fields)
        self.size_hi = SIZE_HI.check(size_hi, "BandCollision.size_hi")
        self.INPUTS = box_inputs(self.max_boxes)

    def attach(self, ctx) -> None:
        if self.method == "sdf":
            check_grid_resolution(
                f"BandCollision('sdf', sdf_resolution={self.sdf_resolution})",
                ctx.generator,
                self.sdf_resolution,
                size_hi=self.size_hi,
            )
        self.utility = BandCollisionUtility(ctx.generator.result, self.settings)
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.contact

    def planned_bytes(self, layout, config) -> int:
        """The :class:`BandCollisionUtility`'s buffers (:meth:`BandCollisionUtility.buffers`)."""
        kernel_layout = resolve_kernel_layout(self.kernel_layout, layout.device)
        return buffer_bytes(
            BandCollisionUtility.buffers(
                self.settings, layout.num_envs, layout.N_max, kernel_layout=kernel_layout
            )
        )

    def on_generate(self, ctx, mask) -> None:
        self._split.run(BandCollisionUtility.refresh, mask)  # on the generator's env ranges

    def step(self, ctx):
        b = self.bound
        return self.utility.query(b["box_position"], b["orientation"], b["half_extents"])
