"""The result class of the cone detector."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch


@dataclass
class ConeDetectionsResult(RowBatch):
    """The cones each env's agent sees, nearest first (the same instance every call;
    :meth:`clone` for a snapshot). Env ``e`` owns rows ``e*M .. e*M + M - 1``; rows
    ``count[e] ..`` are padding. Lengths in track units.

    Attributes:
        position: vec3f ``[E*M]``: the cone's base centre in the agent's frame (x forward,
            y left, z up), noise included.
        distance: float32 ``[E*M]``: ``|position|`` (the reported distance), non-decreasing
            along an env's rows.
        colour: int32 ``[E*M]``: :class:`ConeColour` (0 left, 1 right of the road in its
            direction of travel; -1 for padding).
        prop: int32 ``[E*M]``: the cone's row within the env's props (``PropsResult`` row
            ``e*P + prop``), -1 for padding.
        count: int32 ``[E]``: detections (<= M).
        valid: int32 ``[E]``: 1 where the env has an answer.

    Padding of an env with an answer: ``position = (0, 0, 0)``, ``distance = 0``,
    ``colour = prop = -1`` (no NaN). No answer (``valid = 0``: an invalid track, a
    non-finite position or orientation): ``count = 0``, NaN positions and distances,
    ``colour = prop = -1``.
    """

    position: wp.array
    distance: wp.array
    colour: wp.array
    prop: wp.array
    count: wp.array
    valid: wp.array

    _row_arrays = ("position", "distance", "colour", "prop")
    _env_arrays = ("count", "valid")

    @classmethod
    def allocate(cls, num_envs: int, max_cones: int, device, budget=None) -> ConeDetectionsResult:
        """ "No answer" everywhere (each array checked against ``budget`` first)."""
        budget = budget or AllocationBudget(device, "lower max_cones or num_envs")
        nan = float("nan")
        rows = int(num_envs) * int(max_cones)
        return cls(
            position=budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "cone detections"),
            distance=budget.full(rows, nan, wp.float32, "cone distances"),
            colour=budget.full(rows, -1, wp.int32, "cone colours"),
            prop=budget.full(rows, -1, wp.int32, "cone rows"),
            count=budget.zeros(int(num_envs), wp.int32, "cone counts"),
            valid=budget.zeros(int(num_envs), wp.int32, "cone validity"),
        )

    @property
    def max_cones(self) -> int:
        """Detections per env M (the row stride)."""
        return self.rows_per_env
