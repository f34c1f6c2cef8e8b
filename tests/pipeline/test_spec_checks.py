"""A PipelineSpec is checked when it is made: stage kinds, families, options, the stage that
decides validity, randomizers and the mix's samplers; a plugin kind
the default registry does not hold yet is checked when the generator is built, before it
allocates anything."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.core.budget import AllocationBudget
from track_gen.pipeline import PipelineSpec, Registry, Stage, StageSpec, build, presets

E = 2
TRACK = ("bezier", "resample", "inflate", "validate")
GATES = ("bezier", "gate_anchors", "gate_frames", "gate_validate")


def track_config(**kw):
    return TrackGenConfig(num_envs=E, device="cpu", num_points=64, **kw)


def gate_config(**kw):
    return GateGenConfig(num_envs=E, device="cpu", gate_width=0.1, **kw)


def stages(*kinds, **options):
    """``StageSpec`` s of ``kinds``; ``options={kind: {...}}`` for some of them."""
    return tuple(StageSpec(k, options=options.get(k, {})) for k in kinds)


@pytest.fixture
def no_allocation(monkeypatch):
    """Records every allocation a generator's budget makes (none may happen for a refusal)."""
    taken = []
    original = AllocationBudget.take

    def take(self, count, dtype, what):
        taken.append(what)
        return original(self, count, dtype, what)

    monkeypatch.setattr(AllocationBudget, "take", take)
    return taken


# ------------------------------------------------------------------------------ validity (6)
@pytest.mark.parametrize(
    "family, kinds",
    [
        ("track", ("bezier", "resample", "inflate")),
        ("track", ("bezier", "resample", "relax", "inflate", "elevate")),
        ("gates", ("bezier", "gate_anchors", "gate_frames")),
    ],
)
def test_a_pipeline_without_a_validity_stage_is_refused_when_made(family, kinds):
    config = gate_config() if family == "gates" else track_config()
    name = "gate_validate" if family == "gates" else "validate"
    with pytest.raises(ValueError, match=rf"decides validity.*StageSpec\('{name}'\)"):
        PipelineSpec(config, stages(*kinds), family=family)


class _PluginValidity(Stage):
    """A plugin stage that decides validity (every env valid, no bit)."""

    validates = True

    def enqueue(self, ws, params):
        ws.result.valid.fill_(1)
        ws.result.fail_mask.zero_()


class _PluginNoop(Stage):
    def enqueue(self, ws, params):
        pass


def test_a_plugin_stage_declaring_validates_stands_for_validate():
    reg = Registry()
    reg.register("acme.valid", _PluginValidity)
    spec = PipelineSpec(track_config(), stages("bezier", "resample", "inflate", "acme.valid"))
    gen = build(spec, reg, seeds=1)
    gen.generate()
    assert (gen.result.valid.numpy() == 1).all() and (gen.result.fail_mask.numpy() == 0).all()


def test_a_plugin_pipeline_without_validity_is_refused_before_allocating(no_allocation):
    reg = Registry()
    reg.register("acme.noop", _PluginNoop)
    spec = PipelineSpec(track_config(), stages("bezier", "resample", "inflate", "acme.noop"))
    with pytest.raises(ValueError, match="decides validity"):
        build(spec, reg, seeds=1)
    assert no_allocation == []


# ------------------------------------------------------------------------------ families (7)
@pytest.mark.parametrize("kind", ["gate_anchors", "gate_frames", "gate_validate"])
def test_a_gate_stage_in_a_track_pipeline_is_refused_when_made(kind):
    with pytest.raises(ValueError, match=rf"'{kind}' works in gates pipelines only"):
        PipelineSpec(track_config(), stages(*TRACK, kind))


@pytest.mark.parametrize("kind", ["road_width", "resample", "relax", "inflate", "validate"])
def test_a_track_stage_in_a_gate_pipeline_is_refused_when_made(kind):
    kinds = list(GATES)
    kinds.insert(1, kind)
    with pytest.raises(ValueError, match=rf"'{kind}' works in track pipelines only"):
        PipelineSpec(gate_config(), stages(*kinds), family="gates")


