"""Matplotlib pictures of a batch of tracks (optional: ``pip install "track_gen[viz]"``).

Nothing here imports matplotlib at module import time; :func:`plot_tracks` imports it when
called and builds a :class:`matplotlib.figure.Figure` directly (no ``pyplot``), so it needs
no display and leaves the user's pyplot state and backend untouched.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

from .core.checks import check_choice, check_int, host_values, is_int
from .io.paths import check_picture_path, save_figure
from .results import FailBit, Track

__all__ = ["describe_fail_mask", "plot_tracks"]

#: Envs drawn when ``plot_tracks(envs=None)``.
DEFAULT_MAX_SHOWN = 16
#: Most envs one figure draws (a 16 x 16 grid).
MAX_SHOWN = 256
#: Colormap of the road band when it is coloured by height.
HEIGHT_CMAP = "viridis"
#: Label of the colorbar of a figure coloured by height.
HEIGHT_LABEL = "height (track units)"
_COLOR_BY = ("auto", "height", None)

_ROAD_FACE = "#b8b8b8"
_ROAD_EDGE = "#303030"
_CENTER = "#ffffff"
_BAD_FACE = "#f4b4b4"
_BAD_EDGE = "#c00000"


def _require_matplotlib():
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure
        from matplotlib.patches import PathPatch
        from matplotlib.path import Path
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "track_gen.viz needs matplotlib, which is not installed; "
            'install it with: pip install "track_gen[viz]"'
        ) from exc
    return Figure, PathPatch, Path


def describe_fail_mask(mask: int) -> str:
    """``"TURNING|THICKNESS"`` for a ``fail_mask`` value (bit order; ``""`` for 0).

    Bits not defined by :class:`~track_gen.FailBit` are appended as ``0x..``.
    """
    mask = int(mask)
    names = []
    rest = mask
    for bit in FailBit:
        if mask & bit:
            names.append(bit.name)
            rest &= ~int(bit)
    if rest:
        names.append(hex(rest))
    return "|".join(names)


def _resolve_envs(envs, num_envs: int) -> list[int]:
    """The env indices ``envs`` of :func:`plot_tracks` selects (checked: an int ``n >= 1``,
    or a list / tuple / range / NumPy or Warp array of ints in ``[0, num_envs)``; at most
    :data:`MAX_SHOWN` of them)."""
    if envs is None:
        return list(range(min(num_envs, DEFAULT_MAX_SHOWN)))
    if is_int(envs):
        n = check_int("plot_tracks envs", envs, lo=1, hint="the number of envs to draw")
        shown = list(range(min(n, num_envs)))
    else:
        if not isinstance(envs, (list, tuple, range, np.ndarray, wp.array)):
            raise TypeError(
                "plot_tracks envs must be None, an int or a list of env indices, got "
                f"{type(envs).__name__} {envs!r:.40}"
            )
        host = host_values("plot_tracks envs", envs, "int")
        if host.size == 0:
            raise ValueError("plot_tracks envs is empty: no envs to draw")
        bad = [int(e) for e in host.tolist() if not 0 <= int(e) < num_envs]
        if bad:
            raise ValueError(f"plot_tracks envs: env indices {bad[:8]} are outside [0, {num_envs})")
        shown = [int(e) for e in host.tolist()]
    if len(shown) > MAX_SHOWN:
        raise ValueError(
            f"plot_tracks envs: {len(shown)} envs to draw, at most {MAX_SHOWN} in one figure; "
            "draw fewer (envs=16) or several figures"
        )
    return shown


def _check_args(track, color_by, ncols, title) -> int | None:
    """Every argument of :func:`plot_tracks` but ``envs`` and ``path``; returns ``ncols``."""
    if not isinstance(track, Track):
        raise TypeError(
            "plot_tracks track must be a track_gen.Track (generator.result), got "
            f"{type(track).__name__} {track!r:.40}"
        )
    if color_by is not None:
        check_choice("plot_tracks color_by", color_by, _COLOR_BY[:2], hint="or None")
    if ncols is not None:
        ncols = check_int("plot_tracks ncols", ncols, lo=1, hint="the grid's columns")
    if title is not None and not isinstance(title, str):
        raise TypeError(f"plot_tracks title must be a str or None, got {type(title).__name__}")
    return ncols


def _loop(rows: np.ndarray) -> np.ndarray:
    """Finite (x, y) rows of one env, closed (first point repeated at the end)."""
    xy = rows[:, :2]
    xy = xy[np.all(np.isfinite(xy), axis=1)]
    if len(xy) >= 2:
        xy = np.concatenate([xy, xy[:1]], axis=0)
    return xy


def _band_quads(o: np.ndarray, i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The band's quads ``(inner[k], outer[k], outer[k+1], inner[k+1])`` of one env (the
    closing quad ``n-1 -> 0`` included) in plan view, ``[n, 4, 2]``, and their mean height
    ``[n]``; quads with a non-finite corner are dropped."""
    o1, i1 = np.roll(o, -1, axis=0), np.roll(i, -1, axis=0)
    quads = np.stack([i, o, o1, i1], axis=1)  # [n, 4, 3]
    keep = np.all(np.isfinite(quads), axis=(1, 2))
    quads = quads[keep]
    return quads[:, :, :2], quads[:, :, 2].mean(axis=1)


