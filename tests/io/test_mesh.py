"""road_mesh / write_gltf / write_usd: files re-opened by their own libraries."""

from __future__ import annotations

import numpy as np
import pytest

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.io import GLTF_FROM_TRACK, road_mesh, write_gltf, write_usd


@pytest.fixture(scope="module")
def batch():
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=2, device="cpu"), seeds=9)
    gen.generate()
    return gen.result


def _borders(track, e):
    n_max, n = track.N_max, int(track.count.numpy()[e])
    rows = slice(e * n_max, e * n_max + n)
    c, o, i, nrm = (
        getattr(track, k).numpy()[rows].astype(np.float64)
        for k in ("center", "outer", "inner", "normal")
    )
    return (o, i) if np.sum((o - c) * nrm) > 0 else (i, o)


def test_road_mesh_layout_and_orientation(batch):
    n = int(batch.count.numpy()[0])
    parts = road_mesh(batch, 0, wall_height=0.05)
    assert sorted(parts) == ["road", "wall_left", "wall_right"]
    left, right = _borders(batch, 0)
    for name, (v, f) in parts.items():
        assert v.shape == (2 * n, 3) and f.shape == (2 * n, 3), name
        assert f.min() == 0 and f.max() == 2 * n - 1
        assert len(np.unique(np.sort(f, axis=1), axis=0)) == 2 * n  # no repeated triangle
    v, f = parts["road"]
    np.testing.assert_allclose(v[0::2], left)
    np.testing.assert_allclose(v[1::2], right)
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    assert np.all(np.cross(b - a, c - a)[:, 2] > 0)  # the road faces up
    wl, _ = parts["wall_left"]
    np.testing.assert_allclose(wl[1::2, 2] - wl[0::2, 2], 0.05)
    assert sorted(road_mesh(batch, 0, wall_height=0.0)) == ["road"]
    wide, _ = road_mesh(batch, 0, extra_width=0.05, wall_height=0.0)["road"]
    c = np.asarray(batch.center.numpy()[:n], np.float64)
    np.testing.assert_allclose(np.linalg.norm((wide[0::2] - c)[:, :2], axis=1), 0.15, rtol=1e-3)
    for bad in (-1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="extra_width"):
            road_mesh(batch, 0, extra_width=bad)
        with pytest.raises(ValueError, match="wall_height"):
            road_mesh(batch, 0, wall_height=bad)


@pytest.mark.parametrize("suffix", [".glb", ".gltf"])
def test_gltf_reopened_by_trimesh(tmp_path, batch, suffix):
    trimesh = pytest.importorskip("trimesh", reason="trimesh missing: pip install track_gen[mesh]")
    n = int(batch.count.numpy()[1])
    path = tmp_path / f"course{suffix}"
    write_gltf(batch, 1, path)
    scene = trimesh.load(path, process=False)
    counts = {k: (len(g.vertices), len(g.faces)) for k, g in scene.geometry.items()}
    assert counts == {k: (2 * n, 2 * n) for k in ("road", "wall_left", "wall_right")}
    road = scene.geometry["road"]
    left, _ = _borders(batch, 1)
    np.testing.assert_allclose(road.vertices[0::2], left @ GLTF_FROM_TRACK.T, atol=1e-6)
    assert road.face_normals[:, 1].min() > 0.99  # up is +Y in glTF


def test_usd_reopened_by_pxr(tmp_path, batch):
    pytest.importorskip("pxr", reason="usd-core missing: pip install track_gen[usd]")
    from pxr import Usd, UsdGeom

    n = int(batch.count.numpy()[0])
    for suffix in (".usda", ".usd"):
        path = tmp_path / f"course{suffix}"
        write_usd(batch, 0, path, meters_per_unit=0.5)
        stage = Usd.Stage.Open(str(path))
        assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
        assert UsdGeom.GetStageMetersPerUnit(stage) == 0.5
        assert stage.GetDefaultPrim().GetPath() == "/Track"
        meshes = {p.GetName(): UsdGeom.Mesh(p) for p in stage.Traverse() if p.IsA(UsdGeom.Mesh)}
        assert sorted(meshes) == ["road", "wall_left", "wall_right"]
        for m in meshes.values():
            assert len(m.GetPointsAttr().Get()) == 2 * n
            assert list(m.GetFaceVertexCountsAttr().Get()) == [3] * (2 * n)
        pts = np.array(meshes["road"].GetPointsAttr().Get())
        left, _ = _borders(batch, 0)
        np.testing.assert_allclose(pts[0::2], left, atol=1e-6)


def test_usd_gate_poses(tmp_path):
    pytest.importorskip("pxr", reason="usd-core missing: pip install track_gen[usd]")
    from pxr import Usd, UsdGeom

    gen = GateGenerator(
        GateGenConfig(generator="polar", num_envs=2, device="cpu", gate_width=0.3), seeds=1
    )
    gen.generate()
    g = gen.result
    path = tmp_path / "gates.usda"
    write_usd(g, 1, path)
    stage = Usd.Stage.Open(str(path))
    gates = list(stage.GetPrimAtPath("/Gates").GetChildren())
    n, m = int(g.count.numpy()[1]), g.max_gates
    assert len(gates) == n
    pos, quat = g.position.numpy()[m : m + n], g.orientation.numpy()[m : m + n]
    for k, prim in enumerate(gates):
        xf = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
        np.testing.assert_allclose(np.array(xf.ExtractTranslation()), pos[k], atol=1e-6)
        q = xf.ExtractRotationQuat()
        got = np.array([*q.GetImaginary(), q.GetReal()])
        assert abs(abs(np.dot(got, quat[k])) - 1.0) < 1e-5  # same rotation (q or -q)
        assert prim.GetAttribute("track_gen:width").Get() == pytest.approx(0.3)


def test_mesh_writers_refuse(tmp_path, batch):
    with pytest.raises(ValueError, match=r"\.glb"):
        write_gltf(batch, 0, tmp_path / "a.obj")
    with pytest.raises(ValueError, match=r"\.usda"):
        write_usd(batch, 0, tmp_path / "a.glb")
    with pytest.raises(ValueError, match="meters_per_unit"):
        write_usd(batch, 0, tmp_path / "a.usda", meters_per_unit=0.0)
    with pytest.raises(TypeError, match="Track or GateSequence"):
        write_usd(np.zeros(3), 0, tmp_path / "a.usda")
    with pytest.raises(ValueError, match="out of range"):
        write_gltf(batch, 2, tmp_path / "a.glb")
    assert list(tmp_path.iterdir()) == []


def test_missing_package_names_the_extra(tmp_path, batch, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_mesh(name, *args, **kwargs):
        if name in ("trimesh", "pxr"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mesh)
    with pytest.raises(ImportError, match=r"track_gen\[mesh\]"):
        write_gltf(batch, 0, tmp_path / "a.glb")
    with pytest.raises(ImportError, match=r"track_gen\[usd\]"):
        write_usd(batch, 0, tmp_path / "a.usda")
    assert list(tmp_path.iterdir()) == []
