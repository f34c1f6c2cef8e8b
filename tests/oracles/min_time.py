"""Independent float64 oracles of the minimum-time point mass (``tools.MinTimeUtility``).

* :func:`check_trajectory` integrates a planner's returned samples in float64 and measures
  what the docs promise: every interval is the constant-thrust motion from its sample to the
  next (its error relative to the magnitudes the interval adds up, so float32 rounding of
  long intervals is not mistaken for a wrong step), ``|thrust| <= t_max`` and
  ``|velocity| <= v_max`` (so along the whole interval), the trajectory passes through every
  point at its ``passage_time`` and starts and ends with the given velocities (a closed
  course: the same velocity).
* :func:`solve_min_time` solves the same problem another way: a first-order-hold transcription
  (the thrust linear between ``nodes + 1`` nodes per segment, bounded at the nodes) solved by
  SciPy's SLSQP with analytic Jacobians, from a rest-to-rest start. Written from the problem
  statement in ``docs/drone-racing.md``, not from the kernel (which holds the thrust constant on
  each interval and runs an interior-point method).
"""

from __future__ import annotations

import numpy as np


def check_trajectory(
    result, e: int, points, *, closed, t_max, v_max, gravity, v_start=None, v_end=None
):
    """Float64 measurements of env ``e`` of a ``MinTimeResult`` against its ``points`` [n, 3]:
    a dict of the largest relative errors and bound ratios (see the module)."""
    points = np.asarray(points, np.float64)
    n = int(result.sample_count.numpy()[e])
    R = result.rows_per_env
    sl = slice(e * R, e * R + n)
    t = result.sample_time.numpy()[sl].astype(np.float64)
    p = result.position.numpy()[sl].astype(np.float64)
    v = result.velocity.numpy()[sl].astype(np.float64)
    th = result.thrust.numpy()[sl].astype(np.float64)
    g = np.array([0.0, 0.0, -gravity])
    h = np.diff(t)
    a = th[:-1] + g
    scale_p = np.abs(points).max() + np.linalg.norm(np.ptp(points, axis=0)) + 1e-30
    scale_v = np.abs(v).max() + 1e-30
    p_end = p[:-1] + h[:, None] * v[:-1] + 0.5 * h[:, None] ** 2 * a
    v_end_ = v[:-1] + h[:, None] * a
    # each interval's error against the magnitudes it adds up: float32 samples carry about
    # 6e-8 of each, so a relative error of 1e-5 is far above rounding and far below a wrong step
    th_g = np.linalg.norm(th[:-1], axis=1) + gravity
    mag_p = (
        np.linalg.norm(p[:-1], axis=1)
        + np.linalg.norm(p[1:], axis=1)
        + h * np.linalg.norm(v[:-1], axis=1)
        + h * h * th_g
        + 1e-30
    )
    mag_v = np.linalg.norm(v[:-1], axis=1) + np.linalg.norm(v[1:], axis=1) + h * th_g + 1e-30
    K = result.capacity
    passage = result.passage_time.numpy()[e * K : e * K + len(points)].astype(np.float64)
    at = np.searchsorted(t, passage - 1e-6 * max(t[-1], 1e-30))
    at = np.clip(at, 0, n - 1)
    out = {
        "time": float(result.time.numpy()[e]),
        "samples": n,
        "dt_min": float(h.min()),
        "integration_p": float((np.linalg.norm(p_end - p[1:], axis=1) / mag_p).max()),
        "integration_v": float((np.linalg.norm(v_end_ - v[1:], axis=1) / mag_v).max()),
        "thrust_ratio": float(np.linalg.norm(th[:-1], axis=1).max() / t_max),
        "speed_ratio": float(np.linalg.norm(v, axis=1).max() / v_max),
        "through_points": float(np.abs(p[at] - points).max() / scale_p),
        "last_time": float(t[-1]),
        "thrust_last_nan": bool(np.isnan(th[-1]).all()),
    }
    if closed:
        out["periodic_v"] = float(np.abs(v[-1] - v[0]).max() / scale_v)
        out["closes"] = float(np.abs(p[-1] - points[0]).max() / scale_p)
    else:
        vs = np.zeros(3) if v_start is None else np.asarray(v_start, np.float64)
        ve = np.zeros(3) if v_end is None else np.asarray(v_end, np.float64)
        out["start_v"] = float(np.abs(v[0] - vs).max() / max(scale_v, 1.0))
        out["end_v"] = float(np.abs(v[-1] - ve).max() / max(scale_v, 1.0))
        out["ends"] = float(np.abs(p[-1] - points[-1]).max() / scale_p)
    return out


