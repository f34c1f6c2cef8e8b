"""The minimum-time planner's kernel: one thread per env, a primal-dual interior-point method
on a piecewise-constant-thrust transcription (float64 inside, float32 out).

The problem, scaled per env (lengths by ``L0``, the mean segment length; accelerations by
``t_max``; times by ``sqrt(L0 / t_max)``; speeds by ``sqrt(L0 t_max)``): the point mass flies
the segments ``k = 0 .. S-1`` between the points ``P_k`` and ``P_{k+1}`` (closed: ``P_S = P_0``),
segment ``k`` in ``M`` equal intervals of ``h_k = tau_k / M`` with a constant thrust ``u_kj``
(acceleration ``u_kj + g``) each. Unknowns: ``tau_k``, ``u_kj`` and the velocities ``w_k`` at the
points (fixed at the ends of an open path). Minimise ``sum_k tau_k`` subject to, per segment,

* ``E_v = h sum_j u_j + g tau + w_k - w_{k+1} = 0`` (its end velocity),
* ``E_p = h^2 sum_j c_j u_j + g tau^2 / 2 + w_k tau - (P_{k+1} - P_k) = 0``, ``c_j = M - j - 1/2``
  (its end position),

and the inequalities ``|u_kj| < 1`` (the thrust ball), ``|v| < V`` at the interval nodes
``v_i = w_k + h (g i + sum_{j<i} u_j)`` and at the free points, ``tau_k > 0``. With constant
thrust on an interval the acceleration is constant there and the velocity linear, so the two
bounds hold along the whole trajectory, not only at the samples.

Each iteration is a Newton step on the primal-dual barrier equations (multipliers ``lam`` of
the equalities, ``z`` of the inequalities, barrier weight ``mu``). The step is solved per
segment: its thrusts first (their Hessian block is positive definite: a dense Cholesky of
``3M x 3M``), then its duration and six multipliers (a 7 x 7 saddle system with a scalar inertia
check on the duration), which leaves a block-tridiagonal (closed path: cyclic) system of the
free point velocities, solved by a block Cholesky with a diagonal shift when it is not positive
definite. A backtracking line search on the l1 merit ``sum tau - mu sum log(slack) + nu |E|_1``
keeps every slack above 1% of its value (fraction to the boundary). ``mu`` falls (x0.2, or
``mu^1.5``) each time the step's KKT error is below ``10 mu``, down to ``MU_MIN``; an env stops
once it has converged there, or when its iteration budget is spent. The start (rest to rest
on each segment, a straight bang-bang at half the reachable thrust) passes through every
point, and the best iterate that does (``|E| <= FEAS_TOL``) is the answer: a budget too small
to converge still returns a trajectory through every point.
"""

from __future__ import annotations

import warp as wp

from ...core.extents import in_range3
from .linalg import (
    add3,
    add33,
    bwd3,
    chol3,
    chol_solve3,
    col3,
    dense_chol,
    dense_solve,
    fwd3,
    fwd33,
    get3,
    get33,
    noinline_func,
    set3,
    set33,
)

wp.set_module_options({"enable_backward": False, "max_unroll": 1})

_NAN = wp.constant(float("nan"))
_ZERO = wp.constant(wp.float64(0.0))
_HALF = wp.constant(wp.float64(0.5))
_ONE = wp.constant(wp.float64(1.0))
_TWO = wp.constant(wp.float64(2.0))
_FOUR = wp.constant(wp.float64(4.0))
_HUGE = wp.constant(wp.float64(1.0e300))

#: Starting barrier weight, its floor and its decrease (``mu <- max(MU_MIN, min(MU_FACTOR mu,
#: mu^1.5))`` once the KKT error is below ``KAPPA_EPS * mu``).
MU0 = 0.1
MU_MIN = 1.0e-9
MU_FACTOR = 0.2
KAPPA_EPS = 10.0
#: Fraction to the boundary: a step keeps every slack and multiplier above this share of it.
BOUNDARY = 0.01
#: Backtracking halvings of a line search.
LINE_SEARCH = 30
#: Largest |E_v|, |E_p| (scaled units: fractions of the mean segment length) of an iterate
#: that counts as passing through every point.
FEAS_TOL = 1.0e-8
#: Points closer than this fraction of the path's bounding-box diagonal to the previous kept
#: point are merged into it.
MERGE_TOL = 1.0e-9
#: Largest KKT stationarity residual (scaled units) of a converged env, at ``MU_MIN``.
RES_TOL = 1.0e-5
#: The residual below which an env whose line search fails at ``MU_MIN`` has converged (the
#: merit's decrease is then below its rounding).
STALL_TOL = 1.0e-3
#: Multiplier safeguard: ``z`` stays within ``[mu / (Z_SAFE g), Z_SAFE mu / g]``.
Z_SAFE = 1.0e10

_MU0 = wp.constant(wp.float64(MU0))
_MU_MIN = wp.constant(wp.float64(MU_MIN))
_MU_FACTOR = wp.constant(wp.float64(MU_FACTOR))
_KAPPA_EPS = wp.constant(wp.float64(KAPPA_EPS))
_BOUNDARY = wp.constant(wp.float64(BOUNDARY))
_LINE_SEARCH = wp.constant(LINE_SEARCH)
_FEAS_TOL = wp.constant(wp.float64(FEAS_TOL))
_MERGE_TOL = wp.constant(wp.float64(MERGE_TOL))
_Z_SAFE = wp.constant(wp.float64(Z_SAFE))
_RES_TOL = wp.constant(wp.float64(RES_TOL))
_STALL_TOL = wp.constant(wp.float64(STALL_TOL))
_ARMIJO = wp.constant(wp.float64(1.0e-4))
#: Largest relative change of a duration in one step.
STEP_TAU = 0.3
_STEP_TAU = wp.constant(wp.float64(STEP_TAU))


#: Status bits (``MinTimeStatus``).
ST_INPUT = wp.constant(1)
ST_DEGENERATE = wp.constant(2)
ST_BOUNDARY_SPEED = wp.constant(4)
ST_NOT_CONVERGED = wp.constant(8)
ST_NO_TRAJECTORY = wp.constant(16)

#: Floats of the per-segment store of the elimination (``Y`` 11 columns of 3M, the 7 x 7 table
#: of ``(xB, xr)`` and ``(yB, yr)``, the duration shift 1): ``33 M + 50``.
_YS_PER_M = 33
_YS_EXTRA = 50
#: Floats of the per-point record of the velocity system (``D, O, R, L, Lsub, Z, B, y, x, Rz``).
_BR = 66
_BD = 0
_BO = 9
_BRR = 18
_BL = 21
_BLS = 30
_BZ = 39
_BB = 48
_BY = 57
_BX = 60
_BRZ = 63


def layout_sizes(cap: int, m: int) -> dict:
    """Per-env float64 counts of each scratch array for ``cap`` points and ``m`` samples."""
    return {
        "x": cap + 3 * cap * m + 3 * (cap + 1),
        "z": cap + cap * m + cap * (m - 1) + (cap + 1),
        "lam": 6 * cap,
        "ys": cap * (_YS_PER_M * m + _YS_EXTRA),
        "hw": 66 * m + 128,
        "bs": (cap + 1) * _BR,
    }


# ------------------------------------------------------------------------------ state access
@wp.struct
class _Env:
    """One env's scaled problem and where its data lie in the flat scratch arrays: set once
    per thread by the kernel and passed to the planner's functions."""

    cap: int  # capacity K (points per env)
    m: int  # intervals per segment M
    ns: int  # segments
    closed: int  # 1: a closed course
    fm: wp.float64  # M as a float
    g: wp.vec3d  # gravity
    v2: wp.float64  # squared speed bound
    a2: wp.float64  # squared thrust bound
    nx: int  # floats of a state (durations, thrusts, point velocities)
    xb: int  # the env's base in the state arrays (x, xt, xbest, dx)
    zb: int  # in the inequality multipliers (z, dz)
    lb: int  # in the equality multipliers (lam, dlam)
    pb: int  # in the scaled points
    hb: int  # in the work array
    yb: int  # in the elimination store
    bb: int  # in the velocity system


@wp.func
def _layout(e: int, cap: int, m: int, closed: int) -> _Env:
    """Env ``e``'s sizes and bases in the scratch arrays (per env: :func:`layout_sizes`); its
    problem (``ns``, ``g``, ``v2``, ``a2``) is set once scaled."""
    env = _Env()
    env.cap = cap
    env.m = m
    env.closed = closed
    env.fm = wp.float64(m)
    env.nx = cap + 3 * cap * m + 3 * (cap + 1)
    env.xb = e * env.nx
    env.zb = e * (cap + cap * m + cap * (m - 1) + (cap + 1))
    env.lb = e * 6 * cap
    env.pb = e * (cap + 1)
    env.hb = e * (66 * m + 128)
    env.yb = e * cap * (_YS_PER_M * m + _YS_EXTRA)
    env.bb = e * (cap + 1) * _BR
    return env


