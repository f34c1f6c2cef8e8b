"""Per-step sensors: ms per step of ``tools.Lookahead`` and ``tools.ConeDetections`` on the
CPU, for each ``cpu_threads`` setting.

    PYTHONPATH=$PWD python benchmarks/sensors_la_cones.py [--num-envs 1024] [--steps 50]
        [--cpu-threads 1 auto]

A track course of ``presets.track(num_envs=E, device="cpu", cpu_threads=T)`` (seed 1) with
``tools.Localizer()``, ``tools.Lookahead(32, 0.1)``, ``tools.Props("cone", 0.1)`` and
``tools.ConeDetections(32, fov=2.0, max_range=1.5, dropout=0.1, noise=0.01)``; agents near
the centre line, heading along it. Each line is the median over ``--steps`` calls (after one
warm-up call) and the fastest call (the machine's load shows as their gap) of: the
lookahead's ``sample`` (its kernel alone: the localizer's arc position is an input), the
localizer's ``locate`` (which the lookahead reads each step), the cone detector's
``detect``, and the whole ``course.step()`` (checkpoints' progress, localizer, lookahead,
cones). The per-step sensors are one launch each: ``cpu_threads`` splits the
generator's work (and the tools' per-generation refreshes), not a step, so both settings
should read the same up to noise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import warp as wp

from track_gen import tools
from track_gen.course import Course
from track_gen.pipeline import presets


def _ms(fn, steps):
    fn()  # warm-up (module load)
    wp.synchronize()
    out = []
    for _ in range(steps):
        t = time.perf_counter()
        fn()
        wp.synchronize()
        out.append((time.perf_counter() - t) * 1e3)
    return statistics.median(out), min(out)


def _threads(value: str):
    return value if value == "auto" else int(value)


def case(num_envs: int, threads, steps: int) -> None:
    course = Course.track(
        presets.track(num_envs=num_envs, device="cpu", cpu_threads=threads),
        checkpoint_spacing=0.6,
        extra=[
            tools.Localizer(),
            tools.Lookahead(32, 0.1),
            tools.Props("cone", 0.1),
            tools.ConeDetections(32, fov=2.0, max_range=1.5, dropout=0.1, noise=0.01),
        ],
        seeds=1,
    )
    track = course.generator.result
    c, t = track.host("center")[:, 7], track.host("tangent")[:, 7]
    pos = wp.array(np.nan_to_num(c).astype(np.float32), dtype=wp.vec3f)
    yaw = np.arctan2(np.nan_to_num(t[:, 1]), np.nan_to_num(t[:, 0], nan=1.0))
    q = np.zeros((num_envs, 4), np.float32)
    q[:, 2], q[:, 3] = np.sin(yaw / 2), np.cos(yaw / 2)
    quat = wp.array(q, dtype=wp.quatf)
    course.bind(position=pos, orientation=quat)
    course.step()
    loc = course.components["localizer"].utility
    la = course.components["lookahead"].utility
    det = course.components["cones"].utility
    s = course.components["localizer"].result.s
    props = course.components["props"].result
    cones = props.count.numpy().mean()
    rows = [
        ("lookahead sample (32 points)", _ms(lambda: la.sample(s, pos, quat), steps)),
        ("localizer locate (its input)", _ms(lambda: loc.locate(pos), steps)),
        (f"cones detect (32 of {cones:.0f} per env)", _ms(lambda: det.detect(pos, quat), steps)),
        ("course.step() (all of them)", _ms(course.step, steps)),
    ]
    seen = det.detections.count.numpy().mean()
    label = f"E={num_envs}, cpu_threads={threads!r}"
    for what, (median, best) in rows:
        print(f"{label:<28} {what:<36} {median:8.3f} ms per step (best {best:.3f})")
    print(f"{label:<28} (mean cones seen per env: {seen:.1f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--cpu-threads", nargs="+", default=["1", "auto"])
    args = ap.parse_args()
    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    print(f"CPU, {os.cpu_count()} cores visible; one Warp CPU thread runs each launch")
    for threads in args.cpu_threads:
        case(args.num_envs, _threads(threads), args.steps)


if __name__ == "__main__":
    main()
