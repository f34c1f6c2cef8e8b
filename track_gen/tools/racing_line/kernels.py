"""Kernels and ``@wp.func`` helpers of the racing line planner (one thread per env).

Notation (plan view, float64, lengths in units of ``h``, the centre line's mean chord):
bead ``i`` of ``n`` has centre ``c_i``, unit left normal ``n_i`` and offset ``x_i``; the line is
``p_i = c_i + x_i n_i``. Its second difference ``d_i = p_{i-1} - 2 p_i + p_{i+1}`` (indices mod
``n``) weighted by ``s_i = (h / ds_i)^(3/2)`` (``ds_i`` the mean of the two chords at bead ``i``
of the line the QP is linearised around) gives the objective ``f(x) = sum_i |s_i d_i|^2``,
``h^3`` times the discrete ``sum_i kappa_i^2 ds_i`` with ``kappa_i = |d_i| / ds_i^2``. It is
``0.5 x^T H x + g^T x + f(0)/2``-shaped with ``H`` cyclic pentadiagonal (band arrays ``d0``,
``d1``, ``d2``: ``H[j, j]``, ``H[j, j+1]``, ``H[j, j+2]``), solved by a primal-dual active-set
method whose every iteration factors a cyclic pentadiagonal matrix (:func:`_factor`, O(n)),
each linearisation warm-started at the last line (the multipliers of its beads on a bound
from the gradient there).
"""

from __future__ import annotations

import warp as wp

from ...core.extents import in_range3
from ...geometry import bead_at_arc

wp.set_module_options({"enable_backward": False})

_NAN = wp.constant(float("nan"))

#: Fewest beads a track needs for a line (fewer: NaN rows).
MIN_BEADS = 8

_MIN_BEADS = wp.constant(MIN_BEADS)

#: Proximal weight of the active-set solves, relative to the diagonal: each solve adds
#: ``PROX * H[i, i] * (x_i - x_i^prev)^2`` on the free beads, which keeps the factor of a loop
#: with long straights (whose smooth lateral shifts cost almost nothing) well conditioned and
#: vanishes at the fixed point (it does not bias the optimum).
PROX = 1.0e-6

_PROX = wp.constant(wp.float64(PROX))

#: ADMM penalty and over-relaxation of the ``kappa_max`` phase (units of ``h``).
ADMM_RHO = 1.0
ADMM_ALPHA = 1.6

_RHO = wp.constant(wp.float64(ADMM_RHO))
_ALPHA = wp.constant(wp.float64(ADMM_ALPHA))

_ZERO = wp.constant(wp.float64(0.0))
_ONE = wp.constant(wp.float64(1.0))
_TINY = wp.constant(wp.float64(1.0e-300))
_HALF = wp.constant(wp.float64(0.5))
_TWO = wp.constant(wp.float64(2.0))
_FOUR = wp.constant(wp.float64(4.0))
_MIN_DS = wp.constant(wp.float64(1.0e-9))


@wp.func
def _xy(v: wp.vec3f) -> wp.vec2d:
    return wp.vec2d(wp.float64(v[0]), wp.float64(v[1]))


@wp.func
def _wrap(i: int, n: int) -> int:
    j = i % n
    if j < 0:
        j += n
    return j


@wp.func
def _m_dense(
    m1: wp.array(dtype=wp.float64),
    m2: wp.array(dtype=wp.float64),
    base: int,
    n: int,
    r: int,
    j: int,
) -> wp.float64:
    """Entry ``M[r, j]`` (``r`` one of the two last rows, ``j < n - 2``) of a symmetric cyclic
    pentadiagonal matrix given by its bands."""
    out = _ZERO
    if r == n - 2:
        if j == 0:
            out = m2[base + n - 2]
        elif j == n - 4:
            out = m2[base + n - 4]
        elif j == n - 3:
            out = m1[base + n - 3]
    else:
        if j == 0:
            out = m1[base + n - 1]
        elif j == 1:
            out = m2[base + n - 1]
        elif j == n - 3:
            out = m2[base + n - 3]
    return out


