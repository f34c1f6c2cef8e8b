"""Real circuits as a pipeline: :func:`tracks_spec` (a ``PipelineSpec`` of the
``real_track`` sampler, with the circuits' own left and right widths per bead)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from ..config import TrackGenConfig
from ..core.checks import check_choice
from ..engine.spec import PipelineSpec, StageSpec
from ..engine.stage import N_MAX_HI
from ..pipeline.presets import track_from_config
from ..stages.inflate import HALF_WIDTH
from ..stages.real_track import ASSIGN_MODES
from ..stages.resample import SPACING
from ..stages.road_width import WIDTH_VARIATION
from .tum import float_array, locate_on_loop, loop_segments

__all__ = ["UNITS", "tracks_spec"]

#: Coordinate units of :func:`tracks_spec`.
UNITS = ("metres", "normalized")
#: Longest bounding-box side of a circuit in ``"normalized"`` units (the samplers' extent).
NORMALIZED_EXTENT = 1.44
_MAX_POINTS = 16384
_MAX_BEADS = N_MAX_HI  # the generators' largest N_max
#: Bead spacing of a real circuit, as a fraction of its widest width (the generated tracks'
#: default ``0.6 * half_width``).
SPACING_FRAC = 0.6


def _circuit_arrays(track, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(xy [N, 2], width_left [N], width_right [N])`` of ``tracks[i]`` as float64, checked
    (real numbers only: a complex, bool, str or object array is a TypeError)."""
    try:
        fields = (track.xy, track.width_left, track.width_right)
    except AttributeError as err:
        raise TypeError(
            f"tracks[{i}] is a {type(track).__name__}: expected a track_gen.io.RealTrack "
            "(xy [N, 2], width_left [N], width_right [N]); read one with read_tum(path)"
        ) from err
    names = ("xy", "width_left", "width_right")
    xy, wl, wr = (float_array(f"tracks[{i}].{n}", v) for n, v in zip(names, fields, strict=True))
    n = xy.shape[0] if xy.ndim == 2 else -1
    if xy.ndim != 2 or xy.shape[1] != 2 or n < 4 or wl.shape != (n,) or wr.shape != (n,):
        raise ValueError(
            f"tracks[{i}]: xy must be [N >= 4, 2] and both widths [N], got xy "
            f"{xy.shape}, width_left {wl.shape}, width_right {wr.shape}"
        )
    if not (np.isfinite(xy).all() and np.isfinite(wl).all() and np.isfinite(wr).all()):
        raise ValueError(f"tracks[{i}]: xy and widths must be finite")
    if (wl <= 0).any() or (wr <= 0).any():
        raise ValueError(f"tracks[{i}]: every width must be > 0")
    if np.abs(xy).max() > 1.0e9 or max(wl.max(), wr.max()) > 1.0e6:
        raise ValueError(
            f"tracks[{i}]: coordinates beyond 1e9 or widths beyond 1e6 track units cannot be "
            "represented in float32 beads; convert the circuit to metres"
        )
    return xy, wl, wr


def _check_table_widths(i: int, rows: np.ndarray, units: str) -> None:
    """The widths of circuit ``i``'s float32 table rows ``[P, 4]`` must lie in the range of
    ``half_width`` (a width below it, 1e-300 say, would be 0 or a bead spacing of 0)."""
    lo, hi = HALF_WIDTH.bounds()
    with np.errstate(over="ignore"):
        w = rows[:, 2:].astype(np.float32)
    bad = np.flatnonzero(~((w >= np.float32(lo)) & (w <= np.float32(hi))).all(axis=1))
    if bad.size:
        k = int(bad[0])
        raise ValueError(
            f"tracks[{i}]: width {float(rows[k, 2:].min()):.6g} .. {float(rows[k, 2:].max()):.6g}"
            f" at resampled point {k} (units={units!r}) is out of range: every width must be "
            f"{HALF_WIDTH.range_text()} track units (the range of half_width); convert the "
            "circuit to metres or pass units='normalized'"
        )


def _resample_closed(xy, wl, wr, num_points: int):
    """Arc-uniform ``num_points`` samples of the closed polyline (widths interpolated
    alongside); returns ``([P, 4] rows (x, y, wl, wr), closed length)``."""
    _, seg_len, starts = loop_segments(xy)
    length = float(starts[-1] + seg_len[-1])
    j, t = locate_on_loop(seg_len, starts, np.arange(num_points) * (length / num_points))
    t = np.clip(t, 0.0, 1.0)[:, None]
    nxt = (j + 1) % len(xy)

    def lerp(a):
        a2 = a.reshape(len(xy), -1)
        return a2[j] + t * (a2[nxt] - a2[j])

    rows = np.concatenate([lerp(xy), lerp(wl), lerp(wr)], axis=1)
    return rows, length


