"""The result class of the track localizer."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch


@dataclass
class TrackFrame(RowBatch):
    """Per-env answers of :meth:`LocalizerUtility.locate` (the same instance every call;
    :meth:`clone` for a snapshot). Lengths in track units.

    Attributes:
        s: float32 ``[E]``: arc length of the closest point along the line, in
            ``[0, length)`` (interpolated from ``arclen`` along its segment).
        n: float32 ``[E]``: signed lateral offset of the position from the closest point along
            the horizontal left axis ``normalize(cross(z, tangent))``: positive left.
        n_up: float32 ``[E]``: offset along ``cross(tangent, left)`` (upward for a level
            line).
        distance: float32 ``[E]``: ``|position - closest|``.
        segment: int32 ``[E]``: index ``i`` of the closest segment (bead ``i`` -> bead
            ``(i + 1) % count``); -1 for no answer.
        closest: vec3f ``[E]``: the closest point on the line.
        tangent: vec3f ``[E]``: unit chord of that segment.

    No answer (``valid == 0``, ``count < 2``, a non-finite position, a line whose ``length``
    is not finite and positive, a line without a usable segment, or line data so far out of
    range that an answer would not be finite: a non-finite ``arclen`` at the closest segment,
    coordinates near the float32 maximum): NaN floats and vectors, ``segment = -1``. A
    finite position is clamped to ``COORD_LIMIT`` (1e18 track units; within it, used as is),
    so every answer is finite.
    """

    s: wp.array
    n: wp.array
    n_up: wp.array
    distance: wp.array
    segment: wp.array
    closest: wp.array
    tangent: wp.array

    _env_arrays = ("s", "n", "n_up", "distance", "segment", "closest", "tangent")

    @classmethod
    def allocate(cls, num_envs: int, device, budget: AllocationBudget | None = None) -> TrackFrame:
        """Buffers for ``num_envs`` envs holding "no answer" (NaN, segment -1), each checked
        against ``budget`` (a fresh one on ``device`` when None) first."""
        budget = budget or AllocationBudget(device, "lower num_envs")
        nan = float("nan")

        def f32():
            return budget.full(num_envs, nan, wp.float32, "track frames")

        def v3():
            return budget.full(num_envs, wp.vec3f(nan, nan, nan), wp.vec3f, "track frames")

        return cls(
            s=f32(),
            n=f32(),
            n_up=f32(),
            distance=f32(),
            segment=budget.full(num_envs, -1, wp.int32, "track frames"),
            closest=v3(),
            tangent=v3(),
        )