@wp.func
def _factor(
    m0: wp.array(dtype=wp.float64),
    m1: wp.array(dtype=wp.float64),
    m2: wp.array(dtype=wp.float64),
    base: int,
    n: int,
    l0: wp.array(dtype=wp.float64),
    l1: wp.array(dtype=wp.float64),
    l2: wp.array(dtype=wp.float64),
    r1: wp.array(dtype=wp.float64),
    r2: wp.array(dtype=wp.float64),
):
    """Cholesky ``M = L L^T`` of the SPD cyclic pentadiagonal ``M`` (bands ``m0, m1, m2``):
    rows ``i < n-2`` of ``L`` are banded (``l0[i] = L[i,i]``, ``l1[i] = L[i,i-1]``,
    ``l2[i] = L[i,i-2]``), the last two rows dense (``r1[j] = L[n-2,j]``,
    ``r2[j] = L[n-1,j]`` for ``j < n-2``; ``l1[n-1] = L[n-1,n-2]``). O(n)."""
    nm = n - 2
    for i in range(nm):
        a2 = _ZERO
        a1 = _ZERO
        if i >= 2:
            a2 = m2[base + i - 2] / l0[base + i - 2]
        if i >= 1:
            t = m1[base + i - 1]
            if i >= 2:
                t -= a2 * l1[base + i - 1]
            a1 = t / l0[base + i - 1]
        dd = m0[base + i] - a2 * a2 - a1 * a1
        l2[base + i] = a2
        l1[base + i] = a1
        l0[base + i] = wp.sqrt(wp.max(dd, _TINY))
    s11 = _ZERO
    s21 = _ZERO
    s22 = _ZERO
    for j in range(nm):
        t1 = _m_dense(m1, m2, base, n, n - 2, j)
        t2 = _m_dense(m1, m2, base, n, n - 1, j)
        if j >= 1:
            t1 -= r1[base + j - 1] * l1[base + j]
            t2 -= r2[base + j - 1] * l1[base + j]
        if j >= 2:
            t1 -= r1[base + j - 2] * l2[base + j]
            t2 -= r2[base + j - 2] * l2[base + j]
        q1 = t1 / l0[base + j]
        q2 = t2 / l0[base + j]
        r1[base + j] = q1
        r2[base + j] = q2
        s11 += q1 * q1
        s21 += q2 * q1
        s22 += q2 * q2
    la = wp.sqrt(wp.max(m0[base + n - 2] - s11, _TINY))
    lb = (m1[base + n - 2] - s21) / la
    l0[base + n - 2] = la
    l1[base + n - 1] = lb
    l0[base + n - 1] = wp.sqrt(wp.max(m0[base + n - 1] - s22 - lb * lb, _TINY))


@wp.func
def _solve(
    l0: wp.array(dtype=wp.float64),
    l1: wp.array(dtype=wp.float64),
    l2: wp.array(dtype=wp.float64),
    r1: wp.array(dtype=wp.float64),
    r2: wp.array(dtype=wp.float64),
    base: int,
    n: int,
    b: wp.array(dtype=wp.float64),
):
    """``b <- M^{-1} b`` with the factor of :func:`_factor` (forward, then back substitution)."""
    nm = n - 2
    for i in range(nm):
        t = b[base + i]
        if i >= 1:
            t -= l1[base + i] * b[base + i - 1]
        if i >= 2:
            t -= l2[base + i] * b[base + i - 2]
        b[base + i] = t / l0[base + i]
    t1 = b[base + n - 2]
    t2 = b[base + n - 1]
    for j in range(nm):
        t1 -= r1[base + j] * b[base + j]
        t2 -= r2[base + j] * b[base + j]
    y1 = t1 / l0[base + n - 2]
    y2 = (t2 - l1[base + n - 1] * y1) / l0[base + n - 1]
    x2 = y2 / l0[base + n - 1]
    x1 = (y1 - l1[base + n - 1] * x2) / l0[base + n - 2]
    b[base + n - 2] = x1
    b[base + n - 1] = x2
    for k in range(nm):
        i = nm - 1 - k
        t = b[base + i] - r1[base + i] * x1 - r2[base + i] * x2
        if i + 1 < nm:
            t -= l1[base + i + 1] * b[base + i + 1]
        if i + 2 < nm:
            t -= l2[base + i + 2] * b[base + i + 2]
        b[base + i] = t / l0[base + i]


