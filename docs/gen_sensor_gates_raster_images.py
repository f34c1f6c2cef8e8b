"""Pictures of ``docs/sensors/next-gates.md`` and ``docs/sensors/raster.md``.

Run from the repository root::

    PYTHONPATH=. python docs/gen_sensor_gates_raster_images.py   # docs/images/sensor_*.png

``sensor_next_gates.png``: one generated gate course (CPU, seed 3) with
``tools.NextGates(3, reveal_range=0.35, nominal_noise=0.06)`` after the agent flew along the
first gates: the true gates (black bars), the nominal poses of the gates not yet revealed
(orange, dashed), the reveal range around the agent and its three answered slots (blue);
right, the same three gates in the agent's body frame (``res["next_gates"].position``).
``sensor_raster.png``: one generated track (CPU, seed 5) with cones
(``tools.Props("cone", 0.1)``) and the window of ``tools.EgoRaster(64, 1.2, cones="props")``
around an agent on the road; right, the raster itself (heading up), coloured by cell bits.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _yaw_quat(yaw):
    return np.array([0.0, 0.0, np.sin(yaw / 2), np.cos(yaw / 2)], np.float32)


def _bar(ax, pos, rot, half, **kw):
    """A gate's bar in plan view: its local y axis (left) through its centre."""
    x, y, z, w = rot
    left = np.array([2 * (x * y - w * z), 1 - 2 * (x * x + z * z)])
    a, b = pos[:2] - half * left, pos[:2] + half * left
    ax.plot([a[0], b[0]], [a[1], b[1]], **kw)


def next_gates(plt):
    import warp as wp

    from track_gen import tools
    from track_gen.course import Course
    from track_gen.pipeline import presets

    K, R = 3, 0.35
    course = Course.gates(
        presets.gates(num_envs=1, device="cpu", gate_width=0.16),
        extra=[tools.NextGates(K, reveal_range=R, nominal_noise=0.06)],
        seeds=3,
    )
    seq = course.result
    n = int(seq.count.numpy()[0])
    gp, gq, fwd = seq.host("position")[0], seq.host("orientation")[0], seq.host("forward")[0]
    half = float(seq.half_size.numpy()[0])
    p = wp.zeros(1, dtype=wp.vec3f)
    q = wp.zeros(1, dtype=wp.quatf)
    course.bind(position=p, orientation=q)
    for g in range(2):  # fly through gates 0 and 1
        for side in (-0.05, 0.05):
            p.assign((gp[g] + side * fwd[g])[None].astype(np.float32))
            yaw = np.arctan2(fwd[g, 1], fwd[g, 0])
            q.assign(_yaw_quat(yaw)[None])
            res = course.step()
    poses = res["next_gates"]
    sensor = course.components["next_gates"].utility
    nom_p = sensor.nominal_position.numpy()[:n]
    nom_q = sensor.nominal_orientation.numpy()[:n]
    seen = sensor.seen.numpy()[:n]
    agent = p.numpy()[0]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.8))
    loop = np.r_[np.arange(n), 0]
    ax.plot(gp[loop, 0], gp[loop, 1], color="0.8", lw=0.8, zorder=0)
    slots = poses.host("index")[0]
    for g in range(n):
        _bar(ax, gp[g], gq[g], half, color="black", lw=2.5, zorder=2)
        ax.annotate(str(g), gp[g, :2], textcoords="offset points", xytext=(4, 4), fontsize=8)
        if not seen[g]:
            _bar(ax, nom_p[g], nom_q[g], half, color="tab:orange", lw=1.5, ls="--", zorder=3)
    for k, g in enumerate(slots):
        if g < 0:
            continue
        pose_p = gp[g] if seen[g] else nom_p[g]
        ax.plot(*zip(agent[:2], pose_p[:2], strict=True), color="tab:blue", lw=1, zorder=1)
        ax.annotate(
            f"slot {k}",
            pose_p[:2],
            color="tab:blue",
            fontsize=8,
            xytext=(4, -10),
            textcoords="offset points",
        )
    ax.add_patch(plt.Circle(agent[:2], R, color="tab:green", fill=False, ls=":", lw=1.2))
    ax.plot(*agent[:2], marker="o", color="tab:green", zorder=4)
    ax.set_aspect("equal")
    ax.set_title("world: true gates (black), nominal (orange), reveal range (green)", fontsize=9)
    rel = poses.host("position")[0]
    bx.axhline(0, color="0.85", lw=0.8)
    bx.axvline(0, color="0.85", lw=0.8)
    bx.plot(0, 0, marker="^", color="tab:green", ms=10)
    for k in range(K):
        if slots[k] >= 0:
            bx.plot(rel[k, 1], rel[k, 0], "o", color="tab:blue")
            bx.annotate(
                f"slot {k}: gate {slots[k]}",
                (rel[k, 1], rel[k, 0]),
                fontsize=8,
                xytext=(5, 3),
                textcoords="offset points",
            )
    bx.invert_xaxis()  # body +y (left) on the left, as seen from above
    bx.set_xlabel("left (body y), track units")
    bx.set_ylabel("forward (body x), track units")
    bx.set_aspect("equal")
    bx.set_title('res["next_gates"].position in the body frame', fontsize=9)
    fig.tight_layout()
    fig.savefig(OUT / "sensor_next_gates.png", dpi=110)
    plt.close(fig)