def _height_range(rows: list[np.ndarray]) -> tuple[float, float] | None:
    """(lowest, highest) finite z over the given ``[n, 3]`` bead rows, or None."""
    z = np.concatenate([r[:, 2] for r in rows]) if rows else np.empty(0)
    z = z[np.isfinite(z)]
    if z.size == 0:
        return None
    return float(z.min()), float(z.max())


def plot_tracks(
    track: Track,
    envs=None,
    ncols: int | None = None,
    path=None,
    title: str | None = None,
    color_by: str | None = "auto",
):
    """Draw a grid of tracks from a batch and return the :class:`matplotlib.figure.Figure`.

    Each subplot shows one env: the road band between ``outer`` and ``inner`` filled, its
    borders, and the centerline dashed, in equal aspect without ticks. A valid env is titled
    ``"env 3 (L=4.82)"`` (``L`` the closed length); an invalid env is drawn in red and titled
    with its fail bits, e.g. ``"env 7: TURNING|THICKNESS"``; an env never built says so.

    Elevated tracks. When the band is coloured by height, each valid env's band is a
    :class:`~matplotlib.collections.PolyCollection` of its quads
    ``(inner[k], outer[k], outer[k+1], inner[k+1])`` (plan view), each quad coloured by its
    mean height with :data:`HEIGHT_CMAP` on one scale shared by every subplot (the lowest
    to the highest bead height of the valid envs shown), and the figure gets one colorbar
    labelled :data:`HEIGHT_LABEL` (an extra axes, the last of ``fig.axes``). Invalid envs
    are drawn in red as usual. A track drawn without height colouring gives exactly the
    artists of a flat track: one axes per shown env.

    Args:
        track: a :class:`~track_gen.Track` (``generator.result`` or ``generate()``'s return).
            Its arrays are copied to the host with ``.numpy()``.
        envs: None (the first ``min(E, 16)`` envs), an int ``n >= 1`` (the first
            ``min(n, E)`` envs) or a list / tuple / range / NumPy or Warp array of env
            indices in ``[0, E)``; at most :data:`MAX_SHOWN` envs are drawn in one figure.
        ncols: grid columns, an int >= 1 (default ``ceil(sqrt(number of envs shown))``).
        path: None, or the picture's path: a file in an existing folder whose suffix names
            a format matplotlib writes (``.png``, ``.pdf``, ``.svg``, ...; nothing is
            appended to the name), written through a temporary file. The rule of every
            writer of the library (:mod:`track_gen.io.paths`).
        title: optional figure title (a str).
        color_by: ``"auto"`` (default): colour the band by height when the shown envs' beads
            have more than one height (an elevated track), else draw it plain; ``"height"``:
            always colour by height (a flat track gets one colour); None: never.

    Raises:
        ImportError: matplotlib is not installed (``pip install "track_gen[viz]"``).
        TypeError: ``track`` not a :class:`~track_gen.Track`; ``envs``, ``ncols``,
            ``title``, ``color_by`` or ``path`` of the wrong kind (a float count, a str of
            envs, ...).
        ValueError: ``color_by`` is not one of ``"auto"``, ``"height"``, None; ``envs``
            empty, out of range or more than :data:`MAX_SHOWN`; ``ncols < 1``; a path
            refused by the rule (``''``, no picture suffix, a name too long).
        OSError: FileNotFoundError / IsADirectoryError / PermissionError: the path's folder
            is missing, the path is a folder, the folder is not writable.
    """
    ncols = _check_args(track, color_by, ncols, title)
    E = track.num_envs
    n_max = track.N_max
    shown = _resolve_envs(envs, E)
    out = None if path is None else check_picture_path("path", path)
    Figure, PathPatch, Path = _require_matplotlib()
    if ncols is None:
        ncols = max(1, math.ceil(math.sqrt(len(shown))))
    ncols = int(min(ncols, len(shown)))
    nrows = math.ceil(len(shown) / ncols)

    center = track.center.numpy().reshape(E, n_max, 3)
    outer = track.outer.numpy().reshape(E, n_max, 3)
    inner = track.inner.numpy().reshape(E, n_max, 3)
    count = track.count.numpy()
    valid = track.valid.numpy()
    fail = track.fail_mask.numpy()
    length = track.length.numpy()
    suffix = " m" if getattr(track, "unit", "") == "m" else ""  # metres say so
    generation = track.generation.numpy()

    rows = {}
    for e in shown:
        n = int(max(0, min(int(count[e]), n_max)))
        rows[e] = (center[e, :n], outer[e, :n], inner[e, :n])
    norm = None
    if color_by is not None:
        drawn = [r for e in shown if valid[e] for r in rows[e]]
        zr = _height_range(drawn)
        if zr is not None and (color_by == "height" or zr[1] > zr[0]):
            from matplotlib.colors import Normalize

            lo, hi = zr
            if not hi > lo:  # one height: a scale around it
                lo, hi = lo - 0.5, hi + 0.5
            norm = Normalize(vmin=lo, vmax=hi)

    fig = Figure(figsize=(2.8 * ncols, 2.8 * nrows + (0.4 if title else 0.0)), layout="constrained")
    if title:
        fig.suptitle(title)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[len(shown) :]:
        ax.remove()  # keep exactly one axes per shown env in fig.axes

    mappable = None
    for ax, e in zip(axes, shown, strict=False):
        ok = bool(valid[e])
        face, edge = (_ROAD_FACE, _ROAD_EDGE) if ok else (_BAD_FACE, _BAD_EDGE)
        c = _loop(rows[e][0])
        o = _loop(rows[e][1])
        i = _loop(rows[e][2])
        if norm is not None and ok and len(rows[e][0]) >= 3:
            from matplotlib.collections import PolyCollection

            quads, z = _band_quads(rows[e][1], rows[e][2])
            band = PolyCollection(
                quads, array=z, cmap=HEIGHT_CMAP, norm=norm, edgecolors="face", linewidths=0.3
            )
            ax.add_collection(band)
            mappable = band
        elif len(o) >= 4 and len(i) >= 4:
            # Outer ring plus reversed inner ring: the inner loop becomes a hole.
            verts = np.concatenate([o, i[::-1]], axis=0)
            codes = np.full(len(verts), Path.LINETO, dtype=Path.code_type)
            codes[0] = Path.MOVETO
            codes[len(o) - 1] = Path.CLOSEPOLY
            codes[len(o)] = Path.MOVETO
            codes[-1] = Path.CLOSEPOLY
            ax.add_patch(PathPatch(Path(verts, codes), facecolor=face, edgecolor="none", lw=0))
        for ring in (o, i):
            if len(ring):
                ax.plot(ring[:, 0], ring[:, 1], color=edge, lw=0.8)
        if len(c):
            ax.plot(c[:, 0], c[:, 1], ls=(0, (3, 3)), color=_CENTER if ok else edge, lw=0.8)

        if ok:
            label, color = f"env {e} (L={float(length[e]):.2f}{suffix})", "black"
        elif int(fail[e]) != 0:
            label, color = f"env {e}: {describe_fail_mask(int(fail[e]))}", _BAD_EDGE
        elif int(generation[e]) < 0:
            label, color = f"env {e}: not built", _BAD_EDGE
        else:
            label, color = f"env {e}: invalid", _BAD_EDGE
        ax.set_title(label, fontsize=9, color=color)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xticks([])
        ax.set_yticks([])
        if len(c) == 0:
            ax.text(0.5, 0.5, "no beads", ha="center", va="center", transform=ax.transAxes)

    if norm is not None:
        if mappable is None:  # no valid env drawn: a colorbar for the scale alone
            from matplotlib.cm import ScalarMappable

            mappable = ScalarMappable(norm=norm, cmap=HEIGHT_CMAP)
        fig.colorbar(mappable, ax=list(axes[: len(shown)]), label=HEIGHT_LABEL, shrink=0.8)

    if out is not None:
        save_figure(fig, out, "path", dpi=110)
    return fig
