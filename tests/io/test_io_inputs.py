"""``track_gen.io`` inputs: files from anywhere and the writers' env / spacing / size / path
arguments.

``read_tum`` and ``read_batch`` on arbitrary bytes and text return a checked result or raise
ValueError / OSError (nothing else, no hang); on paths of every kind (special files, folders,
a file over the limit) they raise the exact error of the input file rule. Every writer takes
``env`` as an int index of a valid env (TypeError for another kind, ValueError out of range
or invalid), its numeric options as finite numbers in range (TypeError / ValueError), and
``path`` as a str / PathLike in an existing folder (TypeError for other kinds, ValueError /
OSError for unusable names); a refused call writes nothing."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.io import (
    read_batch,
    read_tum,
    road_mesh,
    write_cones,
    write_gltf,
    write_json,
    write_npz,
    write_tum,
    write_usd,
)
from track_gen.io.paths import MAX_BATCH_JSON_BYTES, MAX_CSV_BYTES, picture_suffixes
from track_gen.viz import plot_tracks

from ..support.files import expected_read_error, special_files, state
from ..support.strategies import examples, expected_path_error, other_objects, out_names

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 2
CELLS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**6), 10**6).map(str),
    st.sampled_from(["", " ", "abc", "1e999", "-0", "0x10", "1_0", "nan", "#", "1,2"]),
)
ROWS = st.lists(st.lists(CELLS, min_size=0, max_size=6).map(",".join), min_size=0, max_size=12)


@pytest.fixture(scope="module")
def batch():
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device="cpu"), seeds=1)
    gen.generate()
    assert gen.result.valid.numpy().all()
    return gen.result


def _check_read(path: Path) -> None:
    try:
        t = read_tum(path)
    except (ValueError, OSError):
        return
    assert t.num_points >= 4
    assert np.isfinite(t.xy).all() and (t.width_left > 0).all() and (t.width_right > 0).all()
    assert math.isfinite(t.length) or t.length == math.inf  # huge coordinates may overflow


@settings(max_examples=examples(60), deadline=None)
@given(data=st.one_of(st.binary(max_size=400), st.text(max_size=400).map(str.encode)))
def test_read_tum_on_any_bytes(data):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.csv"
        p.write_bytes(data)
        _check_read(p)


@settings(max_examples=examples(80), deadline=None)
@given(rows=ROWS, header=st.booleans())
def test_read_tum_on_csv_like_text(rows, header):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.csv"
        lines = (["# x_m,y_m,w_tr_right_m,w_tr_left_m"] if header else []) + rows
        p.write_text("\n".join(lines))
        _check_read(p)


@settings(max_examples=examples(40), deadline=None)
@given(data=st.one_of(st.binary(max_size=300), st.just(b"PK\x03\x04" + b"\x00" * 40)))
def test_read_batch_on_any_bytes(data):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "b.npz"
        p.write_bytes(data)
        with pytest.raises((ValueError, OSError)):
            read_batch(p)


def _writers(spacing=0.2):
    return {
        "write_tum": lambda t, e, p: write_tum(t, e, p + ".csv"),
        "write_cones": lambda t, e, p: write_cones(t, e, p + ".csv", spacing=spacing),
        "write_gltf": lambda t, e, p: write_gltf(t, e, p + ".glb"),
        "write_usd": lambda t, e, p: write_usd(t, e, p + ".usda"),
    }


def _expected_env_error(env):
    if isinstance(env, (bool, np.bool_)) or not isinstance(env, (int, np.integer)):
        return TypeError
    return None if 0 <= int(env) < E else ValueError


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    env=st.one_of(
        st.integers(-(2**70), 2**70),
        st.integers(-3, E + 2),
        st.floats(allow_nan=True),
        st.sampled_from(other_objects(E)),
    ),
    writer=st.sampled_from(sorted(_writers())),
)
def test_writer_env_argument(batch, env, writer):
    pytest.importorskip("trimesh")
    pytest.importorskip("pxr")
    want = _expected_env_error(env)
    with tempfile.TemporaryDirectory() as d:
        base = os.path.join(d, "out")
        if want is None:
            _writers()[writer](batch, env, base)
            assert len(os.listdir(d)) == 1
        else:
            with pytest.raises(want, match="env"):
                _writers()[writer](batch, env, base)
            assert os.listdir(d) == []


def _expected_number_error(value, lo_open: bool):
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        return TypeError
    try:
        v = float(value)
    except OverflowError:
        return ValueError
    if not math.isfinite(v) or v < 0 or (lo_open and v == 0) or v > 1e6:  # DISTANCE_HI
        return ValueError
    return None


NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(1e-3, 10.0),
    st.integers(-5, 5),
    st.sampled_from([10**400, 1e-300, 1e300, -0.0]),
    st.sampled_from(other_objects(E)),
)


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(spacing=NUMBERS)
def test_cone_spacing(batch, spacing):
    want = _expected_number_error(spacing, lo_open=True)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "c.csv")
        if want is not None:
            with pytest.raises(want, match="spacing"):
                write_cones(batch, 0, p, spacing=spacing)
            assert os.listdir(d) == []
            return
        try:
            write_cones(batch, 0, p, spacing=spacing)
        except ValueError as exc:  # too few or too many cones for this border: refused
            assert "spacing" in str(exc) and os.listdir(d) == []
            return
        assert os.path.getsize(p) > 0


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(extra=NUMBERS, wall=st.one_of(st.none(), NUMBERS))
def test_mesh_sizes(batch, extra, wall):
    want = _expected_number_error(extra, lo_open=False)
    if want is None and wall is not None:
        want = _expected_number_error(wall, lo_open=False)
    if want is not None:
        with pytest.raises(want, match="extra_width|wall_height"):
            road_mesh(batch, 0, extra_width=extra, wall_height=wall)
        return
    parts = road_mesh(batch, 0, extra_width=extra, wall_height=wall)
    for v, f in parts.values():
        assert np.isfinite(v).all() and f.shape == v.shape


SAFE_NAME = st.text(max_size=40).filter(lambda s: ".." not in s)


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    name=st.one_of(SAFE_NAME, st.sampled_from(other_objects(E))),
    writer=st.sampled_from(["tum", "cones", "npz", "json", "gltf", "usd"]),
)
def test_writer_path_argument(batch, name, writer):
    pytest.importorskip("trimesh")
    pytest.importorskip("pxr")
    call = {
        "tum": lambda p: write_tum(batch, 0, p),
        "cones": lambda p: write_cones(batch, 0, p, spacing=0.2),
        "npz": lambda p: write_npz(batch, p),
        "json": lambda p: write_json(batch, p),
        "gltf": lambda p: write_gltf(batch, 0, p),
        "usd": lambda p: write_usd(batch, 0, p),
    }[writer]
    with tempfile.TemporaryDirectory() as d:
        if not isinstance(name, str):
            with pytest.raises(TypeError, match="path"):
                call(name)
            assert os.listdir(d) == []
            return
        path = d + "/" + name  # never outside the temporary folder
        try:
            call(path)
        except (ValueError, OSError):
            assert not any(n.startswith(".") for n in os.listdir(d))  # no temporary left over
            return
        assert os.path.isfile(path)


#: writer -> (accepted suffixes or None, call(track, path))
PATH_WRITERS = {
    "tum": (None, lambda t, p: write_tum(t, 0, p)),
    "cones": (None, lambda t, p: write_cones(t, 0, p, spacing=0.2)),
    "npz": ((".npz",), lambda t, p: write_npz(t, p)),
    "json": ((".json",), lambda t, p: write_json(t, p)),
    "gltf": ((".glb", ".gltf"), lambda t, p: write_gltf(t, 0, p)),
    "usd": ((".usda", ".usd", ".usdc"), lambda t, p: write_usd(t, 0, p)),
    "plot_tracks": ("picture", lambda t, p: plot_tracks(t, path=p)),
}


@settings(
    max_examples=examples(80),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(writer=st.sampled_from(sorted(PATH_WRITERS)), data=st.data())
def test_output_path_rule(batch, writer, data):
    """'' , folders, separators, names at and beyond 255 bytes, wrong or no suffix, a file as
    folder, a missing folder: the exact error of the rule, nothing written (no DIR.png, no
    hidden .png, no temporary); else exactly the named file."""
    pytest.importorskip("trimesh")
    pytest.importorskip("pxr")
    pytest.importorskip("matplotlib")
    suffixes, call = PATH_WRITERS[writer]
    if suffixes == "picture":
        suffixes = picture_suffixes()
    name = data.draw(out_names(suffixes[0] if suffixes else ".csv"))
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "DIR"))
        Path(d, "FILE").write_text("x")
        want = expected_path_error(d, name, suffixes)
        event(f"{writer}: {'written' if want is None else want.__name__}")
        path = os.path.join(d, name) if name else ""
        if want is not None:
            with pytest.raises(want, match="path"):
                call(batch, path)
            assert (
                sorted(os.listdir(d)) == ["DIR", "FILE"]
                and os.listdir(os.path.join(d, "DIR")) == []
            )
            return
        call(batch, path)
        assert os.path.isfile(path)
        left = set(os.listdir(d)) | {"DIR/" + n for n in os.listdir(os.path.join(d, "DIR"))}
        assert len(left) == 3  # DIR, FILE and the file: no temporary left over


#: reader -> (call(path), its limit for the ``{``-headed BIG file of the folder)
PATH_READERS = {
    "read_tum": (read_tum, MAX_CSV_BYTES),
    "read_batch": (read_batch, MAX_BATCH_JSON_BYTES),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX special files")
@settings(max_examples=examples(60), deadline=None)
@given(
    reader=st.sampled_from(sorted(PATH_READERS)),
    name=st.one_of(
        st.sampled_from(["FIFO", "SOCK", "ZERO", "BIG", "/dev/zero", "/dev/null", "FILE", "."]),
        out_names(".csv"),
    ),
)
def test_input_path_rule(reader, name):
    """Names of every kind (out_names' '', folders, names too long, a file as folder, NUL),
    special files (a FIFO, a socket, a link to /dev/zero, the devices) and a sparse file
    over the limit: the exact error of the input file rule, the folder unchanged; else only
    the content decides (ValueError or a result)."""
    call, limit = PATH_READERS[reader]
    with tempfile.TemporaryDirectory() as d, special_files(Path(d), limit + 1) as paths:
        path = str(paths[name]) if name.startswith("/dev/") else os.path.join(d, name)
        path = path if name else ""
        want = expected_read_error(path, limit)
        event(f"{reader}: {'content' if want is None else want[0].__name__}")
        before = state(Path(d))
        if want is not None:
            with pytest.raises(want[0], match=want[1]):
                call(path)
        else:
            with pytest.raises(ValueError):  # no file of the folder is a circuit or a batch
                call(path)
        assert state(Path(d)) == before
