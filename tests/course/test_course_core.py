"""The Course core with toy components: ordering, bind, step, reset, regeneration body."""

from __future__ import annotations

import collections.abc
import dataclasses

import numpy as np
import pytest
import warp as wp

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.course import Course, StepResult
from track_gen.tools import Component, InputSpec

E = 4


@wp.kernel
def _count_steps(pos: wp.array(dtype=wp.vec3f), out: wp.array(dtype=wp.float32)):
    e = wp.tid()
    out[e] = out[e] + pos[e][0]


@wp.kernel
def _masked_fill(
    mask: wp.array(dtype=wp.int32), use_mask: int, value: float, out: wp.array(dtype=wp.float32)
):
    e = wp.tid()
    if use_mask == 0 or mask[e] != 0:
        out[e] = value


class Log:
    def __init__(self):
        self.calls = []


class Toy(Component):
    """Accumulates position.x every step; reset zeroes it; logs every hook."""

    name = "acme.toy"
    INPUTS = (InputSpec("position", wp.vec3f),)

    def __init__(self, log, **kw):
        super().__init__(**kw)
        self.log = log

    def attach(self, ctx):
        self.acc = wp.zeros(ctx.num_envs, dtype=wp.float32, device=ctx.device)
        self.log.calls.append(("attach", self.name))

    def on_generate(self, ctx, mask):
        self.log.calls.append(("on_generate", self.name))

    def step(self, ctx):
        wp.launch(
            _count_steps, ctx.num_envs, [self.bound["position"]], [self.acc], device=ctx.device
        )
        self.log.calls.append(("step", self.name))
        return self.acc

    def reset(self, ctx, mask):
        m = mask if mask is not None else self.acc
        wp.launch(
            _masked_fill,
            ctx.num_envs,
            [
                m if mask is not None else wp.zeros(1, dtype=wp.int32, device=ctx.device),
                int(mask is not None),
                0.0,
            ],
            [self.acc],
            device=ctx.device,
        )
        self.log.calls.append(("reset", self.name))


class Reader(Component):
    name = "acme.reader"
    source = "acme.toy"

    def __init__(self, log, **kw):
        super().__init__(**kw)
        self.log = log

    def attach(self, ctx):
        self.log.calls.append(("attach", self.name))

    def on_generate(self, ctx, mask):
        self.log.calls.append(("on_generate", self.name))

    def reset(self, ctx, mask):
        self.log.calls.append(("reset", self.name))


def gen(device, seeds=0):
    return TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device=device), seeds=seeds)


def test_order_phases_and_first_batch(device):
    log = Log()
    course = Course(gen(device), [Reader(log), Toy(log)])
    assert list(course.components) == ["acme.toy", "acme.reader"]
    assert log.calls[:2] == [("attach", "acme.toy"), ("attach", "acme.reader")]
    # prepare built the first batch: on_generate sorted, reset reversed
    assert log.calls[2:] == [
        ("on_generate", "acme.toy"),
        ("on_generate", "acme.reader"),
        ("reset", "acme.reader"),
        ("reset", "acme.toy"),
    ]
    assert np.all(course.result.generation.numpy() == 0)
    with pytest.raises(TypeError):
        course.components["x"] = 1


def test_bind_step_and_result_semantics(device):
    log = Log()
    course = Course(gen(device), [Toy(log)])
    with pytest.raises(RuntimeError, match="call bind"):
        course.step()
    pos = wp.array(
        np.tile([1.0, 0.0, 0.0], (E, 1)).astype(np.float32), dtype=wp.vec3f, device=device
    )
    course.bind(position=pos)
    r1 = course.step()
    r2 = course.step()
    assert r1 is r2 and isinstance(r1, StepResult)
    np.testing.assert_allclose(r1["acme.toy"].numpy(), 2.0)
    assert "acme.toy" in r1 and "progress" not in r1 and r1.get("collision") is None
    assert list(r1.keys()) == ["acme.toy"] and dict(r1)["acme.toy"] is r1["acme.toy"]
    assert bool(r1) and not isinstance(r1, collections.abc.Mapping)
    assert isinstance(r1, collections.abc.Container) and r1.__iter__ is None
    with pytest.raises(TypeError):
        iter(r1)
    with pytest.raises(KeyError, match="entries"):
        r1["nope"]
    assert r1.valid is course.result.valid
    assert [f.name for f in dataclasses.fields(r1)] == ["events", "contacts", "frame", "valid"]
    snap = r1.clone()
    course.step()
    np.testing.assert_allclose(snap["acme.toy"].numpy(), 2.0)
    r1.events = r1["acme.toy"]
    assert r1["progress"] is r1.events
    r1.events = None
    assert "progress" not in r1


