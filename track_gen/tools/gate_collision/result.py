"""The result classes of the gate colliders (:class:`DiscContact`, :class:`FrameContact`)."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import BoxRowBatch, RowBatch


@dataclass
class DiscContact(BoxRowBatch):
    """Per-box answers of :meth:`DiscCollisionUtility.query` (box ``b`` of env ``e`` at row
    ``e*B + b``, ``B = max_boxes``). The collider returns the same instance on every query and
    overwrites it; :meth:`clone` takes a snapshot. Plan view (x, y), track units.

    Attributes:
        hit: int32 ``[E*B]``: 1 when the box's rectangle meets a post's disc (``distance <=
            0``), else 0. 0 for an inactive slot and for every box of an invalid env.
        post: int32 ``[E*B]``: the nearest post, ``2*g`` (gate ``g``'s left end) or
            ``2*g + 1`` (its right end); -1 for an inactive slot or an invalid env.
        distance: float32 ``[E*B]``: signed clearance between the rectangle and the nearest
            disc: distance from the post centre to the solid rectangle minus the radius
            (negative: they overlap; ``-radius`` when the centre is inside the rectangle).
            NaN when inactive/invalid.
        nearest: vec2f ``[E*B]``: the nearest post's centre (x, y). NaN when inactive/invalid.
    """

    hit: wp.array
    post: wp.array
    distance: wp.array
    nearest: wp.array

    _row_arrays = ("hit", "post", "distance", "nearest")

    @classmethod
    def allocate(
        cls, rows: int, device, budget: AllocationBudget | None = None, max_boxes: int = 0
    ) -> DiscContact:
        """Buffers for ``rows`` boxes (``E * max_boxes``): hit 0, post -1, NaN geometry, each
        checked against ``budget`` (a fresh one on ``device`` when None) first."""
        budget = budget or AllocationBudget(device, "lower max_boxes")
        nan = float("nan")
        what = "box contacts (E * max_boxes)"
        out = cls(
            hit=budget.zeros(rows, wp.int32, what),
            post=budget.full(rows, -1, wp.int32, what),
            distance=budget.full(rows, nan, wp.float32, what),
            nearest=budget.full(rows, wp.vec2f(nan, nan), wp.vec2f, what),
        )
        out._boxes_per_env = int(max_boxes)
        return out


@dataclass
class FrameContact(RowBatch):
    """Per-env answers of :meth:`FrameCollisionUtility.query` (one agent per env). The collider
    returns the same instance on every query and overwrites it; :meth:`clone` takes a
    snapshot. Track units.

    Attributes:
        hit: int32 ``[E]``: 1 when the agent's sphere meets a frame member (``distance <=
            0``), else 0 (also for an invalid env or a non-finite position).
        gate: int32 ``[E]``: gate of the nearest member; -1 when invalid/non-finite.
        member: int32 ``[E]``: the nearest member (:class:`FrameMember`: 0 left, 1 right,
            2 top, 3 bottom); -1 when invalid/non-finite.
        distance: float32 ``[E]``: signed distance from the agent centre to the nearest
            member box minus ``agent_radius``: outside the box the Euclidean distance, inside
            it minus the depth to the box's nearest face (``< -agent_radius``; 0 on its
            surface gives ``-agent_radius``). NaN when invalid/non-finite.
        nearest: vec3f ``[E]``: the closest point on that member box's surface (inside: on
            the face nearest to the centre). NaN when invalid/non-finite.
        normal: vec3f ``[E]``: the box's outward unit normal at ``nearest``: the unit vector
            from ``nearest`` towards the agent centre outside the box, the nearest face's
            outward axis inside it (push the agent along it to leave the member). NaN only
            when the env is invalid or the position non-finite.
    """

    hit: wp.array
    gate: wp.array
    member: wp.array
    distance: wp.array
    nearest: wp.array
    normal: wp.array

    _env_arrays = ("hit", "gate", "member", "distance", "nearest", "normal")

    @classmethod
    def allocate(cls, rows: int, device, budget: AllocationBudget | None = None) -> FrameContact:
        """Buffers for ``rows`` agents: hit 0, indices -1, NaN geometry, each checked against
        ``budget`` (a fresh one on ``device`` when None) first."""
        budget = budget or AllocationBudget(device, "lower num_envs")
        nan = float("nan")
        nan3 = wp.vec3f(nan, nan, nan)
        what = "frame contacts"
        return cls(
            hit=budget.zeros(rows, wp.int32, what),
            gate=budget.full(rows, -1, wp.int32, what),
            member=budget.full(rows, -1, wp.int32, what),
            distance=budget.full(rows, nan, wp.float32, what),
            nearest=budget.full(rows, nan3, wp.vec3f, what),
            normal=budget.full(rows, nan3, wp.vec3f, what),
        )
