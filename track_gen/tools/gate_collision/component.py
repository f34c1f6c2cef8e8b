"""The course components of the gate colliders (its Tunables: ``fields.py``)."""

from __future__ import annotations

import warp as wp

from ...core.component import Component, InputSpec, buffer_bytes
from ...results import GateSequence
from ..band_collision import MAX_BOXES, box_inputs
from ..shared import generator_result
from .fields import AGENT_RADIUS, FRAME_DEPTH, FRAME_THICKNESS
from .utility import DiscCollider, FrameCollider, _radius


def _needs_gates(ctx, component: str) -> GateSequence:
    why = "a track course collides with its road band, tools.BandCollision()"
    return generator_result(ctx, GateSequence, component, why)


class DiscCollision(Component):
    """Course component ``"collision"`` of a gate course: oriented boxes against the gate
    posts (plan-view discs of radius ``radius`` at every bar end).

    Args:
        radius: post radius, track units (> 0).
        max_boxes: boxes per env B (inputs are ``[E*B]``).

    Inputs (as :class:`~track_gen.tools.BandCollision`'s): ``box_position`` vec3f ``[E*B]``
    (defaults to ``position`` when B == 1), ``orientation`` quatf ``[E*B]`` (yaw used),
    ``half_extents`` vec2f ``[E*B]``. ``step`` returns the :class:`DiscContact`
    (``res.contacts``); ``utility`` is the :class:`DiscCollider`. Needs a gate generator
    (TypeError otherwise).
    """

    name = "collision"
    families = ("gates",)

    def __init__(self, radius: float, *, max_boxes: int = 1, name: str | None = None):
        super().__init__(name=name)
        self.radius = _radius(radius, "DiscCollision radius")
        self.max_boxes = max_boxes = MAX_BOXES.check(max_boxes, "DiscCollision max_boxes")
        self.INPUTS = box_inputs(max_boxes)

    def attach(self, ctx) -> None:
        gates = _needs_gates(ctx, "DiscCollision")
        self.utility = DiscCollider(gates, self.radius, max_boxes=self.max_boxes)
        self.result = self.utility.contact

    def planned_bytes(self, layout, config) -> int:
        """The :class:`DiscCollider`'s buffers (:meth:`DiscCollider.buffers`)."""
        return buffer_bytes(DiscCollider.buffers(layout.num_envs, layout.N_max, self.max_boxes))

    def on_generate(self, ctx, mask) -> None:
        self.utility.refresh(mask)

    def step(self, ctx):
        b = self.bound
        return self.utility.query(b["box_position"], b["orientation"], b["half_extents"])


class FrameCollision(Component):
    """Course component ``"collision"`` of a gate course: each env's agent sphere against the
    square gate frames.

    Args:
        thickness: member thickness, track units (> 0).
        depth: member depth along the gate's forward axis, track units (>= 0).
        agent_radius: the agent sphere's radius, track units (>= 0).

    Input: ``position`` vec3f ``[E]`` (agent centres). ``step`` returns the
    :class:`FrameContact` (``res.contacts``); ``utility`` is the :class:`FrameCollider`.
    Needs a gate generator (TypeError otherwise).
    """

    name = "collision"
    families = ("gates",)
    INPUTS = (InputSpec("position", wp.vec3f, doc="agent centres, track units"),)

    def __init__(
        self, thickness: float, depth: float, agent_radius: float, *, name: str | None = None
    ):
        super().__init__(name=name)
        self.thickness = FRAME_THICKNESS.check(thickness, "FrameCollision thickness")
        self.depth = FRAME_DEPTH.check(depth, "FrameCollision depth")
        self.agent_radius = AGENT_RADIUS.check(agent_radius, "FrameCollision agent_radius")

    def attach(self, ctx) -> None:
        gates = _needs_gates(ctx, "FrameCollision")
        self.utility = FrameCollider(gates, self.thickness, self.depth, self.agent_radius)
        self.result = self.utility.contact

    def planned_bytes(self, layout, config) -> int:
        """The :class:`FrameCollider`'s buffers (:meth:`FrameCollider.buffers`)."""
        return buffer_bytes(FrameCollider.buffers(layout.num_envs, layout.N_max))

    def on_generate(self, ctx, mask) -> None:
        self.utility.refresh(mask)

    def step(self, ctx):
        return self.utility.query(self.bound["position"])
