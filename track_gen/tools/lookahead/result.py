"""The result class of the lookahead sampler."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch


@dataclass
class LookaheadResult(RowBatch):
    """The points ahead of each env's agent (the same instance every call; :meth:`clone` for
    a snapshot). Env ``e`` owns rows ``e*K .. e*K + K - 1``, row ``e*K + k`` is point
    ``k + 1`` (at centre-line arc ``s + (k + 1) * spacing``). Lengths in track units.

    Attributes:
        position: vec3f ``[E*K]``: the point in the agent's frame: x forward (the plan-view
            heading of the agent's local x axis), y left, z up (world z minus the agent's).
        width_left: float32 ``[E*K]``: plan-view distance from the point to the left border
            along the track's left normal (for the racing line: the centre line's left width
            minus the line's offset).
        width_right: float32 ``[E*K]``: the same to the right border.
        curvature: float32 ``[E*K]``: signed curvature at the point (+ turns left), 1/track
            units: the localizer's per-bead curvature of the centre line, or the racing
            line's, linear between the two beads around the point.
        speed: float32 ``[E*K]``: the racing line's target speed at the point, track units/s
            (``source="racing_line"``; None for the centre line).
        arc: float32 ``[E*K]``: the point's arc position on the centre line, in
            ``[0, length)``.
        valid: int32 ``[E]``: 1 where the env has an answer.

    No answer (``valid = 0``: an invalid track, a localizer without an answer, a non-finite
    position or orientation, a racing line missing for the env): every row NaN.
    """

    position: wp.array
    width_left: wp.array
    width_right: wp.array
    curvature: wp.array
    speed: wp.array | None
    arc: wp.array
    valid: wp.array

    _row_arrays = ("position", "width_left", "width_right", "curvature", "speed", "arc")
    _env_arrays = ("valid",)

    @classmethod
    def allocate(
        cls, num_envs: int, num_points: int, speed: bool, device, budget=None
    ) -> LookaheadResult:
        """ "No answer" everywhere: NaN rows, ``valid = 0`` (each array checked against
        ``budget`` first)."""
        budget = budget or AllocationBudget(device, "lower num_points or num_envs")
        nan = float("nan")
        rows = int(num_envs) * int(num_points)

        def f32(what):
            return budget.full(rows, nan, wp.float32, what)

        return cls(
            position=budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "lookahead points"),
            width_left=f32("lookahead widths"),
            width_right=f32("lookahead widths"),
            curvature=f32("lookahead curvature"),
            speed=f32("lookahead speeds") if speed else None,
            arc=f32("lookahead arcs"),
            valid=budget.zeros(int(num_envs), wp.int32, "lookahead validity"),
        )

    @property
    def num_points(self) -> int:
        """Points per env K (the row stride)."""
        return self.rows_per_env
