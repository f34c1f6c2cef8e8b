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
