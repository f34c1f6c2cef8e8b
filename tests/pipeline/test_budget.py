"""The allocation budget: a construction is counted before its first allocation, the count
equals what it then allocates, and a refusal (by the budget or by the device) is the
library's ValueError."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.core import budget as stage  # the allocation budget (memory_budget is patched)
from track_gen.io import RealTrack, tracks_spec
from track_gen.pipeline import presets

E = 5


def _circle(n: int = 200, r: float = 60.0) -> RealTrack:
    t = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    xy = np.stack([r * np.cos(t), r * np.sin(t)], axis=1)
    return RealTrack(name="circle", xy=xy, width_left=np.full(n, 5.0), width_right=np.full(n, 5.0))


SOURCES = {
    "bezier": lambda d: TrackGenConfig(num_envs=E, device=d, generator="bezier"),
    "repulsive": lambda d: TrackGenConfig(num_envs=E, device=d, generator="repulsive"),
    "elevated": lambda d: TrackGenConfig(num_envs=E, device=d, z_profile="noise"),
    "widths": lambda d: TrackGenConfig(num_envs=E, device=d, width_variation=0.2),
    "mix": lambda d: presets.track_mix({"bezier": 1, "polar": 2}, num_envs=E, device=d),
    "gates": lambda d: GateGenConfig(num_envs=E, device=d, generator="hull"),
    "real": lambda d: tracks_spec([_circle()], num_envs=E, device=d),
}


def _build(source):
    if isinstance(source, GateGenConfig):
        return GateGenerator(source)
    return TrackGenerator(source)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_plan_counts_what_the_construction_allocates(device, name):
    gen = _build(SOURCES[name](device))
    budget = gen._ws.budget  # the program's own budget: what it planned and what it took
    assert budget.planned == budget.used > 0


def _record_allocations(monkeypatch) -> list[int]:
    sizes: list[int] = []
    for fn in ("zeros", "full"):
        original = getattr(wp, fn)

        def record(shape, *args, _original=original, **kwargs):
            sizes.append(int(np.prod(shape)))
            return _original(shape, *args, **kwargs)

        monkeypatch.setattr(stage.wp, fn, record)
    return sizes


def test_a_batch_beyond_the_memory_is_refused_before_its_first_allocation(monkeypatch):
    """The limit lies past each array but below the whole: before the plan, the first arrays
    were allocated and the refusal came part-way (or, with less memory free than the budget
    assumed, from Warp itself)."""
    num_envs = 4096
    cfg = TrackGenConfig(num_envs=num_envs, device="cpu")
    monkeypatch.setattr(stage, "memory_budget", lambda device: 8 * 2**20)
    sizes = _record_allocations(monkeypatch)
    with pytest.raises(ValueError, match=r"would bring this generator's buffers to .* GiB"):
        TrackGenerator(cfg)
    # only the plan's one- and two-env probes allocated, not the first array of the batch
    # (the result's E * N_max rows)
    assert sizes and max(sizes) < num_envs * cfg.N_max


def test_a_gate_batch_too_large_for_the_device_is_refused_at_once():
    with pytest.raises(ValueError, match="lower num_envs"):
        GateGenerator(GateGenConfig(num_envs=16_777_216, device="cpu"))


def test_an_allocation_the_device_refuses_is_the_librarys_error(monkeypatch):
    original = wp.zeros

    def refuse(shape, *args, **kwargs):
        if int(np.prod(shape)) >= 1000:
            raise RuntimeError("Failed to allocate 4000 bytes on device 'cpu'")
        return original(shape, *args, **kwargs)

    monkeypatch.setattr(stage.wp, "zeros", refuse)
    with pytest.raises(ValueError, match=r"cpu refused the allocation .*lower num_envs"):
        TrackGenerator(TrackGenConfig(num_envs=64, device="cpu"))


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_plan_program_counts_what_the_program_allocates_without_building_it(device, name):
    from track_gen.engine.program import plan_program
    from track_gen.generators import GateGenerator as Gates
    from track_gen.generators import TrackGenerator as Tracks

    source = SOURCES[name](device)
    spec = source
    if isinstance(source, (TrackGenConfig, GateGenConfig)):
        spec = (Gates if isinstance(source, GateGenConfig) else Tracks)._pipeline(source)
    planned = plan_program(spec)
    assert planned == _build(source)._ws.budget.used > 0


def test_plan_program_refuses_a_batch_too_large_for_the_device(monkeypatch):
    from track_gen.engine.program import plan_program

    num_envs = 16_777_216
    sizes = _record_allocations(monkeypatch)
    with pytest.raises(ValueError, match="lower num_envs"):
        plan_program(presets.gates(num_envs=num_envs, device="cpu"))
    assert sizes and max(sizes) < num_envs  # the one- and two-env probes only


def test_a_shape_tuple_is_counted_as_its_elements(device):
    """``budget.zeros((E, D), ...)`` / ``budget.full((E, D), ...)``: an array of that shape,
    counted as ``E * D`` elements (each side at least 1), refused past int32 indexing."""
    budget = stage.AllocationBudget(device)
    a = budget.zeros((3, 4), wp.float32, "a")
    b = budget.full((2, 0), 7, wp.int32, "b")
    assert a.shape == (3, 4) and b.shape == (2, 1)
    np.testing.assert_array_equal(b.numpy(), 7)
    assert [(w, n) for w, n, _ in budget.taken] == [("a", 12), ("b", 2)]
    assert budget.used == 12 * 4 + 2 * 4
    with pytest.raises(ValueError, match="int32"):
        budget.zeros((2**16, 2**16), wp.int8, "too many")
