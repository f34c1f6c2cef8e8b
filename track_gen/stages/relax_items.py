"""The ``per_item`` thread layout of the relaxation (``stages/relax.py``): one thread per bead,
a fixed sequence of launches per sweep, per-env decisions through integer flags.

The float arithmetic is the shared per-bead code of :mod:`.relax_bead`, called in the same
order as the ``per_env`` kernel, so both layouts give bitwise-identical beads and diagnostics.
"""

from __future__ import annotations

import warp as wp

from ..geometry import closed_length
from .relax_bead import (
    BLOCK,
    band_for,
    begin_env,
    blend_mode,
    block_box,
    block_out_of_reach,
    cache_insert,
    cache_radius,
    candidate_dd,
    index_gap,
    sep_target,
    sweep_bead,
    tail_position,
)

# fuse_fp off: no multiply-add contraction (CUDA would otherwise fuse differently in the two
# layouts' kernels); every float op rounds on its own, so per_env == per_item on every device.
wp.set_module_options({"enable_backward": False, "fuse_fp": False})


# ------------------------------------------------------------------------ per_item layout
#: Per-env state of the per_item sweeps (``RelaxItems.state``).
ENV_RUNNING = wp.constant(0)
ENV_CONVERGED = wp.constant(1)
ENV_SKIPPED = wp.constant(2)  # inactive this call, or fewer than 4 beads


@wp.func
def slot_base(rot: int, shift: int, plane: int, base: int) -> int:
    """Offset of an env's chain in work slot ``(rot + shift) % 3`` (the per_env kernel rotates
    current -> previous, next -> current, previous -> next once per unconverged sweep, so
    after ``rot`` rotations the current slot is ``rot % 3``, the next ``(rot + 1) % 3`` and the
    previous ``(rot + 2) % 3``)."""
    return ((rot + shift) % 3) * plane + base


@wp.kernel
def _items_begin_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    beads: wp.array(dtype=wp.vec2f),
    # static
    hw: float,
    fixed_band: int,
    n_max: int,
    # outputs
    state_out: wp.array(dtype=wp.int32),
    rot_out: wp.array(dtype=wp.int32),
    moved_out: wp.array(dtype=wp.int32),
    L0_out: wp.array(dtype=wp.float32),
    band_out: wp.array(dtype=wp.int32),
    overflow_out: wp.array(dtype=wp.int32),
    sweeps_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    state_out[e] = ENV_SKIPPED
    rot_out[e] = 0
    moved_out[e] = 0
    n = begin_env(active, count, e, overflow_out, sweeps_out)
    if n == 0:
        return
    L0 = float(closed_length(beads, e * n_max, n)) / float(n)
    L0_out[e] = L0
    band_out[e] = band_for(hw, L0, fixed_band, n)
    state_out[e] = ENV_RUNNING


@wp.kernel
def _items_copy_in_kernel(
    # inputs
    state: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    beads: wp.array(dtype=wp.vec2f),
    # static
    n_max: int,
    # outputs
    work_out: wp.array(dtype=wp.vec2f),
):
    e, i = wp.tid()
    if state[e] == ENV_SKIPPED or i >= count[e]:
        return
    work_out[e * n_max + i] = beads[e * n_max + i]


