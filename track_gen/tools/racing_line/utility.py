"""The racing line planner utility."""

from __future__ import annotations

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array, check_mask
from ...core.exec import require_not_capturing
from ...results import Track
from .fields import (
    A_LAT,
    A_LON,
    ITERATIONS,
    KAPPA_ITERATIONS,
    KAPPA_MAX,
    LINEARISATIONS,
    V_MAX,
    VEHICLE_WIDTH,
)
from .kernels import _plan_kernel, _sample_kernel
from .result import RacingLineSet

#: Most solver iterations per plan, ``linearisations * (iterations + kappa_iterations)``
#: (``kappa_iterations`` only with a ``kappa_max``): about 0.5 s per env of ~100 beads on a
#: 2-core CPU, proportional to the beads (benchmarks/work_bounds.py).
SOLVE_WORK_HI = 40000

#: float64 scratch arrays ``[E*N_max]`` of the planner (see :func:`_plan_kernel`).
_SCRATCH64 = "wt lo hi d0 d1 d2 g m0 m1 m2 l0 l1 l2 r1 r2 x y lam best z2 u2".split()


def check_settings(
    owner: str,
    vehicle_width,
    a_lat,
    a_lon,
    v_max,
    kappa_max,
    iterations,
    linearisations,
    kappa_iterations,
) -> dict:
    """Every setting checked against its Tunable (TypeError / ValueError naming
    ``owner.<name>``, the value and the range), as a dict."""
    out = {}
    for tunable, value in (
        (VEHICLE_WIDTH, vehicle_width),
        (A_LAT, a_lat),
        (A_LON, a_lon),
        (V_MAX, v_max),
        (KAPPA_MAX, kappa_max),
        (ITERATIONS, iterations),
        (LINEARISATIONS, linearisations),
        (KAPPA_ITERATIONS, kappa_iterations),
    ):
        if value is None and not tunable.optional:
            raise TypeError(
                f"{owner}.{tunable.name} is required ({tunable.unit}): pass a float "
                f"{tunable.range_text()}"
            )
        out[tunable.name] = tunable.check(value, f"{owner}.{tunable.name}")
    work = out["linearisations"] * (
        out["iterations"] + (out["kappa_iterations"] if out["kappa_max"] is not None else 0)
    )
    if work > SOLVE_WORK_HI:
        raise ValueError(
            f"{owner}: linearisations x (iterations + kappa_iterations) = {work:,} solver "
            f"iterations per plan, above {SOLVE_WORK_HI:,} (about half a second per env of the "
            "default track size on a 2-core CPU, more on longer tracks): lower linearisations, "
            "iterations or kappa_iterations (kappa_iterations count only with kappa_max)"
        )
    return out


