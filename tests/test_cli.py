"""The track-gen command line and the benchmark script (tiny batches, CPU only)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from track_gen.cli import main  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_preview_writes_png_and_summary(tmp_path, capsys):
    out = tmp_path / "p.png"
    rc = main(
        ["preview", "-E", "4", "--calls", "1", "--device", "cpu", "-o", str(out), "--no-progress"]
    )
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert out.read_bytes()[:8] == PNG_SIGNATURE
    for word in ("yield", "device", "ms per call", "fail bits", "TURNING", str(out)):
        assert word in captured.out
    assert "cpu" in captured.out
    assert captured.err.count("\r") == 0  # --no-progress: no progress bar


def test_no_subcommand_means_preview(tmp_path, capsys):
    out = tmp_path / "q.png"
    rc = main(
        ["-E", "2", "--calls", "0", "--device", "cpu", "--generator", "polar", "-o", str(out)]
    )
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "polar" in captured.out and "n/a" in captured.out
    assert out.read_bytes()[:8] == PNG_SIGNATURE


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["-E", "0"], "num_envs"),
        (["--half-width", "0"], "half_width"),
        (["--calls", "-1"], "--calls"),
        (["--envs-shown", "0"], "--envs-shown"),
        (["--device", "no-such-device"], "--device"),
        (["-o", "/no/such/folder/p.png"], "does not exist"),
        (["--z-min", "0.1"], "--z-min: only with a non-flat --z-profile"),
        (["--z-profile", "flat", "--z-max", "1"], "--z-max"),
        (["--z-profile", "uniform", "--z-min", "1"], "z_min = 1.0 is out of range"),
        (["--z-profile", "noise", "--z-max", "nan"], "z_max"),
        (["--z-profile", "random_walk", "--z-max-step", "-1"], "z_max_step"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, argv, needle):
    argv = ["preview", "--device", "cpu", "-o", str(tmp_path / "x.png"), *argv]
    rc = main(argv)
    captured = capsys.readouterr()
    assert rc == 2
    assert needle in captured.err
    assert "Traceback" not in captured.err
    assert not (tmp_path / "x.png").exists()


def test_argparse_errors_return_2(capsys):
    assert main(["preview", "--generator", "no-such-sampler"]) == 2
    assert "invalid choice" in capsys.readouterr().err
    assert main(["--version"]) == 0


def test_z_profile_writes_png_and_elevation_row(tmp_path, capsys):
    out = tmp_path / "z.png"
    argv = ["preview", "-E", "3", "--calls", "1", "--device", "cpu", "-o", str(out)]
    rc = main([*argv, "--z-profile", "noise", "--z-min", "0.1", "--z-max", "0.3"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert out.read_bytes()[:8] == PNG_SIGNATURE
    row = next(line for line in captured.out.splitlines() if line.startswith("elevation"))
    assert "noise, z in [0.1, 0.3]" in row and "steepest grade" in row
    lo, hi = (float(v.strip(",")) for v in row.split("heights ")[1].split()[:3:2])
    assert 0.1 <= lo < hi <= 0.3

    rc = main([*argv, "--z-profile", "random_walk"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "random_walk, z in [0, 0.5], z_max_step 0.1" in captured.out


def test_flat_profile_has_no_elevation_row(tmp_path, capsys):
    argv = ["preview", "-E", "2", "--calls", "0", "--device", "cpu", "-o", str(tmp_path / "f.png")]
    assert main([*argv, "--z-profile", "flat"]) == 0
    assert "elevation" not in capsys.readouterr().out


def test_bad_z_profile_is_refused(tmp_path, capsys):
    out = tmp_path / "b.png"
    rc = main(["preview", "--device", "cpu", "--z-profile", "bumpy", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "--z-profile" in err and "invalid choice" in err and "random_walk" in err
    assert not out.exists()


def test_benchmark_script_runs():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    cmd = [sys.executable, str(REPO / "benchmarks" / "generate.py")]
    cmd += ["--E", "4", "--calls", "1", "--generators", "polar", "--device", "cpu"]
    cmd += ["--cpu-threads", "1", "2"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("generator"))
    assert "ms/call" in header and "yield" in header and "threads" in header
    rows = [line.split() for line in lines if line.startswith("polar") and " ms x" not in line]
    assert [(r[1], r[2]) for r in rows] == [("4", "1"), ("4", "2")]
    scaling = [line for line in lines if line.startswith("polar") and " ms x" in line]
    assert len(scaling) == 1 and "1(1)" in scaling[0] and "2(2)" in scaling[0]


def test_progress_bar_on_a_tty(tmp_path, monkeypatch, capsys):
    import io

    class FakeTTY(io.StringIO):
        def isatty(self):
            return True

    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    rc = main(
        ["preview", "-E", "2", "--calls", "2", "--device", "cpu", "-o", str(tmp_path / "t.png")]
    )
    assert rc == 0
    assert "[" in fake.getvalue() and "2/2" in fake.getvalue()
    capsys.readouterr()


def _one_line_refusal(capsys, rc) -> str:
    captured = capsys.readouterr()
    assert rc == 2, captured.err
    assert "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    return captured.err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["--calls", "1000000000"],
            "--calls = 1000000000 is out of range: must be >= 0 and <= 1000",
        ),
        (["--calls", "1001"], "--calls = 1001 is out of range"),
        (["--envs-shown", "257"], "--envs-shown = 257 is out of range: must be >= 1 and <= 256"),
        (["--envs-shown", str(10**30)], "--envs-shown"),
    ],
)
def test_count_options_have_an_upper_bound(tmp_path, capsys, argv, needle):
    # --calls 1000000000 -E 1 used to run for days
    out = tmp_path / "x.png"
    rc = main(["preview", "-E", "1", "--device", "cpu", "-o", str(out), *argv])
    assert needle in _one_line_refusal(capsys, rc)
    assert list(tmp_path.iterdir()) == []


def test_count_options_at_their_bounds(tmp_path, capsys):
    from track_gen.cli import MAX_CALLS
    from track_gen.viz import MAX_SHOWN

    out = tmp_path / "b.png"
    argv = ["preview", "-E", "1", "--device", "cpu", "-o", str(out), "--no-progress"]
    rc = main([*argv, "--calls", str(MAX_CALLS), "--envs-shown", str(MAX_SHOWN)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert f"mean of {MAX_CALLS} warm calls" in captured.out
    assert out.read_bytes()[:8] == PNG_SIGNATURE


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("DIR", "is a folder"),  # used to write DIR.png beside the folder, printing "output DIR"
        ("", "is not a usable file name"),  # used to write a hidden .png into the cwd
        ("x.txt", "must end with one of"),  # used to exit 1 with a matplotlib traceback
        ("preview", "must end with one of"),  # used to write preview.png
        ("a" * 300 + ".png", "more than the 255"),
        ("FILE/x.png", "is a file, not a folder"),
    ],
)
def test_output_paths_are_refused_with_one_line(tmp_path, monkeypatch, capsys, name, error):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "DIR").mkdir()
    (tmp_path / "FILE").write_text("x")
    rc = main(["preview", "-E", "1", "--calls", "0", "--device", "cpu", "-o", name])
    err = _one_line_refusal(capsys, rc)
    assert "--output" in err and error in err
    assert sorted(os.listdir(tmp_path)) == ["DIR", "FILE"] and os.listdir("DIR") == []


def test_the_printed_output_is_the_file_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("p.svg", "sub/p.PNG"):
        os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
        assert main(["-E", "1", "--calls", "0", "--device", "cpu", "-o", name]) == 0
        row = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("output"))
        assert row.split()[-1] == name and os.path.isfile(name)
    assert sorted(os.listdir(tmp_path)) == ["p.svg", "sub"]
