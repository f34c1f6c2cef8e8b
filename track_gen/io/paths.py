"""The paths ``track_gen`` reads and writes: one rule for every writer of :mod:`track_gen.io`,
the pictures of :mod:`track_gen.viz` and :func:`~track_gen.io.plot_real_tracks`, and the
``track-gen`` command line.

An output path names a **file** (a str or ``os.PathLike``, never bytes) in a folder that
exists and is writable. Checked before anything is written, each refusal names the argument,
the value and the fix:

* ``TypeError``: not a str / ``os.PathLike``.
* ``ValueError``: ``''``, a NUL character, a name the file system cannot encode, a name ending
  with a separator, a name longer than :data:`NAME_MAX` bytes (or a path longer than
  :data:`PATH_MAX`), a name that does not end with one of the writer's suffixes (a picture:
  a format matplotlib writes, ``.png``, ``.pdf``, ``.svg``, ...). Nothing is ever appended
  to a name: ``"out"`` is refused, never written as ``out.png``.
* ``FileNotFoundError``: the folder does not exist; ``NotADirectoryError``: it is a file.
* ``IsADirectoryError``: the path is a folder.
* ``PermissionError``: the folder is not writable.

Files are written to a temporary name beside the target and renamed (:func:`atomic_write`):
a failure leaves no file and never a partial one, and an ``OSError`` while writing (a full
disk) is re-raised as the same class with a message naming the argument and the path.

An input path (:func:`read_bytes`, the one reader of every file the library and the
command line read) names a **regular file** no larger than its reader's limit, both checked
before a byte of it is read: a device (``/dev/zero``), a FIFO, a socket is refused with a
ValueError without opening it (and a file swapped for one between the check and the open is
opened without blocking and refused too), a folder with IsADirectoryError, a missing file
with FileNotFoundError, and a file above the limit with a ValueError naming its size and the
limit. The limits, bytes:

* :data:`MAX_CSV_BYTES` (16 MiB): a TUM circuit CSV (``read_tum``; the real circuits are
  30 to 50 kB, about 40 bytes a row: the limit holds some 400,000 rows).
* :data:`MAX_SETTINGS_BYTES` (1 MiB): a settings JSON of ``track-gen explore`` (the page's
  export is under 10 kB; the page's own request limit is the same 1 MiB).
* :data:`MAX_BATCH_NPZ_BYTES` (8 GiB): a ``.npz`` batch file (``read_batch``, ``rebuild``;
  about 64 bytes a bead: 2**17 envs at ``N_max`` 1024; reading it takes about twice its size
  in memory).
* :data:`MAX_BATCH_JSON_BYTES` (1 GiB): a ``.json`` batch file (about 100 bytes a bead,
  10 million beads: 16,384 envs at ``N_max`` 640; parsing takes several times its size in
  memory, so larger batches belong in ``.npz``).
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..core.files import check_mode

__all__ = [
    "MAX_BATCH_JSON_BYTES",
    "MAX_BATCH_NPZ_BYTES",
    "MAX_CSV_BYTES",
    "MAX_SETTINGS_BYTES",
    "NAME_MAX",
    "PATH_MAX",
    "atomic_write",
    "atomic_write_text",
    "check_in_path",
    "check_out_path",
    "check_picture_path",
    "check_writable_folder",
    "picture_suffixes",
    "read_bytes",
    "save_figure",
]

#: Longest file name (one path component), bytes: the limit of ext4, XFS, Btrfs, tmpfs, APFS
#: and NTFS.
NAME_MAX = 255
#: Longest path, bytes (Linux ``PATH_MAX`` with its terminating NUL).
PATH_MAX = 4095
#: Longest suffix a temporary name keeps (the writers that pick a format from it, USD, use
#: short ones).
_TMP_SUFFIX_MAX = 16
#: Characters of the target's stem a temporary name keeps.
_TMP_STEM_MAX = 40

#: Largest TUM circuit CSV :func:`~track_gen.io.read_tum` reads, bytes (16 MiB; a real
#: circuit is 30 to 50 kB).
MAX_CSV_BYTES = 16 * 2**20
#: Largest ``track-gen explore`` settings JSON read, bytes (1 MiB; an export is under 10 kB).
MAX_SETTINGS_BYTES = 2**20
#: Largest ``.npz`` batch file :func:`~track_gen.io.read_batch` reads, bytes (8 GiB).
MAX_BATCH_NPZ_BYTES = 8 * 2**30
#: Largest ``.json`` batch file :func:`~track_gen.io.read_batch` reads, bytes (1 GiB).
MAX_BATCH_JSON_BYTES = 2**30
#: Largest waypoint-path JSON :func:`~track_gen.io.read_waypoint_path` reads, bytes (1 MiB;
#: a published path is under 2 kB).
MAX_WAYPOINT_BYTES = 2**20
#: Bytes :func:`read_bytes` hands a limit function (a format's magic number) before the size
#: check.
HEAD_BYTES = 4
#: Most bytes one ``read`` call asks for (a file larger than this is read in several).
_READ_CHUNK = 2**30
#: stat errors that mean "no file there": a missing name or folder, a file used as a folder,
#: a name too long, a loop of links.
_MISSING = {"ENOENT", "ENOTDIR", "ENAMETOOLONG", "ELOOP"}


def check_in_path(name: str, path) -> Path:
    """``path`` as a Path: TypeError for anything but str / ``os.PathLike``; ValueError for
    ``''``, a NUL character or a name the file system cannot encode."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"{name} must be a str or os.PathLike file name, got {type(path).__name__} {path!r:.60}"
        )
    text = os.fspath(path)
    if not isinstance(text, str) or not text or "\0" in text:
        raise ValueError(f"{name} = {text!r} is not a usable file name: give a file name")
    try:
        os.fsencode(text)
    except UnicodeEncodeError:
        raise ValueError(
            f"{name} = {text!r} is not a usable file name: the file system cannot encode it"
        ) from None
    return Path(text)


