"""The ``gate_table`` sampler (given gate courses) and what it changes in ``gate_frames``
(gates facing the given directions) and ``gate_validate`` (``check_bars``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import warp as wp

from track_gen import FailBit, GateGenConfig, GateGenerator, io
from track_gen.pipeline import PipelineSpec, StageSpec, presets

PATHS = [
    io.WaypointPath("a", [0, 0, 1], [[6, 0, 1], [6, 6, 2], [0, 6, 1]], [0, 0, 1]),
    io.WaypointPath("b", [0, 0, 1], [[4, 1, 1], [8, 0, 2], [8, 8, 3], [0, 8, 1]], [-2, 4, 1]),
]


def _spec(num_envs=5, device="cpu", **fields):
    return io.gates_spec(PATHS, num_envs=num_envs, device=device, gate_width=1.0, **fields)


def _bytes(seq):
    return {k: seq.host(k).tobytes() for k in seq._row_arrays + seq._env_arrays}


def test_env_assignment_masks_and_generation(device):
    gen = GateGenerator(_spec(device=device))
    seq = gen.generate()
    assert seq.count.numpy().tolist() == [3, 5, 3, 5, 3]
    assert (seq.generation.numpy() == 0).all() and (seq.valid.numpy() == 1).all()
    first = _bytes(seq)
    # a masked regeneration rebuilds the same course for the masked envs; others untouched
    gen.generate(mask=wp.array([0, 1, 0, 0, 1], dtype=wp.int32, device=device), advance=True)
    assert seq.generation.numpy().tolist() == [0, 1, 0, 0, 1]
    again = _bytes(seq)
    assert {k: v for k, v in again.items() if k != "generation"} == {
        k: v for k, v in first.items() if k != "generation"
    }


def test_the_same_bits_for_any_thread_count():
    one = GateGenerator(_spec(num_envs=8)).generate()
    three = GateGenerator(_spec(num_envs=8, cpu_threads=3))
    assert len(three.env_ranges) == 3
    assert _bytes(one) == _bytes(three.generate())


def test_graph_replay_equals_eager(device):
    gen = GateGenerator(_spec(device=device, assign="draw"), seeds=4)
    gen.generate()
    eager = _bytes(gen.result)
    with wp.ScopedCapture(device=device) as cap:
        gen.generate()
    for k in ("position", "forward", "left", "right"):
        getattr(gen.result, k).fill_(wp.vec3f(9.0, 9.0, 9.0))
    wp.capture_launch(cap.graph)
    assert _bytes(gen.result) == eager


def test_check_bars_off_skips_only_the_bar_test():
    base = presets.gates(num_envs=32, device="cpu", gate_width=0.4)
    on = GateGenerator(base, seeds=2).generate()
    cfg = dataclasses.replace(base.config, gate_check_bars=False)
    off = GateGenerator(dataclasses.replace(base, config=cfg), seeds=2).generate()
    bars = int(FailBit.CROSSING_BARS)
    assert (on.fail_mask.numpy() & bars).any()  # this width crosses some bars
    assert not (off.fail_mask.numpy() & bars).any()
    assert np.array_equal(on.fail_mask.numpy() & ~bars, off.fail_mask.numpy())
    assert np.array_equal(on.host("forward"), off.host("forward"), equal_nan=True)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({}, "option 'gates' must be"),
        ({"gates": np.zeros((2, 3, 5), np.float32), "counts": np.array([3, 3])}, "option 'gates'"),
        ({"gates": np.zeros((2, 1, 6), np.float32), "counts": np.array([1, 1])}, "G in"),
        ({"gates": np.zeros((2, 3, 6), np.float32), "counts": np.array([3])}, "'counts'"),
        ({"gates": np.zeros((2, 3, 6), np.float32), "counts": np.array([1, 3])}, "'counts'"),
        ({"gates": np.full((1, 3, 6), np.nan, np.float32), "counts": np.array([3])}, "NaN"),
        (
            {"gates": np.zeros((1, 3, 6), np.float32), "counts": np.array([3]), "assign": "x"},
            "assign",
        ),
    ],
)
def test_bad_tables_refused(options, match):
    config = GateGenConfig(num_envs=2, device="cpu", generator="gate_table", max_gates=12)
    stages = (
        StageSpec("gate_table", options=options),
        StageSpec("gate_frames"),
        StageSpec("gate_validate"),
    )
    with pytest.raises(ValueError, match=match):
        GateGenerator(PipelineSpec(config=config, stages=stages, family="gates"))
