"""The course components of the gate colliders (its Tunables: ``fields.py``)."""

from __future__ import annotations

import warp as wp

from ...core.component import Component, InputSpec, buffer_bytes
from ...core.settings import HasSettings, resolve_settings
from ...results import GateSequence
from ..band_collision import box_inputs
from ..shared import generator_result
from .fields import DiscCollisionSettings, FrameCollisionSettings
from .utility import DiscCollisionUtility, FrameCollisionUtility


def _needs_gates(ctx, component: str) -> GateSequence:
    why = "a track course collides with its road band, tools.BandCollision()"
    return generator_result(ctx, GateSequence, component, why)


class DiscCollision(HasSettings, Component):
    """Course component ``"collision"`` of a gate course: oriented boxes against the gate
    posts (plan-view discs of radius ``radius`` at every bar end).

    Args:
        settings: a :class:`DiscCollisionSettings` (positionally or as ``settings=``), or
            ``radius`` (post radius, track units, > 0) by position; ``max_boxes`` (boxes per
            env B: inputs are ``[E*B]``) by keyword.

    Inputs (as :class:`~track_gen.tools.BandCollision`'s): ``box_position`` vec3f ``[E*B]``
    (defaults to ``position`` when B == 1), ``orientation`` quatf ``[E*B]`` (yaw used),
    ``half_extents`` vec2f ``[E*B]``. ``step`` returns the :class:`DiscContact`
    (``res.contacts``); ``utility`` is the :class:`DiscCollisionUtility`. Needs a gate generator
    (TypeError otherwise).
    """

    name = "collision"
    families = ("gates",)

    SETTINGS = DiscCollisionSettings

    def __init__(self, *settings: DiscCollisionSettings | float, name: str | None = None, **fields):
        super().__init__(name=name)
        self.settings = resolve_settings(DiscCollisionSettings, "DiscCollision", settings, fields)
        self.INPUTS = box_inputs(self.max_boxes)

    def attach(self, ctx) -> None:
        gates = _needs_gates(ctx, "DiscCollision")
        self.utility = DiscCollisionUtility(gates, self.settings)
        self.result = self.utility.contact

    def planned_bytes(self, layout, config) -> int:
        """The :class:`DiscCollisionUtility`'s buffers (:meth:`DiscCollisionUtility.buffers`)."""
        return buffer_bytes(
            DiscCollisionUtility.buffers(self.settings, layout.num_envs, layout.N_max)
        )

    def on_generate(self, ctx, mask) -> None:
        self.utility.refresh(mask)

    def step(self, ctx):
        b = self.bound
        return self.utility.query(b["box_position"], b["orientation"], b["half_extents"])


class FrameCollision(HasSettings, Component):
    """Course component ``"collision"`` of a gate course: each env's agent sphere against the
    square gate frames.

    Args:
        settings: a :class:`FrameCollisionSettings` (positionally or as ``settings=``), or
            by position or keyword: ``thickness`` (member thickness, track units, > 0),
            ``depth`` (member depth along the gate's forward axis, track units, >= 0),
            ``agent_radius`` (the agent sphere's radius, track units, >= 0).

    Input: ``position`` vec3f ``[E]`` (agent centres). ``step`` returns the
    :class:`FrameContact` (``res.contacts``); ``utility`` is the :class:`FrameCollisionUtility`.
    Needs a gate generator (TypeError otherwise).
    """

    name = "collision"
    families = ("gates",)
    INPUTS = (InputSpec("position", wp.vec3f, doc="agent centres, track units"),)

    SETTINGS = FrameCollisionSettings

    def __init__(
        self, *settings: FrameCollisionSettings | float, name: str | None = None, **fields
    ):
        super().__init__(name=name)
        self.settings = resolve_settings(
            FrameCollisionSettings, "FrameCollision", settings, fields, positional=3
        )

    def attach(self, ctx) -> None:
        gates = _needs_gates(ctx, "FrameCollision")
        self.utility = FrameCollisionUtility(gates, self.settings)
        self.result = self.utility.contact

    def planned_bytes(self, layout, config) -> int:
        """The :class:`FrameCollisionUtility`'s buffers (:meth:`FrameCollisionUtility.buffers`)."""
        return buffer_bytes(
            FrameCollisionUtility.buffers(self.settings, layout.num_envs, layout.N_max)
        )

    def on_generate(self, ctx, mask) -> None:
        self.utility.refresh(mask)

    def step(self, ctx):
        return self.utility.query(self.bound["position"])