@wp.func
def _wix(k: int, ns: int, closed: int) -> int:
    """Velocity slot of point ``k`` (a closed path's point ``ns`` is point 0)."""
    j = k
    if closed != 0 and k >= ns:
        j = k - ns
    return j


@wp.func
def _free(k: int, ns: int, closed: int) -> int:
    """1 when the velocity of point ``k`` is an unknown."""
    out = int(1)
    if closed == 0 and (k == 0 or k == ns):
        out = 0
    return out


@wp.func
def _xu(env: _Env, k: int, j: int) -> int:
    """Index in a state array of the thrust ``u_kj`` (3 floats)."""
    return env.xb + env.cap + 3 * (k * env.m + j)


@wp.func
def _xw(env: _Env, k: int) -> int:
    """Index in a state array of the velocity ``w_k`` of point ``k`` (3 floats)."""
    return env.xb + env.cap + 3 * env.cap * env.m + 3 * _wix(k, env.ns, env.closed)


@wp.func
def _ys(env: _Env, k: int) -> int:
    """Base in the elimination store of segment ``k``'s record."""
    return env.yb + k * (_YS_PER_M * env.m + _YS_EXTRA)


@wp.func
def _zu(env: _Env, k: int, j: int) -> int:
    """Index in a multiplier array of the thrust bound of ``u_kj``."""
    return env.zb + env.cap + k * env.m + j


@wp.func
def _zv(env: _Env, k: int, i: int) -> int:
    """Index in a multiplier array of the speed bound at node ``i`` (1..M-1) of segment ``k``."""
    return env.zb + env.cap + env.cap * env.m + k * (env.m - 1) + i - 1


@wp.func
def _zw(env: _Env, k: int) -> int:
    """Index in a multiplier array of the speed bound at point ``k``."""
    return env.zb + env.cap + env.cap * env.m + env.cap * (env.m - 1) + k


@wp.func
def _cj(m: int, j: int) -> wp.float64:
    return wp.float64(m - j) - _HALF


@wp.func
def _sums(y: wp.array(dtype=wp.float64), yb: int, m: int) -> tuple[wp.vec3d, wp.vec3d]:
    """``(sum_j X_j, sum_j c_j X_j)`` of the ``M`` 3-vectors ``X_j`` at ``y[yb]`` (a segment's
    thrusts, or a column of its thrust block)."""
    a = wp.vec3d()
    b = wp.vec3d()
    for j in range(m):
        xj = get3(y, yb + 3 * j)
        a = a + xj
        b = b + _cj(m, j) * xj
    return a, b


@wp.func
def _c_sums(m: int) -> tuple[wp.float64, wp.float64]:
    """``(sum_j c_j, sum_j c_j^2)``."""
    s1 = _ZERO
    s2 = _ZERO
    for j in range(m):
        cj = _cj(m, j)
        s1 += cj
        s2 += cj * cj
    return s1, s2


@wp.func
def _seg_e(
    pts: wp.array(dtype=wp.vec3d),
    env: _Env,
    k: int,
    tau: wp.float64,
    h: wp.float64,
    va: wp.vec3d,
    vb: wp.vec3d,
    u1: wp.vec3d,
    u2: wp.vec3d,
) -> tuple[wp.vec3d, wp.vec3d]:
    """``(E_v, E_p)`` of segment ``k`` from its duration ``tau`` (``h = tau / M``), end
    velocities and thrust sums ``u1 = sum u_j``, ``u2 = sum c_j u_j``."""
    ev = h * u1 + tau * env.g + va - vb
    dp = pts[env.pb + k + 1] - pts[env.pb + k]
    ep = h * h * u2 + _HALF * tau * tau * env.g + tau * va - dp
    return ev, ep


@wp.func
def _seg_jt(
    env: _Env, tau: wp.float64, va: wp.vec3d, u1: wp.vec3d, u2: wp.vec3d
) -> tuple[wp.vec3d, wp.vec3d]:
    """``(dE_v / dtau, dE_p / dtau)`` of a segment (arguments as :func:`_seg_e`)."""
    fm = env.fm
    jtv = u1 / fm + env.g
    jtp = (_TWO * tau / (fm * fm)) * u2 + tau * env.g + va
    return jtv, jtp


@wp.func
def _seg_c(
    x: wp.array(dtype=wp.float64), pts: wp.array(dtype=wp.vec3d), env: _Env, k: int
) -> tuple[wp.vec3d, wp.vec3d]:
    """``(E_v, E_p)`` of segment ``k`` at the state ``x``."""
    tau = x[env.xb + k]
    u1, u2 = _sums(x, _xu(env, k, 0), env.m)
    return _seg_e(
        pts, env, k, tau, tau / env.fm, get3(x, _xw(env, k)), get3(x, _xw(env, k + 1)), u1, u2
    )


@noinline_func
def _project(x: wp.array(dtype=wp.float64), pts: wp.array(dtype=wp.vec3d), env: _Env, k: int):
    """Restore ``E_v = E_p = 0`` of segment ``k`` by the least change of its thrusts
    (``du_j = -(p + c_j q)``, the two equations solved for ``p`` and ``q``), its duration and
    end velocities kept."""
    m = env.m
    fm = env.fm
    h = x[env.xb + k] / fm
    ev, ep = _seg_c(x, pts, env, k)
    s1, s2 = _c_sums(m)
    det = fm * s2 - s1 * s1
    a = ev / h
    b = ep / (h * h)
    p = (s2 * a - s1 * b) / det
    q = (fm * b - s1 * a) / det
    for j in range(m):
        o = _xu(env, k, j)
        set3(x, o, get3(x, o) - (p + _cj(m, j) * q))


@wp.func
def _speed_hessian(zi: wp.float64, gi: wp.float64, v: wp.vec3d) -> wp.mat33d:
    """``4 z / g v v^T + 2 z I``: the Hessian block of a speed bound's barrier at ``v`` (slack
    ``g``, multiplier ``z``)."""
    eye = wp.identity(n=3, dtype=wp.float64)
    return (_FOUR * zi / gi) * wp.outer(v, v) + (_TWO * zi) * eye


@wp.func
def _abs_max(r: wp.float64, v: wp.vec3d) -> wp.float64:
    """``max(r, |v|_inf)``."""
    return wp.max(r, wp.max(wp.abs(v[0]), wp.max(wp.abs(v[1]), wp.abs(v[2]))))


@wp.func
def _copy(dst: wp.array(dtype=wp.float64), src: wp.array(dtype=wp.float64), env: _Env):
    """The state ``src`` into ``dst``."""
    for i in range(env.nx):
        dst[env.xb + i] = src[env.xb + i]


@wp.func
def _total(x: wp.array(dtype=wp.float64), env: _Env) -> wp.float64:
    """``sum_k tau_k`` of the state ``x``."""
    out = _ZERO
    for k in range(env.ns):
        out += x[env.xb + k]
    return out


# ------------------------------------------------------------------------------ multipliers
#: What :func:`_slacks` does at each inequality: ``z = mu / g`` (the start), the multiplier
#: step ``dz`` and the barrier's slope along ``dx``, or the safeguard of ``z`` around ``mu / g``.
_Z_START = wp.constant(0)
_Z_STEP = wp.constant(1)
_Z_SAFEGUARD = wp.constant(2)


@wp.func
def _z_at(
    mode: int,
    z: wp.array(dtype=wp.float64),
    dz: wp.array(dtype=wp.float64),
    i: int,
    gs: wp.float64,
    dgs: wp.float64,
    mu: wp.float64,
) -> wp.float64:
    """``mode``'s work at the multiplier ``z[i]`` of the slack ``gs`` (its step ``dgs``); returns
    the slack's term ``-mu dgs / gs`` of the barrier's slope (``_Z_STEP``), else 0."""
    out = _ZERO
    if mode == _Z_START:
        z[i] = mu / gs
    elif mode == _Z_STEP:
        zi = z[i]
        dz[i] = (mu - gs * zi) / gs - (zi / gs) * dgs
        out = -mu * dgs / gs
    else:
        z[i] = wp.clamp(z[i], mu / (_Z_SAFE * gs), _Z_SAFE * mu / gs)
    return out


