"""Real circuits as a pipeline: :func:`tracks_spec` (a ``PipelineSpec`` of the
``real_track`` sampler, with the circuits' own left and right widths per bead)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from ..config import TrackGenConfig
from ..core.checks import check_choice
from ..core.units import METRES, TRACK_UNITS
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


#: What validity keeps of the widths at its default ``thickness_tol`` (0.02).
VALID_KEEP = 0.98
#: Share of the largest valid width a narrowed bead keeps (a margin for the float32 beads).
HAIRPIN_KEEP = 0.97
#: How far past validity's limit (relative) a host bead must be before the import narrows it:
#: the host's float64 beads differ from the device's float32 ones at the last digits, and a
#: circuit the device accepts must keep its widths.
HOST_SLACK = 0.01


def _host_beads(xy: np.ndarray, spacing: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The beads the resample stage places on the closed polyline ``xy`` (float64 ``[P, 2]``)
    at ``spacing``: ``(beads [n, 2], edge index [n], fraction along it [n])``."""
    _, seg_len, starts = loop_segments(xy)
    total = float(starts[-1] + seg_len[-1])
    n = int(math.floor(total / spacing)) + 1
    while n > 1 and (n - 1) * spacing >= total:
        n -= 1
    j, t = locate_on_loop(seg_len, starts, np.arange(n) * (total / n))
    t = np.clip(t, 0.0, 1.0)
    nxt = (j + 1) % len(xy)
    return xy[j] + t[:, None] * (xy[nxt] - xy[j]), j, t


