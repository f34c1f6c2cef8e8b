"""Stage options: ``StageSpec(kind, options={...})`` inside a ``PipelineSpec``, built with
``track_gen.pipeline.build``.

Every option is checked when the ``PipelineSpec`` is made (the message the build gave before,
raised earlier). An unknown option name is a ValueError listing the accepted options (a
non-str name a TypeError); a known option is checked like its config field: the same
exception type for the same value (naming the option), and every field of the stage is
checked again with the resolved values, so an option breaking another field's bound or rule
(``min_corners`` above ``max_corners``, ``z_min`` above ``z_max``) is a ValueError naming
both; else the option is accepted and the pipeline generates a batch satisfying the
invariant, no env failing the device range check.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen import FailBit, GateGenConfig, TrackGenConfig
from track_gen.pipeline import PipelineSpec, StageSpec, build
from track_gen.stages import BUILTIN_STAGES

from ..support.invariants import check_result
from ..support.strategies import (
    METRE_SAMPLERS,
    SAMPLERS,
    examples,
    expected_options_error,
    sampler_config,
    values,
)

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 2
GATE_STAGES = ("gate_anchors", "gate_frames", "gate_validate")
#: Samplers of gate pipelines only (``gate_table``): built as the sampler of a gates pipeline
GATE_ONLY_SAMPLERS = tuple(
    k
    for k, c in BUILTIN_STAGES.items()
    if c.role == "sampler" and "track" not in (c.families or ("track",))
)
TRACK_PROCESS = ("resample", "relax", "inflate", "validate", "elevate")


def config_for(kind: str, device="cpu"):
    """The config of :func:`pipeline` for a stage ``kind``."""
    base = {"num_envs": E, "device": device, "num_points": 64}
    if kind in GATE_STAGES or kind in GATE_ONLY_SAMPLERS:
        return GateGenConfig(**base)
    if kind in TRACK_PROCESS or kind == "road_width":
        return TrackGenConfig(**base)
    if kind in METRE_SAMPLERS:  # metres: its preset's resolution
        return sampler_config(kind, num_envs=E, device=device)
    return TrackGenConfig(generator=kind, repulsive_iters=4, **base)


def pipeline(kind: str, options: dict, device="cpu") -> PipelineSpec:
    """A pipeline holding stage ``kind`` with ``options`` (the other stages at defaults)."""
    cfg = config_for(kind, device)
    if kind in GATE_STAGES:
        stages = [StageSpec(k) for k in ("bezier", *GATE_STAGES)]
        stages[stages.index(StageSpec(kind))] = StageSpec(kind, options=options)
        return PipelineSpec(cfg, tuple(stages), family="gates")
    if kind in GATE_ONLY_SAMPLERS:
        rest = tuple(StageSpec(k) for k in GATE_STAGES)
        return PipelineSpec(cfg, (StageSpec(kind, options=options), *rest), family="gates")
    if kind in TRACK_PROCESS or kind == "road_width":
        stages = [StageSpec(k) for k in ("bezier", *TRACK_PROCESS)]
        if kind == "road_width":
            stages.insert(1, StageSpec(kind))
        stages[stages.index(StageSpec(kind))] = StageSpec(kind, options=options)
        return PipelineSpec(cfg, tuple(stages))
    rest = tuple(StageSpec(k) for k in ("resample", "inflate", "validate"))
    return PipelineSpec(cfg, (StageSpec(kind, options=options), *rest))


KINDS = sorted(BUILTIN_STAGES)
OPTIONS = [
    (kind, t)
    for kind in KINDS
    for t in BUILTIN_STAGES[kind].FIELDS
    if kind in SAMPLERS or kind in GATE_STAGES or kind in TRACK_PROCESS or kind == "road_width"
]


def _accepted(kind: str) -> list[str]:
    cls = BUILTIN_STAGES[kind]
    return sorted([t.name for t in cls.FIELDS] + list(cls.OPTIONS))


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=examples(8))
@given(name=st.one_of(st.text(max_size=12), st.sampled_from(["RAD", "rad ", "scale_", "N_max"])))
def test_unknown_option_name_is_refused_listing_the_accepted_ones(kind, name):
    if name in _accepted(kind):
        return
    options = {"generators": {"bezier": 1.0}} if kind == "mix" else {}
    with pytest.raises(ValueError, match="unknown option") as info:
        pipeline(kind, {**options, name: 1.0})  # refused when the spec is made
    text = str(info.value)
    for accepted in _accepted(kind) or ["none"]:
        assert accepted in text, f"{accepted!r} missing from {text!r}"


@pytest.mark.parametrize("key", [1, None, 2.5, b"rad", ("rad",)])
def test_non_str_option_name_is_a_type_error(key):
    with pytest.raises(TypeError, match="keys must be str"):
        StageSpec("bezier", options={key: 0.3})


@pytest.mark.parametrize("options", [[("rad", 0.3)], "rad", 0.3, None])
def test_non_mapping_options_are_a_type_error(options):
    with pytest.raises(TypeError, match="mapping"):
        StageSpec("bezier", options=options)


def _config_class(kind):
    return GateGenConfig if kind in GATE_STAGES else TrackGenConfig


@pytest.mark.parametrize("kind, t", OPTIONS, ids=[f"{k}.{t.name}" for k, t in OPTIONS])
@settings(max_examples=examples(15))
@given(data=st.data())
def test_option_value_is_checked_like_its_config_field(kind, t, device, data):
    value = data.draw(values(t), label=t.name)
    options = {t.name: value}
    err, culprit = expected_options_error(
        BUILTIN_STAGES[kind].FIELDS, options, config_for(kind, device)
    )
    event(f"refused ({'itself' if culprit == t.name else 'another field'})" if err else "accepted")
    if err is not None:
        with pytest.raises(err) as info:
            pipeline(kind, options, device)  # refused when the spec is made
        text = str(info.value)
        # the option itself, or another field whose bound or rule names it as the bound
        assert repr(t.name) in text or t.field in text, f"{text!r} does not name {t.name!r}"
        return
    spec = pipeline(kind, options, device)
    if kind == "repulsive" and t.name == "iters" and value > 50:
        return  # the repulsive sampler only at tiny iteration counts
    gen = build(spec, seeds=4)
    gen.generate()
    out = check_result(gen)
    assert not (out["fail"] & int(FailBit.PARAM_RANGE)).any()


# ------------------------------------------------------------------------------ fixed findings
@pytest.mark.parametrize(
    "kind, options, other",
    [
        ("bezier", {"min_corners": 20}, "max_corners"),  # > max_corners = 13
        ("hull", {"min_corners": 20}, "max_corners"),
        ("bezier", {"max_corners": 40, "min_corners": 41}, "max_corners"),
        ("bezier", {"max_corners": 64, "min_point_distance": 0.1}, "min_point_distance"),
        ("voronoi", {"control_points": 64, "num_sites": 40}, "num_sites"),
        ("voronoi", {"num_sites": 10}, "num_sites"),  # < control_points = 18
        ("repulsive", {"obstacle_count_min": 32}, "obstacle_count_max"),  # > 12
        ("repulsive", {"grow_mult_min": 20.0}, "grow_mult_max"),  # > 5.5
        ("gate_anchors", {"num_gates_min": 200}, "num_gates_max"),  # > 12
        ("gate_anchors", {"min_gates": 100}, "num_gates_min"),  # > 8
        ("gate_anchors", {"z_min": 5.0}, "z_max"),  # > z_max = 0
        ("gate_anchors", {"z_max": -5.0}, "z_min"),  # < z_min = 0
    ],
    ids=lambda v: str(v),
)
def test_option_breaking_a_cross_field_bound_is_refused(kind, options, other):
    with pytest.raises(ValueError, match="out of range") as info:
        pipeline(kind, options)  # refused when the spec is made
    text = str(info.value)
    assert other in text and any(name in text for name in options), text


def test_z_min_above_z_max_option_message():
    with pytest.raises(
        ValueError,
        match=r"gate_anchors'\) option 'z_min' = 5\.0 is out of range: must be <= z_max = 0\.0",
    ):
        pipeline("gate_anchors", {"z_min": 5.0})


@pytest.mark.parametrize(
    "kind, options",
    [
        ("bezier", {"min_corners": 13}),  # == max_corners
        ("voronoi", {"num_sites": 18}),  # == control_points
        ("voronoi", {"control_points": 64, "num_sites": 64}),
        ("repulsive", {"obstacle_count_min": 12, "obstacle_count_max": 12}),
        ("gate_anchors", {"z_min": -1.0, "z_max": 1.0}),
        ("gate_anchors", {"num_gates_min": 12}),  # == num_gates_max
    ],
    ids=lambda v: str(v),
)
def test_option_meeting_a_cross_field_bound_generates(kind, options):
    gen = build(pipeline(kind, options), seeds=2)
    gen.generate()
    check_result(gen)


def test_voronoi_control_points_above_num_sites_is_refused_not_a_crash():
    code = textwrap.dedent(
        """
        import warp as wp
        wp.config.log_level = wp.LOG_WARNING
        from track_gen import TrackGenConfig
        from track_gen.pipeline import PipelineSpec, StageSpec, build
        cfg = TrackGenConfig(generator="voronoi", num_envs=2, device="cpu", num_points=64,
                             voronoi_num_sites=20)
        try:
            spec = PipelineSpec(cfg, (StageSpec("voronoi", options={"control_points": 64}),
                                      StageSpec("resample"), StageSpec("inflate"),
                                      StageSpec("validate")))
            gen = build(spec, seeds=1)
        except ValueError as exc:
            print("refused:", exc)
            raise SystemExit(0)
        for _ in range(3):
            gen.generate(advance=True)
        print("accepted")
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "refused:" in proc.stdout, (proc.returncode, proc.stderr)
    assert "voronoi_num_sites" in proc.stdout and "control_points" in proc.stdout
