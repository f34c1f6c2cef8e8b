"""The result class of the racing line planner."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch
from ...core.units import TRACK_UNITS


@dataclass
class RacingLineResult(RowBatch):
    """A batch of racing lines, flat and NaN-padded like the :class:`~track_gen.Track` they
    follow (env ``e`` owns rows ``e*N_max .. e*N_max + N_max - 1``, row ``i`` is bead ``i``).
    Rows past the track's ``count`` and every row of an env without a line (an invalid
    track, fewer than 8 beads, a non-finite bead) are NaN, as are its ``lap_time`` and
    ``length``. Units are the course's (``unit``: the track's ``Track.unit``): metres and
    m/s on a course in metres (``presets.circuit``, real circuits), else track units and
    track units per second.

    Attributes:
        offset: float32 ``[E*N_max]``: signed lateral offset of the line from the centre line
            along the track's normal (+ toward the left border), within
            ``[-(width_right - vehicle_width/2), width_left - vehicle_width/2]``.
        position: vec3f ``[E*N_max]``: ``center + offset * normal`` (z carried from the
            centre line).
        curvature: float32 ``[E*N_max]``: signed plan-view curvature of the closed line at the
            bead (the Menger curvature of the bead and its two neighbours; + turns left),
            1/track units.
        speed: float32 ``[E*N_max]``: target speed at the bead, track units/s.
        lap_time: float32 ``[E]``: par lap time of the speed profile, s.
        length: float32 ``[E]``: length of the closed line (3D chords), track units.
        unit: the course's length unit (``"m"`` or ``"track units"``); speeds are
            ``<unit>/s``.
    """

    offset: wp.array
    position: wp.array
    curvature: wp.array
    speed: wp.array
    lap_time: wp.array
    length: wp.array

    unit = TRACK_UNITS
    _host_attrs = ("unit",)
    _row_arrays = ("offset", "position", "curvature", "speed")
    _env_arrays = ("lap_time", "length")

    @classmethod
    def allocate(cls, num_envs: int, n_max: int, device, budget=None) -> RacingLineResult:
        """NaN everywhere (each array checked against ``budget`` first)."""
        budget = budget or AllocationBudget(device, "lower num_envs or N_max")
        nan = float("nan")
        rows, E = int(num_envs) * int(n_max), int(num_envs)

        def f(count, what):
            return budget.full(count, nan, wp.float32, what)

        return cls(
            offset=f(rows, "racing line offset"),
            position=budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "racing line position"),
            curvature=f(rows, "racing line curvature"),
            speed=f(rows, "racing line speed"),
            lap_time=f(E, "racing line lap time"),
            length=f(E, "racing line length"),
        )

    @property
    def N_max(self) -> int:
        """Rows per env (the track's ``N_max``)."""
        return self.rows_per_env