class _GateOnlyPlugin(Stage):
    families = ("gates",)

    def enqueue(self, ws, params):
        pass


def test_a_plugin_of_another_family_is_refused_before_allocating(no_allocation):
    reg = Registry()
    reg.register("acme.gatething", _GateOnlyPlugin)
    spec = PipelineSpec(track_config(), stages(*TRACK, "acme.gatething"))
    with pytest.raises(ValueError, match="works in gates pipelines only"):
        TrackGenerator(spec, registry=reg)
    assert no_allocation == []


# ------------------------------------------------------------------------------ options (7)
@pytest.mark.parametrize(
    "options, err, message",
    [
        (
            {"rad": -1},
            ValueError,
            "StageSpec('bezier') option 'rad' = -1 is out of range: must be >= 0.0 and <= 2.0",
        ),
        ({"rad": "x"}, TypeError, "StageSpec('bezier') option 'rad' must be a number"),
        ({"radd": 0.3}, ValueError, "StageSpec('bezier'): unknown option(s) ['radd']"),
        (
            {"min_corners": 20},
            ValueError,
            "TrackGenConfig.max_corners (with StageSpec('bezier')'s options) = 13 is out of "
            "range: must be >= min_corners = 20",
        ),
    ],
)
def test_stage_options_are_refused_when_the_spec_is_made(options, err, message):
    with pytest.raises(err) as info:
        PipelineSpec(track_config(), stages(*TRACK, bezier=options))
    assert str(info.value).startswith(message), str(info.value)


def test_replace_config_rechecks_the_options():
    spec = PipelineSpec(track_config(), stages(*TRACK, bezier={"min_corners": 12}))
    with pytest.raises(ValueError, match="min_corners"):
        spec.replace_config(max_corners=10)


def test_real_track_table_and_assign_are_checked_with_the_spec():
    cfg = track_config(generator="real_track")
    bad_table = {"table": np.zeros((1, 32, 4), np.float32)}  # num_points is 64
    with pytest.raises(ValueError, match=r"option 'table' has shape \(1, 32, 4\)"):
        PipelineSpec(cfg, stages("real_track", *TRACK[1:], real_track=bad_table))
    table = {"table": np.zeros((1, 64, 4), np.float32), "assign": "nope"}
    with pytest.raises(ValueError, match="option assign = 'nope'"):
        PipelineSpec(cfg, stages("real_track", *TRACK[1:], real_track=table))
    with pytest.raises(ValueError, match="option 'table' must be"):  # missing: at the build
        build(PipelineSpec(cfg, stages("real_track", *TRACK[1:])), seeds=1)


# ------------------------------------------------------------------------------ randomizers (7)
def test_with_randomize_is_checked_where_it_is_given():
    spec = presets.track(num_envs=E, device="cpu", num_points=64)
    with pytest.raises(KeyError, match=r"with_randomize: no dynamic parameter 'bezier\.nope'; "):
        spec.with_randomize({"bezier.nope": (0.1, 0.2)})
    with pytest.raises(
        ValueError,
        match=r"randomizer 'bezier\.rad' lo = -5\.0 is out of range: must be >= 0\.0 and <= 2\.0",
    ):
        spec.with_randomize({"bezier.rad": (-5.0, 1.0)})
    with pytest.raises(ValueError, match="bezier.scale"):
        spec.with_randomize({"bezier.scale": (0.0, 1.0)})
    ok = spec.with_randomize({"bezier.rad": (0.1, 0.2)})
    assert dict(ok.randomize) == {"bezier.rad": (0.1, 0.2)}


def test_randomize_of_a_field_of_no_stage_is_refused_when_the_spec_is_made():
    spec = presets.track(num_envs=E, device="cpu", relax_enable=False)
    with pytest.raises(KeyError, match="no dynamic parameter 'relax.spc_relax'"):
        spec.with_randomize({"relax.spc_relax": (0.1, 0.2)})  # no relax stage