class RacingLinePlanner:
    """Minimum-curvature racing lines, speed profiles and par lap times of a
    :class:`~track_gen.Track` batch (``docs/racing-line.md`` has the formulation).

    Per env (one thread each), on the committed track's beads: the offsets ``a_i`` along the
    normal that minimise the summed squared second difference of the closed line
    ``c_i + a_i n_i`` (weighted to ``sum kappa^2 ds``) within
    ``-(width_right - vehicle_width/2) <= a_i <= width_left - vehicle_width/2`` (the widths:
    the borders' distances along the normal), solved by ``iterations`` primal-dual
    active-set iterations (each one O(N) cyclic pentadiagonal factorization; the best
    feasible iterate is kept, so the line's objective is never above the centre line's when
    the centre line is feasible), ``linearisations`` times around the last line, then with
    ``kappa_max`` ``kappa_iterations`` ADMM iterations; then the point-mass speed profile
    and the lap time. Fixed counts: the work does not depend on the data.

    Args:
        track: the generator's :class:`~track_gen.Track` (read live by pointer: call
            :meth:`plan` after every regeneration, with the same mask).
        vehicle_width: track units (``VEHICLE_WIDTH``); the offsets keep half of it inside
            each border.
        a_lat: keyword-only lateral acceleration limit, track units / s^2 (``A_LAT``).
        a_lon: keyword-only longitudinal acceleration limit, track units / s^2 (``A_LON``).
        v_max: keyword-only top speed, track units / s (``V_MAX``).
        kappa_max: keyword-only curvature bound, 1 / track units, or None (``KAPPA_MAX``).
        iterations: keyword-only active-set iterations per linearisation (``ITERATIONS``).
        linearisations: keyword-only QP solves, each around the last line
            (``LINEARISATIONS``).
        kappa_iterations: keyword-only ADMM iterations of the ``kappa_max`` phase
            (``KAPPA_ITERATIONS``).

    Attributes:
        line: the :class:`RacingLineSet` (allocated once).

    Construction checks every argument before anything is allocated or launched, allocates
    (outside any capture) and plans every env; :meth:`plan` is one launch, allocation-free and
    capturable.
    """

    def __init__(
        self,
        track: Track,
        vehicle_width: float,
        *,
        a_lat: float,
        a_lon: float,
        v_max: float,
        kappa_max: float | None = None,
        iterations: int = ITERATIONS.default,
        linearisations: int = LINEARISATIONS.default,
        kappa_iterations: int = KAPPA_ITERATIONS.default,
    ):
        for name in ("center", "normal", "inner", "outer", "count", "valid"):
            if not isinstance(getattr(track, name, None), wp.array):
                raise TypeError(
                    f"RacingLinePlanner(track): track must be a Track (a TrackGenerator's "
                    f"result), got {type(track).__name__} without a wp.array {name!r}"
                )
        settings = check_settings(
            "RacingLinePlanner",
            vehicle_width,
            a_lat,
            a_lon,
            v_max,
            kappa_max,
            iterations,
            linearisations,
            kappa_iterations,
        )
        self.__dict__.update(settings)
        device = track.center.device
        require_not_capturing(device, "RacingLinePlanner construction")
        E = track.count.shape[0]
        n_max = track.center.shape[0] // E
        hint = f"lower num_envs ({E}) or N_max ({n_max})"
        precheck = AllocationBudget(device, hint)
        for count, dtype in self.buffers(E, n_max):
            precheck.take(count, dtype, "the racing line planner")
        budget = AllocationBudget(device, hint)
        self.track = track
        self.device = device
        self._n_max = n_max
        self.line = RacingLineSet.allocate(E, n_max, device, budget)
        self.line.unit = getattr(track, "unit", self.line.unit)  # m and m/s on a metre course
        rows = E * n_max
        self._scratch = [budget.zeros(rows, wp.float64, "racing line scratch") for _ in _SCRATCH64]
        self._act = budget.zeros(rows, wp.int32, "racing line active set")
        self._no_mask = budget.zeros(1, wp.int32, "empty mask")
        self.plan()

    @staticmethod
    def buffers(num_envs: int, n_max: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a planner allocates (its :class:`RacingLineSet`,
        the float64 and int32 scratch and an empty mask)."""
        rows = num_envs * n_max
        scratch = [(rows, wp.float64)] * len(_SCRATCH64) + [(rows, wp.int32), (1, wp.int32)]
        return RacingLineSet.buffers(num_envs, n_max) + scratch

    @property
    def num_envs(self) -> int:
        return self.line.num_envs

    def plan(self, mask: wp.array | None = None) -> RacingLineSet:
        """Plan the lines of the envs with ``mask[e] != 0`` (None: every env) and return
        :attr:`line` (the same instance every call).

        ``mask`` is a contiguous ``[E]`` int32 array on the track's device; unmasked envs stay
        bitwise unchanged. One launch, no allocation, no host sync.
        """
        check_mask(mask, self.num_envs, self.device)
        t, ln = self.track, self.line
        wp.launch(
            _plan_kernel,
            self.num_envs,
            inputs=[
                t.center,
                t.normal,
                t.inner,
                t.outer,
                t.count,
                t.valid,
                self._no_mask if mask is None else mask,
                0 if mask is None else 1,
                self._n_max,
                0.5 * self.vehicle_width,
                self.a_lat,
                self.a_lon,
                self.v_max,
                0.0 if self.kappa_max is None else self.kappa_max,
                self.iterations,
                self.linearisations,
                self.kappa_iterations,
                *self._scratch,
                self._act,
            ],
            outputs=[ln.offset, ln.position, ln.curvature, ln.speed, ln.lap_time, ln.length],
            device=self.device,
        )
        return ln

    def sample(self, s: wp.array, offset_out: wp.array, speed_out: wp.array) -> None:
        """Each env's racing-line offset (track units, + toward the left border) and target
        speed (track units / s) at arc ``s[e]`` of its track's centre line (the arc a
        :class:`~track_gen.tools.TrackLocalizer` answers, ``TrackFrame.s``; taken modulo the
        loop's length), linear between the two beads around it.

        Args:
            s: float32 ``[E]`` arc positions, track units, on the track's device.
            offset_out: float32 ``[E]`` offsets written in place (NaN for an invalid env or
                a non-finite ``s``).
            speed_out: float32 ``[E]`` target speeds written in place (NaN likewise).

        Every array is checked first (TypeError / ValueError naming it; the two outputs must
        be two arrays); one launch, no allocation, no host sync, recordable.
        """
        E = self.num_envs
        check_array("RacingLinePlanner.sample s", s, wp.float32, E, self.device)
        check_array("RacingLinePlanner.sample offset_out", offset_out, wp.float32, E, self.device)
        check_array("RacingLinePlanner.sample speed_out", speed_out, wp.float32, E, self.device)
        if offset_out.ptr == speed_out.ptr:
            raise ValueError(
                "RacingLinePlanner.sample: offset_out and speed_out are the same array: pass "
                "two [E] float32 arrays"
            )
        t, ln = self.track, self.line
        wp.launch(
            _sample_kernel,
            E,
            inputs=[t.arclen, t.length, t.count, t.valid, ln.offset, ln.speed, s, self._n_max],
            outputs=[offset_out, speed_out],
            device=self.device,
        )
