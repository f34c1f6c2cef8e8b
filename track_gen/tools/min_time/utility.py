"""The minimum-time planner utility."""

from __future__ import annotations

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array, check_bool, check_mask
from ...core.exec import require_not_capturing
from ...core.settings import SettingsUtility, resolve_settings
from .fields import MAX_WORK, MinTimeSettings
from .kernels import _plan_kernel, layout_sizes
from .result import MinTimeResult

#: Most points (capacity ``K``) a planner takes per env.
MAX_POINTS = 256

#: float64 scratch arrays of the planner, by :func:`layout_sizes` key (``x`` three times: the
#: state, the line-search trial and the best iterate, and the step).
_SCRATCH64 = ("x", "x", "x", "x", "lam", "lam", "z", "z", "ys", "hw", "bs")


def work_estimate(capacity: int, samples: int, iterations: int) -> float:
    """Interval-iterations of one env's plan at most (``capacity`` segments of ``samples``
    intervals, every iteration used): the planner's cost is linear in each (one Riccati
    recursion and eleven solves with it per segment and iteration), about 1.9 us each on one
    CPU thread here."""
    return float(capacity) * float(samples) * float(iterations)


def check_work(owner: str, capacity: int, samples: int, iterations: int) -> None:
    """Refuse a plan whose one env may cost more than ``MAX_WORK`` interval-iterations."""
    work = work_estimate(capacity, samples, iterations)
    if work > MAX_WORK:
        raise ValueError(
            f"{owner}: {capacity} points x samples = {samples} x iterations = {iterations} "
            f"= {work:.3g} interval-iterations per env, more than {MAX_WORK:.3g} (about 0.4 s "
            "of one CPU thread): lower iterations, samples or the number of points"
        )


