"""A course's memory budget: each built-in component plans exactly the bytes it allocates,
and a course whose components push the total past the device's budget is refused before the
generator or any component allocates the batch, naming what tipped it."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import GateGenConfig, TrackGenConfig, TrackGenerator, tools
from track_gen.core import budget as stage  # the allocation budget (memory_budget is patched)
from track_gen.course import Course, CourseConfig
from track_gen.engine.program import plan_program
from track_gen.engine.stage import Layout
from track_gen.pipeline import presets

E = 6


def _arrays(obj, out: dict, seen: set) -> dict:
    """Every wp.array reachable from ``obj`` through the attributes of track_gen objects
    (and lists, tuples, dicts), by pointer."""
    if isinstance(obj, wp.array):
        if obj.ptr is not None:
            out[obj.ptr] = obj
        return out
    if id(obj) in seen:
        return out
    seen.add(id(obj))
    if isinstance(obj, dict):
        items = list(obj.values())
    elif isinstance(obj, (list, tuple)):
        items = list(obj)
    elif type(obj).__module__.startswith("track_gen") and hasattr(obj, "__dict__"):
        items = list(vars(obj).values())
    else:
        return out
    for item in items:
        _arrays(item, out, seen)
    return out


def _allocated_by_component(course) -> dict[str, int]:
    """Bytes of the arrays each component's utility and result hold that neither the
    generator nor an earlier component holds."""
    owned = _arrays(course.generator, {}, set())
    out = {}
    for name, comp in course.components.items():
        mine = _arrays([comp.utility, comp.result], {}, set())
        fresh = {p: a for p, a in mine.items() if p not in owned}
        out[name] = sum(a.capacity for a in fresh.values())
        owned.update(mine)
    return out


def _track(device, **kw):
    return presets.track(num_envs=E, device=device, **kw)


def _gates(device):
    return presets.gates(num_envs=E, device=device, gate_width=0.1)


COURSES = {
    "track_segments": lambda d: Course.track(
        _track(d),
        checkpoint_spacing=0.6,
        collision="segments",
        extra=[tools.Localizer(warm_window=4), tools.Props("cone", spacing=0.5)],
        seeds=1,
    ),
    "track_sdf": lambda d: Course.track(
        _track(d),
        checkpoint_spacing=0.7,
        max_checkpoints=50,
        collision=tools.BandCollision("sdf", sdf_resolution=48, max_boxes=2, clearance=1.0),
        extra=[tools.HeightFieldBake(40), tools.Props("wall", spacing=0.8, max_props=33)],
        seeds=2,
    ),
    "track_per_item": lambda d: Course.track(
        _track(d),
        checkpoint_spacing=0.6,
        collision=tools.BandCollision("segments", max_boxes=3, kernel_layout="per_item"),
        extra=[
            tools.BandCollision(
                "sdf", sdf_resolution=40, max_boxes=3, kernel_layout="per_item", name="acme.sdf"
            ),
            tools.Props("cone", spacing=0.9, side="inner"),
        ],
        seeds=3,
    ),
    "gates_posts": lambda d: Course.gates(
        _gates(d), collision=0.02, samples_per_gate=5, localize_window=3, seeds=4
    ),
    "gates_frames": lambda d: Course.gates(
        _gates(d), collision=tools.FrameCollision(0.02, 0.02, 0.05), seeds=5
    ),
    "gates_boxes": lambda d: Course.gates(
        _gates(d), collision=tools.DiscCollision(0.03, max_boxes=2), seeds=6
    ),
}


@pytest.mark.parametrize("name", sorted(COURSES))
def test_each_component_plans_the_bytes_it_allocates(device, name):
    course = COURSES[name](device)
    allocated = _allocated_by_component(course)
    gen = course.generator
    planned = {n: c.planned_bytes(gen.layout, gen.config) for n, c in course.components.items()}
    assert planned == allocated
    assert all(v > 0 for v in planned.values())


def _record_allocations(monkeypatch) -> list[int]:
    sizes: list[int] = []
    for fn in ("zeros", "full", "empty"):
        original = getattr(wp, fn)

        def record(shape, *args, _original=original, **kwargs):
            sizes.append(int(np.prod(shape)))
            return _original(shape, *args, **kwargs)

        monkeypatch.setattr(wp, fn, record)
    return sizes


BIG_E = 4096


def _big_track_config() -> TrackGenConfig:
    return TrackGenConfig(num_envs=BIG_E, device="cpu")


def _budget_between(monkeypatch, below: int, above: int) -> None:
    """A device budget past ``below`` bytes and short of ``above``."""
    assert below < above
    limit = (below + above) // 2
    monkeypatch.setattr(stage, "memory_budget", lambda device: limit)


def test_a_course_past_the_budget_is_refused_before_the_generator_allocates(monkeypatch):
    """The generator alone fits; its SDF collision does not."""
    cfg = _big_track_config()
    spec = presets.track(**{f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)})
    generator_bytes = plan_program(spec)
    sdf = tools.BandCollision("sdf", sdf_resolution=128)
    layout = Layout("track", BIG_E, cfg.N_max, cfg.num_points, wp.get_device("cpu"))
    _budget_between(monkeypatch, generator_bytes, generator_bytes + sdf.planned_bytes(layout, cfg))
    sizes = _record_allocations(monkeypatch)
    plan_program(spec)
    plan_sizes = list(sizes)
    sizes.clear()
    with pytest.raises(ValueError, match=r"component 'collision' \(BandCollision") as err:
        Course.track(cfg, checkpoint_spacing=0.6, collision=sdf)
    assert "would bring this course's buffers to" in str(err.value)
    assert "sdf_resolution" in str(err.value)
    # only the generator plan's one- and two-env probes allocated, nothing of the batch
    assert sizes == plan_sizes
    assert max(sizes) < BIG_E * cfg.N_max
    assert not sdf.attached


def test_a_course_config_past_the_budget_is_refused_before_anything_allocates(monkeypatch):
    cfg = _big_track_config()
    limit = 2 * plan_program(presets.track(num_envs=BIG_E, device="cpu"))
    monkeypatch.setattr(stage, "memory_budget", lambda device: limit)
    sizes = _record_allocations(monkeypatch)
    config = CourseConfig(mode="track", gen=cfg, checkpoint_spacing=0.6, heightfield_resolution=256)
    with pytest.raises(ValueError, match=r"component 'heightfield' \(HeightFieldBake"):
        Course(config=config)
    assert sizes and max(sizes) < BIG_E * cfg.N_max  # the plan's probes only


def test_a_gate_course_whose_frames_tip_the_total_names_them(monkeypatch):
    gen = GateGenConfig(num_envs=BIG_E, device="cpu", max_gates=64)
    spec = presets.gates(num_envs=BIG_E, device="cpu", max_gates=64, gate_width=0.1)
    frames = tools.FrameCollision(0.02, 0.02, 0.05)
    layout = Layout("gates", BIG_E, 64, gen.num_points, wp.get_device("cpu"))
    others = sum(
        c.planned_bytes(layout, spec.config)
        for c in (
            tools.GateCheckpoints(),
            tools.CenterlineFromGates(8),
            tools.Progress(),
        )
    )
    base = plan_program(spec) + others
    _budget_between(monkeypatch, base, base + frames.planned_bytes(layout, spec.config))
    sizes = _record_allocations(monkeypatch)
    with pytest.raises(ValueError, match=r"component 'collision' \(FrameCollision"):
        Course.gates(spec, collision=frames)
    assert sizes and max(sizes) < BIG_E * 64  # the plan's probes only


def test_a_course_on_a_built_generator_checks_what_is_left_before_attaching(monkeypatch):
    generator = TrackGenerator(TrackGenConfig(num_envs=BIG_E, device="cpu"), seeds=1)
    sdf = tools.BandCollision("sdf", sdf_resolution=96)
    planned = sdf.planned_bytes(generator.layout, generator.config)
    monkeypatch.setattr(stage, "memory_budget", lambda device: planned // 2)
    sizes = _record_allocations(monkeypatch)
    with pytest.raises(ValueError, match=r"component 'collision' \(BandCollision"):
        Course(generator, [tools.Checkpoints(0.6), tools.Progress(), sdf])
    assert sizes == []  # nothing attached, nothing allocated
    assert not sdf.attached


_TRACK_SOURCE = {}


def _shared_generator_spec(num_envs: int):
    key = num_envs
    if key not in _TRACK_SOURCE:
        _TRACK_SOURCE[key] = presets.track(num_envs=num_envs, device="cpu")
    return _TRACK_SOURCE[key]


@settings(max_examples=8, deadline=None)
@given(
    num_envs=st.integers(1, 5),
    method=st.sampled_from(["segments", "sdf"]),
    max_boxes=st.integers(1, 4),
    sdf_resolution=st.integers(8, 40),
    clearance=st.one_of(st.none(), st.floats(0.1, 5.0)),
    kernel_layout=st.sampled_from(["per_env", "per_item"]),
    heightfield=st.integers(8, 40),
    max_checkpoints=st.one_of(st.none(), st.integers(3, 200)),
    props=st.one_of(st.none(), st.integers(1, 300)),
)
def test_planned_bytes_follow_every_component_size(
    num_envs,
    method,
    max_boxes,
    sdf_resolution,
    clearance,
    kernel_layout,
    heightfield,
    max_checkpoints,
    props,
):
    collision = tools.BandCollision(
        method,
        max_boxes=max_boxes,
        sdf_resolution=sdf_resolution,
        clearance=clearance,
        kernel_layout=kernel_layout,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coarse grids warn (GridResolutionWarning)
        course = Course.track(
            _shared_generator_spec(num_envs),
            checkpoint_spacing=0.6,
            max_checkpoints=max_checkpoints,
            collision=collision,
            extra=[
                tools.HeightFieldBake(heightfield),
                tools.Localizer(),
                tools.Props("cone", spacing=0.7, max_props=props or "auto"),
            ],
            prepare=False,
        )
    gen = course.generator
    planned = {n: c.planned_bytes(gen.layout, gen.config) for n, c in course.components.items()}
    assert planned == _allocated_by_component(course)
