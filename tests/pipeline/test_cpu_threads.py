"""cpu_threads: contiguous env ranges on their own CPU threads, bitwise identical to one
thread for every count (tracks and gates, every sampler, both layouts, masks, real circuits,
mixes, inputs, randomizers), plugins, capture and the field's checks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.config import TRACK_GENERATORS
from track_gen.engine.threads import (
    MIN_ENVS_PER_THREAD,
    MIN_GATE_ENVS_PER_THREAD,
    available_cores,
    cpu_threads_values,
    env_ranges,
    resolve_cpu_threads,
)
from track_gen.io import read_tum, tracks_spec
from track_gen.pipeline import PipelineSpec, Registry, Stage, StageSpec, build, presets

from ..io import CIRCUITS, write_csv
from ..support.strategies import GATE_SAMPLERS, METRE_SAMPLERS, sampler_config

E = 67  # splits unevenly in 2 and 3 ranges
THREADS = (1, 2, 3)


def _rows(result) -> dict[str, np.ndarray]:
    return {
        f.name: getattr(result, f.name).numpy().copy()
        for f in dataclasses.fields(result)
        if isinstance(getattr(result, f.name), wp.array)
    }


def _run(gen) -> list[dict[str, np.ndarray]]:
    """Full, advanced and masked regenerations; every result's arrays after each."""
    out = [_rows(gen.generate())]
    out.append(_rows(gen.generate(advance=True)))
    mask = gen.inputs["regen_mask"]
    mask.assign((np.arange(gen.num_envs) % 3 == 1).astype(np.int32))
    out.append(_rows(gen.generate(advance=True, mask=mask)))
    out.append(_rows(gen.generate(advance=True, mask=mask)))
    return out


def _assert_same(runs) -> None:
    first = runs[0]
    for other in runs[1:]:
        for a, b in zip(first, other, strict=True):
            for name in a:
                assert np.array_equal(a[name], b[name], equal_nan=True), name


def _per_thread(make) -> list:
    runs = []
    for t in THREADS:
        gen = make(t)
        assert gen.cpu_threads == t
        runs.append(_run(gen))
    return runs


@pytest.mark.parametrize("layout", ["per_env", "per_item"])
@pytest.mark.parametrize("generator", TRACK_GENERATORS)
def test_tracks_are_bitwise_identical_for_every_thread_count(generator, layout):
    n = 7 if generator == "repulsive" else E
    num_points = 64 if generator == "repulsive" else 256

    def make(t):
        fields = dict(device="cpu", kernel_layout=layout, cpu_threads=t)
        if generator not in METRE_SAMPLERS:  # metres: the preset's resolution
            fields["num_points"] = num_points
        return TrackGenerator(sampler_config(generator, num_envs=n, **fields), seeds=11)

    _assert_same(_per_thread(make))


@pytest.mark.parametrize("generator", GATE_SAMPLERS)
def test_gates_are_bitwise_identical_for_every_thread_count(generator):
    n = 7 if generator == "repulsive" else E

    def make(t):
        cfg = GateGenConfig(
            num_envs=n, device="cpu", generator=generator, gate_width=0.1, cpu_threads=t
        )
        return GateGenerator(cfg, seeds=3)

    _assert_same(_per_thread(make))


def test_mixes_randomizers_and_widths_are_identical_for_every_thread_count():
    def make(t):
        spec = presets.track_mix(
            {"bezier": 2, "polar": 1, "hull": 1},
            num_envs=E,
            device="cpu",
            width_variation=0.3,
            cpu_threads=t,
        ).with_randomize({"polar.radial_jitter": (0.0, 0.2)})
        return TrackGenerator(spec, seeds=5)

    runs = _per_thread(make)
    _assert_same(runs)


