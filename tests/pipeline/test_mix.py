"""Per-env generator mixes (presets.track_mix)."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import TrackGenConfig, TrackGenerator, effective_seed
from track_gen.pipeline import Registry, presets

from ..oracles.loops import HostSampler, assert_refuses_capture

E = 16


def make(device, seeds=0, generators=None, **kw):
    if generators is None:
        generators = {"bezier": 1, "polar": 1}
    spec = presets.track_mix(generators, num_envs=E, device=device, **kw)
    return TrackGenerator(spec, seeds=seeds)


def test_each_env_gets_the_course_of_its_sampler(device):
    gen = make(device, seeds=10)
    gen.generate()
    choice = gen.diagnostics["mix.choice"].numpy().copy()
    assert set(choice) == {0, 1}
    n = gen.layout.N_max
    for k, name in enumerate(["bezier", "polar"]):
        plain = TrackGenerator(
            TrackGenConfig(generator=name, num_envs=E, device=device), seeds=10
        ).generate()
        for e in np.where(choice == k)[0]:
            a = gen.result.center.numpy()[e * n : (e + 1) * n]
            b = plain.center.numpy()[e * n : (e + 1) * n]
            assert a.tobytes() == b.tobytes(), (name, e)


def test_choice_follows_seed_and_epoch(device):
    gen = make(device, seeds=3)
    gen.generate()
    gen.generate(advance=True)
    choice = gen.diagnostics["mix.choice"].numpy().copy()
    seeds = np.array([effective_seed(3 + e, 1) for e in range(E)][::-1], np.int32)
    fresh = make(device, seeds=wp.array(seeds, device=device))
    fresh.generate()
    np.testing.assert_array_equal(fresh.diagnostics["mix.choice"].numpy()[::-1], choice)
    n = gen.layout.N_max
    a = gen.result.center.numpy().reshape(E, n, 3)
    b = fresh.result.center.numpy().reshape(E, n, 3)[::-1]
    assert a.tobytes() == b.tobytes()


def test_weights_shape_the_mix(device):
    gen = TrackGenerator(
        presets.track_mix(
            {"bezier": 9, "polar": 1}, num_envs=200, device=device, relax_enable=False
        ),
        seeds=0,
    )
    gen.generate()
    share = (gen.diagnostics["mix.choice"].numpy() == 0).mean()
    assert 0.8 < share < 0.97


def test_masked_regeneration_leaves_unmasked_envs(device):
    gen = make(device)
    gen.generate()
    before = gen.result.center.numpy().copy()
    choice = gen.diagnostics["mix.choice"].numpy().copy()
    m = np.zeros(E, np.int32)
    m[[2, 9]] = 1
    gen.inputs["regen_mask"].assign(m)
    gen.generate(advance=True, mask=gen.inputs["regen_mask"])
    n = gen.layout.N_max
    after = gen.result.center.numpy()
    for e in range(E):
        same = before[e * n : (e + 1) * n].tobytes() == after[e * n : (e + 1) * n].tobytes()
        assert same == (m[e] == 0), e
    kept = m == 0
    np.testing.assert_array_equal(gen.diagnostics["mix.choice"].numpy()[kept], choice[kept])


def test_refused_mixes():
    with pytest.raises(ValueError, match="'nope' is not a registered sampler; samplers: "):
        make("cpu", generators={"bezier": 1, "nope": 1})
    with pytest.raises(ValueError, match="> 0"):
        make("cpu", generators={"bezier": 0, "polar": 1})
    with pytest.raises(ValueError, match="empty"):
        make("cpu", generators={})
    with pytest.raises(ValueError, match="not a sampler that can be mixed"):
        make("cpu", generators={"bezier": 1, "relax": 1})
    with pytest.raises(ValueError, match="track_mix"):
        TrackGenerator(TrackGenConfig(generator="mix", num_envs=2, device="cpu"))
    with pytest.raises(TypeError, match="mapping"):
        presets.track_mix("bezier", num_envs=2)


def test_mix_with_a_host_sampler_is_not_capturable(device):
    reg = Registry()
    reg.register("test.host_sampler", HostSampler, capturable=False)
    spec = presets.track_mix(["polar", "test.host_sampler"], num_envs=2, device=device)
    assert_refuses_capture(TrackGenerator(spec, registry=reg), "test.host_sampler", device)
