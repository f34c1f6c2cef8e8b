"""Real circuits in the TUM racetrack-database layout: :class:`RealTrack`, :func:`read_tum`,
:func:`write_tum`, and the host-side helpers every writer of ``track_gen.io`` shares.

The layout (one circuit per CSV file, metres)::

    # x_m,y_m,w_tr_right_m,w_tr_left_m
    -0.32,1.09,7.57,7.36
    ...

``x_m, y_m`` is a centerline point; ``w_tr_right_m`` / ``w_tr_left_m`` the distances from it
to the right and left track borders, seen in the driving direction (the order of the rows).
The loop is closed: the last point joins the first (a closing duplicate of the first point
is accepted and dropped).

Units: the layout's columns are metres. A track in normalized "track units" is written with a
second comment line, ``# unit: track units``, and :func:`read_tum` reads it back into
:attr:`RealTrack.unit`, so a round trip keeps the length and says in which unit it is.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from ..core.checks import check_int, is_bool, is_int, is_number
from ..core.units import METRES, UNITS
from ..results import FailBit, GateSequence, Track
from .paths import (
    MAX_CSV_BYTES,
    atomic_write_text,
    check_out_path,
    check_picture_path,
    read_bytes,
    save_figure,
)

__all__ = ["TUM_COLUMNS", "TUM_HEADER", "RealTrack", "plot_real_tracks", "read_tum", "write_tum"]

#: Column names of the TUM racetrack-database CSV layout, in file order.
TUM_COLUMNS = ("x_m", "y_m", "w_tr_right_m", "w_tr_left_m")
#: The header line :func:`write_tum` writes (and :func:`read_tum` expects when present).
TUM_HEADER = "# " + ",".join(TUM_COLUMNS)
#: Fewest distinct points of a circuit.
MIN_POINTS = 4
#: The comment that names a file's unit when it is not metres (``# unit: track units``).
UNIT_PREFIX = "unit:"


# ----------------------------------------------------------------------------- RealTrack
@dataclass(frozen=True)
class RealTrack:
    """A real circuit: a closed centerline with per-point left and right widths.

    Attributes:
        name: the circuit's name (:func:`read_tum`: the file stem).
        xy: float64 ``[N, 2]``, metres: centerline points in driving order, the loop closed
            from the last point back to the first (no closing duplicate), ``N >= 4``.
        width_right: float64 ``[N]``, metres, > 0: distance from ``xy[i]`` to the right
            border (right of the driving direction).
        width_left: float64 ``[N]``, metres, > 0: distance to the left border.
        unit: the unit of ``xy`` and the widths: ``"m"`` (the database's), or ``"track
            units"`` for a normalized course written by :func:`write_tum`.

    The arrays are read-only copies. Construction checks shapes, finiteness, positive
    widths, at least 4 points and no repeated consecutive point (the closing pair included),
    raising ValueError naming the field and the fix; a non-str name, or an array whose
    elements are not real numbers (complex, bool, str, object), is a TypeError.
    """

    name: str
    xy: np.ndarray
    width_right: np.ndarray
    width_left: np.ndarray
    unit: str = METRES

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"RealTrack.name must be a str, got {type(self.name).__name__}")
        if not isinstance(self.unit, str) or self.unit not in UNITS:
            raise ValueError(f"RealTrack.unit = {self.unit!r}: must be one of {UNITS}")
        xy = float_array("RealTrack.xy", self.xy)
        if xy.ndim != 2 or xy.shape[1] != 2:
            raise ValueError(f"RealTrack.xy must have shape [N, 2], got {list(xy.shape)}")
        n = xy.shape[0]
        widths = {}
        for field in ("width_right", "width_left"):
            w = float_array(f"RealTrack.{field}", getattr(self, field))
            if w.shape != (n,):
                raise ValueError(
                    f"RealTrack.{field} must have shape [{n}] (one width per xy point), "
                    f"got {list(w.shape)}"
                )
            widths[field] = w
        if n < MIN_POINTS:
            raise ValueError(
                f"RealTrack.xy has {n} points; a circuit needs at least {MIN_POINTS} distinct "
                "points"
            )
        bad = np.flatnonzero(~np.all(np.isfinite(xy), axis=1))
        if bad.size:
            raise ValueError(
                f"RealTrack.xy[{bad[0]}] = {xy[bad[0]].tolist()} is not finite; every "
                "coordinate must be a finite number"
            )
        for field, w in widths.items():
            bad = np.flatnonzero(~(np.isfinite(w) & (w > 0)))
            if bad.size:
                raise ValueError(
                    f"RealTrack.{field}[{bad[0]}] = {w[bad[0]]!r} must be finite and > 0"
                )
        d = np.roll(xy, -1, axis=0) - xy
        step = np.hypot(d[:, 0], d[:, 1])  # no underflow to 0 for tiny coordinates
        rep = np.flatnonzero(step == 0.0)
        if rep.size:
            i = int(rep[0])
            raise ValueError(
                f"RealTrack.xy[{i}] and xy[{(i + 1) % n}] are the same point "
                f"{xy[i].tolist()}; drop the repeated point (the loop closes by itself)"
            )
        for field, arr in (("xy", xy), *widths.items()):
            arr.flags.writeable = False
            object.__setattr__(self, field, arr)

    @property
    def num_points(self) -> int:
        """N, the number of centerline points."""
        return int(self.xy.shape[0])

    @property
    def length(self) -> float:
        """Closed polyline length of ``xy`` (closing segment included), in :attr:`unit`."""
        d = np.roll(self.xy, -1, axis=0) - self.xy
        return float(np.hypot(d[:, 0], d[:, 1]).sum())

    def normals(self) -> np.ndarray:
        """float64 ``[N, 2]``: unit plan-view left normals ``(-t.y, t.x)`` of the unit
        central-difference tangents ``t`` of the closed loop."""
        t = np.roll(self.xy, -1, axis=0) - np.roll(self.xy, 1, axis=0)
        norm = np.hypot(t[:, 0], t[:, 1])
        norm[norm == 0.0] = 1.0  # a point whose neighbours coincide: no direction to take
        t = t / norm[:, None]
        return np.stack([-t[:, 1], t[:, 0]], axis=1)

    def borders(self) -> tuple[np.ndarray, np.ndarray]:
        """``(left, right)``: float64 ``[N, 2]`` border points, metres:
        ``xy + width_left * n`` and ``xy - width_right * n`` (``n``: :meth:`normals`)."""
        n = self.normals()
        return self.xy + self.width_left[:, None] * n, self.xy - self.width_right[:, None] * n


def float_array(name: str, value) -> np.ndarray:
    """``value`` (an array or nested sequence of real numbers) as a new float64 array.

    The element kind follows the rule of ``track_gen/checks.py``: complex, bool, str, bytes,
    datetime and other non-number elements are a TypeError (never converted: a complex
    value would lose its imaginary part, a bool become 0 or 1); a ragged sequence or a number
    beyond float64 is a ValueError."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from None
    if arr.dtype.kind == "O":
        for v in arr.reshape(-1).tolist():
            if not is_number(v):
                raise TypeError(
                    f"{name} must be an array of real numbers, got an element "
                    f"{type(v).__name__} {v!r:.40}"
                )
    elif arr.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must be an array of real numbers (int or float), got dtype {arr.dtype}"
            f"{': pass the real part explicitly' if arr.dtype.kind == 'c' else ''}"
        )
    try:
        return np.array(arr, dtype=np.float64, copy=True)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from None


