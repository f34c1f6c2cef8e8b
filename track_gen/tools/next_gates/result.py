"""The result class of the next-gates sensor."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch


@dataclass
class NextGatesResult(RowBatch):
    """Per-env poses of the next ``K`` gates in the agent's body frame (the same instance every
    step; :meth:`clone` for a snapshot). Slot ``k`` of env ``e`` is row ``e*K + k``; slot 0 is
    the gate the agent must pass next. Lengths in track units.

    Attributes:
        position: vec3f ``[E*K]``: the gate's centre in the body frame,
            ``rotate(conj(q), gate - agent)`` with ``q`` the agent's unit orientation
            (world-from-body): x forward, y left, z up for an agent of identity orientation.
        orientation: quatf ``[E*K]`` (x, y, z, w): the gate's frame in the body frame,
            ``conj(q) * gate_orientation`` (unit); the gate's local x is the direction it is
            passed in.
        index: int32 ``[E*K]``: the gate's index in the course (``(next + k) % count``).
        revealed: int32 ``[E*K]``: 1 when the slot answers the gate's true pose (always 1
            without ``reveal_range``), 0 when it answers the nominal pose.

    No answer (an invalid env, an env without gates, a non-finite agent position, an agent
    orientation that is non-finite or zero, a slot ``k >= count``): NaN position and
    orientation, ``index = -1``, ``revealed = 0``. Every answer of a valid env is finite.
    """

    position: wp.array
    orientation: wp.array
    index: wp.array
    revealed: wp.array

    _row_arrays = ("position", "orientation", "index", "revealed")
    _stride_field = "_slots"
    _slots = 0  # set by allocate (not a dataclass field)

    @property
    def num_gates(self) -> int:
        """Slots per env ``K``."""
        return self._slots

    def env_range(self, lo: int, hi: int) -> NextGatesResult:
        """The rows of envs ``[lo, hi)`` (shared memory), keeping the slot count."""
        out = super().env_range(lo, hi)
        out._slots = self._slots
        return out

    @classmethod
    def allocate(
        cls, num_envs: int, num_gates: int, device, budget: AllocationBudget | None = None
    ) -> NextGatesResult:
        """Buffers holding "no answer", each checked against ``budget`` first."""
        budget = budget or AllocationBudget(device, "lower num_envs or num_gates")
        rows = num_envs * num_gates
        nan = float("nan")
        out = cls(
            position=budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "next gates"),
            orientation=budget.full(rows, wp.quatf(nan, nan, nan, nan), wp.quatf, "next gates"),
            index=budget.full(rows, -1, wp.int32, "next gates"),
            revealed=budget.zeros(rows, wp.int32, "next gates"),
        )
        out._slots = int(num_gates)
        return out