@wp.func
def _centre(
    center: wp.array(dtype=wp.vec3f), row: int, i: int, n: int, origin: wp.vec2d, h: wp.float64
) -> wp.vec2d:
    """Plan-view centre of bead ``i`` (mod ``n``) relative to ``origin``, units of ``h``."""
    return (_xy(center[row + _wrap(i, n)]) - origin) / h


@wp.func
def _second(
    center: wp.array(dtype=wp.vec3f), row: int, i: int, n: int, origin: wp.vec2d, h: wp.float64
) -> wp.vec2d:
    """The centre line's second difference ``c_{i-1} - 2 c_i + c_{i+1}`` at bead ``i``."""
    return (
        _centre(center, row, i - 1, n, origin, h)
        - _TWO * _centre(center, row, i, n, origin, h)
        + _centre(center, row, i + 1, n, origin, h)
    )


@wp.func
def _nrm(normal: wp.array(dtype=wp.vec3f), row: int, i: int, n: int) -> wp.vec2d:
    return _xy(normal[row + _wrap(i, n)])


@wp.func
def _objective(
    center: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    row: int,
    n: int,
    origin: wp.vec2d,
    h: wp.float64,
    x: wp.array(dtype=wp.float64),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    wt: wp.array(dtype=wp.float64),
    base: int,
) -> wp.float64:
    """``f(clip(x, lo, hi)) = sum_i |s_i d_i|^2`` (``s_i = wt_i^1.5``)."""
    f = _ZERO
    for i in range(n):
        im = _wrap(i - 1, n)
        ip = _wrap(i + 1, n)
        xm = wp.clamp(x[base + im], lo[base + im], hi[base + im])
        x0 = wp.clamp(x[base + i], lo[base + i], hi[base + i])
        xp = wp.clamp(x[base + ip], lo[base + ip], hi[base + ip])
        d = (
            _second(center, row, i, n, origin, h)
            + xm * _nrm(normal, row, im, n)
            - _TWO * x0 * _nrm(normal, row, i, n)
            + xp * _nrm(normal, row, ip, n)
        )
        w = wt[base + i]
        f += w * w * w * wp.dot(d, d)
    return f


@wp.func
def _kappa_centre(
    center: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    row: int,
    i: int,
    n: int,
    origin: wp.vec2d,
    h: wp.float64,
    wt: wp.array(dtype=wp.float64),
    base: int,
) -> wp.float64:
    """The centre line's signed curvature at bead ``i`` (units ``1/h``):
    ``(h/ds_i)^2 n_i . (c_{i-1} - 2 c_i + c_{i+1})``."""
    w = wt[base + _wrap(i, n)]
    return w * w * wp.dot(_nrm(normal, row, i, n), _second(center, row, i, n, origin, h))


@wp.func
def _kappa_row(
    center: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    row: int,
    i: int,
    n: int,
    origin: wp.vec2d,
    h: wp.float64,
    wt: wp.array(dtype=wp.float64),
    base: int,
) -> wp.vec3d:
    """Coefficients of ``x_{i-1}, x_i, x_{i+1}`` in the linearised curvature of the offset
    line (units ``1/h``): ``kappa_i ~ k0_i + (h/ds_i)^2 (x_{i-1} - 2 x_i + x_{i+1}) +
    k0_i^2 x_i`` (``k0``: :func:`_kappa_centre`; an offset toward the centre of curvature
    tightens the bend)."""
    w = wt[base + _wrap(i, n)]
    k = w * w
    q = _kappa_centre(center, normal, row, i, n, origin, h, wt, base)
    return wp.vec3d(k, -_TWO * k + q * q, k)


