"""Make docs/images/io_import.png and docs/images/io_mesh.png (run from the repository root:
``python docs/gen_io_images.py``; needs matplotlib and trimesh).

The import picture is ``track-gen import --preview`` on the test suite's circuits; the mesh
picture is a course exported with ``track-gen export --format gltf`` at metre scale, re-opened
with trimesh and drawn with matplotlib.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import warp as wp

sys.path.insert(0, ".")
wp.config.log_level = wp.LOG_WARNING

from tests.io import CIRCUITS, write_csv  # noqa: E402
from track_gen.cli import main  # noqa: E402
from track_gen.io import GLTF_FROM_TRACK  # noqa: E402

COLORS = {"road": "#8a8a90", "wall_left": "#1f4fd1", "wall_right": "#e0b000"}


def import_picture(tmp: Path) -> None:
    paths = [str(write_csv(tmp / f"{n}.csv", *f(), fmt="{:.3f}")) for n, f in CIRCUITS.items()]
    assert main(["import", *paths, "--preview", "docs/images/io_import.png"]) == 0


def mesh_picture(tmp: Path) -> None:
    import trimesh
    from matplotlib.figure import Figure
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    args = ["export", "--generator", "bezier", "-E", "4", "--seed", "2", "--scale", "120"]
    args += ["--half-width", "4", "--format", "gltf", "--out", str(tmp / "mesh")]
    assert main([*args, "--device", "cpu", "--no-progress"]) == 0
    scene = trimesh.load(tmp / "mesh" / "bezier_env0.glb", process=False)
    fig = Figure(figsize=(8, 6))
    ax = fig.add_subplot(projection="3d")
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for name, g in scene.geometry.items():
        v = g.vertices @ GLTF_FROM_TRACK  # back to Z-up for the picture
        lo, hi = np.minimum(lo, v.min(0)), np.maximum(hi, v.max(0))
        poly = Poly3DCollection(
            v[g.faces], facecolor=COLORS[name], edgecolor="#303030", linewidths=0.1, alpha=0.95
        )
        ax.add_collection3d(poly)
    c, r = (lo + hi) / 2, (hi - lo).max() / 2
    ax.set_xlim(c[0] - r, c[0] + r)
    ax.set_ylim(c[1] - r, c[1] + r)
    ax.set_zlim(0, r / 3)
    ax.set_box_aspect((1, 1, 1 / 3))
    ax.view_init(elev=35, azim=-60)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_zlabel("z (m)")
    n = len(scene.geometry["road"].vertices) // 2
    ax.set_title(f"bezier_env0.glb re-opened with trimesh: road band + border walls ({n} beads)")
    fig.tight_layout()
    fig.savefig("docs/images/io_mesh.png", dpi=100)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        import_picture(Path(d))
        mesh_picture(Path(d))
    print("wrote docs/images/io_import.png, docs/images/io_mesh.png")
