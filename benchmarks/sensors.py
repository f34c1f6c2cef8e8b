"""Per-step sensors (issue 25): ms per step of every sensor component, one table.

    PYTHONPATH=$PWD python benchmarks/sensors.py                      # CPU: 1 thread, all cores
    PYTHONPATH=$PWD python benchmarks/sensors.py --only lidar raster --calls 5
    PYTHONPATH=$PWD python benchmarks/sensors.py --E 256 --cpu-threads 1 2
    PYTHONPATH=$PWD python benchmarks/sensors.py --device cuda:0 --E 8192
    PYTHONPATH=$PWD python benchmarks/sensors.py --markdown           # the docs' table

The cases (``--E`` replaces every case's env count; each lidar beam count then runs at each):

- ``lidar``: ``tools.Lidar(B, max_range=1.0)`` on a track course, E = 1024 with 360 beams
  and E = 256 with 1080 beams;
- ``lookahead``: ``tools.Localizer()`` and ``tools.Lookahead(32, 0.1)``, E = 1024;
- ``cones``: ``tools.Props("cone", 0.1)`` and ``tools.ConeDetections(32, fov=2.0,
  max_range=1.5, dropout=0.1, noise=0.01)``, E = 1024;
- ``raster``: ``Props("cone", 0.1)``, ``HeightFieldBake(128)`` and ``tools.EgoRaster(64,
  1.0, cones="props", height="heightfield")``, E = 1024;
- ``next_gates``: ``tools.NextGates(3, reveal_range=0.3, nominal_noise=0.05)`` on a gate
  course (``presets.gates(gate_width=0.1)``), E = 1024.

Track courses are ``Course.track(presets.track(num_envs=E, device=D, cpu_threads=T),
checkpoint_spacing=0.6, extra=[...], seeds=1)``, with each agent at a random centre-line
bead, up to 0.08 across the road, heading along the road; gate courses
``Course.gates(presets.gates(num_envs=E, device=D, gate_width=0.1, cpu_threads=T),
extra=[...], seeds=1)`` with each agent near its first gate (0.2 deviation per axis), at a
random heading. For each ``--cpu-threads`` value (CPU only; default ``1 auto``: one thread
and every core this process may use) each case is timed three ways:

- ``sensor``: the sensor's own per-step work (its component's ``step`` hook: what it adds to
  a ``course.step()``);
- ``course.step()``: the whole step (the course's progress tool and the sensor's inputs,
  e.g. the localizer the lookahead reads, included);
- ``refresh``: the sensor's per-regeneration refresh of every env (its ``on_generate``);
  the lookahead keeps nothing per course and has none.

Each time is the median and the fastest of ``--calls`` calls after one warm-up call, each
call followed by ``wp.synchronize_device``, with the median process CPU ms beside them (all
threads of this process): on a machine other jobs load, the CPU ms counts the work and the
best ms is the closest to an idle machine's wall time. The header prints the load average.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import time
from dataclasses import dataclass

import numpy as np
import warp as wp

from track_gen import tools
from track_gen.course import Course
from track_gen.pipeline import presets

#: The sensors, in the table's order (their component names).
SENSORS = ("lidar", "lookahead", "cones", "raster", "next_gates")
#: The default cases: sensor -> ((E, setting), ...); a setting is the lidar's beam count.
CASES = {
    "lidar": ((1024, 360), (256, 1080)),
    "lookahead": ((1024, None),),
    "cones": ((1024, None),),
    "raster": ((1024, None),),
    "next_gates": ((1024, None),),
}
MAX_ENVS = 1 << 24  # the generators' num_envs limit
MAX_THREADS = 1024  # cpu_threads' limit


@dataclass(frozen=True)
class Timing:
    """Milliseconds of one timed call: median and fastest wall time, median process CPU."""

    median: float
    best: float
    cpu: float


def time_ms(fn, calls: int, device) -> Timing:
    """Times ``fn`` (one warm-up call first), each call followed by a device sync."""
    fn()
    wp.synchronize_device(device)
    wall, cpu = [], []
    for _ in range(calls):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wp.synchronize_device(device)
        wall.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    return Timing(statistics.median(wall), min(wall), statistics.median(cpu))


# ------------------------------------------------------------------------------- courses
def _track_poses(course, rng):
    """Agents at random centre-line beads, up to 0.08 across the road, along the road."""
    t, E = course.result, course.result.num_envs
    center = np.nan_to_num(t.host("center"))  # [E, N_max, 3]
    tangent = np.nan_to_num(t.host("tangent"), nan=0.0)
    count = np.maximum(t.host("count").reshape(E), 1)
    bead = rng.integers(0, 1 << 30, E) % count
    rows = np.arange(E)
    pos = center[rows, bead].astype(np.float32)
    tan = tangent[rows, bead]
    yaw = np.arctan2(tan[:, 1], np.where(np.abs(tan).sum(1) > 0, tan[:, 0], 1.0))
    side = rng.uniform(-0.08, 0.08, E)
    pos[:, 0] -= (side * np.sin(yaw)).astype(np.float32)
    pos[:, 1] += (side * np.cos(yaw)).astype(np.float32)
    return pos, yaw


def _gate_poses(course, rng):
    """Agents near their first gate (0.2 per axis), at a random heading."""
    E = course.result.num_envs
    first = np.nan_to_num(course.result.host("position")[:, 0])
    pos = (first + rng.normal(0.0, 0.2, (E, 3))).astype(np.float32)
    return pos, rng.uniform(-np.pi, np.pi, E)


def _bind(course, pos, yaw, device) -> None:
    quat = np.zeros((len(yaw), 4), np.float32)
    quat[:, 2], quat[:, 3] = np.sin(yaw / 2), np.cos(yaw / 2)
    course.bind(
        position=wp.array(pos, dtype=wp.vec3f, device=device),
        orientation=wp.array(quat, dtype=wp.quatf, device=device),
    )


def build(sensor: str, E: int, setting, device: str, threads) -> tuple[Course, str]:
    """The course of one case, bound, and the case's description."""
    if sensor == "next_gates":
        course = Course.gates(
            presets.gates(num_envs=E, device=device, gate_width=0.1, cpu_threads=threads),
            extra=[tools.NextGates(3, reveal_range=0.3, nominal_noise=0.05)],
            seeds=1,
        )
        _bind(course, *_gate_poses(course, np.random.default_rng(0)), device)
        return course, "3 gates, reveal 0.3"
    extra, what = {
        "lidar": ([tools.Lidar(setting or 360, max_range=1.0)], f"{setting or 360} beams"),
        "lookahead": ([tools.Localizer(), tools.Lookahead(32, 0.1)], "32 points"),
        "cones": (
            [
                tools.Props("cone", 0.1),
                tools.ConeDetections(32, fov=2.0, max_range=1.5, dropout=0.1, noise=0.01),
            ],
            "32 kept, dropout 0.1",
        ),
        "raster": (
            [
                tools.Props("cone", 0.1),
                tools.HeightFieldBake(128),
                tools.EgoRaster(64, 1.0, cones="props", height="heightfield"),
            ],
            "64x64, cones, height",
        ),
    }[sensor]
    course = Course.track(
        presets.track(num_envs=E, device=device, cpu_threads=threads),
        checkpoint_spacing=0.6,
        extra=extra,
        seeds=1,
    )
    _bind(course, *_track_poses(course, np.random.default_rng(0)), device)
    return course, what


