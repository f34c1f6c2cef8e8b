"""The result class of the course descriptors."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch
from ...core.units import TRACK_UNITS

#: The per-env descriptors of a :class:`CourseStatsResult` (float32 ``[E]`` each), in order.
DESCRIPTORS = (
    "length",
    "turning",
    "curvature_max",
    "corners",
    "corner_curvature",
    "corner_angle",
    "straight_fraction",
    "width_mean",
    "width_min",
    "elevation_range",
    "par_time",
)


@dataclass
class CourseStatsResult(RowBatch):
    """Per-env descriptors of a batch of courses (``docs/course-stats.md`` defines each).

    Every array is float32 and NaN for an env without a usable course (invalid, fewer than
    3 beads, a bead or width non-finite or beyond ``COORD_LIMIT``); values beyond float32's
    range are clamped to it. Units: the course's length unit (``unit``: metres on a course in
    metres, ``presets.circuit`` or real circuits; else track units), radians, seconds.

    Attributes:
        length: ``[E]`` closed 3D length of the course line (closing chord included).
        turning: ``[E]`` total absolute plan-view turning ``sum_i |theta_i|``, rad
            (``2 pi`` for a convex loop).
        curvature_max: ``[E]`` largest ``|kappa_i|``, 1/track units.
        curvature_percentile: ``[E*P]`` nearest-rank percentiles of ``|kappa_i|`` (row ``k``
            of env ``e``: ``percentiles[k]``), 1/track units.
        corners: ``[E]`` number of corners (an integer count).
        corner_curvature: ``[E]`` mean over the corners of each corner's peak ``|kappa|``
            (its tightness), 1/track units; 0 without corners.
        corner_angle: ``[E]`` mean over the corners of each corner's turning
            ``sum |theta|``, rad; 0 without corners.
        straight_fraction: ``[E]`` share of the plan-view length outside corners, in [0, 1].
        width_mean, width_min: ``[E]`` mean and narrowest full road width over the beads
            (``|outer - inner|`` in plan view), or gate opening over the gates
            (``2 * half_size``), track units.
        elevation_range: ``[E]`` highest minus lowest bead z, track units.
        par_time: ``[E]`` par lap time of the racing line read (``RacingLineResult.lap_time``),
            s; NaN without one.
    """

    length: wp.array
    turning: wp.array
    curvature_max: wp.array
    curvature_percentile: wp.array
    corners: wp.array
    corner_curvature: wp.array
    corner_angle: wp.array
    straight_fraction: wp.array
    width_mean: wp.array
    width_min: wp.array
    elevation_range: wp.array
    par_time: wp.array

    #: The course's length unit (``"m"`` or ``"track units"``), from the measured course.
    unit = TRACK_UNITS
    _host_attrs = ("unit",)
    _row_arrays = ("curvature_percentile",)
    _env_arrays = DESCRIPTORS

    @classmethod
    def allocate(
        cls, num_envs: int, num_percentiles: int, device, budget=None
    ) -> CourseStatsResult:
        """NaN everywhere (each array checked against ``budget`` first)."""
        budget = budget or AllocationBudget(device, "lower num_envs")
        nan = float("nan")
        E = int(num_envs)
        arrays = {n: budget.full(E, nan, wp.float32, f"course stats {n}") for n in DESCRIPTORS}
        pct = budget.full(E * int(num_percentiles), nan, wp.float32, "course stats percentiles")
        return cls(curvature_percentile=pct, **arrays)

    @property
    def num_percentiles(self) -> int:
        """Percentiles per env (``P``)."""
        return self.rows_per_env

    def features(self) -> list[str]:
        """The names of the per-env descriptors (``DESCRIPTORS``)."""
        return list(DESCRIPTORS)
