"""Repulsive sampler: a closed curve grown by self-repulsion inside a walled domain.

After Henrich & Kötter's race tracks from repulsive curves (built on Yu, Schumacher and
Crane's tangent-point flows), made cheap: one thread per env runs the whole growth, every
iteration and the per-env early stop included, inside one kernel at a small working
resolution. The stage needs no host control flow or readback, so it is **capturable**
(registered with the default ``capturable=True``; the peer drove its iterations from the
host and could not be captured).

Per env, in working units (the wall has mean radius 1):

- Domain: a wall ``R(theta) = 1 + a2 cos(2 theta + p2) + a3 cos(3 theta + p3)`` with
  ``a2, a3 ~ U(0.3, 1) * WALL_AMP`` (a round wall lets a near-circle hug it), plus
  ``k ~ U{repulsive_obstacle_count_min..max}`` small discs, one per ``2*pi/k`` wedge at a
  random phase, radius ``U(0.02, 0.045)``, centred between the start circle and ``0.9 R``.
  Obstacles are analytic circles (distance to the circle), not point clouds.
- Start: a counter-clockwise circle of radius ``R_INIT = 1/4`` with two small random
  harmonics, ``SIZE_0 = 48`` points. Target perimeter ``L_final = U(repulsive_grow_mult_min,
  repulsive_grow_mult_max) * 2*pi*R_INIT``, ratcheted ``L_t <- min(L_t (1 + rate), L_final)``
  to reach it after ``min(GROW_SHARE * repulsive_iters, GROW_MAX)`` iterations. With the
  wall fixed, a larger multiplier packs more length into the domain: more folds, lower
  compactness (2..3 stays a blob, the default 4.5..5.5 folds, 7..8 folds tightly).
- Each iteration:

  1. the exact gradient of a discrete tangent-point energy
     ``sum_{i,j non-adjacent} w_i w_j cross(T_i, x_j - x_i)^2 / |x_j - x_i|^4`` (vertex
     tangents ``T_i`` and dual lengths ``w_i`` differentiated too; pairs farther than
     ``sqrt(CUTOFF2)`` skipped), plus repulsion from the wall and, while growing, the discs;
  2. preconditioned by an H2-like filter (two passes of a periodic two-sided exponential
     smoothing, the Green's function of ``1 - c d^2/ds^2``) instead of the O(N^2)
     fractional Sobolev solve; its component along the filtered length gradient removed;
     stepped RMS-normalized (``TAU`` mean segments, at most ``STEP_CAP`` per point);
  3. growth: a move along the filtered length gradient (lobes extend, bays deepen) by the
     length still missing, faded out near the wall and wherever another strand is closer
     than ``CROWD_HI`` (scaled with the current size), speed-saturated at sharp tips;
  4. a hard rescale about the barycentre to exactly ``L_t`` (a soft length penalty does
     not hold the length against the obstacle gradients), then points are projected
     inside the wall and out of the discs' cores.

  The loop is re-parameterized to uniform arc length every ``REPARAM_EVERY`` iterations
  and upsampled by arc resampling (48 -> 64 -> 96 points) once its mean segment exceeds
  ``H_UP``. Every ``CHECK_EVERY`` iterations a crossing check saves a backup, or, on a
  self-crossing (rare at the defaults), ends the growth and restores the last
  crossing-free loop (``diagnostics["<name>.rollback"]``).
- Once ``L_final`` is reached, the discs are dropped and the loop settles with a decaying
  step; the env stops as soon as its enclosed area changes by less than ``STOP_TOL`` over
  ``STOP_WINDOW`` iterations (``diagnostics["<name>.iters"]``), at most
  ``repulsive_iters`` iterations in all.

Output: a centripetal Catmull-Rom through the working loop, arc-resampled to ``num_points``,
counter-clockwise, scaled so that the longest bounding-box side is ``1.44 * scale``
(perimeter about 5.5 to 7 at scale 1 and the default multipliers). Randomness comes only
from ``stage_rng(eff_seed, SALT_REPULSIVE)``; no atomics, fixed loop orders.
"""

from __future__ import annotations

import warp as wp

