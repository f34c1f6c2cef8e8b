"""Throughput and quality of TrackGenerator.generate() per sampler and batch size.

Run from the repository root (or with track_gen installed):

    PYTHONPATH=. python benchmarks/generate.py                      # best device, defaults
    PYTHONPATH=. python benchmarks/generate.py --device cpu --E 1024 --calls 3
    PYTHONPATH=. python benchmarks/generate.py --device cuda:0 --generators bezier --E 8192 65536
    PYTHONPATH=. python benchmarks/generate.py --family gates --gate-width 0.1   # gate courses
    PYTHONPATH=. python benchmarks/generate.py --device cpu --E 1024 --profile   # ms per stage

For each generator and E: one warm-up ``generate(advance=True)`` (first_ms: kernel load or
compile, CUDA graph recording), then ``--calls`` timed ``generate(advance=True)`` calls, each
building new courses, followed by ``wp.synchronize_device``. ms/call is their median.
The quality columns pool every timed batch (``calls * E`` tracks): yield is the valid fraction,
the FailBit columns count tracks with that bit set, count is the mean bead count, sweeps the
mean relaxation sweeps and sep_ovf the total dropped separation candidates
(``generator.diagnostics``; "-" when the pipeline has no such counter).

``--profile`` times every call per part with the program's stage timer
(``generator.time_stages()``: CUDA events or host clocks, no synchronization per stage) and
prints, after the table, the median ms of each part (setup, each stage, commit) per run.
``--kernel-layout`` builds the track generators with that thread layout (default: auto).
``--cpu-threads`` runs every generator and E once per value (default ``1 auto`` on the CPU:
one thread and every core, side by side; the ``threads`` column is the resolved count), then
prints a thread-scaling table: ms per call at each value and its speedup over the first.
``--cpu-threads 1 2 4 8`` measures the scaling on a bigger machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import warp as wp

from track_gen import FailBit, GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.config import TRACK_GENERATORS
from track_gen.engine.threads import cpu_threads_values
from track_gen.pipeline import presets

CPU_E = [64, 256, 1024]
CUDA_E = [8192]


def _columns():
    cols = [
        ("generator", 10, "s"),
        ("E", 7, "d"),
        ("threads", 7, "d"),
        ("first_ms", 9, ".1f"),
        ("ms/call", 9, ".3f"),
        ("tracks/s", 11, ",.0f"),
        ("yield", 7, ".1%"),
    ]
    cols += [(b.name.lower(), max(len(b.name), 6), "d") for b in FailBit]
    cols += [("count", 7, ".1f"), ("sweeps", 7, ".1f"), ("sep_ovf", 9, "s")]
    return cols


def _fmt_row(cols, values) -> str:
    parts = []
    for (name, width, spec), v in zip(cols, values, strict=True):
        if name == "generator":
            parts.append(f"{v:<{width}{spec}}")
        else:
            parts.append(f"{v:>{width}{spec}}")
    return " ".join(parts)


def run_one(
    generator: str,
    E: int,
    device,
    calls: int,
    seed: int,
    family: str = "track",
    gate_width: float = 0.1,
    profile: dict | None = None,
    kernel_layout: str = "auto",
    cpu_threads="auto",
) -> list:
    common = dict(generator=generator, num_envs=E, device=str(device), cpu_threads=cpu_threads)
    if family == "gates":
        gen = GateGenerator(GateGenConfig(**common, gate_width=gate_width), seeds=seed)
    elif generator == "circuit":  # metres: presets.circuit's beads and capacity
        common.pop("generator")
        spec = presets.circuit(common.pop("num_envs"), kernel_layout=kernel_layout, **common)
        gen = TrackGenerator(spec, seeds=seed)
    else:
        gen = TrackGenerator(TrackGenConfig(**common, kernel_layout=kernel_layout), seeds=seed)
    dev = gen.device
    timer = gen.time_stages() if profile is not None else None
    parts = {p: [] for p in timer.parts} if timer is not None else {}

    t0 = time.perf_counter()
    gen.generate(advance=True)
    wp.synchronize_device(dev)
    first_ms = (time.perf_counter() - t0) * 1e3

    times = []
    n_valid = 0
    bit_counts = {b: 0 for b in FailBit}
    count_sum = 0
    sweeps_sum = 0
    overflow_sum = 0
    has_sweeps = "relax.sweeps" in gen.diagnostics
    has_overflow = "relax.sep_overflow" in gen.diagnostics
    for _ in range(calls):
        t0 = time.perf_counter()
        track = gen.generate(advance=True)
        wp.synchronize_device(dev)
        times.append((time.perf_counter() - t0) * 1e3)
        # Read-backs stay outside the timed region.
        if timer is not None:
            for p, ms_part in timer.read().items():
                parts[p].append(ms_part)
        fail = track.fail_mask.numpy()
        n_valid += int(track.valid.numpy().sum())
        for b in FailBit:
            bit_counts[b] += int(np.count_nonzero(fail & int(b)))
        count_sum += int(track.count.numpy().astype(np.int64).sum())
        if has_sweeps:
            sweeps_sum += int(gen.diagnostics["relax.sweeps"].numpy().astype(np.int64).sum())
        if has_overflow:
            overflow_sum += int(
                gen.diagnostics["relax.sep_overflow"].numpy().astype(np.int64).sum()
            )

    tracks = calls * E
    ms = statistics.median(times)
    if profile is not None:
        profile[(generator, E)] = {p: statistics.median(v) for p, v in parts.items()}
    return [
        generator,
        E,
        gen.cpu_threads,
        first_ms,
        ms,
        E / (ms * 1e-3) if ms > 0 else float("inf"),
        n_valid / tracks,
        *(bit_counts[b] for b in FailBit),
        count_sum / tracks,
        sweeps_sum / tracks if has_sweeps else float("nan"),
        str(overflow_sum) if has_overflow else "-",
    ]


def main(argv=None) -> int:
    # the built-in samplers a config alone builds (mix, centerline and real_track need data)
    samplers = list(TRACK_GENERATORS)
    parser = argparse.ArgumentParser(
        description="Time TrackGenerator.generate(advance=True) per generator and batch size."
    )
    parser.add_argument("--device", default=None, help="Warp device (default: CUDA if present)")
    parser.add_argument(
        "--generators",
        nargs="+",
        choices=samplers,
        default=samplers,
        metavar="NAME",
        help=f"samplers to run (default: all registered: {' '.join(samplers)})",
    )
    parser.add_argument(
        "--E",
        nargs="+",
        type=int,
        default=None,
        help=f"batch sizes (default: {' '.join(map(str, CPU_E))} on the CPU, "
        f"{' '.join(map(str, CUDA_E))} on CUDA)",
    )
    parser.add_argument("--calls", type=int, default=10, help="timed calls per run (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    parser.add_argument(
        "--family",
        choices=("track", "tracks", "gates"),
        default="track",
        help="track courses (TrackGenerator; 'tracks' is the same) or gate courses (GateGenerator)",
    )
    parser.add_argument(
        "--gate-width", type=float, default=0.1, help="gate width for --family gates (0.1)"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="time each part of every call (setup, each stage, commit) and print ms per part",
    )
    parser.add_argument(
        "--kernel-layout",
        choices=("auto", "per_env", "per_item"),
        default="auto",
        help="thread layout of the heavy stages (default auto: per_env on CPU, per_item on CUDA)",
    )
    parser.add_argument(
        "--cpu-threads",
        nargs="+",
        default=None,
        metavar="N",
        help="cpu_threads values to run side by side (ints or 'auto'; default on the CPU: "
        "1 auto; on CUDA: auto)",
    )
    args = parser.parse_args(argv)
    if args.calls < 1:
        parser.error("--calls must be >= 1")
    try:
        threads = cpu_threads_values(args.cpu_threads or [])
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))

    wp.config.log_level = wp.LOG_WARNING  # no init banner or module-load lines in the table
    try:
        device = wp.get_device(args.device) if args.device else wp.get_preferred_device()
    except ValueError as exc:
        parser.error(f"--device: {exc}")
    sizes = args.E or (CUDA_E if device.is_cuda else CPU_E)
    threads = threads or (["auto"] if device.is_cuda else [1, "auto"])
    if any(e < 1 for e in sizes):
        parser.error("--E values must be >= 1")

    name = getattr(device, "name", "")
    print(
        f"# {args.family}: device {device} ({name}), warp {wp.config.version}, "
        f"calls {args.calls}, seed {args.seed}, kernel_layout {args.kernel_layout}",
        flush=True,
    )
    cols = _columns()
    header = " ".join(f"{n:<{w}}" if n == "generator" else f"{n:>{w}}" for n, w, _ in cols)
    print(header, flush=True)
    profile = {} if args.profile else None
    scaling = {}
    ms_col = [n for n, _, _ in cols].index("ms/call")
    # circuit draws tracks only (in metres): no gate courses
    generators = [g for g in args.generators if not (args.family == "gates" and g == "circuit")]
    for generator in generators:
        for E in sizes:
            for t in threads:
                row = run_one(
                    generator,
                    E,
                    device,
                    args.calls,
                    args.seed,
                    args.family,
                    args.gate_width,
                    profile,
                    args.kernel_layout,
                    t,
                )
                print(_fmt_row(cols, row), flush=True)
                scaling.setdefault((generator, E), []).append((t, row[2], row[ms_col]))
    if len(threads) > 1:
        print(
            "# thread scaling: ms per call at each cpu_threads (resolved count), speedup "
            "over the first",
            flush=True,
        )
        for (generator, E), runs in scaling.items():
            base = runs[0][2]
            text = ", ".join(
                f"{t}({n}) {ms:.2f} ms x{base / ms:.2f}" for t, n, ms in runs if ms > 0
            )
            print(f"{generator:<10} {E:>7}  {text}", flush=True)
    if profile:
        print("# ms per part (median of the timed calls)", flush=True)
        for (generator, E), part_ms in profile.items():
            text = ", ".join(f"{p} {ms:.2f}" for p, ms in part_ms.items())
            print(f"{generator:<10} {E:>7}  {text}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
