"""Racing lines: ms to plan E generated tracks on the CPU, and per real circuit beside the
field's reference (``trajectory-planning-helpers``: ``opt_min_curv`` + ``calc_vel_profile``).

    PYTHONPATH=$PWD python benchmarks/racing_line.py [--num-envs 1024] [--reference N]
        [--data /work/shared/data/tum]

Generated tracks: ``presets.track(num_envs=E)``, vehicle width 0.04 track units, ``a_lat = 8``,
``a_lon = 4`` track units/s^2, ``v_max = 6`` track units/s; the median of 3 calls of
:meth:`RacingLineUtility.plan` (one Warp CPU thread, warm kernel cache).

Real circuits: every ``*.csv`` of ``--data`` (TUM layout, read with ``io.read_tum`` and
``io.tracks_spec(spacing=3.0)``: 3 m beads; the data is read in place, never copied), a 2 m
wide vehicle, ``a_lat = a_lon = 10`` m/s^2, ``v_max = 70`` m/s. Both lines (ours and, with
``--reference N``, the reference's on the same beads and widths for the first N valid
circuits) and the centre line are evaluated by one code path (:func:`evaluate`): resampled at
3 m by arc length, the curvature integral ``sum kappa^2 ds`` (Menger curvature) and the lap
time of the same point-mass profile. The reference needs ``quadprog``; when it cannot be
imported the reference columns are skipped and the script says so.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import time

import numpy as np
import warp as wp

from track_gen import TrackGenerator, io, tools
from track_gen.pipeline import presets

REAL = {"a_lat": 10.0, "a_lon": 10.0, "v_max": 70.0}
GEN = {"a_lat": 8.0, "a_lon": 4.0, "v_max": 6.0}
VEHICLE_M = 2.0


def _ms(fn, repeats=3):
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        wp.synchronize()
        out.append((time.perf_counter() - t) * 1e3)
    return statistics.median(out)


# ------------------------------------------------------------------ one evaluation path
def resample(xy, spacing=3.0):
    """The closed polyline ``xy`` resampled at (about) ``spacing`` by arc length."""
    closed = np.vstack([xy, xy[:1]])
    s = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(closed, axis=0), axis=1))]
    n = max(int(round(s[-1] / spacing)), 8)
    u = np.arange(n) * s[-1] / n
    return np.c_[np.interp(u, s, closed[:, 0]), np.interp(u, s, closed[:, 1])]


def menger(p):
    pm, pp = np.roll(p, 1, 0), np.roll(p, -1, 0)
    ua, ub = p - pm, pp - p
    cr = ua[:, 0] * ub[:, 1] - ua[:, 1] * ub[:, 0]
    den = np.linalg.norm(ua, axis=1) * np.linalg.norm(ub, axis=1) * np.linalg.norm(pp - pm, axis=1)
    return 2 * cr / den


def lap_time(curv, ds, a_lat, a_lon, v_max):
    """Point-mass profile (friction ellipse, two laps forward and backward) and its lap."""
    n = len(curv)
    lim = np.minimum(v_max**2, a_lat / np.maximum(np.abs(curv), 1e-300))

    def passes(order, seg):
        v = np.empty(n)
        prev = lim[order[0]]
        for k in range(2 * n):
            i = order[k % n]
            j = order[(k - 1) % n]
            if k:
                q = prev * abs(curv[j]) / a_lat
                prev = min(lim[i], prev + 2 * a_lon * np.sqrt(max(1 - q * q, 0.0)) * seg(i, j))
            v[i] = prev
        return v

    fwd = passes(np.arange(n), lambda i, j: ds[j])
    bwd = passes((-np.arange(n)) % n, lambda i, j: ds[i])
    v = np.sqrt(np.minimum(fwd, bwd))
    return float(np.sum(2 * ds / (v + np.roll(v, -1))))


def evaluate(xy, limits=REAL):
    """``(curvature integral, lap time s)`` of the closed line ``xy`` (one path for all)."""
    p = resample(np.asarray(xy, np.float64))
    ds = np.linalg.norm(np.roll(p, -1, 0) - p, axis=1)
    k = menger(p)
    return float(np.sum(k * k * ds)), lap_time(k, ds, **limits)


# ----------------------------------------------------------------------------- cases
def generated_case(num_envs):
    gen = TrackGenerator(presets.track(num_envs=num_envs, device="cpu"), seeds=1)
    gen.generate()
    planner = tools.RacingLineUtility(gen.result, 0.04, **GEN)
    ms = _ms(planner.plan)
    ok = np.isfinite(planner.line.host("lap_time")).sum()
    print(
        f"generated tracks: E={num_envs}, {ok} lines, {ms:.1f} ms per plan() "
        f"({ms / num_envs:.3f} ms per env), mean N = {gen.result.count.numpy().mean():.0f} beads"
    )


def reference_line(center, w_left, w_right):
    """The reference's minimum-curvature line on the same beads (None: not importable)."""
    import trajectory_planning_helpers as tph

    reftrack = np.c_[center, w_right, w_left]
    closed = np.vstack([center, center[:1]])
    _, _, M, normvec = tph.calc_splines.calc_splines(path=closed)
    alpha, _ = tph.opt_min_curv.opt_min_curv(
        reftrack, normvec, M, kappa_bound=1.0, w_veh=VEHICLE_M, closed=True
    )
    line = center + normvec * alpha[:, None]
    el = np.linalg.norm(np.roll(line, -1, 0) - line, axis=1)
    kappa = menger(line)
    a = REAL["a_lon"]
    ggv = np.array([[0.0, a, REAL["a_lat"]], [REAL["v_max"] + 10, a, REAL["a_lat"]]])
    ax_m = np.array([[0.0, a], [REAL["v_max"] + 10, a]])
    tph.calc_vel_profile.calc_vel_profile(
        ax_m, kappa, el, True, 0.0, 1000.0, ggv=ggv, v_max=REAL["v_max"]
    )
    margin = np.minimum(w_right - VEHICLE_M / 2 - alpha, w_left - VEHICLE_M / 2 + alpha)
    return line, float(margin.min())


