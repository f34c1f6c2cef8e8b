"""Course inputs checked where they are given: the ComponentContext's arguments,
the checkpoint capacity of a track preset or CourseConfig before any generator is built,
and NumPy str values stored as str."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.course import Course, CourseConfig
from track_gen.generators import GeneratorBase
from track_gen.pipeline import presets
from track_gen.tools import Component, ComponentContext

E = 2
#: Checkpoints every 1e-4 track units on the default loops (up to (N_max + 1) * 0.06 = 23.1
#: track units long): 231,000 per env, more than the 65536 a course holds.
CAPACITY = (
    r"checkpoint_spacing = 0\.0001 gives 231,000 checkpoints per env for loops up to 23\.1 "
    r"track units, more than 65536: raise the spacing or pass max_checkpoints"
)


class _Spy:
    """Records every generator construction (GeneratorBase.__init__, the base of both)."""

    def __init__(self, monkeypatch):
        self.built = []
        real = GeneratorBase.__init__

        def spy(obj, *a, **k):
            self.built.append(type(obj).__name__)
            real(obj, *a, **k)

        monkeypatch.setattr(GeneratorBase, "__init__", spy)


@pytest.fixture(scope="module")
def generator():
    return TrackGenerator(TrackGenConfig(num_envs=E, device="cpu", num_points=64), seeds=1)


# ------------------------------------------------------------------------------ context (8)
@pytest.mark.parametrize(
    "value, match",
    [
        (3, "ComponentContext\\(generator\\): int lacks 'result'"),
        (None, "ComponentContext\\(generator\\): NoneType lacks 'result'"),
        (TrackGenConfig(num_envs=E), "takes a built generator, got a TrackGenConfig"),
        (presets.track(num_envs=E), "takes a built generator, got a PipelineSpec"),
    ],
)
def test_component_context_refuses_what_is_no_generator(value, match):
    with pytest.raises(TypeError, match=match):
        ComponentContext(value)


@pytest.mark.parametrize(
    "stream, err",
    [(3, TypeError), ("cpu", TypeError), (wp.Stream.__new__(wp.Stream), ValueError)],
)
def test_component_context_refuses_a_bad_stream(generator, stream, err):
    with pytest.raises(err, match="stream"):
        ComponentContext(generator, stream)


@pytest.mark.parametrize("comp", [3, "checkpoints", object(), None])
def test_component_context_add_refuses_what_is_no_component(generator, comp):
    ctx = ComponentContext(generator)
    with pytest.raises(TypeError, match="lacks"):
        ctx.add(comp)
    assert ctx.components == {}


def test_component_context_add_refuses_an_attached_component(generator):
    comp = Component(name="acme.x")
    ComponentContext(generator).add(comp)
    other = ComponentContext(generator)
    with pytest.raises(ValueError, match="already attached"):
        other.add(comp)
    assert other.components == {}


def test_component_context_check_refuses_planned_of_another_kind(generator):
    with pytest.raises(TypeError, match="planned"):
        ComponentContext(generator).check(Component(name="acme.x"), planned="acme.x")


# ------------------------------------------------------------------------------ capacity (7)
@pytest.mark.parametrize(
    "source",
    [
        lambda: TrackGenConfig(num_envs=E, device="cpu"),
        lambda: presets.track(num_envs=E, device="cpu"),
    ],
    ids=["config", "spec"],
)
def test_track_preset_refuses_the_checkpoint_capacity_before_building(source, monkeypatch):
    src = source()
    spy = _Spy(monkeypatch)
    with pytest.raises(ValueError, match=CAPACITY):
        Course.track(src, checkpoint_spacing=1e-4, seeds=1)
    assert spy.built == []


def test_track_preset_with_max_checkpoints_needs_no_capacity_bound():
    course = Course.track(
        presets.track(num_envs=E, device="cpu", num_points=64),
        checkpoint_spacing=1e-4,
        max_checkpoints=64,
        seeds=1,
    )
    assert course.checkpoints.position.shape[0] == E * 64


def test_course_config_refuses_the_checkpoint_capacity_when_made(monkeypatch):
    spy = _Spy(monkeypatch)
    with pytest.raises(ValueError, match=CAPACITY):
        CourseConfig(mode="track", gen=TrackGenConfig(num_envs=E), checkpoint_spacing=1e-4)
    assert spy.built == []


# ------------------------------------------------------------------------------ np.str_ (6)
def test_course_config_stores_numpy_str_as_str():
    cfg = CourseConfig(
        mode=np.str_("track"),
        gen=TrackGenConfig(num_envs=E),
        checkpoint_spacing=0.5,
        collision=np.str_("segments"),
    )
    assert type(cfg.mode) is str and type(cfg.collision) is str
