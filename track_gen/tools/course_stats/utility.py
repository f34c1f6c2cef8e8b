"""The course descriptor utility."""

from __future__ import annotations

from typing import TYPE_CHECKING

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array
from ...core.exec import require_not_capturing
from ...core.settings import SettingsUtility, resolve_settings
from ...results import GateSequence, Track
from ..shared import check_rows, mask_or
from .fields import MAX_PERCENTILES, CourseStatsSettings
from .kernels import _gate_width_kernel, _line_stats_kernel, _track_width_kernel, vec8d
from .result import CourseStatsResult

if TYPE_CHECKING:
    from ..course_line import CourseLineResult


def _check_line(line, E: int, device) -> int:
    """A course line (a Track or a CourseLineResult: ``center`` vec3f ``[E*M]``, ``count`` and
    ``valid`` int32 ``[E]``) on ``device``; returns its rows per env ``M``."""
    for name in ("center", "count", "valid"):
        if not isinstance(getattr(line, name, None), wp.array):
            raise TypeError(
                f"CourseStatsUtility(line=...): line must be a Track or a CourseLineResult "
                f"(tools.CenterlineFromGates), got {type(line).__name__} without a wp.array "
                f"{name!r}"
            )
    n_e, rows = check_rows(
        "CourseStatsUtility line",
        line,
        {"center": wp.vec3f},
        {"count": wp.int32, "valid": wp.int32},
        "Track or CourseLineResult",
    )
    if n_e != E or line.center.device != device:
        raise ValueError(
            f"CourseStatsUtility(line=...): the line has {n_e} envs on {line.center.device}, the "
            f"course {E} on {device}: pass the line built from this course"
        )
    return rows // E


