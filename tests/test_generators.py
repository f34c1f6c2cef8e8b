"""TrackGenerator, the engine side: epochs, masks, buffers, params, seeds and capture.

The checks every built-in sampler must pass (determinism within and across processes, seeds
and epochs, masked regeneration, capture, yield, shape) are in tests/pipeline/test_samplers.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import (
    CaptureError,
    FailBit,
    GateGenConfig,
    GateGenerator,
    PerEnvSeededRNG,
    TrackGenConfig,
    TrackGenerator,
)
from track_gen.pipeline import Registry, build, presets

from .oracles.loops import (
    HostSampler,
    assert_bitwise_equal,
    assert_refuses_capture,
    env_rows,
    track_arrays,
)
from .oracles.loops import sampler_generator as make

E = 8


def test_result_is_same_instance_and_clone_detaches(device):
    gen = make("polar", device)
    t1 = gen.generate()
    ptr = t1.center.ptr
    saved = t1.clone()
    before = saved.center.numpy().copy()
    t2 = gen.generate(advance=True)
    assert t2 is t1 is gen.result and t2.center.ptr == ptr
    np.testing.assert_array_equal(saved.center.numpy(), before)
    assert saved.center.ptr != ptr
    assert not np.array_equal(t2.center.numpy(), before, equal_nan=True)


def test_fresh_generator_has_no_course(device):
    gen = make("polar", device)
    r = gen.result
    assert np.all(r.generation.numpy() == -1) and np.all(r.valid.numpy() == 0)
    assert np.isnan(r.center.numpy()).all()


def test_all_zero_mask_is_exact_noop(device):
    gen = make("bezier", device)
    gen.generate()
    before = track_arrays(gen.result)
    epochs = gen.seeds.epochs.numpy().copy()
    gen.generate(advance=True, mask=gen.inputs["regen_mask"])
    assert_bitwise_equal(before, track_arrays(gen.result))
    np.testing.assert_array_equal(gen.seeds.epochs.numpy(), epochs)


def test_masked_without_advance_uses_new_seeds_only_for_masked(device):
    rng = PerEnvSeededRNG(0, E, device)
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device=device), rng)
    gen.generate()
    before = track_arrays(gen.result)
    rng.set_seeds_warp(1000)  # new seeds for every env ...
    m = np.zeros(E, np.int32)
    m[2] = 1
    gen.inputs["regen_mask"].assign(m)
    gen.generate(mask=gen.inputs["regen_mask"])  # ... but only env 2 takes its new seed
    after = track_arrays(gen.result)
    n_max = gen.layout.N_max
    a0, b0 = env_rows(before, 0, n_max), env_rows(after, 0, n_max)
    a2, b2 = env_rows(before, 2, n_max), env_rows(after, 2, n_max)
    assert b0["center"].tobytes() == a0["center"].tobytes()
    assert b2["center"].tobytes() != a2["center"].tobytes()
    assert after["generation"][2] == 0  # same epoch: generation is the epoch, not a counter


def test_generate_with_seeds_resets_epochs(device):
    gen = make("polar", device, seeds=0)
    gen.generate(advance=True)
    gen.generate(seeds=50)
    np.testing.assert_array_equal(gen.seeds.epochs.numpy(), 0)
    np.testing.assert_array_equal(gen.result.generation.numpy(), 0)
    fresh = make("polar", device, seeds=50).generate()
    assert fresh.center.numpy().tobytes() == gen.result.center.numpy().tobytes()


def test_generate_with_seeds_refuses_bound_array(device):
    user = wp.array(np.arange(E, dtype=np.int32), device=device)
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device=device), seeds=user)
    with pytest.raises(RuntimeError, match="your own array"):
        gen.generate(seeds=3)


@pytest.mark.parametrize(
    "bad, err, match",
    [
        (lambda d: np.zeros(E, np.int32), TypeError, "wp.array"),
        (lambda d: wp.zeros(E, dtype=wp.float32, device=d), TypeError, "int32"),
        (lambda d: wp.zeros(E + 1, dtype=wp.int32, device=d), ValueError, rf"\[{E}\]"),
        (lambda d: wp.zeros((E, 2), dtype=wp.int32, device=d), ValueError, "shape"),
        (lambda d: wp.zeros(2 * E, dtype=wp.int32, device=d)[::2], ValueError, "contiguous"),
    ],
)
def test_mask_validation_before_launch(device, bad, err, match):
    gen = make("polar", device)
    gen.generate()
    before = track_arrays(gen.result)
    epochs = gen.seeds.epochs.numpy().copy()
    with pytest.raises(err, match=match):
        gen.generate(advance=True, mask=bad(device))
    assert_bitwise_equal(before, track_arrays(gen.result))
    np.testing.assert_array_equal(gen.seeds.epochs.numpy(), epochs)


def test_advance_must_be_bool(device):
    with pytest.raises(TypeError, match="advance"):
        make("polar", device).generate(advance=1)


def test_params_are_device_arrays_seen_next_generation(device):
    gen = make("bezier", device)
    assert set(gen.params) >= {
        "bezier.rad",
        "bezier.scale",
        "relax.sep_relax",
        "validate.turning_tol",
    }
    a = gen.generate().length.numpy().copy()
    arr = gen.params["bezier.scale"]
    ptr = arr.ptr
    gen.params["bezier.scale"] = 2.0
    assert gen.params["bezier.scale"].ptr == ptr
    b = gen.generate().length.numpy()
    np.testing.assert_allclose(b / a, 2.0, rtol=0.05)
    per_env = np.linspace(1.0, 1.5, E)
    gen.params["bezier.scale"] = per_env
    np.testing.assert_allclose(gen.params["bezier.scale"].numpy(), per_env, rtol=1e-6)
    with pytest.raises(ValueError, match=r"bezier.scale.*>= 1e-06"):
        gen.params["bezier.scale"] = 0.0
    with pytest.raises(ValueError, match="bezier.rad"):
        gen.params["bezier.rad"] = np.full(E, 5.0)
    with pytest.raises(KeyError, match="no dynamic parameter"):
        gen.params["bezier.nope"] = 1.0


def test_both_spellings_and_presets(device):
    cfg = TrackGenConfig(generator="polar", num_envs=E, device=device)
    rng = PerEnvSeededRNG(seeds=42, num_envs=E, device=device)
    a = TrackGenerator(cfg, rng).generate().center.numpy().copy()
    b = (
        TrackGenerator(presets.track(generator="polar", num_envs=E, device=device), seeds=42)
        .generate()
        .center.numpy()
    )
    c = build(presets.track(generator="polar", num_envs=E, device=device), seeds=42)
    assert a.tobytes() == b.tobytes() == c.generate().center.numpy().tobytes()
    assert TrackGenerator(cfg, rng).rng is rng
    with pytest.raises(TypeError, match="either"):
        TrackGenerator(cfg, rng, seeds=1)
    with pytest.raises(TypeError, match="TrackGenConfig or a PipelineSpec"):
        TrackGenerator({"num_envs": 4})
    with pytest.raises(ValueError, match="registered sampler"):
        TrackGenerator(TrackGenConfig(generator="nope", device=device))
    with pytest.raises(ValueError, match=r"TrackGenConfig.device = 'cuda:7' .*cpu"):
        TrackGenerator(TrackGenConfig(device="cuda:7"))


def test_yield_bits_are_counted(device):
    # a track much longer than N_max beads can hold is TRUNCATED and invalid
    gen = make("polar", device, N_max=16)
    t = gen.generate()
    fm = t.fail_mask.numpy()
    assert np.all(fm & FailBit.TRUNCATED) and np.all(t.valid.numpy() == 0)
    assert np.all(t.count.numpy() == 16)


def test_construction_inside_capture_raises(device):
    make("polar", device).generate()  # load modules first
    with wp.ScopedCapture(device=device):
        with pytest.raises(CaptureError, match="capture"):
            make("polar", device)


def test_recorded_generation_replays_like_eager(device):
    gen = make("bezier", device, seeds=9)
    gen.generate()
    mask = gen.inputs["regen_mask"]
    with wp.ScopedCapture(device=device) as cap:
        gen.generate(advance=True, mask=mask)
    eager = make("bezier", device, seeds=9)
    eager.generate()
    m = np.zeros(E, np.int32)
    m[[0, 5]] = 1
    n_max = gen.layout.N_max
    for _ in range(2):
        mask.assign(m)
        eager.inputs["regen_mask"].assign(m)
        gen.generate()
        eager.generate()
        # poison the masked envs' rows: a replay that did not recompute them cannot pass
        poisoned = gen.result.center.numpy().copy().reshape(E, n_max, 3)
        poisoned[m != 0] = 7.0
        gen.result.center.assign(poisoned.reshape(-1, 3))
        wp.capture_launch(cap.graph)
        eager.generate(advance=True, mask=eager.inputs["regen_mask"])
        assert_bitwise_equal(track_arrays(eager.result), track_arrays(gen.result))


def test_not_capturable_stage_refuses_capture(device):
    reg = Registry()
    reg.register("test.host", HostSampler, capturable=False)
    gen = TrackGenerator(
        TrackGenConfig(generator="test.host", num_envs=2, device=device), registry=reg
    )
    assert_refuses_capture(gen, "test.host", device)


def test_track_and_gate_generators_share_a_base_and_neither_is_the_other():
    from track_gen.generators import GeneratorBase

    gates = GateGenerator(GateGenConfig(num_envs=2, device="cpu"))
    track = TrackGenerator(TrackGenConfig(num_envs=2, device="cpu"))
    assert isinstance(gates, GeneratorBase) and isinstance(track, GeneratorBase)
    assert not isinstance(gates, TrackGenerator) and not isinstance(track, GateGenerator)