def test_real_circuits_keep_their_env_assignment_on_every_thread(tmp_path):
    tracks = [
        read_tum(write_csv(tmp_path / f"{n}.csv", *CIRCUITS[n](), fmt="{:.3f}"))
        for n in ("oval", "variable", "sample")
    ]
    for assign in ("env", "draw"):

        def make(t, assign=assign):
            spec = tracks_spec(tracks, num_envs=8, device="cpu", assign=assign, cpu_threads=t)
            return TrackGenerator(spec, seeds=0)

        runs = _per_thread(make)
        _assert_same(runs)
        if assign == "env":  # env e drives tracks[e % 3] on every range
            lengths = runs[-1][0]["length"]
            assert np.array_equal(lengths[:3], lengths[3:6])


def test_a_centerline_input_is_one_array_for_every_range():
    def make(t):
        spec = presets.track(num_envs=E, device="cpu", generator="centerline", cpu_threads=t)
        gen = TrackGenerator(spec, seeds=0)
        ang = np.linspace(0.0, 2 * np.pi, gen.layout.num_points, endpoint=False)
        r = 0.5 + 0.02 * np.arange(E)[:, None]
        xy = np.stack([r * np.cos(ang), 0.7 * r * np.sin(ang)], -1).astype(np.float32)
        gen.inputs["centerline.xy"].assign(xy.reshape(-1, 2))
        return gen

    runs = _per_thread(make)
    _assert_same(runs)
    assert runs[0][0]["valid"].all()


def test_auto_takes_the_cores_capped_by_the_envs_per_thread():
    cores = available_cores()
    assert resolve_cpu_threads("auto", 10, "cpu") == 1
    big = MIN_ENVS_PER_THREAD * 1000
    assert resolve_cpu_threads("auto", big, "cpu") == cores
    assert resolve_cpu_threads("auto", 2 * MIN_ENVS_PER_THREAD, "cpu") == min(cores, 2)
    assert resolve_cpu_threads(8, 5, "cpu") == 5
    assert resolve_cpu_threads("auto", 2 * MIN_ENVS_PER_THREAD, "cpu", "gates") == 1
    gates = 2 * MIN_GATE_ENVS_PER_THREAD
    assert resolve_cpu_threads("auto", gates, "cpu", "gates") == min(cores, 2)
    assert resolve_cpu_threads(2, 8, "cpu", "gates") == 2
    gen = TrackGenerator(TrackGenConfig(num_envs=8, device="cpu"), seeds=0)
    assert gen.cpu_threads == 1


def test_env_ranges_cover_the_batch_contiguously():
    for n, t in [(67, 2), (67, 3), (10, 10), (1000, 7)]:
        ranges = env_ranges(n, t)
        assert ranges[0][0] == 0 and ranges[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(ranges[:-1], ranges[1:], strict=True))
        sizes = [hi - lo for lo, hi in ranges]
        assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("bad", [0, -1, 1025, "many", 1.5, None, True])
def test_a_bad_cpu_threads_is_refused_naming_the_field(bad):
    err = TypeError if isinstance(bad, (float, type(None), bool)) else ValueError
    with pytest.raises(err, match="cpu_threads"):
        TrackGenConfig(num_envs=4, device="cpu", cpu_threads=bad)


def test_command_line_values_are_checked_against_the_declaration():
    assert cpu_threads_values(["1", "auto", "3"]) == [1, "auto", 3]
    for bad in ("0", "-2", "1025", "many", "1.5"):
        with pytest.raises(ValueError, match="--cpu-threads"):
            cpu_threads_values([bad])


class _OffsetStage(Stage):
    """A plugin process stage that counts every rebuilt env into an [E] diagnostic."""

    def allocate(self, ws):
        self.seen = ws.zeros(ws.layout.num_envs, wp.int32, "acme seen")
        ws.diagnostics["acme.seen"] = self.seen

    def enqueue(self, ws, params):
        wp.launch(_count, ws.layout.num_envs, inputs=[ws.active], outputs=[self.seen])


