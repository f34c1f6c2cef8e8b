"""studies/full_scale.py: the ``--smoke`` run end to end on four of the real circuits (every
method, seed, fold and evaluation, seconds), its folds and its refusals."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("rsl_rl")

from studies import full_scale as study  # noqa: E402

#: The ten TUM circuits beside the checkout (skipped when absent).
SHARED_TUM = Path(__file__).resolve().parents[3] / "shared" / "data" / "tum"


@pytest.fixture(scope="module")
def circuits(tmp_path_factory):
    paths = sorted(SHARED_TUM.glob("*.csv"))[:4]
    if len(paths) < 4:
        pytest.skip(f"no circuits at {SHARED_TUM}")
    folder = tmp_path_factory.mktemp("circuits")
    for p in paths:  # read in place: links, no copy
        (folder / p.name).symlink_to(p)
    return folder, [p.stem for p in paths]


@pytest.fixture(scope="module")
def smoke(circuits, tmp_path_factory):
    folder, _ = circuits
    out = tmp_path_factory.mktemp("full_scale_study")
    assert (
        study.main(["--smoke", "--circuits", str(folder), "--folds", "2", "--out", str(out)]) == 0
    )
    return out, json.loads((out / "study.json").read_text())


def test_smoke_runs_every_method_seed_and_fold(circuits, smoke):
    _, names = circuits
    out, data = smoke
    assert (out / "full_scale_study.png").stat().st_size > 1000
    assert data["circuits"] == names and data["folds"] == [names[:2], names[2:]]
    runs = data["runs"]
    assert [(r["method"], r["train_seed"]) for r in runs] == [
        ("dr", 0),
        ("dr", 1),
        ("learnability", 0),
        ("learnability", 1),
        ("real", 0),
        ("real", 1),
    ]
    assert {r["history"][-1]["env_steps"] for r in runs} == {data["env_steps_per_run"]} == {128}
    for r in runs:
        m = r["circuits"]
        held = names if r["method"] != "real" else data["folds"][r["train_seed"]]
        assert r["held_out"] == held and list(m["per_circuit"]) == held  # never trained on
        assert m["episodes"] == len(held) and m["episode_steps"] == 20
        assert all(m["valid"])  # every circuit at its own size
        for k in ("lap_rate", "crash_rate"):
            assert 0.0 <= m[k] <= 1.0
        assert math.isfinite(m["mean_progress"])
        for c in m["per_circuit"].values():
            assert c["par"] is not None and 40.0 < c["par"] < 300.0  # a GT lap, s
    table = (out / "table.md").read_text()
    for method in study.METHODS:
        assert f"| {method} |" in table
    for n in names:
        assert f"| {n} |" in table


def test_folds_cover_every_circuit_once():
    names = [f"c{i}" for i in range(10)]
    f = study.folds(names, 5)
    assert [len(x) for x in f] == [2] * 5 and sum(f, []) == names
    assert [len(x) for x in study.folds(names[:7], 3)] == [3, 2, 2]


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--folds", "1"], "--folds must be in"),
        (["--train-seconds", "0"], "--train-seconds must be > 0"),
        (["--eval-pace", "1.5"], "--eval-pace must be in"),
        (["--num-envs", "0"], "--num-envs must be >= 1"),
        (["--train-seeds", "1", "1"], "--train-seeds must be distinct"),
    ],
)
def test_refusals(circuits, argv, match, capsys):
    folder, _ = circuits
    with pytest.raises(SystemExit):
        study.parse(["--circuits", str(folder), "--folds", "2", *argv])
    assert match in capsys.readouterr().err


def test_a_folder_without_circuits_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        study.parse(["--circuits", str(tmp_path)])
    assert "no *.csv file there" in capsys.readouterr().err
