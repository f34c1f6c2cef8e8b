"""Pipeline specs and the calls around them, fuzzed: a ``PipelineSpec`` of any stage list, the
samplers of ``presets.track_mix``, ``registry=``, ``enqueue(ctx, stream=)`` and a
``ComponentContext``'s arguments.

A spec is refused when it is made, with ValueError, for what the default registry can
decide (a kind without a namespace that is not registered, a first stage that is no sampler,
a stage of another family, a mix without samplers, no stage that decides validity); a
namespaced kind it does not hold defers the rest to the build, which refuses an unregistered
one before allocating. An accepted spec of registered kinds builds and generates a batch
satisfying the invariant (``valid == (fail_mask == 0)``). Every refused call changes nothing.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.pipeline import PipelineSpec, Registry, StageSpec, build, default_registry, presets
from track_gen.stages import BUILTIN_STAGES
from track_gen.tools import ComponentContext

from ..support.invariants import check_result, result_bytes
from ..support.strategies import (
    SAMPLERS,
    any_scalar,
    examples,
    expected_mix_error,
    other_objects,
    stream_cases,
)

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 2
#: Kinds a stage list is drawn from: every built-in one but real_track (its table comes from
#: io.tracks_spec), repulsive (slow at the default iterations), an unknown built-in-like name
#: and an unknown plugin name.
KINDS = sorted(set(BUILTIN_STAGES) - {"real_track", "repulsive"}) + ["nope", "acme.later"]
MIXABLE = [k for k in default_registry().samplers() if k != "mix"]
#: Samplers a mix is drawn from: real_track needs a table (io.tracks_spec), repulsive is slow.
MIX_DRAWN = [k for k in MIXABLE if k not in ("real_track", "repulsive")]


def _config(family: str, first: str):
    kw = {"num_envs": E, "device": "cpu", "num_points": 64}
    if first in SAMPLERS:
        kw["generator"] = first
    if family == "gates":
        return GateGenConfig(gate_width=0.1, **kw)
    return TrackGenConfig(**kw)


def expected_spec_error(family: str, kinds: list[str]) -> tuple[type | None, bool]:
    """``(error when the spec is made, complete)``: the registry checks in their order (every
    kind looked up, the first stage a sampler, each stage's family, each stage built (a mix
    needs its samplers), then, when every kind is registered, a stage deciding validity).
    ``complete`` is False when an unregistered plugin kind defers checks to the build."""
    reg = default_registry()
    if len(set(kinds)) != len(kinds):
        return ValueError, True  # duplicate stage names
    known = [reg.get(k).cls if k in reg else None for k in kinds]
    for k, cls in zip(kinds, known, strict=True):
        if cls is None and "." not in k:
            return ValueError, True
    if known[0] is not None and known[0].role != "sampler":
        return ValueError, True
    for cls in known:
        if cls is not None and cls.families is not None and family not in cls.families:
            return ValueError, True
    if "mix" in kinds:
        return ValueError, True  # no generators option
    if any(cls is None for cls in known):
        return None, False
    if not any(cls.validates for cls in known):
        return ValueError, True
    return None, True


#: The presets' stage lists after the sampler, by family.
STANDARD = {
    "track": ["road_width", "resample", "relax", "inflate", "validate", "elevate"],
    "gates": ["gate_anchors", "gate_frames", "gate_validate"],
}


@st.composite
def stage_lists(draw, family: str) -> list[str]:
    """A sampler and the family's standard stages, some dropped, some of another family or
    unknown inserted, or any list of kinds."""
    if draw(st.booleans()):
        return draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=6))
    kinds = [k for k in STANDARD[family] if draw(st.integers(0, 5)) > 0]  # mostly kept
    for _ in range(draw(st.integers(0, 1))):
        kinds.insert(draw(st.integers(0, len(kinds))), draw(st.sampled_from(KINDS)))
    first = draw(st.sampled_from(["bezier", "polar", "hull", "checkpoint", "centerline"]))
    return [first, *kinds]


@settings(max_examples=examples(60))
@given(
    family=st.shared(st.sampled_from(["track", "gates"]), key="family"),
    kinds=st.shared(st.sampled_from(["track", "gates"]), key="family").flatmap(stage_lists),
    numpy_names=st.booleans(),
)
def test_any_stage_list_is_refused_when_made_or_generates_consistently(family, kinds, numpy_names):
    config = _config(family, kinds[0])
    stages = tuple(StageSpec(np.str_(k) if numpy_names else k) for k in kinds)
    err, complete = expected_spec_error(family, kinds)
    event(f"refused when made: {err.__name__}" if err else f"accepted (complete={complete})")
    if err is not None:
        with pytest.raises(err):
            PipelineSpec(config, stages, family=family)
        return
    spec = PipelineSpec(config, stages, family=family)
    assert all(type(s.kind) is str for s in spec.stages)
    if not complete:
        with pytest.raises(ValueError, match="no stage kind 'acme.later' is registered"):
            build(spec, seeds=1)
        return
    gen = build(spec, seeds=3)
    gen.generate()
    check_result(gen)  # valid == (fail_mask == 0) for every env


# ------------------------------------------------------------------------------ track_mix
_NAMES = st.one_of(
    st.sampled_from(MIX_DRAWN),
    st.sampled_from(["mix", "resample", "validate", "nope", "acme.x", "", "Bezier"]),
    st.sampled_from([np.str_("polar"), 3, None, b"bezier", ("bezier", 1.0)]),
)
_WEIGHTS = st.one_of(
    st.floats(1e-6, 10.0),
    st.sampled_from([1, 2, 0, -1, 1e6, 1e6 + 1, 10**400, np.float32(0.5), np.int64(3)]),
    any_scalar,
)


@settings(max_examples=examples(40))
@given(
    generators=st.one_of(
        st.dictionaries(_NAMES.filter(lambda n: n.__hash__ is not None), _WEIGHTS, max_size=4),
        st.lists(_NAMES, max_size=4),
        st.lists(_NAMES, max_size=4).map(tuple),
        st.sampled_from([None, "bezier", b"polar", 3, 1.5, object(), range(0)]),
    )
)
def test_track_mix_is_refused_where_given_or_generates(generators):
    err, later = expected_mix_error(generators, MIXABLE, default_registry().kinds())
    event(f"refused: {err.__name__}" if err else f"accepted (built: {later})")
    if err is not None:
        with pytest.raises(err):
            presets.track_mix(generators, num_envs=E, device="cpu", num_points=64)
        return
    spec = presets.track_mix(generators, num_envs=E, device="cpu", num_points=64)
    assert all(type(k) is str for k, _ in spec.stages[0].options["generators"])
    if later is not None:
        with pytest.raises(later, match="is not a registered sampler"):
            TrackGenerator(spec, seeds=5)
        return
    gen = TrackGenerator(spec, seeds=5)
    gen.generate()
    check_result(gen)
    choice = gen.diagnostics["mix.choice"].numpy()
    assert ((choice >= 0) & (choice < len(spec.stages[0].options["generators"]))).all()


# ------------------------------------------------------------------------------ registry=
@settings(max_examples=examples(30))
@given(
    registry=st.sampled_from(other_objects(E) + [Registry, default_registry]),
    family=st.sampled_from(["track", "gates"]),
)
def test_registry_of_another_kind_is_a_type_error(registry, family):
    make = GateGenerator if family == "gates" else TrackGenerator
    with pytest.raises(TypeError, match="registry must be a Registry"):
        make(_config(family, "bezier"), registry=registry)


# ------------------------------------------------------------------------------ enqueue
@pytest.fixture(scope="module")
def generator():
    gen = TrackGenerator(_config("track", "bezier"), seeds=7)
    gen.generate()
    return gen


class _Ctx:
    def __init__(self, stream):
        self.stream = stream


def _state(gen) -> bytes:
    return result_bytes(gen.result) + gen.seeds.epochs.numpy().tobytes()


@settings(max_examples=examples(40))
@given(
    case=st.sampled_from(stream_cases(E, "cpu")),
    where=st.sampled_from(["stream", "ctx.stream"]),
)
def test_enqueue_checks_its_stream_and_changes_nothing_when_refused(generator, case, where):
    label, err, make = case
    value = make()
    before = _state(generator)
    kwargs = {"stream": value} if where == "stream" else {}
    ctx = _Ctx(value) if where == "ctx.stream" else None
    if err is None:
        generator.enqueue(ctx, **kwargs)  # a regeneration at the same epochs
        assert _state(generator) == before
        return
    with pytest.raises(err, match="stream"):
        generator.enqueue(ctx, advance=True, **kwargs)
    assert _state(generator) == before, label


@settings(max_examples=examples(30))
@given(ctx=st.sampled_from(other_objects(E)))
def test_enqueue_refuses_a_ctx_without_a_stream(generator, ctx):
    before = _state(generator)
    if hasattr(ctx, "stream"):
        return  # an object with a stream attribute is a context (its stream is checked)
    with pytest.raises(TypeError, match="ctx must be None or a course's ComponentContext"):
        generator.enqueue(ctx, advance=True)
    assert _state(generator) == before


# ------------------------------------------------------------------------------ ComponentContext
@settings(max_examples=examples(30))
@given(value=st.sampled_from(other_objects(E) + [None, TrackGenConfig(num_envs=E)]))
def test_component_context_refuses_what_is_no_generator(value):
    with pytest.raises(TypeError, match="ComponentContext\\(generator\\)"):
        ComponentContext(value)


@settings(max_examples=examples(30))
@given(case=st.sampled_from(stream_cases(E, "cpu")))
def test_component_context_checks_its_stream(generator, case):
    _, err, make = case
    value = make()
    if err is None:
        assert ComponentContext(generator, value).stream is value
        return
    with pytest.raises(err, match="stream"):
        ComponentContext(generator, value)
