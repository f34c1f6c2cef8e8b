"""The result class of the course line builder."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch


@dataclass
class CourseLineResult(RowBatch):
    """A batch of closed sampled lines, flat and NaN-padded (env ``e`` owns rows
    ``e*L .. e*L + L - 1``, ``L = max_gates * samples_per_gate``; rows past ``count[e]`` are
    NaN). Shaped like a :class:`~track_gen.Track`'s centerline arrays. Units: track units.

    Attributes:
        center: vec3f ``[E*L]``: beads along the line (bead ``g*K`` is gate ``g``'s centre).
        tangent: vec3f ``[E*L]``: unit central difference of the neighbouring beads
            (``normalize(center[i+1] - center[i-1])``, indices mod ``count``); ``(0, 0, 0)``
            where that difference is zero.
        normal: vec3f ``[E*L]``: plan-view left normal ``normalize(-t.y, t.x, 0)``; ``(0, 1, 0)``
            where the tangent's plan-view part is shorter than :data:`VERTICAL_EPS` (a
            vertical or zero tangent).
        arclen: float32 ``[E*L]``: arc length before bead ``i`` (0 at ``i = 0``), the sum of
            the chords ``|center[j+1] - center[j]|``, ``j < i``.
        length: float32 ``[E]``: closed perimeter, the closing chord ``count-1 -> 0``
            included (0 for an env without a line).
        count: int32 ``[E]``: beads, ``gates * K`` (0: no line).
        valid: int32 ``[E]``: the gate generator's ``result.valid`` (aliased, not copied).
    """

    center: wp.array
    tangent: wp.array
    normal: wp.array
    arclen: wp.array
    length: wp.array
    count: wp.array
    valid: wp.array

    _row_arrays = ("center", "tangent", "normal", "arclen")
    _env_arrays = ("length", "count", "valid")

    @classmethod
    def allocate(
        cls, num_envs: int, n_max: int, device, budget=None, valid: wp.array | None = None
    ) -> CourseLineResult:
        """NaN rows, ``length = 0`` and ``count = 0`` (each array checked against ``budget``
        first). ``valid`` is aliased when given, else a zero ``[E]`` int32 array."""
        budget = budget or AllocationBudget(device, "lower max_gates or samples_per_gate")
        nan = float("nan")
        rows = int(num_envs) * int(n_max)

        def v3():
            return budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "course line")

        if valid is None:
            valid = budget.zeros(int(num_envs), wp.int32, "course line valid")
        return cls(
            center=v3(),
            tangent=v3(),
            normal=v3(),
            arclen=budget.full(rows, nan, wp.float32, "course line arclen"),
            length=budget.zeros(int(num_envs), wp.float32, "course line length"),
            count=budget.zeros(int(num_envs), wp.int32, "course line count"),
            valid=valid,
        )

    @property
    def N_max(self) -> int:
        """Per-env capacity L (the row stride, :attr:`rows_per_env`)."""
        return self.rows_per_env

    def clone(self) -> CourseLineResult:
        """A detached deep copy, ``valid`` included (allocates: call it outside your graph)."""
        return super().clone()
