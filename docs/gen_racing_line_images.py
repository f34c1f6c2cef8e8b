"""Pictures of ``docs/racing-line.md``.

Run from the repository root::

    PYTHONPATH=. python docs/gen_racing_line_images.py   # write docs/images/racing_line*.png

``racing_line.png``: four generated tracks (CPU, fixed seed, so a rerun draws the same
tracks) with their borders, centre lines (grey, dashed) and minimum-curvature racing lines
(:class:`track_gen.tools.RacingLineUtility`, vehicle width 0.04 track units, ``a_lat = 8``,
``a_lon = 4`` track units/s^2, ``v_max = 6`` track units/s) coloured by target speed.
``racing_line_real.png``: the same for the first valid real circuit of
``--data`` (TUM layout, 3 m beads, 2 m vehicle, 10 m/s^2 both ways, 70 m/s), when present.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _draw(ax, track, line, e, cmap, vmin, vmax):
    n = int(track.count.numpy()[e])
    loop = np.r_[np.arange(n), 0]
    for name in ("inner", "outer"):
        b = track.host(name)[e, loop]
        ax.plot(b[:, 0], b[:, 1], color="black", lw=0.8)
    c = track.host("center")[e, loop]
    ax.plot(c[:, 0], c[:, 1], color="0.6", lw=0.6, ls="--")
    p = line.host("position")[e, loop]
    v = line.host("speed")[e, loop]
    sc = ax.scatter(p[:, 0], p[:, 1], c=v, cmap=cmap, vmin=vmin, vmax=vmax, s=4, zorder=3)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    return sc


def generated(plt):
    from track_gen import TrackGenerator, tools
    from track_gen.pipeline import presets

    gen = TrackGenerator(presets.track(num_envs=4, device="cpu"), seeds=11)
    gen.generate()
    planner = tools.RacingLineUtility(gen.result, 0.04, a_lat=8.0, a_lon=4.0, v_max=6.0)
    line = planner.line
    speed = line.host("speed")
    vmin, vmax = np.nanmin(speed), np.nanmax(speed)
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.8))
    for e, ax in enumerate(axes):
        sc = _draw(ax, gen.result, line, e, "viridis", vmin, vmax)
        ax.set_title(f"env {e}: par {line.host('lap_time')[e]:.2f} s")
    fig.colorbar(sc, ax=axes, shrink=0.8, label="target speed (track units/s)")
    fig.savefig(OUT / "racing_line.png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def real(plt, data):
    from track_gen import TrackGenerator, io, tools

    paths = sorted(glob.glob(os.path.join(data, "*.csv")))
    if not paths:
        print(f"no circuits under {data}: racing_line_real.png not written")
        return
    circuits = [io.read_tum(p) for p in paths[:3]]
    gen = TrackGenerator(
        io.tracks_spec(circuits, num_envs=len(circuits), device="cpu", spacing=3.0)
    )
    gen.generate()
    e = int(np.flatnonzero(gen.result.valid.numpy())[0])
    planner = tools.RacingLineUtility(gen.result, 2.0, a_lat=10.0, a_lon=10.0, v_max=70.0)
    line = planner.line
    speed = line.host("speed")[e]
    fig, ax = plt.subplots(figsize=(8, 7))
    sc = _draw(ax, gen.result, line, e, "viridis", np.nanmin(speed), np.nanmax(speed))
    name = os.path.splitext(os.path.basename(paths[e]))[0]
    ax.set_title(
        f"{name}: par {line.host('lap_time')[e]:.1f} s, line {line.host('length')[e]:.0f} m"
    )
    fig.colorbar(sc, ax=ax, shrink=0.8, label="target speed (m/s)")
    fig.savefig(OUT / "racing_line_real.png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/work/shared/data/tum")
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    OUT.mkdir(parents=True, exist_ok=True)
    generated(plt)
    real(plt, args.data)


if __name__ == "__main__":
    main()
