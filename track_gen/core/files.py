"""What kind of file a path names, from its ``stat`` mode alone (standard library only, so the
command line can refuse a device or a FIFO before the package and Warp are imported).

The one rule of every reader (:func:`track_gen.io.paths.read_bytes`): an input is a regular
file; a folder raises IsADirectoryError; a character or block device, a FIFO, a socket or any
other special file raises ValueError, both naming the reader (``who``), the path and what to
give instead."""

from __future__ import annotations

import stat

__all__ = ["check_mode", "not_regular"]


def not_regular(mode: int) -> str | None:
    """What a file of this ``st_mode`` is (``"a character device"``, ``"a FIFO (named
    pipe)"``, ...) when it is neither a regular file nor a folder; ``None`` when it is one."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kinds = (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((text for test, text in kinds if test(mode)), "not a regular file")


def check_mode(mode: int, who: str, where: str, what: str) -> None:
    """Refuse an input whose ``st_mode`` is not a regular file: IsADirectoryError for a folder,
    ValueError for anything else (``"{who}: {where} is a FIFO (named pipe), not a regular
    file: give a {what}"``)."""
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{who}: {where} is a folder, not a {what}")
    kind = not_regular(mode)
    if kind is not None:
        raise ValueError(f"{who}: {where} is {kind}, not a regular file: give a {what}")
