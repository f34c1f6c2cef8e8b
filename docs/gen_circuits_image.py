"""The picture of ``docs/generation.md`` ("Circuits in metres").

Run from the repository root::

    PYTHONPATH=. python docs/gen_circuits_image.py   # write docs/images/circuits_vs_real.png

Twelve circuits of ``presets.circuit`` (CPU, seeds 0 .. 11, so a rerun draws the same ones)
beside the real circuits of ``--data`` (TUM layout, read in place, never copied; the first
twelve), every panel the same size in metres (``--extent``), the road band from the left and
right widths, the start of the lap marked.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "circuits_vs_real.png"


def _band(ax, left, right, title):
    from matplotlib.patches import Polygon

    ring = np.concatenate([left, right[::-1]])
    ax.add_patch(Polygon(ring, closed=True, facecolor="#9a9a9a", edgecolor="none"))
    for b in (left, right):
        loop = np.concatenate([b, b[:1]])
        ax.plot(loop[:, 0], loop[:, 1], color="#303030", lw=0.4)
    mid = 0.5 * (left[0] + right[0])
    ax.plot(*mid, "o", color="#d04000", ms=3)
    ax.set_title(title, fontsize=8)


def _frame(ax, pts, extent):
    c = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
    ax.set_xlim(c[0] - extent / 2, c[0] + extent / 2)
    ax.set_ylim(c[1] - extent / 2, c[1] + extent / 2)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])


def main(argv=None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from track_gen import TrackGenerator
    from track_gen.io import read_tum
    from track_gen.pipeline import presets

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "tum"))
    ap.add_argument("--extent", type=float, default=3200.0, help="panel side, m")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)

    gen = TrackGenerator(presets.circuit(12, device="cpu"), seeds=0)  # env e: seed e
    t = gen.generate()
    real = [read_tum(p) for p in sorted(Path(args.data).glob("*.csv"))][:12]
    rows = 2 + (2 if real else 0)
    fig, axs = plt.subplots(rows, 6, figsize=(15, 2.6 * rows))
    for e in range(12):
        n = int(t.count.numpy()[e])
        left, right = t.host("outer")[e, :n, :2], t.host("inner")[e, :n, :2]
        ax = axs.flat[e]
        _band(ax, left, right, f"generated {e}: {t.length.numpy()[e] / 1000:.2f} km")
        _frame(ax, t.host("center")[e, :n, :2], args.extent)
    for k, c in enumerate(real):
        ax = axs.flat[12 + k]
        left, right = c.borders()
        _band(ax, left, right, f"{c.name}: {c.length / 1000:.2f} km")
        _frame(ax, c.xy, args.extent)
    for ax in list(axs.flat)[12 + len(real) :]:
        ax.axis("off")
    fig.suptitle(
        f"presets.circuit (top) and real circuits (bottom), every panel {args.extent:.0f} m across",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
