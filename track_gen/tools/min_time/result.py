"""The result class of the minimum-time planner."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch


class MinTimeStatus(enum.IntFlag):
    """Per-env status bits of a :class:`MinTimeResult` (``status[e]``; 0: converged).

    Attributes:
        INPUT: the env has no usable points: ``count`` outside ``[2, capacity]``, an invalid
            course (``valid[e] == 0``), a point or a boundary velocity that is NaN, inf or
            beyond ``COORD_LIMIT``. NaN rows.
        DEGENERATE: fewer than two distinct points (consecutive points closer than
            ``MERGE_TOL`` times the bounding-box diagonal are merged; a closed course needs two
            distinct points). NaN rows.
        BOUNDARY_SPEED: an open path's start or end speed is not below ``v_max``. NaN rows.
        NOT_CONVERGED: the iteration budget ran out before the solve converged; the rows are
            the best iterate that passes through every point (its time bounds the minimum from
            above), or NaN with ``NO_TRAJECTORY``.
        NO_TRAJECTORY: no iterate passed through every point (only an open path whose start or
            end velocity is not zero can start off the points): NaN rows.
    """

    INPUT = 1
    DEGENERATE = 2
    BOUNDARY_SPEED = 4
    NOT_CONVERGED = 8
    NO_TRAJECTORY = 16


@dataclass
class MinTimeResult(RowBatch):
    """A batch of minimum-time trajectories, flat and NaN-padded.

    Env ``e`` owns the point rows ``e*K .. e*K + K - 1`` (``K`` the planner's point capacity)
    and the sample rows ``e*R .. e*R + R - 1`` (``R = K * samples + 1``). Sample ``k*M + j``
    (``M = samples``) is interval ``j`` of segment ``k`` (from the ``k``-th distinct point to the
    next; closed: the last segment returns to point 0), the last sample the arrival; rows past
    ``sample_count[e]`` and every row of an env without a trajectory are NaN. Units are the
    course's (metres on a metre course): track units, seconds.

    Attributes:
        time: float32 ``[E]``: the minimum time through the points, s (a closed course: one
            flying lap, from point 0 back to it with the same velocity).
        passage_time: float32 ``[E*K]``: when the trajectory reaches point ``i``, s (0 at the
            first point); NaN past ``count``.
        sample_time: float32 ``[E*R]``: time of each sample, s.
        position: vec3f ``[E*R]``: position at each sample, track units.
        velocity: vec3f ``[E*R]``: velocity at each sample, track units/s.
        thrust: vec3f ``[E*R]``: thrust acceleration ``a - g`` held from this sample to the
            next, track units/s^2 (NaN at the last sample); ``|thrust| <= t_max`` and
            ``|velocity| <= v_max`` along the whole trajectory (constant thrust on an
            interval), up to float32 rounding.
        sample_count: int32 ``[E]``: samples of the env's trajectory (0 without one).
        status: int32 ``[E]``: :class:`MinTimeStatus` bits (0: converged).
        iterations: int32 ``[E]``: interior-point iterations the env used.
    """

    time: wp.array
    passage_time: wp.array
    sample_time: wp.array
    position: wp.array
    velocity: wp.array
    thrust: wp.array
    sample_count: wp.array
    status: wp.array
    iterations: wp.array

    _row_arrays = ("sample_time", "position", "velocity", "thrust")
    _env_arrays = ("time", "sample_count", "status", "iterations")

    @classmethod
    def allocate(cls, num_envs: int, capacity: int, samples: int, device, budget=None):
        """NaN rows, ``status = NO_TRAJECTORY`` (nothing planned yet), each array checked
        against ``budget`` first."""
        budget = budget or AllocationBudget(device, "lower num_envs, the points or samples")
        nan = float("nan")
        E = int(num_envs)
        rows = E * (int(capacity) * int(samples) + 1)
        nan3 = wp.vec3f(nan, nan, nan)
        return cls(
            time=budget.full(E, nan, wp.float32, "min-time time"),
            passage_time=budget.full(E * int(capacity), nan, wp.float32, "min-time passage"),
            sample_time=budget.full(rows, nan, wp.float32, "min-time sample time"),
            position=budget.full(rows, nan3, wp.vec3f, "min-time position"),
            velocity=budget.full(rows, nan3, wp.vec3f, "min-time velocity"),
            thrust=budget.full(rows, nan3, wp.vec3f, "min-time thrust"),
            sample_count=budget.full(E, 0, wp.int32, "min-time sample count"),
            status=budget.full(E, int(MinTimeStatus.NO_TRAJECTORY), wp.int32, "min-time status"),
            iterations=budget.full(E, 0, wp.int32, "min-time iterations"),
        )

    @property
    def capacity(self) -> int:
        """Point rows per env ``K`` (the stride of ``passage_time``)."""
        return self.passage_time.shape[0] // self.num_envs

    @property
    def samples(self) -> int:
        """Intervals per segment ``M`` (``R = K * M + 1``)."""
        return (self.rows_per_env - 1) // self.capacity

    def env_range(self, lo: int, hi: int) -> MinTimeResult:
        """The batch restricted to envs ``[lo, hi)`` (``passage_time`` cut at its own stride
        ``K``), sharing the memory."""
        K = self.capacity
        out = super().env_range(lo, hi)
        out.passage_time = self.passage_time[lo * K : hi * K]
        return out

    def host(self, name: str):
        """As :meth:`RowBatch.host`, and ``"passage_time"`` as ``[E, K]``."""
        if name == "passage_time":
            return self.passage_time.numpy().reshape(self.num_envs, self.capacity)
        return super().host(name)
