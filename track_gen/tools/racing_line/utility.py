"""The racing line planner utility."""

from __future__ import annotations

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array, check_mask
from ...core.exec import require_not_capturing
from ...core.settings import SettingsUtility, resolve_settings
from ...results import Track
from .fields import RacingLineSettings
from .kernels import _plan_kernel, _sample_kernel
from .result import RacingLineResult

#: float64 scratch arrays ``[E*N_max]`` of the planner (see :func:`_plan_kernel`).
_SCRATCH64 = "wt lo hi d0 d1 d2 g m0 m1 m2 l0 l1 l2 r1 r2 x y lam best z2 u2".split()


class RacingLineUtility(SettingsUtility):
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
        settings: a :class:`RacingLineSettings` (positionally or as ``settings=``), or
            ``vehicle_width`` by position (the offsets keep half of it inside each border).
        **fields: any field of :class:`RacingLineSettings` by keyword.

    Attributes:
        line: the :class:`RacingLineResult` (allocated once).

    Construction checks every argument before anything is allocated or launched, allocates
    (outside any capture) and plans every env; :meth:`plan` is one launch, allocation-free and
    capturable.
    """

    SETTINGS = RacingLineSettings

    def __init__(
        self,
        track: Track,
        *settings: RacingLineSettings | float,
        **fields,
    ):
        for name in ("center", "normal", "inner", "outer", "count", "valid"):
            if not isinstance(getattr(track, name, None), wp.array):
                raise TypeError(
                    f"RacingLineUtility(track): track must be a Track (a TrackGenerator's "
                    f"result), got {type(track).__name__} without a wp.array {name!r}"
                )
        self.settings = resolve_settings(RacingLineSettings, "RacingLineUtility", settings, fields)
        device = track.center.device
        require_not_capturing(device, "RacingLineUtility construction")
        E = track.count.shape[0]
        n_max = track.center.shape[0] // E
        hint = f"lower num_envs ({E}) or N_max ({n_max})"
        precheck = AllocationBudget(device, hint)
        for count, dtype in self.buffers(self.settings, E, n_max):
            precheck.take(count, dtype, "the racing line planner")
        budget = AllocationBudget(device, hint)
        self.track = track
        self.device = device
        self._n_max = n_max
        self._allocate(self, budget, device, self.settings, E, n_max)
        self.line.unit = getattr(track, "unit", self.line.unit)  # m and m/s on a metre course
        self.plan()

    @staticmethod
    def _allocate(out, budget, device, s, E: int, n_max: int) -> None:
        """Every array of a planner of ``E`` envs of ``n_max`` beads, set on ``out`` (the
        planner, or a stand-in when :meth:`buffers` records a plan): its
        :class:`RacingLineResult`, the float64 and int32 scratch and an empty mask."""
        rows = E * n_max
        out.line = RacingLineResult.allocate(E, n_max, device, budget)
        out._scratch = [budget.zeros(rows, wp.float64, "racing line scratch") for _ in _SCRATCH64]
        out._act = budget.zeros(rows, wp.int32, "racing line active set")
        out._no_mask = budget.zeros(1, wp.int32, "empty mask")

    @property
    def num_envs(self) -> int:
        return self.line.num_envs

    def plan(self, mask: wp.array | None = None) -> RacingLineResult:
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
        :class:`~track_gen.tools.LocalizerUtility` answers, ``TrackFrame.s``; taken modulo the
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
        check_array("RacingLineUtility.sample s", s, wp.float32, E, self.device)
        check_array("RacingLineUtility.sample offset_out", offset_out, wp.float32, E, self.device)
        check_array("RacingLineUtility.sample speed_out", speed_out, wp.float32, E, self.device)
        if offset_out.ptr == speed_out.ptr:
            raise ValueError(
                "RacingLineUtility.sample: offset_out and speed_out are the same array: pass "
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
