"""``track-gen explore``'s JSON endpoints under arbitrary JSON values.

Every setting a request carries (family, seed, the page's config fields, each dynamic
parameter, randomizer ranges, the env of ``/api/next``) and whole request bodies get arbitrary
JSON values (nested lists and objects, huge and non-finite numbers, strings, null, bools) and
raw bytes. Every answer is 200 or 400, never 500; a 400 carries the error text and leaves the
settings, the generator and its batch exactly as they were; the server keeps serving.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen.explore import Settings

from ..support.strategies import examples
from . import Served

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

#: Config fields the page sends (cheap to build at any accepted value).
PAGE_FIELDS = ("generator", "num_envs", "half_width", "z_profile", "rad", "gate_width")

EDGE = st.sampled_from(
    [0, 1, -1, 2, 16, 257, 2**31, -(2**31) - 1, 2**64, 10**400, 0.0, -0.0, 1e-30, 1e30,
     float("nan"), float("inf"), -float("inf"), "", "bezier", "polar", "gates", "track",
     "uniform", "mix", "centerline", "real_track", True, False, None]
)  # fmt: skip
SCALARS = st.one_of(
    EDGE,
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
E = 2
#: Values the page would send for each config field (drawn half the time).
PLAUSIBLE = {
    "generator": st.sampled_from(["bezier", "polar", "hull", "voronoi", "checkpoint"]),
    "num_envs": st.integers(1, 4),
    "half_width": st.floats(0.02, 0.3),
    "z_profile": st.sampled_from(["flat", "uniform", "random_walk", "noise"]),
    "rad": st.floats(0.0, 2.0),
    "gate_width": st.floats(0.0, 0.5),
}


@pytest.fixture(scope="module")
def served():
    s = Served(Settings(config={"generator": "polar", "num_envs": E}))
    yield s
    s.close()


def _snapshot(s: Served):
    gen = s.state.generator
    r = gen.result
    key = r.position if s.state.settings.family == "gates" else r.center
    return (s.state.settings, id(gen), key.numpy().tobytes(), r.generation.numpy().tobytes())


def _check(s: Served, status: int, out, before) -> None:
    assert status in (200, 400), (status, out)
    event(f"HTTP {status}")
    if status == 400:
        assert isinstance(out["error"], str) and out["error"]
        assert _snapshot(s) == before  # nothing half-applied
    else:
        assert len(out["courses"]) == s.state.generator.num_envs <= 256
        assert 0.0 <= out["yield"] <= 1.0
    assert s.get("/api/state")[0] == 200  # still serving


def _param_names(s: Served) -> list[str]:
    return list(s.state.generator.params)


@settings(max_examples=examples(40), deadline=None)
@given(data=st.data(), kind=st.sampled_from(["family", "seed", "config", "params", "randomize"]))
def test_each_setting_takes_any_json_value(served, data, kind):
    value = data.draw(JSON, label="value")
    plausible = data.draw(st.booleans(), label="plausible")
    if kind == "config":
        field = data.draw(st.sampled_from(PAGE_FIELDS), label="field")
        if plausible:
            value = data.draw(PLAUSIBLE[field], label="plausible value")
        body = {"config": {field: value}}
    elif kind in ("params", "randomize"):
        names = [*_param_names(served), "nope", "polar", ""]
        name = data.draw(st.sampled_from(names), label="name")
        if plausible and name in served.state.generator.params:
            spec = served.state.generator.params.spec(name)
            inside = st.floats(float(spec.lo), min(float(spec.hi), float(spec.lo) + 10.0))
            value = data.draw(inside, label="inside")
            if kind == "randomize":
                value = sorted([value, data.draw(inside, label="other end")])
        elif kind == "randomize" and data.draw(st.booleans(), label="pair"):
            value = [value, data.draw(JSON, label="hi")]
        body = {kind: {name: value}}
    elif plausible:
        family = st.sampled_from(["track", "gates"])
        value = data.draw(family if kind == "family" else st.integers(-1000, 1000), label="ok")
        body = {kind: value}
    else:
        body = {kind: value}
    before = _snapshot(served)
    status, out = served.post("/api/generate", body)
    _check(served, status, out, before)
    if status == 200 and served.state.generator.num_envs > 16:
        # keep the module's server small for the next examples
        assert served.post("/api/generate", {"config": {"num_envs": E}})[0] == 200


@settings(max_examples=examples(40), deadline=None)
@given(body=JSON, path=st.sampled_from(["/api/generate", "/api/next"]))
def test_whole_bodies_take_any_json_value(served, body, path):
    before = _snapshot(served)
    status, out = served.post(path, body)
    _check(served, status, out, before)


@settings(max_examples=examples(40), deadline=None)
@given(env=st.one_of(st.integers(0, E - 1), st.none(), JSON))
def test_next_takes_any_env(served, env):
    before = _snapshot(served)
    epochs = served.state.generator.seeds.epochs.numpy().copy()
    status, out = served.post("/api/next", {"env": env})
    _check(served, status, out, before)
    if status == 200:
        after = served.state.generator.seeds.epochs.numpy()
        n = served.state.generator.num_envs
        step = np.ones(n, np.int32) if env is None else np.eye(n, dtype=np.int32)[env]
        np.testing.assert_array_equal(after, epochs + step)


@settings(max_examples=examples(40), deadline=None)
@given(raw=st.binary(max_size=64) | st.text(max_size=32).map(str.encode))
def test_raw_bytes_are_refused_cleanly(served, raw):
    before = _snapshot(served)
    status, out = served.post("/api/generate", raw=raw or b" ")
    _check(served, status, out, before)


def test_deep_nesting_is_refused(served):
    before = _snapshot(served)
    raw = ("[" * 100000 + "]" * 100000).encode()
    status, out = served.post("/api/generate", raw=raw)
    assert status == 400 and _snapshot(served) == before
    deep = json.dumps({"config": {"rad": [[[[[[1]]]]]]}})
    status, out = served.post("/api/generate", raw=deep.encode())
    assert status == 400 and "rad" in out["error"]
