"""The input file rule of every reader (docs/io.md, "Input files"): ``read_tum``,
``read_batch``, ``rebuild`` and the explore settings (``read_settings``) read a regular file
no larger than their limit, both checked before a byte is read (``track_gen.io.paths
.read_bytes``). A device, a FIFO or a socket is a ValueError naming what it is, a file above
the limit a ValueError naming its size and the limit; a folder and a missing file keep
IsADirectoryError and FileNotFoundError. A refused read changes nothing."""

from __future__ import annotations

import importlib
import os
import socket
from contextlib import nullcontext
from pathlib import Path

import pytest

from track_gen import io as tio
from track_gen.explore import read_settings
from track_gen.io.paths import (
    HEAD_BYTES,
    MAX_BATCH_JSON_BYTES,
    MAX_BATCH_NPZ_BYTES,
    MAX_CSV_BYTES,
    MAX_SETTINGS_BYTES,
    read_bytes,
)

from ..support.files import sparse, state, unblocked
from . import CIRCUITS, write_csv

#: reader -> (call, its limit for a file starting with b"{", what the messages call the file)
READERS = {
    "read_tum": (tio.read_tum, MAX_CSV_BYTES, "CSV file"),
    "read_batch": (tio.read_batch, MAX_BATCH_JSON_BYTES, "JSON batch file"),
    "rebuild": (lambda p: tio.rebuild(p, device="cpu"), MAX_BATCH_JSON_BYTES, "JSON batch file"),
    "read_settings": (read_settings, MAX_SETTINGS_BYTES, "settings JSON file"),
}


def _special(tmp_path: Path, kind: str):
    """``(path, what the message calls it, cleanup)`` of a special file of ``kind``."""
    if kind == "dev_zero":
        return Path("/dev/zero"), "a character device", lambda: None
    if kind == "dev_null":
        return Path("/dev/null"), "a character device", lambda: None
    if kind == "fifo":
        p = tmp_path / "pipe"
        os.mkfifo(p)
        return p, "a FIFO", lambda: None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    p = tmp_path / "sock"
    sock.bind(str(p))
    return p, "a socket", sock.close


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX special files")
@pytest.mark.parametrize("kind", ["dev_zero", "dev_null", "fifo", "socket"])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_special_files_are_refused_before_reading(tmp_path, reader, kind):
    if kind.startswith("dev") and not os.path.exists(f"/dev/{kind[4:]}"):
        pytest.skip(f"no /dev/{kind[4:]}")
    call, _, _ = READERS[reader]
    path, what, cleanup = _special(tmp_path, kind)
    before = state(tmp_path)
    try:
        with unblocked(path) if kind == "fifo" else nullcontext():
            with pytest.raises(ValueError, match=f"{what}.*not a regular file") as err:
                call(path)
    finally:
        cleanup()
    assert str(path) in str(err.value)
    assert state(tmp_path) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX special files")
@pytest.mark.parametrize("kind", ["dev_zero", "fifo"])
def test_a_special_file_swapped_in_after_the_stat_is_refused_too(tmp_path, monkeypatch, kind):
    """The stat is the first check; the open (O_NONBLOCK, so a FIFO without a writer does not
    block) and fstat the second: a special file the stat saw as a regular one (swapped in
    between the two) is refused without being read."""
    path, what, cleanup = _special(tmp_path, kind)
    regular = write_csv(tmp_path / "oval.csv", *CIRCUITS["oval"](40))
    real_stat = os.stat

    def stat_sees_a_regular_file(p, *args, **kwargs):
        return real_stat(regular if os.fspath(p) == str(path) else p, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat_sees_a_regular_file)
    try:
        with unblocked(path) if kind == "fifo" else nullcontext():
            with pytest.raises(ValueError, match=f"{what}.*not a regular file"):
                tio.read_tum(path)
    finally:
        cleanup()


