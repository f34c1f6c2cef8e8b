"""CourseConfig, the sdf collision in a course, and course-level invariants."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenConfig, TrackGenConfig
from track_gen.course import Course, CourseConfig
from track_gen.pipeline import presets

E = 8


def test_config_course_equals_preset(device):
    cfg = CourseConfig(
        mode="track",
        gen=TrackGenConfig(num_envs=E, device=device),
        seeds=42,
        collision="segments",
        checkpoint_spacing=0.6,
    )
    a = Course(cfg)
    b = Course.from_config(cfg)
    c = Course.track(
        presets.track(num_envs=E, device=device),
        checkpoint_spacing=0.6,
        collision="segments",
        seeds=42,
    )
    assert list(a.components) == list(c.components) == ["checkpoints", "progress", "collision"]
    for x in (a, b):
        assert x.result.center.numpy().tobytes() == c.result.center.numpy().tobytes()
        assert x.checkpoints.position.numpy().tobytes() == c.checkpoints.position.numpy().tobytes()


@pytest.mark.parametrize(
    "kw, err, match",
    [
        (dict(mode="track"), ValueError, "checkpoint_spacing"),
        (dict(mode="boat", checkpoint_spacing=0.6), ValueError, "mode"),
        (dict(mode="track", checkpoint_spacing=0.6, collision="boxes"), ValueError, "collision"),
        (dict(mode="track", checkpoint_spacing=0.6, sdf_resolution=64), ValueError, "sdf"),
        (dict(mode="track", checkpoint_spacing=0.6, max_boxes=2), ValueError, "max_boxes"),
        (
            dict(mode="track", checkpoint_spacing=0.6, max_checkpoints=2),
            ValueError,
            "max_checkpoints",
        ),
    ],
)
def test_config_checks(kw, err, match):
    with pytest.raises(err, match=match):
        CourseConfig(gen=TrackGenConfig(num_envs=2), **kw)


def test_config_refuses_wrong_family():
    with pytest.raises(TypeError, match="GateGenConfig in gates mode"):
        CourseConfig(mode="gates", gen=TrackGenConfig(num_envs=2))
    with pytest.raises(TypeError, match="TrackGenConfig"):
        CourseConfig(mode="track", gen=GateGenConfig(num_envs=2, gate_width=0.1))
    with pytest.raises(TypeError, match="TrackGenConfig"):
        CourseConfig(mode="track", gen=object(), checkpoint_spacing=0.6)
    with pytest.raises(ValueError, match="does not apply to mode='track'"):
        CourseConfig(
            mode="track", gen=TrackGenConfig(num_envs=2), checkpoint_spacing=0.6, post_radius=0.1
        )


def test_sdf_course_masked_regeneration_keeps_unmasked_bakes(device):
    course = Course.track(
        presets.track(num_envs=E, device=device), checkpoint_spacing=0.6, collision="sdf", seeds=1
    )
    sdf = course.collision.sdf.numpy().reshape(E, -1).copy()
    regen = course.inputs["regen_mask"]
    m = np.zeros(E, np.int32)
    m[2] = 1
    regen.assign(m)
    course.regenerate(mask=regen, advance=True)
    after = course.collision.sdf.numpy().reshape(E, -1)
    assert after[m == 0].tobytes() == sdf[m == 0].tobytes()
    assert after[2].tobytes() != sdf[2].tobytes()


def test_boxes_on_the_centerline_are_on_the_road(device):
    course = Course.track(
        presets.track(num_envs=E, device=device),
        checkpoint_spacing=0.6,
        collision="segments",
        seeds=3,
    )
    n = course.generator.layout.N_max
    center = course.result.center.numpy().reshape(E, n, 3)
    pos = wp.array(center[:, 5].astype(np.float32), dtype=wp.vec3f, device=device)
    quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)
    he = wp.full(E, wp.vec2f(0.01, 0.01), dtype=wp.vec2f, device=device)
    course.bind(position=pos, orientation=quat, half_extents=he)
    res = course.step()
    np.testing.assert_array_equal(res.contacts.oob.numpy(), 0)
    assert np.all(res.contacts.distance.numpy() > 0)
    assert res["collision"] is res.contacts


def test_config_heightfield_resolution(device):
    cfg = CourseConfig(
        mode="track",
        gen=TrackGenConfig(num_envs=4, device=device, z_profile="uniform", z_max=0.4),
        checkpoint_spacing=0.6,
        heightfield_resolution=64,
        seeds=2,
    )
    course = Course(cfg)
    assert list(course.components) == ["checkpoints", "progress", "heightfield"]
    assert course.heightfield is course.components["heightfield"].utility
    assert course.heightfield.field.height.shape[0] == 4 * 64 * 64
    with pytest.raises(ValueError, match="heightfield_resolution"):
        CourseConfig(
            mode="track",
            gen=TrackGenConfig(num_envs=2),
            checkpoint_spacing=0.6,
            heightfield_resolution=4,
        )
    with pytest.raises(ValueError, match="does not apply to mode='gates'"):
        CourseConfig(
            mode="gates", gen=GateGenConfig(num_envs=2, gate_width=0.1), heightfield_resolution=64
        )


def test_config_fields_are_the_declarations_under_their_aliases():
    """Each component field of CourseConfig is a declaration's keyword for CourseConfig (its
    alias), refused above the declaration's own upper bound with the declaration's range."""
    import dataclasses

    from track_gen.course import config as course_config

    tunables = {f.name: f.metadata.get("tunable") for f in dataclasses.fields(CourseConfig)}
    for t in (*course_config.TRACK_FIELDS, *course_config.GATE_FIELDS):
        name = t.keyword("CourseConfig")
        assert tunables[name] is t, name
    assert tunables["collision"].name == "method"
    assert tunables["localize_window"].name == "warm_window"
    assert tunables["heightfield_resolution"].name == "resolution"
    configs = {"track": TrackGenConfig(num_envs=2), "gates": GateGenConfig(num_envs=2)}
    fields = [("track", t) for t in course_config.TRACK_FIELDS]
    fields += [("gates", t) for t in course_config.GATE_FIELDS]
    for mode, t in fields:
        name = t.keyword("CourseConfig")
        if t.kind == "choice":
            kw = {name: "nope"}
        else:
            kw = {name: t.hi * 2}
        if mode == "track":
            kw = {"checkpoint_spacing": 0.5, **kw}
        if name == "sdf_resolution":
            kw["collision"] = "sdf"
        rule = re.escape(t.range_text().removesuffix(", or None"))
        with pytest.raises(ValueError, match=rf"CourseConfig\.{name} = .*{rule}"):
            CourseConfig(mode, configs[mode], **kw)


@pytest.mark.parametrize("mode", ["track", "gates"])
def test_a_config_course_makes_its_pipeline_once(monkeypatch, mode):
    """``Course(CourseConfig(...))`` makes the generator's pipeline once: the budget check
    counts it and the generator is built from that same spec."""
    from track_gen import GateGenerator, TrackGenerator

    cls = GateGenerator if mode == "gates" else TrackGenerator
    made = []
    original = cls._pipeline

    def counted(config):
        made.append(config)
        return original(config)

    monkeypatch.setattr(cls, "_pipeline", staticmethod(counted))
    if mode == "gates":
        cfg = CourseConfig(
            mode="gates", gen=GateGenConfig(num_envs=2, device="cpu", gate_width=0.1)
        )
    else:
        gen = TrackGenConfig(num_envs=2, device="cpu")
        cfg = CourseConfig(mode="track", gen=gen, checkpoint_spacing=0.6)
    course = Course(cfg, prepare=False)
    assert made == [cfg.gen]
    assert course.generator.config is cfg.gen


def test_config_options_reach_the_components_under_their_keywords():
    """Every component field of a CourseConfig reaches its component (the keywords come from
    the declarations' aliases): none is dropped or swapped."""
    gen = TrackGenConfig(num_envs=2, device="cpu", z_profile="uniform", z_max=0.4)
    cfg = CourseConfig(
        mode="track",
        gen=gen,
        checkpoint_spacing=0.7,
        max_checkpoints=40,
        collision="sdf",
        sdf_resolution=64,
        max_boxes=3,
        heightfield_resolution=48,
    )
    comps = Course(cfg, prepare=False).components
    assert (comps["checkpoints"].spacing, comps["checkpoints"].max_checkpoints) == (0.7, 40)
    band = comps["collision"]
    assert (band.method, band.sdf_resolution, band.max_boxes) == ("sdf", 64, 3)
    assert comps["heightfield"].resolution == 48
    default_sdf = Course(dataclasses.replace(cfg, sdf_resolution=None), prepare=False).components
    assert default_sdf["collision"].sdf_resolution == 128  # the declaration's default

    gates = GateGenConfig(num_envs=2, device="cpu", gate_width=0.1)
    frames = CourseConfig(
        mode="gates",
        gen=gates,
        frame_collision={"thickness": 0.02, "depth": 0.03, "agent_radius": 0.01},
        samples_per_gate=5,
        localize_window=3,
    )
    comps = Course(frames, prepare=False).components
    frame = comps["collision"]
    assert (frame.thickness, frame.depth, frame.agent_radius) == (0.02, 0.03, 0.01)
    assert comps["centerline"].samples_per_gate == 5
    assert comps["localizer"].warm_window == 3
    posts = Course(CourseConfig(mode="gates", gen=gates, post_radius=0.05), prepare=False)
    assert posts.components["collision"].radius == 0.05
