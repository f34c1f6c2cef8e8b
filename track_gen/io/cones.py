"""Cone maps for the Formula Student Driverless Simulator (FSDS): :func:`write_cones`.

The FSDS custom-map CSV has no header; every line is one cone::

    tag,x,y,direction,x_variance,y_variance,xy_covariance

``tag`` is ``blue`` (left border of the driving direction), ``yellow`` (right border) or
``big_orange`` (start/finish line; FSDS wants 2 or 4 of them to orient the line); ``x, y``
in metres in a right-handed plan-view frame; ``direction`` a heading in radians; the
variances are unused by the simulator (written 0.0).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.checks import check_float
from ..results import Track
from .paths import atomic_write_text, check_out_path
from .tum import course_rows, fmt, locate_on_loop, loop_segments

__all__ = ["CONE_COLUMNS", "CONE_TAGS", "DEFAULT_CONE_SPACING", "MAX_CONES", "write_cones"]

#: Columns of an FSDS cone map, in file order (the file itself has no header line).
CONE_COLUMNS = ("tag", "x", "y", "direction", "x_variance", "y_variance", "xy_covariance")
#: Cone tags: the left border, the right border, the start line.
CONE_TAGS = ("blue", "yellow", "big_orange")
#: Default arc spacing between consecutive cones of one border, track units.
DEFAULT_CONE_SPACING = 3.0
#: Most cones one border may get (a spacing that would place more is refused).
MAX_CONES = 100_000
#: Fewest cones per border, the start cone included.
MIN_CONES = 4


def _place(border: np.ndarray, spacing: float, side: str) -> tuple[np.ndarray, np.ndarray]:
    """``k`` points at equal arc steps ``<= spacing`` along the closed plan-view polyline
    ``border`` (``[n, 2]``), the first at ``border[0]``; returns (points ``[k, 2]``,
    headings ``[k]`` in radians of the segment each point lies on)."""
    seg, seg_len, starts = loop_segments(border)
    total = float(seg_len.sum())
    ratio = total / spacing if total > 0 else 0.0
    if ratio > MAX_CONES:  # compared as a float: a tiny spacing makes it inf
        raise ValueError(
            f"write_cones: spacing = {spacing!r} would place {ratio:.3g} cones on the {side} "
            f"border (length {total:.6g}); at most {MAX_CONES}: use a larger spacing"
        )
    k = math.ceil(ratio)
    if k < MIN_CONES:
        raise ValueError(
            f"write_cones: spacing = {spacing!r} places only {k} cones on the {side} border "
            f"(length {total:.6g} track units); use a spacing <= {total / MIN_CONES:.6g} "
            f"(at least {MIN_CONES} cones per border)"
        )
    i, frac = locate_on_loop(seg_len, starts, np.arange(k) * (total / k))
    pts = border[i] + frac[:, None] * seg[i]
    heading = np.arctan2(seg[i, 1], seg[i, 0])
    return pts, heading


def write_cones(track: Track, env: int, path, spacing: float = DEFAULT_CONE_SPACING) -> None:
    """Write one env of ``track`` as an FSDS cone map (CSV, no header line).

    Args:
        track: a :class:`~track_gen.Track`.
        env: index of a valid env (``valid[env] == 1``).
        path: str or ``os.PathLike`` of the CSV file (its folder must exist).
        spacing: arc distance between consecutive cones along each border, track units
            (finite, > 0; default :data:`DEFAULT_CONE_SPACING`). Each border gets
            ``ceil(border length / spacing)`` equally spaced cones (so the real spacing is
            at most ``spacing``), between 4 and :data:`MAX_CONES`.

    Layout: columns :data:`CONE_COLUMNS`; first the two ``big_orange`` cones of the start line
    (the border points of bead 0: the right one, then the left one; FSDS orients its
    finish line from this pair), then the ``blue`` cones of the left border (the side of
    ``normal``) and the ``yellow`` cones of the right border, each in driving order starting
    after the start line. ``direction`` is the heading (radians) of the border segment the
    cone stands on; the three variance columns are 0.0. Coordinates are plan-view ``x, y``
    in track units (FSDS reads metres): generate at metre scale
    (``TrackGenConfig(scale=..., half_width=...)``) for a drivable map.

    Raises:
        TypeError: ``track``, ``env``, ``spacing`` or ``path`` of the wrong kind.
        ValueError: ``env`` out of range or invalid (names its fail bits); ``spacing`` NaN,
            inf, <= 0, or giving fewer than 4 or more than ``MAX_CONES`` cones on a border.
        OSError: ``path`` refused as :func:`~track_gen.io.write_tum` refuses it (no such
            folder, a folder, not writable).
    """
    rows = course_rows(track, env, "write_cones")
    sp = check_float("spacing", spacing, lo=0.0, lo_open=True, hint="an arc distance > 0")
    p = check_out_path("path", path)
    left, lh = _place(rows.left[:, :2], sp, "left")
    right, rh = _place(rows.right[:, :2], sp, "right")
    out = []

    def line(tag, xy, h):
        out.append(f"{tag},{fmt(xy[0])},{fmt(xy[1])},{fmt(h)},0.0,0.0,0.0")

    line("big_orange", right[0], rh[0])
    line("big_orange", left[0], lh[0])
    for xy, h in zip(left[1:], lh[1:], strict=True):
        line("blue", xy, h)
    for xy, h in zip(right[1:], rh[1:], strict=True):
        line("yellow", xy, h)
    atomic_write_text(p, "\n".join(out) + "\n")