from ..core.extents import EXTENT
from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import (
    PI,
    TWO_PI,
    CrossingScratch,
    bbox_normalize,
    catmull_rom_closed,
    closed_length,
    cross2,
    has_self_crossing,
    resample_closed,
    ring_neighbours,
)
from ..seeds import stage_rng
from .common import SCALE, launch_sampler

wp.set_module_options({"enable_backward": False})

SALT_REPULSIVE = wp.constant(wp.uint32(0x5E9A1006))

#: Working resolutions of the growing loop (the largest sizes the scratch).
SIZE_0 = wp.constant(48)
SIZE_1 = wp.constant(64)
SIZE_2 = wp.constant(96)
NW = 96
#: Catmull-Rom samples per working segment for the output.
NPSEG = wp.constant(4)
#: Most obstacle discs per env: the scratch capacity and the obstacle-count fields' upper bound.
MAX_OBSTACLE_COUNT = 32
MAX_OBSTACLES = wp.constant(MAX_OBSTACLE_COUNT)

# Tuning (working units: the wall has mean radius 1).
R_INIT = wp.constant(0.25)  # start circle radius (a quarter of the wall radius)
GROW_SHARE = wp.constant(0.5)  # share of repulsive_iters spent growing ...
GROW_MAX = wp.constant(48.0)  # ... but at most this many iterations
TAU = wp.constant(0.25)  # RMS repulsion move per iteration, in mean segments
STEP_CAP = wp.constant(0.5)  # largest repulsion move of a point, in mean segments
G_REF = wp.constant(1.0)  # gradient floor of the RMS normalization (x pi hbar / d_hi^2)
GROW_CAP = wp.constant(0.5)  # largest growth move of a point, in mean segments
GROW_SAT = wp.constant(1.0)  # growth speed saturates above this x the RMS filtered gradient
LAM = wp.constant(0.6)  # decay per vertex of the smoothing filter (two passes: H2-like)
SMOOTH_WARM = wp.constant(32)  # warm-up samples of the recursive filter (0.6^32 ~ 1e-7)
CUTOFF2 = wp.constant(0.25)  # squared pair cutoff of the tangent-point sum
CONTACT2 = wp.constant(2.25)  # a pair is a contact when (arc / distance)^2 exceeds this
CROWD_LO = wp.constant(0.3)  # no growth where a contact is closer (at the final size)
CROWD_HI = wp.constant(0.45)  # full growth beyond this contact distance (at the final size)
WALL_AMP = wp.constant(0.2)  # wall harmonics amplitudes ~ U(0.3, 1) * WALL_AMP
WALL_BAND = wp.constant(0.1)  # growth fades out within this distance of the wall
# Obstacle repulsion: energy W (1/rho^2 + 2 rho/c^3) (plus a constant) within a distance c
# of the surface, so the force 2 W (1/rho^3 - 1/c^3) vanishes continuously at c.
W_WALL = wp.constant(0.05)
WALL_CUT = wp.constant(0.3)
WALL_CUT_INV3 = wp.constant(1.0 / 0.3**3)
W_DISC = wp.constant(0.05)
DISC_CUT = wp.constant(0.2)
DISC_CUT_INV3 = wp.constant(1.0 / 0.2**3)
CORE = wp.constant(0.03)  # hard exclusion margin around each disc
H_UP = wp.constant(0.075)  # upsample once the mean segment exceeds this
REPARAM_EVERY = wp.constant(4)  # iterations between arc-length re-parameterizations
CHECK_EVERY = wp.constant(16)  # iterations between crossing checks (backup or rollback)
SETTLE_DECAY = wp.constant(0.97)  # step decay per settling iteration
STOP_WINDOW = wp.constant(8)  # settling iterations between area comparisons
STOP_TOL = wp.constant(0.005)  # relative area change per window that ends the settling


@wp.func
def _perp(t: wp.vec2f) -> wp.vec2f:
    return wp.vec2f(-t[1], t[0])


