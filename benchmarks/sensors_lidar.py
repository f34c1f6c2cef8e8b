"""Lidar: ms per ``course.step()`` of a track course with ``tools.Lidar`` on the CPU.

    PYTHONPATH=$PWD python benchmarks/sensors_lidar.py [--cases 1024x360,256x1080]
        [--cpu-threads 1,auto] [--props] [--repeats 5]

Each case ``ExB`` builds ``Course.track(presets.track(num_envs=E, cpu_threads=T))`` with
``Lidar(B, max_range=1.0)`` (and cone props every 0.1 track units with ``--props``), binds
agents at random centerline beads (offset up to 0.08 across the road, random yaw) and
prints the median ms of ``--repeats`` steps (each a ``course.step()``, which runs the
progress tool too, then ``wp.synchronize()``), after one warm-up step, with the median
process CPU ms beside it (all threads; steadier than the wall time on a shared machine),
and the same with the
lidar alone on one thread (``utility.scan``), and the ms of the lidar's refresh of every env
(the grid bake, ``utility.refresh()``, one thread). ``--cpu-threads``: the generator's
``cpu_threads`` values to run (in ``course.step()`` the lidar splits its scan on the
generator's env ranges).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import warp as wp

from track_gen import tools
from track_gen.course import Course
from track_gen.pipeline import presets


def _ms(fn, repeats: int) -> tuple[float, float]:
    """Median wall ms and median process CPU ms (every thread) of ``fn`` after a warm-up
    call; on a machine shared with other jobs the CPU ms is the steadier of the two."""
    fn()
    wp.synchronize()
    wall, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wp.synchronize()
        wall.append((time.perf_counter() - t) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
    return statistics.median(wall), statistics.median(cpu)


def _threads(value: str):
    return value if value == "auto" else int(value)


def run_case(E: int, B: int, threads, props: bool, repeats: int) -> dict:
    extra = [tools.Props("cone", spacing=0.1)] if props else []
    course = Course.track(
        presets.track(num_envs=E, device="cpu", cpu_threads=threads),
        checkpoint_spacing=0.6,
        extra=[*extra, tools.Lidar(B, max_range=1.0)],
        seeds=1,
    )
    rng = np.random.default_rng(0)
    r = course.result
    center = np.nan_to_num(r.center.numpy().reshape(E, -1, 3))
    count = np.maximum(r.count.numpy(), 1)
    pos = center[np.arange(E), rng.integers(0, 1 << 30, E) % count].astype(np.float32)
    pos[:, :2] += rng.uniform(-0.08, 0.08, (E, 2)).astype(np.float32)
    yaw = rng.uniform(-np.pi, np.pi, E)
    quat = np.stack([0 * yaw, 0 * yaw, np.sin(yaw / 2), np.cos(yaw / 2)], -1).astype(np.float32)
    p = wp.array(pos, dtype=wp.vec3f, device="cpu")
    q = wp.array(quat, dtype=wp.quatf, device="cpu")
    course.bind(position=p, orientation=q)
    lidar = course.components["lidar"]
    return {
        "threads": course.generator.cpu_threads,
        "step": _ms(course.step, repeats),
        "scan": _ms(lambda: lidar.utility.scan(p, q), repeats),
        "refresh": _ms(lidar.utility.refresh, repeats),
        "hit": float(lidar.result.hit.numpy().mean()),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="1024x360,256x1080", help="ExB,ExB,...")
    ap.add_argument("--cpu-threads", default="1,auto", help="comma list of cpu_threads values")
    ap.add_argument("--props", action="store_true", help="add cone props every 0.1")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    head = ("E", "beams", "threads", "step ms", "(cpu ms)", "scan ms", "(cpu ms)", "refresh ms")
    print("{:>6} {:>6} {:>8} {:>9} {:>9} {:>9} {:>9} {:>11}".format(*head))
    for case in args.cases.split(","):
        E, B = (int(v) for v in case.lower().split("x"))
        for t in args.cpu_threads.split(","):
            r = run_case(E, B, _threads(t), args.props, args.repeats)
            used = f"{t}->{r['threads']}"
            (sw, sc), (cw, cc), (rw, _) = r["step"], r["scan"], r["refresh"]
            print(
                f"{E:>6} {B:>6} {used:>8} {sw:>9.2f} {sc:>9.2f} {cw:>9.2f} {cc:>9.2f} "
                f"{rw:>11.2f}   (hit fraction {r['hit']:.2f})"
            )


if __name__ == "__main__":
    main()