@noinline_func
def _slacks(
    mode: int,
    x: wp.array(dtype=wp.float64),
    dx: wp.array(dtype=wp.float64),
    z: wp.array(dtype=wp.float64),
    dz: wp.array(dtype=wp.float64),
    env: _Env,
    mu: wp.float64,
) -> wp.float64:
    """Every inequality of the state ``x`` (durations, thrust balls, node speeds, free-point
    speeds): its slack ``g`` and, with ``_Z_STEP``, its step ``dg`` along ``dx``, and
    :func:`_z_at`'s work for ``mode`` at its multiplier. Returns the step's slope of the
    barrier objective ``sum tau - mu sum log g`` (``_Z_STEP``; else 0)."""
    m = env.m
    step = mode == _Z_STEP
    dphi = _ZERO
    for k in range(env.ns):
        tau = x[env.xb + k]
        dtau = _ZERO
        if step:
            dtau = dx[env.xb + k]
        dphi += dtau + _z_at(mode, z, dz, env.zb + k, tau, dtau, mu)
        h = tau / env.fm
        dh = dtau / env.fm
        va = get3(x, _xw(env, k))
        dva = wp.vec3d()
        if step:
            dva = get3(dx, _xw(env, k))
        sx = wp.vec3d()
        dsum = wp.vec3d()
        for j in range(m):
            uj = get3(x, _xu(env, k, j))
            duj = wp.vec3d()
            if step:
                duj = get3(dx, _xu(env, k, j))
            gu = env.a2 - wp.dot(uj, uj)
            dg = -_TWO * wp.dot(uj, duj)
            dphi += _z_at(mode, z, dz, _zu(env, k, j), gu, dg, mu)
            if j > 0:
                sx = sx + get3(x, _xu(env, k, j - 1))
                if step:
                    dsum = dsum + get3(dx, _xu(env, k, j - 1))
                gi = wp.float64(j) * env.g + sx
                vi = va + h * gi
                dvi = dva + dh * gi + h * dsum
                gv = env.v2 - wp.dot(vi, vi)
                dgv = -_TWO * wp.dot(vi, dvi)
                dphi += _z_at(mode, z, dz, _zv(env, k, j), gv, dgv, mu)
    for k in range(env.ns + 1 - env.closed):
        if _free(k, env.ns, env.closed) == 1:
            wk = get3(x, _xw(env, k))
            dwk = wp.vec3d()
            if step:
                dwk = get3(dx, _xw(env, k))
            gw = env.v2 - wp.dot(wk, wk)
            dgw = -_TWO * wp.dot(wk, dwk)
            dphi += _z_at(mode, z, dz, _zw(env, k), gw, dgw, mu)
    return dphi


@wp.func
def _z_entries(
    z: wp.array(dtype=wp.float64),
    dz: wp.array(dtype=wp.float64),
    env: _Env,
    az: wp.float64,
    apply: int,
) -> wp.float64:
    """Over the multipliers in use (durations, thrusts, nodes, free points), in index order:
    ``apply = 0``: ``az`` lowered so that every ``z + az dz >= BOUNDARY z`` (fraction to the
    boundary); ``apply = 1``: ``z += az dz`` (``az`` returned)."""
    out = az
    for part in range(4):
        lo = env.zb  # durations
        n = env.ns
        if part == 1:  # thrusts
            lo = _zu(env, 0, 0)
            n = env.ns * env.m
        elif part == 2:  # nodes
            lo = _zv(env, 0, 1)
            n = env.ns * (env.m - 1)
        elif part == 3:  # points
            lo = _zw(env, 0)
            n = env.ns + 1 - env.closed
        for i in range(n):
            if part < 3 or _free(i, env.ns, env.closed) == 1:
                if apply == 0:
                    d = dz[lo + i]
                    if d < _ZERO:
                        out = wp.min(out, (_ONE - _BOUNDARY) * z[lo + i] / (-d))
                else:
                    z[lo + i] = z[lo + i] + az * dz[lo + i]
    return out


# ------------------------------------------------------------------------------ evaluation
@noinline_func
def _evaluate(
    x: wp.array(dtype=wp.float64),
    ref: wp.array(dtype=wp.float64),
    use_ref: int,
    pts: wp.array(dtype=wp.vec3d),
    env: _Env,
    mu: wp.float64,
) -> tuple[wp.float64, wp.float64, wp.float64, int]:
    """``(sum tau - mu sum log slack, |E|_1, |E|_inf, ok)`` of the state ``x``; ``ok`` is 0
    when a slack is not > 0 or (``use_ref``) below ``BOUNDARY`` times its value at ``ref``."""
    m = env.m
    g = env.g
    ok = int(1)
    obj = _ZERO
    logs = _ZERO
    c1 = _ZERO
    cinf = _ZERO
    for k in range(env.ns):
        tau = x[env.xb + k]
        va = get3(x, _xw(env, k))
        vb = get3(x, _xw(env, k + 1))
        tr = _ZERO
        var = va
        if use_ref != 0:
            tr = ref[env.xb + k]
            var = get3(ref, _xw(env, k))
        if not (tau > _BOUNDARY * tr):
            ok = 0
        else:
            obj += tau
            logs += wp.log(tau)
        h = tau / env.fm
        hr = tr / env.fm
        u1 = wp.vec3d()
        u2 = wp.vec3d()
        sx = wp.vec3d()
        sr = wp.vec3d()
        for j in range(m):
            uj = get3(x, _xu(env, k, j))
            gu = env.a2 - wp.dot(uj, uj)
            gur = _ZERO
            if use_ref != 0:
                ur = get3(ref, _xu(env, k, j))
                gur = env.a2 - wp.dot(ur, ur)
                if j > 0:
                    sr = sr + get3(ref, _xu(env, k, j - 1))
            if not (gu > _BOUNDARY * gur):
                ok = 0
            else:
                logs += wp.log(gu)
            u1 = u1 + uj
            u2 = u2 + _cj(m, j) * uj
            if j > 0:
                sx = sx + get3(x, _xu(env, k, j - 1))
                vi = va + h * (wp.float64(j) * g + sx)
                gv = env.v2 - wp.dot(vi, vi)
                gvr = _ZERO
                if use_ref != 0:
                    vr = var + hr * (wp.float64(j) * g + sr)
                    gvr = env.v2 - wp.dot(vr, vr)
                if not (gv > _BOUNDARY * gvr):
                    ok = 0
                else:
                    logs += wp.log(gv)
        ev, ep = _seg_e(pts, env, k, tau, h, va, vb, u1, u2)
        for i in range(3):
            c1 += wp.abs(ev[i]) + wp.abs(ep[i])
            cinf = wp.max(cinf, wp.max(wp.abs(ev[i]), wp.abs(ep[i])))
    for k in range(env.ns + 1 - env.closed):
        if _free(k, env.ns, env.closed) == 1:
            wk = get3(x, _xw(env, k))
            gw = env.v2 - wp.dot(wk, wk)
            gwr = _ZERO
            if use_ref != 0:
                wr = get3(ref, _xw(env, k))
                gwr = env.v2 - wp.dot(wr, wr)
            if not (gw > _BOUNDARY * gwr):
                ok = 0
            else:
                logs += wp.log(gw)
    if not (wp.isfinite(c1) and wp.isfinite(logs)):
        ok = 0
    return obj - mu * logs, c1, cinf, ok


# ------------------------------------------------------------------------------ one segment
@noinline_func
def _segment_nodes(
    x: wp.array(dtype=wp.float64),
    z: wp.array(dtype=wp.float64),
    env: _Env,
    k: int,
    mu: wp.float64,
    hw: wp.array(dtype=wp.float64),
):
    """The node quantities of segment ``k`` in ``hw`` (layout: :func:`_hw`): the node
    velocities ``v_i`` and ``d_i = (g i + S_i) / M``, the speed terms
    ``Q_i = 4 z_i / g_i v_i v_i^T + 2 z_i I`` and their suffix sums ``P_j = sum_{i>j} Q_i``,
    ``q_j = sum_{i>j} (h Q_i d_i + 2 z_i v_i / M)``, ``E_j = sum_{i>j} 2 mu v_i / g_i`` and
    ``Ez_j = sum_{i>j} 2 z_i v_i``. The thrust block of the Hessian is
    ``H_uu[j, j'] = h^2 P_max(j, j') + delta_jj' T_j``."""
    m = env.m
    o_v, o_p, o_q, o_e, o_ez, o_d, o_h, o_ql = _hw(env.hb, m)
    tau = x[env.xb + k]
    h = tau / env.fm
    va = get3(x, _xw(env, k))
    sx = wp.vec3d()
    for i in range(1, m):
        sx = sx + get3(x, _xu(env, k, i - 1))
        di = (wp.float64(i) * env.g + sx) / env.fm
        set3(hw, o_d + 3 * i, di)
        set3(hw, o_v + 3 * i, va + tau * di)
    # suffix sums from the last node down
    pacc = wp.mat33d()
    qacc = wp.vec3d()
    eacc = wp.vec3d()
    ezacc = wp.vec3d()
    for t in range(m):
        j = m - 1 - t
        set33(hw, o_p + 9 * j, pacc)
        set3(hw, o_q + 3 * j, qacc)
        set3(hw, o_e + 3 * j, eacc)
        set3(hw, o_ez + 3 * j, ezacc)
        if j >= 1:  # node j joins the sums of the intervals before it
            vi = get3(hw, o_v + 3 * j)
            di = get3(hw, o_d + 3 * j)
            gi = env.v2 - wp.dot(vi, vi)
            zi = z[_zv(env, k, j)]
            qi = _speed_hessian(zi, gi, vi)
            set33(hw, o_ql + 9 * j, qi)
            pacc = pacc + qi
            qacc = qacc + h * (qi * di) + (_TWO * zi / env.fm) * vi
            eacc = eacc + (_TWO * mu / gi) * vi
            ezacc = ezacc + (_TWO * zi) * vi


