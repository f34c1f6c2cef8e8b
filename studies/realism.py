"""How close generated courses are to real circuits: descriptor distributions against a folder
of real circuits, by two-sample Kolmogorov-Smirnov statistics.

Run from the repository root (a module of the ``studies`` package):

    python -m studies.realism --circuits ../shared/data/tum --E 512     # circuits, metres
    python -m studies.realism --mode dimensionless --circuits DIR --E 512 --mixes \
        --half-widths 0.1 0.0125                                         # every sampler
    python -m studies.realism --meter-ms --E 8192                        # the meter's cost

**Metres** (``--mode metres``, the default): ``E`` circuits of ``presets.circuit`` (seeds
``--seed + e``) against every ``*.csv`` of ``--circuits`` (TUM layout, ``io.read_tum``, built
at their own widths with ``io.tracks_spec`` at the circuits' bead spacing, ``--spacing`` 4 m;
a circuit the import cannot make valid is left out and named). Every valid course is measured
by ``tools.CourseStatsUtility`` (default settings: corners are radii below 20 half widths) and
gets a racing line (``tools.RacingLineUtility``: a 2 m wide car, ``a_lat = a_lon = 10`` m/s^2,
``v_max = 70`` m/s, the settings of ``benchmarks/racing_line.py``), whose lap time is the
``par_time`` descriptor, s. The descriptors, absolute (metres, radians, seconds):

    length, turning, curvature_max, curvature p50 / p90 / p99, corners, corner_curvature,
    corner_angle, straight_fraction, width_mean, width_min, par_time

(``elevation_range`` is 0 on both sides: left out). Per descriptor: the medians and ranges,
the KS statistic ``D = sup_x |F_gen(x) - F_real(x)|``, its exact p-value (SciPy, when
installed) and the two-sample critical value at ``alpha = 0.05`` Bonferroni-corrected for the
number of descriptors, ``c(a) * sqrt((n + m) / (n m))`` with ``c(a) = sqrt(-ln(a / 2) / 2)``;
then the mean D, the yield and the par times.

A sample of ``m`` real circuits is coarse: D moves in steps of ``1 / m``, and a generator
drawn from the very population the circuits come from scores a mean D of about
``0.87 / sqrt(m)`` (0.26 for ten circuits; :func:`null_mean_ks`). Read the ranking and the
critical values, not the third digit.

**Dimensionless** (``--mode dimensionless``): each sampler (and mixes of them) against the
circuits with every descriptor made dimensionless by the course's own mean half width
``h = width_mean / 2`` (lengths / h, curvatures * h; the features of :data:`FEATURES`), the
comparison of normalized courses in track units with circuits in metres. Each row reports the
KS statistic of every feature and their mean, best first. Real circuits default to the
hand-made circuits the tests ship (``tests/io/__init__.py``).
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from pathlib import Path

import numpy as np
import warp as wp

from track_gen import TrackGenConfig, TrackGenerator, tools
from track_gen.config import TRACK_GENERATORS
from track_gen.io import RealTrack, read_tum, tracks_spec
from track_gen.pipeline import presets

#: The dimensionless features of ``--mode dimensionless``, in table order.
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
#: The descriptors of ``--mode metres``, in table order, with their units.
DESCRIPTORS = (
    ("length", "m"),
    ("turning", "rad"),
    ("curvature_max", "1/m"),
    ("curvature_p50", "1/m"),
    ("curvature_p90", "1/m"),
    ("curvature_p99", "1/m"),
    ("corners", "count"),
    ("corner_curvature", "1/m"),
    ("corner_angle", "rad"),
    ("straight_fraction", "1"),
    ("width_mean", "m"),
    ("width_min", "m"),
    ("par_time", "s"),
)
#: Family-wise significance level of the critical values (Bonferroni over the descriptors).
ALPHA = 0.05
#: The racing line of the par times (``benchmarks/racing_line.py``'s real-circuit settings).
CAR = {"vehicle_width": 2.0, "a_lat": 10.0, "a_lon": 10.0, "v_max": 70.0}
#: Bead spacing of the real circuits and the generated ones in ``--mode metres``, m.
SPACING = 4.0
#: The folder of real circuits beside a checkout (``../shared/data/tum``).
SHARED_TUM = Path(__file__).resolve().parents[2] / "shared" / "data" / "tum"


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
    """The dimensionless features of every valid env of a :class:`CourseStatsResult`
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
    return features(tools.CourseStatsUtility(track, percentiles=(50.0, 90.0)).stats)