@wp.func
def _hband(
    center: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    row: int,
    n: int,
    origin: wp.vec2d,
    h: wp.float64,
    wt: wp.array(dtype=wp.float64),
    base: int,
    with_kappa: int,
    d0: wp.array(dtype=wp.float64),
    d1: wp.array(dtype=wp.float64),
    d2: wp.array(dtype=wp.float64),
    g: wp.array(dtype=wp.float64),
):
    """The QP's bands ``d0, d1, d2`` and linear term ``g``; ``with_kappa``: the ADMM matrix
    ``H + rho (I + K^T K)`` instead of ``H``."""
    for j in range(n):
        sm = wt[base + _wrap(j - 1, n)]
        s0 = wt[base + j]
        sp = wt[base + _wrap(j + 1, n)]
        sm = sm * sm * sm
        s0 = s0 * s0 * s0
        sp = sp * sp * sp
        nj = _nrm(normal, row, j, n)
        n1 = _nrm(normal, row, j + 1, n)
        n2 = _nrm(normal, row, j + 2, n)
        a0 = sm + _FOUR * s0 + sp
        a1 = -_TWO * (s0 + sp) * wp.dot(nj, n1)
        a2 = sp * wp.dot(nj, n2)
        if with_kappa != 0:
            km = _kappa_row(center, normal, row, j - 1, n, origin, h, wt, base)
            k0 = _kappa_row(center, normal, row, j, n, origin, h, wt, base)
            kp = _kappa_row(center, normal, row, j + 1, n, origin, h, wt, base)
            a0 += _RHO * (_ONE + km[2] * km[2] + k0[1] * k0[1] + kp[0] * kp[0])
            a1 += _RHO * (k0[1] * k0[2] + kp[0] * kp[1])
            a2 += _RHO * (kp[0] * kp[2])
        d0[base + j] = a0
        d1[base + j] = a1
        d2[base + j] = a2
        cm = _second(center, row, j - 1, n, origin, h)
        c0 = _second(center, row, j, n, origin, h)
        cp = _second(center, row, j + 1, n, origin, h)
        g[base + j] = wp.dot(nj, sp * cp - _TWO * s0 * c0 + sm * cm)


@wp.func
def _hmul(
    d0: wp.array(dtype=wp.float64),
    d1: wp.array(dtype=wp.float64),
    d2: wp.array(dtype=wp.float64),
    base: int,
    n: int,
    y: wp.array(dtype=wp.float64),
    i: int,
) -> wp.float64:
    """``(M y)_i`` of the cyclic pentadiagonal ``M`` (bands ``d0, d1, d2``)."""
    im = _wrap(i - 1, n)
    im2 = _wrap(i - 2, n)
    return (
        d0[base + i] * y[base + i]
        + d1[base + i] * y[base + _wrap(i + 1, n)]
        + d1[base + im] * y[base + im]
        + d2[base + i] * y[base + _wrap(i + 2, n)]
        + d2[base + im2] * y[base + im2]
    )


@wp.func
def _weights(
    center: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    row: int,
    n: int,
    origin: wp.vec2d,
    h: wp.float64,
    x: wp.array(dtype=wp.float64),
    base: int,
    wt: wp.array(dtype=wp.float64),
):
    """``wt_i = h / ds_i`` of the line ``c + x n`` (``ds_i``: mean of its two plan-view chords
    at bead ``i``, units of ``h``)."""
    for i in range(n):
        pm = _centre(center, row, i - 1, n, origin, h) + x[base + _wrap(i - 1, n)] * _nrm(
            normal, row, i - 1, n
        )
        p0 = _centre(center, row, i, n, origin, h) + x[base + i] * _nrm(normal, row, i, n)
        pp = _centre(center, row, i + 1, n, origin, h) + x[base + _wrap(i + 1, n)] * _nrm(
            normal, row, i + 1, n
        )
        ds = _HALF * (wp.length(p0 - pm) + wp.length(pp - p0))
        wt[base + i] = _ONE / wp.max(ds, _MIN_DS)


