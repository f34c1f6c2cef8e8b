"""The result class of the lidar."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch


# ---------------------------------------------------------------------------------- result
@dataclass
class LidarResult(RowBatch):
    """Per-beam answers of one scan (env ``e``, beam ``b`` at row ``e * num_beams + b``).
    The scanner returns the same instance every step and overwrites it; :meth:`clone` takes
    a snapshot. Track units.

    Attributes:
        distance: float32 ``[E*num_beams]``: distance along the beam from the agent's
            position to the first obstacle, in ``[0, max_range]`` (0 when the position lies
            inside a solid obstacle); ``max_range`` when nothing is hit within it (or the
            beam dropped out). NaN for an env without a course (invalid at its last
            refresh) or a non-finite pose, and after ``reset`` until the next scan.
        hit: int32 ``[E*num_beams]``: 1 when the beam hit an obstacle within ``max_range``
            (and did not drop out), else 0.
        step: int32 ``[E]``: scans since the env's last reset: the index of the noise stream
            the next scan draws from (saturates at 2**31 - 1).
    """

    distance: wp.array
    hit: wp.array
    step: wp.array

    _row_arrays = ("distance", "hit")
    _env_arrays = ("step",)

    @classmethod
    def allocate(
        cls, num_envs: int, num_beams: int, device, budget: AllocationBudget | None = None
    ) -> LidarResult:
        """NaN distances, hit 0, step 0 (each array checked against ``budget`` first)."""
        budget = budget or AllocationBudget(device, "lower num_beams")
        rows = int(num_envs) * int(num_beams)
        return cls(
            distance=budget.full(rows, float("nan"), wp.float32, "lidar distances"),
            hit=budget.zeros(rows, wp.int32, "lidar hits"),
            step=budget.zeros(int(num_envs), wp.int32, "lidar step counters"),
        )

    @property
    def num_beams(self) -> int:
        """Beams per env (the row stride, :attr:`rows_per_env`)."""
        return self.rows_per_env
