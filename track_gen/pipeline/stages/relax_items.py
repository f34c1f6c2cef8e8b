"""Per-bead arithmetic of the relaxation (``stages/relax.py``), shared by its two thread
layouts, and the ``per_item`` layout itself (one thread per bead).

Every float operation of a sweep lives in a ``@wp.func`` here (separation, spacing, bending,
Chebyshev blend, Taubin tail, the separation-cache scan of one bead); the ``per_env`` kernel in
``relax.py`` and the ``per_item`` kernels below call the same functions in the same order, so
the two layouts give bitwise-identical beads, diagnostics included.

The separation cache of bead ``i`` receives its candidates ``j`` in increasing index order,
each one added, or replacing the list's farthest entry when the list is full and ``j`` is
nearer (:func:`scan_candidates`). Both searches skip whole blocks of ``BLOCK`` consecutive
beads whose bounding box lies beyond the cache radius of bead ``i`` on some axis, which changes
how many pairs are tested, never the lists.
"""

from __future__ import annotations

import warp as wp

from ...geometry import closed_length, cross2, menger_curvature

# fuse_fp off: no multiply-add contraction (CUDA would otherwise fuse differently in the two
# layouts' kernels); every float op rounds on its own, so per_env == per_item on every device.
wp.set_module_options({"enable_backward": False, "fuse_fp": False})

TAUBIN_LAMBDA = wp.constant(0.5)
TAUBIN_MU = wp.constant(-0.53)
#: Beads per block of the separation-cache search (one bounding box per block).
BLOCK = wp.constant(8)

#: Chebyshev blend of a sweep (:func:`blend_mode`).
BLEND_NONE = wp.constant(0)
BLEND_DAMP = wp.constant(1)
BLEND_CHEBY = wp.constant(2)


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
def sep_target(hw: float, margin: float) -> float:
    """Separation target distance ``2 * hw * (1 + margin)``."""
    return 2.0 * hw * (1.0 + margin)