@wp.func
def _ax(v2: wp.float64, k: wp.float64, a_lat: wp.float64, a_lon: wp.float64) -> wp.float64:
    """Longitudinal acceleration left at speed^2 ``v2`` and curvature ``k``: the friction
    ellipse ``a_lon * sqrt(1 - (v2 |k| / a_lat)^2)`` (0 past the lateral limit)."""
    q = v2 * wp.abs(k) / a_lat
    return a_lon * wp.sqrt(wp.max(_ONE - q * q, _ZERO))


@wp.kernel
def _plan_kernel(
    # inputs
    center: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    # static
    use_mask: int,
    n_max: int,
    half_vehicle: float,
    a_lat_f: float,
    a_lon_f: float,
    v_max_f: float,
    kappa_max_f: float,
    iterations: int,
    linearisations: int,
    kappa_iterations: int,
    # scratch
    wt: wp.array(dtype=wp.float64),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    d0: wp.array(dtype=wp.float64),
    d1: wp.array(dtype=wp.float64),
    d2: wp.array(dtype=wp.float64),
    g: wp.array(dtype=wp.float64),
    m0: wp.array(dtype=wp.float64),
    m1: wp.array(dtype=wp.float64),
    m2: wp.array(dtype=wp.float64),
    l0: wp.array(dtype=wp.float64),
    l1: wp.array(dtype=wp.float64),
    l2: wp.array(dtype=wp.float64),
    r1: wp.array(dtype=wp.float64),
    r2: wp.array(dtype=wp.float64),
    x: wp.array(dtype=wp.float64),
    y: wp.array(dtype=wp.float64),
    lam: wp.array(dtype=wp.float64),
    best: wp.array(dtype=wp.float64),
    z2: wp.array(dtype=wp.float64),
    u2: wp.array(dtype=wp.float64),
    act: wp.array(dtype=wp.int32),
    # outputs
    offset_out: wp.array(dtype=wp.float32),
    position_out: wp.array(dtype=wp.vec3f),
    curvature_out: wp.array(dtype=wp.float32),
    speed_out: wp.array(dtype=wp.float32),
    lap_time_out: wp.array(dtype=wp.float32),
    length_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    if use_mask != 0:
        if mask[e] == 0:
            return
    row = e * n_max
    base = row
    n = count[e]
    ok = int(1)
    if valid[e] == 0 or n < _MIN_BEADS or n > n_max:
        ok = 0
        n = 0
    for i in range(n):
        if not (
            in_range3(center[row + i])
            and in_range3(normal[row + i])
            and in_range3(inner[row + i])
            and in_range3(outer[row + i])
        ):
            ok = 0
    if ok == 0:
        n = 0
    # scale h: the centre line's mean plan-view chord (float64 sum)
    origin = wp.vec2d(_ZERO, _ZERO)
    h = _ZERO
    if n > 0:
        origin = _xy(center[row])
        per = _ZERO
        for i in range(n):
            per += wp.length(_xy(center[row + _wrap(i + 1, n)]) - _xy(center[row + i]))
        h = per / wp.float64(n)
        if not (wp.isfinite(h) and h > _ZERO):
            n = 0
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    if n == 0:
        for i in range(n_max):
            offset_out[row + i] = _NAN
            position_out[row + i] = nan3
            curvature_out[row + i] = _NAN
            speed_out[row + i] = _NAN
        lap_time_out[e] = _NAN
        length_out[e] = _NAN
        return
    # bounds of the offset (units of h): -(w_right - w/2) <= x <= w_left - w/2
    hv = wp.float64(half_vehicle)
    for i in range(n):
        c = _xy(center[row + i])
        ni = _xy(normal[row + i])
        da = wp.dot(_xy(outer[row + i]) - c, ni)
        db = wp.dot(_xy(inner[row + i]) - c, ni)
        a = -(wp.max(-da, -db) - hv) / h
        b = (wp.max(da, db) - hv) / h
        if a > b:  # narrower than the vehicle: the middle of the road
            a = _HALF * (a + b)
            b = a
        lo[base + i] = a
        hi[base + i] = b
        x[base + i] = wp.clamp(_ZERO, a, b)
        best[base + i] = x[base + i]
    kmax = wp.float64(kappa_max_f)
    for _lin in range(linearisations):
        # weights around the last line, the QP bands, then the active-set iterations
        _weights(center, normal, row, n, origin, h, best, base, wt)
        _hband(center, normal, row, n, origin, h, wt, base, 0, d0, d1, d2, g)
        bestf = _objective(center, normal, row, n, origin, h, best, lo, hi, wt, base)
        # warm start at the last line: a bead on a bound starts with the multiplier its
        # gradient gives, -(H x + g)_i (> 0 presses on hi, < 0 on lo), the others free. Zero
        # multipliers would release every bead at once, and from a line already pressed on
        # its bounds that all-free solve can leave the iteration cycling above the start
        for i in range(n):
            x[base + i] = best[base + i]
        for i in range(n):
            mult = _ZERO
            if best[base + i] >= hi[base + i] or best[base + i] <= lo[base + i]:
                mult = -(_hmul(d0, d1, d2, base, n, best, i) + g[base + i])
            lam[base + i] = mult
        for _it in range(iterations):
            for i in range(n):
                s = int(0)
                if (
                    lam[base + i] + (x[base + i] - hi[base + i]) > _ZERO
                    or lo[base + i] >= hi[base + i]
                ):
                    s = 1
                elif lam[base + i] + (x[base + i] - lo[base + i]) < _ZERO:
                    s = -1
                act[base + i] = s
            for j in range(n):
                j1 = _wrap(j + 1, n)
                j2 = _wrap(j + 2, n)
                aj = act[base + j]
                m0[base + j] = d0[base + j] * (_ONE + _PROX)
                m1[base + j] = d1[base + j]
                m2[base + j] = d2[base + j]
                if aj != 0:
                    m0[base + j] = _ONE
                if aj != 0 or act[base + j1] != 0:
                    m1[base + j] = _ZERO
                if aj != 0 or act[base + j2] != 0:
                    m2[base + j] = _ZERO
            for i in range(n):
                bi = lo[base + i]
                if act[base + i] > 0:
                    bi = hi[base + i]
                y[base + i] = bi  # the bound of an active bead (read below)
            for i in range(n):
                if act[base + i] != 0:
                    lam[base + i] = y[base + i]
                else:
                    t = -g[base + i] + _PROX * d0[base + i] * x[base + i]
                    for k in range(1, 3):
                        jp = _wrap(i + k, n)
                        jm = _wrap(i - k, n)
                        cp = d1[base + i]
                        cm = d1[base + jm]
                        if k == 2:
                            cp = d2[base + i]
                            cm = d2[base + jm]
                        if act[base + jp] != 0:
                            t -= cp * y[base + jp]
                        if act[base + jm] != 0:
                            t -= cm * y[base + jm]
                    lam[base + i] = t
            for i in range(n):
                y[base + i] = lam[base + i]
            _factor(m0, m1, m2, base, n, l0, l1, l2, r1, r2)
            _solve(l0, l1, l2, r1, r2, base, n, y)
            for i in range(n):
                mult = _ZERO
                if act[base + i] != 0:
                    mult = -(_hmul(d0, d1, d2, base, n, y, i) + g[base + i])
                lam[base + i] = mult
                x[base + i] = y[base + i]
            f = _objective(center, normal, row, n, origin, h, x, lo, hi, wt, base)
            if f < bestf:
                bestf = f
                for i in range(n):
                    best[base + i] = wp.clamp(x[base + i], lo[base + i], hi[base + i])
        if kappa_max_f > 0.0:
            # ADMM on the box and the linearised curvature bound, warm-started at the box
            # optimum: x = best (box part z1), u1 = multipliers / rho
            _hband(center, normal, row, n, origin, h, wt, base, 1, m0, m1, m2, g)
            _factor(m0, m1, m2, base, n, l0, l1, l2, r1, r2)
            for i in range(n):
                lam[base + i] = _ZERO
                kr = _kappa_row(center, normal, row, i, n, origin, h, wt, base)
                kb = _kappa_centre(center, normal, row, i, n, origin, h, wt, base)
                kx = (
                    kr[0] * best[base + _wrap(i - 1, n)]
                    + kr[1] * best[base + i]
                    + kr[2] * best[base + _wrap(i + 1, n)]
                )
                z2[base + i] = wp.clamp(kx, -kmax * h - kb, kmax * h - kb)
                u2[base + i] = _ZERO
            for _it in range(kappa_iterations):
                for j in range(n):
                    km = _kappa_row(center, normal, row, j - 1, n, origin, h, wt, base)
                    k0 = _kappa_row(center, normal, row, j, n, origin, h, wt, base)
                    kp = _kappa_row(center, normal, row, j + 1, n, origin, h, wt, base)
                    jm = base + _wrap(j - 1, n)
                    jp = base + _wrap(j + 1, n)
                    ktv = (
                        km[2] * (z2[jm] - u2[jm])
                        + k0[1] * (z2[base + j] - u2[base + j])
                        + kp[0] * (z2[jp] - u2[jp])
                    )
                    y[base + j] = -g[base + j] + _RHO * (best[base + j] - lam[base + j] + ktv)
                _solve(l0, l1, l2, r1, r2, base, n, y)
                for i in range(n):
                    kr = _kappa_row(center, normal, row, i, n, origin, h, wt, base)
                    kb = _kappa_centre(center, normal, row, i, n, origin, h, wt, base)
                    kx = (
                        kr[0] * y[base + _wrap(i - 1, n)]
                        + kr[1] * y[base + i]
                        + kr[2] * y[base + _wrap(i + 1, n)]
                    )
                    xh = _ALPHA * y[base + i] + (_ONE - _ALPHA) * best[base + i]
                    z = wp.clamp(xh + lam[base + i], lo[base + i], hi[base + i])
                    lam[base + i] = lam[base + i] + xh - z
                    best[base + i] = z
                    kh = _ALPHA * kx + (_ONE - _ALPHA) * z2[base + i]
                    zk = wp.clamp(kh + u2[base + i], -kmax * h - kb, kmax * h - kb)
                    u2[base + i] = u2[base + i] + kh - zk
                    z2[base + i] = zk
    # the line, its curvature (signed plan-view Menger curvature), the speed profile
    # scratch reused: m0 = curvature, m1 = speed limit, m2 = 3D chord i -> i+1, y = forward
    # pass, lam = backward pass (speeds squared)
    a_lat = wp.float64(a_lat_f)
    a_lon = wp.float64(a_lon_f)
    vmax2 = wp.float64(v_max_f) * wp.float64(v_max_f)
    total = _ZERO
    for i in range(n):
        pm = _centre(center, row, i - 1, n, origin, h) + best[base + _wrap(i - 1, n)] * _nrm(
            normal, row, i - 1, n
        )
        p0 = _centre(center, row, i, n, origin, h) + best[base + i] * _nrm(normal, row, i, n)
        pp = _centre(center, row, i + 1, n, origin, h) + best[base + _wrap(i + 1, n)] * _nrm(
            normal, row, i + 1, n
        )
        ua = p0 - pm
        ub = pp - p0
        cr = ua[0] * ub[1] - ua[1] * ub[0]
        den = wp.length(ua) * wp.length(ub) * wp.length(pp - pm)
        kap = _ZERO
        if den > _ZERO:
            kap = _TWO * cr / (den * h)
        m0[base + i] = kap
        lim = vmax2
        if kap != _ZERO:
            lim = wp.min(vmax2, a_lat / wp.abs(kap))
        m1[base + i] = lim
        zc = wp.float64(center[row + i][2])
        zn = wp.float64(center[row + _wrap(i + 1, n)][2])
        dz = zn - zc
        chord = wp.sqrt(wp.dot(ub, ub) * h * h + dz * dz)
        m2[base + i] = chord
        total += chord
        off = best[base + i] * h
        offset_out[row + i] = float(off)
        cw = center[row + i]
        nw = normal[row + i]
        position_out[row + i] = wp.vec3f(
            float(wp.float64(cw[0]) + off * wp.float64(nw[0])),
            float(wp.float64(cw[1]) + off * wp.float64(nw[1])),
            cw[2],
        )
        curvature_out[row + i] = float(kap)
    # periodic passes from the bead of the lowest speed limit (the profile equals it there)
    i0 = int(0)
    for i in range(n):
        if m1[base + i] < m1[base + i0]:
            i0 = i
    y[base + i0] = m1[base + i0]
    lam[base + i0] = m1[base + i0]
    for q in range(1, n):
        i = _wrap(i0 + q, n)
        ip = _wrap(i - 1, n)
        v2 = y[base + ip]
        y[base + i] = wp.min(
            m1[base + i], v2 + _TWO * _ax(v2, m0[base + ip], a_lat, a_lon) * m2[base + ip]
        )
    for q in range(1, n):
        i = _wrap(i0 - q, n)
        inx = _wrap(i + 1, n)
        v2 = lam[base + inx]
        lam[base + i] = wp.min(
            m1[base + i], v2 + _TWO * _ax(v2, m0[base + inx], a_lat, a_lon) * m2[base + i]
        )
    lap = _ZERO
    for i in range(n):
        v = wp.sqrt(wp.min(y[base + i], lam[base + i]))
        m1[base + i] = v
        speed_out[row + i] = float(v)
    for i in range(n):
        lap += _TWO * m2[base + i] / (m1[base + i] + m1[base + _wrap(i + 1, n)])
    lap_time_out[e] = float(lap)
    length_out[e] = float(total)
    for i in range(n, n_max):
        offset_out[row + i] = _NAN
        position_out[row + i] = nan3
        curvature_out[row + i] = _NAN
        speed_out[row + i] = _NAN


@wp.kernel
def _sample_kernel(
    # inputs
    arclen: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    offset: wp.array(dtype=wp.float32),
    speed: wp.array(dtype=wp.float32),
    s: wp.array(dtype=wp.float32),
    # static
    n_max: int,
    # outputs
    offset_out: wp.array(dtype=wp.float32),
    speed_out: wp.array(dtype=wp.float32),
):
    """Env e's racing-line offset and target speed at arc ``s[e]`` of its centre line (taken
    modulo the loop's length), linear between the two beads around it; NaN for an invalid
    env, a loop of fewer than 2 beads, a non-finite ``s`` or a line that is NaN there."""
    e = wp.tid()
    n = count[e]
    total = length[e]
    u = s[e]
    offset_out[e] = _NAN
    speed_out[e] = _NAN
    if valid[e] == 0 or n < 2 or n > n_max or not (total > 0.0) or not wp.isfinite(u):
        return
    if not wp.isfinite(total):
        return
    u = u - wp.floor(u / total) * total  # into [0, total)
    u = wp.clamp(u, 0.0, total)
    row = e * n_max
    i = bead_at_arc(arclen, row, n, u)
    j = i + 1
    end = total
    if j < n:
        end = arclen[row + j]
    else:
        j = 0
    seg = end - arclen[row + i]
    t = float(0.0)
    if seg > 0.0:
        t = wp.clamp((u - arclen[row + i]) / seg, 0.0, 1.0)
    offset_out[e] = offset[row + i] + t * (offset[row + j] - offset[row + i])
    speed_out[e] = speed[row + i] + t * (speed[row + j] - speed[row + i])
