"""benchmarks/course.py runs and prints its rows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_course_benchmark_smoke():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "course.py"),
            "--device",
            "cpu",
            "--E",
            "8",
            "--calls",
            "1",
            "--cpu-threads",
            "1",
            "2",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    for word in ("segments", "sdf", "bake", "masked", "full"):
        assert word in out.stdout
    threads = [line for line in out.stdout.splitlines() if "by cpu_threads" in line]
    assert len(threads) == 2 and all("1(1)" in t and "2(2)" in t for t in threads)
