"""Triangle meshes of a course for simulators: :func:`road_mesh`, :func:`write_gltf` (via
``trimesh``, extra ``[mesh]``) and :func:`write_usd` (via ``usd-core``, extra ``[usd]``).

What is emitted for one env with ``n = count[env]`` beads (every part a closed loop):

* ``road``: the band between the left and the right border (each widened by
  ``extra_width``), one quad per bead pair split into 2 triangles: ``2n`` vertices
  (``left[i]`` at index ``2i``, ``right[i]`` at ``2i + 1``), ``2n`` triangles, normals up.
* ``wall_left`` / ``wall_right`` (when ``wall_height > 0``): a vertical ribbon standing on
  each border, from the border up by ``wall_height``: ``2n`` vertices (bottom at ``2i``, top
  at ``2i + 1``) and ``2n`` triangles each, facing the road.

Coordinates are track units (metres in most simulators). USD is written Z-up like the
library; glTF, which is Y-up by specification, gets ``(x, y, z) -> (x, z, -y)``.
"""

from __future__ import annotations

import numpy as np

from ..core.checks import check_float
from ..results import GateSequence, Track
from ..tools.fields import DISTANCE_HI
from .paths import atomic_write, check_out_path
from .tum import CourseRows, course_rows, gate_rows

__all__ = ["GLTF_FROM_TRACK", "road_mesh", "write_gltf", "write_usd"]

#: The rotation applied to every vertex of a glTF file: glTF is Y-up, the library Z-up
#: (``gltf = GLTF_FROM_TRACK @ track``).
GLTF_FROM_TRACK = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])

_COLORS = {
    "road": (0.45, 0.45, 0.47),
    "wall_left": (0.12, 0.31, 0.82),
    "wall_right": (0.9, 0.7, 0.0),
}


def _strip_faces(n: int, flip: bool) -> np.ndarray:
    """Triangles of a closed strip whose vertex ``2i`` / ``2i+1`` are the two rails at bead i:
    ``(a_i, b_i, b_j)`` and ``(a_i, b_j, a_j)`` with ``j = i+1 mod n`` (``flip`` reverses)."""
    i = np.arange(n)
    j = (i + 1) % n
    a_i, b_i, a_j, b_j = 2 * i, 2 * i + 1, 2 * j, 2 * j + 1
    f = np.concatenate(
        [np.stack([a_i, b_i, b_j], axis=1), np.stack([a_i, b_j, a_j], axis=1)], axis=0
    )
    order = np.empty(2 * n, dtype=np.int64)
    order[0::2], order[1::2] = i, n + i  # the two triangles of a quad side by side
    f = f[order]
    return f[:, ::-1].copy() if flip else f