@noinline_func
def _riccati_factor(
    x: wp.array(dtype=wp.float64),
    z: wp.array(dtype=wp.float64),
    env: _Env,
    k: int,
    h: wp.float64,
    shift: wp.float64,
    hw: wp.array(dtype=wp.float64),
) -> int:
    """Factor ``H_uu`` (plus ``shift`` on its diagonal) as the discrete LQ problem it is:
    ``u^T H u = sum_j u_j^T T_j u_j + h^2 sum_i s_i^T Q_i s_i`` with ``s_{j+1} = s_j + u_j``,
    ``s_0 = 0``. Backward Riccati recursion ``K_j = T_j + V_{j+1}`` (its Cholesky factor),
    ``G_j = K_j^-1 V_{j+1}``, ``V_j = h^2 Q_j + V_{j+1} - V_{j+1} G_j`` (``V_M = 0``), stored per
    interval for :func:`_riccati_solve`. Returns 0 when a ``K_j`` is not positive definite
    (rounding only: ``T_j >= 2 z I``)."""
    m = env.m
    o_l, o_g, o_vv = _hw_riccati(env.hb, m)
    o_v, o_p, o_q, o_e, o_ez, o_d, o_h, o_ql = _hw(env.hb, m)
    eye = wp.identity(n=3, dtype=wp.float64)
    vn = wp.mat33d()  # V_{j+1}
    ok = int(1)
    for t in range(m):
        j = m - 1 - t
        if ok == 1:
            uj = get3(x, _xu(env, k, j))
            gu = env.a2 - wp.dot(uj, uj)
            zj = z[_zu(env, k, j)]
            kj = (_FOUR * zj / gu) * wp.outer(uj, uj) + (_TWO * zj + shift) * eye + vn
            lj, okj = chol3(kj)
            if okj == 0:
                ok = 0
            else:
                gj = wp.matrix_from_cols(
                    chol_solve3(lj, col3(vn, 0)),
                    chol_solve3(lj, col3(vn, 1)),
                    chol_solve3(lj, col3(vn, 2)),
                )
                set33(hw, o_l + 9 * j, lj)
                set33(hw, o_g + 9 * j, gj)
                set33(hw, o_vv + 9 * j, vn)
                if j >= 1:
                    nv = (h * h) * get33(hw, o_ql + 9 * j) + vn - vn * gj
                    vn = _HALF * (nv + wp.transpose(nv))
    return ok


@wp.func
def _riccati_solve(
    hw: wp.array(dtype=wp.float64), hb: int, m: int, y: wp.array(dtype=wp.float64), yb: int
):
    """``y[yb : yb + 3M] <- H_uu^-1 y`` with the factor of :func:`_riccati_factor`: backward
    ``g_j = K_j^-1 (b_j - p_{j+1})``, ``p_j = p_{j+1} + V_{j+1} g_j``, then forward
    ``u_j = g_j - G_j s_j``, ``s_{j+1} = s_j + u_j``."""
    o_l, o_g, o_vv = _hw_riccati(hb, m)
    p = wp.vec3d()
    for t in range(m):
        j = m - 1 - t
        lj = get33(hw, o_l + 9 * j)
        gj = chol_solve3(lj, get3(y, yb + 3 * j) - p)
        set3(y, yb + 3 * j, gj)
        p = p + get33(hw, o_vv + 9 * j) * gj
    s = wp.vec3d()
    for j in range(m):
        uj = get3(y, yb + 3 * j) - get33(hw, o_g + 9 * j) * s
        set3(y, yb + 3 * j, uj)
        s = s + uj


@wp.func
def _hw(hb: int, m: int) -> tuple[int, int, int, int, int, int, int, int]:
    """Offsets in the per-env work array of the node data: ``v_i`` (3 per node), ``P_j`` (9),
    ``q_j``, ``E_j``, ``Ez_j``, ``d_i``, ``h_ut`` (3 each), ``Q_i`` (9)."""
    o_v = hb
    o_p = o_v + 3 * m
    o_q = o_p + 9 * m
    o_e = o_q + 3 * m
    o_ez = o_e + 3 * m
    o_d = o_ez + 3 * m
    o_h = o_d + 3 * m
    o_ql = o_h + 3 * m
    return o_v, o_p, o_q, o_e, o_ez, o_d, o_h, o_ql


@wp.func
def _hw_riccati(hb: int, m: int) -> tuple[int, int, int]:
    """Offsets of the Riccati factor: ``L_j``, ``G_j``, ``V_{j+1}`` (9 per interval each),
    after the node data (:func:`_hw`)."""
    o_l = hb + 36 * m
    return o_l, o_l + 9 * m, o_l + 18 * m


@wp.func
def _hw_small(hb: int, m: int) -> tuple[int, int, int]:
    """Offsets of ``Sigma`` (36), two 6-vectors (12) and ``B7`` (49), after the factor."""
    o_sg = hb + 63 * m
    return o_sg, o_sg + 36, o_sg + 48


@wp.func
def _ju(y: wp.array(dtype=wp.float64), yb: int, m: int, h: wp.float64) -> tuple[wp.vec3d, wp.vec3d]:
    """``J_u X`` of a thrust column ``X`` (``3M`` at ``y[yb]``):
    ``(h sum X_j, h^2 sum c_j X_j)``."""
    a, b = _sums(y, yb, m)
    return h * a, (h * h) * b


@wp.func
def _h_dot(
    hw: wp.array(dtype=wp.float64), o_h: int, y: wp.array(dtype=wp.float64), yb: int, m: int
) -> wp.float64:
    """``h_ut^T X`` of a thrust column ``X`` (``3M`` at ``y[yb]``; ``h_ut`` at ``hw[o_h]``)."""
    out = _ZERO
    for j in range(m):
        out += wp.dot(get3(hw, o_h + 3 * j), get3(y, yb + 3 * j))
    return out


