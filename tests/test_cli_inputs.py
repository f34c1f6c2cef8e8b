"""``track-gen`` count options, output paths and input files: any value is a run (exit 0,
exactly the named file written) or a one-line refusal (exit 2, nothing written, never a
traceback, never a hang). Counts at and beyond their declared bounds (``--calls`` 0 ..
``cli.MAX_CALLS``, ``--envs-shown`` 1 .. ``viz.MAX_SHOWN``, ``-E`` the ``num_envs`` range);
paths by the rule of ``track_gen.io.paths`` ('', folders, names too long, wrong or no suffix,
a folder where no file can be created); input files by the input file rule (devices, FIFOs,
files over the limit)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytest.importorskip("matplotlib")

from track_gen.cli import MAX_CALLS, main  # noqa: E402
from track_gen.io.paths import MAX_CSV_BYTES, MAX_SETTINGS_BYTES, picture_suffixes  # noqa: E402
from track_gen.seeds import NUM_ENVS  # noqa: E402
from track_gen.viz import MAX_SHOWN  # noqa: E402

from .io import CIRCUITS, write_csv  # noqa: E402
from .support.files import sparse, state, unblocked  # noqa: E402
from .support.strategies import examples, expected_path_error, out_names  # noqa: E402

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

FIXTURE_OK = [HealthCheck.function_scoped_fixture]
BOUNDS = {"--calls": (0, MAX_CALLS), "--envs-shown": (1, MAX_SHOWN), "-E": NUM_ENVS.bounds()}


def counts(option: str) -> st.SearchStrategy:
    lo, hi = BOUNDS[option]
    edges = [lo - 1, lo, hi, hi + 1, 10**9, 2**31, 2**63, 10**30, -(10**30)]
    return st.one_of(st.sampled_from(edges), st.integers(lo, min(hi, lo + 2)))


def _folder() -> str:
    d = tempfile.mkdtemp()
    os.mkdir(os.path.join(d, "DIR"))
    with open(os.path.join(d, "FILE"), "w") as f:
        f.write("x")
    return d


def _listing(d: str) -> list[str]:
    return sorted(os.listdir(d)) + sorted("DIR/" + n for n in os.listdir(os.path.join(d, "DIR")))


#: The largest accepted value of each option run here (larger ones are accepted but slow; the
#: bounds themselves run in tests/test_cli.py).
CHEAP = {"--calls": 4, "--envs-shown": MAX_SHOWN, "-E": 4}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=FIXTURE_OK)
@given(option=st.sampled_from(sorted(BOUNDS)), data=st.data())
def test_preview_counts(capsys, option, data):
    n = data.draw(counts(option))
    lo, hi = BOUNDS[option]
    if lo <= n <= hi and n > CHEAP[option]:
        return
    d = _folder()
    out = os.path.join(d, "p.png")
    base = ["preview", "--device", "cpu", "--no-progress", "-o", out, "-E", "1", "--calls", "0"]
    rc = main([*base, option, str(n)])  # the last occurrence of an option wins
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if lo <= n <= hi:
        assert rc == 0, err
        assert os.path.isfile(out)
    else:
        assert rc == 2 and len(err.strip().splitlines()) == 1, err
        assert (option if option != "-E" else "num_envs") in err
        assert _listing(d) == ["DIR", "FILE"]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=FIXTURE_OK)
@given(name=out_names(".png"))
def test_preview_output_path(capsys, name):
    d = _folder()
    cwd = os.getcwd()
    os.chdir(d)  # relative names land in the test folder ('' used to write ./.png)
    try:
        argv = ["preview", "-E", "1", "--calls", "0", "--device", "cpu", f"--output={name}"]
        want = expected_path_error(d, name, picture_suffixes())
        if "\x00" in name:
            return  # not a possible command line argument
        rc = main(argv)
        err = capsys.readouterr().err
    finally:
        os.chdir(cwd)
    assert "Traceback" not in err
    event("written" if want is None else "refused")
    if want is None:
        assert rc == 0, err
        assert os.path.isfile(os.path.join(d, name))
        assert len(_listing(d)) == 3
    else:
        assert rc == 2 and "--output" in err and len(err.strip().splitlines()) == 1
        assert _listing(d) == ["DIR", "FILE"]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=FIXTURE_OK)
@given(name=out_names(".png"))
def test_import_preview_path(capsys, name):
    if "\x00" in name:
        return
    d = _folder()
    csv = str(write_csv(Path(d) / "oval.csv", *CIRCUITS["oval"](40)))
    want = expected_path_error(d, name, picture_suffixes())
    rc = main(["import", csv, f"--preview={os.path.join(d, name) if name else ''}"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if want is None:
        assert rc == 0, err
        assert len(_listing(d)) == 4
    else:
        assert rc == 2 and "--preview" in err
        assert _listing(d) == ["DIR", "FILE", "oval.csv"]


@settings(max_examples=examples(20), deadline=None, suppress_health_check=FIXTURE_OK)
@given(name=st.sampled_from(["", "FILE", "DIR", "new", "missing/new", "a" * 300, "DIR/"]))
def test_export_out_folder(capsys, name):
    d = _folder()
    cwd = os.getcwd()
    os.chdir(d)
    try:
        rc = main(["export", "-E", "1", "--device", "cpu", "--format", "npz", "--out", name])
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if name in ("DIR", "new", "DIR/"):
        assert rc == 0, err
        assert os.listdir(os.path.join(d, name)) == ["bezier.npz"]
    else:
        assert rc == 2 and "--out" in err and len(err.strip().splitlines()) == 1
        assert _listing(d) == ["DIR", "FILE"]


# ------------------------------------------------------------------------------ input files
REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="POSIX")
def test_special_inputs_are_refused_at_once(tmp_path):
    """/dev/zero used to be read until the process was killed for memory and a FIFO blocked
    forever: each is one line and exit status 2. Run as real processes (the timeout only
    keeps a regression from hanging the suite; no time is asserted)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    runs = {
        ("import", "/dev/zero"): "a character device",
        ("preview", "--config", "/dev/zero"): "a character device",
        ("import", str(fifo)): "a FIFO",
        ("preview", "--config", str(fifo)): "a FIFO",
    }
    procs = {
        argv: subprocess.Popen(
            [sys.executable, "-m", "track_gen", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        for argv in runs
    }
    try:
        for argv, what in runs.items():
            _, err = procs[argv].communicate(timeout=60)
            lines = [ln for ln in err.splitlines() if not ln.startswith("Warp")]
            assert procs[argv].returncode == 2, (argv, err)
            assert "Traceback" not in err and len(lines) == 1, (argv, err)
            assert what in lines[0] and "not a regular file" in lines[0], (argv, err)
            assert f"track-gen {argv[0]}: error:" in lines[0], (argv, err)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.communicate()
    assert sorted(os.listdir(tmp_path)) == ["pipe"]  # nothing written (no picture)


def test_a_csv_over_the_limit_is_refused_before_reading(tmp_path, capsys):
    big = sparse(tmp_path / "big.csv", MAX_CSV_BYTES + 1)
    before = state(tmp_path)
    rc = main(["import", str(big), "--preview", str(tmp_path / "p.png")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{MAX_CSV_BYTES + 1:,} bytes" in err and f"more than the {MAX_CSV_BYTES:,}" in err
    assert state(tmp_path) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX special files")
def test_settings_over_the_limit_and_special_settings_are_refused(tmp_path, capsys):
    big = sparse(tmp_path / "big.json", MAX_SETTINGS_BYTES + 1, b"{")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    out = tmp_path / "p.png"
    before = state(tmp_path)
    cases = ((big, "more than the"), ("/dev/null", "a character device"), (fifo, "a FIFO"))
    with unblocked(fifo):  # a regression fails here instead of hanging
        for path, what in cases:
            for argv in (["preview", "-o", str(out)], ["explore", "--port", "0"]):
                rc = main([*argv, "--config", str(path)])
                err = capsys.readouterr().err
                assert rc == 2 and len(err.strip().splitlines()) == 1, err
                assert "--config" in err and what in err and "Traceback" not in err
    assert state(tmp_path) == before


def _no_file_can_be_created_in_proc() -> bool:
    try:
        fd, name = tempfile.mkstemp(dir="/proc")
    except OSError:
        return True
    os.close(fd)
    os.unlink(name)
    return False


@pytest.mark.skipif(
    not os.path.isdir("/proc") or not _no_file_can_be_created_in_proc(), reason="needs /proc"
)
def test_output_folders_where_no_file_can_be_created(capsys):
    """/proc passes os.access as root: tried by creating a file, refused before the run
    (export used to generate, then exit 1)."""
    for argv, option in (
        (["export", "-E", "1", "--device", "cpu", "--format", "npz", "--out", "/proc"], "--out"),
        (
            ["preview", "-E", "1", "--calls", "0", "--device", "cpu", "-o", "/proc/p.png"],
            "--output",
        ),
    ):
        rc = main(argv)
        err = capsys.readouterr().err
        assert rc == 2 and len(err.strip().splitlines()) == 1, err
        assert f"{option}: no file can be created in folder '/proc'" in err


@pytest.mark.parametrize("fmt", ["npz", "tum"])
def test_an_export_target_that_is_a_folder(tmp_path, capsys, fmt):
    name = "bezier.npz" if fmt == "npz" else "bezier_env0.csv"
    (tmp_path / name).mkdir()
    before = state(tmp_path)
    rc = main(["export", "-E", "2", "--device", "cpu", "--format", fmt, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{name} is a folder where the export writes a file" in err
    assert state(tmp_path) == before and os.listdir(tmp_path / name) == []


def test_special_inputs_are_refused_before_warp_is_imported(tmp_path):
    """The refusal of a device or a FIFO comes from its ``stat`` alone, before the package's
    generators and Warp load (what makes it immediate): checked in a fresh interpreter."""
    if not os.path.exists("/dev/zero"):
        pytest.skip("POSIX")
    code = (
        "import sys\n"
        "from track_gen.cli import main\n"
        "argvs = [['import', '/dev/zero'], ['preview', '--config', '/dev/zero'],\n"
        "         ['explore', '--config=/dev/zero'], ['--config', '/dev/zero'],\n"
        "         ['import', '--preview', 'x.png', '--', '/dev/zero'],\n"
        "         ['preview', '--config', '.']]\n"
        "rcs = [main(a) for a in argvs]\n"
        "assert rcs == [2] * 6, rcs\n"
        "assert 'warp' not in sys.modules, 'warp was imported'\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 6
    assert all("a character device, not a regular file" in ln for ln in lines[:5])
    assert lines[5] == (
        "track-gen preview: error: --config .: read_settings: . is a folder, not a settings "
        "JSON file"
    )
    assert lines[2].startswith("track-gen explore: error: --config /dev/zero: read_settings:")
    assert lines[3].startswith("track-gen preview: error: --config /dev/zero:")


def test_the_early_input_check_knows_every_option_of_import():
    """The early check skips the values of import's options: its table must list every option
    of ``import`` that takes a value, and ``preview`` / ``explore`` must still read
    ``--config``."""
    import argparse

    from track_gen.cli import _build_parser
    from track_gen.cli_args import IMPORT_VALUE_OPTIONS, INPUT_FILES

    parser = _build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    taking = {
        opt
        for a in sub.choices["import"]._actions
        if a.option_strings and a.nargs != 0
        for opt in a.option_strings
    }
    assert taking == set(IMPORT_VALUE_OPTIONS)
    for command in ("preview", "explore"):
        options = {o for a in sub.choices[command]._actions for o in a.option_strings}
        assert all(opt in options for opt, _, _ in INPUT_FILES[command])