def _size_text(n: int) -> str:
    """``"16,777,216 bytes (16 MiB)"``, ``"1,610,612,736 bytes (1.5 GiB)"``, ``"312 bytes"``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n:,} bytes ({n / scale:.3g} {unit})"
    return f"{n} bytes"


def _read_at_most(fd: int, limit: int, size_hint: int) -> bytes:
    """Up to ``limit`` bytes from ``fd`` (fewer at its end), asking for no more than the
    file's size (``size_hint``, 0 for a file whose size stat does not know) plus 64 KiB at
    a time: a small file never costs a ``limit``-sized buffer."""
    parts: list[bytes] = []
    got = 0
    while got < limit:
        want = min(limit - got, max(size_hint - got, 0) + 2**16, _READ_CHUNK)
        chunk = os.read(fd, want)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def read_bytes(
    name: str,
    path,
    who: str,
    what: str = "file",
    *,
    max_bytes: int | Callable[[bytes], tuple[int, str]],
) -> tuple[Path, bytes]:
    """``(Path, contents)`` of the regular file ``path`` (checked by :func:`check_in_path`),
    the one reader of every file the library reads.

    ``max_bytes`` is the largest size accepted, bytes, or a function of the file's first
    :data:`HEAD_BYTES` bytes (a format's magic number) returning ``(limit, what)``. Before a
    byte is read: FileNotFoundError naming ``who`` and the path when there is no such file
    (a missing folder, a file used as a folder, a name too long), IsADirectoryError for a
    folder, ValueError for a device, a FIFO or a socket (refused by ``stat`` without opening
    it, and opened with ``O_NONBLOCK`` and checked again by ``fstat``: never a blocking
    open, never a read of one) and for a file larger than the limit (its size and the
    limit in the message; a file that grows past the limit while being read is refused
    too). Any other OSError is re-raised as its class naming the path."""
    p = check_in_path(name, path)
    where = os.fspath(path)
    try:
        mode = os.stat(p).st_mode
    except OSError as exc:
        if errno.errorcode.get(exc.errno) in _MISSING:
            raise FileNotFoundError(f"{who}: no such file: {where}") from None
        raise _reraise(exc, name, where, "read it") from exc
    check_mode(mode, who, where, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(p, flags)
    except OSError as exc:
        raise _reraise(exc, name, where, "read it") from exc
    try:
        return p, _read_open(fd, name, where, who, what, max_bytes)
    finally:
        os.close(fd)


def _read_open(fd: int, name: str, where: str, who: str, what: str, max_bytes) -> bytes:
    """The contents of the file open as ``fd``, by the rules of :func:`read_bytes`."""
    try:
        st = os.fstat(fd)
    except OSError as exc:  # pragma: no cover - fstat of an open descriptor
        raise _reraise(exc, name, where, "read it") from exc
    check_mode(st.st_mode, who, where, what)  # swapped for another file since the stat
    try:
        head = b""
        if callable(max_bytes):
            head = _read_at_most(fd, HEAD_BYTES, HEAD_BYTES)
            limit, what = max_bytes(head)
        else:
            limit = max_bytes
        if st.st_size <= limit:
            data = head + _read_at_most(fd, limit + 1 - len(head), st.st_size - len(head))
    except OSError as exc:
        raise _reraise(exc, name, where, "read it") from exc
    if st.st_size > limit:
        size = _size_text(st.st_size)
    elif len(data) > limit:  # grew while read, or a size stat does not report
        size = f"at least {_size_text(len(data))}"
    else:
        return data
    raise ValueError(
        f"{who}: {where} is {size}, more than the {_size_text(limit)} a {what} may have: "
        "give a smaller file"
    )


def _check_lengths(name: str, where: str) -> None:
    """Every component at most NAME_MAX bytes, the whole path at most PATH_MAX."""
    raw = os.fsencode(where)
    if len(raw) > PATH_MAX:
        raise ValueError(
            f"{name} = {where[:40]!r}... is {len(raw)} bytes long, more than the {PATH_MAX} a "
            "path may have: give a shorter path"
        )
    for part in raw.split(os.fsencode(os.sep)):
        if len(part) > NAME_MAX:
            text = os.fsdecode(part)
            raise ValueError(
                f"{name} = {where[:40]!r}...: the name {text[:24]!r}... is {len(part)} bytes "
                f"long, more than the {NAME_MAX} a file name may have: give a shorter name"
            )


def check_out_path(name: str, path, suffixes: tuple[str, ...] | None = None) -> Path:
    """``path`` as a Path to write (the rule of the module docs), checked before anything is
    written; ``suffixes``: the accepted endings of the file name (lower case), None: any."""
    p = check_in_path(name, path)
    where = os.fspath(path)
    if where.endswith(("/", os.sep)):
        raise ValueError(f"{name} = {where!r} ends with a separator: give a file name")
    _check_lengths(name, where)
    if os.path.isdir(p):
        raise IsADirectoryError(
            f"{name} = {where!r} is a folder: give a file name inside it, e.g. "
            f"{os.path.join(where, 'out' + (suffixes[0] if suffixes else ''))!r}"
        )
    if suffixes is not None and not p.name.lower().endswith(suffixes):
        example = (p.stem or "out") + suffixes[0]
        raise ValueError(
            f"{name} = {where!r}: the file name must end with one of {list(suffixes)} "
            f"(nothing is appended to it), e.g. {example!r}"
        )
    parent = p.parent if str(p.parent) else Path(".")
    if not os.path.exists(parent):
        raise FileNotFoundError(
            f"{name} = {where!r}: folder {os.fspath(parent)!r} does not exist: create it first"
        )
    if not os.path.isdir(parent):
        raise NotADirectoryError(
            f"{name} = {where!r}: {os.fspath(parent)!r} is a file, not a folder"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(
            f"{name} = {where!r}: folder {os.fspath(parent)!r} is not writable: choose "
            "another folder"
        )
    return p


def check_writable_folder(name: str, folder) -> None:
    """Create and remove an empty file in the existing folder ``folder``: the OSError class
    of the failure (PermissionError, FileNotFoundError, ...) naming ``name`` and the folder
    when no file can be created there. The command line's check of its output folders
    before it generates: ``os.access`` answers yes to root everywhere, also in a read-only
    mount or a pseudo file system such as ``/proc``; this asks the file system itself."""
    where = os.fspath(folder)
    try:
        fd, probe = tempfile.mkstemp(prefix=".track_gen_probe.", dir=folder)
    except OSError as exc:
        msg = (
            f"{name}: no file can be created in folder {where!r} "
            f"({exc.strerror or exc}): choose another folder"
        )
        try:
            new = type(exc)(msg)
        except TypeError:  # pragma: no cover - an OSError subclass with another signature
            new = OSError(msg)
        new.errno = exc.errno
        raise new from None
    os.close(fd)
    os.unlink(probe)


def _suffix(file_name: str) -> str:
    """The last ``.ext`` of a file name, a leading dot included (``".usda"`` for ``".usda"``,
    unlike ``Path.suffix``); ``""`` without a dot."""
    i = file_name.rfind(".")
    return file_name[i:] if i >= 0 else ""


def _reraise(exc: OSError, name: str, where: str, doing: str) -> OSError:
    """``exc`` as the same OSError class with the library's message."""
    msg = f"{name} = {where!r}: could not {doing}: {exc.strerror or exc}"
    try:
        new = type(exc)(msg)
    except TypeError:  # pragma: no cover - an OSError subclass with another signature
        new = OSError(msg)
    new.errno = exc.errno
    return new


def atomic_write(path: Path, write: Callable[[Path], None], name: str = "path") -> None:
    """Call ``write(tmp)`` on a new temporary file beside ``path`` (same suffix, created with
    the process umask like any file), then rename it onto ``path``: a failed write leaves no
    file and never a partial one. An ``OSError`` is re-raised as the same class naming
    ``name`` and ``path``."""
    where = os.fspath(path)
    parent = path.parent if str(path.parent) else Path(".")
    suffix = _suffix(path.name)
    suffix = suffix if len(suffix) <= _TMP_SUFFIX_MAX else ""
    stem = path.name[: len(path.name) - len(suffix)][:_TMP_STEM_MAX]
    for _ in range(100):
        tmp_path = parent / f".{stem}.{os.getpid()}.{secrets.token_hex(4)}.tmp{suffix}"
        try:
            with open(tmp_path, "xb"):
                break
        except FileExistsError:
            continue
        except OSError as exc:
            raise _reraise(exc, name, where, "create a file in its folder") from exc
    else:  # pragma: no cover - 100 random names taken
        raise FileExistsError(f"{name} = {where!r}: no free temporary name beside it")
    try:
        write(tmp_path)
        os.replace(tmp_path, path)
    except OSError as exc:
        tmp_path.unlink(missing_ok=True)
        raise _reraise(exc, name, where, "write it") from exc
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str, name: str = "path") -> None:
    """:func:`atomic_write` of UTF-8 text with ``\\n`` line ends."""
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8", newline="\n"), name)


# ----------------------------------------------------------------------------- pictures
def picture_suffixes() -> tuple[str, ...] | None:
    """The file name endings of the formats matplotlib writes (``".png"`` first), or None when
    matplotlib is not installed (the drawing call then raises ImportError)."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        return None
    kinds = sorted(FigureCanvasBase.get_supported_filetypes())
    return tuple(["." + k for k in kinds if k == "png"] + ["." + k for k in kinds if k != "png"])


def check_picture_path(name: str, path) -> Path:
    """:func:`check_out_path` for a picture: the suffix picks the format and must be one
    matplotlib writes (``.png``, ``.pdf``, ``.svg``, ...)."""
    return check_out_path(name, path, picture_suffixes())


def save_figure(fig, path: Path, name: str = "path", dpi: int = 110) -> None:
    """Render ``fig`` in the format of ``path``'s suffix (checked by
    :func:`check_picture_path`) and write it with :func:`atomic_write`."""
    buf = io.BytesIO()
    fig.savefig(buf, format=_suffix(path.name)[1:].lower(), dpi=dpi)
    data = buf.getvalue()
    atomic_write(path, lambda tmp: tmp.write_bytes(data), name)
