"""``track-gen`` count options and output paths: any value is a run (exit 0, exactly the named
file written) or a one-line refusal (exit 2, nothing written, never a traceback, never a
hang). Counts at and beyond their declared bounds (``--calls`` 0 .. ``cli.MAX_CALLS``,
``--envs-shown`` 1 .. ``viz.MAX_SHOWN``, ``-E`` the ``num_envs`` range); paths by the rule of
``track_gen.io.paths`` ('', folders, names too long, wrong or no suffix)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytest.importorskip("matplotlib")

from track_gen.cli import MAX_CALLS, main  # noqa: E402
from track_gen.io.paths import picture_suffixes  # noqa: E402
from track_gen.seeds import NUM_ENVS  # noqa: E402
from track_gen.viz import MAX_SHOWN  # noqa: E402

from .io import CIRCUITS, write_csv  # noqa: E402
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