def raster(plt):
    import warp as wp
    from matplotlib.colors import ListedColormap

    from track_gen import tools
    from track_gen.course import Course
    from track_gen.pipeline import presets

    res, extent = 64, 1.2
    course = Course.track(
        presets.track(num_envs=1, device="cpu"),
        checkpoint_spacing=0.6,
        extra=[tools.Props("cone", 0.1), tools.EgoRaster(res, extent, cones="props")],
        seeds=5,
    )
    t = course.result
    n = int(t.count.numpy()[0])
    bead = n // 3
    c, tan = t.host("center")[0, bead], t.host("tangent")[0, bead]
    yaw = float(np.arctan2(tan[1], tan[0])) + 0.3
    pos = (c + 0.04 * t.host("normal")[0, bead]).astype(np.float32)
    course.bind(
        position=wp.array(pos[None], dtype=wp.vec3f),
        orientation=wp.array(_yaw_quat(yaw)[None], dtype=wp.quatf),
    )
    image = course.step()["raster"]
    cells = image.host("cells")[0].reshape(res, res)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 5))
    loop = np.r_[np.arange(n), 0]
    for name in ("inner", "outer"):
        b = t.host(name)[0, loop]
        ax.plot(b[:, 0], b[:, 1], color="black", lw=0.8)
    cones = course.components["props"].result
    m = int(cones.count.numpy()[0])
    cp = cones.host("position")[0, :m]
    ax.scatter(cp[:, 0], cp[:, 1], s=6, color="tab:orange", zorder=3)
    h = np.array([np.cos(yaw), np.sin(yaw)])
    left = np.array([-h[1], h[0]])
    half = extent / 2
    corners = [
        pos[:2] + sf * half * h + sl * half * left
        for sf, sl in ((1, 1), (1, -1), (-1, -1), (-1, 1), (1, 1))
    ]
    ax.plot(*np.array(corners).T, color="tab:blue", lw=1.2)
    ax.arrow(*pos[:2], *(0.25 * h), width=0.01, color="tab:green", zorder=4)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title("world: borders, cones and the raster's window (blue)", fontsize=9)
    code = np.zeros_like(cells, dtype=int)  # 0 off road, 1 road, 2 border, 3 cone
    code[(cells & 1) != 0] = 1
    code[(cells & 2) != 0] = 2
    code[(cells & 4) != 0] = 3
    cmap = ListedColormap(["#f4f4f4", "#9ecae1", "#222222", "#fd8d3c"])
    bx.imshow(code, cmap=cmap, vmin=0, vmax=3, interpolation="nearest")
    bx.plot((res - 1) / 2, (res - 1) / 2, marker="^", color="tab:green", ms=9)
    bx.set_xticks([])
    bx.set_yticks([])
    bx.set_title("EgoRaster cells (heading up): road, BORDER, CONE", fontsize=9)
    fig.tight_layout()
    fig.savefig(OUT / "sensor_raster.png", dpi=110)
    plt.close(fig)


def main() -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    OUT.mkdir(parents=True, exist_ok=True)
    next_gates(plt)
    raster(plt)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