def tracks_spec(
    tracks: Sequence,
    *,
    num_envs: int,
    device=None,
    units: str = "metres",
    assign: str = "env",
    num_points: int | None = None,
    **config_fields,
) -> PipelineSpec:
    """A track pipeline whose env ``e`` drives ``tracks[e % len(tracks)]`` at its real widths.

    Args:
        tracks: :class:`~track_gen.io.RealTrack` circuits (``read_tum``), one or more.
        num_envs: batch size E.
        device: Warp device (None: Warp's preferred device).
        units: ``"metres"`` keeps the circuits' coordinates and widths; ``"normalized"``
            centres each circuit's bounding box on the origin and scales it (widths too) so
            its longest side is 1.44 track units, the size of the generated tracks.
        assign: ``"env"``: env ``e`` always drives ``tracks[e % len(tracks)]`` (a
            regeneration rebuilds the same circuit); ``"draw"``: each rebuilt env draws a
            circuit from its (seed, epoch), so ``advance=True`` may pick another one.
        num_points: points per circuit after arc-uniform resampling on the host (default: the
            most points of any circuit, at least 16).
        config_fields: further :class:`~track_gen.TrackGenConfig` fields. Defaults chosen
            here: ``half_width`` = the widest width of the circuits (it sets the bead spacing
            ``0.6 * half_width`` and bounds what the course tools size from it, such as the
            height-field and prop capacities; the borders use the per-bead widths),
            ``N_max`` = the most beads any circuit needs, and ``relax_enable=False`` (a real
            centerline is kept as it is).

    Returns:
        A :class:`~track_gen.pipeline.PipelineSpec` for ``TrackGenerator(spec)`` or
        ``Course.track(spec)``. Each env's borders are the centerline offset by the source's
        left and right widths, resampled along the arc; validity checks the thickness against
        those local widths.

    Raises:
        TypeError: ``tracks`` is not a sequence of circuits.
        ValueError: an empty list, a bad ``units`` / ``assign`` / ``num_points``, a circuit
            with non-finite or non-positive values, or one that needs more beads than the
            largest N_max (4096) (pass a larger ``spacing``, or ``units="normalized"``).
    """
    if isinstance(tracks, (str, bytes)) or not isinstance(tracks, Sequence):
        raise TypeError(
            f"tracks must be a sequence of RealTrack, got {type(tracks).__name__}; e.g. "
            "tracks_spec([read_tum('Monza.csv')], num_envs=64)"
        )
    if len(tracks) == 0:
        raise ValueError("tracks is empty: pass at least one RealTrack")
    units = check_choice("units", units, UNITS)
    assign = check_choice("assign", assign, ASSIGN_MODES)
    if "generator" in config_fields:
        raise TypeError("tracks_spec() sets 'generator' itself (the real_track sampler)")
    if "width_variation" in config_fields:
        wv = WIDTH_VARIATION.check(config_fields["width_variation"], "width_variation")
        if wv != 0.0:
            raise ValueError(
                f"width_variation = {wv!r}: a real circuit keeps its own widths; leave "
                "width_variation at 0"
            )
    # checked before they size the beads (the config checks them again)
    hw_given = None
    if "half_width" in config_fields:
        hw_given = HALF_WIDTH.check(config_fields.pop("half_width"), "half_width")
    spacing = SPACING.check(config_fields.get("spacing"), "spacing")
    circuits = [_circuit_arrays(t, i) for i, t in enumerate(tracks)]
    if num_points is None:
        num_points = min(max(16, max(len(c[0]) for c in circuits)), _MAX_POINTS)
    if isinstance(num_points, bool) or not isinstance(num_points, (int, np.integer)):
        raise TypeError(f"num_points = {num_points!r}: must be an int in [16, {_MAX_POINTS}]")
    if not 16 <= int(num_points) <= _MAX_POINTS:
        raise ValueError(f"num_points = {num_points}: must be in [16, {_MAX_POINTS}]")
    num_points = int(num_points)
    rows, lengths = [], []
    for xy, wl, wr in circuits:
        if units == "normalized":
            lo, hi = xy.min(axis=0), xy.max(axis=0)
            side = float((hi - lo).max())
            s = NORMALIZED_EXTENT / side if side > 0 else math.inf
            if not math.isfinite(s):
                raise ValueError(
                    f"tracks[{len(rows)}] has a bounding box of {side!r} track units: too small "
                    "to scale to units='normalized'; pass units='metres'"
                )
            xy, wl, wr = (xy - 0.5 * (lo + hi)) * s, wl * s, wr * s
        r, length = _resample_closed(xy, wl, wr, num_points)
        if not length > 0:
            raise ValueError(f"tracks[{len(rows)}] has zero length")
        _check_table_widths(len(rows), r, units)
        rows.append(r)
        lengths.append(length)
    table = np.stack(rows).astype(np.float32)
    hw = hw_given if hw_given is not None else float(table[:, :, 2:].max())
    bead = spacing if spacing is not None else SPACING_FRAC * hw
    need = max(int(math.ceil(length / bead)) + 2 for length in lengths)
    if "N_max" not in config_fields and need > _MAX_BEADS:
        raise ValueError(
            f"a circuit {max(lengths):.6g} track units long needs {need} beads at spacing "
            f"{bead:.6g}, more than {_MAX_BEADS}; pass a larger spacing=..."
        )
    fields = {"N_max": max(need, 8), "relax_enable": False, **config_fields}
    config = TrackGenConfig(
        generator="real_track",
        num_envs=num_envs,
        device=device,
        num_points=num_points,
        half_width=hw,
        **fields,
    )
    # the standard track pipeline with the real_track sampler (what track_mix does for mix)
    spec = track_from_config(config)
    sampler = StageSpec("real_track", options={"table": table, "assign": assign})
    return dataclasses.replace(spec, stages=(sampler, *spec.stages[1:]))
