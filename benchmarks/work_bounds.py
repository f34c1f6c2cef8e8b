"""What one env costs at the upper bound of each tunable that multiplies work: one
regeneration (generation fields and course components) or one step (sensors), E=1 on the
CPU, every other field at its default, warm kernel cache, the median of 3 calls.

    PYTHONPATH=$PWD python benchmarks/work_bounds.py [--only NAME ...]

The declared bounds keep each case under about one second on a 2-core CPU (docs/performance.md,
"What a field costs"); a case above prints ``> 1 s``. Pairs that multiply each other (the
racing line's linearisations x iterations, relax_iters x N_max) are bounded together by a
rule of their declarations, and the table runs them at that rule's limit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import warp as wp

wp.config.quiet = True

from track_gen import TrackGenConfig, TrackGenerator, tools  # noqa: E402
from track_gen.course import Course  # noqa: E402
from track_gen.pipeline import presets  # noqa: E402


def _ms(fn, repeats=3) -> float:
    fn()  # warm-up: kernel load
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        wp.synchronize()
        out.append((time.perf_counter() - t) * 1e3)
    return statistics.median(out)


def _generate(**fields):
    gen = TrackGenerator(TrackGenConfig(num_envs=1, device="cpu", **fields), seeds=3)
    return lambda: gen.generate(advance=True)


def _course(component, steps=False, **fields):
    spec = presets.track(num_envs=1, device="cpu", **fields)
    course = Course.track(spec, checkpoint_spacing=0.6, extra=[component], seeds=3)
    course.bind(
        position=wp.zeros(1, dtype=wp.vec3f, device="cpu"),
        orientation=wp.full(1, wp.quat_identity(), dtype=wp.quatf, device="cpu"),
    )
    if steps:
        return course.step
    return lambda: course.regenerate(advance=True)


def _line(**kw):
    return _course(tools.RacingLine(0.04, a_lat=8.0, a_lon=4.0, v_max=6.0, **kw))


CASES = {
    # generation: each field at its hi (the generator's config range)
    "num_points=16384": lambda: _generate(num_points=16384),
    "N_max=4096 filled (spacing=1e-4)": lambda: _generate(N_max=4096, spacing=1e-4),
    "relax_iters=5461 (N_max=192: the rule's limit)": lambda: _generate(
        relax_iters=5461, relax_converge_tol=0.0, N_max=192
    ),
    "relax_iters=256, N_max=4096 filled (the limit)": lambda: _generate(
        relax_iters=256, relax_converge_tol=0.0, N_max=4096, spacing=1e-4
    ),
    "relax_smooth_spacing_iters=1000": lambda: _generate(relax_smooth_spacing_iters=1000),
    "repulsive_iters=10000": lambda: _generate(generator="repulsive", repulsive_iters=10000),
    "voronoi_num_sites=4096": lambda: _generate(generator="voronoi", voronoi_num_sites=4096),
    # the racing line: at its defaults, and at its work rule's limit both ways
    "racing line defaults": lambda: _line(),
    "racing line iterations=10000, linearisations=4": lambda: _line(
        iterations=10000, linearisations=4
    ),
    "racing line 16 x (500 + 2000 kappa)": lambda: _line(
        kappa_max=5.0, linearisations=16, iterations=500, kappa_iterations=2000
    ),
    # course components at their hi
    "lidar num_beams=4096 (step)": lambda: _course(tools.Lidar(4096), steps=True),
    "raster resolution=512 (step)": lambda: _course(tools.EgoRaster(512, 1.0), steps=True),
    "height field resolution=4096": lambda: _course(tools.HeightFieldBake(resolution=4096)),
}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", nargs="*", default=None, help="case names containing these words")
    args = p.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores, cpu, E=1")
    print(f"{'case':48s} {'ms per env':>12s}")
    for name, build in CASES.items():
        if args.only and not any(w in name for w in args.only):
            continue
        ms = _ms(build())
        flag = "  > 1 s" if ms > 1000.0 else ""
        print(f"{name:48s} {ms:12.1f}{flag}", flush=True)


if __name__ == "__main__":
    main()
