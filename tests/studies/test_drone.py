"""studies/drone.py: the ``--smoke`` run end to end (every seed, the held-out courses and the
published paths, the table, the curves and the recorded trajectories, seconds) and its
refusals; docs/gen_drone_images.py draws the smoke run's trajectories."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rsl_rl")

from studies import drone as study  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("drone_study")
    assert study.main(["--smoke", "--set", "reward_gate=10", "--out", str(out)]) == 0
    return out, json.loads((out / "study.json").read_text())


def test_smoke_runs_every_seed_and_evaluation(smoke):
    out, data = smoke
    assert (out / "drone_study.png").stat().st_size > 1000
    assert [r["seed"] for r in data["runs"]] == [0, 1, 2]
    assert data["set"] == {"reward_gate": 10} and data["reward_gate"] == 10.0
    assert data["progress_reward"] == "gate" and data["init_std"] == 0.3
    table = (out / "table.md").read_text()
    assert "held-out generated" in table
    for r in data["runs"]:
        held = r["held_out"]
        assert held["envs"] + held["invalid"] == 4
        for k in ("gates_passed", "lap_rate", "crash_rate"):
            assert 0.0 <= held[k] <= 1.0
        for name, p in r["paths"].items():
            assert f"path {name}" in table
            assert p["count"] > 0 and 0 <= p["gates"] and math.isfinite(p["par"])
    traj = np.load(out / "trajectories.npz")
    assert traj["held0_gates"].shape[1] == 3 and traj["held0_par"].shape[1] == 3


def test_the_figure_script_draws_the_smoke_run(smoke, tmp_path):
    import importlib.util

    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("gen", ROOT / "docs" / "gen_drone_images.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    png = tmp_path / "fig.png"
    assert gen.main(["--study", str(smoke[0]), "--out", str(png)]) == 0
    assert png.stat().st_size > 1000


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--iterations", "0"], "--iterations must be >= 1, got 0"),
        (["--num-envs", "-3"], "--num-envs must be >= 1, got -3"),
        (["--seeds", "1,1"], "--seeds must be distinct"),
        (["--seeds", "a"], "--seeds must be a comma list of ints"),
        (["--init-std", "0"], "--init-std must be a finite number > 0, got 0.0"),
        (["--set", "reward_gate"], "--set takes FIELD=VALUE with a JSON value"),
        (["--set", "reward_gate=x"], "--set takes FIELD=VALUE with a JSON value"),
    ],
)
def test_bad_arguments_are_refused(argv, needle, capsys, tmp_path):
    with pytest.raises(SystemExit) as err:
        study.main([*argv, "--out", str(tmp_path)])
    assert err.value.code == 2
    assert needle in capsys.readouterr().err
