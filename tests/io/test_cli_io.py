"""``track-gen export`` and ``track-gen import`` through ``track_gen.cli.main`` (small E, cpu)."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

from track_gen.cli import main
from track_gen.io import read_batch, read_tum

from . import CIRCUITS, write_csv

BASE = ["export", "--generator", "polar", "-E", "3", "--seed", "3", "--device", "cpu"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "fmt, files",
    [
        ("tum", ["polar_env0.csv", "polar_env1.csv", "polar_env2.csv"]),
        ("cones", ["polar_env0.cones.csv", "polar_env1.cones.csv", "polar_env2.cones.csv"]),
        ("json", ["polar.json"]),
        ("npz", ["polar.npz"]),
        ("gltf", ["polar_env0.glb", "polar_env1.glb", "polar_env2.glb"]),
        ("usd", ["polar_env0.usda", "polar_env1.usda", "polar_env2.usda"]),
    ],
)
def test_export_writes_one_file_per_env_or_one_batch(tmp_path, capsys, fmt, files):
    if fmt == "gltf":
        pytest.importorskip("trimesh", reason="trimesh missing: pip install track_gen[mesh]")
    if fmt == "usd":
        pytest.importorskip("pxr", reason="usd-core missing: pip install track_gen[usd]")
    out = tmp_path / "out"  # created by the command (its parent exists)
    rc = main([*BASE, "--format", fmt, "--out", str(out), "--no-progress"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert sorted(p.name for p in out.iterdir()) == files
    if fmt == "tum":
        t = read_tum(out / "polar_env1.csv")
        assert t.num_points > 20 and np.allclose(t.width_left, 0.1, rtol=1e-3)
    if fmt == "npz":
        b = read_batch(out / "polar.npz")
        assert b.num_envs == 3 and b.seeds.tolist() == [3, 4, 5]
    assert "wrote" in captured.out


def test_export_skips_invalid_envs_with_a_note(tmp_path, capsys):
    # at scale 5 some loops need more than N_max beads: TRUNCATED envs are skipped
    rc = main([*BASE, "-E", "4", "--scale", "5", "--format", "tum", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    notes = [ln for ln in captured.err.splitlines() if "skipped" in ln]
    written = sorted(p.name for p in tmp_path.iterdir())
    assert len(notes) >= 1 and all("TRUNCATED" in ln for ln in notes)
    assert len(written) + len(notes) == 4
    assert f"({len(notes)} invalid envs skipped)" in captured.out


def test_export_gates(tmp_path, capsys):
    rc = main([*BASE, "--gates", "--format", "json", "--out", str(tmp_path)])
    assert rc == 0, capsys.readouterr().err
    assert read_batch(tmp_path / "polar_gates.json").kind == "gates"


def test_export_progress_bar_on_a_tty(tmp_path, monkeypatch, capsys):
    class FakeTTY(io.StringIO):
        def isatty(self):
            return True

    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    assert main([*BASE, "--format", "tum", "--out", str(tmp_path)]) == 0
    assert "export [" in fake.getvalue() and "3/3" in fake.getvalue()
    capsys.readouterr()


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--format", "tum", "--out", "/no/such/folder/out"], "does not exist"),
        (["--format", "tum", "--out", "FILE"], "not a folder"),
        (["--format", "tum", "--out", "DIR", "--gates"], "not available with --gates"),
        (["--format", "tum", "--out", "DIR", "--cone-spacing", "1"], "only with --format cones"),
        (["--format", "cones", "--out", "DIR", "--cone-spacing", "nan"], "--cone-spacing"),
        (["--format", "cones", "--out", "DIR", "--cone-spacing", "5"], "at least 4 cones"),
        (["--format", "tum", "--out", "DIR", "--scale", "-1"], "scale"),
        (["--format", "tum", "--out", "DIR", "--device", "nope"], "--device"),
    ],
)
def test_export_refusals_exit_2_with_one_line(tmp_path, capsys, extra, needle):
    (tmp_path / "FILE").write_text("x")
    (tmp_path / "DIR").mkdir()
    extra = [str(tmp_path / a) if a in ("FILE", "DIR") else a for a in extra]
    rc = main([*BASE, *extra])
    captured = capsys.readouterr()
    assert rc == 2
    assert needle in captured.err and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert list((tmp_path / "DIR").iterdir()) == []


def test_export_argparse_refusals(capsys):
    assert main([*BASE, "--format", "obj", "--out", "x"]) == 2
    assert "invalid choice" in capsys.readouterr().err
    assert main(["export", "--format", "tum"]) == 2  # --out is required
    assert "--out" in capsys.readouterr().err


def test_import_prints_and_draws_circuits(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    paths = [str(write_csv(tmp_path / f"{name}.csv", *make())) for name, make in CIRCUITS.items()]
    png = tmp_path / "circuits.png"
    rc = main(["import", *paths, "--preview", str(png)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert png.read_bytes()[:8] == PNG_SIGNATURE
    for name in CIRCUITS:
        line = next(ln for ln in captured.out.splitlines() if ln.startswith(f"{name}:"))
        t = read_tum(tmp_path / f"{name}.csv")
        assert f"{t.length:,.1f} m" in line and f"{t.num_points} points" in line


def test_import_refusals_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("# x_m,y_m,w_tr_right_m,w_tr_left_m\n1,2,3,zz\n")
    for argv, needle in (
        (["import", str(tmp_path / "missing.csv")], "missing.csv"),
        (["import", str(bad)], "bad.csv line 2, column w_tr_left_m: 'zz' is not a number"),
        (["import", str(bad), "--preview", "/no/such/folder/x.png"], "does not exist"),
        (["import", str(tmp_path)], "folder"),
    ):
        rc = main(argv)
        captured = capsys.readouterr()
        assert rc == 2, argv
        assert needle in captured.err and "Traceback" not in captured.err
        assert len(captured.err.strip().splitlines()) == 1


def test_export_out_empty_is_refused_and_writes_nothing_in_the_cwd(tmp_path, monkeypatch, capsys):
    # --out '' used to write the files into the current folder
    monkeypatch.chdir(tmp_path)
    rc = main([*BASE, "--format", "tum", "--out", ""])
    captured = capsys.readouterr()
    assert rc == 2 and "--out ''" in captured.err and "--out ." in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
    assert main([*BASE, "--format", "npz", "--out", "."]) == 0  # the documented spelling
    assert [p.name for p in tmp_path.iterdir()] == ["polar.npz"]
    capsys.readouterr()


@pytest.mark.parametrize("fmt", ["tum", "npz"])
def test_export_write_failure_is_one_line_exit_1(tmp_path, monkeypatch, capsys, fmt):
    import errno
    import os

    def full_disk(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    rc = main([*BASE, "--format", fmt, "--out", str(tmp_path), "--no-progress"])
    captured = capsys.readouterr()
    assert rc == 1 and "No space left" in captured.err and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("DIR", "is a folder"),  # used to write DIR.png beside it
        ("", "is not a usable file name"),  # used to write a hidden .png
        ("x.txt", "must end with one of"),
        ("a" * 300 + ".png", "more than the 255"),
    ],
)
def test_import_preview_paths(tmp_path, monkeypatch, capsys, name, needle):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "DIR").mkdir()
    csv = str(write_csv(tmp_path / "oval.csv", *CIRCUITS["oval"]()))
    rc = main(["import", csv, "--preview", name])
    captured = capsys.readouterr()
    assert rc == 2 and "--preview" in captured.err and needle in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["DIR", "oval.csv"]


def test_import_preview_draws_at_most_256_circuits(tmp_path, capsys):
    csv = str(write_csv(tmp_path / "oval.csv", *CIRCUITS["oval"]()))
    rc = main(["import", *[csv] * 257, "--preview", str(tmp_path / "x.png")])
    captured = capsys.readouterr()
    assert rc == 2 and "at most 256 circuits" in captured.err
    assert not (tmp_path / "x.png").exists()