@pytest.mark.parametrize("reader", sorted(READERS))
def test_folders_and_missing_files_keep_their_errors(tmp_path, reader):
    call, _, _ = READERS[reader]
    with pytest.raises(IsADirectoryError, match="is a folder"):
        call(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        call(tmp_path / "nope.json")
    with pytest.raises(FileNotFoundError, match="no such file"):
        call(tmp_path / "nope" / "x.json")  # a missing folder
    (tmp_path / "f").write_text("x")
    with pytest.raises(FileNotFoundError, match="no such file"):
        call(tmp_path / "f" / "x.json")  # a file used as a folder
    with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
        call(b"x.json")


@pytest.fixture
def reads(monkeypatch):
    """The sizes every ``os.read`` asked for while a test runs."""
    asked: list[int] = []
    real = os.read

    def spy(fd, n):
        asked.append(n)
        return real(fd, n)

    monkeypatch.setattr(os, "read", spy)
    return asked


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_file_over_the_limit_is_refused_before_reading(tmp_path, reader, reads):
    call, limit, what = READERS[reader]
    path = sparse(tmp_path / "big.json", limit + 1, b"{")
    before = state(tmp_path)
    with pytest.raises(ValueError) as err:
        call(path)
    msg = str(err.value)
    assert f"{limit + 1:,} bytes" in msg and f"more than the {limit:,} bytes" in msg, msg
    assert f"a {what} may have" in msg and str(path) in msg
    # read_batch and rebuild read the first HEAD_BYTES (the format's signature) to choose the
    # limit, nothing more; the others read nothing
    assert sum(reads) <= (HEAD_BYTES if reader in ("read_batch", "rebuild") else 0)
    assert state(tmp_path) == before


@pytest.mark.parametrize("reader", ["read_batch", "rebuild"])
def test_an_npz_batch_has_its_own_limit(tmp_path, reader, reads):
    call = READERS[reader][0]
    # a zip signature: the npz limit (8 GiB) applies, not the JSON one
    path = sparse(tmp_path / "big.npz", MAX_BATCH_NPZ_BYTES + 1, b"PK\x03\x04")
    with pytest.raises(ValueError, match=f"more than the {MAX_BATCH_NPZ_BYTES:,} bytes") as err:
        call(path)
    assert "npz batch file" in str(err.value)
    assert sum(reads) <= HEAD_BYTES


@pytest.mark.parametrize("reader", ["read_batch", "rebuild"])
def test_the_batch_limit_follows_the_content(tmp_path, reader, monkeypatch):
    # the two limits made small (the real ones need files of gigabytes to cross): a file
    # between them is refused as JSON and read as an npz (then refused for its content)
    monkeypatch.setattr(importlib.import_module("track_gen.io.batch"), "MAX_BATCH_JSON_BYTES", 100)
    call = READERS[reader][0]
    assert MAX_BATCH_JSON_BYTES < MAX_BATCH_NPZ_BYTES
    as_json = sparse(tmp_path / "b.json", 200, b'{"a": 1}')
    want = "is 200 bytes, more than the 100 bytes a JSON batch file may have"
    with pytest.raises(ValueError, match=want):
        call(as_json)
    as_npz = sparse(tmp_path / "b.npz", 200, b"PK\x03\x04")
    with pytest.raises(ValueError, match="unreadable npz") as err:
        call(as_npz)
    assert "more than" not in str(err.value)


def test_a_file_at_the_limit_is_read(tmp_path):
    # exactly MAX_CSV_BYTES: read and refused for its content (no columns), not its size
    path = sparse(tmp_path / "c.csv", MAX_CSV_BYTES, b"# x_m,y_m,w_tr_right_m,w_tr_left_m\n")
    with pytest.raises(ValueError, match="expected 4 columns"):
        tio.read_tum(path)
    path = tmp_path / "s.json"
    path.write_bytes(b'{"seed": 3}' + b" " * (MAX_SETTINGS_BYTES - 11))
    assert os.path.getsize(path) == MAX_SETTINGS_BYTES
    assert read_settings(path).seed == 3


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_a_file_without_a_size_is_still_bounded():
    # /proc files are regular with st_size 0: the read itself stops one byte past the limit
    assert os.stat("/proc/self/status").st_size == 0
    _, raw = read_bytes("path", "/proc/self/status", "test", max_bytes=1 << 20)
    assert raw.startswith(b"Name:")
    with pytest.raises(ValueError, match="is at least 65 bytes, more than the 64 bytes"):
        read_bytes("path", "/proc/self/status", "test", max_bytes=64)


def test_valid_files_read_as_before(tmp_path):
    path = write_csv(tmp_path / "oval.csv", *CIRCUITS["oval"](40))
    _, raw = read_bytes("path", path, "test", max_bytes=MAX_CSV_BYTES)
    assert raw == path.read_bytes()
    assert tio.read_tum(path).num_points == 40
    link = tmp_path / "link.csv"
    link.symlink_to(path)  # a link to a regular file is that file
    assert tio.read_tum(link).num_points == 40
    dev = tmp_path / "zero.csv"
    dev.symlink_to("/dev/zero")  # a link to a device is that device
    with pytest.raises(ValueError, match="character device"):
        tio.read_tum(dev)


def test_an_unreadable_file_is_a_permission_error(tmp_path):
    path = write_csv(tmp_path / "oval.csv", *CIRCUITS["oval"](40))
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running as root: permissions are not enforced")
        with pytest.raises(PermissionError, match="oval.csv"):
            tio.read_tum(path)
    finally:
        path.chmod(0o644)