@pytest.mark.parametrize(
    "randomize, err",
    [(3, TypeError), ("bezier.rad", TypeError), ([("bezier.rad",)], TypeError), ([1], TypeError)],
)
def test_randomize_of_another_kind_is_a_type_error(randomize, err):
    with pytest.raises(err, match="PipelineSpec.randomize"):
        PipelineSpec(track_config(), stages(*TRACK), randomize=randomize)


def test_a_non_str_randomized_name_is_a_type_error():
    spec = presets.track(num_envs=E, device="cpu")
    with pytest.raises(TypeError, match="'<stage>.<field>' name"):
        spec.with_randomize({3: (0.1, 0.2)})


def test_family_of_another_kind_is_a_type_error():
    with pytest.raises(TypeError, match="PipelineSpec.family"):
        PipelineSpec(track_config(), stages(*TRACK), family=["track"])


# ------------------------------------------------------------------------------ track_mix (7, 8)
@pytest.mark.parametrize(
    "generators, err, match",
    [
        (None, TypeError, "track_mix: generators must be a mapping"),
        (3, TypeError, "track_mix: generators must be a mapping"),
        (b"bezier", TypeError, "track_mix: generators must be a mapping"),
        ({"nope": 1}, ValueError, r"mix: 'nope' is not a registered sampler; samplers: \["),
        (["bezier", "nope"], ValueError, "'nope' is not a registered sampler"),
        ({"bezier": -1}, ValueError, "weight of 'bezier' = -1 is out of range"),
        ({"bezier": "x"}, TypeError, "weight of 'bezier' must be a number"),
        ({"bezier": 1, "relax": 1}, ValueError, "'relax' is not a sampler that can be mixed"),
        ({}, ValueError, "generators is empty"),
    ],
)
def test_track_mix_is_checked_where_it_is_given(generators, err, match):
    with pytest.raises(err, match=match):
        presets.track_mix(generators, num_envs=E, device="cpu")


def test_track_mix_refuses_a_generator_keyword():
    with pytest.raises(TypeError, match="track_mix sets generator='mix'"):
        presets.track_mix({"bezier": 1}, num_envs=E, device="cpu", generator="polar")


def test_track_mix_child_options_are_checked_with_the_spec():
    cfg = track_config(generator="mix")
    opts = {"generators": {"bezier": 1}, "bezier.rad": -1.0}
    with pytest.raises(ValueError, match="option 'rad' = -1.0 is out of range"):
        PipelineSpec(cfg, stages("mix", *TRACK[1:], mix=opts))


class _PluginSampler(Stage):
    role = "sampler"

    def enqueue(self, ws, params):
        ws.line.fill_(wp.vec2f(0.0, 0.0))


def test_a_mix_of_a_plugin_sampler_is_checked_when_built():
    spec = presets.track_mix({"bezier": 1, "acme.later": 1}, num_envs=E, device="cpu")
    with pytest.raises(ValueError, match="'acme.later' is not a registered sampler"):
        build(spec, seeds=1)
    reg = Registry()
    reg.register("acme.later", _PluginSampler)
    build(spec, reg, seeds=1).generate()


# ------------------------------------------------------------------------------ stage kinds (8)
def test_an_unknown_builtin_like_kind_is_a_value_error_when_made():
    with pytest.raises(ValueError, match=r"no stage kind 'nope' is registered; registered kinds"):
        PipelineSpec(track_config(), stages("bezier", "nope", *TRACK[1:]))


def test_an_unknown_plugin_kind_is_a_value_error_when_built(no_allocation):
    spec = PipelineSpec(track_config(), stages(*TRACK, "acme.missing"))  # may come later
    with pytest.raises(ValueError, match="no stage kind 'acme.missing' is registered"):
        build(spec, seeds=1)
    assert no_allocation == []


