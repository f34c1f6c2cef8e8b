"""Drone waypoint paths in, gate courses and planner inputs out.

:func:`read_waypoint_path` reads a path in the JSON layout of the published minimum-time
benchmarks (start, waypoints in order, end; metres, with the vehicle's limits and a reference
time, ``../shared/data/drone/*.json``) into a :class:`WaypointPath`; :func:`path_gates` turns
start, waypoints and end into gates facing along the path; :func:`gates_spec` turns paths into
a gate pipeline (a ``PipelineSpec`` for ``GateGenerator`` / ``Course.gates``);
:func:`waypoint_arrays` into the arrays of a :class:`~track_gen.tools.MinTimeUtility`.

The JSON layout::

    {"name": "...", "units": "metres, seconds",
     "start": {"position": [x, y, z], "velocity": [vx, vy, vz]},
     "end": {"position": [...], "velocity": [...]},
     "waypoints": [[x, y, z], ...],
     "vehicle": {"max_thrust_accel_norm": 34.32, "max_speed": 90.0, "gravity": 9.8066},
     "reference": {"time_s": 4.83, "solve_ms": 3.5}}

``velocity``, ``vehicle`` and ``reference`` (and each key inside them) are optional.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import warp as wp

from ..config import GateGenConfig
from ..core.budget import AllocationBudget
from ..core.checks import check_choice, check_int
from ..core.extents import COORD_LIMIT
from ..engine.spec import PipelineSpec, StageSpec
from ..stages.gate_frames import GATE_WIDTH
from ..stages.real_track import ASSIGN_MODES
from .paths import MAX_WAYPOINT_BYTES, read_bytes
from .tum import float_array

__all__ = ["WaypointPath", "gates_spec", "path_gates", "read_waypoint_path", "waypoint_arrays"]

#: Points closer than this fraction of the path's extent are one point (the merging rule of
#: the planner too).
SAME_POINT = 1.0e-9
#: Most gates of one path's course (the gate pipelines' ``max_gates`` bound).
MAX_PATH_GATES = 256


def _vec3(name: str, value) -> np.ndarray:
    v = float_array(name, value)
    if v.shape != (3,):
        raise ValueError(f"{name} must be 3 numbers (x, y, z), got shape {v.shape}")
    if not np.isfinite(v).all() or np.abs(v).max() > COORD_LIMIT:
        raise ValueError(f"{name} = {v.tolist()} must be finite, within +-{COORD_LIMIT:g}")
    return v


def _positive(name: str, value) -> float | None:
    if value is None:
        return None
    v = float_array(name, value)
    if v.shape != () or not math.isfinite(float(v)) or not float(v) > 0:
        raise ValueError(f"{name} = {value!r} must be a finite number > 0 (or absent)")
    return float(v)


@dataclass(frozen=True)
class WaypointPath:
    """A drone waypoint path: fly from ``start`` through the ``waypoints`` in order to ``end``.

    Attributes:
        name: the path's name.
        start: float64 ``[3]``, metres: the start position.
        waypoints: float64 ``[K, 3]``, metres, ``K >= 1``: the points to pass, in order.
        end: float64 ``[3]``, metres: the end position.
        start_velocity: float64 ``[3]``, m/s (default at rest).
        end_velocity: float64 ``[3]``, m/s (default at rest).
        t_max: the vehicle's thrust acceleration bound, m/s^2, or None.
        v_max: the vehicle's speed bound, m/s, or None.
        gravity: the gravity the limits were given with, m/s^2, or None.
        reference_time: a reference minimum time from start to end, s, or None.
        reference_ms: the reference planner's solve time, ms, or None.

    The arrays are read-only float64 copies; construction checks shapes, finiteness (within
    ``COORD_LIMIT``) and that the path has two distinct points, raising ValueError (TypeError
    for values that are not numbers) naming the field.
    """

    name: str
    start: np.ndarray
    waypoints: np.ndarray
    end: np.ndarray
    start_velocity: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
    end_velocity: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
    t_max: float | None = None
    v_max: float | None = None
    gravity: float | None = None
    reference_time: float | None = None
    reference_ms: float | None = None

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"WaypointPath.name must be a str, got {type(self.name).__name__}")
        for field in ("start", "end", "start_velocity", "end_velocity"):
            self._freeze(field, _vec3(f"WaypointPath.{field}", getattr(self, field)))
        wps = float_array("WaypointPath.waypoints", self.waypoints)
        if wps.ndim != 2 or wps.shape[1] != 3 or wps.shape[0] < 1:
            raise ValueError(
                f"WaypointPath.waypoints must be [K >= 1, 3] (x, y, z rows), got shape {wps.shape}"
            )
        if not np.isfinite(wps).all() or np.abs(wps).max() > COORD_LIMIT:
            raise ValueError(f"WaypointPath.waypoints must be finite, within +-{COORD_LIMIT:g}")
        if len(wps) + 1 > MAX_PATH_GATES:
            raise ValueError(
                f"WaypointPath.waypoints has {len(wps)} points: at most {MAX_PATH_GATES - 1}"
            )
        self._freeze("waypoints", wps)
        pts = self.points()
        if not np.ptp(pts, axis=0).any():
            raise ValueError("WaypointPath: start, waypoints and end are all one point")
        for field in ("t_max", "v_max", "gravity", "reference_time", "reference_ms"):
            value = getattr(self, field)
            if field == "gravity" and value is not None:
                v = float(float_array("WaypointPath.gravity", value))
                if not (math.isfinite(v) and v >= 0):
                    raise ValueError(f"WaypointPath.gravity = {value!r} must be finite and >= 0")
                object.__setattr__(self, field, v)
            else:
                object.__setattr__(self, field, _positive(f"WaypointPath.{field}", value))

    def _freeze(self, field: str, arr: np.ndarray) -> None:
        arr = np.array(arr, dtype=np.float64)
        arr.setflags(write=False)
        object.__setattr__(self, field, arr)

    def points(self) -> np.ndarray:
        """float64 ``[K + 2, 3]``: start, the waypoints, end (the planner's open path)."""
        return np.vstack([self.start[None], self.waypoints, self.end[None]])

    def gates(self) -> tuple[np.ndarray, np.ndarray]:
        """``(position, forward)`` of the path's gates: :func:`path_gates`."""
        return path_gates(self.start, self.waypoints, self.end)


def _get(where: str, obj, key: str, required: bool = True):
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        if required:
            raise ValueError(f"{where}: the key {key!r} is missing")
        return None
    return obj[key]


def read_waypoint_path(path) -> WaypointPath:
    """Read a waypoint path from a JSON file in the layout of the module docs.

    Args:
        path: str or ``os.PathLike`` of the JSON file.

    Returns:
        A :class:`WaypointPath` named after the file's ``name`` (else its stem), in the file's
        units (metres, seconds).

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: not UTF-8 JSON, a missing or malformed key (the message names the file
            and the key), or a path the :class:`WaypointPath` checks refuse.
        TypeError: ``path`` is not a str / PathLike, or a value is not a number.
    """
    p, raw = read_bytes(
        "path", path, "read_waypoint_path", "JSON file", max_bytes=MAX_WAYPOINT_BYTES
    )
    where = os.fspath(path)
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{where}: not a UTF-8 JSON file ({exc})") from None
    start = _get(where, data, "start")
    end = _get(where, data, "end")
    vehicle = _get(where, data, "vehicle", required=False) or {}
    reference = _get(where, data, "reference", required=False) or {}
    name = _get(where, data, "name", required=False)

    def vel(obj, key):
        v = _get(f"{where} {key}", obj, "velocity", required=False)
        return np.zeros(3) if v is None else v

    try:
        return WaypointPath(
            name=str(name) if name is not None else p.stem,
            start=_get(f"{where} start", start, "position"),
            waypoints=_get(where, data, "waypoints"),
            end=_get(f"{where} end", end, "position"),
            start_velocity=vel(start, "start"),
            end_velocity=vel(end, "end"),
            t_max=_get(f"{where} vehicle", vehicle, "max_thrust_accel_norm", required=False),
            v_max=_get(f"{where} vehicle", vehicle, "max_speed", required=False),
            gravity=_get(f"{where} vehicle", vehicle, "gravity", required=False),
            reference_time=_get(f"{where} reference", reference, "time_s", required=False),
            reference_ms=_get(f"{where} reference", reference, "solve_ms", required=False),
        )
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{where}: {exc}") from None


def _unit(v: np.ndarray) -> np.ndarray | None:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else None


def path_gates(start, waypoints, end) -> tuple[np.ndarray, np.ndarray]:
    """The gates of a waypoint path: one at each waypoint and one at ``end`` (none at
    ``end`` when it returns to ``start`` and two waypoints remain: the path then closes as a
    lap), each facing along the path.

    Args:
        start: ``[3]`` start position, metres (not a gate: where the flight begins).
        waypoints: ``[K, 3]`` waypoints in order, metres, ``K >= 1``.
        end: ``[3]`` end position, metres.

    Returns:
        ``(position, forward)``: float64 ``[G, 3]`` gate centres (metres) and unit directions
        the gates are passed in: the bisector of the unit directions from the previous
        distinct path point and to the next (the incoming direction at the last point, or at
        a U-turn, whose bisector vanishes; the outgoing one where no distinct point comes
        before).

    Raises ValueError / TypeError as :class:`WaypointPath` (the same checks).
    """
    wpath = WaypointPath("path", start, waypoints, end)
    poly = wpath.points()
    extent = float(np.ptp(poly, axis=0).max())
    tol = SAME_POINT * extent
    last = len(poly) - 1
    gate_rows = list(range(1, last + 1))
    if np.linalg.norm(poly[last] - poly[0]) <= tol and len(gate_rows) >= 3:
        gate_rows = gate_rows[:-1]  # the end returns to the start: a lap
    pos, fwd = [], []
    for j in gate_rows:
        p = poly[j]
        before = next(
            (poly[i] for i in range(j - 1, -1, -1) if np.linalg.norm(p - poly[i]) > tol), None
        )
        after = next(
            (poly[i] for i in range(j + 1, last + 1) if np.linalg.norm(poly[i] - p) > tol), None
        )
        d_in = None if before is None else _unit(p - before)
        d_out = None if after is None else _unit(after - p)
        f = None
        if d_in is not None and d_out is not None:
            f = _unit(d_in + d_out)
        if f is None:
            f = d_in if d_in is not None else d_out
        if f is None:
            f = np.array([1.0, 0.0, 0.0])
        pos.append(p)
        fwd.append(f)
    return np.array(pos), np.array(fwd)


def _paths_arg(paths, who: str) -> list:
    if isinstance(paths, WaypointPath):
        return [paths]
    if isinstance(paths, (str, bytes)) or not isinstance(paths, Sequence):
        raise TypeError(
            f"{who}: paths must be a WaypointPath or a sequence of them, got "
            f"{type(paths).__name__}; read one with read_waypoint_path(path)"
        )
    if len(paths) == 0:
        raise ValueError(f"{who}: paths is empty: pass at least one WaypointPath")
    for i, p in enumerate(paths):
        if not isinstance(p, WaypointPath):
            raise TypeError(
                f"{who}: paths[{i}] is a {type(p).__name__}: expected a WaypointPath "
                "(read_waypoint_path(path))"
            )
    return list(paths)


def gates_spec(
    paths, *, num_envs: int, gate_width: float, device=None, assign: str = "env", **config_fields
) -> PipelineSpec:
    """A gate pipeline whose env ``e`` flies the gates of ``paths[e % len(paths)]``.

    Args:
        paths: a :class:`WaypointPath` or a sequence of them.
        num_envs: batch size E.
        gate_width: the gates' opening width, metres (> 0: a course needs passable gates).
        device: Warp device (None: Warp's preferred device).
        assign: ``"env"``: env ``e`` always flies ``paths[e % len(paths)]``; ``"draw"``: each
            rebuilt env draws a path from its (seed, epoch).
        config_fields: further :class:`~track_gen.GateGenConfig` fields. Defaults chosen here:
            ``gate_align="full_tangent"`` (the gates tilt with the path), ``gate_radius=0``
            and ``gate_check_bars=False`` (a path may stack gates one above another or pass a
            point twice), the gate counts from the paths (``min_gates``, ``num_gates_min``,
            ``num_gates_max``, ``max_gates``).

    Returns:
        A :class:`~track_gen.pipeline.PipelineSpec` (``gate_table -> gate_frames ->
        gate_validate``) for ``GateGenerator(spec)`` or ``Course.gates(spec)``: each env's
        gates are :func:`path_gates` of its path (the waypoints and the end), metres. The start
        is where a flight begins: ``paths[k].start``.

    Raises:
        TypeError: ``paths`` is not WaypointPath(s); ``generator`` in ``config_fields``.
        ValueError: an empty list, a bad ``assign`` or ``gate_width``, or fields the gate
            config refuses.
    """
    paths = _paths_arg(paths, "gates_spec")
    assign = check_choice("assign", assign, ASSIGN_MODES)
    if "generator" in config_fields:
        raise TypeError("gates_spec() sets 'generator' itself (the gate_table sampler)")
    width = GATE_WIDTH.check(gate_width, "gate_width", write=True)
    gates = [p.gates() for p in paths]
    counts = np.array([len(g[0]) for g in gates], np.int64)
    G = int(counts.max())
    table = np.full((len(paths), G, 6), np.nan, np.float32)
    for k, (pos, fwd) in enumerate(gates):
        table[k, : len(pos), :3] = pos
        table[k, : len(pos), 3:] = fwd
    lo = int(counts.min())
    fields = {
        "gate_align": "full_tangent",
        "gate_radius": 0.0,
        "gate_check_bars": False,
        "min_gates": lo,
        "num_gates_min": lo,
        "num_gates_max": G,
        "max_gates": G,
        **config_fields,
    }
    config = GateGenConfig(
        generator="gate_table", num_envs=num_envs, device=device, gate_width=width, **fields
    )
    stages = (
        StageSpec("gate_table", options={"gates": table, "counts": counts, "assign": assign}),
        StageSpec("gate_frames"),
        StageSpec("gate_validate"),
    )
    return PipelineSpec(config=config, stages=stages, family="gates")


def waypoint_arrays(paths, *, num_envs: int, device=None) -> dict:
    """The arrays of an open-path :class:`~track_gen.tools.MinTimeUtility` whose env ``e``
    flies ``paths[e % len(paths)]`` from its start through its waypoints to its end, with its
    start and end velocities.

    Returns:
        ``{"points": vec3f [E*K], "count": int32 [E], "v_start": vec3f [E], "v_end": vec3f
        [E]}`` on ``device`` (``K`` the most points of a path), metres and m/s:
        ``MinTimeUtility(**waypoint_arrays(paths, num_envs=E), closed=False, t_max=...,
        v_max=...)``.
    """
    paths = _paths_arg(paths, "waypoint_arrays")
    E = check_int("num_envs", num_envs, lo=1, hi=2**31 - 1)
    pts = [p.points() for p in paths]
    K = max(len(q) for q in pts)
    rows = np.full((E, K, 3), np.nan, np.float32)
    count = np.zeros(E, np.int32)
    vs = np.zeros((E, 3), np.float32)
    ve = np.zeros((E, 3), np.float32)
    for e in range(E):
        k = e % len(paths)
        rows[e, : len(pts[k])] = pts[k]
        count[e] = len(pts[k])
        vs[e] = paths[k].start_velocity
        ve[e] = paths[k].end_velocity
    budget = AllocationBudget(device, "lower num_envs or the points of a path", "these arrays'")
    return {
        "points": budget.array(rows.reshape(-1, 3), wp.vec3f, "waypoint points"),
        "count": budget.array(count, wp.int32, "waypoint counts"),
        "v_start": budget.array(vs, wp.vec3f, "start velocities"),
        "v_end": budget.array(ve, wp.vec3f, "end velocities"),
    }