# ----------------------------------------------------------------------------- closed polylines
def loop_segments(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The segments of the closed polyline ``points`` (``[n, 2]``; segment ``i`` runs from
    ``points[i]`` to ``points[(i + 1) % n]``): their vectors ``[n, 2]``, lengths ``[n]`` and
    start arcs ``[n]`` (running float64 sums, 0 first; the closed length is
    ``starts[-1] + lengths[-1]``)."""
    seg = np.roll(points, -1, axis=0) - points
    seg_len = np.hypot(seg[:, 0], seg[:, 1])
    starts = np.concatenate([[0.0], np.cumsum(seg_len)[:-1]])
    return seg, seg_len, starts


def locate_on_loop(
    seg_len: np.ndarray, starts: np.ndarray, s: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Where the arc positions ``s`` (in ``[0, closed length)``) lie on a polyline described by
    :func:`loop_segments`: the segment index of each and the fraction along it (0 on a
    zero-length segment)."""
    i = np.clip(np.searchsorted(starts, s, side="right") - 1, 0, len(starts) - 1)
    frac = np.where(seg_len[i] > 0, (s - starts[i]) / np.where(seg_len[i] > 0, seg_len[i], 1), 0)
    return i, frac


# ----------------------------------------------------------------------------- read_tum
def read_tum(path) -> RealTrack:
    """Read one circuit from a CSV in the TUM racetrack-database layout.

    Args:
        path: str or ``os.PathLike`` of the CSV file.

    Returns:
        A :class:`RealTrack` named after the file stem; ``xy`` and the widths in the file's
        unit (metres, or the unit its ``# unit:`` comment names), in row order.

    Accepted: the header comment ``# x_m,y_m,w_tr_right_m,w_tr_left_m`` (optional), a comment
    ``# unit: track units`` (:func:`write_tum` of a normalized course; the circuit's
    :attr:`RealTrack.unit`, metres without it), other comment lines starting with ``#``,
    spaces around values, blank lines, a closing row that repeats the first point (dropped).

    Raises:
        FileNotFoundError: no file at ``path`` (the message names the path).
        IsADirectoryError: ``path`` is a folder.
        ValueError: not a regular file (a device, a FIFO, a socket: refused without reading
            it), a file larger than :data:`~track_gen.io.paths.MAX_CSV_BYTES` (16 MiB,
            refused before reading it), or a malformed file: the message names the file, the
            line number, the column and the bad value (not a number, NaN/inf, a width <= 0,
            a wrong column count), or says what is wrong with the circuit as a whole (fewer
            than 4 distinct points, a point repeated on consecutive rows, a header with other
            columns, text that is not UTF-8). Nothing is returned half-built.
        TypeError: ``path`` is not a str / PathLike.
    """
    p, raw = read_bytes("path", path, "read_tum", "CSV file", max_bytes=MAX_CSV_BYTES)
    where = os.fspath(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{where}: not a UTF-8 text file ({exc.reason} at byte {exc.start})"
        ) from None

    rows: list[tuple[float, float, float, float]] = []
    lines: list[int] = []
    unit = METRES
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            _check_header(where, lineno, s)
            body = s.lstrip("#").strip()
            if body.startswith(UNIT_PREFIX):
                unit = body[len(UNIT_PREFIX) :].strip()
                if unit not in UNITS:
                    raise ValueError(f"{where} line {lineno}: unit {unit!r} is not one of {UNITS}")
            continue
        cells = s.split(",")
        if len(cells) != len(TUM_COLUMNS):
            raise ValueError(
                f"{where} line {lineno}: expected {len(TUM_COLUMNS)} columns "
                f"({','.join(TUM_COLUMNS)}), got {len(cells)}: {_clip(s)!r}"
            )
        vals = []
        for col, cell in zip(TUM_COLUMNS, cells, strict=True):
            vals.append(_parse_cell(where, lineno, col, cell.strip()))
        rows.append(tuple(vals))
        lines.append(lineno)

    if not rows:
        raise ValueError(f"{where}: no data rows (expected rows {','.join(TUM_COLUMNS)})")
    data = np.array(rows, dtype=np.float64)
    if len(rows) > 1 and data[-1, 0] == data[0, 0] and data[-1, 1] == data[0, 1]:
        data, lines = data[:-1], lines[:-1]  # closing duplicate of the first point
    same = np.flatnonzero((data[1:, 0] == data[:-1, 0]) & (data[1:, 1] == data[:-1, 1]))
    if same.size:
        k = int(same[0])
        raise ValueError(
            f"{where} line {lines[k + 1]}: point ({data[k + 1, 0]!r}, {data[k + 1, 1]!r}) "
            f"repeats the point of line {lines[k]}; remove the repeated row"
        )
    distinct = np.unique(data[:, :2], axis=0).shape[0]
    if distinct < MIN_POINTS:
        raise ValueError(
            f"{where}: {distinct} distinct points; a circuit needs at least {MIN_POINTS}"
        )
    try:
        return RealTrack(
            name=p.stem,
            xy=data[:, :2],
            width_right=data[:, 2],
            width_left=data[:, 3],
            unit=unit,
        )
    except ValueError as exc:  # a repeated non-consecutive pair closing the loop, ...
        raise ValueError(f"{where}: {exc}") from None


def _clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[: n - 3] + "..."


def _check_header(where: str, lineno: int, s: str) -> None:
    """A comment that names columns must name the TUM columns in the TUM order."""
    body = s.lstrip("#").strip()
    names = [c.strip() for c in body.split(",")]
    if len(names) > 1 and "x_m" in names and names != list(TUM_COLUMNS):
        raise ValueError(
            f"{where} line {lineno}: header columns {names} are not the TUM layout "
            f"{list(TUM_COLUMNS)}; reorder the columns or write the file in that layout"
        )


def _parse_cell(where: str, lineno: int, col: str, cell: str) -> float:
    head = f"{where} line {lineno}, column {col}"
    try:
        v = float(cell)
    except ValueError:
        raise ValueError(f"{head}: {_clip(cell)!r} is not a number") from None
    if not math.isfinite(v):
        raise ValueError(f"{head}: {_clip(cell)!r} is not finite")
    if col.startswith("w_") and v <= 0.0:
        raise ValueError(f"{head}: {_clip(cell)!r} must be a width > 0")
    return v


# ----------------------------------------------------------------------------- course rows
@dataclass(frozen=True)
class CourseRows:
    """One valid env of a :class:`~track_gen.Track` on the host (float64 copies of the
    float32 buffers; ``n = count[env]`` beads, in order).

    Attributes:
        env: the env index.
        center, left, right, tangent, normal: float64 ``[n, 3]``, track units; ``left`` is the
            border on the side of ``normal`` (the plan-view left normal), ``right`` the other.
        width_left, width_right: float64 ``[n]``: plan-view distances of the borders to
            ``center``.
    """

    env: int
    center: np.ndarray
    left: np.ndarray
    right: np.ndarray
    tangent: np.ndarray
    normal: np.ndarray
    width_left: np.ndarray
    width_right: np.ndarray

    @property
    def n(self) -> int:
        return int(self.center.shape[0])


def check_env(result, env, who: str, kind=Track) -> int:
    """``env`` as an int index of a valid env of ``result`` (a ``kind``), else TypeError /
    ValueError naming ``who``, the env and, for an invalid env, its fail bits."""
    if not isinstance(result, kind):
        raise TypeError(f"{who}: expected a track_gen.{kind.__name__}, got {type(result).__name__}")
    if is_bool(env) or not is_int(env):
        raise TypeError(f"{who}: env must be an int, got {type(env).__name__} {env!r}")
    E = result.num_envs
    e = int(env)
    if not 0 <= e < E:
        raise ValueError(f"{who}: env = {e} is out of range: the batch has envs 0 .. {E - 1}")
    if int(result.valid.numpy()[e]) == 0:
        gen = int(result.generation.numpy()[e])
        bits = FailBit(int(result.fail_mask.numpy()[e]))
        why = "it was never generated" if gen < 0 else f"fail_mask = {bits!r}"
        raise ValueError(
            f"{who}: env {e} is invalid ({why}); write a valid env (valid[env] == 1) or "
            "regenerate it first"
        )
    return e


def course_rows(track: Track, env, who: str) -> CourseRows:
    """The host rows of one valid env of ``track`` (checked by :func:`check_env`)."""
    e = check_env(track, env, who)
    n_max = track.N_max
    n = int(track.count.numpy()[e])
    if n < MIN_POINTS or n > n_max:
        raise ValueError(f"{who}: env {e} has count {n}, outside [{MIN_POINTS}, {n_max}]")
    rows = slice(e * n_max, e * n_max + n)

    def host(a):
        return a.numpy()[rows].astype(np.float64)

    center, outer, inner = host(track.center), host(track.outer), host(track.inner)
    tangent, normal = host(track.tangent), host(track.normal)
    for name, arr in (("center", center), ("outer", outer), ("inner", inner)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{who}: env {e} has non-finite {name} rows")
    side = float(np.sum(np.sum((outer - center)[:, :2] * normal[:, :2], axis=1)))
    left, right = (outer, inner) if side >= 0.0 else (inner, outer)
    return CourseRows(
        env=e,
        center=center,
        left=left,
        right=right,
        tangent=tangent,
        normal=normal,
        width_left=np.hypot(*(left - center)[:, :2].T),
        width_right=np.hypot(*(right - center)[:, :2].T),
    )


# ----------------------------------------------------------------------------- writing
def fmt(v: float) -> str:
    """Shortest text that reads back as the same float64 (``repr``)."""
    return repr(float(v))


def write_tum(track: Track, env: int, path) -> None:
    """Write one env of ``track`` as a CSV in the TUM racetrack-database layout.

    Args:
        track: a :class:`~track_gen.Track`.
        env: index of a valid env (``valid[env] == 1``).
        path: str or ``os.PathLike`` of the CSV file (its folder must exist).

    The file holds the header line :data:`TUM_HEADER` and one row per bead
    (``count[env]`` rows, bead order, no closing duplicate): ``center`` x, y in the track's
    :attr:`~track_gen.Track.unit`, then the plan-view distances from the centre to the right
    and the left border (the left
    border is the one on the side of ``normal``). A track in metres (``presets.circuit``, real
    circuits) is written as it is; a track in "track units" gets a second comment line,
    ``# unit: track units``, which :func:`read_tum` reads back (the length and its unit
    survive a round trip; scale the course to metres first if a simulator needs them).
    Heights are not part of the layout. Values
    are written exactly (the float32 coordinates read back bit for bit through
    :func:`read_tum`). The file is written to a temporary name and renamed: a failure leaves
    no partial file.

    Raises:
        TypeError: ``track`` is not a Track, ``env`` not an int, ``path`` not a path.
        ValueError: ``env`` out of range or invalid (the message names its fail bits); a
            path refused by the rule of :mod:`track_gen.io.paths` (``''``, a name longer
            than 255 bytes, ...).
        OSError: FileNotFoundError (no such folder), IsADirectoryError (``path`` is a
            folder), PermissionError (the folder is not writable), each naming the path.
    """
    rows = course_rows(track, env, "write_tum")
    p = check_out_path("path", path)
    out = [TUM_HEADER]
    unit = getattr(track, "unit", METRES)
    if unit != METRES:  # the columns say metres: name the unit the values are in
        out.append(f"# {UNIT_PREFIX} {unit}")
    for (x, y, _), wr, wl in zip(rows.center, rows.width_right, rows.width_left, strict=True):
        out.append(f"{fmt(x)},{fmt(y)},{fmt(wr)},{fmt(wl)}")
    atomic_write_text(p, "\n".join(out) + "\n")


# ----------------------------------------------------------------------------- picture
#: Most circuits :func:`plot_real_tracks` draws in one figure.
MAX_PANELS = 256


def _real_tracks_arg(tracks) -> list:
    """``tracks`` of :func:`plot_real_tracks` as a list of 1 to MAX_PANELS RealTracks."""
    if isinstance(tracks, RealTrack):
        return [tracks]
    if not isinstance(tracks, (list, tuple)):
        raise TypeError(
            "plot_real_tracks: tracks must be a RealTrack or a list / tuple of them, got "
            f"{type(tracks).__name__}; read circuits with read_tum(path)"
        )
    for t in tracks:
        if not isinstance(t, RealTrack):
            raise TypeError(
                f"plot_real_tracks: tracks must hold RealTracks only, got a {type(t).__name__}"
            )
    if not 1 <= len(tracks) <= MAX_PANELS:
        raise ValueError(
            f"plot_real_tracks: {len(tracks)} circuits; draw 1 to {MAX_PANELS} per figure"
        )
    return list(tracks)


def plot_real_tracks(tracks, path, title: str | None = None, columns: int | None = None):
    """Draw circuits with matplotlib: the road band between the borders from the real
    widths, the centerline and the start point, one panel per circuit titled with its name
    and length. Needs matplotlib (``pip install "track_gen[viz]"``).

    Args:
        tracks: a :class:`RealTrack` or a list / tuple of 1 to :data:`MAX_PANELS` of them.
        path: None (only return the figure) or the picture's path: a file in an existing
            folder whose suffix names a format matplotlib writes (``.png``, ``.pdf``,
            ``.svg``, ...; nothing is appended to the name), written through a temporary file.
        title: optional figure title (a str).
        columns: panels per row, an int in ``[1, MAX_PANELS]`` (default 4; never more than
            the number of circuits).

    Returns:
        The ``matplotlib.figure.Figure``.

    Raises:
        ImportError: matplotlib is missing.
        TypeError: ``tracks``, ``title``, ``columns`` or ``path`` of the wrong kind.
        ValueError: no circuit or more than :data:`MAX_PANELS`, ``columns`` out of range, a
            path refused by the rule of :mod:`track_gen.io.paths` (``''``, a name without a
            picture suffix, a name too long); FileNotFoundError / IsADirectoryError /
            PermissionError: its folder is missing, the path is a folder, the folder is not
            writable.
    """
    tracks = _real_tracks_arg(tracks)
    if title is not None and not isinstance(title, str):
        raise TypeError(
            f"plot_real_tracks: title must be a str or None, got {type(title).__name__}"
        )
    if columns is not None:
        columns = check_int("plot_real_tracks columns", columns, 1, MAX_PANELS)
    out = None if path is None else check_picture_path("path", path)
    try:
        from matplotlib.figure import Figure
        from matplotlib.patches import PathPatch
        from matplotlib.path import Path as MplPath
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'plot_real_tracks needs matplotlib; install it with: pip install "track_gen[viz]"'
        ) from exc
    cols = min(columns if columns is not None else 4, len(tracks))
    rows_n = math.ceil(len(tracks) / cols)
    fig = Figure(figsize=(4.0 * cols, 4.0 * rows_n + (0.4 if title else 0.0)))
    for k, t in enumerate(tracks):
        ax = fig.add_subplot(rows_n, cols, k + 1)
        left, right = t.borders()
        ring = np.concatenate([left, left[:1], right[::-1], right[-1:]])
        codes = (
            [MplPath.MOVETO]
            + [MplPath.LINETO] * (len(left) - 1)
            + [MplPath.CLOSEPOLY]
            + [MplPath.MOVETO]
            + [MplPath.LINETO] * (len(right) - 1)
            + [MplPath.CLOSEPOLY]
        )
        band = PathPatch(MplPath(ring, codes), facecolor="#b8b8b8", edgecolor="none")
        ax.add_patch(band)
        for b, c in ((left, "#1f4fd1"), (right, "#e0b000")):
            loop = np.concatenate([b, b[:1]])
            ax.plot(loop[:, 0], loop[:, 1], color=c, lw=0.8)
        c = np.concatenate([t.xy, t.xy[:1]])
        ax.plot(c[:, 0], c[:, 1], color="white", lw=0.6, ls="--")
        ax.plot(t.xy[0, 0], t.xy[0, 1], "o", color="#d04000", ms=4)
        ax.set_title(f"{t.name}: {t.length:,.1f} {t.unit}, {t.num_points} points", fontsize=9)
        ax.set_aspect("equal")
        ax.autoscale_view()
        ax.tick_params(labelsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    if out is not None:
        save_figure(fig, out, "path", dpi=110)
    return fig


def gate_rows(gates: GateSequence, env, who: str) -> dict[str, np.ndarray]:
    """Host rows of one valid env of a :class:`~track_gen.GateSequence`: ``position``,
    ``forward``, ``left``, ``right`` float64 ``[n, 3]``, ``orientation`` ``[n, 4]`` (x, y, z,
    w), ``half_size`` ``[n]``."""
    e = check_env(gates, env, who, kind=GateSequence)
    m = gates.max_gates
    n = int(gates.count.numpy()[e])
    rows = slice(e * m, e * m + n)
    out = {
        name: getattr(gates, name).numpy()[rows].astype(np.float64)
        for name in ("position", "forward", "orientation", "half_size", "left", "right")
    }
    out["env"] = e
    return out
