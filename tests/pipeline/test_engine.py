"""The pipeline engine: specs, registry, presets, params under replay."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.pipeline import (
    PipelineSpec,
    Program,
    Registry,
    Stage,
    StageSpec,
    build,
    default_registry,
    presets,
    register,
)


class _Sampler(Stage):
    role = "sampler"

    def enqueue(self, ws, params):
        pass


def test_preset_stage_order():
    spec = presets.track(num_envs=2, generator="polar")
    assert [s.kind for s in spec.stages] == ["polar", "resample", "relax", "inflate", "validate"]
    off = presets.track(num_envs=2, relax_enable=False)
    assert [s.name for s in off.stages] == ["bezier", "resample", "inflate", "validate"]
    assert spec.stage("relax").kind == "relax"
    with pytest.raises(KeyError, match="stages"):
        spec.stage("nope")


def test_spec_checks():
    cfg = TrackGenConfig(num_envs=2)
    with pytest.raises(ValueError, match="duplicate"):
        PipelineSpec(cfg, (StageSpec("bezier"), StageSpec("bezier")))
    with pytest.raises(ValueError, match="empty"):
        PipelineSpec(cfg, ())
    with pytest.raises(TypeError, match="TrackGenConfig"):
        PipelineSpec({"num_envs": 2}, (StageSpec("bezier"),))
    with pytest.raises(TypeError, match="kind"):
        StageSpec("")


def test_registry_register_and_lookup():
    reg = Registry()
    assert {"bezier", "polar"} <= set(reg.samplers())
    entry = reg.register("acme.sampler", _Sampler)
    assert entry.capturable and "acme.sampler" in reg.samplers()
    with pytest.raises(ValueError, match="already registered"):
        reg.register("acme.sampler", _Sampler)
    reg.register("acme.sampler", _Sampler, capturable=False, replace=True)
    assert not reg.get("acme.sampler").capturable
    with pytest.raises(TypeError, match="subclass"):
        reg.register("acme.bad", object)
    with pytest.raises(ValueError, match="namespaced"):
        reg.register("spiral", _Sampler)
    reg.register("polar", _Sampler, replace=True)  # a built-in may be replaced explicitly
    assert reg.get("polar").cls is _Sampler
    with pytest.raises(KeyError, match="registered"):
        reg.get("acme.missing")
    assert "acme.sampler" not in default_registry()  # a private registry stays private


def test_module_level_register_uses_default_registry():
    register("test.engine_sampler", _Sampler, replace=True)
    try:
        assert "test.engine_sampler" in default_registry().samplers()
    finally:
        default_registry().unregister("test.engine_sampler")
    assert "test.engine_sampler" not in default_registry()


def test_first_stage_must_be_a_sampler(device):
    with pytest.raises(ValueError, match="sampler"):  # refused when the spec is made
        PipelineSpec(
            TrackGenConfig(num_envs=2, device=device), (StageSpec("resample"), StageSpec("inflate"))
        )


def test_stage_options_override_param_defaults(device):
    cfg = TrackGenConfig(num_envs=2, device=device, generator="polar")
    spec = PipelineSpec(
        cfg,
        (
            StageSpec("polar", options={"scale": 3.0}),
            StageSpec("resample"),
            StageSpec("inflate"),
            StageSpec("validate"),
        ),
    )
    prog = build(spec, seeds=1)
    assert isinstance(prog, Program)
    np.testing.assert_allclose(prog.params["polar.scale"].numpy(), 3.0)
    with pytest.raises(ValueError, match=r"'polar'.*'scale'"):
        build(
            PipelineSpec(cfg, (StageSpec("polar", options={"scale": -1.0}), StageSpec("resample")))
        )


def test_param_write_seen_by_graph_replay(device):
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=4, device=device), seeds=2)
    gen.generate()
    with wp.ScopedCapture(device=device) as cap:
        gen.generate()
    wp.capture_launch(cap.graph)
    small = gen.result.length.numpy().copy()
    gen.params["polar.scale"] = 2.0
    wp.capture_launch(cap.graph)
    np.testing.assert_allclose(gen.result.length.numpy() / small, 2.0, rtol=0.05)


def test_seed_write_seen_by_graph_replay(device):
    seeds = wp.array(np.arange(4, dtype=np.int32), device=device)
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=4, device=device), seeds=seeds)
    gen.generate()
    with wp.ScopedCapture(device=device) as cap:
        gen.generate()
    seeds.assign(np.arange(4, dtype=np.int32) + 100)
    wp.capture_launch(cap.graph)
    want = TrackGenerator(gen.config, seeds=100).generate()
    assert gen.result.center.numpy().tobytes() == want.center.numpy().tobytes()