def test_bind_refusals_leave_bindings(device):
    log = Log()
    course = Course(gen(device), [Toy(log)])
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    course.bind(pos)
    with pytest.raises(TypeError, match="unknown input 'speed'"):
        course.bind(position=pos, speed=pos)
    with pytest.raises(ValueError, match="position"):
        course.bind(position=wp.zeros(E + 1, dtype=wp.vec3f, device=device))
    with pytest.raises(TypeError, match="vec3f"):
        course.bind(position=wp.zeros(E, dtype=wp.float32, device=device))
    assert course.components["acme.toy"].bound["position"] is pos
    course.bind(position=pos, orientation=wp.zeros(E, dtype=wp.quatf, device=device))


def test_bind_refuses_generator_inputs(device):
    g = TrackGenerator(TrackGenConfig(generator="centerline", num_envs=E, device=device))
    course = Course(g, [], prepare=False)
    with pytest.raises(TypeError, match="is an input of the generator"):
        course.bind(**{"centerline.xy": g.inputs["centerline.xy"]})


def test_masked_regenerate_and_reset(device):
    log = Log()
    course = Course(gen(device), [Toy(log)])
    pos = wp.array(
        np.tile([1.0, 0.0, 0.0], (E, 1)).astype(np.float32), dtype=wp.vec3f, device=device
    )
    course.bind(position=pos)
    course.step()
    before = course.result.center.numpy().copy()
    regen = course.inputs["regen_mask"]
    regen.assign(np.array([0, 1, 0, 0], np.int32))
    course.regenerate(mask=regen, advance=True)
    after = course.result.center.numpy()
    n = course.generator.layout.N_max
    assert before[:n].tobytes() == after[:n].tobytes()
    assert before[n : 2 * n].tobytes() != after[n : 2 * n].tobytes()
    np.testing.assert_allclose(course.components["acme.toy"].acc.numpy(), [1, 0, 1, 1])
    rm = course.inputs["reset_mask"]
    rm.assign(np.array([1, 0, 0, 0], np.int32))
    course.reset(rm)
    np.testing.assert_allclose(course.components["acme.toy"].acc.numpy(), [0, 0, 1, 1])
    course.reset()
    np.testing.assert_allclose(course.components["acme.toy"].acc.numpy(), 0)
    # an all-zero mask is an exact identity
    course.step()
    snap = course.result.center.numpy().copy(), course.components["acme.toy"].acc.numpy().copy()
    regen.zero_()
    course.regenerate(mask=regen, advance=True)
    assert course.result.center.numpy().tobytes() == snap[0].tobytes()
    assert course.components["acme.toy"].acc.numpy().tobytes() == snap[1].tobytes()


def test_generate_with_seeds_and_ownership(device):
    g = gen(device, seeds=5)
    old = Course(g, [])
    new = Course(g, [])
    with pytest.raises(RuntimeError, match="another Course"):
        old.regenerate()
    new.generate(seeds=50)
    fresh = Course(gen(device, seeds=50), [])
    assert fresh.result.center.numpy().tobytes() == new.result.center.numpy().tobytes()
    bound = TrackGenerator(
        TrackGenConfig(generator="polar", num_envs=E, device=device),
        seeds=wp.zeros(E, dtype=wp.int32, device=device),
    )
    with pytest.raises(RuntimeError, match="your own array"):
        Course(bound, []).generate(seeds=1)


def test_construction_refusals(device):
    log = Log()
    with pytest.raises(TypeError, match="Course.track"):
        Course(TrackGenConfig(num_envs=E, device=device), [])
    with pytest.raises(TypeError, match="sequence"):
        Course(gen(device), Toy(log))
    with pytest.raises(ValueError, match="unique"):
        Course(gen(device), [Toy(log), Toy(log)])
    with pytest.raises(ValueError, match="not a component"):
        Course(gen(device), [Reader(log)])
    a, b = Toy(log, name="a", after=["b"]), Toy(log, name="b", after=["a"])
    with pytest.raises(ValueError, match="cycle"):
        Course(gen(device), [a, b])

    class NoHooks:
        name = "x"

    with pytest.raises(TypeError, match="subclass"):
        Course(gen(device), [NoHooks()])
    t = Toy(log)
    Course(gen(device), [t])
    with pytest.raises(ValueError, match="already attached"):
        Course(gen(device), [t])