class MinTimeUtility(SettingsUtility):
    """Minimum-time trajectories of a point mass through a batch of point sequences
    (``docs/drone-racing.md`` has the formulation and the measurements).

    The point mass has a thrust acceleration ``t = a - g`` with ``|t| <= t_max``, gravity
    ``g = (0, 0, -gravity)`` and a speed ``|v| <= v_max``; it passes through the points of env
    ``e`` in order: a closed course (``closed=True``) as a flying lap, from point 0 back to it
    with the same velocity; an open path from the first point to the last, with the velocities
    ``v_start[e]`` and ``v_end[e]`` there (default: from rest to rest). Per env (one thread),
    the time and the trajectory minimise the total time over piecewise-constant thrusts on
    ``samples`` equal intervals per segment, solved by a primal-dual interior-point method with
    at most ``iterations`` Newton steps (float64 inside): fixed shapes, no host work, the same
    bits for any thread count.

    Args:
        points: vec3f ``[E*K]``: the points of env ``e`` in rows ``e*K .. e*K + count[e] - 1``
            (``K`` the capacity, 2..256), track units; read live by pointer at each
            :meth:`plan`.
        count: int32 ``[E]``: the points of each env (2..K; others give an ``INPUT`` status).
        closed: keyword-only: a closed course (laps) or an open path.
        v_start: keyword-only vec3f ``[E]`` velocity at the first point of an open path,
            track units/s (None: at rest; not with ``closed``); read live.
        v_end: keyword-only vec3f ``[E]`` velocity at its last point, likewise.
        valid: keyword-only int32 ``[E]`` or None: envs with ``valid[e] == 0`` get no
            trajectory (a generator's ``result.valid``); read live.
        settings: a :class:`MinTimeSettings` (positionally after ``count``, or as
            ``settings=``), or its fields by keyword (``**fields``): ``t_max`` (thrust
            acceleration bound, track units/s^2) and ``v_max`` (speed bound, track units/s)
            required, ``gravity`` (track units/s^2; ``t_max >= 1.001 gravity``), ``samples``
            (intervals per segment) and ``iterations`` (Newton iteration budget per env).

    Attributes:
        result: the :class:`MinTimeResult` (allocated once; the same instance every call).

    Construction checks every argument (TypeError / ValueError naming it) and the cost bound
    (``K x samples x iterations`` at most ``MAX_WORK``: about 0.4 s per env at its budget; an
    env converges in 15 to 40 iterations) before anything is allocated, allocates outside any
    capture and plans every env; :meth:`plan` is one launch, allocation-free and recordable.
    """

    SETTINGS = MinTimeSettings

    def __init__(
        self,
        points: wp.array,
        count: wp.array,
        *settings: MinTimeSettings,
        closed: bool,
        v_start: wp.array | None = None,
        v_end: wp.array | None = None,
        valid: wp.array | None = None,
        **fields,
    ):
        owner = "MinTimeUtility"
        self.settings = resolve_settings(MinTimeSettings, owner, settings, fields, positional=0)
        closed = check_bool(f"{owner} closed", closed)
        if not isinstance(count, wp.array):
            raise TypeError(
                f"{owner} count must be a contiguous [E] int32 wp.array, got {type(count).__name__}"
            )
        if count.ndim != 1 or count.shape[0] < 1:
            raise ValueError(
                f"{owner} count has shape {tuple(count.shape)}: pass an [E] array, E >= 1"
            )
        device = count.device
        E = count.shape[0]
        check_array(f"{owner} count", count, wp.int32, E, device)
        if not isinstance(points, wp.array):
            raise TypeError(
                f"{owner} points must be a contiguous [E*K] vec3f wp.array, got "
                f"{type(points).__name__}"
            )
        rows = points.shape[0] if points.ndim == 1 else -1
        cap = rows // E if rows > 0 else 0
        if rows <= 0 or rows != cap * E or not 2 <= cap <= MAX_POINTS:
            raise ValueError(
                f"{owner} points has shape {tuple(points.shape)}: pass a [E*K] vec3f array "
                f"with E = {E} (count's length) and K in [2, {MAX_POINTS}] points per env"
            )
        check_array(f"{owner} points", points, wp.vec3f, E * cap, device)
        for name, arr in (("v_start", v_start), ("v_end", v_end)):
            if arr is not None:
                if closed:
                    raise ValueError(
                        f"{owner} {name}: a closed course's velocities are free (periodic): "
                        "pass v_start and v_end only with closed=False"
                    )
                check_array(f"{owner} {name}", arr, wp.vec3f, E, device)
        if valid is not None:
            check_array(f"{owner} valid", valid, wp.int32, E, device)
        check_work(owner, cap, self.samples, self.iterations)
        require_not_capturing(device, f"{owner} construction")
        self.closed = closed
        self.points, self.count = points, count
        self.v_start, self.v_end, self.valid = v_start, v_end, valid
        self.device = device
        self.capacity = cap
        hint = f"lower num_envs ({E}), the points per env ({cap}) or samples ({self.samples})"
        precheck = AllocationBudget(device, hint)
        for n, dtype in self.buffers(self.settings, E, cap):
            precheck.take(n, dtype, "the min-time planner")
        budget = AllocationBudget(device, hint)
        self._allocate(self, budget, device, self.settings, E, cap)
        self.plan()

    @staticmethod
    def _allocate(out, budget, device, s: MinTimeSettings, E: int, cap: int) -> None:
        """Every array of a planner of ``E`` envs of ``cap`` points, set on ``out`` (the
        planner, or a stand-in when :meth:`buffers` records a plan)."""
        out.result = MinTimeResult.allocate(E, cap, s.samples, device, budget)
        sizes = layout_sizes(cap, s.samples)
        out._pts = budget.zeros(E * (cap + 1), wp.vec3d, "min-time points")
        out._pmap = budget.zeros(E * cap, wp.int32, "min-time point map")
        out._scratch = [
            budget.zeros(E * sizes[k], wp.float64, "min-time scratch") for k in _SCRATCH64
        ]
        out._dummy_i = budget.zeros(1, wp.int32, "empty mask")
        out._rest = budget.zeros(E, wp.vec3f, "min-time rest velocities")

    @property
    def num_envs(self) -> int:
        return self.result.num_envs

    def plan(self, mask: wp.array | None = None) -> MinTimeResult:
        """Plan the envs with ``mask[e] != 0`` (None: every env) and return :attr:`result`
        (the same instance every call).

        ``mask`` is a contiguous ``[E]`` int32 array on the planner's device; unmasked envs
        stay bitwise unchanged. One launch, no allocation, no host sync, recordable.
        """
        check_mask(mask, self.num_envs, self.device)
        r = self.result
        vel = self.v_start is not None or self.v_end is not None
        wp.launch(
            _plan_kernel,
            self.num_envs,
            inputs=[
                self.points,
                self.count,
                self.valid if self.valid is not None else self._dummy_i,
                self.v_start if self.v_start is not None else self._rest,
                self.v_end if self.v_end is not None else self._rest,
                self._dummy_i if mask is None else mask,
                0 if mask is None else 1,
                0 if self.valid is None else 1,
                1 if vel else 0,
                1 if self.closed else 0,
                self.capacity,
                self.samples,
                self.t_max,
                self.v_max,
                self.gravity,
                self.iterations,
                self._pts,
                self._pmap,
                *self._scratch,
            ],
            outputs=[
                r.time,
                r.passage_time,
                r.sample_time,
                r.position,
                r.velocity,
                r.thrust,
                r.sample_count,
                r.status,
                r.iterations,
            ],
            device=self.device,
        )
        return r
