"""Course.gates and CourseConfig(mode="gates"): preset checks (before any generator is built),
the gate-width rules, components, laps through the gates, masked regeneration and the
config's byte-identical course."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenConfig, GateGenerator, PerEnvSeededRNG, TrackGenerator
from track_gen.course import Course, CourseConfig
from track_gen.pipeline import presets
from track_gen.tools import (
    CenterlineFromGates,
    Component,
    DiscCollision,
    FrameCollision,
    GateCheckpoints,
    Localizer,
)

from ..support.course_state import course_rows

E = 8
NAMES = ["checkpoints", "centerline", "progress", "collision", "localizer"]


def spec(device, **kw):
    kw.setdefault("gate_width", 0.1)
    return presets.gates(num_envs=E, device=device, **kw)


@functools.cache
def posts_course(device):
    """A shared gate course with posts of radius 0.02 (tests that mutate it build their own)."""
    return Course.gates(spec(device), collision=0.02, seeds=42)


def test_components_and_attributes(device):
    course = posts_course(device)
    assert list(course.components) == NAMES
    comps = course.components
    assert isinstance(comps["checkpoints"], GateCheckpoints)
    assert isinstance(comps["centerline"], CenterlineFromGates)
    assert isinstance(comps["collision"], DiscCollision)
    assert isinstance(comps["localizer"], Localizer)
    assert course.course_line is comps["centerline"].utility
    assert course.localizer is comps["localizer"].utility
    assert course.collision is comps["collision"].utility
    assert course.progress is comps["progress"].utility
    # the checkpoints are the gates themselves (aliased: no copy)
    cps, gates = course.checkpoints, course.result
    assert cps.position is gates.position and cps.tangent is gates.forward
    assert cps.up_half is gates.half_size and cps.count is gates.count
    # without a collision the slot is empty
    bare = Course.gates(course.generator.spec, seeds=1) if device == "cpu" else None
    if bare is not None:
        assert list(bare.components) == ["checkpoints", "centerline", "progress", "localizer"]
        assert bare.collision is None


def test_frame_collision_in_the_slot(device):
    course = Course.gates(spec(device), collision=FrameCollision(0.02, 0.02, 0.05), seeds=3)
    assert isinstance(course.components["collision"], FrameCollision)
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    course.bind(position=pos)
    res = course.step()
    assert res.contacts is course.components["collision"].result
    assert res.frame is res["localizer"]


class _Spy:
    def __init__(self, monkeypatch):
        self.built = []
        real = TrackGenerator.__init__  # GateGenerator's base: every generator passes here

        def spy(obj, *a, **k):
            self.built.append(type(obj).__name__)
            real(obj, *a, **k)

        monkeypatch.setattr(TrackGenerator, "__init__", spy)


@pytest.mark.parametrize(
    "kw, err, match",
    [
        (dict(collision=True), TypeError, "collision"),
        (dict(collision="segments"), TypeError, "post radius"),
        (dict(collision=0.0), ValueError, "post radius"),
        (dict(collision=-0.5), ValueError, "post radius"),
        (dict(collision=float("nan")), ValueError, "post radius"),
        (dict(collision=Component(name="acme.c")), ValueError, "named 'collision'"),
        (dict(collision=object()), TypeError, "collision"),
        (dict(samples_per_gate=1), ValueError, "samples_per_gate"),
        (dict(samples_per_gate=2.5), TypeError, "samples_per_gate"),
        (dict(samples_per_gate=True), TypeError, "samples_per_gate"),
        (dict(localize_window=0), ValueError, "localize_window"),
        (dict(localize_window="8"), TypeError, "localize_window"),
        (dict(extra=Component(name="acme.x")), TypeError, "sequence"),
        (dict(extra=[Component(name="progress")]), ValueError, "unique"),
        (dict(extra=[Component(name="acme.x", after=["nope"])]), ValueError, "nope"),
        (dict(source=presets.track(num_envs=E)), TypeError, "Course.track"),
        (dict(source=presets.gates(num_envs=E)), ValueError, "gate_width"),
        (dict(source=GateGenConfig(num_envs=E)), ValueError, "gate_width"),
        (
            dict(
                source=presets.gates(num_envs=E, gate_width=0.1).with_randomize(
                    {"gate_frames.gate_width": (0.0, 0.2)}
                )
            ),
            ValueError,
            "lo > 0",
        ),
    ],
)
def test_preset_checks_before_building(kw, err, match, monkeypatch):
    spy = _Spy(monkeypatch)
    source = kw.pop("source", spec("cpu"))
    with pytest.raises(err, match=match):
        Course.gates(source, seeds=1, **kw)
    assert spy.built == []  # refused before any generator was built


def test_an_attached_component_is_refused_before_building(monkeypatch):
    taken = Localizer(name="acme.loc", source="centerline")
    Course.gates(spec("cpu"), seeds=1, extra=[taken])
    spy = _Spy(monkeypatch)
    with pytest.raises(ValueError, match="already attached"):
        Course.gates(spec("cpu"), seeds=1, extra=[taken])
    assert spy.built == []


def test_width_rules(device):
    # a randomized width needs only its lo > 0: the construction width is not used
    rnd = presets.gates(num_envs=E, device=device).with_randomize(
        {"gate_frames.gate_width": (0.05, 0.1)}
    )
    course = Course.gates(rnd, seeds=2)
    hs = course.result.half_size.numpy().reshape(E, -1)
    for e in range(E):
        row = hs[e, : course.result.count.numpy()[e]]
        assert np.all((row >= 0.025) & (row < 0.05))
    # a built generator with width 0 is refused too
    gen = GateGenerator(presets.gates(num_envs=E, device=device), seeds=2)
    with pytest.raises(ValueError, match="gate_width"):
        Course.gates(gen)
    # after building, a scalar set of a width <= 0 is refused and changes nothing
    course = Course.gates(spec(device), seeds=2)
    params = course.generator.params["gate_frames.gate_width"]
    before = params.numpy().copy()
    for bad in (0.0, -0.1):
        with pytest.raises(ValueError, match="gate_width"):
            course.generator.params["gate_frames.gate_width"] = bad
    assert params.numpy().tobytes() == before.tobytes()


def test_source_rules(device):
    gen = GateGenerator(spec(device), seeds=3)
    with pytest.raises(TypeError, match="seeds= and stream="):
        Course.gates(gen, seeds=1)
    track_gen = TrackGenerator(presets.track(num_envs=E, device=device), seeds=3)
    with pytest.raises(TypeError, match=r"Course\.track"):
        Course.gates(track_gen)
    with pytest.raises(TypeError, match=r"Course\.gates"):
        Course.track(spec(device), checkpoint_spacing=0.6)
    with pytest.raises(TypeError, match=r"Course\.gates"):
        Course(GateGenConfig(num_envs=E, gate_width=0.1))
    course = Course.gates(gen)  # a built generator is used as is
    assert course.generator is gen


def test_config_course_equals_preset(device):
    cfg = GateGenConfig(num_envs=E, device=device, gate_width=0.1)
    rng = PerEnvSeededRNG(seeds=5, num_envs=E, device=device)
    a = Course.gates(cfg, collision=0.02, seeds=rng)
    b = Course(CourseConfig(mode="gates", gen=cfg, seeds=5, post_radius=0.02))
    assert list(a.components) == list(b.components) == NAMES
    line_a, line_b = a.course_line.line, b.course_line.line
    for x, y in (
        (a.result.position, b.result.position),
        (a.result.half_size, b.result.half_size),
        (line_a.center, line_b.center),
        (line_a.arclen, line_b.arclen),
    ):
        assert x.numpy().tobytes() == y.numpy().tobytes()
    c = Course.from_config(
        CourseConfig(
            mode="gates",
            gen=cfg,
            seeds=5,
            frame_collision={"thickness": 0.02, "depth": 0.03, "agent_radius": 0.05},
            samples_per_gate=4,
            localize_window=6,
        )
    )
    assert isinstance(c.components["collision"], FrameCollision)
    assert c.course_line.samples_per_gate == 4
    assert c.result.position.numpy().tobytes() == a.result.position.numpy().tobytes()


@pytest.mark.parametrize(
    "kw, err, match",
    [
        (dict(checkpoint_spacing=0.6), ValueError, "checkpoint_spacing"),
        (dict(collision="segments"), ValueError, "collision"),
        (dict(post_radius=0.0), ValueError, "post_radius"),
        (dict(post_radius=True), TypeError, "post_radius"),
        (dict(post_radius=0.02, frame_collision=(0.02, 0.02, 0.05)), ValueError, "not both"),
        (dict(frame_collision=(0.02, 0.02)), TypeError, "frame_collision"),
        (dict(frame_collision={"thickness": 0.02}), ValueError, "missing"),
        (dict(frame_collision=(0.0, 0.02, 0.05)), ValueError, "thickness"),
        (dict(samples_per_gate=1), ValueError, "samples_per_gate"),
        (dict(localize_window=0), ValueError, "localize_window"),
    ],
)
def test_config_checks(kw, err, match):
    with pytest.raises(err, match=match):
        CourseConfig(mode="gates", gen=GateGenConfig(num_envs=2, gate_width=0.1), **kw)


def test_config_width_rule_before_building(monkeypatch):
    spy = _Spy(monkeypatch)
    with pytest.raises(ValueError, match="gate_width"):
        Course(CourseConfig(mode="gates", gen=GateGenConfig(num_envs=2), post_radius=0.02))
    assert spy.built == []


def _line_path(course, laps: int, offset=(0.0, 0.0), reverse=False) -> np.ndarray:
    """[steps, E, 3]: every env flies its course line bead by bead from just behind gate 0
    (``laps`` laps; ``reverse``: backward from just past gate 0), displaced by ``offset`` =
    (lateral, vertical) in each bead's frame."""
    line = course.course_line.line
    L = line.N_max
    c = line.center.numpy().reshape(E, L, 3).astype(np.float64)
    t = line.tangent.numpy().reshape(E, L, 3).astype(np.float64)
    n = line.normal.numpy().reshape(E, L, 3).astype(np.float64)
    cnt = line.count.numpy()
    steps = laps * int(cnt.max()) + 2
    out = np.zeros((steps, E, 3), np.float32)
    for e in range(E):
        if cnt[e] == 0:
            continue
        for k in range(steps):
            j = min(k, laps * cnt[e])  # then hover at the last bead
            i = (1 - j if reverse else j - 1) % cnt[e]
            up = np.cross(t[e, i], n[e, i])
            out[k, e] = c[e, i] + offset[0] * n[e, i] + offset[1] * up
    return out