def _foh_weights(N: int):
    """Coefficients of the first-order hold on ``N`` intervals of length ``h``: ``v_N - v_0 =
    h sum_i w_i a_i``, ``p_N - p_0 - N h v_0 = h^2 sum_i q_i a_i`` and the interior node
    velocities ``v_i - v_0 = h sum_m R[i - 1, m] a_m`` (``a`` at the ``N + 1`` nodes)."""
    w = np.zeros(N + 1)
    q = np.zeros(N + 1)
    R = np.zeros((N - 1, N + 1))
    vel = np.zeros(N + 1)  # velocity (in units of h) as a linear form of the node accelerations
    for i in range(N):
        step = np.zeros(N + 1)
        step[i] += 0.5
        step[i + 1] += 0.5
        pos = np.zeros(N + 1)
        pos[i] += 1.0 / 3.0
        pos[i + 1] += 1.0 / 6.0
        q += vel + pos
        vel = vel + step
        if i < N - 1:
            R[i] = vel
    w[:] = vel
    return w, q, R


def solve_min_time(points, *, closed, t_max, v_max, gravity, nodes=12, maxiter=400, start=None):
    """The minimum time through ``points`` [n, 3] (closed: a lap; open: rest to rest) by the
    first-order-hold transcription and SLSQP (see the module), from a rest-to-rest start or
    ``start`` (an earlier answer's ``res.solution``). Returns ``(time, scipy result)``; the
    result's ``solution`` is ``(point velocities m/s, durations s, thrusts / t_max)``."""
    from scipy.optimize import minimize

    P = np.asarray(points, np.float64)
    if closed:
        P = np.vstack([P, P[:1]])
    S = len(P) - 1
    N = int(nodes)
    T, V = float(t_max), float(v_max)
    dP = np.diff(P, axis=0)
    L0 = float(np.linalg.norm(dP, axis=1).mean())
    # units: lengths L0; times the longer of the thrust- and the speed-limited time of L0;
    # thrust in units of t_max (|u| <= 1), the acceleration A (u + g / t_max)
    t0 = max(np.sqrt(L0 / T), L0 / V)
    v0 = L0 / t0
    A = T * t0 * t0 / L0
    gs = np.array([0.0, 0.0, -gravity]) / T  # gravity in thrust units
    Vs = V / v0
    w_, q_, R_ = _foh_weights(N)
    nw = S if closed else S - 1
    nseg = 1 + 3 * (N + 1)
    n = 3 * nw + S * nseg

    def slot(k):
        if closed:
            return k % S
        return None if k in (0, S) else k - 1

    def unpack(x):
        W = x[: 3 * nw].reshape(nw, 3)
        seg = x[3 * nw :].reshape(S, nseg)
        return W, seg[:, 0], seg[:, 1:].reshape(S, N + 1, 3)

    dPs = dP / L0

    def vel(W, k):
        s = slot(k)
        return np.zeros(3) if s is None else W[s]

    def eq(x):
        W, tau, U = unpack(x)
        out = np.empty((S, 6))
        for k in range(S):
            h = tau[k] / N
            acc = A * (U[k] + gs)
            out[k, :3] = vel(W, k) + h * (w_ @ acc) - vel(W, k + 1)
            out[k, 3:] = N * h * vel(W, k) + h * h * (q_ @ acc) - dPs[k]
        return out.ravel()

    def eq_jac(x):
        W, tau, U = unpack(x)
        J = np.zeros((6 * S, n))
        I3 = np.eye(3)
        for k in range(S):
            h = tau[k] / N
            acc = A * (U[k] + gs)
            r = 6 * k
            o = 3 * nw + k * nseg
            va = vel(W, k)
            J[r : r + 3, o] = (w_ @ acc) / N
            J[r + 3 : r + 6, o] = va + 2.0 * h * (q_ @ acc) / N
            for i in range(N + 1):
                c = o + 1 + 3 * i
                J[r : r + 3, c : c + 3] = A * h * w_[i] * I3
                J[r + 3 : r + 6, c : c + 3] = A * h * h * q_[i] * I3
            sa, sb = slot(k), slot(k + 1)
            if sa is not None:
                J[r : r + 3, 3 * sa : 3 * sa + 3] += I3
                J[r + 3 : r + 6, 3 * sa : 3 * sa + 3] += N * h * I3
            if sb is not None:
                J[r : r + 3, 3 * sb : 3 * sb + 3] -= I3
        return J

    def ineq(x):
        W, tau, U = unpack(x)
        parts = [1.0 - (U * U).sum(2).ravel()]
        for k in range(S):
            h = tau[k] / N
            vi = vel(W, k) + h * (R_ @ (A * (U[k] + gs)))
            parts.append(1.0 - (vi * vi).sum(1) / Vs**2)
        parts.append(1.0 - (W * W).sum(1) / Vs**2)
        parts.append(tau)
        return np.concatenate(parts)

    def ineq_jac(x):
        W, tau, U = unpack(x)
        rows = []
        nu_ = S * (N + 1)
        Ju = np.zeros((nu_, n))
        for k in range(S):
            o = 3 * nw + k * nseg
            for i in range(N + 1):
                Ju[k * (N + 1) + i, o + 1 + 3 * i : o + 4 + 3 * i] = -2.0 * U[k, i]
        rows.append(Ju)
        for k in range(S):
            h = tau[k] / N
            acc = A * (U[k] + gs)
            vi = vel(W, k) + h * (R_ @ acc)
            Jv = np.zeros((N - 1, n))
            o = 3 * nw + k * nseg
            Jv[:, o] = (-2.0 / Vs**2) * np.einsum("ij,ij->i", vi, R_ @ acc) / N
            for m in range(N + 1):
                Jv[:, o + 1 + 3 * m : o + 4 + 3 * m] = (
                    (-2.0 / Vs**2) * A * h * R_[:, m : m + 1] * vi
                )
            sa = slot(k)
            if sa is not None:
                Jv[:, 3 * sa : 3 * sa + 3] += (-2.0 / Vs**2) * vi
            rows.append(Jv)
        Jw = np.zeros((nw, n))
        for s in range(nw):
            Jw[s, 3 * s : 3 * s + 3] = (-2.0 / Vs**2) * W[s]
        rows.append(Jw)
        Jt = np.zeros((S, n))
        for k in range(S):
            Jt[k, 3 * nw + k * nseg] = 1.0
        rows.append(Jt)
        return np.vstack(rows)

    # start: rest to rest on each segment, a straight bang-bang at half the reachable thrust
    x0 = np.zeros(n)
    for k in range(S):
        L = np.linalg.norm(dPs[k])
        e_ = dPs[k] / L
        eg = e_ @ gs
        amax = np.sqrt(1.0 - gs @ gs + eg * eg) - abs(eg)  # in thrust units
        acc = 0.5 * amax * A  # scaled acceleration
        tau = 2.0 * np.sqrt(L / acc)
        peak = acc * tau / 2.0
        if peak > 0.5 * Vs:  # slower: a triangle under half the speed bound
            acc = (0.5 * Vs) ** 2 / L
            tau = 2.0 * np.sqrt(L / acc)
        prof = np.array([acc if i < N / 2 else (-acc if i > N / 2 else 0.0) for i in range(N + 1)])
        o = 3 * nw + k * nseg
        x0[o] = tau
        x0[o + 1 : o + nseg] = (prof[:, None] * e_[None, :] / A - gs).ravel()

    if start is not None:  # (point velocities m/s, durations s, thrusts / t_max)
        W0, tau0, U0 = start
        x0 = np.concatenate(
            [(np.asarray(W0) / v0).ravel()]
            + [np.concatenate([[tau0[k] / t0], np.asarray(U0[k]).ravel()]) for k in range(S)]
        )

    def obj(x):
        return float(x[3 * nw :: nseg].sum())

    def obj_grad(x):
        g_ = np.zeros(n)
        g_[3 * nw :: nseg] = 1.0
        return g_

    # box bounds (kept by SLSQP at every iterate): durations > 0, thrust and velocity
    # components within their norm bounds
    lo = np.full(n, -1.0)
    hi = np.full(n, 1.0)
    lo[: 3 * nw], hi[: 3 * nw] = -Vs, Vs
    lo[3 * nw :: nseg] = 1e-3 * x0[3 * nw :: nseg].min()
    hi[3 * nw :: nseg] = np.inf
    res = minimize(
        obj,
        x0,
        jac=obj_grad,
        bounds=list(zip(lo, hi, strict=True)),
        method="SLSQP",
        constraints=[
            {"type": "eq", "fun": eq, "jac": eq_jac},
            {"type": "ineq", "fun": ineq, "jac": ineq_jac},
        ],
        options={"maxiter": maxiter, "ftol": 1e-12},
    )
    W, tau, U = unpack(res.x)
    res.solution = (W * v0, tau * t0, U)
    return float(tau.sum() * t0), res


def solve_min_time_continued(points, *, closed, t_max, v_max, gravity, nodes=12, v_steps=4):
    """:func:`solve_min_time` with the speed bound lowered in ``v_steps`` geometric steps from
    ten times ``v_max``, each solve starting from the last: SLSQP alone stalls from a
    rest-to-rest start when the bound holds on most of the path."""
    start = None
    t, res = None, None
    for v in np.geomspace(10.0 * v_max, v_max, v_steps + 1):
        t, res = solve_min_time(
            points,
            closed=closed,
            t_max=t_max,
            v_max=float(v),
            gravity=gravity,
            nodes=nodes,
            start=start,
        )
        start = res.solution
    return t, res
