"""Masks of ``generate`` / ``enqueue`` and of ``course.regenerate`` / ``course.reset``.

A mask is None or a contiguous ``[E]`` int32 ``wp.array`` on the generator's device. Anything
else is refused (TypeError for a non-array or another dtype, ValueError for another shape,
device or a strided view) with nothing changed: result, seeds and epochs byte-identical. A
valid mask of arbitrary int32 contents rebuilds exactly the envs with ``mask[e] != 0`` (as a
full regeneration at the same seed and epoch would) and leaves every other env bitwise
unchanged.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.course import Course
from track_gen.pipeline import presets

from ..support.invariants import arrays_bytes, check_result, env_rows, result_bytes
from ..support.strategies import INT32_MAX, INT32_MIN, examples, non_array_objects, wrong_arrays

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 4
FAMILIES = ("track", "gates")

#: int32 mask contents: zeros and arbitrary values (negative, huge) in every proportion.
mask_values = st.lists(
    st.one_of(
        st.just(0),
        st.integers(INT32_MIN, INT32_MAX),
        st.sampled_from([1, -1, INT32_MIN, INT32_MAX]),
    ),
    min_size=E,
    max_size=E,
)


def _bad_masks(device):
    """``(label, expected error, factory)`` of every kind of refused mask."""
    objects = [o for o in non_array_objects(E) if o is not None]  # None: every env
    cases = [(f"{type(o).__name__} {o!r:.20}", TypeError, lambda o=o: o) for o in objects]
    return cases + wrong_arrays(E, wp.int32, device)


def _config(family, device, **kw):
    base = {"num_envs": E, "device": device, "num_points": 64}
    if family == "gates":
        return GateGenConfig(gate_width=0.1, **base, **kw)
    return TrackGenConfig(**base, **kw)


@pytest.fixture(scope="module")
def generators():
    """``(family, device) -> (generator, reference generator, a stable mask of our own)``."""
    cache = {}

    def get(family, device):
        key = (family, str(device))
        if key not in cache:
            cls = GateGenerator if family == "gates" else TrackGenerator
            gen = cls(_config(family, device), seeds=21)
            ref = cls(_config(family, device), seeds=21)
            gen.generate()
            cache[key] = (gen, ref, wp.zeros(E, dtype=wp.int32, device=device))
        return cache[key]

    return get


def _state(gen) -> bytes:
    return result_bytes(gen.result) + arrays_bytes(gen.seeds.seeds, gen.seeds.epochs)


# ------------------------------------------------------------------------------ generators
@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=examples(50))
@given(data=st.data())
def test_refused_mask_changes_nothing(generators, family, device, data):
    gen, _, _ = generators(family, device)
    label, err, make = data.draw(st.sampled_from(_bad_masks(device)), label="mask")
    call = data.draw(st.sampled_from(["generate", "enqueue"]), label="call")
    advance = data.draw(st.booleans(), label="advance")
    mask = make()
    before = _state(gen)
    with pytest.raises(err):
        getattr(gen, call)(advance=advance, mask=mask)
    assert _state(gen) == before, f"refused mask ({label}) changed the batch"


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("advance", [1, 0, None, "True", 1.0, np.int32(1), [True]])
def test_non_bool_advance_is_refused_with_type_error(generators, family, advance, device):
    gen, _, _ = generators(family, device)
    before = _state(gen)
    for call in (gen.generate, gen.enqueue):
        with pytest.raises(TypeError, match="advance"):
            call(advance=advance)
    assert _state(gen) == before


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=examples(50))
@given(values=mask_values, advance=st.booleans(), data=st.data())
def test_valid_mask_rebuilds_exactly_the_masked_envs(
    generators, family, device, values, advance, data
):
    gen, ref, own = generators(family, device)
    mask = data.draw(st.sampled_from([gen.inputs["regen_mask"], own]), label="mask array")
    call = data.draw(st.sampled_from(["generate", "enqueue"]), label="call")
    on = np.asarray(values, np.int64) != 0
    rows = env_rows(gen.result, E)
    epochs = gen.seeds.epochs.numpy().copy()
    mask.assign(np.asarray(values, np.int32))
    try:
        getattr(gen, call)(advance=advance, mask=mask)
    finally:
        mask.zero_()
    after = env_rows(gen.result, E)
    new_epochs = gen.seeds.epochs.numpy()
    np.testing.assert_array_equal(new_epochs, epochs + (on & advance))
    for e in np.flatnonzero(~on):
        assert after[e] == rows[e], f"unmasked env {e} changed"
    generation = gen.result.generation.numpy()
    np.testing.assert_array_equal(generation[on], new_epochs[on])
    check_result(gen)
    # a masked env equals a full regeneration at the same (seed, epoch)
    ref.seeds.epochs.assign(new_epochs)
    ref.generate()
    expected = env_rows(ref.result, E)
    for e in np.flatnonzero(on):
        assert after[e] == expected[e], f"masked env {e} differs from a full regeneration"


def test_all_zero_mask_is_an_exact_no_op(generators, device):
    for family in FAMILIES:
        gen, _, own = generators(family, device)
        before = _state(gen)
        gen.generate(advance=True, mask=own)
        gen.enqueue(advance=True, mask=own)
        assert _state(gen) == before


# ------------------------------------------------------------------------------ courses
def _bind_agents(course, device):
    cp = course.checkpoints.position.numpy().reshape(E, -1, 3)
    start = np.nan_to_num(cp[:, 0, :]) - np.float32(0.01)
    course.bind(
        position=wp.array(start.astype(np.float32), dtype=wp.vec3f, device=device),
        orientation=wp.array(np.tile([0.0, 0.0, 0.0, 1.0], (E, 1)), dtype=wp.quatf, device=device),
        half_extents=wp.array(np.full((E, 2), 0.05), dtype=wp.vec2f, device=device),
    )


@pytest.fixture(scope="module")
def courses():
    cache = {}

    def get(device):
        if str(device) not in cache:
            spec = presets.track(num_envs=E, device=device, num_points=64)
            course = Course.track(spec, checkpoint_spacing=0.6, collision="segments", seeds=1)
            _bind_agents(course, device)
            course.step()
            cache[str(device)] = (course, wp.zeros(E, dtype=wp.int32, device=device))
        return cache[str(device)]

    return get


def _course_parts(course) -> list:
    col = course.collision
    return [
        course.result,
        course.checkpoints,
        course.progress.events,
        [col.beads, col.strip, col.chunk_box],
        [course.seeds.seeds, course.seeds.epochs],
    ]


def _course_rows(course) -> list[bytes]:
    """Per-env bytes of everything a course holds per env."""
    out = [b""] * E
    for part in _course_parts(course):
        arrays = (
            [getattr(part, f.name) for f in dataclasses.fields(part)]
            if dataclasses.is_dataclass(part)
            else part
        )
        for a in arrays:
            per = a.numpy().reshape(E, -1)
            out = [out[e] + per[e].tobytes() for e in range(E)]
    return out


@settings(max_examples=examples(50))
@given(data=st.data())
def test_refused_course_mask_changes_nothing(courses, device, data):
    course, _ = courses(device)
    label, err, make = data.draw(st.sampled_from(_bad_masks(device)), label="mask")
    call = data.draw(
        st.sampled_from(["regenerate", "regenerate_advance", "enqueue_generate", "reset"])
    )
    mask = make()
    before = _course_rows(course)
    with pytest.raises(err):
        if call == "reset":
            course.reset(mask)
        elif call == "regenerate_advance":
            course.regenerate(mask=mask, advance=True)
        else:
            getattr(course, call)(mask=mask)
    assert _course_rows(course) == before, f"refused course mask ({label}) changed the course"


@settings(max_examples=examples(40))
@given(values=mask_values, advance=st.booleans(), data=st.data())
def test_course_regenerate_changes_only_masked_envs(courses, device, values, advance, data):
    course, own = courses(device)
    mask = data.draw(st.sampled_from([course.inputs["regen_mask"], own]), label="mask array")
    on = np.asarray(values, np.int64) != 0
    course.step()  # some progress state to keep
    before = _course_rows(course)
    epochs = course.seeds.epochs.numpy().copy()
    mask.assign(np.asarray(values, np.int32))
    try:
        course.regenerate(mask=mask, advance=advance)
    finally:
        mask.zero_()
    after = _course_rows(course)
    for e in np.flatnonzero(~on):
        assert after[e] == before[e], f"unmasked env {e} changed"
    np.testing.assert_array_equal(course.seeds.epochs.numpy(), epochs + (on & advance))
    check_result(course.generator)
    ev = course.progress.events
    for name in ("laps", "progress", "next_index"):
        assert (getattr(ev, name).numpy()[on] == 0).all(), name


@settings(max_examples=examples(40))
@given(values=mask_values)
def test_course_reset_touches_only_masked_runtime_state(courses, device, values):
    course, own = courses(device)
    on = np.asarray(values, np.int64) != 0
    course.step()
    rows = _course_rows(course)
    generated = result_bytes(course.result) + result_bytes(course.checkpoints)
    own.assign(np.asarray(values, np.int32))
    try:
        course.reset(own)
    finally:
        own.zero_()
    assert result_bytes(course.result) + result_bytes(course.checkpoints) == generated
    after = _course_rows(course)
    for e in np.flatnonzero(~on):
        assert after[e] == rows[e], f"unmasked env {e} changed"
    ev = course.progress.events
    assert (ev.dist_to_next.numpy()[on] == 0).all()