class CourseStatsUtility(SettingsUtility):
    """Per-env course descriptors of a batch of courses (``docs/course-stats.md`` defines
    each one): length, turning, curvature percentiles, corners and their tightness, widths,
    elevation range and par lap time.

    Args:
        course: the generator's result: a :class:`~track_gen.Track` (its centre line and
            road widths are measured) or a :class:`~track_gen.GateSequence` (its gate
            openings are the widths; pass ``line``).
        settings: a :class:`CourseStatsSettings` (positionally or as ``settings=``), or its
            fields (``corner_radius``, ``corner_angle``, ``percentiles``) by position or
            keyword (``**fields``).
        line: keyword-only: the course line of a gate course (the
            :class:`~track_gen.tools.CourseLineResult` of ``tools.CenterlineFromGates``); None for a
            track (its own centre line).
        lap_time: keyword-only: float32 ``[E]`` par lap times to report as ``par_time`` (a
            :class:`~track_gen.tools.RacingLineResult`'s ``lap_time``, read live by pointer), or
            None (``par_time`` NaN).

    Attributes:
        stats: the :class:`CourseStatsResult` (allocated once).

    Construction checks every argument before anything is allocated or launched, allocates
    (outside any capture) and measures every env; :meth:`measure` is two launches,
    allocation-free, host-sync-free and capturable.
    """

    SETTINGS = CourseStatsSettings

    def __init__(
        self,
        course: Track | GateSequence,
        *settings: CourseStatsSettings | float | tuple,
        line: CourseLineResult | None = None,
        lap_time: wp.array | None = None,
        **fields,
    ):
        self.settings = resolve_settings(
            CourseStatsSettings, "CourseStatsUtility", settings, fields, positional=3
        )
        if isinstance(course, Track):
            E, rows = check_rows(
                "CourseStatsUtility course",
                course,
                {"center": wp.vec3f, "outer": wp.vec3f, "inner": wp.vec3f},
                {"count": wp.int32, "valid": wp.int32},
                "Track",
            )
            if line is not None:
                raise ValueError(
                    "CourseStatsUtility(line=...): a Track is measured along its own centre line: "
                    "leave line=None"
                )
            line = course
        elif isinstance(course, GateSequence):
            E, rows = check_rows(
                "CourseStatsUtility course",
                course,
                {"half_size": wp.float32},
                {"count": wp.int32, "valid": wp.int32},
                "GateSequence",
            )
            if line is None:
                raise ValueError(
                    "CourseStatsUtility(course=GateSequence): pass line=<the CourseLineResult of "
                    "tools.CenterlineFromGates> (a gate course is measured along its course line)"
                )
        else:
            raise TypeError(
                f"CourseStatsUtility(course): course must be a Track or a GateSequence (a "
                f"generator's result), got {type(course).__name__}"
            )
        device = course.count.device
        line_rows = _check_line(line, E, device)
        if lap_time is not None:
            check_array("CourseStatsUtility lap_time", lap_time, wp.float32, E, device)
        require_not_capturing(device, "CourseStatsUtility construction")
        P = len(self.percentiles)
        hint = f"lower num_envs ({E}) or N_max ({line_rows})"
        precheck = AllocationBudget(device, hint)
        for count, dtype in self.buffers(self.settings, E, line_rows):
            precheck.take(count, dtype, "the course stats meter")
        budget = AllocationBudget(device, hint)
        self.course = course
        self.line = line
        self.device = device
        self._rows = rows // E
        self._line_rows = line_rows
        fractions = [p / 100.0 for p in self.percentiles] + [0.0] * (MAX_PERCENTILES - P)
        self._fractions = tuple(fractions)  # a host tuple: never cut by an env range
        self._lap = lap_time
        self._allocate(self, budget, device, self.settings, E, line_rows)
        self.stats.unit = getattr(course, "unit", self.stats.unit)  # the course's length unit
        self.measure()

    @staticmethod
    def _allocate(out, budget, device, s: CourseStatsSettings, E: int, line_rows: int) -> None:
        """Every array of a meter of ``E`` envs on a course line of ``line_rows`` rows per
        env, set on ``out`` (the meter, or a stand-in when :meth:`buffers` records a plan):
        its :class:`CourseStatsResult`, the no-lap and every-env arrays, the half widths and the
        curvature scratch."""
        out.stats = CourseStatsResult.allocate(E, len(s.percentiles), device, budget)
        out._no_lap = budget.full(E, float("nan"), wp.float32, "course stats: no lap time")
        out._everyone = budget.full(E, 1, wp.int32, "course stats: every env")
        out._half_width = budget.zeros(E, wp.float64, "course stats half width")
        out._kappa = budget.zeros(E * line_rows, wp.float64, "course stats curvature scratch")

    @property
    def num_envs(self) -> int:
        return self.stats.num_envs

    def measure(self, mask: wp.array | None = None) -> CourseStatsResult:
        """Measure the envs with ``mask[e] != 0`` (None: every env) and return :attr:`stats`
        (the same instance every call).

        ``mask`` is a contiguous ``[E]`` int32 array on the course's device; unmasked envs
        stay bitwise unchanged. Two launches, no allocation, no host sync.
        """
        E = self.num_envs
        m = mask_or(mask, self._everyone, E, self.device)
        c, st = self.course, self.stats
        widths = [st.width_mean, st.width_min, self._half_width]
        if isinstance(c, Track):
            wp.launch(
                _track_width_kernel,
                E,
                inputs=[c.outer, c.inner, c.count, c.valid, m, self._rows],
                outputs=widths,
                device=self.device,
            )
        else:
            wp.launch(
                _gate_width_kernel,
                E,
                inputs=[c.half_size, c.count, c.valid, m, self._rows],
                outputs=widths,
                device=self.device,
            )
        ln = self.line
        wp.launch(
            _line_stats_kernel,
            E,
            inputs=[
                ln.center,
                ln.count,
                ln.valid,
                m,
                self._half_width,
                self._no_lap if self._lap is None else self._lap,
                0 if self._lap is None else 1,
                self._line_rows,
                self.corner_radius,
                self.corner_angle,
                vec8d(*self._fractions),
                len(self.percentiles),
                self._kappa,
            ],
            outputs=[
                st.length,
                st.turning,
                st.curvature_max,
                st.curvature_percentile,
                st.corners,
                st.corner_curvature,
                st.corner_angle,
                st.straight_fraction,
                st.elevation_range,
                st.par_time,
                st.width_mean,
                st.width_min,
            ],
            device=self.device,
        )
        return st