@wp.func
def _wall(x: wp.vec2f, wc: wp.vec4f) -> wp.vec2f:
    """Wall radius R(theta) at x's polar angle and dR/dtheta (no trigonometry).

    ``wc = (a2 cos p2, a2 sin p2, a3 cos p3, a3 sin p3)``.
    """
    r = wp.max(wp.length(x), 1.0e-9)
    c = x[0] / r
    s = x[1] / r
    c2 = c * c - s * s
    s2 = 2.0 * c * s
    c3 = c * (4.0 * c * c - 3.0)
    s3 = s * (3.0 - 4.0 * s * s)
    rad = 1.0 + wc[0] * c2 - wc[1] * s2 + wc[2] * c3 - wc[3] * s3
    drad = -2.0 * (wc[0] * s2 + wc[1] * c2) - 3.0 * (wc[2] * s3 + wc[3] * c3)
    return wp.vec2f(rad, drad)


@wp.func
def _shoelace(x: wp.array(dtype=wp.vec2f), b: int, n: int) -> float:
    a = float(0.0)
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        a += cross2(x[b + i], x[b + j])
    return 0.5 * a


@wp.func
def _smooth(v: wp.array(dtype=wp.vec2f), tmp: wp.array(dtype=wp.vec2f), b: int, n: int, lam: float):
    """In place: convolve the closed sequence v with lam^|k| (causal plus anti-causal
    recursive passes, each warmed up over the SMOOTH_WARM samples that wrap around)."""
    w = wp.min(n, SMOOTH_WARM)
    y = wp.vec2f(0.0, 0.0)
    for i in range(n - w, n):
        y = v[b + i] + lam * y
    for i in range(n):
        y = v[b + i] + lam * y
        tmp[b + i] = y
    z = wp.vec2f(0.0, 0.0)
    for k in range(w):
        z = v[b + w - 1 - k] + lam * z
    for k in range(n):
        i = n - 1 - k
        vi = v[b + i]
        z = vi + lam * z
        v[b + i] = tmp[b + i] + z - vi


@wp.func
def _copy(src: wp.array(dtype=wp.vec2f), dst: wp.array(dtype=wp.vec2f), b: int, n: int):
    for i in range(n):
        dst[b + i] = src[b + i]


@wp.func
def _tangent_point_gradient(
    x: wp.array(dtype=wp.vec2f),
    tan: wp.array(dtype=wp.vec2f),
    wgt: wp.array(dtype=wp.float32),
    g: wp.array(dtype=wp.vec2f),
    gt: wp.array(dtype=wp.vec2f),
    wsum: wp.array(dtype=wp.float32),
    dmin2: wp.array(dtype=wp.float32),
    b: int,
    n: int,
    hbar: float,
):
    """g <- gradient of the tangent-point energy; dmin2 <- squared distance to the nearest
    contact (a point much closer in space than along the loop)."""
    for i in range(n):
        ip, inx = ring_neighbours(i, n)
        u = x[b + inx] - x[b + ip]
        lu = wp.max(wp.length(u), 1.0e-12)
        tan[b + i] = u / lu
        wgt[b + i] = 0.5 * lu
        g[b + i] = wp.vec2f(0.0, 0.0)
        gt[b + i] = wp.vec2f(0.0, 0.0)
        wsum[b + i] = 0.0
        dmin2[b + i] = 1.0e6
    # unordered non-adjacent pairs, both orientations (k_ij and k_ji) at once
    for i in range(n):
        xi = x[b + i]
        ti = tan[b + i]
        wi = wgt[b + i]
        pi = _perp(ti)
        gi = wp.vec2f(0.0, 0.0)
        gti = wp.vec2f(0.0, 0.0)
        wsi = float(0.0)
        dmi = float(1.0e6)
        jend = n
        if i == 0:
            jend = n - 1
        for j in range(i + 2, jend):
            d = x[b + j] - xi
            r2 = wp.dot(d, d)
            if r2 > CUTOFF2:
                continue
            cd = j - i
            if cd > n - cd:
                cd = n - cd
            arc = float(cd) * hbar
            if arc * arc > CONTACT2 * r2:
                dmi = wp.min(dmi, r2)
                dmin2[b + j] = wp.min(dmin2[b + j], r2)
            inv = 1.0 / wp.max(r2, 1.0e-12)
            ib = inv * inv
            tj = tan[b + j]
            wj = wgt[b + j]
            ci = cross2(ti, d)
            cj = cross2(tj, d)
            ki = ci * ci * ib
            kj = cj * cj * ib
            q = wi * wj
            # d/dd of k_ij + k_ji, k = cross(T, d)^2 / |d|^4
            f = q * (2.0 * ib * (ci * pi + cj * _perp(tj)) - 4.0 * inv * (ki + kj) * d)
            g[b + j] = g[b + j] + f
            gi -= f
            dperp = wp.vec2f(d[1], -d[0])
            gti += (q * 2.0 * ci * ib) * dperp
            gt[b + j] = gt[b + j] + (q * 2.0 * cj * ib) * dperp
            kk = ki + kj
            wsi += wj * kk
            wsum[b + j] = wsum[b + j] + wi * kk
        g[b + i] = g[b + i] + gi
        gt[b + i] = gt[b + i] + gti
        wsum[b + i] = wsum[b + i] + wsi
        dmin2[b + i] = wp.min(dmin2[b + i], dmi)
    # chain rule through T_i = u/|u| and w_i = |u|/2, u = x_{i+1} - x_{i-1}
    for i in range(n):
        t = tan[b + i]
        v = gt[b + i]
        gt[b + i] = (v - wp.dot(v, t) * t) / (2.0 * wgt[b + i]) + (0.5 * wsum[b + i]) * t
    for i in range(n):
        ip, inx = ring_neighbours(i, n)
        g[b + i] = g[b + i] + gt[b + ip] - gt[b + inx]