def _bead_checks(rows: np.ndarray, spacing: float, keep: float, levels=None):
    """Validity's thickness checks (``stages/validate.py``) of the beads a circuit's table
    ``rows`` (float64 ``[P, 4]``) gets at ``spacing``, in float64 on the host: per bead its
    table edge ``j``, the inside side's column (2 left, 3 right), its curvature radius and
    the inner width validity accepts there; and every pair of beads beyond the band closer
    than ``keep`` times the widths they turn towards each other, as ``(i, j, column of i,
    column of j, distance)``, pairs on the two decks of an overpass (``levels``, see
    :func:`overpass_levels`) left out."""
    beads, edge, t = _host_beads(rows[:, :2], spacing)
    n = len(beads)
    nxt = (edge + 1) % len(rows)
    w = rows[edge, 2:] + t[:, None] * (rows[nxt, 2:] - rows[edge, 2:])
    a = beads - np.roll(beads, 1, axis=0)
    b = np.roll(beads, -1, axis=0) - beads
    ac = np.roll(beads, -1, axis=0) - np.roll(beads, 1, axis=0)
    cross = a[:, 0] * ac[:, 1] - a[:, 1] * ac[:, 0]
    den = np.hypot(*a.T) * np.hypot(*b.T) * np.hypot(*ac.T)
    with np.errstate(divide="ignore", invalid="ignore"):
        radius = np.where(cross != 0, den / (2.0 * np.abs(cross)), np.inf)
    inside = np.where(cross > 0, 2, 3)
    tangent = np.roll(beads, -1, axis=0) - np.roll(beads, 1, axis=0)
    tangent /= np.maximum(np.hypot(*tangent.T), 1e-300)[:, None]
    normal = np.stack([-tangent[:, 1], tangent[:, 0]], axis=1)
    total = float(np.hypot(*b.T).sum())
    w_max = float(w.max())
    band = min(max(int(round(2.0 * w_max / max(total / n, 1e-12))), 1), n // 4)
    band = max(band, 1)
    deck = None if levels is None else levels[edge, 0] + t * (levels[nxt, 0] - levels[edge, 0])
    reach = 2.0 * keep * w_max  # no pair farther apart can be too close
    order = np.argsort(beads[:, 0], kind="stable")
    xs = beads[order, 0]
    pairs = []
    for i in range(n):
        lo = np.searchsorted(xs, beads[i, 0] - reach, side="left")
        hi = np.searchsorted(xs, beads[i, 0] + reach, side="right")
        js = order[lo:hi]
        gap = js - i
        js = js[(gap > band) & (gap < n - band)]
        if js.size == 0:
            continue
        d = beads[js] - beads[i]
        dist = np.hypot(d[:, 0], d[:, 1])
        side_i = np.where(d @ normal[i] > 0, 2, 3)
        side_j = np.where(np.einsum("jk,jk->j", -d, normal[js]) > 0, 2, 3)
        wi = np.where(side_i == 2, w[i, 0], w[i, 1])
        wj = np.where(side_j == 2, w[js, 0], w[js, 1])
        bad = dist * (1.0 + HOST_SLACK) < keep * (wi + wj)
        if deck is not None:  # the two decks of an overpass are never too close
            a, b = deck[i], deck[js]
            bad &= ~((a * b < 0) & (np.abs(np.round(np.abs(a)) - np.round(np.abs(b))) < 0.5))
        for q in np.flatnonzero(bad):
            pairs.append((i, int(js[q]), int(side_i[q]), int(side_j[q]), float(dist[q])))
    return edge, inside, radius, w, pairs


def narrow_hairpins(
    rows: np.ndarray, spacing: float, levels: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """Keep a circuit's inner border from folding where a bend is tighter than its width.

    ``rows``: float64 ``[P, 4]`` table rows ``(x, y, width_left, width_right)``. On the beads
    the resample stage will place at ``spacing``, the host runs validity's thickness checks
    (at the default tolerance, ``VALID_KEEP``): a bead whose curvature radius is below its
    inner width (divided by ``VALID_KEEP``), and two beads beyond the band closer than the
    widths they turn towards each other. There, and only there, the table points around the
    bead get ``HAIRPIN_KEEP`` times the width that passes (a margin for the float32 beads);
    repeated until the checks pass (at most 8 rounds). A circuit valid as it is keeps every
    width; ``levels`` (:func:`overpass_levels`) leaves the two decks of a bridge alone.
    Returns the rows (a copy) and the largest narrowing (0: none)."""
    out = rows.copy()
    P = len(rows)

    floor = 10.0 * HALF_WIDTH.bounds()[0]  # a width stays inside half_width's range

    def cap(k, col, width, edge):
        nonlocal largest
        width = max(width, floor)
        for i in ((edge[k] + d) % P for d in (-1, 0, 1, 2)):
            if out[i, col] > width:
                largest = max(largest, float(rows[i, col] - width))
                out[i, col] = width

    largest = 0.0
    for _round in range(8):
        edge, inside, radius, w, pairs = _bead_checks(out, spacing, VALID_KEEP, levels)
        inner = np.where(inside == 2, w[:, 0], w[:, 1])
        tight = np.flatnonzero(inner * VALID_KEEP > (1.0 + HOST_SLACK) * radius)
        if tight.size == 0 and not pairs:
            break
        for k in tight:
            cap(k, inside[k], HAIRPIN_KEEP * radius[k] / VALID_KEEP, edge)
        for i, j, ci, cj, dist in pairs:
            wi, wj = w[i, ci - 2], w[j, cj - 2]
            f = HAIRPIN_KEEP * dist / (VALID_KEEP * (wi + wj))
            cap(i, ci, f * wi, edge)
            cap(j, cj, f * wj, edge)
    return out, largest


def _cross_points(xy: np.ndarray) -> list[tuple[float, float, float]]:
    """The self-crossings of the closed polyline ``xy`` (float64 ``[P, 2]``; a crossing
    through a vertex counts once, on the segments that start there): per
    crossing ``(arc on the earlier pass, arc on the later pass, sin of the crossing angle)``
    (arcs from point 0, in driving order)."""
    seg, seg_len, starts = loop_segments(xy)
    total = float(starts[-1] + seg_len[-1])
    P = len(xy)
    out = []
    for i in range(P - 2):
        a, d = xy[i], seg[i]
        js = np.arange(i + 2, P if i > 0 else P - 1)
        c, e = xy[js], seg[js]
        den = d[0] * e[:, 1] - d[1] * e[:, 0]
        ok = np.abs(den) > 1e-12
        w = c - a
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (w[:, 0] * e[:, 1] - w[:, 1] * e[:, 0]) / den
            u = (w[:, 0] * d[1] - w[:, 1] * d[0]) / den
        hit = ok & (t >= 0) & (t < 1) & (u >= 0) & (u < 1)  # a vertex on the start side
        for q in np.flatnonzero(hit):
            jj = js[q]
            sin = abs(float(den[q])) / (seg_len[i] * seg_len[jj])
            s_a, s_b = starts[i] + t[q] * seg_len[i], starts[jj] + u[q] * seg_len[jj]
            if not any(abs(s_a - o[0]) + abs(s_b - o[1]) < 1e-9 * total for o in out):
                out.append((s_a, s_b, sin))  # a crossing at a vertex counts once
    return out


def overpass_levels(rows: np.ndarray) -> np.ndarray | None:
    """Overpass levels ``[P, 2]`` ``(deck, crossings)`` of a circuit whose centre line crosses
    itself (``rows``: float64 ``[P, 4]``), or None when it does not: at crossing ``c``
    (1-based, in the order found) the later pass in driving order is the bridge (deck
    ``+c``) and the earlier one the road under it (``-c``), each over the stretch where the
    other road's band is within reach (``2 * (w_a + w_b) / sin(angle)`` plus 20 m either
    side, in the circuit's units); 0 elsewhere. Read by validity
    (``engine.stage.Workspace.line_level``)."""
    crossings = _cross_points(rows[:, :2])
    if not crossings:
        return None
    _, seg_len, starts = loop_segments(rows[:, :2])
    total = float(starts[-1] + seg_len[-1])
    w = float(rows[:, 2:].max())
    levels = np.zeros((len(rows), 2), np.float64)
    levels[:, 1] = len(crossings)
    for c, (s_low, s_high, sin) in enumerate(crossings, start=1):
        reach = 2.0 * (2.0 * w) / max(sin, 0.25) + 3.0 * w
        for s, deck in ((s_low, -c), (s_high, c)):
            gap = np.abs(starts - s)
            gap = np.minimum(gap, total - gap)
            levels[gap <= reach, 0] = deck
    return levels


def tracks_spec(
    tracks: Sequence,
    *,
    num_envs: int,
    device=None,
    units: str = "metres",
    assign: str = "env",
    num_points: int | None = None,
    overpasses: bool = True,
    narrow: bool = True,
    **config_fields,
) -> PipelineSpec:
    """A track pipeline whose env ``e`` drives ``tracks[e % len(tracks)]`` at its real widths.

    Args:
        tracks: :class:`~track_gen.io.RealTrack` circuits (``read_tum``), one or more.
        num_envs: batch size E.
        device: Warp device (None: Warp's preferred device).
        units: ``"metres"`` keeps the circuits' coordinates and widths (the batch's
            ``Track.unit`` is the circuits' :attr:`~track_gen.io.RealTrack.unit`: ``"m"``);
            ``"normalized"`` centres each circuit's bounding box on the origin and scales it
            (widths too) so its longest side is 1.44 track units, the size of the generated
            tracks (``Track.unit == "track units"``).
        assign: ``"env"``: env ``e`` always drives ``tracks[e % len(tracks)]`` (a
            regeneration rebuilds the same circuit); ``"draw"``: each rebuilt env draws a
            circuit from its (seed, epoch), so ``advance=True`` may pick another one.
        num_points: points per circuit after arc-uniform resampling on the host (default: the
            most points of any circuit, at least 16).
        overpasses: a circuit whose centre line crosses itself (Suzuka's figure eight) crosses
            on a bridge: the later pass in driving order is the upper deck, validity does not
            compare the two decks there and accepts the turning of a loop with that many
            crossings (0 for a figure eight). False: a crossing makes the circuit invalid.
        narrow: where a hairpin is tighter than its inner width (at the bead spacing), the
            inner width is narrowed there so that the inner border does not fold (Spa's La
            Source at 3 m beads); the rest of the circuit keeps its widths. False: such a
            circuit is invalid. Each env reports what its circuit got:
            ``generator.diagnostics["real_track.narrowed"]`` (float32 ``[E]``, the largest
            narrowing, in the circuit's units) and ``["real_track.overpasses"]`` (int32
            ``[E]``).
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
    for name, flag in (("overpasses", overpasses), ("narrow", narrow)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"tracks_spec: {name} must be a bool, got {type(flag).__name__}")
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
    # "metres" keeps the circuits' own unit (RealTrack.unit: metres, or track units read back
    # from a normalized course's export); they must agree
    own = {getattr(t, "unit", METRES) for t in tracks}
    if len(own) > 1 and units == "metres":
        raise ValueError(
            f"tracks mix units {sorted(own)}: pass circuits of one unit, or units='normalized'"
        )
    own_unit = own.pop() if len(own) == 1 else METRES
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
    # real circuits import whole: bridges and hairpins tighter than their inner width
    report = np.zeros((len(rows), 2), np.float32)
    levels = []
    capacity = int(config_fields.get("N_max", need))
    for k in range(len(rows)):
        r64 = table[k].astype(np.float64)
        lv = overpass_levels(r64) if overpasses else None
        if narrow and int(math.ceil(lengths[k] / bead)) + 2 <= capacity:  # else truncated
            r64, report[k, 0] = narrow_hairpins(r64, bead, lv)
            table[k] = r64.astype(np.float32)
        report[k, 1] = 0 if lv is None else lv[0, 1]
        levels.append(lv)
    level_table = None
    if any(lv is not None for lv in levels):
        level_table = np.zeros((len(rows), num_points, 2), np.float32)
        for k, lv in enumerate(levels):
            if lv is not None:
                level_table[k] = lv
    fields = {"N_max": max(need, 8), "relax_enable": False, **config_fields}
    fields.setdefault("unit", TRACK_UNITS if units == "normalized" else own_unit)
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
    options = {"table": table, "assign": assign, "report": report}
    if level_table is not None:
        options["levels"] = level_table
    sampler = StageSpec("real_track", options=options)
    return dataclasses.replace(spec, stages=(sampler, *spec.stages[1:]))
