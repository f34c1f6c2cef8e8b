"""The course component of the band collider (its Tunables: ``fields.py``)."""

from __future__ import annotations

import warp as wp

from ...core.component import Component, InputSpec, buffer_bytes
from ...core.layout import KERNEL_LAYOUT, resolve_kernel_layout
from ...core.ranges import EnvSplit
from ..heightfield import SIZE_HI, check_grid_resolution
from .fields import CLEARANCE, MAX_BOXES, METHOD, SDF_RESOLUTION
from .utility import BandCollider


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


class BandCollision(Component):
    """Course component ``"collision"``: oriented boxes against the road band.

    Args:
        method: ``"segments"`` (exact, reads the borders) or ``"sdf"`` (a baked grid per env,
            refreshed for the regenerated envs).
        max_boxes: boxes per env B (inputs are ``[E*B]``).
        sdf_resolution: grid side for ``"sdf"``.
        clearance: see :class:`BandCollider` (elevated tracks: a box centre farther than this
            above or below the road is off the road; None checks no height).
        size_hi: the largest course scale a later curriculum reaches, for the SDF grid's
            resolution warning (``"sdf"``; None: the generator's construction range).
        kernel_layout: thread layout of the SDF bake and the segments refresh and query
            (``"auto"``, ``"per_env"``, ``"per_item"``; see :class:`BandCollider`).

    Inputs: ``box_position`` vec3f ``[E*B]`` (defaults to ``position`` when B == 1),
    ``orientation`` quatf ``[E*B]`` (yaw used), ``half_extents`` vec2f ``[E*B]``.
    ``step`` returns the :class:`BandContact` (``res.contacts``); an invalid env answers
    oob = 1 with NaN distance, nearest and normal. ``utility`` is the :class:`BandCollider`.
    """

    name = "collision"
    families = ("track",)

    def __init__(
        self,
        method: str = "segments",
        *,
        max_boxes: int = 1,
        sdf_resolution: int = 128,
        clearance: float | None = None,
        size_hi: float | None = None,
        kernel_layout: str = "auto",
        name: str | None = None,
    ):
        super().__init__(name=name)
        self.method = METHOD.check(method, "BandCollision method")
        self.max_boxes = max_boxes = MAX_BOXES.check(max_boxes, "BandCollision max_boxes")
        self.sdf_resolution = SDF_RESOLUTION.check(sdf_resolution, "BandCollision sdf_resolution")
        self.clearance = CLEARANCE.check(clearance, "BandCollision clearance")
        self.size_hi = SIZE_HI.check(size_hi, "BandCollision size_hi")
        self.kernel_layout = KERNEL_LAYOUT.check(kernel_layout, "BandCollision kernel_layout")
        self.INPUTS = box_inputs(max_boxes)

    def attach(self, ctx) -> None:
        if self.method == "sdf":
            check_grid_resolution(
                f"BandCollision('sdf', sdf_resolution={self.sdf_resolution})",
                ctx.generator,
                self.sdf_resolution,
                size_hi=self.size_hi,
            )
        self.utility = BandCollider(
            ctx.generator.result,
            method=self.method,
            max_boxes=self.max_boxes,
            sdf_resolution=self.sdf_resolution,
            clearance=self.clearance,
            kernel_layout=self.kernel_layout,
        )
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.contact

    def planned_bytes(self, layout, config) -> int:
        """The :class:`BandCollider`'s buffers (:meth:`BandCollider.buffers`)."""
        return buffer_bytes(
            BandCollider.buffers(
                layout.num_envs,
                layout.N_max,
                self.method,
                self.max_boxes,
                self.sdf_resolution,
                self.clearance is not None,
                resolve_kernel_layout(self.kernel_layout, layout.device),
            )
        )

    def on_generate(self, ctx, mask) -> None:
        self._split.run(BandCollider.refresh, mask)  # on the generator's env ranges

    def step(self, ctx):
        b = self.bound
        return self.utility.query(b["box_position"], b["orientation"], b["half_extents"])
