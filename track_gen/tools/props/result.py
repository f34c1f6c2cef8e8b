"""The result class of the prop placer."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch


# ---------------------------------------------------------------------------------- result
@dataclass
class PropsResult(RowBatch):
    """A batch of prop poses, flat and NaN-padded (env ``e`` owns rows ``e*M .. e*M + M - 1``;
    rows past ``count[e]`` are NaN, ``side`` -1). Units are track units.

    Attributes:
        position: vec3f ``[E*M]``: base centre of the prop (a cone's border point; a wall's
            chord midpoint).
        orientation: quatf ``[E*M]`` (x, y, z, w): local to world. Cones: yaw only, local x
            the plan-view border direction, local z up. Walls: yaw then pitch, local x the
            unit chord, local y horizontal.
        scale: vec3f ``[E*M]``: extents along the local axes. Cones ``(diameter, diameter,
            height)``; walls ``(chord length, thickness, height)``.
        side: int32 ``[E*M]``: :class:`PropSide` (0 inner, 1 outer; -1 past ``count``).
        count: int32 ``[E]``: real props (inner ones first, then outer ones).
        truncated: int32 ``[E]``: 1 when the env needed more than M props at its last
            placement (its props are then farther apart than ``spacing``).
        kind: ``"cone"`` or ``"wall"`` (host str, fixed at construction).
    """

    position: wp.array
    orientation: wp.array
    scale: wp.array
    side: wp.array
    count: wp.array
    truncated: wp.array
    kind: str = "cone"

    _row_arrays = ("position", "orientation", "scale", "side")
    _env_arrays = ("count", "truncated")

    @classmethod
    def allocate(
        cls, num_envs: int, max_props: int, device, budget=None, kind: str = "cone"
    ) -> PropsResult:
        """NaN rows, ``side = -1``, ``count = truncated = 0`` (each array checked against
        ``budget`` first)."""
        budget = budget or AllocationBudget(device, "lower max_props")
        nan = float("nan")
        rows = int(num_envs) * int(max_props)
        return cls(
            position=budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "props"),
            orientation=budget.full(rows, wp.quatf(nan, nan, nan, nan), wp.quatf, "props"),
            scale=budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "props"),
            side=budget.full(rows, -1, wp.int32, "props"),
            count=budget.zeros(int(num_envs), wp.int32, "prop counts"),
            truncated=budget.zeros(int(num_envs), wp.int32, "prop truncation flags"),
            kind=kind,
        )

    @property
    def max_props(self) -> int:
        """Per-env capacity M (the row stride, :attr:`rows_per_env`)."""
        return self.rows_per_env
