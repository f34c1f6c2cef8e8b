"""The per-stage timer: Program.time_stages() -> StageTimer."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.core.errors import CaptureError
from track_gen.pipeline import StageTimer

E = 8


def _track_bytes(gen) -> bytes:
    t = gen.result
    return b"".join(
        getattr(t, f).numpy().tobytes()
        for f in ("center", "outer", "inner", "arclen", "count", "valid")
    )


def test_parts_and_times_of_a_track_generation():
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device="cpu"), seeds=3)
    assert gen.stage_timer is None
    timer = gen.time_stages()
    assert isinstance(timer, StageTimer) and gen.stage_timer is timer
    assert timer.parts == ("setup", "polar", "resample", "relax", "inflate", "validate", "commit")
    assert all(math.isnan(v) for v in timer.read().values())  # nothing timed yet
    t0 = time.perf_counter()
    gen.generate(advance=True)
    wall = (time.perf_counter() - t0) * 1e3
    ms = timer.read()
    assert list(ms) == list(timer.parts)
    assert all(math.isfinite(v) and v >= 0.0 for v in ms.values())
    assert sum(ms.values()) <= wall
    assert gen.time_stages() is timer  # enabling twice keeps the timer


def test_gate_parts():
    gen = GateGenerator(
        GateGenConfig(generator="bezier", num_envs=E, device="cpu", gate_width=0.1), seeds=1
    )
    timer = gen.time_stages()
    gen.generate()
    assert timer.parts[0] == "setup" and timer.parts[-1] == "commit"
    assert timer.parts[1] == "bezier" and "gate_anchors" in timer.parts
    assert all(v >= 0.0 for v in timer.read().values())


def test_timing_changes_no_output_byte_and_turns_off():
    cfg = TrackGenConfig(generator="bezier", num_envs=E, device="cpu")
    plain = TrackGenerator(cfg, seeds=7)
    timed = TrackGenerator(cfg, seeds=7)
    timed.time_stages()
    mask = timed.inputs["regen_mask"]
    mask.assign(np.array([1, 0] * (E // 2), dtype=np.int32))
    plain.inputs["regen_mask"].assign(mask.numpy())
    for gen in (plain, timed):
        gen.generate()
        gen.generate(advance=True, mask=gen.inputs["regen_mask"])
    assert _track_bytes(plain) == _track_bytes(timed)
    assert timed.time_stages(False) is None and timed.stage_timer is None
    timed.generate(advance=True)  # runs without marks


def test_cpu_recording_reads_nan_and_time_stages_refused_in_capture():
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device="cpu"), seeds=2)
    timer = gen.time_stages()
    with wp.ScopedCapture(device="cpu") as cap:
        gen.enqueue()
        with pytest.raises(CaptureError, match="time_stages"):
            gen.time_stages()
    assert all(math.isnan(v) for v in timer.read().values())  # a recording times nothing
    wp.capture_launch(cap.graph)
    gen.generate()
    assert all(v >= 0.0 for v in timer.read().values())


@pytest.mark.parametrize("bad", [1, "yes", None, 0.0])
def test_enable_must_be_a_bool(bad):
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=2, device="cpu"))
    with pytest.raises(TypeError, match="enable"):
        gen.time_stages(bad)
    assert gen.stage_timer is None
