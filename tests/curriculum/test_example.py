"""examples/level_replay.py runs and checks itself (replay equals eager bitwise, levels
replayed, every course rebuilt from its level seed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--steps", "40", "--num-envs", "16"]


def test_level_replay_example_runs(device):
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "level_replay.py"), "--device", device, *ARGS],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok:" in out.stdout
