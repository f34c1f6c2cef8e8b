"""Pictures and timings of ``docs/elevation.md``.

Run from the repository root::

    PYTHONPATH=. python docs/gen_elevation_images.py          # write docs/images/*.png
    PYTHONPATH=. python docs/gen_elevation_images.py --bench  # time each profile (E=1024, cpu)

Pictures (CPU, fixed seeds, so a rerun writes the same tracks): one per elevated profile,
``elevation-<profile>.png`` (:func:`track_gen.viz.plot_tracks` of four envs, coloured by
height), and ``heightfield.png`` (the baked road height of one env:
:class:`track_gen.tools.HeightFieldUtility`, off-road texels masked, with the road
outline; beside it the same grid as baked, off-road texels holding the fill value).

``--bench`` times ``generate(advance=True)`` per profile and sampler: one generator per
profile (each built with its warm-up call), then ``--calls`` rounds of one timed call per
profile (interleaved, so a change of load on the machine hits every profile alike), each
followed by ``wp.synchronize_device``. It prints the median, the median time of the
``elevate`` stage alone (``elev_ms``: the stage rerun on the generator's workspace; "-" for
``flat``, which has no such stage), the yield, the median time of a full
``resolution``-texel height-field bake of the same batch, and percentiles of the steepest
centerline grade per valid track (what ``z_valid_grade`` bounds).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: Elevation keywords of the pictures and the benchmark, per profile.
PROFILES = {
    "flat": {},
    "uniform": {"z_profile": "uniform", "z_min": 0.0, "z_max": 0.5},
    "random_walk": {
        "z_profile": "random_walk",
        "z_min": 0.0,
        "z_max": 0.5,
        "z_base": 0.25,
        "z_max_step": 0.15,
    },
    "noise": {"z_profile": "noise", "z_min": 0.0, "z_max": 0.5},
}
DPI = 72


def _generate(profile: str, num_envs: int, seed: int, generator: str = "bezier"):
    from track_gen import TrackGenConfig, TrackGenerator

    cfg = TrackGenConfig(generator=generator, num_envs=num_envs, device="cpu", **PROFILES[profile])
    gen = TrackGenerator(cfg, seeds=seed)
    return gen, gen.generate()


def write_profiles(out: Path) -> list[Path]:
    from track_gen.viz import plot_tracks

    paths = []
    for profile in ("uniform", "random_walk", "noise"):
        _, track = _generate(profile, 4, seed=7)
        kw = {k: v for k, v in PROFILES[profile].items() if k != "z_profile"}
        title = f"z_profile={profile!r}, " + ", ".join(f"{k}={v:g}" for k, v in kw.items())
        fig = plot_tracks(track, ncols=4, title=title, color_by="height")
        path = out / f"elevation-{profile}.png"
        fig.savefig(path, dpi=DPI)
        paths.append(path)
    return paths


def _closed(rows: np.ndarray) -> np.ndarray:
    rows = rows[np.all(np.isfinite(rows), axis=1)]
    return np.concatenate([rows, rows[:1]], axis=0)


def write_heightfield(out: Path, env: int = 2, resolution: int = 128) -> Path:
    from matplotlib.figure import Figure

    from track_gen.tools import HeightFieldUtility

    _, track = _generate("noise", 4, seed=7)
    field = HeightFieldUtility(track, resolution=resolution).field
    res = field.resolution
    height = field.height.numpy().reshape(-1, res, res)[env]  # [j, i]: j along y
    on_road = field.on_road.numpy().reshape(-1, res, res)[env]
    x0, y0, cell, fill = (float(v) for v in field.frame.numpy()[env])
    extent = (x0, x0 + res * cell, y0, y0 + res * cell)
    n_max, n = track.N_max, int(track.count.numpy()[env])
    inner = track.inner.numpy().reshape(-1, n_max, 3)[env, :n]
    outer = track.outer.numpy().reshape(-1, n_max, 3)[env, :n]
    road = height[on_road != 0]
    lo, hi = float(road.min()), float(road.max())

    fig = Figure(figsize=(9.0, 4.5), layout="constrained")
    axes = fig.subplots(1, 2)
    panels = (
        (np.ma.masked_where(on_road == 0, height), "on_road texels (off-road masked)"),
        (height, f"as baked: off-road texels hold the fill {fill:.3f}"),
    )
    for ax, (data, label) in zip(axes, panels, strict=True):
        image = ax.imshow(
            data,
            origin="lower",
            extent=extent,
            cmap="viridis",
            vmin=lo,
            vmax=hi,
            interpolation="nearest",
        )
        for ring in (_closed(inner), _closed(outer)):
            ax.plot(ring[:, 0], ring[:, 1], color="#303030", lw=0.7)
        ax.set_title(label, fontsize=9)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(
        f"HeightFieldUtility(track, resolution={res}): env {env} of a noise profile, "
        f"cell {cell:.4f}, {2 * 0.1 / cell:.1f} texels across the road",
        fontsize=10,
    )
    fig.colorbar(image, ax=list(axes), label="height (track units)", shrink=0.85)
    path = out / "heightfield.png"
    fig.savefig(path, dpi=DPI)
    return path


def steepest_grades(track) -> np.ndarray:
    """Per valid env, the steepest centerline grade ``|dz| / plan distance`` between
    consecutive beads (the closing pair included): the quantity ``z_valid_grade`` bounds."""
    E, n_max = track.num_envs, track.N_max
    center = track.center.numpy().reshape(E, n_max, 3)
    count, valid = track.count.numpy(), track.valid.numpy()
    out = []
    for e in np.flatnonzero(valid):
        c = center[e, : count[e]]
        d = np.roll(c, -1, axis=0) - c
        plan = np.hypot(d[:, 0], d[:, 1])
        out.append(float((np.abs(d[:, 2])[plan > 0] / plan[plan > 0]).max()))
    return np.asarray(out)


def _stage_ms(gen, name: str, calls: int, timed) -> float | None:
    """Median time of one pipeline stage alone, rerun on the generator's workspace after a
    batch (reads private attributes of the generator: a measurement aid, None when absent)."""
    for stage, params in getattr(gen, "_stages", ()):
        if getattr(stage, "name", None) == name:
            run = functools.partial(stage.enqueue, gen._ws, params)
            return statistics.median(timed(run, gen.device) for _ in range(calls))
    return None


def bench(num_envs: int, calls: int, generators: list[str], resolution: int) -> None:
    import warp as wp

    from track_gen.tools import HeightFieldUtility

    def timed(fn, dev) -> float:
        t0 = time.perf_counter()
        fn()
        wp.synchronize_device(dev)
        return (time.perf_counter() - t0) * 1e3

    print(
        f"# cpu, warp {wp.config.version}, E={num_envs}, resolution {resolution}, median of "
        f"{calls} calls per profile (profiles interleaved), seed 0"
    )
    head = f"{'generator':<10} {'profile':<12} {'ms/call':>9} {'vs flat':>8} {'elev_ms':>8}"
    print(head + f" {'yield':>7} {'bake_ms':>8}   steepest grade p50 / p90 / p99 / max")
    for generator in generators:
        gens = {p: _generate(p, num_envs, seed=0, generator=generator)[0] for p in PROFILES}
        times = {p: [] for p in PROFILES}
        valid = dict.fromkeys(PROFILES, 0)
        grades = {p: [] for p in PROFILES}
        for _ in range(calls):  # round robin: a load change on the machine hits every profile
            for p, gen in gens.items():
                times[p].append(timed(lambda gen=gen: gen.generate(advance=True), gen.device))
                valid[p] += int(gen.result.valid.numpy().sum())
                grades[p].append(steepest_grades(gen.result))
        elevate = {p: _stage_ms(gen, "elevate", calls, timed) for p, gen in gens.items()}
        bakes = {p: [] for p in PROFILES}
        for p, gen in gens.items():
            baker = HeightFieldUtility(gen.result, resolution=resolution)
            bakes[p] = [timed(baker.bake, gen.device) for _ in range(calls)]
            del baker
        flat_ms = statistics.median(times["flat"])
        for p in PROFILES:
            ms = statistics.median(times[p])
            row = f"{generator:<10} {p:<12} {ms:>9.1f} {ms / flat_ms:>8.2f}"
            row += f" {'-' if elevate[p] is None else format(elevate[p], '.2f'):>8}"
            row += f" {valid[p] / (calls * num_envs):>7.1%} {statistics.median(bakes[p]):>8.1f}"
            q = np.percentile(np.concatenate(grades[p]), [50, 90, 99, 100])
            row += "   " + " / ".join(f"{v:.3f}" for v in q)
            print(row, flush=True)
        del gens


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", action="store_true", help="time the profiles instead")
    parser.add_argument("--E", type=int, default=1024, help="batch size of --bench")
    parser.add_argument("--calls", type=int, default=9, help="timed calls of --bench")
    parser.add_argument("--generators", nargs="+", default=["bezier", "polar"])
    parser.add_argument("--resolution", type=int, default=128, help="height-field texels")
    parser.add_argument("--out", type=Path, default=OUT, help="folder of the pictures")
    args = parser.parse_args(argv)

    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    wp.config.quiet = True
    if args.bench:
        bench(args.E, args.calls, args.generators, args.resolution)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for path in [*write_profiles(args.out), write_heightfield(args.out)]:
        print(
            f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
            f"{path.stat().st_size / 1024:.0f} KiB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
