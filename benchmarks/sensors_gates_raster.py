"""The per-step sensors of issue 25: ``EgoRaster`` (``"raster"``) and ``NextGates``
(``"next_gates"``), ms per step, and their per-regeneration refresh.

Run from the repository root (or with track_gen installed):

    PYTHONPATH=. python benchmarks/sensors_gates_raster.py                  # CPU, E=1024
    PYTHONPATH=. python benchmarks/sensors_gates_raster.py --E 256 --calls 5
    PYTHONPATH=. python benchmarks/sensors_gates_raster.py --device cuda:0 --E 8192

For each ``cpu_threads`` value (``--cpu-threads``, default ``1 auto``; ignored on CUDA) it
builds a track course (seed 0) with ``Props("cone", 0.1)``, ``HeightFieldBake(128)`` and
``EgoRaster(--res, --extent, cones="props", height="heightfield")``, and a gate course with
``NextGates(--num-gates, reveal_range=0.3, nominal_noise=0.05)``; the agents stand near a
random centerline bead (gate) with a random heading. Each time is the median of ``--calls``
calls, each followed by ``wp.synchronize_device`` (kernels loaded first), as wall time and
as the process's CPU time (``cpu ms``: the work, on a machine other jobs load): ``step`` (the
component's own step: its launches on the bound inputs) and ``refresh`` (its ``on_generate``
of every env, on the generator's env ranges). The steps are one launch each (three for the
raster) whatever ``cpu_threads`` is; only the refreshes split over the env ranges.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import warp as wp

from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import EgoRaster, HeightFieldBake, NextGates, Props


def _median_ms(fn, calls: int, device) -> tuple[float, float]:
    """Median wall and process-CPU milliseconds of ``fn`` (the CPU time of a loaded machine
    counts the work, not the wait for a core)."""
    fn()
    wp.synchronize_device(device)
    wall, cpu = [], []
    for _ in range(calls):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wp.synchronize_device(device)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return 1e3 * statistics.median(wall), 1e3 * statistics.median(cpu)


def _poses(points, rng, device):
    E = points.shape[0]
    pos = np.nan_to_num(points).astype(np.float32)
    yaw = rng.uniform(-np.pi, np.pi, E)
    quat = np.zeros((E, 4), np.float32)
    quat[:, 2], quat[:, 3] = np.sin(yaw / 2), np.cos(yaw / 2)
    return (
        wp.array(pos, dtype=wp.vec3f, device=device),
        wp.array(quat, dtype=wp.quatf, device=device),
    )


def _time(course, name, calls, device):
    comp, ctx = course.components[name], course._ctx  # the component's own hooks
    step = _median_ms(lambda: comp.step(ctx), calls, device)
    refresh = _median_ms(lambda: comp.on_generate(ctx, None), calls, device)
    return step, refresh


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--E", type=int, default=1024)
    ap.add_argument("--res", type=int, default=64)
    ap.add_argument("--extent", type=float, default=1.0)
    ap.add_argument("--num-gates", type=int, default=3)
    ap.add_argument("--calls", type=int, default=7)
    ap.add_argument("--cpu-threads", nargs="+", default=["1", "auto"])
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    device = args.device
    rng = np.random.default_rng(0)
    print(f"device {device}, E={args.E}, raster {args.res}x{args.res} over {args.extent}")
    head = f"{'cpu_threads':>11} {'component':>10} {'ms/step':>9} {'cpu ms':>8}"
    print(f"{head} {'ms/refresh':>11} {'cpu ms':>8} threads")
    for value in args.cpu_threads:
        threads = value if value == "auto" else int(value)
        track = Course.track(
            presets.track(num_envs=args.E, device=device, cpu_threads=threads),
            checkpoint_spacing=0.6,
            extra=[
                Props("cone", 0.1),
                HeightFieldBake(128),
                EgoRaster(args.res, args.extent, cones="props", height="heightfield"),
            ],
            seeds=0,
        )
        t = track.result
        beads = t.host("center")[np.arange(args.E), rng.integers(0, 40, args.E)]
        track.bind(*_poses(beads, rng, device))
        gates = Course.gates(
            presets.gates(num_envs=args.E, device=device, gate_width=0.1, cpu_threads=threads),
            extra=[NextGates(args.num_gates, reveal_range=0.3, nominal_noise=0.05)],
            seeds=0,
        )
        g = gates.result
        near = g.host("position")[:, 0] + rng.normal(0, 0.2, (args.E, 3))
        gates.bind(*_poses(near, rng, device))
        for course, name in ((track, "raster"), (gates, "next_gates")):
            step, refresh = _time(course, name, args.calls, device)
            ranges = max(len(course.generator.env_ranges), 1)
            row = f"{value:>11} {name:>10} {step[0]:9.3f} {step[1]:8.3f}"
            print(f"{row} {refresh[0]:11.3f} {refresh[1]:8.3f} {ranges:>7}")


if __name__ == "__main__":
    main()