@wp.kernel
def _items_boxes_kernel(
    # inputs
    state: wp.array(dtype=wp.int32),
    rot: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    work: wp.array(dtype=wp.vec2f),
    # static
    n_max: int,
    num_envs: int,
    # outputs
    boxes_out: wp.array(dtype=wp.vec4f),
):
    e, b = wp.tid()
    n = count[e]
    if state[e] != ENV_RUNNING or b * BLOCK >= n:
        return
    xc = slot_base(rot[e], 0, num_envs * n_max, e * n_max)
    boxes_out[e * ((n_max + BLOCK - 1) // BLOCK) + b] = block_box(work, xc, n, b)


@wp.kernel
def _items_scan_kernel(
    # inputs
    state: wp.array(dtype=wp.int32),
    rot: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    band: wp.array(dtype=wp.int32),
    work: wp.array(dtype=wp.vec2f),
    boxes: wp.array(dtype=wp.vec4f),
    # static
    hw: float,
    margin: float,
    skin: float,
    slots: int,
    n_max: int,
    num_envs: int,
    # outputs
    cache_out: wp.array(dtype=wp.int32),
    cache_n_out: wp.array(dtype=wp.int32),
    overflow_inout: wp.array(dtype=wp.int32),  # dropped candidates are added
):
    e, i = wp.tid()
    n = count[e]
    if state[e] != ENV_RUNNING or i >= n:
        return
    base = e * n_max
    xc = slot_base(rot[e], 0, num_envs * n_max, base)
    bb = e * ((n_max + BLOCK - 1) // BLOCK)
    # bead i's separation list alone: beads j outside the index band within the cache
    # radius, entered in increasing j (cache_insert), blocks beyond the radius skipped
    radius = cache_radius(hw, margin, skin)
    r2 = radius * radius
    cb = base * slots
    b_i = band[e]
    xi = work[xc + i]
    cache_n_out[base + i] = 0
    dropped = int(0)
    for b in range((n + BLOCK - 1) // BLOCK):
        if not block_out_of_reach(boxes[bb + b], xi, radius):
            for j in range(b * BLOCK, wp.min((b + 1) * BLOCK, n)):
                if index_gap(i, j, n) > b_i:
                    dd = candidate_dd(work[xc + j] - xi, radius)
                    if dd >= 0.0 and dd < r2:
                        dropped += cache_insert(
                            work, xc, i, j, dd, slots, cache_out, cache_n_out, cb, base
                        )
    if dropped > 0:
        wp.atomic_add(overflow_inout, e, dropped)


@wp.kernel
def _items_sweep_kernel(
    # inputs
    state: wp.array(dtype=wp.int32),
    rot: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    band: wp.array(dtype=wp.int32),
    L0: wp.array(dtype=wp.float32),
    omegas: wp.array(dtype=wp.float32),
    cache: wp.array(dtype=wp.int32),
    cache_n: wp.array(dtype=wp.int32),
    # parameters
    sep_relax: wp.array(dtype=wp.float32),
    spc_relax: wp.array(dtype=wp.float32),
    bend_relax: wp.array(dtype=wp.float32),
    # static
    k: int,
    hw: float,
    converge_tol: float,
    margin: float,
    slots: int,
    cheby_start: int,
    gamma: float,
    n_max: int,
    num_envs: int,
    # outputs
    work_inout: wp.array(dtype=wp.vec2f),  # reads the current slot, writes the next one
    moved_out: wp.array(dtype=wp.int32),
):
    e, i = wp.tid()
    n = count[e]
    if state[e] != ENV_RUNNING or i >= n:
        return
    base = e * n_max
    plane = num_envs * n_max
    r = rot[e]
    xc = slot_base(r, 0, plane, base)
    target = sep_target(hw, margin)
    target2 = target * target
    r_min = hw * (1.0 + margin)
    xi = work_inout[xc + i]
    xm = work_inout[xc + (i + n - 1) % n]
    xp = work_inout[xc + (i + 1) % n]
    omega = omegas[k]
    xnew, step2 = sweep_bead(
        work_inout, xc, slot_base(r, 2, plane, base), i, n, xm, xi, xp, band[e], slots, cache,
        cache_n, base * slots, base, target, target2, L0[e], r_min, sep_relax[e],
        spc_relax[e], bend_relax[e], blend_mode(k, cheby_start, omega), omega, gamma,
    )  # fmt: skip
    if step2 > converge_tol * converge_tol:
        wp.atomic_max(moved_out, e, 1)
    work_inout[slot_base(r, 1, plane, base) + i] = xnew


@wp.kernel
def _items_end_sweep_kernel(
    # static
    k: int,
    # outputs
    state_inout: wp.array(dtype=wp.int32),
    rot_inout: wp.array(dtype=wp.int32),
    moved_inout: wp.array(dtype=wp.int32),
    sweeps_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if state_inout[e] != ENV_RUNNING:
        return
    sweeps_out[e] = k + 1
    if moved_inout[e] == 0:
        state_inout[e] = ENV_CONVERGED  # keep the current iterate
    else:
        rot_inout[e] = rot_inout[e] + 1
    moved_inout[e] = 0


@wp.kernel
def _items_tail_kernel(
    # inputs
    state: wp.array(dtype=wp.int32),
    rot: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    L0: wp.array(dtype=wp.float32),
    # static
    p: int,
    smooth_passes: int,
    n_max: int,
    num_envs: int,
    # outputs
    work_inout: wp.array(dtype=wp.vec2f),  # reads one slot, writes the other
):
    e, i = wp.tid()
    n = count[e]
    if state[e] == ENV_SKIPPED or i >= n:
        return
    base = e * n_max
    plane = num_envs * n_max
    # the tail ping-pongs between the current slot (even passes read it) and the next one
    xc = slot_base(rot[e], p % 2, plane, base)
    xn = slot_base(rot[e], 1 - p % 2, plane, base)
    xi = work_inout[xc + i]
    xm = work_inout[xc + (i + n - 1) % n]
    xp = work_inout[xc + (i + 1) % n]
    work_inout[xn + i] = tail_position(p, smooth_passes, xm, xi, xp, L0[e])


@wp.kernel
def _items_copy_out_kernel(
    # inputs
    state: wp.array(dtype=wp.int32),
    rot: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    work: wp.array(dtype=wp.vec2f),
    # static
    shift: int,
    n_max: int,
    num_envs: int,
    # outputs
    beads_out: wp.array(dtype=wp.vec2f),
):
    e, i = wp.tid()
    if state[e] == ENV_SKIPPED or i >= count[e]:
        return
    base = e * n_max
    beads_out[base + i] = work[slot_base(rot[e], shift, num_envs * n_max, base) + i]


class RelaxItems:
    """Scratch and launches of the relaxation's per_item layout (one thread per bead, a
    fixed sequence of launches per sweep: no host reads, safe to record into a graph).

    Per-env decisions use integer state only: beads that moved farther than the tolerance set
    ``moved[e]`` with an int32 ``atomic_max``, dropped cache candidates are summed with an
    int32 ``atomic_add`` (both order-independent), and one thread per env closes each sweep.

    Attributes:
        state: int32 ``[E]``: ENV_RUNNING, ENV_CONVERGED or ENV_SKIPPED.
        rot: int32 ``[E]``: work-slot rotations so far (:func:`slot_base`).
        moved: int32 ``[E]``: 1 when a bead of the env moved past the tolerance this sweep.
        L0: float32 ``[E]``: rest length (perimeter / count, track units).
        band: int32 ``[E]``: index band (:func:`band_for`).
    """

    def __init__(self, ws, name: str):
        E = ws.layout.num_envs
        self.state = ws.zeros(E, wp.int32, f"{name} per_item state")
        self.rot = ws.zeros(E, wp.int32, f"{name} per_item rotations")
        self.moved = ws.zeros(E, wp.int32, f"{name} per_item moved flags")
        self.L0 = ws.zeros(E, wp.float32, f"{name} per_item rest lengths")
        self.band = ws.zeros(E, wp.int32, f"{name} per_item bands")

    def enqueue(self, stage, ws, params: dict, s: dict) -> None:
        """Launch every sweep of ``stage`` (a RelaxPBD) over ``ws.beads``; ``s`` holds the
        scalar settings the per_env kernel takes (same names)."""
        lay = ws.layout
        E, n_max, dev = lay.num_envs, lay.N_max, lay.device
        beads_dim = (E, n_max)
        launch = wp.launch
        launch(
            _items_begin_kernel,
            E,
            inputs=[ws.active, ws.count, ws.beads, s["hw"], s["fixed_band"], n_max],
            outputs=[
                self.state,
                self.rot,
                self.moved,
                self.L0,
                self.band,
                stage.overflow,
                stage.sweeps,
            ],
            device=dev,
        )
        launch(
            _items_copy_in_kernel,
            beads_dim,
            inputs=[self.state, ws.count, ws.beads, n_max],
            outputs=[stage.work],
            device=dev,
        )
        chains = [self.state, self.rot, ws.count]  # the first inputs of the per-bead kernels
        slots = stage.slots
        for k in range(s["iters"]):
            if slots > 0 and k % s["sep_every"] == 0:
                launch(
                    _items_boxes_kernel,
                    (E, -(-n_max // BLOCK)),
                    inputs=[*chains, stage.work, n_max, E],
                    outputs=[stage.boxes],
                    device=dev,
                )
                launch(
                    _items_scan_kernel,
                    beads_dim,
                    inputs=[
                        *chains,
                        self.band,
                        stage.work,
                        stage.boxes,
                        s["hw"],
                        s["margin"],
                        s["skin"],
                        slots,
                        n_max,
                        E,
                    ],
                    outputs=[stage.cache, stage.cache_n, stage.overflow],
                    device=dev,
                )
            launch(
                _items_sweep_kernel,
                beads_dim,
                inputs=[
                    *chains,
                    self.band,
                    self.L0,
                    stage.omegas,
                    stage.cache,
                    stage.cache_n,
                    params["sep_relax"],
                    params["spc_relax"],
                    params["bend_relax"],
                    k,
                    s["hw"],
                    s["converge_tol"],
                    s["margin"],
                    slots,
                    s["cheby_start"],
                    s["gamma"],
                    n_max,
                    E,
                ],
                outputs=[stage.work, self.moved],
                device=dev,
            )
            launch(
                _items_end_sweep_kernel,
                E,
                inputs=[k],
                outputs=[self.state, self.rot, self.moved, stage.sweeps],
                device=dev,
            )
        n_tail = 2 * s["smooth_passes"] + s["spacing_iters"]
        for p in range(n_tail):
            launch(
                _items_tail_kernel,
                beads_dim,
                inputs=[*chains, self.L0, p, s["smooth_passes"], n_max, E],
                outputs=[stage.work],
                device=dev,
            )
        launch(
            _items_copy_out_kernel,
            beads_dim,
            inputs=[*chains, stage.work, n_tail % 2, n_max, E],
            outputs=[ws.beads],
            device=dev,
        )
