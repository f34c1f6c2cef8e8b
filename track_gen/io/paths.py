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
"""

from __future__ import annotations

import io
import os
import secrets
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "NAME_MAX",
    "PATH_MAX",
    "atomic_write",
    "atomic_write_text",
    "check_in_path",
    "check_out_path",
    "check_picture_path",
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


def read_bytes(name: str, path, who: str, what: str = "file") -> tuple[Path, bytes]:
    """``(Path, contents)`` of the file ``path`` (checked by :func:`check_in_path`):
    FileNotFoundError naming ``who`` and the path when there is no such file,
    IsADirectoryError for a folder, any other OSError re-raised as its class naming the
    path."""
    p = check_in_path(name, path)
    where = os.fspath(path)
    if os.path.isdir(p):
        raise IsADirectoryError(f"{who}: {where} is a folder, not a {what}")
    if not os.path.exists(p):
        raise FileNotFoundError(f"{who}: no such file: {where}")
    try:
        return p, p.read_bytes()
    except OSError as exc:
        raise _reraise(exc, name, where, "read it") from exc


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