@noinline_func
def _segment_assemble(
    x: wp.array(dtype=wp.float64),
    lam: wp.array(dtype=wp.float64),
    z: wp.array(dtype=wp.float64),
    pts: wp.array(dtype=wp.vec3d),
    env: _Env,
    k: int,
    mu: wp.float64,
    hw: wp.array(dtype=wp.float64),
    ys: wp.array(dtype=wp.float64),
    yb: int,
    bs: wp.array(dtype=wp.float64),
) -> wp.float64:
    """Eliminate segment ``k``'s thrusts, duration and multipliers: store what the back
    substitution needs at ``ys[yb]`` and add the segment's reduced blocks to the velocity system
    ``bs``. Returns the largest KKT stationarity residual of its thrusts and duration.

    Per segment, with ``H`` the thrust block, ``Y = H^-1 [h_ut, J_u^T, H_u,va, r_u]``, the
    duration-multiplier system ``G7 = [[a, b^T], [b, -Sigma]]`` (``a = H_tt - h_ut Y_t``,
    ``b = J_t - J_u Y_t``, ``Sigma = J_u H^-1 J_u^T``) couples to the velocities through
    ``B7`` (7 x 6) with right-hand side ``R7``; the velocities see
    ``W_ww - W_wu Y_w - B7^T G7^-1 B7`` and ``r_w - W_wu Y_r - B7^T G7^-1 R7``."""
    m = env.m
    g = env.g
    n = 3 * m
    o_v, o_p, o_q, o_e, o_ez, o_d, o_h, o_ql = _hw(env.hb, m)
    # Sigma (6x6, then its factor in place); Sigma^-1 b and Sigma^-1 q (6 each); B7 and R7:
    # 7 columns of (p, q[6])
    o_sg, o_t, o_b7 = _hw_small(env.hb, m)
    fm = env.fm
    tau = x[env.xb + k]
    h = tau / fm
    ka = _wix(k, env.ns, env.closed)
    kb = _wix(k + 1, env.ns, env.closed)
    va = get3(x, _xw(env, k))
    vb = get3(x, _xw(env, k + 1))
    lv = get3(lam, env.lb + 6 * k)
    lp = get3(lam, env.lb + 6 * k + 3)
    u1, u2 = _sums(x, _xu(env, k, 0), m)
    ev, ep = _seg_e(pts, env, k, tau, h, va, vb, u1, u2)
    jtv, jtp = _seg_jt(env, tau, va, u1, u2)
    # the thrust block, shifted while not positive definite (rounding only: it is
    # 2 z_u I + PSD terms)
    _segment_nodes(x, z, env, k, mu, hw)
    shift = _ZERO
    for attempt in range(4):
        if _riccati_factor(x, z, env, k, h, shift, hw) == 1:
            break
        shift = wp.float64(1.0e-12) * wp.pow(wp.float64(1.0e4), wp.float64(attempt))
        for j in range(m):
            shift = wp.max(shift, wp.float64(1.0e-12) * z[_zu(env, k, j)])
    # the duration's Hessian entries and gradients (nodes i = 1..M-1)
    htt = wp.dot(lp, (_TWO / (fm * fm)) * u2 + g) + z[env.zb + k] / tau
    htv = lp  # d2 / dtau dva
    gtau = _ONE - mu / tau  # barrier gradient
    gztau = _ONE - z[env.zb + k]  # multiplier gradient
    for i in range(1, m):
        vi = get3(hw, o_v + 3 * i)
        di = get3(hw, o_d + 3 * i)
        gi = env.v2 - wp.dot(vi, vi)
        zi = z[_zv(env, k, i)]
        qi = _speed_hessian(zi, gi, vi)
        htt += wp.dot(di, qi * di)
        htv = htv + qi * di
        gtau += (_TWO * mu / gi) * wp.dot(vi, di)
        gztau += (_TWO * zi) * wp.dot(vi, di)
    jl_tau = wp.dot(lv, jtv) + wp.dot(lp, jtp)
    r_tau = -(gtau + jl_tau)
    res = wp.abs(gztau + jl_tau)
    # Y columns (each 3M at ys[yb + col * n]): 0 h_ut, 1-3 J_u^T of E_v, 4-6 of E_p,
    # 7-9 H_u,va, 10 r_u; then each is multiplied by H^-1
    for j in range(m):
        cj = _cj(m, j)
        uj = get3(x, _xu(env, k, j))
        gu = env.a2 - wp.dot(uj, uj)
        zj = z[_zu(env, k, j)]
        hut = lv / fm + ((_TWO * tau * cj) / (fm * fm)) * lp + get3(hw, o_q + 3 * j)
        set3(hw, o_h + 3 * j, hut)
        set3(ys, yb + 3 * j, hut)
        pj = get33(hw, o_p + 9 * j)
        for a in range(3):
            col = wp.vec3d()
            col[a] = h
            set3(ys, yb + (1 + a) * n + 3 * j, col)
            col2 = wp.vec3d()
            col2[a] = h * h * cj
            set3(ys, yb + (4 + a) * n + 3 * j, col2)
            set3(ys, yb + (7 + a) * n + 3 * j, h * col3(pj, a))
        jl_u = h * lv + (h * h * cj) * lp
        gu_j = (_TWO * mu / gu) * uj + h * get3(hw, o_e + 3 * j)
        gz_j = (_TWO * zj) * uj + h * get3(hw, o_ez + 3 * j)
        set3(ys, yb + 10 * n + 3 * j, -(gu_j + jl_u))
        res = _abs_max(res, gz_j + jl_u)
    for col in range(11):
        _riccati_solve(hw, env.hb, m, ys, yb + col * n)
    # a, b and Sigma
    hut_y = _h_dot(hw, o_h, ys, yb, m)
    a_ = htt - hut_y
    jyt_v, jyt_p = _ju(ys, yb, m, h)
    b_v = jtv - jyt_v
    b_p = jtp - jyt_p
    for col in range(6):
        sv, sp = _ju(ys, yb + (1 + col) * n, m, h)
        for r in range(3):
            hw[o_sg + r * 6 + col] = sv[r]
            hw[o_sg + (3 + r) * 6 + col] = sp[r]
    dense_chol(hw, o_sg, 6, _ZERO)  # Sigma is positive definite
    for r in range(3):
        hw[o_t + r] = b_v[r]
        hw[o_t + 3 + r] = b_p[r]
    dense_solve(hw, o_sg, 6, hw, o_t)
    bsb = _ZERO
    for r in range(3):
        bsb += b_v[r] * hw[o_t + r] + b_p[r] * hw[o_t + 3 + r]
    # inertia: the Schur complement s = a + b^T Sigma^-1 b of the duration must be > 0 (the
    # Lagrangian's curvature along the segment's constraints). Where it is not (far from the
    # solution, where the multipliers do not yet carry the constraints' curvature), the step
    # takes its magnitude: a scaled descent step instead of a step to a saddle.
    s_ = a_ + bsb
    dshift = _ZERO
    floor = wp.float64(1.0e-8) * (wp.abs(htt) + wp.abs(hut_y) + bsb) + wp.float64(1.0e-300)
    if not (s_ > floor):
        dshift = wp.max(wp.abs(s_), floor) - s_
        s_ = s_ + dshift
    # B7 columns 0..5 (va0..2, vb0..2) and R7 (column 6): (p, q_v, q_p) at hw[o_b7 + 7 col]
    for col in range(7):
        p = _ZERO
        qv = wp.vec3d()
        qp = wp.vec3d()
        if col < 3:
            ywc = yb + (7 + col) * n
            p = htv[col] - _h_dot(hw, o_h, ys, ywc, m)
            jv, jp = _ju(ys, ywc, m, h)
            ecol = wp.vec3d()
            ecol[col] = _ONE
            qv = ecol - jv
            qp = tau * ecol - jp
        elif col < 6:
            ecol = wp.vec3d()
            ecol[col - 3] = _ONE
            qv = -ecol
        else:
            p = r_tau - _h_dot(hw, o_h, ys, yb + 10 * n, m)
            jv, jp = _ju(ys, yb + 10 * n, m, h)
            qv = -ev - jv
            qp = -ep - jp
        hw[o_b7 + 7 * col] = p
        set3(hw, o_b7 + 7 * col + 1, qv)
        set3(hw, o_b7 + 7 * col + 4, qp)
    # G7^-1 of each column: x = (p + b^T Sigma^-1 q) / s, y = Sigma^-1 b x - Sigma^-1 q;
    # stored at ys[ysb] as a 7 x 7 table (row 0 the duration's x, rows 1..6 the multipliers' y;
    # columns 0..5 of B7, column 6 of R7; :func:`_g7_row`), then the shift
    ysb = yb + 11 * n
    for col in range(7):
        for r in range(6):
            hw[o_t + 6 + r] = hw[o_b7 + 7 * col + 1 + r]
        dense_solve(hw, o_sg, 6, hw, o_t + 6)
        btq = _ZERO
        for r in range(3):
            btq += b_v[r] * hw[o_t + 6 + r] + b_p[r] * hw[o_t + 9 + r]
        xs = (hw[o_b7 + 7 * col] + btq) / s_
        ys[ysb + col] = xs
        for r in range(6):
            ys[ysb + 7 * (1 + r) + col] = hw[o_t + r] * xs - hw[o_t + 6 + r]
    ys[ysb + 49] = dshift
    # the reduced blocks over (va, vb)
    r_va = -(get3(hw, o_e) + lv + tau * lp)
    r_vb = lv
    wuy = wp.mat33d()  # W_va,u Y_w = sum_j (h P_j)^T Yw_j
    wur = wp.vec3d()  # W_va,u Y_r
    for j in range(m):
        hp = h * wp.transpose(get33(hw, o_p + 9 * j))
        yw = yb + 7 * n + 3 * j  # columns 7-9: Y_w
        ywj = wp.matrix_from_cols(get3(ys, yw), get3(ys, yw + n), get3(ys, yw + 2 * n))
        wuy = wuy + hp * ywj
        wur = wur + hp * get3(ys, yb + 10 * n + 3 * j)
    waa = get33(hw, o_p) - wuy  # P_0: the va-va Hessian of the node speeds
    wab = wp.mat33d()
    wbb = wp.mat33d()
    rra = r_va - wur
    rrb = r_vb
    for i in range(6):  # B7^T row i = B7 column i
        p = hw[o_b7 + 7 * i]
        for col in range(7):
            acc = _ZERO
            for r in range(6):
                acc += hw[o_b7 + 7 * i + 1 + r] * ys[ysb + 7 * (1 + r) + col]
            val = p * ys[ysb + col] + acc
            if col == 6:
                if i < 3:
                    rra[i] = rra[i] - val
                else:
                    rrb[i - 3] = rrb[i - 3] - val
            elif i < 3 and col < 3:
                waa[i, col] = waa[i, col] - val
            elif i < 3:
                wab[i, col - 3] = wab[i, col - 3] - val
            elif col >= 3:
                wbb[i - 3, col - 3] = wbb[i - 3, col - 3] - val
    ra = env.bb + ka * _BR
    rb = env.bb + kb * _BR
    add33(bs, ra + _BD, waa)
    add33(bs, rb + _BD, wbb)
    set33(bs, env.bb + k * _BR + _BO, wab)
    add3(bs, ra + _BRR, rra)
    add3(bs, rb + _BRR, rrb)
    # the velocities' stationarity residual (multiplier form), summed per point
    add3(bs, ra + _BRZ, get3(hw, o_ez) + lv + tau * lp)
    add3(bs, rb + _BRZ, -lv)
    return res


