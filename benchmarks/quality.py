"""Shape quality and speed of each generator: one table row per sampler.

Run from the repository root (or with track_gen installed):

    PYTHONPATH=. python benchmarks/quality.py                        # best device, defaults
    PYTHONPATH=. python benchmarks/quality.py --device cpu --E 512 --csv quality.csv
    PYTHONPATH=. python benchmarks/quality.py --generators bezier polar --gallery gallery/

For each generator: ``TrackGenerator(TrackGenConfig(generator=g, num_envs=E, device=...),
seeds=seed)``, one warm-up ``generate()`` then ``--calls`` timed ``generate()`` calls (the
same epoch-0 batch rebuilt every call, ``wp.synchronize_device`` before the timer stops);
ms/call is their median. The metrics are NumPy over that batch (see
``benchmarks/track_metrics.py`` and docs/quality.md): yield and the FailBit counts over all E
envs; x_pre (the fraction of the E envs whose centerline self-crosses when the same seeds are
built with ``relax_enable=False``); over the valid envs: disp (mean distance of the relaxed
beads to the unrelaxed centerline), mean length, mean and median compactness, chicanes, straight
fraction, peak curvature times half_width and the lap-time proxy.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import track_metrics as tm  # next to this script (a script's folder is sys.path[0])
import warp as wp

from track_gen import FailBit, TrackGenConfig, TrackGenerator
from track_gen.pipeline import default_registry
from track_gen.tools import CourseStatsUtility

CPU_E = 512
CUDA_E = 4096
# Samplers that need more than a TrackGenConfig (child samplers, a user centerline input).
NOT_STANDALONE = ("mix", "centerline", "real_track")
GALLERY_ENVS = 16


def default_generators() -> list[str]:
    """Every registered sampler that builds from a TrackGenConfig alone."""
    return [s for s in default_registry().samplers() if s not in NOT_STANDALONE]


def _columns():
    cols = [("generator", 10, "s"), ("E", 6, "d"), ("ms/call", 9, ".1f"), ("yield", 7, ".1%")]
    cols += [(b.name.lower(), max(len(b.name), 6), "d") for b in FailBit]
    cols += [
        ("x_pre", 6, ".1%"),
        ("disp", 7, ".4f"),
        ("length", 7, ".2f"),
        ("compact", 7, ".3f"),
        ("cmp_med", 7, ".3f"),
        ("chicanes", 8, ".1f"),
        ("straight", 8, ".3f"),
        ("peak_k", 7, ".3f"),
        ("lap_t", 7, ".2f"),
    ]
    return cols


def _fmt_row(cols, row: dict) -> str:
    parts = []
    for name, width, spec in cols:
        v = row[name]
        if name == "generator":
            parts.append(f"{v:<{width}{spec}}")
        elif isinstance(v, float) and not np.isfinite(v):
            parts.append(f"{'-':>{width}}")
        else:
            parts.append(f"{v:>{width}{spec}}")
    return " ".join(parts)


def snapshot(track) -> dict:
    """Host copies of the fields the metrics read (``.numpy()`` on the CPU is a view of a
    buffer the next ``generate()`` overwrites), with the library's straight fraction
    (``CourseStats``: the share of the plan-view length outside corners)."""
    E, n_max = track.num_envs, track.N_max
    stats = CourseStatsUtility(track).stats
    return {
        "straight": np.array(stats.straight_fraction.numpy(), copy=True).astype(np.float64),
        "center": np.array(track.center.numpy(), copy=True).reshape(E, n_max, 3),
        "count": np.array(track.count.numpy(), copy=True).astype(np.int64),
        "length": np.array(track.length.numpy(), copy=True).astype(np.float64),
        "valid": np.array(track.valid.numpy(), copy=True) != 0,
        "fail_mask": np.array(track.fail_mask.numpy(), copy=True),
    }


def _mean(values) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def batch_metrics(relaxed: dict, unrelaxed: dict, half_width: float) -> dict:
    """Every quality column for one batch (``relaxed``) and its ``relax_enable=False`` twin
    built from the same seeds (``unrelaxed``), both from :func:`snapshot`."""
    E = relaxed["count"].shape[0]
    fail = relaxed["fail_mask"]
    row = {"yield": float(relaxed["valid"].mean()) if E else float("nan")}
    for b in FailBit:
        row[b.name.lower()] = int(np.count_nonzero(fail & int(b)))

    crosses = tm.crossing_flags(unrelaxed["center"], unrelaxed["count"])
    row["x_pre"] = float(crosses.mean()) if E else float("nan")

    loops = tm.loops_from_padded(relaxed["center"], relaxed["count"])
    raw = tm.loops_from_padded(unrelaxed["center"], unrelaxed["count"])
    valid = [e for e in range(E) if relaxed["valid"][e] and loops[e].shape[0] >= 4]
    disp = [
        tm.mean_distance_to_loop(loops[e], raw[e])
        for e in valid
        if raw[e].shape[0] >= 3 and np.all(np.isfinite(raw[e]))
    ]
    comp = [tm.compactness(loops[e], relaxed["length"][e]) for e in valid]
    row["disp"] = _mean(disp)
    row["length"] = _mean([relaxed["length"][e] for e in valid])
    row["compact"] = _mean(comp)
    row["cmp_med"] = float(np.median(comp)) if comp else float("nan")
    row["chicanes"] = _mean([tm.chicane_count(loops[e]) for e in valid])
    row["straight"] = _mean([relaxed["straight"][e] for e in valid])
    row["peak_k"] = _mean([tm.peak_curvature(loops[e], half_width) for e in valid])
    row["lap_t"] = _mean([tm.lap_time(loops[e]) for e in valid])
    return row


class GeneratorBuildError(Exception):
    """The sampler cannot be built from a TrackGenConfig alone."""


def _build(generator: str, E: int, device, seed: int, **fields):
    try:
        cfg = TrackGenConfig(generator=generator, num_envs=E, device=str(device), **fields)
        return cfg, TrackGenerator(cfg, seeds=seed)
    except (TypeError, ValueError, KeyError) as exc:
        raise GeneratorBuildError(f"{type(exc).__name__}: {exc}") from exc


def run_one(generator: str, E: int, device, calls: int, seed: int, gallery: Path | None) -> dict:
    cfg, gen = _build(generator, E, device, seed)
    _, raw_gen = _build(generator, E, device, seed, relax_enable=False)
    dev = gen.device

    gen.generate()  # warm-up: kernel load or compile, CUDA graph recording
    wp.synchronize_device(dev)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        track = gen.generate()
        wp.synchronize_device(dev)
        times.append((time.perf_counter() - t0) * 1e3)
    relaxed = snapshot(track)

    unrelaxed = snapshot(raw_gen.generate())
    wp.synchronize_device(dev)

    row = {"generator": generator, "E": E, "ms/call": statistics.median(times)}
    row.update(batch_metrics(relaxed, unrelaxed, cfg.half_width))

    if gallery is not None:
        from track_gen.viz import plot_tracks

        path = gallery / f"{generator}.png"
        title = f"{generator}: E={E}, seed {seed}, yield {row['yield']:.1%}"
        fig = plot_tracks(track, envs=min(GALLERY_ENVS, E), path=path, title=title)
        del fig
    return row


def main(argv=None) -> int:
    samplers = default_registry().samplers()
    defaults = default_generators()
    parser = argparse.ArgumentParser(
        description="Shape-quality metrics and generate() time per generator."
    )
    parser.add_argument("--device", default=None, help="Warp device (default: CUDA if present)")
    parser.add_argument(
        "--generators",
        nargs="+",
        choices=samplers,
        default=defaults,
        metavar="NAME",
        help=f"samplers to run (default: {' '.join(defaults)})",
    )
    parser.add_argument(
        "--E", type=int, default=None, help=f"batch size (default {CPU_E} on CPU, {CUDA_E} on CUDA)"
    )
    parser.add_argument("--calls", type=int, default=5, help="timed calls (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="base seed: env e gets seed + e")
    parser.add_argument("--csv", type=Path, default=None, metavar="PATH", help="also write CSV")
    parser.add_argument(
        "--gallery",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"write DIR/<generator>.png, a grid of the first {GALLERY_ENVS} tracks",
    )
    args = parser.parse_args(argv)
    if args.calls < 1:
        parser.error("--calls must be >= 1")

    wp.config.log_level = wp.LOG_WARNING  # no init banner or module-load lines in the table
    try:
        device = wp.get_device(args.device) if args.device else wp.get_preferred_device()
    except ValueError as exc:
        parser.error(f"--device: {exc}")
    E = args.E if args.E is not None else (CUDA_E if device.is_cuda else CPU_E)
    if E < 1:
        parser.error("--E must be >= 1")

    gallery = args.gallery
    if gallery is not None:
        if importlib.util.find_spec("matplotlib") is None:
            print(
                '# --gallery skipped: matplotlib is not installed (pip install "track_gen[viz]")',
                flush=True,
            )
            gallery = None
        else:
            gallery.mkdir(parents=True, exist_ok=True)

    name = getattr(device, "name", "")
    print(
        f"# device {device} ({name}), warp {wp.config.version}, E {E}, calls {args.calls}, "
        f"seed {args.seed}",
        flush=True,
    )
    cols = _columns()
    print(
        " ".join(f"{n:<{w}}" if n == "generator" else f"{n:>{w}}" for n, w, _ in cols),
        flush=True,
    )
    rows = []
    for generator in args.generators:
        try:
            row = run_one(generator, E, device, args.calls, args.seed, gallery)
        except GeneratorBuildError as exc:
            # Reported and skipped (e.g. "mix" needs options), so it hides no other row.
            print(f"# skipped {generator}: {exc}", flush=True)
            continue
        rows.append(row)
        print(_fmt_row(cols, row), flush=True)

    if args.csv is not None:
        with open(args.csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow([n for n, _, _ in cols])
            for row in rows:
                writer.writerow([row[n] for n, _, _ in cols])
        print(f"# wrote {args.csv}", flush=True)
    if gallery is not None and rows:
        print(f"# gallery: {', '.join(str(gallery / (r['generator'] + '.png')) for r in rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