def test_an_unregistered_config_generator_is_refused_by_the_preset():
    message = r"TrackGenConfig.generator = 'nope' is not a registered sampler; choose one of"
    with pytest.raises(ValueError, match=message):
        presets.track(num_envs=E, device="cpu", generator="nope")
    with pytest.raises(ValueError, match=message):
        TrackGenerator(track_config(generator="nope"))
    with pytest.raises(ValueError, match="GateGenConfig.generator = 'resample'"):
        presets.gates(num_envs=E, device="cpu", generator="resample")


# ------------------------------------------------------------------------------ registry= (8)
@pytest.mark.parametrize("registry", [3, "default", object(), {}, Registry])
@pytest.mark.parametrize("source", ["track config", "gate config", "spec"])
def test_registry_of_another_kind_is_a_type_error(registry, source):
    make = {
        "track config": lambda: TrackGenerator(track_config(), registry=registry),
        "gate config": lambda: GateGenerator(gate_config(), registry=registry),
        "spec": lambda: build(PipelineSpec(track_config(), stages(*TRACK)), registry, seeds=1),
    }[source]
    with pytest.raises(TypeError, match="registry must be a Registry"):
        make()


# ------------------------------------------------------------------------------ np.str_ (6)
def test_numpy_str_names_are_stored_as_str():
    cfg = TrackGenConfig(
        generator=np.str_("polar"),
        relax_accel=np.str_("none"),
        kernel_layout=np.str_("per_env"),
        z_profile=np.str_("flat"),
        device=np.str_("cpu"),
        num_envs=E,
    )
    for field in ("generator", "relax_accel", "kernel_layout", "z_profile", "device"):
        assert type(getattr(cfg, field)) is str, field
    gate = GateGenConfig(
        gate_align=np.str_("full_tangent"), gate_ordering=np.str_("random_pairs"), num_envs=E
    )
    assert type(gate.gate_align) is str and type(gate.gate_ordering) is str
    s = StageSpec(np.str_("polar"), name=np.str_("p"), options={np.str_("scale"): 1.0})
    assert type(s.kind) is str and type(s.name) is str
    assert all(type(k) is str for k in s.options)
    mix = presets.track_mix({np.str_("polar"): 1}, num_envs=E, device="cpu")
    assert all(type(k) is str for k, _ in mix.stages[0].options["generators"])
    spec = presets.track(num_envs=E).with_randomize({np.str_("bezier.rad"): (0.1, 0.2)})
    assert all(type(k) is str for k, _ in spec.randomize)


# ------------------------------------------------------------------------------ enqueue (8)
@pytest.fixture(scope="module")
def generator():
    gen = TrackGenerator(track_config(), seeds=3)
    gen.generate()
    return gen


def _state(gen) -> bytes:
    r = gen.result
    return b"".join(
        a.numpy().tobytes() for a in (r.center, r.valid, r.generation, gen.seeds.epochs)
    )


class _Ctx:
    def __init__(self, stream):
        self.stream = stream


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"stream": 3}, TypeError, "stream must be a wp.Stream or None, got int"),
        ({"stream": "cpu"}, TypeError, "stream must be a wp.Stream or None, got str"),
        ({"stream": wp.Stream.__new__(wp.Stream)}, ValueError, "the CPU has no streams"),
        ({"ctx": 3}, TypeError, "ctx must be None or a course's ComponentContext"),
        ({"ctx": object()}, TypeError, "ctx must be None or a course's ComponentContext"),
        ({"ctx": _Ctx(3)}, TypeError, "ctx.stream must be a wp.Stream or None, got int"),
    ],
)
def test_enqueue_refuses_a_bad_stream_or_ctx_and_changes_nothing(generator, kwargs, err, match):
    before = _state(generator)
    ctx = kwargs.pop("ctx", None)
    with pytest.raises(err, match=match):
        generator.enqueue(ctx, advance=True, **kwargs)
    assert _state(generator) == before
    generator.enqueue(_Ctx(None), advance=False)  # a context without a stream is fine
    assert _state(generator) == before  # a regeneration at the same epochs is bitwise equal