@wp.func
def _g7_row(ys: wp.array(dtype=wp.float64), o: int, dva: wp.vec3d, dvb: wp.vec3d) -> wp.float64:
    """The duration's (or a multiplier's) step from a row of the table at ``ys[o]`` that
    :func:`_segment_assemble` stores: ``R - B (dva, dvb)``."""
    out = ys[o + 6]
    for c in range(3):
        out -= ys[o + c] * dva[c] + ys[o + 3 + c] * dvb[c]
    return out


@noinline_func
def _init_lambda(
    x: wp.array(dtype=wp.float64),
    lam: wp.array(dtype=wp.float64),
    env: _Env,
    k: int,
    mu: wp.float64,
    hw: wp.array(dtype=wp.float64),
):
    """Least-squares multipliers of segment ``k``: ``lam`` minimising the barrier Lagrangian's
    gradient in the segment's duration and thrusts, ``(J J^T) lam = -J grad`` (6 x 6)."""
    m = env.m
    g = env.g
    hb = env.hb
    fm = env.fm
    tau = x[env.xb + k]
    h = tau / fm
    va = get3(x, _xw(env, k))
    u1, u2 = _sums(x, _xu(env, k, 0), m)
    jtv, jtp = _seg_jt(env, tau, va, u1, u2)
    # node terms: e_i = 2 mu v_i / g_i; the gradient of the thrust j has h sum_{i>j} e_i
    o_e = hb  # e_i at hw[hb + 3 i]
    gtau = _ONE - mu / tau
    sx = wp.vec3d()
    for i in range(1, m):
        sx = sx + get3(x, _xu(env, k, i - 1))
        di = (wp.float64(i) * g + sx) / fm
        vi = va + tau * di
        ei = (_TWO * mu / (env.v2 - wp.dot(vi, vi))) * vi
        set3(hw, o_e + 3 * i, ei)
        gtau += wp.dot(ei, di)
    # rhs = -J grad (6), N = J J^T (6 x 6) at hw[hb + 3m], hw[hb + 3m + 6]
    o_r = hb + 3 * m
    o_n = o_r + 6
    rv = -gtau * jtv
    rp = -gtau * jtp
    esum = wp.vec3d()
    for t in range(m):
        j = m - 1 - t
        uj = get3(x, _xu(env, k, j))
        gj = (_TWO * mu / (env.a2 - wp.dot(uj, uj))) * uj + h * esum
        rv = rv - h * gj
        rp = rp - (h * h * _cj(m, j)) * gj
        if j >= 1:
            esum = esum + get3(hw, o_e + 3 * j)
    sc, sc2 = _c_sums(m)
    for r in range(3):
        hw[o_r + r] = rv[r]
        hw[o_r + 3 + r] = rp[r]
        for c in range(3):
            eye = _ZERO
            if r == c:
                eye = _ONE
            hw[o_n + r * 6 + c] = fm * h * h * eye + jtv[r] * jtv[c]
            hw[o_n + r * 6 + 3 + c] = h * h * h * sc * eye + jtv[r] * jtp[c]
            hw[o_n + (3 + r) * 6 + c] = h * h * h * sc * eye + jtp[r] * jtv[c]
            hw[o_n + (3 + r) * 6 + 3 + c] = h * h * h * h * sc2 * eye + jtp[r] * jtp[c]
    if dense_chol(hw, o_n, 6, _ZERO) == 1:
        dense_solve(hw, o_n, 6, hw, o_r)
        big = _ZERO
        for r in range(6):
            big = wp.max(big, wp.abs(hw[o_r + r]))
        if wp.isfinite(big) and big < wp.float64(1.0e3):  # as IPOPT: drop huge estimates
            for r in range(6):
                lam[env.lb + 6 * k + r] = hw[o_r + r]


# ------------------------------------------------------------------------------ velocities
@noinline_func
def _solve_velocities(
    bs: wp.array(dtype=wp.float64), env: _Env, dx: wp.array(dtype=wp.float64)
) -> int:
    """Solve the block-tridiagonal (closed: cyclic) system of the free point velocities
    (blocks ``D``, ``O``, right-hand sides ``R`` in ``bs``) into ``dx``'s velocity part, with a
    diagonal shift while it is not positive definite. Returns 0 when no shift made it so (the
    step is then not taken)."""
    bb = env.bb
    ns = env.ns
    closed = env.closed
    first = 1 - closed
    nfree = ns - 1 + closed  # unknowns
    lead = nfree - closed  # unknowns before the border (closed: the last one is the border)
    scale = _ONE
    for q in range(nfree):
        d = get33(bs, bb + (first + q) * _BR + _BD)
        scale = wp.max(scale, wp.max(wp.abs(d[0, 0]), wp.max(wp.abs(d[1, 1]), wp.abs(d[2, 2]))))
    shift = _ZERO
    eye = wp.identity(n=3, dtype=wp.float64)
    solved = int(0)
    for attempt in range(8):
        ok = int(1)
        ylast = wp.vec3d()
        lprev = wp.mat33d()
        zprev = wp.mat33d()
        for q in range(lead):
            k = first + q
            r = bb + k * _BR
            dq = get33(bs, r + _BD) + shift * eye
            rhs = get3(bs, r + _BRR)
            bq = wp.mat33d()
            if closed != 0:
                if q == 0:
                    bq = bq + wp.transpose(get33(bs, bb + (ns - 1) * _BR + _BO))
                if q == lead - 1:
                    bq = bq + get33(bs, r + _BO)
            lsub = wp.mat33d()
            if q > 0:
                # Lsub L_{q-1}^T = O_{k-1}^T  ->  Lsub = (L_{q-1}^-1 O_{k-1})^T
                lsub = wp.transpose(fwd33(lprev, get33(bs, bb + (k - 1) * _BR + _BO)))
                dq = dq - lsub * wp.transpose(lsub)
                rhs = rhs - lsub * ylast
                bq = bq - lsub * zprev
            lq, okq = chol3(dq)
            if okq == 0:
                ok = 0
            else:
                ylast = fwd3(lq, rhs)
                zprev = fwd33(lq, bq)
                lprev = lq
                set33(bs, r + _BL, lq)
                set33(bs, r + _BLS, lsub)
                set33(bs, r + _BZ, zprev)
                set3(bs, r + _BY, ylast)
        xb_ = wp.vec3d()
        if ok == 1 and closed != 0:
            kb = ns - 1
            rb = bb + kb * _BR
            sd = get33(bs, rb + _BD) + shift * eye
            yb_ = get3(bs, rb + _BRR)
            for q in range(lead):
                zq = get33(bs, bb + (first + q) * _BR + _BZ)
                sd = sd - wp.transpose(zq) * zq
                yb_ = yb_ - wp.transpose(zq) * get3(bs, bb + (first + q) * _BR + _BY)
            lb_, okb = chol3(sd)
            if okb == 0:
                ok = 0
            else:
                xb_ = chol_solve3(lb_, yb_)
                set3(bs, rb + _BX, xb_)
        if ok == 1:
            xnext = wp.vec3d()
            for t in range(lead):
                q = lead - 1 - t
                r = bb + (first + q) * _BR
                rhs = get3(bs, r + _BY)
                if closed != 0:
                    rhs = rhs - get33(bs, r + _BZ) * xb_
                if q < lead - 1:
                    lsn = get33(bs, bb + (first + q + 1) * _BR + _BLS)
                    rhs = rhs - wp.transpose(lsn) * xnext
                xnext = bwd3(get33(bs, r + _BL), rhs)
                set3(bs, r + _BX, xnext)
            solved = 1
            break
        shift = scale * wp.float64(1.0e-8) * wp.pow(wp.float64(100.0), wp.float64(attempt))
    for k in range(ns + 1 - closed):
        dwk = wp.vec3d()
        if _free(k, ns, closed) == 1 and solved == 1:
            dwk = get3(bs, bb + k * _BR + _BX)
        set3(dx, _xw(env, k), dwk)
    return solved


# ------------------------------------------------------------------------------ the start
@wp.func
def _sgn(m: int, j: int) -> wp.float64:
    """The start's thrust sign on interval ``j``: +1 on the first ``M // 2`` (accelerate), -1
    from ``(M + 1) // 2`` on (brake), 0 on the middle one of an odd ``M``."""
    out = _ZERO
    if j < m // 2:
        out = _ONE
    elif j >= (m + 1) // 2:
        out = -_ONE
    return out


@wp.func
def _bang_bang(
    env: _Env,
    ee: wp.vec3d,
    ln: wp.float64,
    gn: wp.float64,
    pk: wp.float64,
    half: wp.float64,
    csum: wp.float64,
) -> tuple[wp.float64, wp.float64, wp.float64]:
    """A straight bang-bang over ``ln`` along the unit ``ee``: the thrust acceleration there is
    to spare along ``ee`` (``amax``; ``gn = |g|``) and the shortest durations within it
    (``tau_a``) and within the speed budget ``pk`` (``tau_p``)."""
    eg = wp.dot(ee, env.g)
    amax = wp.sqrt(env.a2 - gn * gn + eg * eg) - wp.abs(eg)
    tau_a = env.fm * wp.sqrt(ln / (_HALF * amax * csum))
    tau_p = ln * env.fm * half / (pk * csum)
    return amax, tau_a, tau_p


