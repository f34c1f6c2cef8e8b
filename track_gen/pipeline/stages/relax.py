"""Position-based relaxation: bead-chain Jacobi sweeps that make a loop thick enough for its
road (PBD constraint projection with relaxation factors; no compliance).

One thread per env runs every sweep over the env's beads (a CPU kernel is single-threaded,
so per-env loops cost nothing extra and allow a per-env early exit):

* separation: beads outside the index band closer than ``target = 2*hw*(1+margin)`` are
  pushed apart (average of the pair corrections);
* spacing: edges are pulled toward the rest length ``L0 = perimeter / count``;
* bending: a bead whose Menger radius is below ``R_min = hw*(1+margin)`` is pulled toward
  its neighbours' midpoint.

Separation candidates come from a per-bead cache rebuilt every ``relax_sep_every`` sweeps
(``relax_sep_cache_slots`` slots within ``target*(1+skin)``); candidates beyond the slots
are dropped and counted per env in ``diagnostics["relax.sep_overflow"]``. From sweep
``relax_cheby_start`` on, a Chebyshev semi-iterative blend accelerates convergence. An env
stops once a sweep moves no bead by more than ``relax_converge_tol * hw`` (converged;
its current iterate is kept). A Taubin smoothing
tail and spacing-only polish sweeps follow.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ...geometry import closed_length, cross2, menger_curvature
from ...tunable import Tunable
from ..stage import Stage, Workspace
from .inflate import HALF_WIDTH

wp.set_module_options({"enable_backward": False})

TAUBIN_LAMBDA = wp.constant(0.5)
TAUBIN_MU = wp.constant(-0.53)


@wp.func
def band_for(hw: float, mean_seg: float, fixed_band: int, n: int) -> int:
    """Index band excluded from separation/thickness: beads this close in index are skipped."""
    b = fixed_band
    if b <= 0:
        ratio = 2.0 * hw / wp.max(mean_seg, 1.0e-12)
        b = 1
        if wp.isfinite(ratio):
            b = wp.max(int(wp.round(ratio)), 1)
    return wp.max(wp.min(b, n // 4), 1)


@wp.func
def index_gap(i: int, j: int, n: int) -> int:
    d = wp.abs(i - j)
    return wp.min(d, n - d)


@wp.func
def spacing_step(xm: wp.vec2f, xi: wp.vec2f, xp: wp.vec2f, L0: float) -> wp.vec2f:
    """Spacing correction of bead i pulling both incident edges toward length L0."""
    dn = xp - xi
    dp = xi - xm
    ln = wp.max(wp.length(dn), 1.0e-9)
    lp = wp.max(wp.length(dp), 1.0e-9)
    return 0.25 * ((ln - L0) / ln * dn - (lp - L0) / lp * dp)


@wp.func
def _cache_insert(
    x: wp.array(dtype=wp.vec2f),
    xb: int,
    i: int,
    j: int,
    dd: float,
    slots: int,
    cache: wp.array(dtype=wp.int32),
    cache_n: wp.array(dtype=wp.int32),
    cb: int,
    nb: int,
) -> int:
    """Add candidate j (squared distance dd) to bead i's list; when the list is full, replace
    its farthest entry if j is nearer. Returns 1 when a candidate was left out."""
    k = cache_n[nb + i]
    if k < slots:
        cache[cb + i * slots + k] = j
        cache_n[nb + i] = k + 1
        return 0
    xi = x[xb + i]
    far = int(0)
    far_d = float(-1.0)
    for c in range(slots):
        q = x[xb + cache[cb + i * slots + c]] - xi
        qd = wp.dot(q, q)
        if qd > far_d:
            far_d = qd
            far = c
    if dd < far_d:
        cache[cb + i * slots + far] = j
    return 1


@wp.func
def _rebuild_cache(
    x: wp.array(dtype=wp.vec2f),
    xb: int,
    n: int,
    band: int,
    radius: float,
    slots: int,
    cache: wp.array(dtype=wp.int32),
    cache_n: wp.array(dtype=wp.int32),
    cb: int,
    nb: int,
) -> int:
    """Store, per bead, up to ``slots`` nearest non-band beads within ``radius`` (each pair is
    tested once and entered in both lists). Returns the candidates left out."""
    dropped = int(0)
    r2 = radius * radius
    for i in range(n):
        cache_n[nb + i] = 0
    for i in range(n):
        xi = x[xb + i]
        for j in range(i + band + 1, n):
            if n - (j - i) <= band:
                break  # the rest wrap around into the band
            d = x[xb + j] - xi
            if wp.abs(d[0]) > radius or wp.abs(d[1]) > radius:
                continue
            dd = wp.dot(d, d)
            if dd < r2:
                dropped += _cache_insert(x, xb, i, j, dd, slots, cache, cache_n, cb, nb)
                dropped += _cache_insert(x, xb, j, i, dd, slots, cache, cache_n, cb, nb)
    return dropped


@wp.kernel
def _relax_kernel(
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    sep_relax: wp.array(dtype=wp.float32),
    spc_relax: wp.array(dtype=wp.float32),
    bend_relax: wp.array(dtype=wp.float32),
    omegas: wp.array(dtype=wp.float32),
    hw: float,
    converge_tol: float,
    margin: float,
    fixed_band: int,
    iters: int,
    sep_every: int,
    slots: int,
    skin: float,
    cheby_start: int,
    gamma: float,
    smooth_passes: int,
    spacing_iters: int,
    n_max: int,
    num_envs: int,
    beads: wp.array(dtype=wp.vec2f),
    work: wp.array(dtype=wp.vec2f),
    cache: wp.array(dtype=wp.int32),
    cache_n: wp.array(dtype=wp.int32),
    overflow_out: wp.array(dtype=wp.int32),
    sweeps_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    n = count[e]
    overflow_out[e] = 0
    sweeps_out[e] = 0
    if n < 4:
        return
    base = e * n_max
    plane = num_envs * n_max
    # slot s of this env's chain lives at work[s*plane + base + i]
    for i in range(n):
        work[base + i] = beads[base + i]
    L0 = float(closed_length(beads, base, n)) / float(n)
    band = band_for(hw, L0, fixed_band, n)
    target = 2.0 * hw * (1.0 + margin)
    target2 = target * target
    r_min = hw * (1.0 + margin)
    sr = sep_relax[e]
    pr = spc_relax[e]
    br = bend_relax[e]
    cb = e * n_max * slots
    cur = int(0)
    nxt = int(1)
    prv = int(2)
    dropped = int(0)
    done = int(0)
    for k in range(iters):
        if done == 0:
            xc = cur * plane + base
            xn = nxt * plane + base
            if slots > 0 and k % sep_every == 0:
                dropped += _rebuild_cache(
                    work, xc, n, band, target * (1.0 + skin), slots, cache, cache_n, cb, base
                )
            move2 = float(0.0)
            for i in range(n):
                xi = work[xc + i]
                xm = work[xc + (i + n - 1) % n]
                xp = work[xc + (i + 1) % n]
                sep = wp.vec2f(0.0, 0.0)
                hits = int(0)
                if slots > 0:
                    for c in range(cache_n[base + i]):
                        d = xi - work[xc + cache[cb + i * slots + c]]
                        dd = wp.dot(d, d)
                        if dd < target2 and dd > 1.0e-24:
                            dl = wp.sqrt(dd)
                            sep += (0.5 * (target - dl) / dl) * d
                            hits += 1
                else:
                    for j in range(n):
                        if index_gap(i, j, n) > band:
                            d = xi - work[xc + j]
                            dd = wp.dot(d, d)
                            if dd < target2 and dd > 1.0e-24:
                                dl = wp.sqrt(dd)
                                sep += (0.5 * (target - dl) / dl) * d
                                hits += 1
                if hits > 0:
                    sep = sep / float(hits)
                spc = spacing_step(xm, xi, xp, L0)
                dn = xp - xi
                dp = xi - xm
                # bending: Menger radius 1/kappa below r_min, tested without a square root:
                # kappa * r_min > 1  <=>  (2 |cross| r_min)^2 > |a|^2 |b|^2 |c|^2
                cr = 2.0 * r_min * cross2(xi - xm, xp - xm)
                la2 = wp.dot(dp, dp)
                lb2 = wp.dot(dn, dn)
                xpm = xp - xm
                lc2 = wp.dot(xpm, xpm)
                factor = float(0.0)
                if cr * cr > la2 * lb2 * lc2:
                    rk = r_min * menger_curvature(xm, xi, xp)  # r_min / radius
                    if rk > 1.0:
                        factor = wp.min(br * (1.0 - 1.0 / rk), 1.0)
                mid = 0.5 * (xm + xp)
                step = sr * sep + pr * spc + factor * (mid - xi)
                move2 = wp.max(move2, wp.dot(step, step))
                work[xn + i] = xi + step
            sweeps_out[e] = k + 1
            if move2 <= converge_tol * converge_tol:
                done = 1
            else:
                if k >= cheby_start and omegas[k] != 1.0:
                    xv = prv * plane + base
                    w = omegas[k]
                    for i in range(n):
                        xcur = work[xc + i]
                        xold = work[xv + i]
                        work[xn + i] = w * (gamma * (work[xn + i] - xcur) + (xcur - xold)) + xold
                elif k >= cheby_start:
                    for i in range(n):
                        xcur = work[xc + i]
                        work[xn + i] = xcur + gamma * (work[xn + i] - xcur)
                t = prv
                prv = cur
                cur = nxt
                nxt = t
    # smoothing tail: Taubin passes, then spacing-only sweeps (Jacobi between two slots)
    n_tail = 2 * smooth_passes + spacing_iters
    for p in range(n_tail):
        xc = cur * plane + base
        xn = nxt * plane + base
        for i in range(n):
            xi = work[xc + i]
            xm = work[xc + (i + n - 1) % n]
            xp = work[xc + (i + 1) % n]
            if p < 2 * smooth_passes:
                lam = TAUBIN_LAMBDA
                if p % 2 == 1:
                    lam = TAUBIN_MU
                work[xn + i] = xi + lam * (0.5 * (xm + xp) - xi)
            else:
                work[xn + i] = xi + spacing_step(xm, xi, xp, L0)
        t = cur
        cur = nxt
        nxt = t
    xc = cur * plane + base
    for i in range(n):
        beads[base + i] = work[xc + i]
    overflow_out[e] = dropped


def chebyshev_omegas(iters: int, start: int, rho: float, accel: str) -> np.ndarray:
    """Per-sweep blend weights: 1 before ``start`` (plain Jacobi), then the Chebyshev
    recurrence ``w = 1, 2/(2 - rho^2), 4/(4 - rho^2 w), ...``."""
    w = np.ones(iters, dtype=np.float64)
    if accel == "chebyshev":
        omega = 1.0
        for k in range(start, iters):
            if k == start:
                omega = 1.0
            elif k == start + 1:
                omega = 2.0 / (2.0 - rho * rho)
            else:
                omega = 4.0 / (4.0 - rho * rho * omega)
            w[k] = omega
    return w.astype(np.float32)


ENABLE = Tunable(
    "relax_enable",
    True,
    doc="False leaves the relax stage out of the preset: the resampled loop is inflated as is.",
)
ITERS = Tunable(
    "iters",
    100,
    lo=1,
    hi=10000,
    config="relax_iters",
    unit="sweeps",
    doc="most Jacobi sweeps; most envs converge in 20 to 40 (diagnostics['relax.sweeps']).",
)
CONVERGE_TOL = Tunable(
    "converge_tol",
    0.005,
    lo=0.0,
    hi=0.1,
    config="relax_converge_tol",
    unit="half widths",
    doc="an env stops once a sweep moves no bead farther than tol * half_width; 0 runs every "
    "sweep.",
)
ACCEL = Tunable(
    "accel",
    "chebyshev",
    choices=("chebyshev", "none"),
    config="relax_accel",
    doc="Chebyshev semi-iterative acceleration of the sweeps, or none.",
)
CHEBY_RHO = Tunable(
    "cheby_rho",
    0.98,
    lo=0.0,
    hi=1.0,
    hi_open=True,
    config="relax_cheby_rho",
    doc="spectral radius estimate of the Chebyshev recurrence.",
)
CHEBY_GAMMA = Tunable(
    "cheby_gamma",
    0.9,
    lo=0.0,
    hi=1.0,
    lo_open=True,
    config="relax_cheby_gamma",
    doc="under-relaxation of the accelerated blend.",
)
CHEBY_START = Tunable(
    "cheby_start",
    8,
    lo=1,
    hi=10000,
    config="relax_cheby_start",
    unit="sweeps",
    doc="first accelerated sweep.",
)
MARGIN = Tunable(
    "margin",
    0.15,
    lo=0.0,
    hi=1.0,
    config="relax_margin",
    unit="half widths",
    doc="separation target 2 * hw * (1 + margin) and radius floor hw * (1 + margin).",
)
BAND = Tunable(
    "band",
    None,
    kind="int",
    lo=1,
    hi=16384,
    optional=True,
    config="relax_band",
    unit="beads",
    doc="index band excluded from separation and thickness; None is max(round(2 * hw / L0), "
    "1) per env (L0 the mean bead spacing).",
)
SEP_EVERY = Tunable(
    "sep_every",
    20,
    lo=1,
    hi=10000,
    config="relax_sep_every",
    unit="sweeps",
    doc="sweeps between separation-cache refreshes (1: no cache, a dense search every sweep).",
)
SEP_CACHE_SLOTS = Tunable(
    "sep_cache_slots",
    16,
    lo=0,
    hi=64,
    config="relax_sep_cache_slots",
    unit="candidates",
    doc="cached neighbour candidates per bead (0: a dense O(n^2) separation every sweep); "
    "the ones left out are counted in diagnostics['relax.sep_overflow'].",
)
SEP_CACHE_SKIN = Tunable(
    "sep_cache_skin",
    0.25,
    lo=0.0,
    hi=10.0,
    config="relax_sep_cache_skin",
    unit="targets",
    doc="cache radius is target * (1 + skin).",
)
SEP_RELAX = Tunable(
    "sep_relax",
    1.0,
    lo=0.0,
    hi=2.0,
    dynamic=True,
    config="relax_sep_relax",
    doc="separation correction scale.",
)
SPC_RELAX = Tunable(
    "spc_relax",
    1.0,
    lo=0.0,
    hi=2.0,
    dynamic=True,
    config="relax_spc_relax",
    doc="spacing correction scale.",
)
BEND_RELAX = Tunable(
    "bend_relax",
    1.5,
    lo=0.0,
    hi=2.0,
    dynamic=True,
    config="relax_bend_relax",
    doc="bending correction scale.",
)
SMOOTH_PASSES = Tunable(
    "smooth_passes",
    5,
    lo=0,
    hi=1000,
    config="relax_smooth_passes",
    unit="passes",
    doc="Taubin smoothing passes after the solve.",
)
SMOOTH_SPACING_ITERS = Tunable(
    "smooth_spacing_iters",
    10,
    lo=0,
    hi=1000,
    config="relax_smooth_spacing_iters",
    unit="sweeps",
    doc="spacing-only polish sweeps after the smoothing.",
)


class RelaxPBD(Stage):
    """Position-based bead-chain relaxation (``"relax"``), in place on ``ws.beads``.

    Constraints are projected with relaxation factors (no compliance, so not XPBD proper).

    Diagnostics: ``relax.sep_overflow`` (int32 ``[E]``: separation candidates dropped by
    a full cache this call; raise ``relax_sep_cache_slots`` when nonzero) and
    ``relax.sweeps`` (int32 ``[E]``: sweeps run before the env converged).
    """

    FIELDS = (
        HALF_WIDTH,
        ITERS,
        CONVERGE_TOL,
        ACCEL,
        CHEBY_RHO,
        CHEBY_GAMMA,
        CHEBY_START,
        MARGIN,
        BAND,
        SEP_EVERY,
        SEP_CACHE_SLOTS,
        SEP_CACHE_SKIN,
        SEP_RELAX,
        SPC_RELAX,
        BEND_RELAX,
        SMOOTH_PASSES,
        SMOOTH_SPACING_ITERS,
    )

    def allocate(self, ws: Workspace) -> None:
        v, lay, name = self.values, ws.layout, self.name
        E = lay.num_envs
        slots = v.sep_cache_slots if v.sep_every > 1 else 0
        self.slots = slots
        self.work = ws.zeros(3 * E * lay.N_max, wp.vec2f, f"{name} work chains")
        self.cache = ws.zeros(E * lay.N_max * slots, wp.int32, f"{name} separation cache")
        self.cache_n = ws.zeros(E * lay.N_max, wp.int32, f"{name} cache counts")
        self.overflow = ws.zeros(E, wp.int32, f"{name} overflow")
        self.sweeps = ws.zeros(E, wp.int32, f"{name} sweeps")
        self.omegas = ws.budget.array(
            chebyshev_omegas(v.iters, v.cheby_start, v.cheby_rho, v.accel),
            wp.float32,
            f"{name} Chebyshev weights",
        )
        ws.diagnostics[f"{name}.sep_overflow"] = self.overflow
        ws.diagnostics[f"{name}.sweeps"] = self.sweeps

    def enqueue(self, ws: Workspace, params: dict) -> None:
        v, lay = self.values, ws.layout
        gamma = v.cheby_gamma if v.accel == "chebyshev" else 1.0
        start = v.cheby_start if v.accel == "chebyshev" else v.iters
        wp.launch(
            _relax_kernel,
            lay.num_envs,
            inputs=[
                ws.active,
                ws.count,
                params["sep_relax"],
                params["spc_relax"],
                params["bend_relax"],
                self.omegas,
                float(v.half_width),
                float(v.converge_tol * v.half_width),
                float(v.margin),
                int(v.band or 0),
                v.iters,
                max(v.sep_every, 1),
                self.slots,
                float(v.sep_cache_skin),
                start,
                float(gamma),
                v.smooth_passes,
                v.smooth_spacing_iters,
                lay.N_max,
                lay.num_envs,
            ],
            outputs=[ws.beads, self.work, self.cache, self.cache_n, self.overflow, self.sweeps],
            device=lay.device,
        )