def real_case(data, reference):
    paths = sorted(glob.glob(os.path.join(data, "*.csv")))
    if not paths:
        print(f"no circuits under {data}: skipped")
        return
    circuits = [io.read_tum(p) for p in paths]
    names = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    gen = TrackGenerator(
        io.tracks_spec(circuits, num_envs=len(circuits), device="cpu", spacing=3.0), seeds=0
    )
    gen.generate()
    r = gen.result
    planner = tools.RacingLineUtility(r, VEHICLE_M, **REAL)
    ms = _ms(planner.plan)
    valid = r.valid.numpy() != 0
    print(
        f"real circuits: {valid.sum()} of {len(paths)} valid at 3 m beads, {ms:.1f} ms per "
        f"plan() of the batch = {ms / max(valid.sum(), 1):.1f} ms per circuit"
    )
    try:
        import quadprog  # noqa: F401
        import trajectory_planning_helpers  # noqa: F401

        have_ref = reference > 0
    except Exception as exc:  # a broken quadprog wheel raises ImportError from its .so
        print(f"reference skipped: {type(exc).__name__}: {exc}")
        have_ref = False
    print(
        "| circuit | beads | ours ms* | centre J | ours J (reduction) | lap centre s | lap ours s |"
        + (
            " reference s | reference J (reduction) | lap reference s | speedup |"
            if have_ref
            else ""
        )
    )
    done = 0
    per = ms / max(valid.sum(), 1)
    for e, name in enumerate(names):
        if not valid[e]:
            print(f"| {name} | invalid track (skipped) |")
            continue
        n = int(r.count.numpy()[e])
        c = r.host("center")[e, :n, :2].astype(np.float64)
        nrm = r.host("normal")[e, :n, :2].astype(np.float64)
        dl = np.einsum("ij,ij->i", r.host("outer")[e, :n, :2] - c, nrm)
        di = np.einsum("ij,ij->i", r.host("inner")[e, :n, :2] - c, nrm)
        wl, wr = np.maximum(dl, di), np.maximum(-dl, -di)
        ours = planner.line.host("position")[e, :n, :2].astype(np.float64)
        jc, tc = evaluate(c)
        jo, to = evaluate(ours)
        row = f"| {name} | {n} | {per:.1f} | {jc:.4f} | {jo:.4f} ({1 - jo / jc:.1%}) |"
        row += f" {tc:.2f} | {to:.2f} |"
        if have_ref and done < reference:
            t = time.perf_counter()
            line, margin = reference_line(c, wl, wr)
            ref_s = time.perf_counter() - t
            jr, tr = evaluate(line)
            row += f" {ref_s:.1f} | {jr:.4f} ({1 - jr / jc:.1%}) | {tr:.2f} |"
            row += f" {ref_s * 1e3 / per:.0f}x |"
            done += 1
        print(row, flush=True)
    print("* ours: the batch's plan() time divided by its valid circuits (one Warp CPU thread)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--reference", type=int, default=0, help="circuits to run the reference on")
    ap.add_argument("--data", default="/work/shared/data/tum")
    args = ap.parse_args()
    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    generated_case(args.num_envs)
    real_case(args.data, args.reference)


if __name__ == "__main__":
    main()