@wp.func
def cache_radius(hw: float, margin: float, skin: float) -> float:
    """Separation-cache radius ``target * (1 + skin)``."""
    return sep_target(hw, margin) * (1.0 + skin)


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
def block_boxes(
    x: wp.array(dtype=wp.vec2f), xb: int, n: int, boxes_out: wp.array(dtype=wp.vec4f), bb: int
):
    """Bounding box (min x, min y, max x, max y) of each run of BLOCK consecutive beads of the
    chain ``x[xb : xb + n]``, into ``boxes_out[bb + i // BLOCK]``."""
    for b in range((n + BLOCK - 1) // BLOCK):
        boxes_out[bb + b] = block_box(x, xb, n, b)


@wp.func
def block_box(x: wp.array(dtype=wp.vec2f), xb: int, n: int, b: int) -> wp.vec4f:
    """Bounding box of beads ``b * BLOCK .. min((b + 1) * BLOCK, n) - 1``."""
    p = x[xb + b * BLOCK]
    lo = p
    hi = p
    for j in range(b * BLOCK + 1, wp.min((b + 1) * BLOCK, n)):
        p = x[xb + j]
        lo = wp.min(lo, p)
        hi = wp.max(hi, p)
    return wp.vec4f(lo[0], lo[1], hi[0], hi[1])


@wp.func
def block_out_of_reach(box: wp.vec4f, xi: wp.vec2f, radius: float) -> bool:
    """True when every bead of the block fails the candidate box test ``|x_j - xi| > radius``
    on some axis (rounding is monotonic, so the test on the box bounds is exact)."""
    return (
        box[0] - xi[0] > radius
        or xi[0] - box[2] > radius
        or box[1] - xi[1] > radius
        or xi[1] - box[3] > radius
    )


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
def _candidate_dd(d: wp.vec2f, radius: float) -> float:
    """Squared length of ``d``, or -1 when ``d`` fails the box test ``|d| > radius``."""
    if wp.abs(d[0]) > radius or wp.abs(d[1]) > radius:
        return -1.0
    return wp.dot(d, d)


@wp.func
def rebuild_pairwise(
    x: wp.array(dtype=wp.vec2f),
    xb: int,
    n: int,
    band: int,
    radius: float,
    slots: int,
    boxes: wp.array(dtype=wp.vec4f),
    bb: int,
    cache: wp.array(dtype=wp.int32),
    cache_n: wp.array(dtype=wp.int32),
    cb: int,
    nb: int,
) -> int:
    """Rebuild every bead's separation list of one env (``boxes``: :func:`block_boxes` of
    ``x``), testing each pair once and entering it in both lists: bead i's list still receives
    its candidates in increasing index order, so the lists equal :func:`scan_candidates` run
    for every bead. Returns the candidates left out."""
    dropped = int(0)
    r2 = radius * radius
    for i in range(n):
        cache_n[nb + i] = 0
    for i in range(n):
        xi = x[xb + i]
        j = i + band + 1
        j_end = wp.min(n, i + n - band)  # j >= j_end wraps around into the band
        while j < j_end:
            b = j // BLOCK
            b_end = wp.min((b + 1) * BLOCK, j_end)
            if not block_out_of_reach(boxes[bb + b], xi, radius):
                for jj in range(j, b_end):
                    dd = _candidate_dd(x[xb + jj] - xi, radius)
                    if dd >= 0.0 and dd < r2:
                        dropped += _cache_insert(x, xb, i, jj, dd, slots, cache, cache_n, cb, nb)
                        dropped += _cache_insert(x, xb, jj, i, dd, slots, cache, cache_n, cb, nb)
            j = b_end
    return dropped


@wp.func
def scan_candidates(
    x: wp.array(dtype=wp.vec2f),
    xb: int,
    n: int,
    i: int,
    band: int,
    radius: float,
    slots: int,
    boxes: wp.array(dtype=wp.vec4f),
    bb: int,
    cache: wp.array(dtype=wp.int32),
    cache_n: wp.array(dtype=wp.int32),
    cb: int,
    nb: int,
) -> int:
    """Rebuild bead i's separation list alone: beads j outside the index band within
    ``radius``, entered in increasing j (:func:`_cache_insert`). Returns the candidates left
    out."""
    cache_n[nb + i] = 0
    xi = x[xb + i]
    r2 = radius * radius
    dropped = int(0)
    for b in range((n + BLOCK - 1) // BLOCK):
        if not block_out_of_reach(boxes[bb + b], xi, radius):
            for j in range(b * BLOCK, wp.min((b + 1) * BLOCK, n)):
                if index_gap(i, j, n) > band:
                    dd = _candidate_dd(x[xb + j] - xi, radius)
                    if dd >= 0.0 and dd < r2:
                        dropped += _cache_insert(x, xb, i, j, dd, slots, cache, cache_n, cb, nb)
    return dropped


@wp.func
def separation_cached(
    x: wp.array(dtype=wp.vec2f),
    xc: int,
    xi: wp.vec2f,
    i: int,
    slots: int,
    cache: wp.array(dtype=wp.int32),
    cache_n: wp.array(dtype=wp.int32),
    cb: int,
    nb: int,
    target: float,
    target2: float,
) -> wp.vec2f:
    """Mean separation push of bead i from its cached candidates closer than ``target``."""
    sep = wp.vec2f(0.0, 0.0)
    hits = int(0)
    for c in range(cache_n[nb + i]):
        d = xi - x[xc + cache[cb + i * slots + c]]
        dd = wp.dot(d, d)
        if dd < target2 and dd > 1.0e-24:
            dl = wp.sqrt(dd)
            sep += (0.5 * (target - dl) / dl) * d
            hits += 1
    if hits > 0:
        sep = sep / float(hits)
    return sep


@wp.func
def separation_dense(
    x: wp.array(dtype=wp.vec2f),
    xc: int,
    xi: wp.vec2f,
    i: int,
    n: int,
    band: int,
    target: float,
    target2: float,
) -> wp.vec2f:
    """Mean separation push of bead i from every non-band bead closer than ``target``."""
    sep = wp.vec2f(0.0, 0.0)
    hits = int(0)
    for j in range(n):
        if index_gap(i, j, n) > band:
            d = xi - x[xc + j]
            dd = wp.dot(d, d)
            if dd < target2 and dd > 1.0e-24:
                dl = wp.sqrt(dd)
                sep += (0.5 * (target - dl) / dl) * d
                hits += 1
    if hits > 0:
        sep = sep / float(hits)
    return sep


@wp.func
def bead_step(
    xm: wp.vec2f,
    xi: wp.vec2f,
    xp: wp.vec2f,
    sep: wp.vec2f,
    L0: float,
    r_min: float,
    sr: float,
    pr: float,
    br: float,
) -> wp.vec2f:
    """The Jacobi correction of bead i: separation, spacing and bending, scaled."""
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
    return sr * sep + pr * spc + factor * (mid - xi)


@wp.func
def blend_mode(k: int, cheby_start: int, omega: float) -> int:
    """How sweep k's new iterate is blended: BLEND_NONE before ``cheby_start``, then
    BLEND_CHEBY (weight ``omega``) or BLEND_DAMP when ``omega`` is 1."""
    if k < cheby_start:
        return BLEND_NONE
    if omega != 1.0:
        return BLEND_CHEBY
    return BLEND_DAMP


@wp.func
def blend(
    mode: int, omega: float, gamma: float, xnew: wp.vec2f, xcur: wp.vec2f, xold: wp.vec2f
) -> wp.vec2f:
    """The accelerated iterate from the plain Jacobi one ``xnew``, the current ``xcur`` and
    the previous ``xold``."""
    if mode == BLEND_CHEBY:
        return omega * (gamma * (xnew - xcur) + (xcur - xold)) + xold
    if mode == BLEND_DAMP:
        return xcur + gamma * (xnew - xcur)
    return xnew


@wp.func
def tail_position(
    p: int, smooth_passes: int, xm: wp.vec2f, xi: wp.vec2f, xp: wp.vec2f, L0: float
) -> wp.vec2f:
    """Bead i after tail pass p: Taubin (lambda, mu alternating) for the first
    ``2 * smooth_passes`` passes, then spacing-only."""
    if p < 2 * smooth_passes:
        lam = TAUBIN_LAMBDA
        if p % 2 == 1:
            lam = TAUBIN_MU
        return xi + lam * (0.5 * (xm + xp) - xi)
    return xi + spacing_step(xm, xi, xp, L0)


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
    if active[e] == 0:
        return
    n = count[e]
    overflow_out[e] = 0
    sweeps_out[e] = 0
    if n < 4:
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
    hw: float,
    margin: float,
    skin: float,
    slots: int,
    n_max: int,
    num_envs: int,
    # outputs
    cache_out: wp.array(dtype=wp.int32),
    cache_n_out: wp.array(dtype=wp.int32),
    # in/out: dropped candidates are added
    overflow_inout: wp.array(dtype=wp.int32),
):
    e, i = wp.tid()
    n = count[e]
    if state[e] != ENV_RUNNING or i >= n:
        return
    base = e * n_max
    xc = slot_base(rot[e], 0, num_envs * n_max, base)
    bb = e * ((n_max + BLOCK - 1) // BLOCK)
    radius = cache_radius(hw, margin, skin)
    dropped = scan_candidates(
        work,
        xc,
        n,
        i,
        band[e],
        radius,
        slots,
        boxes,
        bb,
        cache_out,
        cache_n_out,
        base * slots,
        base,
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
    sep_relax: wp.array(dtype=wp.float32),
    spc_relax: wp.array(dtype=wp.float32),
    bend_relax: wp.array(dtype=wp.float32),
    omegas: wp.array(dtype=wp.float32),
    cache: wp.array(dtype=wp.int32),
    cache_n: wp.array(dtype=wp.int32),
    k: int,
    hw: float,
    converge_tol: float,
    margin: float,
    slots: int,
    cheby_start: int,
    gamma: float,
    n_max: int,
    num_envs: int,
    # in/out: reads the current slot, writes the next one
    work_inout: wp.array(dtype=wp.vec2f),
    # outputs
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
    sep = wp.vec2f(0.0, 0.0)
    if slots > 0:
        sep = separation_cached(
            work_inout, xc, xi, i, slots, cache, cache_n, base * slots, base, target, target2
        )
    else:
        sep = separation_dense(work_inout, xc, xi, i, n, band[e], target, target2)
    step = bead_step(xm, xi, xp, sep, L0[e], r_min, sep_relax[e], spc_relax[e], bend_relax[e])
    if wp.dot(step, step) > converge_tol * converge_tol:
        wp.atomic_max(moved_out, e, 1)
    omega = omegas[k]
    mode = blend_mode(k, cheby_start, omega)
    xold = xi
    if mode == BLEND_CHEBY:
        xold = work_inout[slot_base(r, 2, plane, base) + i]
    work_inout[slot_base(r, 1, plane, base) + i] = blend(mode, omega, gamma, xi + step, xi, xold)


@wp.kernel
def _items_end_sweep_kernel(
    # inputs
    k: int,
    # in/out
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
    p: int,
    smooth_passes: int,
    n_max: int,
    num_envs: int,
    # in/out: reads one slot, writes the other
    work_inout: wp.array(dtype=wp.vec2f),
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
        slots = stage.slots
        for k in range(s["iters"]):
            if slots > 0 and k % s["sep_every"] == 0:
                launch(
                    _items_boxes_kernel,
                    (E, -(-n_max // BLOCK)),
                    inputs=[self.state, self.rot, ws.count, stage.work, n_max, E],
                    outputs=[stage.boxes],
                    device=dev,
                )
                launch(
                    _items_scan_kernel,
                    beads_dim,
                    inputs=[
                        self.state,
                        self.rot,
                        ws.count,
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
                    self.state,
                    self.rot,
                    ws.count,
                    self.band,
                    self.L0,
                    params["sep_relax"],
                    params["spc_relax"],
                    params["bend_relax"],
                    stage.omegas,
                    stage.cache,
                    stage.cache_n,
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
                inputs=[self.state, self.rot, ws.count, self.L0, p, s["smooth_passes"], n_max, E],
                outputs=[stage.work],
                device=dev,
            )
        launch(
            _items_copy_out_kernel,
            beads_dim,
            inputs=[self.state, self.rot, ws.count, stage.work, n_tail % 2, n_max, E],
            outputs=[ws.beads],
            device=dev,
        )