@wp.kernel
def _count(
    # inputs
    active: wp.array(dtype=wp.int32),
    # outputs
    seen_inout: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] != 0:
        seen_inout[e] = seen_inout[e] + 1


class _PaddedStage(_OffsetStage):
    """A plugin whose scratch is E + 1 elements: not range-safe whatever it declares."""

    def allocate(self, ws):
        super().allocate(ws)
        self.pad = ws.zeros(ws.layout.num_envs + 1, wp.float32, "acme padded")


def _plugin_spec(kind: str, threads: int) -> PipelineSpec:
    cfg = TrackGenConfig(num_envs=E, device="cpu", cpu_threads=threads)
    kinds = ("bezier", "resample", "relax", "inflate", kind, "validate")
    return PipelineSpec(cfg, tuple(StageSpec(k) for k in kinds))


def test_plugins_run_on_threads_only_when_they_say_they_are_range_safe():
    reg = Registry()
    reg.register("acme.count", _OffsetStage)
    assert build(_plugin_spec("acme.count", 2), reg, seeds=0).cpu_threads == 1
    reg.register("acme.count", _OffsetStage, range_safe=True, replace=True)
    gen = build(_plugin_spec("acme.count", 2), reg, seeds=0)
    assert gen.cpu_threads == 2
    gen.generate()
    gen.generate(advance=True)
    assert (gen.diagnostics["acme.seen"].numpy() == 2).all()  # the batch's array, every env
    reg.register("acme.padded", _PaddedStage, range_safe=True)
    assert build(_plugin_spec("acme.padded", 2), reg, seeds=0).cpu_threads == 1
    with pytest.raises(TypeError, match="range_safe"):
        reg.register("acme.other", _OffsetStage, range_safe="yes")


class _FailingStage(_OffsetStage):
    """Raises in the range that does not start at env 0."""

    def enqueue(self, ws, params):
        if ws.env_lo > 0:
            raise RuntimeError("acme: range failed")
        super().enqueue(ws, params)


def test_a_range_that_raises_leaves_the_result_seeds_and_epochs_unchanged():
    reg = Registry()
    reg.register("acme.fail", _FailingStage, range_safe=True)
    gen = build(_plugin_spec("acme.fail", 2), reg, seeds=0)
    assert gen.cpu_threads == 2
    before = _rows(gen.result)
    epochs = gen.seeds.epochs.numpy().copy()
    for _ in range(2):  # the first call runs the ranges one after the other, then threads
        with pytest.raises(RuntimeError, match="range failed"):
            gen.generate(advance=True)
        after = _rows(gen.result)
        for name in before:
            assert np.array_equal(before[name], after[name], equal_nan=True), name
        assert np.array_equal(gen.seeds.epochs.numpy(), epochs)


def test_a_cpu_capture_records_the_whole_batch_and_replays_the_threaded_bytes():
    """Inside a capture the regeneration records the whole batch's launches (a recorded
    graph replays on one thread); every replay rewrites the poisoned rows with the bytes of
    the threaded eager regeneration."""
    cfg = TrackGenConfig(num_envs=E, device="cpu", cpu_threads=2)
    gen = TrackGenerator(cfg, seeds=9)
    eager = TrackGenerator(cfg, seeds=9)
    assert gen.cpu_threads == eager.cpu_threads == 2
    gen.generate()
    eager.generate()
    with wp.ScopedCapture(device="cpu") as cap:
        gen.generate(advance=True)
    rows = E * gen.layout.N_max
    for _ in range(2):
        for field in ("center", "outer", "inner", "tangent", "normal"):
            getattr(gen.result, field).assign(np.full((rows, 3), 7.0, np.float32))
        gen.result.arclen.assign(np.full(rows, 7.0, np.float32))
        wp.capture_launch(cap.graph)
        want = _rows(eager.generate(advance=True))
        for name, a in _rows(gen.result).items():
            assert np.array_equal(a, want[name], equal_nan=True), name
