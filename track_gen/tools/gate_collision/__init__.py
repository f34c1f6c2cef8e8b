"""The gate collision tool (see :mod:`track_gen.tools.gate_collision.utility`)."""

from .utility import (
    AGENT_RADIUS,
    FRAME_DEPTH,
    FRAME_THICKNESS,
    MAX_BOXES,
    POST_RADIUS,
    DiscCollider,
    DiscCollision,
    DiscContact,
    FrameCollider,
    FrameCollision,
    FrameContact,
    FrameMember,
    box_inputs,
)

__all__ = [
    "AGENT_RADIUS",
    "DiscCollider",
    "DiscCollision",
    "DiscContact",
    "FRAME_DEPTH",
    "FRAME_THICKNESS",
    "FrameCollider",
    "FrameCollision",
    "FrameContact",
    "FrameMember",
    "MAX_BOXES",
    "POST_RADIUS",
    "box_inputs",
]
