"""The result class of the progress tracker."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch


@dataclass
class ProgressEvents(RowBatch):
    """Per-env progress after the last update (the same instance every call; ``clone()`` for
    a snapshot).

    Attributes:
        passed: int32 ``[E]``: 1 on the update that passed the target checkpoint forward.
        wrong_way: int32 ``[E]``: 1 on the update that crossed the target's plane backward
            inside its opening (no state change).
        laps: int32 ``[E]``: laps completed since the last reset (a lap completes when the
            last checkpoint is passed).
        progress: int32 ``[E]``: checkpoints passed since the last reset.
        next_index: int32 ``[E]``: index of the target checkpoint.
        dist_to_next: float32 ``[E]``: 3D distance from the agent to the target's
            ``position``, track units (the agent's position clamped to ``COORD_LIMIT``,
            1e18: finite for any finite position); 0 for an env that is invalid or has no
            checkpoints (its progress is frozen), right after a reset and while the target's
            position is non-finite or beyond ``COORD_LIMIT`` (a hand-made CheckpointsResult);
            NaN for a non-finite position (no crossing is counted then).
    """

    passed: wp.array
    wrong_way: wp.array
    laps: wp.array
    progress: wp.array
    next_index: wp.array
    dist_to_next: wp.array

    _env_arrays = ("passed", "wrong_way", "laps", "progress", "next_index", "dist_to_next")

    @classmethod
    def allocate(
        cls, num_envs: int, device, budget: AllocationBudget | None = None
    ) -> ProgressEvents:
        """Zeroed buffers for ``num_envs`` envs, each checked against ``budget`` (a fresh one
        on ``device`` when None) first."""
        budget = budget or AllocationBudget(device, "lower num_envs")

        def i32():
            return budget.zeros(num_envs, wp.int32, "progress events")

        return cls(
            passed=i32(),
            wrong_way=i32(),
            laps=i32(),
            progress=i32(),
            next_index=i32(),
            dist_to_next=budget.zeros(num_envs, wp.float32, "progress events"),
        )