def test_circuits() -> list[RealTrack]:
    """The hand-made circuits of ``tests/io/__init__.py`` (metres; run from the repository
    root)."""
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
    """Median ms per ``CourseStatsUtility.measure`` call on ``num_envs`` default generated
    tracks: every env, and a mask of 1% of them (``wp.synchronize_device`` before each timer
    stops)."""
    gen = TrackGenerator(presets.track(num_envs=num_envs, device=device), seeds=0)
    gen.generate()
    meter = tools.CourseStatsUtility(gen.result)
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


def dimensionless_main(args) -> list[dict]:
    """``--mode dimensionless``: every sampler of ``--samplers`` (and their mix) against the
    circuits, in the dimensionless features; prints the table and returns its rows."""
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
        sources = [
            (g, TrackGenConfig(generator=g, **common)) for g in args.samplers if g != "circuit"
        ]
        if "circuit" in args.samplers:  # metres: its own widths, the grid does not apply
            sources.append(("circuit", presets.circuit(args.E, device=args.device)))
        mixable = [g for g in args.samplers if g != "circuit"]  # a mix is in track units
        if args.mixes and len(mixable) > 1:
            name = "mix(" + "+".join(mixable) + ")"
            sources.append((name, presets.track_mix(mixable, **common)))
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


# ----------------------------------------------------------------------------- metres
def null_mean_ks(n: int, m: int, trials: int = 2000, seed: int = 0) -> float:
    """Mean two-sample KS statistic of ``n`` and ``m`` draws from one continuous law: what a
    generator of the circuits' own population scores against ``m`` circuits."""
    rng = np.random.default_rng(seed)
    return float(np.mean([ks_statistic(rng.random(n), rng.random(m)) for _ in range(trials)]))


def critical_value(n: int, m: int, alpha: float) -> float:
    """Two-sample KS critical value at level ``alpha`` (asymptotic Kolmogorov law):
    ``sqrt(-ln(alpha / 2) / 2) * sqrt((n + m) / (n m))``."""
    return math.sqrt(-math.log(alpha / 2.0) / 2.0) * math.sqrt((n + m) / (n * m))


def exact_p(a, b) -> float:
    """The exact two-sample KS p-value (SciPy), NaN without SciPy."""
    try:
        from scipy.stats import ks_2samp
    except ImportError:  # pragma: no cover - SciPy is a dev extra
        return float("nan")
    return float(ks_2samp(a, b, method="exact").pvalue)


def descriptors(gen: TrackGenerator) -> dict[str, np.ndarray]:
    """Every metre descriptor (:data:`DESCRIPTORS`) of the valid envs of ``gen``'s result,
    after a racing line (:data:`CAR`) on each; float64 arrays."""
    track = gen.result
    line = tools.RacingLineUtility(
        track, CAR["vehicle_width"], **{k: v for k, v in CAR.items() if k != "vehicle_width"}
    )
    line.plan()
    stats = tools.CourseStatsUtility(track, lap_time=line.line.lap_time).stats
    out = {}
    pct = stats.host("curvature_percentile").astype(np.float64)
    for name, _ in DESCRIPTORS:
        if name.startswith("curvature_p"):
            out[name] = pct[:, {"50": 0, "90": 1, "99": 2}[name[-2:]]]
        else:
            out[name] = getattr(stats, name).numpy().astype(np.float64)
    ok = np.isfinite(out["length"])
    return {k: v[ok] for k, v in out.items()}


def real_circuits(folder) -> list[RealTrack]:
    paths = sorted(Path(folder).glob("*.csv"))
    if not paths:
        raise SystemExit(f"--circuits {folder}: no *.csv circuit in it")
    return [read_tum(p) for p in paths]