def _fly(course, path) -> dict:
    pos = wp.zeros(E, dtype=wp.vec3f, device=course.device)
    course.bind(position=pos, orientation=_quats(course.device), half_extents=_he(course.device))
    course.reset()
    wrong = np.zeros(E, np.int64)
    for p in path:
        pos.assign(p)
        res = course.step()
        wrong += res.events.wrong_way.numpy()
    ev = res.events
    return {"laps": ev.laps.numpy(), "progress": ev.progress.numpy(), "wrong": wrong}


def _quats(device):
    return wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)


def _he(device):
    return wp.full(E, wp.vec2f(0.01, 0.01), dtype=wp.vec2f, device=device)


def test_laps_through_the_openings_only(device):
    course = posts_course(device)
    valid = course.result.valid.numpy() != 0
    gates = course.result.count.numpy()
    assert valid.sum() >= 4
    on_line = _fly(course, _line_path(course, laps=2))
    np.testing.assert_array_equal(on_line["laps"][valid], 2)
    np.testing.assert_array_equal(on_line["progress"][valid], 2 * gates[valid])
    np.testing.assert_array_equal(on_line["laps"][~valid], 0)  # frozen
    # inside the opening (half size 0.05): every gate still counts
    inside = _fly(course, _line_path(course, laps=1, offset=(0.03, -0.03)))
    np.testing.assert_array_equal(inside["laps"][valid], 1)
    # beside the posts or over the top bar: no gate counts
    for off in ((0.12, 0.0), (-0.12, 0.0), (0.0, 0.12), (0.0, -0.12)):
        around = _fly(course, _line_path(course, laps=1, offset=off))
        np.testing.assert_array_equal(around["progress"], 0, err_msg=str(off))
    # backward through gate 0: one wrong-way event, no pass
    back = _fly(course, _line_path(course, laps=1, reverse=True)[: 2 * int(gates.max()) // 2])
    assert np.all(back["progress"][valid] == 0)
    assert np.all(back["wrong"][valid] >= 1)


def _mutable_course(device, collision):
    course = Course.gates(spec(device), collision=collision, localize_window=4, seeds=11)
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    course.bind(position=pos, orientation=_quats(device), half_extents=_he(device))
    for p in _line_path(course, laps=1)[:30]:
        pos.assign(p)
        course.step()
    return course


@pytest.mark.parametrize("collision", ["posts", "frames"])
def test_masked_regeneration_keeps_unmasked_envs_bitwise(device, collision):
    slot = 0.02 if collision == "posts" else FrameCollision(0.02, 0.02, 0.05)
    course = _mutable_course(device, slot)
    before = course_rows(course)
    assert any(k.startswith("localizer") for k in before)
    assert any(k.startswith("centerline") for k in before)
    regen = course.inputs["regen_mask"]
    regen.zero_()
    course.regenerate(mask=regen, advance=True)  # all-zero mask: an exact no-op
    same = course_rows(course)
    for k in before:
        assert same[k].tobytes() == before[k].tobytes(), k
    m = np.zeros(E, np.int32)
    m[[2, 5]] = 1
    regen.assign(m)
    course.regenerate(mask=regen, advance=True)
    after = course_rows(course)
    for k in before:
        assert after[k][m == 0].tobytes() == before[k][m == 0].tobytes(), k
    for k in ("result.position", "centerline.result.center"):
        assert after[k][m == 1].tobytes() != before[k][m == 1].tobytes(), k
    np.testing.assert_array_equal(course.progress.events.progress.numpy()[m == 1], 0)


def test_invalid_env_answers_as_no_course(device):
    # wide gates on a small course: many envs have crossing bars
    course = Course.gates(spec(device, gate_width=0.6), collision=0.02, seeds=0)
    valid = course.result.valid.numpy() != 0
    assert (~valid).any()
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    course.bind(position=pos, orientation=_quats(device), half_extents=_he(device))
    res = course.step()
    bad = ~valid
    assert np.isnan(res.frame.s.numpy()[bad]).all()
    assert np.isnan(res.frame.n.numpy()[bad]).all()
    np.testing.assert_array_equal(res.contacts.hit.numpy()[bad], 0)
    np.testing.assert_array_equal(res.events.dist_to_next.numpy()[bad], 0.0)
    np.testing.assert_array_equal(res.valid.numpy(), course.result.valid.numpy())
