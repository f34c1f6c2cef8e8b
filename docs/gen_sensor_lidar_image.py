"""Picture of ``docs/sensors/lidar.md``.

Run from the repository root::

    PYTHONPATH=. python docs/gen_sensor_lidar_image.py   # write docs/images/sensor_lidar.png

Left: one generated track (CPU, seed 7, so a rerun draws the same course) with cone props
every 0.1 track units (around the agent) and an agent on its centre line, heading along the
road, casting
``tools.Lidar(120, fov=3*pi/2, max_range=0.6)``: beams that hit are drawn to their hit point
(red dots), beams that see nothing within range in grey. Right: a gate course seen by
``Lidar(120, max_range=1.5, gate_model="posts", post_radius=0.02)`` from the first gate.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "sensor_lidar.png"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _pose(p, yaw):
    import warp as wp

    pos = wp.array(np.asarray([p], np.float32), dtype=wp.vec3f, device="cpu")
    q = [0.0, 0.0, np.sin(yaw / 2), np.cos(yaw / 2)]
    quat = wp.array(np.asarray([q], np.float32), dtype=wp.quatf, device="cpu")
    return pos, quat


def _beams(ax, lidar, p, yaw):
    from track_gen.tools.lidar import beam_angles

    u = lidar.utility
    a = yaw + beam_angles(u.num_beams, u.fov)
    d = lidar.result.distance.numpy()[: u.num_beams]
    hit = lidar.result.hit.numpy()[: u.num_beams] == 1
    ends = p[:2] + d[:, None] * np.stack([np.cos(a), np.sin(a)], -1)
    for k in range(len(d)):
        ax.plot(
            [p[0], ends[k, 0]],
            [p[1], ends[k, 1]],
            color="tab:red" if hit[k] else "0.75",
            lw=0.5,
            alpha=0.8 if hit[k] else 0.5,
        )
    ax.scatter(ends[hit, 0], ends[hit, 1], s=4, color="tab:red", zorder=3)
    ax.scatter([p[0]], [p[1]], s=30, color="tab:blue", zorder=4, marker="o")


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    from track_gen import tools
    from track_gen.course import Course
    from track_gen.pipeline import presets

    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2))
    # a track with cone props
    course = Course.track(
        presets.track(num_envs=1, device="cpu"),
        checkpoint_spacing=0.6,
        extra=[tools.Props("cone", spacing=0.1), tools.Lidar(120, fov=1.5 * np.pi, max_range=0.6)],
        seeds=7,
    )
    r = course.result
    n = int(r.count.numpy()[0])
    c = r.host("center")[0, :n]
    t = r.host("tangent")[0, :n]
    i = n // 5
    p, yaw = c[i], float(np.arctan2(t[i, 1], t[i, 0]))
    course.bind(**dict(zip(("position", "orientation"), _pose(p, yaw), strict=True)))
    course.step()
    ax = axes[0]
    loop = np.r_[np.arange(n), 0]
    for name in ("inner", "outer"):
        b = r.host(name)[0, loop]
        ax.plot(b[:, 0], b[:, 1], color="black", lw=1.0)
    props = course.components["props"].result
    m = int(props.count.numpy()[0])
    pp = props.host("position")[0, :m]
    ax.scatter(pp[:, 0], pp[:, 1], s=12, color="orange", edgecolor="k", lw=0.3, zorder=2)
    _beams(ax, course.components["lidar"], p, yaw)
    ax.set_xlim(p[0] - 0.75, p[0] + 0.75)
    ax.set_ylim(p[1] - 0.75, p[1] + 0.75)
    ax.set_title("track: borders and cone props (120 beams, fov 270 deg, range 0.6)")
    # a gate course with posts
    gcourse = Course.gates(
        presets.gates(num_envs=1, device="cpu", gate_width=0.2),
        extra=[tools.Lidar(120, max_range=1.5, gate_model="posts", post_radius=0.02)],
        seeds=3,
    )
    g = gcourse.result
    ng = int(g.count.numpy()[0])
    pos, fwd = g.host("position")[0, :ng], g.host("forward")[0, :ng]
    left, right = g.host("left")[0, :ng], g.host("right")[0, :ng]
    q = pos[0] - 0.15 * fwd[0]
    gyaw = float(np.arctan2(fwd[0, 1], fwd[0, 0]))
    gcourse.bind(**dict(zip(("position", "orientation"), _pose(q, gyaw), strict=True)))
    gcourse.step()
    ax = axes[1]
    for k in range(ng):
        ax.plot([left[k, 0], right[k, 0]], [left[k, 1], right[k, 1]], color="0.3", lw=1.5)
    for ends in (left, right):
        ax.scatter(ends[:, 0], ends[:, 1], s=16, color="black", zorder=2)
    _beams(ax, gcourse.components["lidar"], q, gyaw)
    ax.set_title("gates: posts (120 beams, full circle, range 1.5)")
    for ax in axes:
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, dpi=110)
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
