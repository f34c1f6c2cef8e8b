"""Per-bead arithmetic of the relaxation (``stages/relax.py``), shared by its two thread
layouts: the ``per_env`` kernel in ``relax.py`` and the ``per_item`` kernels in
``relax_items.py`` call these functions in the same order, so the two layouts give
bitwise-identical beads, diagnostics included.

Every float operation of a sweep lives in a ``@wp.func`` here (separation, spacing, bending,
Chebyshev blend, Taubin tail, the candidate test of the separation-cache searches).

The separation cache of bead ``i`` receives its candidates ``j`` in increasing index order,
each one added, or replacing the list's farthest entry when the list is full and ``j`` is
nearer (:func:`cache_insert`), whether the per_env layout rebuilds every list at once
(:func:`rebuild_pairwise`) or the per_item one scans for one bead (``relax_items.py``). Both
searches skip whole blocks of ``BLOCK`` consecutive beads whose bounding box lies beyond the
cache radius of bead ``i`` on some axis, which changes how many pairs are tested, never the
lists.
"""

from __future__ import annotations

import warp as wp

from ..geometry import cross2, menger_curvature

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
def cache_insert(
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
def candidate_dd(d: wp.vec2f, radius: float) -> float:
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
    its candidates in increasing index order, so the lists equal the per_item scan
    (``relax_items``) run for every bead. Returns the candidates left out."""
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
                    dd = candidate_dd(x[xb + jj] - xi, radius)
                    if dd >= 0.0 and dd < r2:
                        dropped += cache_insert(x, xb, i, jj, dd, slots, cache, cache_n, cb, nb)
                        dropped += cache_insert(x, xb, jj, i, dd, slots, cache, cache_n, cb, nb)
            j = b_end
    return dropped


@wp.func
def _add_push(d: wp.vec2f, target: float, target2: float, sep: wp.vec2f, hits: int):
    """``(sep, hits)`` with the push of a neighbour at offset ``d`` added when it is closer
    than ``target`` (and not on top of the bead)."""
    dd = wp.dot(d, d)
    if dd < target2 and dd > 1.0e-24:
        dl = wp.sqrt(dd)
        return sep + (0.5 * (target - dl) / dl) * d, hits + 1
    return sep, hits


@wp.func
def begin_env(
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    e: int,
    overflow_out: wp.array(dtype=wp.int32),
    sweeps_out: wp.array(dtype=wp.int32),
) -> int:
    """The bead count of env ``e`` when it relaxes this call, else 0 (inactive, or fewer than
    4 beads); an active env's diagnostics start at 0."""
    if active[e] == 0:
        return 0
    overflow_out[e] = 0
    sweeps_out[e] = 0
    n = count[e]
    if n < 4:
        return 0
    return n


@wp.func
def next_bead(x: wp.array(dtype=wp.vec2f), xc: int, i: int, n: int, x0: wp.vec2f) -> wp.vec2f:
    """Bead ``i + 1`` of the closed chain ``x[xc .. xc + n)`` (``x0``: its bead 0)."""
    if i + 1 < n:
        return x[xc + i + 1]
    return x0


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
def sweep_bead(
    x: wp.array(dtype=wp.vec2f),
    xc: int,
    xv: int,
    i: int,
    n: int,
    xm: wp.vec2f,
    xi: wp.vec2f,
    xp: wp.vec2f,
    band: int,
    slots: int,
    cache: wp.array(dtype=wp.int32),
    cache_n: wp.array(dtype=wp.int32),
    cb: int,
    nb: int,
    target: float,
    target2: float,
    L0: float,
    r_min: float,
    sr: float,
    pr: float,
    br: float,
    mode: int,
    omega: float,
    gamma: float,
):
    """Bead i's next iterate in a sweep and the squared length of its step: the separation
    (the mean push of the beads of the current iterate ``x[xc ..]`` closer than ``target``:
    bead i's cached candidates when the cache has ``slots``, else every non-band bead),
    spacing and bending (:func:`bead_step`), blended (:func:`blend`; the previous iterate
    ``x[xv + i]`` is read for BLEND_CHEBY only)."""
    sep = wp.vec2f(0.0, 0.0)
    hits = int(0)
    if slots > 0:
        for c in range(cache_n[nb + i]):
            d = xi - x[xc + cache[cb + i * slots + c]]
            sep, hits = _add_push(d, target, target2, sep, hits)
    else:
        for j in range(n):
            if index_gap(i, j, n) > band:
                sep, hits = _add_push(xi - x[xc + j], target, target2, sep, hits)
    if hits > 0:
        sep = sep / float(hits)
    step = bead_step(xm, xi, xp, sep, L0, r_min, sr, pr, br)
    xold = xi
    if mode == BLEND_CHEBY:
        xold = x[xv + i]
    return blend(mode, omega, gamma, xi + step, xi, xold), wp.dot(step, step)


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
