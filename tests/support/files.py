"""Input files of every kind for the reader tests (the rule of ``track_gen.io.paths
.read_bytes``, docs/io.md "Input files"): special files, sparse files above a limit, a guard
that keeps a FIFO test from hanging, and the error a read must raise."""

from __future__ import annotations

import os
import socket
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def sparse(path: Path, size: int, head: bytes = b"") -> Path:
    """A file of ``size`` bytes: ``head``, then a hole (no disk used for the rest)."""
    path.write_bytes(head)
    os.truncate(path, size)
    return path


def state(folder: Path) -> list[tuple[str, int, int, int]]:
    """Every entry of ``folder``: name, file type, size, mtime (ns): what a refused read
    must leave as it was."""
    out = []
    for name in sorted(os.listdir(folder)):
        st = os.lstat(Path(folder) / name)
        out.append((name, stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns))
    return out


@contextmanager
def unblocked(fifo: Path) -> Iterator[None]:
    """While inside, open and close ``fifo``'s write end whenever a reader holds it open: a
    reader that (wrongly) opened the FIFO and waits on it gets end-of-file at once, and the
    test fails on its assertion instead of hanging."""
    stop = threading.Event()

    def run():
        while not stop.wait(0.02):
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader (ENXIO), or gone: nothing to release
                continue
            os.close(fd)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


@contextmanager
def special_files(folder: Path, big: int) -> Iterator[dict[str, Path]]:
    """In ``folder``: ``DIR`` (a folder), ``FILE`` (a file holding ``x``), ``FIFO``, ``SOCK``
    (a bound Unix socket), ``ZERO`` (a link to ``/dev/zero``), ``BIG`` (a sparse file of
    ``big`` bytes starting with ``{``); yields ``{name: path}`` with ``/dev/zero`` and
    ``/dev/null`` too, the FIFO guarded by :func:`unblocked`."""
    folder = Path(folder)
    (folder / "DIR").mkdir()
    (folder / "FILE").write_text("x")
    os.mkfifo(folder / "FIFO")
    (folder / "ZERO").symlink_to("/dev/zero")
    sparse(folder / "BIG", big, b"{")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(folder / "SOCK"))
    names = ("DIR", "FILE", "FIFO", "SOCK", "ZERO", "BIG")
    paths = {n: folder / n for n in names}
    paths.update({"/dev/zero": Path("/dev/zero"), "/dev/null": Path("/dev/null")})
    try:
        with unblocked(folder / "FIFO"):
            yield paths
    finally:
        sock.close()


def expected_read_error(path: str, limit: int) -> tuple[type, str] | None:
    """``(error class, text of its message)`` reading ``path`` must raise under the input
    file rule with a size limit of ``limit`` bytes, or None when only the content decides."""
    if path == "" or "\x00" in path:
        return ValueError, "not a usable file name"
    try:
        st = os.stat(path)
    except OSError:  # missing, a file used as a folder, too long, a loop
        return FileNotFoundError, "no such file"
    if stat.S_ISDIR(st.st_mode):
        return IsADirectoryError, "is a folder"
    if not stat.S_ISREG(st.st_mode):
        return ValueError, "not a regular file"
    if st.st_size > limit:
        return ValueError, f"more than the {limit:,} bytes"
    return None
