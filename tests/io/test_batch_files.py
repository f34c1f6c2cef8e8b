"""Batch files (``io.read_batch`` / ``io.rebuild``) whose seeds, epochs and params hold values
of every kind: huge ints, floats, NaN, strings, bools, in JSON entries of any declared dtype
and npz entries of any NumPy dtype.

A file's value goes through the check the same value gets in code and is never converted:
seeds are ints in the int32 range, epochs -1 or ints in ``[0, 2**31 - 1]``, params one real
number per env inside the field's declared range (checked by ``rebuild``, with or without
``verify``). A refused file is a ValueError naming the file; an accepted one holds exactly the
values written."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.io import read_batch, rebuild, write_json, write_npz

from ..support.strategies import (
    INT32_MAX,
    INT32_MIN,
    JSON_DTYPES,
    NPZ_DTYPES,
    examples,
    expected_error,
    expected_host_values,
    expected_int_entry,
    file_scalars,
    json_array_oracle,
    other_objects,
    per_env_lists,
)

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 2
PARAM = "polar.radial_jitter"
FIXTURE_OK = [HealthCheck.function_scoped_fixture]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """(generator, JSON document, npz entries) of a small polar batch written with its
    generator."""
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device="cpu"), seeds=5)
    gen.generate()
    d = tmp_path_factory.mktemp("batch")
    write_json(gen.result, d / "b.json", generator=gen)
    write_npz(gen.result, d / "b.npz", generator=gen)
    with np.load(d / "b.npz") as z:
        entries = dict(z)
    return gen, json.loads((d / "b.json").read_text()), entries


def _write_json(doc: dict, name: str, dtype, data) -> Path:
    d = Path(tempfile.mkdtemp())
    doc = json.loads(json.dumps(doc))
    doc["arrays"][name] = {"dtype": dtype, "shape": [len(data)], "data": data}
    path = d / "f.json"
    path.write_text(json.dumps(doc))
    return path


def _refused(call, path) -> None:
    event("refused")
    with pytest.raises(ValueError) as info:
        call()
    assert str(path) in str(info.value)


ENTRY_RANGES = {"seeds": (INT32_MIN, INT32_MAX), "epochs": (-1, INT32_MAX)}


@settings(max_examples=examples(80), deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    name=st.sampled_from(sorted(ENTRY_RANGES)),
    dtype=st.one_of(
        st.sampled_from(["int32", "int64"]),
        st.sampled_from(JSON_DTYPES),
        st.sampled_from([5, None, ["int32"]]),
    ),
    data=st.one_of(
        per_env_lists(E),
        st.lists(st.integers(-1, INT32_MAX), min_size=E, max_size=E),  # mostly accepted
    ),
)
def test_json_seeds_and_epochs(saved, name, dtype, data):
    _, doc, _ = saved
    path = _write_json(doc, name, dtype, data)
    loaded = json_array_oracle(dtype, data)
    want = None if loaded is None else expected_int_entry(loaded, E, *ENTRY_RANGES[name])
    if want is None:
        _refused(lambda: read_batch(path), path)
        return
    event("accepted")
    b = read_batch(path)
    got = b.seeds if name == "seeds" else b.epochs
    assert got.dtype == np.int32 and got.tolist() == want


@st.composite
def npz_values(draw):
    dtype = draw(st.sampled_from(NPZ_DTYPES))
    shape = draw(st.sampled_from([(E,), (E,), (E - 1,), (E, 1), ()]))
    elements = None
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        elements = st.one_of(
            st.integers(int(info.min), int(info.max)),
            st.sampled_from([int(info.min), int(info.max), 0]),
        )
    return draw(hnp.arrays(dtype, shape, elements=elements))


@settings(max_examples=examples(80), deadline=None, suppress_health_check=FIXTURE_OK)
@given(name=st.sampled_from(sorted(ENTRY_RANGES)), values=npz_values())
def test_npz_seeds_and_epochs(saved, name, values):
    _, _, entries = saved
    path = Path(tempfile.mkdtemp()) / "f.npz"
    np.savez(path, **{**entries, name: values})
    want = expected_int_entry(values, E, *ENTRY_RANGES[name])
    if want is None:
        _refused(lambda: read_batch(path), path)
        return
    event("accepted")
    b = read_batch(path)
    assert (b.seeds if name == "seeds" else b.epochs).tolist() == want


def _expected_params(gen, values) -> bool:
    """True when ``values`` (as loaded) is one number per env, each inside the declared range
    of the field (the check of ``gen.params[PARAM] = values``)."""
    err, items = expected_host_values(values, "float")
    if err is not None or len(items) != E:
        return False
    t = gen.params.spec(PARAM)
    return all(expected_error(t, v, write=True) is None for v in items)


@settings(max_examples=examples(50), deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    dtype=st.sampled_from(["float32", "float64", "int32", "bool", "<U3", "float16"]),
    data=st.one_of(
        per_env_lists(E),
        st.lists(st.floats(0.0, 1.0), min_size=E, max_size=E),  # mostly in range
    ),
    verify=st.booleans(),
)
def test_json_params(saved, dtype, data, verify):
    gen, doc, _ = saved
    path = _write_json(doc, f"params.{PARAM}", dtype, data)
    loaded = json_array_oracle(dtype, data)
    if loaded is None or not _expected_params(gen, loaded):
        _refused(lambda: rebuild(path, verify=verify), path)
        return
    if verify:  # another value than the one the batch was built with: refused by the compare
        same = np.array_equal(loaded.astype(np.float32), gen.params[PARAM].numpy())
        if not same:
            _refused(lambda: rebuild(path), path)
            return
    event("accepted")
    again = rebuild(path, verify=verify)
    np.testing.assert_array_equal(again.params[PARAM].numpy(), loaded.astype(np.float32))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=FIXTURE_OK)
@given(values=npz_values())
def test_npz_params(saved, values):
    gen, _, entries = saved
    path = Path(tempfile.mkdtemp()) / "f.npz"
    np.savez(path, **{**entries, f"params.{PARAM}": values})
    if not _expected_params(gen, values):
        _refused(lambda: rebuild(path, verify=False), path)
        return
    event("accepted")
    again = rebuild(path, verify=False)
    np.testing.assert_array_equal(again.params[PARAM].numpy(), values.astype(np.float32))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    name=st.sampled_from(["result.count", "result.center", "options.x.y", "inputs.z"]),
    values=st.one_of(npz_values(), st.sampled_from([np.array("x"), np.zeros((E, 3), bool)])),
)
def test_npz_arrays_of_other_dtypes(saved, name, values):
    _, _, entries = saved
    path = Path(tempfile.mkdtemp()) / "f.npz"
    np.savez(path, **{**entries, name: values})
    try:
        read_batch(path)
    except ValueError as exc:
        assert str(path) in str(exc)
        return
    assert values.dtype.kind in "iuf"  # only real numbers are accepted


@settings(max_examples=examples(40), deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    key=st.sampled_from(["num_envs", "n_max", "version", "kind", "format"]),
    value=st.one_of(
        file_scalars,
        st.sampled_from([[1], {"a": 1}, "track", "gates", "track_gen.batch", 1, E, 1.0, True]),
    ),
)
@example(key="version", value=True)  # True == 1: used to be accepted
@example(key="kind", value=["track"])  # unhashable: used to be a raw TypeError
def test_header_values(saved, key, value):
    """Only the header's own value is accepted: ints are ints (``True`` is not version 1),
    ``kind`` a str."""
    _, doc, _ = saved
    original = doc["header"][key]
    doc = json.loads(json.dumps(doc))
    doc["header"][key] = value
    path = Path(tempfile.mkdtemp()) / "f.json"
    path.write_text(json.dumps(doc))
    if type(value) is not type(original) or value != original:
        _refused(lambda: read_batch(path), path)
        return
    b = read_batch(path)
    assert type(b.num_envs) is int and b.num_envs == E and b.kind == "track"


@settings(max_examples=examples(40), deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    verify=st.one_of(st.sampled_from(other_objects(E)), st.booleans()),
    device=st.one_of(st.none(), st.sampled_from(other_objects(E))),
)
def test_rebuild_arguments(saved, verify, device):
    gen, doc, _ = saved
    path = Path(tempfile.mkdtemp()) / "f.json"
    path.write_text(json.dumps(doc))
    ok_verify = isinstance(verify, (bool, np.bool_))
    ok_device = device is None or isinstance(device, str)
    if not ok_verify or not ok_device:
        with pytest.raises(TypeError, match="verify|device"):
            rebuild(path, verify=verify, device=device)
        return
    try:
        again = rebuild(path, verify=verify, device=device)
    except ValueError as exc:  # a device name that is not available here
        assert "not available here" in str(exc) or "differs" in str(exc)
        return
    assert again.device == wp.get_device(device or "cpu")