def run_case(sensor: str, E: int, setting, device: str, threads, calls: int) -> list[tuple]:
    """Table rows (sensor, E, case, threads, timed, Timing) of one case."""
    course, what = build(sensor, E, setting, device, threads)
    comp, ctx = course.components[sensor], course._ctx  # the component's hooks and their context
    timed = [
        ("sensor", lambda: comp.step(ctx)),
        ("course.step()", course.step),
    ]
    if type(comp).on_generate is not tools.Component.on_generate:
        timed.append(("refresh", lambda: comp.on_generate(ctx, None)))
    used = "-" if device != "cpu" else f"{threads}->{course.generator.cpu_threads}"
    return [(sensor, E, what, used, name, time_ms(fn, calls, device)) for name, fn in timed]


# ------------------------------------------------------------------------------- options
def _threads(ap, value: str):
    if value == "auto":
        return value
    try:
        n = int(value)
    except ValueError:
        n = None
    if n is None or not 1 <= n <= MAX_THREADS:
        ap.error(f"--cpu-threads: {value!r} is not 'auto' or an int in [1, {MAX_THREADS}]")
    return n


def parse(argv=None):
    """The options, each checked (argparse's usage error, exit status 2, names the value)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    ap.add_argument(
        "--E",
        type=int,
        nargs="+",
        default=None,
        help="env counts for every case (default: each case's)",
    )
    ap.add_argument(
        "--cpu-threads",
        nargs="+",
        default=None,
        help="cpu_threads values, 'auto' or ints (CPU only; default: 1 auto)",
    )
    ap.add_argument("--calls", type=int, default=7, help="timed calls per figure (default 7)")
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME", help=f"of {SENSORS}")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args(argv)
    if not re.fullmatch(r"cpu|cuda(:\d+)?", args.device):
        ap.error(f"--device: {args.device!r} is not cpu, cuda or cuda:N")
    if args.device != "cpu":
        index = int(args.device.partition(":")[2] or 0)
        count = wp.get_cuda_device_count()
        if index >= count:
            ap.error(f"--device {args.device}: this machine has {count} CUDA device(s)")
        if args.cpu_threads is not None:
            ap.error("--cpu-threads: the CPU's threads; a CUDA device ignores cpu_threads")
    for E in args.E or ():
        if not 1 <= E <= MAX_ENVS:
            ap.error(f"--E: {E} is out of range: an env count in [1, {MAX_ENVS}]")
    if args.E is not None and len(set(args.E)) != len(args.E):
        ap.error(f"--E: {args.E} names an env count twice")
    if not 1 <= args.calls <= 10_000:
        ap.error(f"--calls: {args.calls} is out of range: timed calls in [1, 10000]")
    for name in args.only or ():
        if name not in SENSORS:
            ap.error(f"--only: {name!r} is not a sensor: pick from {', '.join(SENSORS)}")
    raw = args.cpu_threads or (["1", "auto"] if args.device == "cpu" else ["auto"])
    args.cpu_threads = [_threads(ap, v) for v in raw]
    if len(set(args.cpu_threads)) != len(args.cpu_threads):
        ap.error(f"--cpu-threads: {raw} names a value twice")
    return args


def cases(args) -> list[tuple]:
    """(sensor, E, setting) of every case the options pick, in the table's order."""
    picked = [s for s in SENSORS if args.only is None or s in args.only]
    out = []
    for s in picked:
        settings = dict.fromkeys(setting for _, setting in CASES[s])
        if args.E is None:
            out += [(s, E, setting) for E, setting in CASES[s]]
        else:
            out += [(s, E, setting) for setting in settings for E in args.E]
    return out