@wp.kernel
def _repulsive_kernel(
    # inputs
    eff_seed: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    # parameters
    scale: wp.array(dtype=wp.float32),
    # static
    grow_min: float,
    grow_max: float,
    k_min: int,
    k_max: int,
    iters: int,
    num_points: int,
    cross_nch: int,
    # scratch
    xa: wp.array(dtype=wp.vec2f),
    xb: wp.array(dtype=wp.vec2f),
    xbk: wp.array(dtype=wp.vec2f),
    g: wp.array(dtype=wp.vec2f),
    gl: wp.array(dtype=wp.vec2f),
    tan: wp.array(dtype=wp.vec2f),
    gt: wp.array(dtype=wp.vec2f),
    wgt: wp.array(dtype=wp.float32),
    wsum: wp.array(dtype=wp.float32),
    dmin2: wp.array(dtype=wp.float32),
    obst: wp.array(dtype=wp.vec3f),
    dense: wp.array(dtype=wp.vec2f),
    cross_boxes: wp.array(dtype=wp.vec4f),
    cross_turns: wp.array(dtype=wp.float32),
    # outputs
    iters_out: wp.array(dtype=wp.int32),
    rollback_out: wp.array(dtype=wp.int32),
    line_inout: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    st = stage_rng(eff_seed[e], SALT_REPULSIVE)
    b = e * NW
    ob = e * MAX_OBSTACLES
    l_init = TWO_PI * R_INIT
    mult = grow_min + (grow_max - grow_min) * wp.randf(st)
    l_final = mult * l_init
    n_grow = wp.clamp(GROW_SHARE * float(iters), 1.0, GROW_MAX)
    rate = wp.exp(wp.log(mult) / n_grow) - 1.0
    # wall harmonics
    a2 = WALL_AMP * (0.3 + 0.7 * wp.randf(st))
    p2 = TWO_PI * wp.randf(st)
    a3 = WALL_AMP * (0.3 + 0.7 * wp.randf(st))
    p3 = TWO_PI * wp.randf(st)
    wc = wp.vec4f(a2 * wp.cos(p2), a2 * wp.sin(p2), a3 * wp.cos(p3), a3 * wp.sin(p3))
    # obstacle discs: one per wedge, random phase, radius and distance
    k = k_min + int(wp.randf(st) * float(k_max - k_min + 1))
    k = wp.min(k, k_max)
    phase = TWO_PI * wp.randf(st)
    for c in range(k):
        rd = 0.02 + 0.025 * wp.randf(st)
        ang = phase + TWO_PI * (float(c) + wp.randf(st)) / float(k)
        dirc = wp.vec2f(wp.cos(ang), wp.sin(ang))
        lo = R_INIT + rd + 0.05
        hi = 0.9 * _wall(dirc, wc)[0]
        rad = lo + (hi - lo) * wp.randf(st)
        obst[ob + c] = wp.vec3f(rad * dirc[0], rad * dirc[1], rd)
    # start: counter-clockwise circle with two small random harmonics
    n = int(SIZE_0)
    a0 = TWO_PI * wp.randf(st)
    h2 = 0.02 + 0.04 * wp.randf(st)
    q2 = TWO_PI * wp.randf(st)
    h3 = 0.02 + 0.04 * wp.randf(st)
    q3 = TWO_PI * wp.randf(st)
    for i in range(n):
        th = a0 + TWO_PI * float(i) / float(n)
        r = R_INIT * (1.0 + h2 * wp.cos(2.0 * th + q2) + h3 * wp.cos(3.0 * th + q3))
        xa[b + i] = wp.vec2f(r * wp.cos(th), r * wp.sin(th))
    _copy(xa, xbk, b, n)
    n_bk = n
    l_t = float(l_init)
    settle = int(0)
    area_prev = float(0.0)
    it_done = int(0)
    rolled = int(0)
    for it in range(iters):
        it_done = it + 1
        grown = int(0)
        if l_t >= l_final:
            grown = 1
        l_t = wp.min(l_t * (1.0 + rate), l_final)
        hbar = l_t / float(n)
        # upsample when the segments got long, else re-parameterize now and then
        if hbar > H_UP and n < SIZE_2:
            n2 = int(SIZE_2)
            if n < SIZE_1:
                n2 = SIZE_1
            resample_closed(xa, b, n, xb, b, n2)
            n = n2
            _copy(xb, xa, b, n)
            hbar = l_t / float(n)
        elif it % REPARAM_EVERY == 0:
            resample_closed(xa, b, n, xb, b, n)
            _copy(xb, xa, b, n)
        _tangent_point_gradient(xa, tan, wgt, g, gt, wsum, dmin2, b, n, hbar)
        # wall and disc repulsion, raw length gradient (kept in tan), growth mask (in wgt)
        sz = l_t / l_final
        l_cur = float(0.0)
        d_lo = CROWD_LO * sz
        d_hi = CROWD_HI * sz
        for i in range(n):
            ip, inx = ring_neighbours(i, n)
            x = xa[b + i]
            wi = wgt[b + i]
            gv = g[b + i]
            rx = wp.max(wp.length(x), 1.0e-9)
            wr = _wall(x, wc)
            gap = wr[0] - rx
            rho = wp.max(gap, 0.005)
            grho = (wr[1] / (rx * rx)) * _perp(x) - x / rx  # gradient of R(theta) - |x|
            if rho < WALL_CUT:
                gv -= (2.0 * W_WALL * wi * (1.0 / (rho * rho * rho) - WALL_CUT_INV3)) * grho
            if grown == 0:
                for c in range(k):
                    o = obst[ob + c]
                    dv = x - wp.vec2f(o[0], o[1])
                    reach = o[2] + DISC_CUT
                    dl2 = wp.dot(dv, dv)
                    if dl2 < reach * reach:
                        dl = wp.max(wp.sqrt(dl2), 1.0e-9)
                        rh = wp.max(dl - o[2], 0.005)
                        fmag = 2.0 * W_DISC * wi * (1.0 / (rh * rh * rh) - DISC_CUT_INV3)
                        gv -= fmag * (dv / dl)
            g[b + i] = gv
            e0 = x - xa[b + ip]
            e1 = xa[b + inx] - x
            glen = e0 / wp.max(wp.length(e0), 1.0e-12) - e1 / wp.max(wp.length(e1), 1.0e-12)
            gl[b + i] = glen
            tan[b + i] = glen
            l_cur += wp.length(e1)
            m = wp.clamp((gap - WALL_BAND) / WALL_BAND, 0.0, 1.0)
            m = m * wp.clamp((wp.sqrt(dmin2[b + i]) - d_lo) / (d_hi - d_lo), 0.0, 1.0)
            wgt[b + i] = m
        # precondition, project off the length gradient
        for _p in range(2):
            _smooth(g, xb, b, n, LAM)
            _smooth(gl, xb, b, n, LAM)
        a_gg = float(0.0)
        a_ll = float(0.0)
        for i in range(n):
            a_gg += wp.dot(tan[b + i], g[b + i])
            a_ll += wp.dot(tan[b + i], gl[b + i])
        mu = a_gg / wp.max(a_ll, 1.0e-20)
        dsq = float(0.0)
        for i in range(n):
            dv = g[b + i] - mu * gl[b + i]
            g[b + i] = dv
            dsq += wp.dot(dv, dv)
        step = TAU
        if grown == 1:
            step = TAU * wp.pow(SETTLE_DECAY, float(settle))
            settle += 1
        # RMS-normalized, but small gradients (no close strands) take small steps
        g_ref = G_REF * PI * hbar / (d_hi * d_hi)
        s = step * hbar / wp.max(wp.sqrt(dsq / float(n)), g_ref)
        smax = STEP_CAP * hbar
        # growth along the masked, filtered length gradient by the missing length
        a_gv = float(0.0)
        vmax = float(0.0)
        gsq = float(0.0)
        for i in range(n):
            gsq += wp.dot(gl[b + i], gl[b + i])
        g0 = GROW_SAT * wp.sqrt(gsq / float(n))
        for i in range(n):
            v = (wgt[b + i] / (1.0 + wp.length(gl[b + i]) / wp.max(g0, 1.0e-20))) * gl[b + i]
            gl[b + i] = v
            a_gv += wp.dot(tan[b + i], v)
            vmax = wp.max(vmax, wp.length(v))
        eta = float(0.0)
        if a_gv > 1.0e-20 and l_t > l_cur:
            eta = wp.min((l_t - l_cur) / a_gv, GROW_CAP * hbar / wp.max(vmax, 1.0e-30))
        cen = wp.vec2f(0.0, 0.0)
        for i in range(n):
            mv = s * g[b + i]
            lm = wp.length(mv)
            if lm > smax:
                mv = mv * (smax / lm)
            xi = xa[b + i] - mv + eta * gl[b + i]
            xa[b + i] = xi
            cen += xi
        cen = cen / float(n)
        # hard rescale to the target length, then the hard wall and disc cores
        fac = l_t / wp.max(float(closed_length(xa, b, n)), 1.0e-12)
        for i in range(n):
            xi = cen + fac * (xa[b + i] - cen)
            ri = wp.length(xi)
            if ri > 1.0 - 2.0 * WALL_AMP:
                wr = _wall(xi, wc)
                if ri > wr[0]:
                    xi = xi * (wr[0] / ri)
            if grown == 0:
                for c in range(k):
                    o = obst[ob + c]
                    oc = wp.vec2f(o[0], o[1])
                    dv = xi - oc
                    rmin = o[2] + CORE
                    dl2 = wp.dot(dv, dv)
                    if dl2 < rmin * rmin:
                        xi = oc + dv * (rmin / wp.max(wp.sqrt(dl2), 1.0e-9))
            xa[b + i] = xi
        if it % CHECK_EVERY == CHECK_EVERY - 1:
            if has_self_crossing(xa, b, n, cross_boxes, cross_turns, e * cross_nch):
                rolled = 1
                break

            n_bk = n
            _copy(xa, xbk, b, n)
        if grown == 1 and settle % STOP_WINDOW == 0:
            area = _shoelace(xa, b, n)
            if wp.abs(area - area_prev) < STOP_TOL * wp.abs(area):
                break
            area_prev = area
    if rolled == 0:
        if has_self_crossing(xa, b, n, cross_boxes, cross_turns, e * cross_nch):
            rolled = 1
    if rolled == 1:
        # the last crossing-free loop
        n = n_bk
        _copy(xbk, xa, b, n)
    iters_out[e] = it_done
    rollback_out[e] = rolled
    db = e * NW * NPSEG
    catmull_rom_closed(xa, b, n, NPSEG, dense, db)
    lb = e * num_points
    resample_closed(dense, db, n * NPSEG, line_inout, lb, num_points)
    if _shoelace(line_inout, lb, num_points) < 0.0:
        for i in range(num_points // 2):
            p = line_inout[lb + i]
            line_inout[lb + i] = line_inout[lb + num_points - 1 - i]
            line_inout[lb + num_points - 1 - i] = p
    bbox_normalize(line_inout, lb, num_points, EXTENT * scale[e])


GROW_MULT_MIN = Tunable(
    "grow_mult_min",
    4.5,
    lo=1.0,
    hi=20.0,
    config="repulsive_grow_mult_min",
    unit="start perimeters",
    doc="smallest target perimeter, U(min, max) * 2 pi R_INIT.",
)
GROW_MULT_MAX = Tunable(
    "grow_mult_max",
    5.5,
    lo=GROW_MULT_MIN,
    hi=20.0,
    config="repulsive_grow_mult_max",
    unit="start perimeters",
    doc="largest target perimeter multiplier (more length: more folds).",
)
OBSTACLES_MIN = Tunable(
    "obstacle_count_min",
    8,
    lo=0,
    hi=MAX_OBSTACLE_COUNT,
    config="repulsive_obstacle_count_min",
    unit="discs",
    doc="fewest obstacle discs per env.",
)
OBSTACLES_MAX = Tunable(
    "obstacle_count_max",
    12,
    lo=OBSTACLES_MIN,
    hi=MAX_OBSTACLE_COUNT,
    config="repulsive_obstacle_count_max",
    unit="discs",
    doc="most obstacle discs per env.",
)
ITERS = Tunable(
    "iters",
    160,
    lo=1,
    hi=10000,
    config="repulsive_iters",
    unit="iterations",
    doc="growth and settling iterations at most (an env stops early once settled).",
)


class SamplerRepulsive(Stage):
    """Self-repulsive growth sampler (``generator="repulsive"``); loops are
    counter-clockwise. Capturable: the whole growth of an env runs in one kernel thread.

    Diagnostics (int32 ``[E]``, rows of rebuilt envs only): ``"<name>.iters"`` the
    iterations each env ran (early stop once settled; at most ``repulsive_iters``);
    ``"<name>.rollback"`` 1 where a self-crossing ended the growth and the last
    crossing-free loop was used.
    """

    role = "sampler"
    FIELDS = (GROW_MULT_MIN, GROW_MULT_MAX, OBSTACLES_MIN, OBSTACLES_MAX, ITERS, SCALE)

    def allocate(self, ws: Workspace) -> None:
        lay, E, name = ws.layout, ws.layout.num_envs, self.name
        self.cross = CrossingScratch(ws, max(lay.num_points, NW), name)
        vec = [ws.zeros(E * NW, wp.vec2f, f"{name} working loops") for _ in range(7)]
        self.xa, self.xb, self.xbk, self.g, self.gl, self.tan, self.gt = vec
        self.wgt = ws.zeros(E * NW, wp.float32, f"{name} weights")
        self.wsum = ws.zeros(E * NW, wp.float32, f"{name} weight sums")
        self.dmin2 = ws.zeros(E * NW, wp.float32, f"{name} distances")
        self.obst = ws.zeros(E * int(MAX_OBSTACLES), wp.vec3f, f"{name} obstacles")
        self.dense = ws.zeros(E * NW * int(NPSEG), wp.vec2f, f"{name} dense loop")
        self.iters = ws.zeros(E, wp.int32, f"{name} iterations")
        self.rollback = ws.zeros(E, wp.int32, f"{name} rollbacks")
        ws.diagnostics[f"{name}.iters"] = self.iters
        ws.diagnostics[f"{name}.rollback"] = self.rollback

    def enqueue(self, ws: Workspace, params: dict) -> None:
        v = self.values
        launch_sampler(
            ws,
            _repulsive_kernel,
            parameters=[params["scale"]],
            static=[
                float(v.grow_mult_min),
                float(v.grow_mult_max),
                v.obstacle_count_min,
                v.obstacle_count_max,
                v.iters,
                ws.layout.num_points,
                self.cross.nch,
            ],
            scratch=[
                self.xa,
                self.xb,
                self.xbk,
                self.g,
                self.gl,
                self.tan,
                self.gt,
                self.wgt,
                self.wsum,
                self.dmin2,
                self.obst,
                self.dense,
                self.cross.boxes,
                self.cross.turns,
            ],
            outputs=[self.iters, self.rollback, ws.line],
        )


__all__ = ["SamplerRepulsive"]
