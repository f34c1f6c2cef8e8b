"""benchmarks/cuda_check.py, the script the first GPU session runs, passes its CPU dry run
(every section, the per-step sensors, the min_time pars and the envs included)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_cuda_check_dry_run_on_the_cpu():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(ROOT / "benchmarks" / "cuda_check.py")]
    cmd += ["--device", "cpu", "--E", "16", "--calls", "1"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "bitwise ok" in out.stdout
    lines = out.stdout.splitlines()
    for kind in ("track", "gates"):  # the sensors section ran its replay checks on both
        assert any(x.startswith(f"sensors {kind} ") and x.endswith(" ok") for x in lines), kind
    for name in ("lidar", "lookahead", "cones", "raster", "next_gates"):
        assert any(x.startswith(f"sensor {name} ") for x in lines), name
    # the min_time section: the course graph, the masked re-plan and the plan() replay
    assert any(x.startswith("min_time course ") and x.endswith(" ok") for x in lines)
    # the envs section: RaceEnv (both cars) and the drone, recorded == eager
    for name in ("race", "race_single_track", "drone"):
        assert any(x.startswith(f"env {name} ") and x.endswith(" ok") for x in lines), name
