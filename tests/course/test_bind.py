"""``course.bind``: arbitrary arrays, non-arrays and names for every course input.

An unknown name is a TypeError; a non-array or an array of another dtype a TypeError; another
shape, device or a strided view a ValueError; in every refused case each component keeps the
arrays it had (``course.components[name].bound``, the same objects). An accepted bind hands
each array to every component declaring its name, and ``step()`` then answers without crashing
whatever the agents' positions (NaN, inf, huge).
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen.course import Course
from track_gen.pipeline import presets

from ..support.invariants import check_result
from ..support.strategies import examples, non_array_objects, wrong_arrays

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 3
INPUTS = {
    "position": wp.vec3f,
    "box_position": wp.vec3f,
    "orientation": wp.quatf,
    "half_extents": wp.vec2f,
}
UNKNOWN = ("velocity", "regen_mask", "reset_mask", "Position", "", "position ")


def _good(name, device, fill=0.0):
    dtype = INPUTS[name]
    n = wp.types.type_size(dtype)
    host = np.full((E, n), fill, np.float32)
    if dtype == wp.quatf:
        host[:, 3] = 1.0
    return wp.array(host, dtype=dtype, device=device)


def _bind_all(course, device):
    course.bind(**{n: _good(n, device) for n in ("position", "orientation", "half_extents")})


@pytest.fixture(scope="module")
def courses():
    cache = {}

    def get(device):
        if str(device) not in cache:
            spec = presets.track(num_envs=E, device=device, num_points=64)
            course = Course.track(spec, checkpoint_spacing=0.6, collision="segments", seeds=2)
            _bind_all(course, device)
            cache[str(device)] = course
        return cache[str(device)]

    return get


def _bound(course) -> dict:
    return {name: dict(comp.bound) for name, comp in course.components.items()}


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[c].keys() == b[c].keys() and all(a[c][k] is b[c][k] for k in a[c]) for c in a
    )


@st.composite
def bind_calls(draw, device):
    """``(kwargs, expected error)`` of one ``course.bind(**kwargs)`` call."""
    names = draw(st.lists(st.sampled_from(list(INPUTS)), min_size=1, max_size=4, unique=True))
    if draw(st.integers(0, 4), label="add an unknown name") == 0:
        at = draw(st.integers(0, len(names)))
        names.insert(at, draw(st.sampled_from(UNKNOWN), label="unknown name"))
    kwargs, errors = {}, []
    for name in names:
        dtype = INPUTS.get(name, wp.vec3f)
        how = draw(st.sampled_from(["good"] * 4 + ["wrong array"] * 3 + ["object"]), label=name)
        if how == "good":
            kwargs[name] = wp.zeros(E, dtype=dtype, device=device)
            errors.append(None)
        elif how == "wrong array":
            _label, err, make = draw(st.sampled_from(wrong_arrays(E, dtype, device)))
            kwargs[name] = make()
            errors.append(err)
        else:
            kwargs[name] = draw(st.sampled_from(non_array_objects(E)))
            errors.append(TypeError)
    if any(n not in INPUTS for n in names):
        return kwargs, TypeError  # names are checked before any array
    return kwargs, next((e for e in errors if e is not None), None)


@settings(max_examples=examples(100))
@given(data=st.data())
def test_refused_bind_keeps_every_previous_binding(courses, device, data):
    course = courses(device)
    kwargs, err = data.draw(bind_calls(device), label="bind")
    previous = _bound(course)
    event(err.__name__ if err else "accepted")
    if err is not None:
        with pytest.raises(err):
            course.bind(**kwargs)
        assert _same(_bound(course), previous), "a refused bind changed a binding"
        return
    course.bind(**kwargs)
    for comp in course.components.values():
        for spec in comp.INPUTS:
            if spec.name in kwargs:
                assert comp.bound[spec.name] is kwargs[spec.name]
            elif spec.default in kwargs:
                assert comp.bound[spec.name] is kwargs[spec.default]
    _bind_all(course, device)  # the next example starts from a full binding


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((1, 2, 3, 4, 5), {}),
        (("p",), {"position": "p"}),
    ],
)
def test_positional_misuse_is_a_type_error(courses, device, args, kwargs):
    course = courses(device)
    previous = _bound(course)
    p = _good("position", device)
    args = tuple(p for _ in args)
    kwargs = {k: p for k in kwargs}
    with pytest.raises(TypeError):
        course.bind(*args, **kwargs)
    assert _same(_bound(course), previous)


positions = st.floats(allow_nan=True, allow_infinity=True, width=32)


@settings(max_examples=examples(30))
@given(
    xyz=st.lists(st.tuples(positions, positions, positions), min_size=E, max_size=E),
    half=st.sampled_from([0.0, 0.05, 1e30, float("nan"), float("inf")]),
)
def test_step_answers_any_agent_state_without_crashing(courses, device, xyz, half):
    course = courses(device)
    pos = wp.array(np.asarray(xyz, np.float32), dtype=wp.vec3f, device=device)
    he = wp.array(np.full((E, 2), half, np.float32), dtype=wp.vec2f, device=device)
    course.bind(position=pos, orientation=_good("orientation", device), half_extents=he)
    res = course.step()
    ev = res.events
    for name in ("laps", "progress", "next_index"):
        assert (getattr(ev, name).numpy() >= 0).all(), name
    check_result(course.generator)
    course.reset()
    _bind_all(course, device)
