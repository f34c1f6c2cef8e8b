"""Position-based relaxation: bead-chain Jacobi sweeps that make a loop thick enough for its
road (PBD constraint projection with relaxation factors; no compliance).

Each sweep moves every bead of an env at once (Jacobi):

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
its current iterate is kept). A Taubin smoothing tail and spacing-only polish sweeps follow.

Two thread layouts (``kernel_layout``) give bitwise-identical beads and diagnostics:
``per_env`` (this module's kernel: one thread per env runs every sweep, with a per-env early
exit; suits the single-threaded CPU backend) and ``per_item`` (``relax_items.py``: one thread
per bead, a fixed sequence of launches per sweep; fills a GPU). The per-bead arithmetic of
both is the same ``@wp.func`` code in ``relax_bead.py``.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ..core.layout import PER_ITEM
from ..core.tunable import Tunable
from ..engine.stage import N_MAX, N_MAX_HI, Stage, Workspace
from ..geometry import closed_length
from .inflate import HALF_WIDTH
from .relax_bead import (
    BLOCK,
    band_for,
    begin_env,
    blend_mode,
    block_boxes,
    cache_radius,
    index_gap,
    next_bead,
    rebuild_pairwise,
    sep_target,
    sweep_bead,
    tail_position,
)
from .relax_items import RelaxItems

# fuse_fp off: no multiply-add contraction (CUDA would otherwise fuse differently in the two
# layouts' kernels); every float op rounds on its own, so per_env == per_item on every device.
wp.set_module_options({"enable_backward": False, "fuse_fp": False})

__all__ = ["BAND", "RelaxPBD", "band_for", "chebyshev_omegas", "index_gap"]


@wp.kernel
def _relax_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    omegas: wp.array(dtype=wp.float32),
    # parameters
    sep_relax: wp.array(dtype=wp.float32),
    spc_relax: wp.array(dtype=wp.float32),
    bend_relax: wp.array(dtype=wp.float32),
    # static
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
    # scratch
    work: wp.array(dtype=wp.vec2f),
    boxes: wp.array(dtype=wp.vec4f),
    cache: wp.array(dtype=wp.int32),
    cache_n: wp.array(dtype=wp.int32),
    # outputs
    beads_inout: wp.array(dtype=wp.vec2f),
    overflow_out: wp.array(dtype=wp.int32),
    sweeps_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    n = begin_env(active, count, e, overflow_out, sweeps_out)
    if n == 0:
        return
    base = e * n_max
    plane = num_envs * n_max
    # slot s of this env's chain lives at work[s*plane + base + i]
    for i in range(n):
        work[base + i] = beads_inout[base + i]
    L0 = float(closed_length(beads_inout, base, n)) / float(n)
    band = band_for(hw, L0, fixed_band, n)
    target = sep_target(hw, margin)
    target2 = target * target
    radius = cache_radius(hw, margin, skin)
    r_min = hw * (1.0 + margin)
    sr = sep_relax[e]
    pr = spc_relax[e]
    br = bend_relax[e]
    cb = e * n_max * slots
    bb = e * ((n_max + BLOCK - 1) // BLOCK)
    cur = int(0)
    nxt = int(1)
    prv = int(2)
    dropped = int(0)
    k = int(0)
    while k < iters:
        xc = cur * plane + base
        xn = nxt * plane + base
        xv = prv * plane + base
        if slots > 0 and k % sep_every == 0:
            block_boxes(work, xc, n, boxes, bb)
            dropped += rebuild_pairwise(
                work, xc, n, band, radius, slots, boxes, bb, cache, cache_n, cb, base
            )
        omega = omegas[k]
        mode = blend_mode(k, cheby_start, omega)
        moved = int(0)  # a bead moved farther than the tolerance (NaN steps never count)
        # xm, xi, xp roll along the chain: bead i-1, i, i+1 of the current iterate
        x0 = work[xc]
        xm = work[xc + n - 1]
        xi = x0
        for i in range(n):
            xp = next_bead(work, xc, i, n, x0)
            # a converged sweep's new iterate is never used: blending it too is harmless
            xnew, step2 = sweep_bead(
                work, xc, xv, i, n, xm, xi, xp, band, slots, cache, cache_n, cb, base,
                target, target2, L0, r_min, sr, pr, br, mode, omega, gamma,
            )  # fmt: skip
            if step2 > converge_tol * converge_tol:
                moved = 1
            work[xn + i] = xnew
            xm = xi
            xi = xp
        sweeps_out[e] = k + 1
        if moved == 0:
            break  # converged: keep the current iterate
        t = prv
        prv = cur
        cur = nxt
        nxt = t
        k += 1
    # smoothing tail: Taubin passes, then spacing-only sweeps (Jacobi between two slots)
    n_tail = 2 * smooth_passes + spacing_iters
    for p in range(n_tail):
        xc = cur * plane + base
        xn = nxt * plane + base
        x0 = work[xc]
        xm = work[xc + n - 1]
        xi = x0
        for i in range(n):
            xp = next_bead(work, xc, i, n, x0)
            work[xn + i] = tail_position(p, smooth_passes, xm, xi, xp, L0)
            xm = xi
            xi = xp
        t = cur
        cur = nxt
        nxt = t
    xc = cur * plane + base
    for i in range(n):
        beads_inout[base + i] = work[xc + i]
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
#: Most bead-sweeps (relax_iters x N_max) one env's relaxation may take: about 0.6 s on a
#: loaded 2-core CPU (0.57 us per bead and sweep, benchmarks/work_bounds.py).
SWEEP_WORK_HI = 2**20


def _sweeps_fit(iters: int, lookup) -> str | None:
    n_max = lookup(N_MAX)
    if n_max is None or iters * n_max <= SWEEP_WORK_HI:
        return None
    return (
        f"relax_iters x N_max = {iters} x {n_max} = {iters * n_max:,} bead-sweeps, above "
        f"{SWEEP_WORK_HI:,} (about 0.6 s per env on a 2-core CPU): lower relax_iters to "
        f"<= {SWEEP_WORK_HI // n_max} or N_max"
    )


ITERS = Tunable(
    "iters",
    100,
    lo=1,
    hi=10000,
    config="relax_iters",
    unit="sweeps",
    rule=_sweeps_fit,
    doc="most Jacobi sweeps; most envs converge in 20 to 40 (diagnostics['relax.sweeps']); "
    "relax_iters x N_max <= 2**20 bead-sweeps (about 0.6 s per env on a 2-core CPU).",
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
    lo=1.0e-6,
    hi=1.0,
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
    hi=N_MAX_HI,
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

    families = ("track",)
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
        self.boxes = ws.zeros(
            E * -(-lay.N_max // BLOCK) if slots else 0, wp.vec4f, f"{name} block boxes"
        )
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
        self._settings = self.settings()
        self.items = RelaxItems(ws, name) if lay.kernel_layout == PER_ITEM else None

    def settings(self) -> dict:
        """The scalar kernel arguments of both layouts, by kernel parameter name."""
        v = self.values
        cheby = v.accel == "chebyshev"
        return dict(
            hw=float(v.half_width),
            converge_tol=float(v.converge_tol * v.half_width),
            margin=float(v.margin),
            fixed_band=int(v.band or 0),
            iters=v.iters,
            sep_every=max(v.sep_every, 1),
            slots=self.slots,
            skin=float(v.sep_cache_skin),
            cheby_start=v.cheby_start if cheby else v.iters,
            gamma=float(v.cheby_gamma if cheby else 1.0),
            smooth_passes=v.smooth_passes,
            spacing_iters=v.smooth_spacing_iters,
        )

    def enqueue(self, ws: Workspace, params: dict) -> None:
        lay, s = ws.layout, self._settings
        if self.items is not None:
            self.items.enqueue(self, ws, params, s)
            return
        wp.launch(
            _relax_kernel,
            lay.num_envs,
            inputs=[
                ws.active,
                ws.count,
                self.omegas,
                params["sep_relax"],
                params["spc_relax"],
                params["bend_relax"],
                *s.values(),
                lay.N_max,
                lay.num_envs,
                self.work,
                self.boxes,
                self.cache,
                self.cache_n,
            ],
            outputs=[ws.beads, self.overflow, self.sweeps],
            device=lay.device,
        )