def _interleave(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty((2 * len(a), 3), dtype=np.float64)
    out[0::2], out[1::2] = a, b
    return out


def _mesh_parts(rows: CourseRows, extra_width: float, wall_height: float | None) -> dict:
    w_mean = float(np.mean(rows.width_left + rows.width_right))
    h = 0.25 * w_mean if wall_height is None else wall_height
    left, right = rows.left.copy(), rows.right.copy()
    if extra_width > 0.0:
        for b, wd in ((left, rows.width_left), (right, rows.width_right)):
            d = b[:, :2] - rows.center[:, :2]
            scale = np.where(wd > 0, (wd + extra_width) / np.where(wd > 0, wd, 1.0), 1.0)
            b[:, :2] = rows.center[:, :2] + d * scale[:, None]
    n = rows.n
    # road: left rail a = 2i, right rail b = 2i+1; (left, right, right_next) turns
    # counter-clockwise seen from above, so the normals point up
    parts = {"road": (_interleave(left, right), _strip_faces(n, flip=False))}
    if h > 0.0:
        up = np.array([0.0, 0.0, h])
        # left wall (bottom 2i, top 2i+1) faces right (the road): reversed order
        parts["wall_left"] = (_interleave(left, left + up), _strip_faces(n, flip=True))
        parts["wall_right"] = (_interleave(right, right + up), _strip_faces(n, flip=False))
    return parts


def road_mesh(
    track: Track, env: int, *, extra_width: float = 0.0, wall_height: float | None = None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The triangle meshes of one valid env (see the module docs for the layout).

    Args:
        track: a :class:`~track_gen.Track`.
        env: index of a valid env.
        extra_width: widens the road band beyond each border, track units (finite, >= 0;
            the walls stand on the widened edge).
        wall_height: height of the border walls, track units (finite, >= 0; 0: no walls;
            default None: a quarter of the mean road width).

    Returns:
        ``{"road": (vertices, faces), "wall_left": ..., "wall_right": ...}``: vertices float64
        ``[2n, 3]`` track units (Z-up), faces int64 ``[2n, 3]`` vertex indices.
    """
    rows = course_rows(track, env, "road_mesh")
    ew, wh = _check_mesh_args(extra_width, wall_height)
    return _mesh_parts(rows, ew, wh)


def _check_mesh_args(extra_width, wall_height) -> tuple[float, float | None]:
    # a distance beyond DISTANCE_HI would overflow the float32 mesh vertices
    ew = check_float(
        "extra_width", extra_width, lo=0.0, hi=DISTANCE_HI, hint="a distance in track units"
    )
    wh = None
    if wall_height is not None:
        wh = check_float("wall_height", wall_height, lo=0.0, hi=DISTANCE_HI, hint="0 for no walls")
    return ew, wh


def _trimesh():
    try:
        import trimesh
    except ImportError as exc:
        raise ImportError(
            "write_gltf needs trimesh, which is not installed; install it with: "
            'pip install "track_gen[mesh]"'
        ) from exc
    return trimesh


def write_gltf(
    track: Track,
    env: int,
    path,
    *,
    extra_width: float = 0.0,
    wall_height: float | None = None,
) -> None:
    """Write one env as a glTF 2.0 scene (binary ``.glb``, or ``.gltf`` with embedded
    buffers) with one node per part of :func:`road_mesh` (``road``, ``wall_left``,
    ``wall_right``), each with a flat colour. Vertices are rotated to glTF's Y-up frame
    (:data:`GLTF_FROM_TRACK`), in track units. Needs ``trimesh`` (``pip install
    "track_gen[mesh]"``).

    Raises:
        ImportError: trimesh is missing (names the extra to install).
        TypeError / ValueError: as :func:`road_mesh`; a path not ending in ``.glb`` /
            ``.gltf``.
        OSError: ``path`` refused as :func:`~track_gen.io.write_tum` refuses it (no such
            folder, a folder, not writable).
    """
    parts = road_mesh(track, env, extra_width=extra_width, wall_height=wall_height)
    p = check_out_path("path", path, (".glb", ".gltf"))
    trimesh = _trimesh()
    scene = trimesh.Scene()
    for name, (v, f) in parts.items():
        rgba = np.array([*_COLORS[name], 1.0]) * 255
        mesh = trimesh.Trimesh(
            vertices=v @ GLTF_FROM_TRACK.T,
            faces=f,
            process=False,
            vertex_colors=np.tile(rgba.astype(np.uint8), (len(v), 1)),
        )
        scene.add_geometry(mesh, geom_name=name, node_name=name)
    if p.suffix.lower() == ".glb":
        data = trimesh.exchange.gltf.export_glb(scene)
    else:
        files = trimesh.exchange.gltf.export_gltf(scene, embed_buffers=True)
        data = files["model.gltf"]

    def write(tmp):
        tmp.write_bytes(data)

    atomic_write(p, write)


def _pxr():
    try:
        from pxr import Gf, Sdf, Usd, UsdGeom, Vt
    except ImportError as exc:
        raise ImportError(
            "write_usd needs usd-core, which is not installed; install it with: "
            'pip install "track_gen[usd]"'
        ) from exc
    return Gf, Sdf, Usd, UsdGeom, Vt


def write_usd(
    result,
    env: int,
    path,
    *,
    extra_width: float = 0.0,
    wall_height: float | None = None,
    meters_per_unit: float = 1.0,
) -> None:
    """Write one env as a USD stage (``.usda`` text, ``.usd`` / ``.usdc`` binary), Z-up.

    Args:
        result: a :class:`~track_gen.Track` (the meshes of :func:`road_mesh` as
            ``UsdGeom.Mesh`` prims ``/Track/road``, ``/Track/wall_left``,
            ``/Track/wall_right``: triangles, ``subdivisionScheme = none``, a display
            colour) or a :class:`~track_gen.GateSequence` (one ``UsdGeom.Xform`` per gate,
            ``/Gates/gate_000``, ..., with ``xformOp:translate`` = the gate centre and
            ``xformOp:orient`` = its frame, local x = forward, y = left, z = up, plus the
            custom attributes ``track_gen:half_size`` and ``track_gen:width``).
        env: index of a valid env.
        path: str or ``os.PathLike`` ending in ``.usda``, ``.usd`` or ``.usdc``.
        extra_width: as :func:`road_mesh` (tracks only).
        wall_height: as :func:`road_mesh` (tracks only).
        meters_per_unit: the stage's ``metersPerUnit`` (in [1e-9, 1e12]): metres per track unit.

    The root prim is the stage's default prim and carries ``track_gen:env``. Needs
    ``usd-core`` (``pip install "track_gen[usd]"``). Written to a temporary file and renamed.

    Raises:
        ImportError: usd-core is missing (names the extra to install).
        TypeError / ValueError: a bad result, env, option or path suffix; an invalid env.
        OSError: ``path`` refused as :func:`~track_gen.io.write_tum` refuses it (no such
            folder, a folder, not writable).
    """
    if isinstance(result, GateSequence):
        rows = gate_rows(result, env, "write_usd")
        parts = None
    elif isinstance(result, Track):
        parts = road_mesh(result, env, extra_width=extra_width, wall_height=wall_height)
    else:
        raise TypeError(
            f"write_usd: expected a track_gen.Track or GateSequence, got {type(result).__name__}"
        )
    mpu = check_float("meters_per_unit", meters_per_unit, lo=1.0e-9, hi=1.0e12)
    p = check_out_path("path", path, (".usda", ".usd", ".usdc"))
    Gf, Sdf, Usd, UsdGeom, Vt = _pxr()

    def write(tmp):
        stage = Usd.Stage.CreateNew(str(tmp))
        UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
        UsdGeom.SetStageMetersPerUnit(stage, mpu)
        root_name = "Track" if parts is not None else "Gates"
        root = UsdGeom.Xform.Define(stage, f"/{root_name}")
        stage.SetDefaultPrim(root.GetPrim())
        root.GetPrim().CreateAttribute("track_gen:env", Sdf.ValueTypeNames.Int).Set(int(env))
        if parts is not None:
            for name, (v, f) in parts.items():
                mesh = UsdGeom.Mesh.Define(stage, f"/{root_name}/{name}")
                mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(v.astype(np.float32)))
                mesh.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(f), 3, np.int32)))
                mesh.CreateFaceVertexIndicesAttr(
                    Vt.IntArray.FromNumpy(f.reshape(-1).astype(np.int32))
                )
                mesh.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
                mesh.CreateDisplayColorAttr([Gf.Vec3f(*_COLORS[name])])
                lo, hi = v.min(axis=0), v.max(axis=0)
                mesh.CreateExtentAttr([Gf.Vec3f(*map(float, lo)), Gf.Vec3f(*map(float, hi))])
        else:
            for k in range(len(rows["half_size"])):
                x = UsdGeom.Xform.Define(stage, f"/{root_name}/gate_{k:03d}")
                x.AddTranslateOp().Set(Gf.Vec3d(*map(float, rows["position"][k])))
                qx, qy, qz, qw = map(float, rows["orientation"][k])
                x.AddOrientOp().Set(Gf.Quatf(qw, qx, qy, qz))
                prim = x.GetPrim()
                hs = float(rows["half_size"][k])
                prim.CreateAttribute("track_gen:half_size", Sdf.ValueTypeNames.Float).Set(hs)
                prim.CreateAttribute("track_gen:width", Sdf.ValueTypeNames.Float).Set(2 * hs)
        stage.GetRootLayer().Save()

    atomic_write(p, write)
