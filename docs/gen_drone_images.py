"""Draw docs/images/drone_trajectories.png: trained flights beside the minimum-time par.

Run (after the study):  python docs/gen_drone_images.py --study /tmp/drone_study

Reads ``trajectories.npz`` of ``python -m studies.drone`` (the first training seed's policy,
mean action, flying four held-out generated courses and the published waypoint paths as gate
courses, each with its par trajectory) and draws each in plan view: the gates (numbered in
flying order), the flight until its episode ended (solid) and the par trajectory of a point
mass through the gate centres (dashed, ``tools.MinTime``: a flying lap of the course).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "images" / "drone_trajectories.png"


def panels(data) -> list[str]:
    held = sorted({k.rsplit("_", 1)[0] for k in data.files if k.startswith("held")})
    paths = sorted({k.rsplit("_", 1)[0] for k in data.files if k.startswith("path_")})
    return held + paths


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", default="/tmp/drone_study", help="the study's --out folder")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = np.load(Path(args.study) / "trajectories.npz")
    names = panels(data)
    cols = 4
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.2 * rows), dpi=100)
    for ax, name in zip(np.ravel(axes), names, strict=False):
        gates, par, flight = (data[f"{name}_{k}"] for k in ("gates", "par", "flight"))
        ax.plot(par[:, 0], par[:, 1], "--", color="0.45", lw=1.2, label="par (point mass)")
        ok = np.isfinite(flight).all(axis=1)
        end = int(np.argmin(ok)) if not ok.all() else len(ok)
        ax.plot(flight[:end, 0], flight[:end, 1], color="tab:blue", lw=1.4, label="policy")
        ax.scatter(gates[:, 0], gates[:, 1], marker="s", s=22, color="tab:red", zorder=3)
        for i, g in enumerate(gates):
            ax.annotate(str(i), g[:2], fontsize=7, xytext=(3, 3), textcoords="offset points")
        title = name.replace("held", "held-out course ").replace("path_", "path ")
        ax.set_title(title, fontsize=9)
        ax.set_aspect("equal")
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in np.ravel(axes)[len(names) :]:
        ax.axis("off")
    np.ravel(axes)[0].legend(fontsize=7, loc="best")
    fig.suptitle("Flown trajectories (plan view, m) beside the minimum-time par", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out)
    plt.close(fig)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
