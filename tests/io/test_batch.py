"""write_npz / write_json / read_batch / rebuild: whole batches, rebuilt bit for bit."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.io import read_batch, rebuild, write_json, write_npz
from track_gen.pipeline import presets

E = 8
WRITERS = {"npz": write_npz, "json": write_json}


def _same_bytes(result, saved: dict):
    for f in dataclasses.fields(result):
        got = getattr(result, f.name).numpy()
        want = saved[f.name]
        assert got.dtype == want.dtype and got.shape == want.shape, f.name
        assert np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), f.name
        finite = np.isfinite(got).all(axis=tuple(range(1, got.ndim)))
        assert got[finite].tobytes() == want[finite].tobytes(), f.name


def _host(result) -> dict:
    return {f.name: getattr(result, f.name).numpy().copy() for f in dataclasses.fields(result)}


@pytest.fixture(scope="module")
def masked_batch():
    """E=8 polar tracks with per-env epochs 0..3 (masked regeneration), two rebuilt twice,
    one param written per env."""
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device="cpu"), seeds=40)
    gen.params["polar.radial_jitter"] = np.linspace(0.3, 0.6, E)
    gen.generate()
    mask = gen.inputs["regen_mask"]
    for sel in ([1, 3, 5, 7], [0, 1, 2, 3], [6, 7]):
        m = np.zeros(E, np.int32)
        m[sel] = 1
        mask.assign(m)
        gen.generate(advance=True, mask=mask)
    return gen


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_rebuild_is_bit_identical(tmp_path, masked_batch, fmt):
    gen = masked_batch
    epochs = gen.result.generation.numpy()
    assert len(set(epochs.tolist())) > 2  # the envs really sit at different epochs
    path = tmp_path / f"batch.{fmt}"
    WRITERS[fmt](gen.result, path, generator=gen)
    b = read_batch(path)
    assert b.kind == "track" and b.num_envs == E and b.n_max == gen.result.N_max
    np.testing.assert_array_equal(b.epochs, epochs)
    np.testing.assert_array_equal(b.seeds, 40 + np.arange(E))
    _same_bytes(gen.result, b.arrays)
    assert b.generator["config"] == dataclasses.asdict(gen.config)
    again = rebuild(path)
    assert again is not gen and type(again) is TrackGenerator
    _same_bytes(again.result, _host(gen.result))
    np.testing.assert_array_equal(
        again.params["polar.radial_jitter"].numpy(), gen.params["polar.radial_jitter"].numpy()
    )


def test_rebuild_with_randomized_fields_and_unbuilt_envs(tmp_path):
    spec = presets.track(num_envs=4, device="cpu", generator="bezier").with_randomize(
        {"bezier.rad": (0.2, 0.5)}
    )
    gen = TrackGenerator(spec, seeds=7)
    gen.randomizers["bezier.rad"] = (0.25, 0.45)
    mask = gen.inputs["regen_mask"]
    mask.assign(np.array([1, 0, 1, 0], np.int32))
    gen.generate(advance=True, mask=mask)  # envs 1 and 3 never built
    assert gen.result.generation.numpy().tolist() == [1, -1, 1, -1]
    path = tmp_path / "b.npz"
    write_npz(gen.result, path, generator=gen)
    again = rebuild(path)
    _same_bytes(again.result, _host(gen.result))
    assert again.randomizers["bezier.rad"] == pytest.approx((0.25, 0.45))


def test_rebuild_refuses_what_it_cannot_reproduce(tmp_path, masked_batch):
    gen = masked_batch
    plain = tmp_path / "plain.npz"
    write_npz(gen.result, plain)
    assert read_batch(plain).generator is None
    with pytest.raises(ValueError, match="without generator="):
        rebuild(plain)
    # a parameter written after the envs were built: the saved value is not the built one
    saved = gen.params["polar.radial_jitter"].numpy().copy()
    gen.params["polar.radial_jitter"] = 0.5
    try:
        path = tmp_path / "stale.npz"
        write_npz(gen.result, path, generator=gen)
        with pytest.raises(ValueError, match="differs from the file"):
            rebuild(path)
        assert rebuild(path, verify=False).result.valid.numpy().shape == (E,)
    finally:
        gen.params["polar.radial_jitter"].assign(saved)


def test_writers_check_arguments(tmp_path, masked_batch):
    gen = masked_batch
    with pytest.raises(TypeError, match="Track or GateSequence"):
        write_npz(gen, tmp_path / "a.npz")
    with pytest.raises(ValueError, match=r"\.npz"):
        write_npz(gen.result, tmp_path / "a.json")
    with pytest.raises(ValueError, match=r"\.json"):
        write_json(gen.result, tmp_path / "a.npz")
    other = TrackGenerator(TrackGenConfig(generator="polar", num_envs=2, device="cpu"))
    with pytest.raises(ValueError, match="differs from the result"):
        write_npz(gen.result, tmp_path / "a.npz", generator=other)
    with pytest.raises(TypeError, match="generator must be"):
        write_npz(gen.result, tmp_path / "a.npz", generator="polar")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_json(gen.result, tmp_path / "missing" / "a.json")
    assert list(tmp_path.iterdir()) == []


def test_read_batch_refuses_other_files(tmp_path):
    for name, data in {
        "a.json": b"{}",
        "b.json": b"not json",
        "c.npz": b"PK\x03\x04 broken zip",
        "d.json": json.dumps({"header": {"format": "other"}, "arrays": {}}).encode(),
    }.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match="not a track_gen batch file"):
            read_batch(tmp_path / name)
    with pytest.raises(FileNotFoundError):
        read_batch(tmp_path / "none.npz")


def test_gate_courses_json_and_rebuild(tmp_path):
    gen = GateGenerator(
        GateGenConfig(generator="polar", num_envs=4, device="cpu", gate_width=0.2), seeds=5
    )
    gen.generate()
    path = tmp_path / "gates.json"
    write_json(gen.result, path, generator=gen)
    doc = json.loads(path.read_text())
    g = gen.result
    pos, quat = g.position.numpy(), g.orientation.numpy()
    count, m = g.count.numpy(), g.max_gates
    assert [c["env"] for c in doc["courses"]] == list(range(4))
    for c in doc["courses"]:
        e = c["env"]
        assert c["valid"] == 1 and len(c["gates"]) == count[e]
        for k, gate in enumerate(c["gates"]):
            np.testing.assert_array_equal(np.float32(gate["position"]), pos[e * m + k])
            np.testing.assert_array_equal(np.float32(gate["orientation_xyzw"]), quat[e * m + k])
            assert gate["width"] == pytest.approx(0.2)
    again = rebuild(path)
    assert type(again) is GateGenerator
    _same_bytes(again.result, _host(g))


def test_rebuild_on_another_device_needs_verify_off(tmp_path, masked_batch):
    path = tmp_path / "b.npz"
    write_npz(masked_batch.result, path, generator=masked_batch)
    if wp.get_cuda_device_count() == 0:
        pytest.skip("no CUDA device: only one device to rebuild on")
    again = rebuild(path, device="cuda:0", verify=False)
    assert str(again.device) == "cuda:0"


@pytest.mark.parametrize(
    "mangle",
    [
        lambda d: d["header"].__setitem__("generator", [1, 2]),
        lambda d: d["header"]["generator"]["config"].__setitem__("no_such_field", 1),
        lambda d: d["header"]["generator"].__setitem__("config", "polar"),
        lambda d: d["header"]["generator"].__setitem__("stages", ["polar"]),
        lambda d: d["header"]["generator"].__setitem__("stages", [{"kind": "nope", "name": "x"}]),
        lambda d: d["header"]["generator"].__setitem__("live_ranges", {"polar.scale": [0, 1]}),
        lambda d: d["header"]["generator"].__setitem__("family", "boats"),
        lambda d: d["header"]["generator"].__setitem__("rebuildable", False),
        lambda d: d["arrays"]["seeds"].__setitem__("shape", [3]),
        lambda d: d["arrays"]["seeds"].__setitem__("data", [2**40] * E),
    ],
)
def test_rebuild_refuses_a_mangled_record(tmp_path, masked_batch, mangle):
    path = tmp_path / "b.json"
    write_json(masked_batch.result, path, generator=masked_batch)
    doc = json.loads(path.read_text())
    mangle(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError):
        rebuild(path)


def test_rebuild_refuses_an_unknown_device(tmp_path, masked_batch):
    path = tmp_path / "b.npz"
    write_npz(masked_batch.result, path, generator=masked_batch)
    with pytest.raises(ValueError, match="not available here"):
        rebuild(path, device="no-such-device")


# ----------------------------------------------------------------------------- file values
# A file's seeds, epochs and params go through the checks the same values get in code: never
# cast (2**40 + i used to become i with verify=True passing), and the error names the file.
@pytest.fixture()
def saved(tmp_path, masked_batch):
    """(path of a JSON batch with its generator, the parsed document)."""
    path = tmp_path / "b.json"
    write_json(masked_batch.result, path, generator=masked_batch)
    return path, json.loads(path.read_text())


def _mangled(path, doc, name, **entry):
    doc["arrays"][name].update(entry)
    out = path.with_name("mangled.json")
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize(
    "entry, needle",
    [
        ({"dtype": "int64", "data": [2**40 + i for i in range(E)]}, "outside the int32 range"),
        ({"dtype": "int64", "data": [-(2**31) - 1] * E}, "outside the int32 range"),
        ({"dtype": "uint64", "data": [2**64 - 3] * E}, "outside the int32 range"),
        ({"dtype": "float64", "data": [3.7] * E}, "seeds must be integers"),
        ({"dtype": "float64", "data": [None] * E}, "seeds must be integers"),
        ({"dtype": "int32", "data": [True] * E}, "holds bool True"),
        ({"dtype": "int32", "data": [1.5] * E}, "holds float 1.5"),
        ({"dtype": "int32", "data": ["7"] * E}, "holds str '7'"),
        ({"dtype": "bool", "data": [True] * E}, "not an int or float dtype"),
        ({"dtype": "int32", "shape": [-1]}, "not a list of sizes"),
        ({"dtype": "int32", "shape": [E, 1]}, "seeds has shape"),
    ],
)
def test_bad_seeds_in_a_file_are_refused_naming_it(saved, entry, needle):
    path = _mangled(*saved, "seeds", **entry)
    with pytest.raises(ValueError, match=needle) as info:
        read_batch(path)
    assert str(path) in str(info.value)
    for verify in (True, False):
        with pytest.raises(ValueError, match=needle):
            rebuild(path, verify=verify)


@pytest.mark.parametrize(
    "entry, needle",
    [
        ({"dtype": "int64", "data": [2**40] * E}, "epochs holds 1099511627776, out of range"),
        ({"dtype": "int32", "data": [-2] * E}, "epochs holds -2, out of range"),
        ({"dtype": "float32", "data": [1.0] * E}, "epochs must be integers"),
    ],
)
def test_bad_epochs_in_a_file_are_refused(saved, entry, needle):
    path = _mangled(*saved, "epochs", **entry)
    with pytest.raises(ValueError, match=needle):
        rebuild(path, verify=False)


@pytest.mark.parametrize(
    "data, needle",
    [
        ([1.0e9] * E, r"params\['polar.radial_jitter'\]: env 0 has .*out of range"),
        ([None] * E, r"params\['polar.radial_jitter'\]: env 0 has .*nan"),
        ([-1.0] + [0.5] * (E - 1), r"env 0 has .*out of range"),
        ([True] * E, "holds bool True"),
        (["0.5"] * E, "holds str '0.5'"),
    ],
)
def test_out_of_range_params_in_a_file_are_refused_even_without_verify(saved, data, needle):
    path = _mangled(*saved, "params.polar.radial_jitter", data=data)
    with pytest.raises(ValueError, match=needle) as info:
        rebuild(path, verify=False)
    assert str(path) in str(info.value)


def test_params_the_generator_lacks_or_the_file_lacks(saved):
    path, doc = saved
    entry = doc["arrays"].pop("params.polar.radial_jitter")
    doc["arrays"]["params.polar.no_such_field"] = entry
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"params \['polar.no_such_field'\] are not parameters"):
        rebuild(path, verify=False)
    del doc["arrays"]["params.polar.no_such_field"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"params \['polar.radial_jitter'\] .* missing"):
        rebuild(path, verify=False)


def test_npz_entries_of_other_dtypes_name_the_file(tmp_path, masked_batch):
    path = tmp_path / "b.npz"
    write_npz(masked_batch.result, path, generator=masked_batch)
    with np.load(path) as z:
        entries = dict(z)
    for name, value, needle in (
        ("seeds", np.array(["a"] * E), "seeds must be integers, got <U1 values"),
        ("seeds", np.array(["3"] * E), "seeds must be integers"),
        ("seeds", np.full(E, 2**64 - 3, np.uint64), "outside the int32 range"),
        ("seeds", np.full(E, 1.0), "seeds must be integers"),
        ("seeds", np.ones(E, bool), "seeds must be integers"),
        ("epochs", np.full(E, 1 + 1j), "epochs must be integers"),
        ("params.polar.radial_jitter", np.array(["x"] * E), "must be numbers"),
        ("params.polar.radial_jitter", np.ones(E, np.complex64), "must be numbers"),
        ("result.center", np.zeros(entries["result.center"].shape, bool), "expected an int"),
    ):
        bad = tmp_path / "bad.npz"
        np.savez(bad, **{**entries, name: value})
        with pytest.raises(ValueError, match=needle) as info:
            read_batch(bad)
        assert str(bad) in str(info.value), name


def test_header_values_of_the_wrong_kind(saved):
    path, doc = saved
    for key, value in (("num_envs", True), ("num_envs", 8.0), ("n_max", "384"), ("version", True)):
        bad = json.loads(json.dumps(doc))
        bad["header"][key] = value
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match="not a track_gen batch file"):
            read_batch(path)
    bad = json.loads(json.dumps(doc))
    bad["header"]["kind"] = ["track"]  # unhashable: used to raise a raw TypeError
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="kind"):
        read_batch(path)


def test_rebuild_checks_its_own_arguments(saved):
    path, _ = saved
    for verify in ("yes", 1, None, np.int64(1)):
        with pytest.raises(TypeError, match="verify must be a bool"):
            rebuild(path, verify=verify)
    with pytest.raises(TypeError, match="rebuild device"):
        rebuild(path, device=0)
    with pytest.raises(TypeError, match="rebuild registry"):
        rebuild(path, registry="default")
    assert rebuild(path, verify=np.bool_(True), device=wp.get_device("cpu")).num_envs == E