# ------------------------------------------------------------------------------ the kernel
@wp.kernel
def _plan_kernel(
    # inputs
    points: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    v_start: wp.array(dtype=wp.vec3f),
    v_end: wp.array(dtype=wp.vec3f),
    mask: wp.array(dtype=wp.int32),
    # static
    use_mask: int,
    use_valid: int,
    use_vel: int,
    closed: int,
    cap: int,
    m: int,
    t_max_f: float,
    v_max_f: float,
    gravity_f: float,
    iterations: int,
    # scratch
    pts: wp.array(dtype=wp.vec3d),
    pmap: wp.array(dtype=wp.int32),
    x: wp.array(dtype=wp.float64),
    xt: wp.array(dtype=wp.float64),
    xbest: wp.array(dtype=wp.float64),
    dx: wp.array(dtype=wp.float64),
    lam: wp.array(dtype=wp.float64),
    dlam: wp.array(dtype=wp.float64),
    z: wp.array(dtype=wp.float64),
    dz: wp.array(dtype=wp.float64),
    ys: wp.array(dtype=wp.float64),
    hw: wp.array(dtype=wp.float64),
    bs: wp.array(dtype=wp.float64),
    # outputs
    time_out: wp.array(dtype=wp.float32),
    passage_out: wp.array(dtype=wp.float32),
    sample_time_out: wp.array(dtype=wp.float32),
    position_out: wp.array(dtype=wp.vec3f),
    velocity_out: wp.array(dtype=wp.vec3f),
    thrust_out: wp.array(dtype=wp.vec3f),
    samples_out: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32),
    iterations_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if use_mask != 0:
        if mask[e] == 0:
            return
    env = _layout(e, cap, m, closed)
    n_u = 3 * m
    xb = env.xb
    pb = env.pb
    lb = env.lb
    rows = cap * m + 1
    rb = e * rows
    status = int(0)
    # ---- inputs: count, finiteness, the boundary velocities
    n = count[e]
    if n < 2 or n > cap:
        status = status | ST_INPUT
        n = 0
    if use_valid != 0:
        if valid[e] == 0:
            status = status | ST_INPUT
            n = 0
    for i in range(n):
        if not in_range3(points[e * cap + i]):
            status = status | ST_INPUT
    vs = wp.vec3d()
    ve = wp.vec3d()
    if use_vel != 0 and closed == 0:
        if not (in_range3(v_start[e]) and in_range3(v_end[e])):
            status = status | ST_INPUT
        else:
            vs = wp.vec3d(v_start[e])
            ve = wp.vec3d(v_end[e])
    # ---- merge coincident consecutive points, scale
    ns = int(0)  # segments
    lo = wp.vec3d(_HUGE, _HUGE, _HUGE)
    hi = -lo
    if status == 0:
        for i in range(n):
            p = wp.vec3d(points[e * cap + i])
            lo = wp.min(lo, p)
            hi = wp.max(hi, p)
        diag = wp.length(hi - lo)
        tol = _MERGE_TOL * diag
        origin = wp.vec3d(points[e * cap])
        kept = int(0)
        last = origin
        for i in range(n):
            p = wp.vec3d(points[e * cap + i])
            if i == 0 or wp.length(p - last) > tol:
                pts[pb + kept] = p - origin
                last = p
                kept += 1
            pmap[e * cap + i] = kept - 1
        if closed != 0:
            if kept >= 2 and wp.length(last - origin) <= tol:
                kept -= 1  # the loop closes on its first point
                for i in range(n):
                    if pmap[e * cap + i] == kept:
                        pmap[e * cap + i] = 0
            ns = kept
            if kept >= 2:
                pts[pb + kept] = pts[pb]
        else:
            ns = kept - 1
        if ns < 1 or (closed != 0 and ns < 2) or not (diag > _ZERO):
            status = status | ST_DEGENERATE
            ns = 0
    l0 = _ONE
    t_max = wp.float64(t_max_f)
    if ns > 0:
        per = _ZERO
        for k in range(ns):
            per += wp.length(pts[pb + k + 1] - pts[pb + k])
        l0 = per / wp.float64(ns)
        for k in range(ns + 1):
            pts[pb + k] = pts[pb + k] / l0
    # time unit: the thrust-limited time of a mean segment, or the speed-limited one when
    # longer (so that durations, speeds and the thrust ball are O(1) or above)
    t0 = wp.max(wp.sqrt(l0 / t_max), l0 / wp.float64(v_max_f))
    v0 = l0 / t0
    a0 = l0 / (t0 * t0)  # acceleration unit (<= t_max)
    amag = t_max / a0  # the thrust ball's radius, >= 1
    a2 = amag * amag
    g = wp.vec3d(_ZERO, _ZERO, -wp.float64(gravity_f) / a0)
    vmax = wp.float64(v_max_f) / v0
    v2 = vmax * vmax
    vs = vs / v0
    ve = ve / v0
    if ns > 0 and closed == 0:
        if not (wp.length(vs) < vmax and wp.length(ve) < vmax):
            status = status | ST_BOUNDARY_SPEED
            ns = 0
    env.ns = ns
    env.g = g
    env.v2 = v2
    env.a2 = a2
    # ---- start: rest to rest on each segment (velocity ramps at the ends of an open path)
    fm = env.fm
    csum = _ZERO  # sum_j c_j sgn_j
    for j in range(m):
        csum += _sgn(m, j) * _cj(m, j)  # (exact: sgn c_j is c_j, -c_j or 0)
    half = wp.float64(m // 2)  # accelerating intervals
    gn = wp.length(g)
    slack = wp.float64(1.000001)
    for k in range(ns):
        va = wp.vec3d()
        vb = wp.vec3d()
        if closed == 0 and k == 0:
            va = vs
        if closed == 0 and k == ns - 1:
            vb = ve
        dv = vb - va
        dpk = pts[pb + k + 1] - pts[pb + k]
        pk = _HALF * (vmax - wp.max(wp.length(va), wp.length(vb)))
        tau_v = wp.float64(4.0) * wp.length(dv) / (amag - gn)  # the ramp uses <= 1/4 of the slack
        # exact start: the bang-bang part covers dpk minus what the ramp covers, which grows
        # with tau; a few doublings find a tau that fits, else the start misses E_p (the
        # Newton steps close it)
        tau = wp.max(tau_v, wp.float64(1.0e-300))
        alpha = _ZERO
        ee = wp.vec3d(_ONE, _ZERO, _ZERO)
        fits = int(0)
        for _attempt in range(62):
            dvec = dpk - (_HALF * tau) * (va + vb)
            ln = wp.length(dvec)
            ee = wp.vec3d(_ONE, _ZERO, _ZERO)
            if ln > _ZERO:
                ee = dvec / ln
            amax, tau_a, tau_p = _bang_bang(env, ee, ln, gn, pk, half, csum)
            alpha = ln * fm * fm / (tau * tau * csum)
            if alpha <= _HALF * amax * slack and alpha * tau * half / fm <= pk * slack:
                fits = 1
                break
            tau = wp.max(_TWO * tau, wp.max(tau_a, tau_p))
        if fits == 0:  # bang-bang over dpk alone: fits by construction, misses E_p
            ln = wp.length(dpk)
            ee = dpk / ln
            amax, tau_a, tau_p = _bang_bang(env, ee, ln, gn, pk, half, csum)
            tau = wp.max(tau_v, wp.max(tau_a, tau_p)) * slack
            alpha = ln * fm * fm / (tau * tau * csum)
        x[xb + k] = tau
        for j in range(m):
            set3(x, _xu(env, k, j), (alpha * _sgn(m, j)) * ee - g + dv / tau)
    for k in range(ns + 1 - closed):
        wk = wp.vec3d()
        if closed == 0 and k == 0:
            wk = vs
        if closed == 0 and k == ns:
            wk = ve
        set3(x, _xw(env, k), wk)
    # ---- the interior-point iterations
    best = _HUGE
    converged = int(0)
    used = int(0)
    nu = _ONE
    mu = _MU0
    if ns > 0:
        obj, c1, cinf, ok = _evaluate(x, x, 0, pts, env, mu)
        if cinf > _FEAS_TOL:
            # a start off the points (an open path with boundary velocities): its projection
            # onto E = 0, when that keeps every bound
            _copy(xt, x, env)
            for k in range(ns):
                _project(xt, pts, env, k)
            obj, c1, cinf, ok = _evaluate(xt, x, 0, pts, env, mu)
            if ok == 1:
                _copy(x, xt, env)
            else:
                obj, c1, cinf, ok = _evaluate(x, x, 0, pts, env, mu)
        if ok == 1 and cinf <= _FEAS_TOL:  # the start passes through every point
            best = _total(x, env)
            _copy(xbest, x, env)
    for k in range(ns):
        for r in range(6):
            lam[lb + 6 * k + r] = _ZERO
        _init_lambda(x, lam, env, k, mu, hw)
    _slacks(_Z_START, x, dx, z, dz, env, mu)  # multipliers mu / slack
    for it in range(iterations):
        if ns == 0 or converged == 1:
            break
        used = it + 1
        # assemble and eliminate every segment
        for i in range((ns + 1) * _BR):
            bs[env.bb + i] = _ZERO
        res = _ZERO
        for k in range(ns):
            seg_res = _segment_assemble(x, lam, z, pts, env, k, mu, hw, ys, _ys(env, k), bs)
            res = wp.max(res, seg_res)
        # the free points' speed barriers
        for k in range(ns + 1 - closed):
            if _free(k, ns, closed) == 1:
                wk = get3(x, _xw(env, k))
                gw = v2 - wp.dot(wk, wk)
                zk = z[_zw(env, k)]
                r = env.bb + k * _BR
                add33(bs, r + _BD, _speed_hessian(zk, gw, wk))
                add3(bs, r + _BRR, -(_TWO * mu / gw) * wk)
                res = _abs_max(res, get3(bs, r + _BRZ) + (_TWO * zk) * wk)
        if _solve_velocities(bs, env, dx) == 0:
            break  # a velocity system no shift makes positive definite: keep the best iterate
        # back substitution: (dtau, dlam) = (xr, yr) - (xB, yB) dw and
        # du = Yr - Yt dtau - YJ dlam - Yw dva
        lmax = _ZERO
        cdl = _ZERO  # E^T (lam + dlam): the step's curvature is -dphi + E^T (lam + dlam)
        for k in range(ns):
            ybk = _ys(env, k)
            ysb = ybk + 11 * n_u
            dva = get3(dx, _xw(env, k))
            dvb = get3(dx, _xw(env, k + 1))
            dtau = _g7_row(ys, ysb, dva, dvb)
            for r in range(6):
                dl = _g7_row(ys, ysb + 7 * (1 + r), dva, dvb)
                dlam[lb + 6 * k + r] = dl
                lmax = wp.max(lmax, wp.abs(lam[lb + 6 * k + r] + dl))
            ev, ep = _seg_c(x, pts, env, k)
            cdl += wp.dot(ev, get3(lam, lb + 6 * k) + get3(dlam, lb + 6 * k))
            cdl += wp.dot(ep, get3(lam, lb + 6 * k + 3) + get3(dlam, lb + 6 * k + 3))
            dx[xb + k] = dtau
            for j in range(m):
                duj = get3(ys, ybk + 10 * n_u + 3 * j) - dtau * get3(ys, ybk + 3 * j)
                for r in range(6):
                    duj = duj - dlam[lb + 6 * k + r] * get3(ys, ybk + (1 + r) * n_u + 3 * j)
                for c in range(3):
                    duj = duj - dva[c] * get3(ys, ybk + (7 + c) * n_u + 3 * j)
                set3(dx, _xu(env, k, j), duj)
        # multiplier steps dz = (mu - g z) / g - (z / g) dg and the barrier's slope dphi
        dphi = _slacks(_Z_STEP, x, dx, z, dz, env, mu)
        if not (wp.isfinite(dphi) and wp.isfinite(lmax)):
            break  # a step that is not finite (a singular system): stop with the best iterate
        phi0, c10, cinf0, ok0 = _evaluate(x, x, 0, pts, env, mu)
        # the l1 penalty: large enough that the step descends the merit (Nocedal & Wright,
        # Numerical Optimization, eq. 18.36, with rho = 0.1)
        if c10 > _FEAS_TOL:  # (iterates through every point keep E at rounding level)
            dwd = cdl - dphi
            nu = wp.max(nu, (dphi + _HALF * wp.max(dwd, _ZERO)) / (wp.float64(0.9) * c10))
        merit0 = phi0 + nu * c10
        slope = dphi - nu * c10
        # backtracking line search (the last trial is taken when none passes Armijo but it
        # keeps every slack)
        # a step changes no duration by more than STEP_TAU of it: far from the central path the
        # Newton step in the durations is long, and its linearisation of the constraints
        # (quadratic in tau) would not hold
        alpha = _ONE
        for k in range(ns):
            adt = wp.abs(dx[xb + k])
            if adt * alpha > _STEP_TAU * x[xb + k]:
                alpha = _STEP_TAU * x[xb + k] / adt
        accepted = int(0)
        for ls in range(_LINE_SEARCH):
            for i in range(env.nx):
                xt[xb + i] = x[xb + i] + alpha * dx[xb + i]
            if cinf0 <= _FEAS_TOL:
                # from a point through every point: restore E = 0 on the trial (a
                # second-order correction; E is linear in the thrusts for fixed durations
                # and velocities)
                for k in range(ns):
                    _project(xt, pts, env, k)
            phi1, c11, cinf1, ok1 = _evaluate(xt, x, 1, pts, env, mu)
            if ok1 == 1:
                if phi1 + nu * c11 <= merit0 + _ARMIJO * alpha * slope:
                    accepted = 1
                    break
            if ls < _LINE_SEARCH - 1:
                alpha = _HALF * alpha
        if accepted == 0:
            # no decrease: keep the point, take the smallest feasible trial if any
            phi1, c11, cinf1, ok1 = _evaluate(xt, x, 1, pts, env, mu)
            if ok1 == 0:
                alpha = _ZERO
        if alpha > _ZERO:
            _copy(x, xt, env)
            for k in range(ns):
                for r in range(6):
                    lam[lb + 6 * k + r] = lam[lb + 6 * k + r] + alpha * dlam[lb + 6 * k + r]
        # multipliers: fraction to the boundary over the used entries (tau, thrust, node and
        # free-point speeds), then the safeguard around mu / slack
        az = _z_entries(z, dz, env, _ONE, 0)
        _z_entries(z, dz, env, az, 1)
        # safeguard z within [mu / (Z_SAFE g), Z_SAFE mu / g] at the new point
        _slacks(_Z_SAFEGUARD, x, dx, z, dz, env, mu)
        # the best iterate through every point
        phi2, c12, cinf2, ok2 = _evaluate(x, x, 0, pts, env, mu)
        total = _total(x, env)
        if ok2 == 1 and cinf2 <= _FEAS_TOL and total < best:
            best = total
            _copy(xbest, x, env)
        # barrier weight
        if (
            mu <= _MU_MIN
            and cinf2 <= _FEAS_TOL
            and (res < _RES_TOL or (accepted == 0 and res < _STALL_TOL))
        ):
            converged = 1  # (or the step no longer decreases the merit at rounding level)
        elif res < _KAPPA_EPS * mu and cinf2 <= _FEAS_TOL:
            if mu > _MU_MIN:
                mu = wp.max(_MU_MIN, wp.min(_MU_FACTOR * mu, mu * wp.sqrt(mu)))
    # ---- the answer: the best iterate through every point, sampled
    if ns > 0 and converged == 0:
        status = status | ST_NOT_CONVERGED
    if ns > 0 and not (best < _HUGE):
        status = status | ST_NO_TRAJECTORY
    iterations_out[e] = used
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    found = ns > 0 and best < _HUGE
    lap = _NAN
    row = int(0)
    if found:
        origin = wp.vec3d(points[e * cap])
        tnow = _ZERO
        gd = g * a0  # unscaled gravity
        for k in range(ns):
            tau = xbest[xb + k]
            h = tau * t0 / env.fm
            p = pts[pb + k] * l0
            v = get3(xbest, _xw(env, k)) * v0
            for j in range(m):
                th = get3(xbest, _xu(env, k, j)) * a0
                a = th + gd
                sample_time_out[rb + row] = float(tnow + h * wp.float64(j))
                position_out[rb + row] = wp.vec3f(p + origin)
                velocity_out[rb + row] = wp.vec3f(v)
                thrust_out[rb + row] = wp.vec3f(th)
                p = p + h * v + (_HALF * h * h) * a
                v = v + h * a
                row += 1
            tnow += tau * t0
        sample_time_out[rb + row] = float(tnow)
        position_out[rb + row] = wp.vec3f(pts[pb + ns] * l0 + origin)
        velocity_out[rb + row] = wp.vec3f(get3(xbest, _xw(env, ns)) * v0)
        thrust_out[rb + row] = nan3
        row += 1
        lap = float(tnow)
    for i in range(row, rows):
        sample_time_out[rb + i] = _NAN
        position_out[rb + i] = nan3
        velocity_out[rb + i] = nan3
        thrust_out[rb + i] = nan3
    samples_out[e] = row
    time_out[e] = lap
    # passage time of each input point: the start of its merged segment
    for i in range(cap):
        pt = _NAN
        if found and i < n:
            c = pmap[e * cap + i]
            acc = _ZERO
            for k in range(c):
                acc += xbest[xb + k] * t0
            pt = float(acc)
        passage_out[e * cap + i] = pt
    status_out[e] = status
