"""Minimum-time pars: ms per path on the CPU beside the published reference, and per generated
gate course.

    PYTHONPATH=$PWD python benchmarks/min_time.py [--num-envs 1024] [--samples 8]
        [--data /work/shared/data/drone]

Published paths: every ``*.json`` of ``--data`` (read in place with
``io.read_waypoint_path``), each planned from rest to rest with the file's limits and gravity
in a batch of E envs that all fly it (``io.waypoint_arrays``); our time beside the file's
reference time (the paper authors' planner), the iterations our solve used, and the ms per
path of :meth:`MinTimeUtility.plan`, amortized over the batch: on one Warp CPU thread (one
launch, the median of 3 calls; wall clock and, in brackets, this process's CPU time, which
other load on a shared machine does not inflate), with ``cpu_threads="auto"`` (the batch
cut into the env ranges a gate course's ``cpu_threads="auto"`` would use, one thread each, as
the ``MinTime`` component refreshes: gate courses keep 2048 envs per thread, so E=1024 runs
on one) and on every core (``cpu_threads`` = the cores), beside the reference's solve ms (one
CPU thread of a 2-core machine of this class, as the file says).

Generated courses: ``presets.gates(num_envs=E, scale=20, gate_width=1)`` (8 to 12 gates, about
30 m across), closed laps with ``t_max = 30``, ``v_max = 15``, ``gravity = 9.81``: ms per
course, one thread and auto.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import time

import numpy as np
import warp as wp

from track_gen import GateGenerator, io
from track_gen.core.ranges import available_cores, env_ranges, range_view, run_ranges
from track_gen.engine.threads import resolve_cpu_threads
from track_gen.pipeline import presets
from track_gen.tools import MinTimeUtility


def _ms(fn, repeats=3):
    """``(wall ms, process-CPU ms)``: medians of ``repeats`` calls (the process time counts
    this process's threads only, so other load on the machine does not inflate it)."""
    wall, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wp.synchronize()
        wall.append((time.perf_counter() - t) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
    return statistics.median(wall), statistics.median(cpu)


def _threaded(planner, threads) -> tuple[int, callable]:
    """``(threads, call)``: :meth:`plan` on the env ranges of ``cpu_threads=threads``
    (``"auto"`` as a gate course resolves it)."""
    E = planner.num_envs
    n = resolve_cpu_threads(threads, E, "cpu", family="gates")
    ranges = env_ranges(E, n)
    views = [range_view(planner, E, lo, hi) for lo, hi in ranges]
    if len(views) <= 1:
        return 1, planner.plan
    return len(views), lambda: run_ranges([v.plan for v in views])


def published(args) -> None:
    files = sorted(glob.glob(os.path.join(args.data, "*.json")))
    if not files:
        print(f"no *.json under {args.data}: skipping the published paths")
        return
    E = args.num_envs
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"published paths, E={E}, samples={args.samples}, from rest to rest (load {load})")
    print(
        f"{'path':8s} {'segs':>4s} {'ours s':>9s} {'ref s':>8s} {'ratio':>7s} {'iters':>5s} "
        f"{'ms/path 1T wall (cpu)':>22s} {'auto wall':>13s} {'all cores wall':>16s} "
        f"{'ref ms':>7s}"
    )
    for f in files:
        p = io.read_waypoint_path(f)
        planner = MinTimeUtility(
            **io.waypoint_arrays([p], num_envs=E, device="cpu"),
            closed=False,
            t_max=p.t_max,
            v_max=p.v_max,
            gravity=p.gravity,
            samples=args.samples,
        )
        r = planner.result
        t = float(r.time.numpy()[0])
        st = r.status.numpy()
        if not (st == st[0]).all() or not (r.time.numpy() == t).all():
            raise SystemExit(f"{p.name}: the envs of one path disagree")
        one, one_cpu = (v / E for v in _ms(planner.plan))
        n, call = _threaded(planner, "auto")
        auto = _ms(call)[0] / E
        nc, call = _threaded(planner, available_cores())
        cores = _ms(call)[0] / E
        ref = p.reference_time or float("nan")
        print(
            f"{p.name:8s} {len(p.waypoints) + 1:4d} {t:9.4f} {ref:8.3f} {t / ref:7.4f} "
            f"{int(r.iterations.numpy()[0]):5d} {one:13.3f} ({one_cpu:6.3f}) {auto:8.3f} ({n}T) "
            f"{cores:11.3f} ({nc}T) {p.reference_ms or float('nan'):7.1f}"
            + ("" if st[0] == 0 else f"  status {st[0]}")
        )


def generated(args) -> None:
    E = args.num_envs
    gen = GateGenerator(
        presets.gates(num_envs=E, device="cpu", scale=20.0, gate_width=1.0), seeds=1
    )
    seq = gen.generate()
    planner = MinTimeUtility(
        seq.position,
        seq.count,
        closed=True,
        valid=seq.valid,
        t_max=30.0,
        v_max=15.0,
        gravity=9.81,
        samples=args.samples,
    )
    r = planner.result
    st = r.status.numpy()
    one, one_cpu = (v / E for v in _ms(planner.plan))
    n, call = _threaded(planner, "auto")
    auto = _ms(call)[0] / E
    nc, call = _threaded(planner, available_cores())
    cores = _ms(call)[0] / E
    it = r.iterations.numpy()[st == 0]
    print(
        f"generated gate courses, E={E}: {seq.count.numpy().mean():.1f} gates, lap par "
        f"{np.nanmean(r.time.numpy()):.3f} s, {int((st == 0).sum())} converged, "
        f"iterations {it.mean():.1f} (max {it.max()}); ms/course {one:.3f} wall, "
        f"{one_cpu:.3f} cpu (1 thread), {auto:.3f} wall (auto: {n} threads), {cores:.3f} wall "
        f"({nc} threads)"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--data", default="/work/shared/data/drone")
    args = ap.parse_args()
    wp.init()
    published(args)
    generated(args)


if __name__ == "__main__":
    main()