def metres_main(args) -> dict:
    """``--mode metres``: the circuit preset against the circuits; prints the table and
    returns ``{"rows": [...], "mean": ..., "critical": ..., "yield": ..., ...}``."""
    wp.init()
    folder = args.circuits or SHARED_TUM
    circuits = real_circuits(folder)
    spec = tracks_spec(circuits, num_envs=len(circuits), device=args.device, spacing=args.spacing)
    rgen = TrackGenerator(spec, seeds=0)
    rgen.generate()
    valid = rgen.result.valid.numpy().astype(bool)
    left_out = [c.name for c, v in zip(circuits, valid, strict=True) if not v]
    over = rgen.diagnostics["real_track.overpasses"].numpy()
    narrowed = rgen.diagnostics["real_track.narrowed"].numpy()
    notes = [f"{c.name}: {int(o)} overpass" for c, o in zip(circuits, over, strict=True) if o]
    notes += [
        f"{c.name}: inner width narrowed by up to {w:.2f} m at a hairpin"
        for c, w in zip(circuits, narrowed, strict=True)
        if w > 0
    ]
    real = descriptors(rgen)
    print(
        f"# real: {folder}: {int(valid.sum())} of {len(circuits)} circuits valid at "
        f"{args.spacing:g} m beads" + (f" (left out: {left_out})" if left_out else "")
    )
    for note in notes:
        print(f"#   {note}")
    t0 = time.perf_counter()
    fields = {} if args.spacing == SPACING else {"spacing": args.spacing}
    gen = TrackGenerator(presets.circuit(args.E, device=args.device, **fields), seeds=args.seed)
    gen.generate()
    ms = 1e3 * (time.perf_counter() - t0)
    yld = float(gen.result.valid.numpy().mean())
    fallback = int((gen.diagnostics["circuit.attempts"].numpy() > gen.config.layout_attempts).sum())
    ours = descriptors(gen)
    n, m = len(ours["length"]), len(real["length"])
    k = len(DESCRIPTORS)
    crit = critical_value(n, m, ALPHA / k)
    rows = []
    for name, unit in DESCRIPTORS:
        d = ks_statistic(ours[name], real[name])
        rows.append({
            "descriptor": name,
            "unit": unit,
            "real_median": float(np.median(real[name])),
            "real_min": float(real[name].min()),
            "real_max": float(real[name].max()),
            "ours_median": float(np.median(ours[name])),
            "ours_p05": float(np.percentile(ours[name], 5)),
            "ours_p95": float(np.percentile(ours[name], 95)),
            "ks": d,
            "p": exact_p(ours[name], real[name]),
            "pass": bool(d < crit),
        })  # fmt: skip
    mean = float(np.mean([r["ks"] for r in rows]))
    null = null_mean_ks(n, m)
    print(
        f"\n{n} valid circuits of E={args.E} (yield {yld:.1%}, {fallback} fallbacks; "
        f"generate {ms:.0f} ms with construction) against {m} real circuits. KS critical value "
        f"at alpha = {ALPHA} / {k} descriptors (Bonferroni): {crit:.3f}.\n"
    )
    print(
        "| descriptor | unit | real median [min, max] | circuit median [5%, 95%] | KS D | "
        "exact p | D < critical |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['descriptor']} | {r['unit']} | {r['real_median']:.4g} [{r['real_min']:.4g}, "
            f"{r['real_max']:.4g}] | {r['ours_median']:.4g} [{r['ours_p05']:.4g}, "
            f"{r['ours_p95']:.4g}] | {r['ks']:.3f} | {r['p']:.3g} | "
            f"{'yes' if r['pass'] else 'NO'} |"
        )
    print(
        f"\nmean KS D {mean:.3f} (largest {max(r['ks'] for r in rows):.3f}); a generator drawn "
        f"from the circuits' own population would score {null:.3f} on average against {m} "
        "circuits."
    )
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return {
        "rows": rows,
        "mean": mean,
        "critical": crit,
        "yield": yld,
        "null_mean": null,
        "valid_real": int(valid.sum()),
        "circuits": len(circuits),
        "fallbacks": fallback,
    }


def main(argv=None):
    """The command line (see the module): ``--mode metres`` returns :func:`metres_main`'s
    dict, ``--mode dimensionless`` the rows of :func:`dimensionless_main`."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=("metres", "dimensionless"), default="metres")
    p.add_argument("--circuits", default=None, help="folder of *.csv circuits (TUM layout)")
    p.add_argument("--E", type=int, default=None, help="envs (metres 512, dimensionless 256)")
    p.add_argument("--spacing", type=float, default=SPACING, help="metres: bead spacing, m")
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
        "--meter-ms", action="store_true", help="only time CourseStatsUtility.measure at --E envs"
    )
    args = p.parse_args(argv)
    if args.E is None:
        args.E = 512 if args.mode == "metres" else 256
    if args.E < 1:
        raise SystemExit(f"--E {args.E}: must be >= 1")
    if args.meter_ms:
        wp.init()
        full, masked = time_meter(args.E, args.device)
        print(
            f"CourseStatsUtility.measure, E={args.E} on {args.device}: {full:.3f} ms every env, "
            f"{masked:.3f} ms with 1% of the envs masked"
        )
        return []
    if args.mode == "metres":
        return metres_main(args)
    return dimensionless_main(args)


if __name__ == "__main__":
    main()
