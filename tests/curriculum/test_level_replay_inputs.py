"""Every input of :class:`track_gen.curriculum.LevelReplay`, fuzzed: the constructor's fields
(refused with the declared TypeError / ValueError naming the field, accepted and stored as
normalized otherwise), the course, the arrays of ``update`` and ``regenerate`` (a refused call
changes no buffer, seed or course row) and any float32 signal / int32 done values on the
device (the state follows the NumPy oracle, every score stays finite)."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from track_gen import tools
from track_gen.course import Course
from track_gen.curriculum import (
    BUFFER_SIZE,
    REPLAY_PROB,
    SCORE,
    SEED,
    STALENESS,
    TEMPERATURE,
    LevelReplay,
)
from track_gen.pipeline import presets

from ..support.course_state import course_rows
from ..support.strategies import (
    examples,
    expected_error,
    non_array_objects,
    values,
    wrong_arrays,
)
from .oracle import Oracle

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 4
VALID = {"buffer_size": 3, "replay_prob": 0.5}
FIELDS = (BUFFER_SIZE, REPLAY_PROB, SCORE, SEED, STALENESS, TEMPERATURE)
_COURSES: dict[str, Course] = {}


def course_on(device) -> Course:
    if device not in _COURSES:
        _COURSES[device] = Course.track(
            presets.track(num_envs=E, device=device), checkpoint_spacing=0.6, seeds=5
        )
    return _COURSES[device]


def everything(lr: LevelReplay) -> dict:
    out = {f"lr.{k}": np.asarray(v).tobytes() for k, v in lr.snapshot().items()}
    out.update({k: v.tobytes() for k, v in course_rows(lr.course, seeds=True).items()})
    return out


#: The seed's own edge cases, besides ``values()``'s fixed list.
SEED_EDGES = [0, -1, 2**31 - 1, -(2**31), 2**31, -(2**31) - 1, np.int64(7), np.int32(-3)]
SEED_EDGES += [1.0, np.float32(2), True, np.bool_(False), None, "1", 2**70, float("nan")]


def field_values(field):
    if field is SEED:
        return st.one_of(st.sampled_from(SEED_EDGES), values(SEED))
    return values(field)


@pytest.mark.parametrize("field", FIELDS, ids=lambda t: t.name)
def test_constructor_fields(field):
    course = course_on("cpu")

    @settings(max_examples=examples(40))
    @given(value=field_values(field))
    def run(value):
        kwargs = dict(VALID, **{field.name: value})
        err = expected_error(field, value)
        if err is None and field.name == "score" and value == "regret":
            err = ValueError  # this course has no racing line
        if err is not None:
            with pytest.raises(err, match=field.name):
                LevelReplay(course, **kwargs)
            return
        lr = LevelReplay(course, **kwargs)
        assert getattr(lr, field.name, None) == field.check(value, "x") or field.name == "score"

    run()


@pytest.mark.parametrize("obj", [None, 3, "course", object()], ids=lambda o: type(o).__name__)
def test_the_course_must_be_a_course(obj):
    with pytest.raises(TypeError, match="course must be"):
        LevelReplay(obj, **VALID)


def test_seeds_bound_to_your_array_are_refused(device):
    mine = wp.array(np.arange(E, dtype=np.int32), device=device)
    course = Course.track(
        presets.track(num_envs=E, device=device), checkpoint_spacing=0.6, seeds=mine
    )
    with pytest.raises(ValueError, match="your own array"):
        LevelReplay(course, **VALID)


def test_regret_needs_a_racing_line(device):
    with pytest.raises(ValueError, match="racing_line"):
        LevelReplay(course_on(device), score="regret", **VALID)


def _bad_arrays(dtype, device):
    cases = [(label, err, make) for label, err, make in wrong_arrays(E, dtype, device)]
    cases += [(repr(o)[:20], TypeError, lambda o=o: o) for o in non_array_objects(E)]
    return cases


@pytest.mark.parametrize("argument", ["done", "score", "mask"])
def test_refused_arrays_change_nothing(device, argument):
    lr = LevelReplay(course_on(device), buffer_size=2, replay_prob=1.0)
    ones = wp.ones(E, dtype=wp.int32, device=device)
    signal = wp.ones(E, dtype=wp.float32, device=device)
    lr.update(ones, signal)
    lr.update(ones, signal)  # the buffer is full: a call would replay
    before = everything(lr)
    dtype = wp.float32 if argument == "score" else wp.int32
    for label, err, make in _bad_arrays(dtype, device):
        bad = make()
        if argument == "mask" and bad is None:
            continue  # None: every env
        with pytest.raises(err, match=argument):
            if argument == "mask":
                lr.regenerate(bad)
            elif argument == "done":
                lr.update(bad, signal)
            else:
                lr.update(ones, bad)
        assert everything(lr) == before, label


@pytest.mark.parametrize("call", ["update", "regenerate"])
def test_a_wrong_stream_is_refused(device, call):
    lr = LevelReplay(course_on(device), **VALID)
    ones = wp.ones(E, dtype=wp.int32, device=device)
    before = everything(lr)
    with pytest.raises(TypeError, match="stream"):
        if call == "update":
            lr.update(ones, wp.ones(E, dtype=wp.float32, device=device), stream="s")
        else:
            lr.regenerate(ones, stream=3)
    assert everything(lr) == before


float32_any = hnp.arrays(np.float32, E, elements=st.floats(width=32))
done_any = hnp.arrays(np.int32, E, elements=st.integers(-(2**31), 2**31 - 1))


@pytest.mark.parametrize("rule", ["value_loss", "learnability", "regret"])
def test_any_signal_follows_the_oracle(rule):
    extra = [tools.RacingLine(0.04, a_lat=8.0, a_lon=4.0, v_max=6.0)] if rule == "regret" else []
    course = Course.track(
        presets.track(num_envs=E, device="cpu"), checkpoint_spacing=0.6, extra=extra, seeds=9
    )
    opts = {"buffer_size": 2, "replay_prob": 0.7, "score": rule, "staleness": 0.2}
    opts.update({"temperature": 0.3, "seed": 1})
    lr = LevelReplay(course, **opts)
    seeds, epochs = course.seeds.snapshot()
    oracle = Oracle(seeds, epochs, course.seeds.effective_seeds(), **opts)
    done_w = wp.zeros(E, dtype=wp.int32)
    signal_w = wp.zeros(E, dtype=wp.float32)

    @settings(max_examples=examples(25))
    @given(done=done_any, signal=float32_any)
    def run(done, signal):
        done_w.assign(done)
        signal_w.assign(signal)
        par = course.racing_line.line.lap_time.numpy() if rule == "regret" else None
        lr.update(done_w, signal_w)
        oracle.update(done, signal, par)
        lr.regenerate(done_w)
        oracle.regenerate(done)
        got = lr.snapshot()
        for key, value in oracle.state().items():
            np.testing.assert_array_equal(got[key], value, err_msg=key)
        assert np.isfinite(got["score"]).all()

    run()
