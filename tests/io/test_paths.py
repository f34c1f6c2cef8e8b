"""One output path rule for every writer (track_gen.io.paths): a file name in an existing,
writable folder; '', a folder, a name too long, a wrong or missing suffix are refused with the
library's message before anything is written, and nothing is ever appended to a name."""

from __future__ import annotations

import errno
import os

import pytest

from track_gen import TrackGenConfig, TrackGenerator
from track_gen import io as tio
from track_gen.io.paths import NAME_MAX, picture_suffixes
from track_gen.viz import plot_tracks

from . import oval

E = 2


@pytest.fixture(scope="module")
def track():
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device="cpu"), seeds=1)
    gen.generate()
    assert gen.result.valid.numpy().all()
    return gen.result


def _circuit():
    xy, wr, wl = oval(40)
    return tio.RealTrack("oval", xy, wr, wl)


#: writer name -> (suffix, call(track, path))
WRITERS = {
    "write_tum": (".csv", lambda t, p: tio.write_tum(t, 0, p)),
    "write_cones": (".csv", lambda t, p: tio.write_cones(t, 0, p, spacing=0.2)),
    "write_gltf": (".glb", lambda t, p: tio.write_gltf(t, 0, p)),
    "write_usd": (".usda", lambda t, p: tio.write_usd(t, 0, p)),
    "write_npz": (".npz", lambda t, p: tio.write_npz(t, p)),
    "write_json": (".json", lambda t, p: tio.write_json(t, p)),
    "plot_tracks": (".png", lambda t, p: plot_tracks(t, path=p)),
    "plot_real_tracks": (".png", lambda t, p: tio.plot_real_tracks(_circuit(), p)),
}


def _needs(writer):
    if writer == "write_gltf":
        pytest.importorskip("trimesh")
    if writer == "write_usd":
        pytest.importorskip("pxr")
    if writer.startswith("plot"):
        pytest.importorskip("matplotlib")


def _listing(folder) -> list[str]:
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_folder_is_refused_and_nothing_is_written_beside_it(tmp_path, track, writer):
    _needs(writer)
    (tmp_path / "DIR").mkdir()
    with pytest.raises(IsADirectoryError, match="'.*DIR' is a folder"):
        WRITERS[writer][1](track, str(tmp_path / "DIR"))
    assert _listing(tmp_path) == ["DIR"] and _listing(tmp_path / "DIR") == []


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_empty_name_is_refused_and_nothing_is_written_in_the_cwd(
    tmp_path, monkeypatch, track, writer
):
    _needs(writer)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="path = '' is not a usable file name"):
        WRITERS[writer][1](track, "")
    assert _listing(tmp_path) == []


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_name_too_long_is_the_librarys_error(tmp_path, track, writer):
    _needs(writer)
    suffix, call = WRITERS[writer]
    with pytest.raises(ValueError, match=f"more than the {NAME_MAX} a file name may have"):
        call(track, str(tmp_path / ("a" * 300 + suffix)))
    assert _listing(tmp_path) == []


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_the_longest_name_is_written(tmp_path, track, writer):
    # the temporary name beside the target must fit too (it used to add ~25 characters)
    _needs(writer)
    suffix, call = WRITERS[writer]
    name = "b" * (NAME_MAX - len(suffix)) + suffix
    call(track, str(tmp_path / name))
    assert _listing(tmp_path) == [name]


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_file_as_folder_and_a_missing_folder(tmp_path, track, writer):
    _needs(writer)
    suffix, call = WRITERS[writer]
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        call(track, str(tmp_path / "f.txt" / ("x" + suffix)))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        call(track, str(tmp_path / "missing" / ("x" + suffix)))
    with pytest.raises(ValueError, match="ends with a separator"):
        call(track, str(tmp_path / "x") + os.sep)
    assert _listing(tmp_path) == ["f.txt"]


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_an_unwritable_folder(tmp_path, monkeypatch, track, writer):
    _needs(writer)
    suffix, call = WRITERS[writer]
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    if os.access(ro, os.W_OK):  # root writes anywhere: the file system denies nothing
        real = os.access

        def access(p, mode, **kw):
            return False if os.fspath(p) == str(ro) and mode & os.W_OK else real(p, mode, **kw)

        monkeypatch.setattr(os, "access", access)
    try:
        with pytest.raises(PermissionError, match="is not writable"):
            call(track, str(ro / ("x" + suffix)))
        assert _listing(ro) == []
    finally:
        ro.chmod(0o700)


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_failed_write_is_the_librarys_error_and_leaves_nothing(
    tmp_path, monkeypatch, track, writer
):
    _needs(writer)
    suffix, call = WRITERS[writer]

    def full_disk(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    target = tmp_path / ("x" + suffix)
    with pytest.raises(OSError, match=r"path = '.*x\..*': could not write it: No space left"):
        call(track, str(target))
    assert _listing(tmp_path) == []  # neither the file nor its temporary


@pytest.mark.parametrize("writer", ["plot_tracks", "plot_real_tracks"])
@pytest.mark.parametrize("name", ["x.txt", "out", "x.png.bak", "x."])
def test_a_picture_needs_a_format_suffix(tmp_path, track, writer, name):
    _needs(writer)
    with pytest.raises(ValueError, match="must end with one of"):
        WRITERS[writer][1](track, str(tmp_path / name))
    assert _listing(tmp_path) == []  # no out.png, no x.txt.png


@pytest.mark.parametrize("writer", ["plot_tracks", "plot_real_tracks"])
def test_a_picture_is_written_under_its_own_name(tmp_path, track, writer):
    _needs(writer)
    for suffix in (".png", ".PNG", ".svg", ".pdf"):
        assert suffix.lower() in picture_suffixes()
        WRITERS[writer][1](track, str(tmp_path / f"pic{suffix}"))
    assert _listing(tmp_path) == ["pic.PNG", "pic.pdf", "pic.png", "pic.svg"]
    assert (tmp_path / "pic.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "pic.PNG").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "pic.svg").read_bytes().lstrip()[:5] in (b"<?xml", b"<svg ")


def test_a_hidden_name_keeps_its_format(tmp_path, track):
    pytest.importorskip("matplotlib")
    plot_tracks(track, path=tmp_path / ".png")
    assert (tmp_path / ".png").read_bytes()[:4] == b"\x89PNG"


def test_readers_refuse_folders_and_long_names(tmp_path):
    (tmp_path / "d").mkdir()
    for read in (tio.read_tum, tio.read_batch):
        with pytest.raises(IsADirectoryError, match="is a folder"):
            read(tmp_path / "d")
        with pytest.raises(FileNotFoundError, match="no such file"):
            read(tmp_path / ("a" * 300 + ".csv"))
        with pytest.raises(ValueError, match="not a usable file name"):
            read("")
        with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
            read(b"x.csv")
