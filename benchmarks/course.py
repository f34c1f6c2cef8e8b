"""Course timings: step (segments, sdf), sdf bake, regenerate (masked, full).

Run from the repository root:

    PYTHONPATH=. python benchmarks/course.py --device cpu --E 1024
    PYTHONPATH=. python benchmarks/course.py --device cuda:0 --E 8192

Each figure is the median of --calls synchronized calls after a warm-up. "masked" regenerates
1% of the envs (advance=True); "full" every env. On the CPU a masked call costs in proportion
to the masked envs (every kernel skips unmasked envs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import warp as wp

from track_gen.course import Course
from track_gen.pipeline import presets


def timed(fn, device, calls: int) -> float:
    fn()
    wp.synchronize_device(device)
    out = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        wp.synchronize_device(device)
        out.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--E", type=int, default=None, help="default 1024 (cpu), 8192 (cuda)")
    ap.add_argument("--calls", type=int, default=10)
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    device = wp.get_device(args.device) if args.device else wp.get_preferred_device()
    E = args.E or (8192 if device.is_cuda else 1024)
    print(f"# course: device {device}, E {E}, calls {args.calls}", flush=True)
    for method in ("segments", "sdf"):
        course = Course.track(
            presets.track(num_envs=E, device=str(device)),
            checkpoint_spacing=0.6,
            collision=method,
            seeds=0,
        )
        n = course.generator.layout.N_max
        center = course.result.center.numpy().reshape(E, n, 3)
        pos = wp.array(
            np.nan_to_num(center[:, 3]).astype(np.float32), dtype=wp.vec3f, device=device
        )
        quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)
        he = wp.full(E, wp.vec2f(0.02, 0.01), dtype=wp.vec2f, device=device)
        course.bind(position=pos, orientation=quat, half_extents=he)
        step_ms = timed(course.step, device, args.calls)
        row = f"{method:<9} step {step_ms:8.3f} ms"
        if method == "sdf":
            bake_ms = timed(course.collision.refresh, device, max(args.calls // 2, 1))
            row += f"   bake (all envs) {bake_ms:8.1f} ms"
        print(row, flush=True)
    regen = course.inputs["regen_mask"]
    m = np.zeros(E, np.int32)
    m[::100] = 1
    regen.assign(m)
    masked = timed(lambda: course.regenerate(mask=regen, advance=True), device, args.calls)
    full = timed(lambda: course.regenerate(advance=True), device, max(args.calls // 2, 1))
    print(
        f"regenerate (sdf course): masked {int(m.sum())} envs {masked:8.1f} ms   "
        f"full {full:8.1f} ms",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
