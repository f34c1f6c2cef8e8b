"""track_gen.distributed: global env ids and seeds per rank (no overlap, independent of the
world size for a fixed global id), course hashes, and the 2-rank torchrun (gloo) example
equal to the single-process batch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import warp as wp

from track_gen.course import Course
from track_gen.distributed import RankLayout, course_hashes
from track_gen.pipeline import presets

ROOT = Path(__file__).resolve().parents[1]


def test_rank_layout_partitions_global_ids():
    for R, E in [(1, 5), (2, 4), (3, 7)]:
        ids = np.concatenate([RankLayout(r, R, E).global_ids for r in range(R)])
        np.testing.assert_array_equal(ids, np.arange(R * E))  # no overlap, no gap
        seeds = np.concatenate([RankLayout(r, R, E).seeds(50) for r in range(R)])
        np.testing.assert_array_equal(seeds, 50 + np.arange(R * E))
        assert seeds.dtype == np.int32
    # a global id's seed does not depend on the world size
    assert RankLayout(1, 2, 4).seeds(9)[1] == RankLayout(0, 1, 8).seeds(9)[5]
    assert RankLayout(2, 4, 2).seeds(9)[1] == RankLayout(0, 1, 8).seeds(9)[5]


def test_rank_layout_refuses_bad_values():
    with pytest.raises(ValueError, match="rank"):
        RankLayout(2, 2, 4)
    with pytest.raises(ValueError, match="world_size"):
        RankLayout(0, 0, 4)
    with pytest.raises(TypeError, match="num_envs"):
        RankLayout(0, 1, 4.0)
    with pytest.raises(ValueError, match="base_seed"):
        RankLayout(1, 2, 4).seeds(2**31 - 5)


def test_from_torch_reads_torchrun_variables(monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "3")
    assert RankLayout.from_torch(4) == RankLayout(1, 3, 4)
    monkeypatch.setenv("RANK", "x")
    with pytest.raises(ValueError, match="RANK"):
        RankLayout.from_torch(4)


def test_rank_courses_equal_the_single_process_batch(device):
    """Courses only: 2 ranks x 3 envs == envs 0..5 of one 6-env generator, bitwise."""

    def hashes(layout):
        course = Course.track(
            presets.track(num_envs=layout.num_envs, device=device),
            checkpoint_spacing=0.6,
            seeds=wp.array(layout.seeds(77), dtype=wp.int32, device=device),
        )
        return course_hashes(course.result)

    whole = hashes(RankLayout(0, 1, 6))
    parts = hashes(RankLayout(0, 2, 3)) + hashes(RankLayout(1, 2, 3))
    assert parts == whole
    assert len(set(whole)) == 6  # different envs, different courses


def test_torchrun_two_ranks_gloo(tmp_path):
    pytest.importorskip("torch.distributed")
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        str(ROOT / "examples" / "torchrun_seeding.py"),
        "--device",
        "cpu",
        "--num-envs",
        "6",
        "--steps",
        "100",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "courses equal, epochs equal" in p.stdout and "cars equal" in p.stdout, p.stdout
