"""studies/curriculum.py: the ``--smoke`` run end to end (every method, seed and evaluation,
seconds), the PLR signal against a float64 NumPy oracle, and its refusals."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("rsl_rl")
import torch  # noqa: E402

from studies import curriculum as study  # noqa: E402


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("curriculum_study")
    assert study.main(["--smoke", "--out", str(out)]) == 0
    return out, json.loads((out / "study.json").read_text())


def test_smoke_runs_every_method_and_seed(smoke):
    out, data = smoke
    assert (out / "curriculum_study.png").stat().st_size > 1000
    table = (out / "table.md").read_text()
    for method in study.METHODS:
        assert f"| {method} |" in table
    runs = data["runs"]
    assert [(r["method"], r["train_seed"]) for r in runs] == [
        (m, s) for m in study.METHODS for s in (0, 1)
    ]
    steps = {r["history"][-1]["env_steps"] for r in runs}
    assert steps == {data["env_steps_per_run"]} == {16 * 8 * 2}  # equal env steps
    # the suite's circuits, all four driven (the import narrows the hairpin where it is
    # tighter than its road)
    assert data["circuits"] == ["suite-oval", "suite-hairpin", "suite-variable", "suite-sample"]
    assert data["invalid_circuits"] == []
    for r in runs:
        assert (r["curriculum"] is None) == (r["method"] == "dr")
        if r["curriculum"] is not None:
            assert r["curriculum"]["score"] == study.METHODS[r["method"]]
        for where, n in (("held_out", 8), ("circuits", 4)):
            m = r[where]
            assert m["episodes"] == n
            for k in ("lap_rate", "crash_rate"):
                assert 0.0 <= m[k] <= 1.0
            assert m["mean_progress"] is not None and math.isfinite(m["mean_progress"])
            assert m["laps_timed"] <= m["episodes"]
        assert set(r["circuits"]["per_circuit"]) == set(data["circuits"])


def test_smoke_curricula_fill_their_buffers(smoke):
    _, data = smoke
    for r in data["runs"]:
        levels = r["history"][-1]["levels"]
        if r["method"] == "dr":
            assert levels == 0
        else:
            assert 0 < levels <= 8  # the smoke buffer


class _Storage:
    def __init__(self, returns, values, dones):
        t = lambda a: torch.as_tensor(a, dtype=torch.float32)[..., None]  # noqa: E731
        self.returns, self.values, self.dones = t(returns), t(values), t(dones)


def test_positive_advantage_matches_numpy():
    """The PLR signal: per env, the mean of max(GAE, 0) over its current episode's steps
    across rollouts, or over the rollout when the episode has none yet."""
    rng = np.random.default_rng(3)
    T, E = 6, 5
    sig = torch.zeros(E)
    pa = study.PositiveAdvantage.__new__(study.PositiveAdvantage)
    pa.signal = sig
    pa.sum = torch.zeros(E, dtype=torch.float64)
    pa.count = torch.zeros(E, dtype=torch.float64)
    acc = [[] for _ in range(E)]
    for _ in range(3):
        ret, val = rng.normal(size=(T, E)), rng.normal(size=(T, E))
        done = rng.random((T, E)) < 0.3
        done[-1, 0] = True  # env 0 ends on the rollout's last step
        pa.storage = _Storage(ret, val, done)
        pa()
        adv = np.maximum(ret.astype(np.float32) - val.astype(np.float32), 0.0).astype(np.float64)
        for e in range(E):
            for t in range(T):
                acc[e].append(adv[t, e])
                if done[t, e]:
                    acc[e] = []
            want = np.mean(acc[e]) if acc[e] else adv[:, e].mean()
            assert sig[e].item() == pytest.approx(want, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--iterations", "0"], "--iterations must be >= 1, got 0"),
        (["--num-envs", "-3"], "--num-envs must be >= 1, got -3"),
        (["--circuit-steps", "0"], "--circuit-steps must be >= 1, got 0"),
        (["--train-seeds", "1", "1"], "--train-seeds must be distinct"),
        (["--methods", "nope"], "invalid choice: 'nope'"),
    ],
)
def test_bad_arguments_are_refused(argv, needle, capsys, tmp_path):
    with pytest.raises(SystemExit) as err:
        study.parse([*argv, "--out", str(tmp_path)])
    assert err.value.code == 2
    assert needle in capsys.readouterr().err


def test_empty_circuit_folder_is_refused(capsys, tmp_path):
    with pytest.raises(SystemExit):
        study.parse(["--circuits", str(tmp_path)])
    assert "no *.csv file there" in capsys.readouterr().err
