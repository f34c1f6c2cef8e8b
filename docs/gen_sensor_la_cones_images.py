"""Pictures of ``docs/sensors/lookahead.md`` and ``docs/sensors/cones.md``.

Run from the repository root::

    PYTHONPATH=. python docs/gen_sensor_la_cones_images.py   # docs/images/sensor_*.png

``sensor_lookahead.png``: one generated track (CPU, fixed seed), an agent on it and the 16
points ahead of it 0.1 track units apart on the centre line and on the racing line
(``tools.Lookahead``), in the world (left) and in the agent's frame (right), with the left
and right widths at each centre-line point. ``sensor_cones.png``: the cones of
``tools.Props("cone", 0.08)`` on the same track, the field of view (2 rad) and range (0.9) of
``tools.ConeDetections(16, ...)`` and the 16 nearest cones it reports, numbered by distance,
in the world (left) and in the agent's frame (right).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BEAD = 20  # the agent stands near this bead of env 0, heading along the road, 0.03 left


def _course(extra):
    from track_gen.course import Course
    from track_gen.pipeline import presets

    return Course.track(
        presets.track(num_envs=2, device="cpu"), checkpoint_spacing=0.6, extra=extra, seeds=7
    )


def _bind(course):
    import warp as wp

    track = course.generator.result
    c, t, n = (track.host(k)[:, BEAD] for k in ("center", "tangent", "normal"))
    pos = (c + 0.03 * n).astype(np.float32)
    yaw = np.arctan2(t[:, 1], t[:, 0]) + 0.25  # looking a little left of the road
    q = np.zeros((2, 4), np.float32)
    q[:, 2], q[:, 3] = np.sin(yaw / 2), np.cos(yaw / 2)
    course.bind(position=wp.array(pos, dtype=wp.vec3f), orientation=wp.array(q, dtype=wp.quatf))
    return pos[0].astype(np.float64), float(yaw[0])


def _world(local, pos, yaw):
    c, s = np.cos(yaw), np.sin(yaw)
    return np.c_[
        pos[0] + c * local[:, 0] - s * local[:, 1], pos[1] + s * local[:, 0] + c * local[:, 1]
    ]


def _road(ax, track):
    n = int(track.count.numpy()[0])
    loop = np.r_[np.arange(n), 0]
    for name in ("inner", "outer"):
        b = track.host(name)[0, loop]
        ax.plot(b[:, 0], b[:, 1], color="black", lw=0.8)
    c = track.host("center")[0, loop]
    ax.plot(c[:, 0], c[:, 1], color="0.7", lw=0.6, ls="--")


def _agent(ax, pos, yaw, local=False):
    x, y, a = (0.0, 0.0, 0.0) if local else (pos[0], pos[1], yaw)
    ax.annotate(
        "",
        xy=(x + 0.12 * np.cos(a), y + 0.12 * np.sin(a)),
        xytext=(x, y),
        arrowprops={"arrowstyle": "-|>", "color": "crimson", "lw": 1.5},
    )
    ax.plot([x], [y], "o", color="crimson", ms=4)


def lookahead(plt):
    from track_gen import tools

    course = _course(
        [
            tools.Localizer(),
            tools.RacingLine(0.04, a_lat=8.0, a_lon=4.0, v_max=6.0),
            tools.Lookahead(16, 0.1, name="lookahead"),
            tools.Lookahead(16, 0.1, source="racing_line", name="lookahead.racing"),
        ]
    )
    pos, yaw = _bind(course)
    res = course.step()
    center, racing = res["lookahead"], res["lookahead.racing"]
    track = course.generator.result
    pc = center.host("position")[0].astype(np.float64)
    pr = racing.host("position")[0].astype(np.float64)
    wl, wr = center.host("width_left")[0], center.host("width_right")[0]
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(12, 5.2))
    _road(a0, track)
    wc, wrl = _world(pc, pos, yaw), _world(pr, pos, yaw)
    a0.plot(wc[:, 0], wc[:, 1], "o", color="tab:blue", ms=3, label="centre line points")
    a0.plot(wrl[:, 0], wrl[:, 1], "s", color="tab:orange", ms=3, label="racing line points")
    _agent(a0, pos, yaw)
    a0.set_aspect("equal")
    a0.set_title("world")
    a0.legend(loc="lower right", fontsize=8)
    a0.set_xticks([])
    a0.set_yticks([])
    # the agent's frame: x forward, y left; the widths as bars across the road
    heading = np.arctan2(np.gradient(pc[:, 1]), np.gradient(pc[:, 0]))
    left = np.c_[-np.sin(heading), np.cos(heading)]
    for k in range(len(pc)):
        a, b = pc[k, :2] + wl[k] * left[k], pc[k, :2] - wr[k] * left[k]
        a1.plot([a[0], b[0]], [a[1], b[1]], color="0.75", lw=0.8)
    sc = a1.scatter(
        pc[:, 0],
        pc[:, 1],
        c=center.host("curvature")[0],
        cmap="coolwarm",
        s=14,
        vmin=-8,
        vmax=8,
        label="centre line (colour: curvature)",
        zorder=3,
    )
    a1.scatter(
        pr[:, 0],
        pr[:, 1],
        c=racing.host("speed")[0],
        cmap="viridis",
        marker="s",
        s=12,
        label="racing line (colour: target speed)",
        zorder=3,
    )
    _agent(a1, pos, yaw, local=True)
    a1.set_aspect("equal")
    a1.set_xlabel("x forward (track units)")
    a1.set_ylabel("y left (track units)")
    a1.set_title("agent frame: points, widths (grey bars)")
    a1.legend(loc="lower right", fontsize=8)
    fig.colorbar(sc, ax=a1, shrink=0.7, label="curvature (1/track units)")
    fig.savefig(OUT / "sensor_lookahead.png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def cones(plt):
    from track_gen import tools

    fov, reach = 2.0, 0.9
    course = _course(
        [tools.Props("cone", 0.08), tools.ConeDetections(16, fov=fov, max_range=reach)]
    )
    pos, yaw = _bind(course)
    det = course.step()["cones"]
    track = course.generator.result
    props = course.components["props"].result
    m = int(det.count.numpy()[0])
    local = det.host("position")[0, :m].astype(np.float64)
    colour = det.host("colour")[0, :m]
    colours = np.where(colour == tools.ConeColour.LEFT, "tab:blue", "gold")
    n = int(props.count.numpy()[0])
    every = props.host("position")[0, :n]
    c0, i0, n0 = (track.host(k)[0, 0, :2] for k in ("center", "inner", "normal"))
    left_inner = float(np.dot(i0 - c0, n0)) > 0  # the inner border is the left one
    side = props.host("side")[0, :n]
    all_colours = np.where((side == 0) == left_inner, "tab:blue", "gold")
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(12, 5.2))
    _road(a0, track)
    a0.scatter(every[:, 0], every[:, 1], c=all_colours, s=10, edgecolors="0.4", linewidths=0.3)
    w = _world(local, pos, yaw)
    a0.scatter(w[:, 0], w[:, 1], s=60, facecolors="none", edgecolors="crimson", linewidths=1.0)
    arc = np.linspace(yaw - fov / 2, yaw + fov / 2, 50)
    wedge = np.c_[pos[0] + reach * np.cos(arc), pos[1] + reach * np.sin(arc)]
    a0.plot(*np.r_[[pos[:2]], wedge, [pos[:2]]].T, color="crimson", lw=0.8, ls=":")
    _agent(a0, pos, yaw)
    a0.set_aspect("equal")
    a0.set_title("world: cones (blue left, yellow right), detections circled", fontsize=10)
    a0.set_xticks([])
    a0.set_yticks([])
    a1.scatter(local[:, 0], local[:, 1], c=colours, s=40, edgecolors="0.3", linewidths=0.5)
    for k, p in enumerate(local):
        a1.annotate(str(k), p[:2], textcoords="offset points", xytext=(4, 4), fontsize=7)
    arc = np.linspace(-fov / 2, fov / 2, 50)
    a1.plot(
        *np.r_[[[0, 0]], np.c_[reach * np.cos(arc), reach * np.sin(arc)], [[0, 0]]].T,
        color="crimson",
        lw=0.8,
        ls=":",
    )
    _agent(a1, pos, yaw, local=True)
    a1.set_aspect("equal")
    a1.set_xlabel("x forward (track units)")
    a1.set_ylabel("y left (track units)")
    a1.set_title(f"agent frame: {m} detections, numbered by distance", fontsize=10)
    fig.savefig(OUT / "sensor_cones.png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def main():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    OUT.mkdir(parents=True, exist_ok=True)
    lookahead(plt)
    cones(plt)


if __name__ == "__main__":
    main()