HEAD = ("sensor", "E", "case", "threads", "timed", "median ms", "best ms", "cpu ms")


def _line(row, markdown: bool) -> str:
    sensor, E, what, used, name, t = row
    cells = (sensor, str(E), what, used, name, f"{t.median:.2f}", f"{t.best:.2f}", f"{t.cpu:.2f}")
    if markdown:
        return "| " + " | ".join((*cells[:4], f"`{name}`", *cells[5:])) + " |"
    return "{:<10} {:>6} {:<20} {:>8} {:<13} {:>10} {:>8} {:>8}".format(*cells)


def main(argv=None) -> int:
    args = parse(argv)
    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(
        f"device {args.device}, {os.cpu_count()} cores, load average {load}, "
        f"{args.calls} calls per figure",
        flush=True,
    )
    if args.markdown:
        print("| " + " | ".join(HEAD) + " |")
        print("|" + " --- |" * 3 + " --- |" + " --- |" + " ---: |" * 3)
    else:
        print("{:<10} {:>6} {:<20} {:>8} {:<13} {:>10} {:>8} {:>8}".format(*HEAD))
    for sensor, E, setting in cases(args):
        for threads in args.cpu_threads:
            for row in run_case(sensor, E, setting, args.device, threads, args.calls):
                print(_line(row, args.markdown), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