def test_prepare_false_and_capture(device):
    course = Course(gen(device), [], prepare=False)
    assert np.all(course.result.generation.numpy() == -1)
    with wp.ScopedCapture(device=device):
        with pytest.raises(Exception, match="prepare"):
            course.regenerate()
    course.prepare()
    assert np.all(course.result.generation.numpy() == 0)
    mask = course.inputs["regen_mask"]
    with wp.ScopedCapture(device=device) as cap:
        course.regenerate(mask=mask, advance=True)
    mask.assign(np.array([1, 0, 0, 1], np.int32))
    wp.capture_launch(cap.graph)
    np.testing.assert_array_equal(course.result.generation.numpy(), [1, 0, 0, 1])


class Fussy(Component):
    """Refuses a binding whose position array has a given pointer."""

    name = "acme.fussy"
    INPUTS = (InputSpec("position", wp.vec3f),)

    def __init__(self, bad_ptr=None, **kw):
        super().__init__(**kw)
        self.bad_ptr = bad_ptr

    def on_bind(self, arrays):
        if (
            self.bad_ptr is not None
            and arrays.get("position") is not None
            and arrays["position"].ptr == self.bad_ptr
        ):
            raise RuntimeError("refused")


def test_bind_rolls_back_when_on_bind_raises(device):
    log = Log()
    toy, fussy = Toy(log), Fussy()
    course = Course(gen(device), [toy, fussy])
    good = wp.zeros(E, dtype=wp.vec3f, device=device)
    course.bind(position=good)
    bad = wp.zeros(E, dtype=wp.vec3f, device=device)
    fussy.bad_ptr = bad.ptr
    with pytest.raises(RuntimeError, match="refused"):
        course.bind(position=bad)
    assert toy.bound["position"] is good and fussy.bound["position"] is good


def test_subclass_init_runs_for_every_path(device):
    seen = []

    class MyCourse(Course):
        def __init__(self, generator, components=(), *, stream=None, prepare=True):
            seen.append(type(generator).__name__)
            super().__init__(generator, components, stream=stream, prepare=prepare)

    from track_gen.course import CourseConfig

    MyCourse.track(presets_track(device), checkpoint_spacing=0.6, seeds=1)
    MyCourse.from_config(
        CourseConfig(
            mode="track", gen=TrackGenConfig(num_envs=E, device=device), checkpoint_spacing=0.6
        )
    )
    assert seen == ["TrackGenerator", "TrackGenerator"]


def presets_track(device):
    from track_gen.pipeline import presets

    return presets.track(num_envs=E, device=device)


def test_rebind_after_capture_warns_once(device):
    from track_gen import RebindAfterCaptureWarning

    log = Log()
    course = Course(gen(device), [Toy(log)])
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    course.bind(position=pos)
    course.bind(position=pos)  # no capture yet: silent
    with wp.ScopedCapture(device=device):
        course.step()
    with pytest.warns(RebindAfterCaptureWarning):
        course.bind(position=wp.zeros(E, dtype=wp.vec3f, device=device))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        course.bind(position=pos)  # once only


def test_enqueue_generate_records_into_a_capture(device):
    course = Course(gen(device), [])
    mask = course.inputs["regen_mask"]
    with wp.ScopedCapture(device=device) as cap:
        course.enqueue_generate(mask=mask, advance=True)
    assert np.all(course.result.generation.numpy() == 0)  # recorded, not run
    mask.assign(np.array([0, 0, 1, 0], np.int32))
    wp.capture_launch(cap.graph)
    np.testing.assert_array_equal(course.result.generation.numpy(), [0, 0, 1, 0])
    with pytest.raises(TypeError, match="advance"):
        course.enqueue_generate(advance=1)
    before = course.result.center.numpy().copy()
    course.generate()  # no seeds: every env rebuilt from its (seed, epoch)
    assert course.result.center.numpy().tobytes() == before.tobytes()


class Flaky(Component):
    """Raises in on_generate while ``fail`` is set (after the generator committed)."""

    name = "acme.flaky"

    def __init__(self):
        super().__init__()
        self.fail = False

    def on_generate(self, ctx, mask):
        if self.fail:
            raise RuntimeError("acme.flaky failed")


def test_component_raising_in_the_body_marks_the_course_stale(device):
    flaky = Flaky()
    course = Course(gen(device), [Toy(Log()), flaky])
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    course.bind(position=pos)
    mask = course.inputs["regen_mask"]
    mask.assign(np.array([1, 0, 0, 0], np.int32))
    flaky.fail = True
    with pytest.raises(RuntimeError, match="acme.flaky failed"):
        course.regenerate(mask=mask, advance=True)
    # the generator committed env 0 but a component did not follow: refuse until a full one
    for call in (course.step, course.reset, lambda: course.regenerate(mask=mask)):
        with pytest.raises(RuntimeError, match="course.regenerate"):
            call()
    flaky.fail = False
    course.regenerate()
    course.step()
    course.regenerate(mask=mask, advance=True)
