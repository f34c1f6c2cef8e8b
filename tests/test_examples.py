"""Every example runs and checks itself."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "batched_loop.py": ["--episodes", "2", "--num-envs", "8"],
    "masked_regeneration.py": ["--steps", "6", "--num-envs", "8"],
    "capture_loop.py": ["--steps", "5", "--num-envs", "8"],
    "custom_generator.py": ["--num-envs", "8"],
    "custom_component.py": ["--steps", "12", "--num-envs", "16"],
    "custom_sensor.py": ["--steps", "30", "--num-envs", "8"],
    "host_autoreset.py": ["--steps", "150", "--num-envs", "16"],
    "drone_gates_loop.py": ["--steps", "400", "--num-envs", "16"],
    "drone_par.py": ["--num-envs", "8"],
    "custom_env.py": ["--steps", "120", "--num-envs", "16"],
    "ingraph_autoreset.py": ["--steps", "40", "--num-envs", "16"],
    "level_replay.py": ["--steps", "40", "--num-envs", "16"],
    # enough PPO to lap: the held-out lap times as % of par are then measured numbers
    "train_ppo.py": ["--iterations", "25", "--num-envs", "32", "--eval-envs", "8"],
    # a smoke run: every step of the script (training, held-out courses, the published paths)
    "train_drone.py": ["--iterations", "2", "--num-envs", "16", "--eval-envs", "4"],
    "torchrun_seeding.py": ["--num-envs", "4", "--steps", "60"],
    "newton_car.py": ["--check"],
}
#: Examples that need an optional extra, and the module that tells it is installed.
NEEDS = {"newton_car.py": "newton"}
#: What an example's output must also hold (a measured number, not NaN).
PRINTS = {"train_ppo.py": r"mean lap time \d+\.\d % of par over [1-9]\d* timed laps"}


def test_every_example_is_covered():
    scripts = {p.name for p in (ROOT / "examples").glob("*.py")} - {"__init__.py"}
    assert scripts == set(CASES)


@pytest.mark.parametrize(
    "name",
    [  # the Newton example on the Newton tests' worker (tests/conftest.py says why)
        pytest.param(n, marks=pytest.mark.newton) if NEEDS.get(n) == "newton" else n
        for n in sorted(CASES)
    ],
)
def test_example_runs(name, device):
    if name in NEEDS and importlib.util.find_spec(NEEDS[name]) is None:
        pytest.skip(f"{NEEDS[name]} is not installed: pip install 'track_gen[{NEEDS[name]}]'")
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), "--device", device, *CASES[name]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok:" in out.stdout
    if name in PRINTS:
        assert re.search(PRINTS[name], out.stdout), out.stdout
