"""How close are generated courses to real ones: the descriptor distributions of each sampler
(and mixes of them) against a folder of real circuits, by two-sample KS statistics.

Run from the repository root (or with track_gen installed):

    PYTHONPATH=. python benchmarks/realism.py                       # the test circuits
    PYTHONPATH=. python benchmarks/realism.py --circuits /path/to/racetrack-database/tracks
    PYTHONPATH=. python benchmarks/realism.py --meter-ms --E 8192            # the meter's cost
    PYTHONPATH=. python benchmarks/realism.py --E 512 --half-widths 0.1 0.0125 \
        --width-variations 0 0.5 --num-points 256 2048 --mixes --csv realism.csv

Real circuits: every ``*.csv`` of ``--circuits`` (the TUM racetrack-database layout, read with
``track_gen.io.read_tum``) or, by default, the hand-made circuits the tests ship
(``tests/io/__init__.py``: an oval, a hairpin, a variable-width loop, a sample circuit), built
at their own widths through ``track_gen.io.tracks_spec`` (metres). Generated courses: for
each sampler and each setting of the grid ``--half-widths`` x ``--width-variations`` x
``--num-points`` (the sampler's resolution before resampling), ``E`` envs of
``TrackGenConfig(generator=g, half_width=hw, width_variation=wv, num_points=p)`` with
``N_max`` room for 8 track units of beads (and ``presets.track_mix`` of all samplers with
``--mixes``). Every valid env is measured by ``tools.CourseStatsMeter`` (the ``"stats"``
component's utility, default settings: corners are radii below 20 half widths) and invalid
envs are dropped.

Common scale: a generated track is about 1.44 track units across with a 0.1 half width, a
circuit some kilometres across with a 5 m one, so each env's descriptors are made
dimensionless by its own mean half width ``h = width_mean / 2``: lengths divided by ``h``,
curvatures times ``h``; angles, counts and fractions are dimensionless already, and so is the
corner rule (radii in half widths). The features:

    length/h, turning, kappa_p50*h, kappa_p90*h, kappa_max*h, corners, corners per 100 h,
    corner_kappa*h, corner_angle, straight, width_min/width_mean

Each row reports the two-sample KS statistic ``D = sup_x |F_gen(x) - F_real(x)|`` of every
feature (0: the same distribution, 1: disjoint) and their mean, best (lowest) first. With a
few real circuits a KS statistic is coarse (steps of 1 / circuits): read the ranking, not the
third digit.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np
import warp as wp

REPO = Path(__file__).resolve().parents[1]

from track_gen import TrackGenConfig, TrackGenerator, tools  # noqa: E402
from track_gen.config import TRACK_GENERATORS  # noqa: E402
from track_gen.io import RealTrack, read_tum, tracks_spec  # noqa: E402
from track_gen.pipeline import presets  # noqa: E402

#: The compared features, in table order: (column, function of the meter's host arrays).
FEATURES = (
    "length/h",
    "turning",
    "k50*h",
    "k90*h",
    "kmax*h",
    "corners",
    "corn/100h",
    "ck*h",
    "c_angle",
    "straight",
    "wmin/w",
)


def ks_statistic(a, b) -> float:
    """Two-sample Kolmogorov-Smirnov statistic ``sup_x |F_a(x) - F_b(x)|`` of the empirical
    CDFs of ``a`` and ``b`` (1-D, NaN dropped), NaN when either sample is empty."""
    a = np.sort(np.asarray(a, np.float64)[~np.isnan(a)])
    b = np.sort(np.asarray(b, np.float64)[~np.isnan(b)])
    if a.size == 0 or b.size == 0:
        return float("nan")
    x = np.concatenate([a, b])
    fa = np.searchsorted(a, x, side="right") / a.size
    fb = np.searchsorted(b, x, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def features(stats) -> dict[str, np.ndarray]:
    """The dimensionless features of every valid env of a :class:`CourseStatsSet`
    (``h = width_mean / 2`` of each env), as float64 arrays."""
    g = {k: getattr(stats, k).numpy().astype(np.float64) for k in stats.features()}
    pct = stats.host("curvature_percentile").astype(np.float64)
    ok = np.isfinite(g["length"])
    h = 0.5 * g["width_mean"]
    out = {
        "length/h": g["length"] / h,
        "turning": g["turning"],
        "k50*h": pct[:, 0] * h,
        "k90*h": pct[:, 1] * h,
        "kmax*h": g["curvature_max"] * h,
        "corners": g["corners"],
        "corn/100h": 100.0 * g["corners"] / (g["length"] / h),
        "ck*h": g["corner_curvature"] * h,
        "c_angle": g["corner_angle"],
        "straight": g["straight_fraction"],
        "wmin/w": g["width_min"] / g["width_mean"],
    }
    return {k: v[ok] for k, v in out.items()}


def measure(track) -> dict[str, np.ndarray]:
    """:func:`features` of a generator result (percentiles 50 and 90)."""
    return features(tools.CourseStatsMeter(track, percentiles=(50.0, 90.0)).stats)


def test_circuits() -> list[RealTrack]:
    """The hand-made circuits of ``tests/io/__init__.py`` (metres)."""
    sys.path.insert(0, str(REPO))
    from tests.io import CIRCUITS

    return [RealTrack(name, *make()) for name, make in CIRCUITS.items()]


def real_features(folder: str | None, device) -> tuple[str, int, dict[str, np.ndarray]]:
    """(label, circuits, features of the valid ones) of ``folder``'s ``*.csv`` circuits (None:
    the test circuits)."""
    if folder is None:
        circuits, label = test_circuits(), "test circuits"
    else:
        paths = sorted(Path(folder).glob("*.csv"))
        if not paths:
            raise SystemExit(f"--circuits {folder}: no *.csv circuit in it")
        circuits, label = [read_tum(p) for p in paths], str(folder)
    gen = TrackGenerator(tracks_spec(circuits, num_envs=len(circuits), device=device), seeds=0)
    gen.generate()
    valid = gen.result.valid.numpy()
    bad = [c.name for c, v in zip(circuits, valid, strict=True) if not v]
    if bad:
        print(f"# real circuits left out (invalid at their widths): {bad}")
    return label, len(circuits), measure(gen.result)


def generated_features(spec_or_config, seed: int) -> tuple[dict[str, np.ndarray], float, float]:
    """(features, yield, seconds) of one generated batch."""
    t0 = time.perf_counter()
    gen = TrackGenerator(spec_or_config, seeds=seed)
    gen.generate()
    f = measure(gen.result)
    return f, float(gen.result.valid.numpy().mean()), time.perf_counter() - t0


def time_meter(num_envs: int, device, calls: int = 20) -> tuple[float, float]:
    """Median ms per ``CourseStatsMeter.measure`` call on ``num_envs`` default generated
    tracks: every env, and a mask of 1% of them (``wp.synchronize_device`` before each timer
    stops)."""
    gen = TrackGenerator(presets.track(num_envs=num_envs, device=device), seeds=0)
    gen.generate()
    meter = tools.CourseStatsMeter(gen.result)
    few = np.zeros(num_envs, np.int32)
    few[:: max(1, num_envs // max(1, num_envs // 100))] = 1
    few = wp.array(few, dtype=wp.int32, device=device)
    out = []
    for mask in (None, few):
        meter.measure(mask)
        wp.synchronize_device(device)
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            meter.measure(mask)
            wp.synchronize_device(device)
            times.append(1e3 * (time.perf_counter() - t0))
        out.append(float(np.median(times)))
    return out[0], out[1]


def _row(name: str, setting: tuple, yld: float, feats, real) -> dict:
    hw, wv, npts = setting
    row = {"source": name, "half_width": hw, "width_variation": wv, "num_points": npts}
    row.update({"envs": len(feats["turning"]), "yield": yld})
    for k in FEATURES:
        row[k] = ks_statistic(feats[k], real[k])
    row["mean"] = float(np.nanmean([row[k] for k in FEATURES]))
    return row


def _medians(name: str, feats) -> str:
    cells = " | ".join(f"{np.median(feats[k]):.3g}" if feats[k].size else "-" for k in FEATURES)
    return f"| {name} | {cells} |"


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--circuits", default=None, help="folder of *.csv circuits (TUM layout)")
    p.add_argument("--E", type=int, default=256, help="envs per sampler and half width")
    p.add_argument("--samplers", nargs="+", default=list(TRACK_GENERATORS))
    p.add_argument("--half-widths", nargs="+", type=float, default=[0.1, 0.05])
    p.add_argument(
        "--width-variations", nargs="+", type=float, default=[0.0], help="width_variation values"
    )
    p.add_argument(
        "--num-points", nargs="+", type=int, default=[256], help="sampler resolutions num_points"
    )
    p.add_argument("--mixes", action="store_true", help="also a mix of all --samplers")
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--csv", default=None, help="write the rows to this CSV file")
    p.add_argument(
        "--meter-ms", action="store_true", help="only time CourseStatsMeter.measure at --E envs"
    )
    args = p.parse_args(argv)
    if args.E < 1:
        raise SystemExit(f"--E {args.E}: must be >= 1")
    if args.meter_ms:
        wp.init()
        full, masked = time_meter(args.E, args.device)
        print(
            f"CourseStatsMeter.measure, E={args.E} on {args.device}: {full:.3f} ms every env, "
            f"{masked:.3f} ms with 1% of the envs masked"
        )
        return []
    unknown = [s for s in args.samplers if s not in TRACK_GENERATORS]
    if unknown:
        raise SystemExit(f"--samplers {unknown}: not among {list(TRACK_GENERATORS)}")
    wp.init()
    label, count, real = real_features(args.circuits, args.device)
    print(f"# real: {label}: {len(real['turning'])} of {count} circuits measured")
    runs = []
    grid = [
        (hw, wv, npts)
        for hw in args.half_widths
        for wv in args.width_variations
        for npts in args.num_points
    ]
    for hw, wv, npts in grid:
        common = {"num_envs": args.E, "half_width": hw, "device": args.device}
        common.update(width_variation=wv, num_points=npts)
        # room for a loop of 8 track units at the beads' spacing 0.6 * half_width
        common["N_max"] = max(TrackGenConfig().N_max, int(8.0 / (0.6 * hw)) + 2)
        sources = [(g, TrackGenConfig(generator=g, **common)) for g in args.samplers]
        if args.mixes and len(args.samplers) > 1:
            name = "mix(" + "+".join(args.samplers) + ")"
            sources.append((name, presets.track_mix(list(args.samplers), **common)))
        for name, src in sources:
            feats, yld, secs = generated_features(src, args.seed)
            runs.append((name, (hw, wv, npts), feats, yld))
            n = len(feats["turning"])
            print(f"# {name} hw={hw} wv={wv} pts={npts}: {n} valid, {secs:.1f} s", flush=True)
    rows = sorted(
        (_row(n, setting, y, f, real) for n, setting, f, y in runs),
        key=lambda r: r["mean"],
    )
    print(f"\nKS statistic per feature against {label} (lower is closer), best first:\n")
    cols = "| source | half_width | width_var | points | yield | "
    print(cols + " | ".join(FEATURES) + " | mean |")
    print("|---" * (len(FEATURES) + 6) + "|")
    for r in rows:
        cells = " | ".join(f"{r[k]:.2f}" for k in FEATURES)
        head = f"| {r['source']} | {r['half_width']:g} | {r['width_variation']:g}"
        head += f" | {r['num_points']} | {r['yield']:.0%}"
        print(f"{head} | {cells} | {r['mean']:.3f} |")
    print("\nMedians of the features:\n")
    print("| source | " + " | ".join(FEATURES) + " |")
    print("|---" * (len(FEATURES) + 1) + "|")
    print(_medians("real", real))
    for n, (hw, wv, npts), f, _ in runs:
        print(_medians(f"{n} (hw {hw:g}, wv {wv:g}, {npts} points)", f))
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return rows


if __name__ == "__main__":
    main()
