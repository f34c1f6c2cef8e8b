"""Circuit sampler: closed circuits in metres with the structure of real ones
(``generator="circuit"``, built by :func:`track_gen.pipeline.presets.circuit`).

Per env (one thread; ``circuit_kernels.py`` has the steps): a folded layout polygon (the
boundary of a random polyomino, jittered, some corners cut) sized to a drawn lap length, esses,
chicanes and bends inserted until it has the drawn number of corners, every vertex turned into
a clothoid-arc-clothoid corner whose radius is drawn around a law of the turn (tight hairpins,
medium corners, fast sweepers), gently bowed straights, and road widths in metres that vary
along the lap with a wider start/finish straight. An attempt whose pieces come closer than
their widths allow is redrawn (``layout_attempts``); the last resort is a rounded rectangle.

The defaults come from real-circuit statistics (``docs/generation.md``, "Circuits"): FIA
grade-1 circuits are 3.5-7 km long and at least 12 m wide; the TUM racetrack database's 25
circuits have 9.2-15.9 m mean width (median 12 m) and about 10-26 corners whose radii and
turns follow the radius law below.

The sampler writes ``ws.line`` (metres) and ``ws.line_width`` (left and right width of each
point, metres, each at most the config's ``half_width``); the widths follow the beads through
resample, inflate and validate as a real circuit's do. ``diagnostics["circuit.attempts"]``
(int32 ``[E]``): the attempt that built each env's circuit (1 ..), ``layout_attempts + 1`` for
the fallback.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

from ..core.tunable import Tunable
from ..core.units import METRES, UNIT
from ..engine.stage import GENERATOR, N_MAX, NUM_POINTS, Stage, Workspace
from . import circuit_kernels as ck
from .common import launch_sampler
from .inflate import HALF_WIDTH
from .resample import SPACING, resolved_spacing
from .widths import allocate_widths

#: The sampler's name (``generator="circuit"``).
NAME = "circuit"


def _room_for(value, lookup):
    """Rule of the lap lengths: a circuit config must hold a lap of ``value`` metres in its
    beads (``N_max * spacing``) with the sampler's points no farther apart than the beads,
    and be in metres (only when ``generator == "circuit"``)."""
    if lookup(GENERATOR) != NAME:
        return None
    if lookup(UNIT) != METRES:
        return (
            f"generator = {NAME!r} draws circuits in metres but unit = {lookup(UNIT)!r}: pass "
            "unit='m' (presets.circuit(num_envs) does)"
        )
    spacing = resolved_spacing(lookup(SPACING), lookup(HALF_WIDTH))
    n_max, points = lookup(N_MAX), lookup(NUM_POINTS)
    if 1.02 * value > n_max * spacing:
        return (
            f"with generator = {NAME!r}, N_max * spacing = {n_max} * {spacing:.6g} = "
            f"{n_max * spacing:.6g} m cannot hold a lap that long: build circuits with "
            "presets.circuit(num_envs, ...) (N_max sized to length_max), or raise N_max or "
            "spacing"
        )
    if value > points * spacing:
        return (
            f"with generator = {NAME!r}, num_points = {points} points would lie farther apart "
            f"than the beads ({spacing:.6g} m) on a lap that long: build circuits with "
            "presets.circuit(...) or raise num_points"
        )
    return None


def _ordered(upper: Tunable):
    """Rule of a lower bound of a pair: at most the upper one (at construction; the kernel
    orders a pair written the wrong way round later)."""

    def rule(value, lookup):
        hi = lookup(upper)
        return f"must be <= {upper.name} = {hi!r}" if value > hi else None

    return rule


def _pair(names, defaults, lo, hi, unit, docs, rule=None) -> tuple[Tunable, Tunable]:
    """A pair of dynamic fields ``names = (lower, upper)`` in ``unit``, with their
    ``defaults`` and ``docs``, each in ``[lo, hi]`` (``hi``: one bound for both, or a pair):
    the lower one must be at most the upper one (:func:`_ordered`), and ``rule`` (if any)
    holds for both."""
    his = hi if isinstance(hi, tuple) else (hi, hi)
    upper = Tunable(
        names[1], defaults[1], lo=lo, hi=his[1], dynamic=True, rule=rule, unit=unit, doc=docs[1]
    )
    ordered = _ordered(upper)

    def lower_rule(value, lookup):
        err = ordered(value, lookup)
        if err is None and rule is not None:
            err = rule(value, lookup)
        return err

    lower = Tunable(
        names[0],
        defaults[0],
        lo=lo,
        hi=his[0],
        dynamic=True,
        rule=lower_rule,
        unit=unit,
        doc=docs[0],
    )
    return lower, upper


wp.set_module_options({"enable_backward": False})

LENGTH_MIN, LENGTH_MAX = _pair(
    ("length_min", "length_max"),
    (3500.0, 7000.0),
    lo=200.0,
    hi=100000.0,
    unit="m",
    docs=(
        "shortest lap of a circuit: each env draws its lap length from the symmetric "
        "triangular law on [length_min, length_max] (FIA grade 1: 3.5-7 km).",
        "longest lap of a circuit; N_max * spacing must hold it (presets.circuit sizes N_max "
        "to it). A pair written the wrong way round later is read as (min, max).",
    ),
    rule=_room_for,
)
ROAD_WIDTH_MIN, ROAD_WIDTH_MAX = _pair(
    ("road_width_min", "road_width_max"),
    (9.5, 15.0),
    lo=1.0,
    hi=200.0,
    unit="m",
    docs=(
        "narrowest lap-mean road width: each env draws its mean full road width uniformly in "
        "[road_width_min, road_width_max] (TUM database: 9.2-15.9 m, median 12 m).",
        "widest lap-mean road width (no side is ever wider than the config's half_width).",
    ),
)
ROAD_NARROWING = Tunable(
    "road_narrowing",
    0.55,
    lo=0.0,
    hi=0.9,
    dynamic=True,
    unit="fraction",
    doc="each side's width varies smoothly along the lap between (1 - road_narrowing) and 1 "
    "times the base width (three sinusoids of 1, 2 and 3 periods per lap, per side).",
)
START_WIDENING = Tunable(
    "start_widening",
    1.4,
    lo=1.1,
    hi=3.0,
    dynamic=True,
    unit="base widths",
    doc="the start/finish straight (the longest) is this many times wider than the base "
    "width (with 80 m ramps); the validity band scales with it, which lets tight corners pass.",
)
CORNER_COUNT_MIN, CORNER_COUNT_MAX = _pair(
    ("corner_count_min", "corner_count_max"),
    (14.0, 26.0),
    lo=4.0,
    hi=56.0,
    unit="corners",
    docs=(
        "fewest corners of the layout polygon: each env draws a count in [corner_count_min, "
        "corner_count_max] (rounded) and inserts features until it has that many vertices (the "
        "course descriptor counts only those tighter than its corner_radius).",
        "most corners of the layout polygon (the layout itself may bring more).",
    ),
)
CORNER_RADIUS_MEDIAN = Tunable(
    "corner_radius_median",
    52.0,
    lo=1.0,
    hi=10000.0,
    dynamic=True,
    unit="m",
    doc="median radius of a corner turning 1 rad; a corner turning theta draws its radius "
    "around corner_radius_median * theta^-1.1 (log-normal spread 0.6): hairpins are tight, "
    "kinks are fast.",
)
CORNER_RADIUS_MIN, CORNER_RADIUS_MAX = _pair(
    ("corner_radius_min", "corner_radius_max"),
    (8.0, 400.0),
    lo=1.0,
    hi=(10000.0, 100000.0),
    unit="m",
    docs=(
        "least drawn corner radius (a corner is also kept above what its road width needs "
        "to stay valid).",
        "largest drawn corner radius (a corner never takes more room than its edges have).",
    ),
)
STRAIGHT_BEND = Tunable(
    "straight_bend",
    2.6e-3,
    lo=0.0,
    hi=0.01,
    dynamic=True,
    unit="1/m",
    doc="typical curvature of the straights: each bows sideways (zero offset and slope at "
    "its ends) with a peak curvature drawn from N(0, straight_bend), and wiggles with half "
    "waves of about 120 m at about half that curvature.",
)
LAYOUT_ATTEMPTS = Tunable(
    "layout_attempts",
    8,
    lo=1,
    hi=64,
    unit="attempts",
    doc="layouts an env draws before it falls back to a rounded rectangle of its lap length "
    "(diagnostics['circuit.attempts'] says which one it kept).",
)

#: The dynamic fields in kernel order (``bounds[i]`` of the kernel is field ``i``'s range).
DYNAMIC = (
    LENGTH_MIN,
    LENGTH_MAX,
    ROAD_WIDTH_MIN,
    ROAD_WIDTH_MAX,
    ROAD_NARROWING,
    START_WIDENING,
    CORNER_COUNT_MIN,
    CORNER_COUNT_MAX,
    CORNER_RADIUS_MEDIAN,
    CORNER_RADIUS_MIN,
    CORNER_RADIUS_MAX,
    STRAIGHT_BEND,
)
#: Bead spacing of the circuit preset, m.
SPACING_M = 4.0


def widest_half_width(width_max: float, narrowing: float, widening: float) -> float:
    """The widest half road width (m) a circuit of these settings can have: the start
    straight of a lap whose other parts narrow by ``narrowing``, with the widest mean."""
    return 0.5 * float(width_max) * float(widening) / max(1.0 - 0.5 * float(narrowing), 0.05)


def capacity_error(config, values) -> str | None:
    """Why ``config`` cannot hold circuits of ``values`` (the stage's resolved fields), or
    None: the beads of the longest lap must fit ``N_max`` and the sampler's points must be no
    farther apart than the beads."""
    spacing = resolved_spacing(config.spacing, config.half_width)
    longest = max(float(values.length_min), float(values.length_max))
    room = config.N_max * spacing
    if room < 1.02 * longest:
        return (
            f"N_max * spacing = {config.N_max} * {spacing:.6g} = {room:.6g} m cannot hold "
            f"laps of up to {longest:.6g} m (length_max)"
        )
    if config.num_points * spacing < longest:
        return (
            f"num_points = {config.num_points} points are farther apart than the beads "
            f"({spacing:.6g} m) on a {longest:.6g} m lap"
        )
    return None


class SamplerCircuit(Stage):
    """Circuit sampler (``generator="circuit"``): closed circuits in metres with varying
    road widths, counter-clockwise. Writes ``ws.line`` and ``ws.line_width`` (see the
    module); build it with :func:`~track_gen.pipeline.presets.circuit`.

    Scratch (per env): the layout grid and its boundary map, the polygon (``MAX_VERTICES``
    vertices with their radius, tangent length, corner length, turn and bow, metres and
    radians), the unit corners' quarter points and the coarse loop of the clearance check.
    """

    role = "sampler"
    families = ("track",)
    FIELDS = (*DYNAMIC, LAYOUT_ATTEMPTS)

    def __init__(self, name, config, options=None):
        super().__init__(name, config, options)
        unit = getattr(config, "unit", METRES)
        if unit != METRES:
            raise ValueError(
                f"StageSpec({name!r}): circuits are drawn in metres but the config's unit is "
                f"{unit!r}; pass unit='m' (presets.circuit(num_envs=...) does)"
            )
        why = capacity_error(config, self.values)
        if why is not None:
            raise ValueError(
                f"StageSpec({name!r}): {why}; build circuits with presets.circuit(num_envs=...) "
                "(metres: spacing 4 m, N_max and num_points sized to length_max), or raise "
                "N_max / num_points / spacing"
            )

    def allocate(self, ws: Workspace) -> None:
        E, n = ws.layout.num_envs, self.name
        V = ck.MAX_VERTICES
        G = ck.GRID
        self.occ = ws.zeros(E * G * G, wp.int32, f"{n} layout grid")
        self.nxt = ws.zeros(E * (G + 1) * (G + 1), wp.int32, f"{n} layout boundary")
        self.lines = ws.zeros(E * (G + 1), wp.vec2f, f"{n} layout grid lines")
        self.verts = ws.zeros(E * V, wp.vec2f, f"{n} polygon")
        self.tmp = ws.zeros(E * V, wp.vec2f, f"{n} polygon copy")
        self.rad = ws.zeros(E * V, wp.float32, f"{n} corner radii")
        self.tang = ws.zeros(E * V, wp.float32, f"{n} tangent lengths")
        self.clen = ws.zeros(E * V, wp.float32, f"{n} corner lengths")
        self.turn = ws.zeros(E * V, wp.float32, f"{n} turns")
        self.bump = ws.zeros(E * V, wp.vec3f, f"{n} straight bows")
        self.qp = ws.zeros(E * V * 3, wp.vec2f, f"{n} corner quarter points")
        P = V * ck.CHECK_POINTS
        self.cpts = ws.zeros(E * P, wp.vec2f, f"{n} coarse loop")
        self.carc = ws.zeros(E * P, wp.float32, f"{n} coarse arcs")
        self.cwid = ws.zeros(E * P, wp.float32, f"{n} coarse widths")
        self.attempts = ws.zeros(E, wp.int32, f"{n} attempts")
        bounds = np.array([t.bounds() for t in DYNAMIC], np.float32)
        self.bounds = ws.budget.array(bounds, wp.vec2f, f"{n} parameter ranges")
        allocate_widths(ws, n)
        ws.diagnostics[f"{n}.attempts"] = self.attempts

    def enqueue(self, ws: Workspace, params: dict) -> None:
        launch_sampler(
            ws,
            ck.circuit_kernel,
            inputs=[self.bounds],
            parameters=[params[t.name] for t in DYNAMIC],
            static=[
                ws.layout.num_points,
                float(min(self.config.half_width, 1.0e6)),
                int(self.values.layout_attempts),
            ],
            scratch=[
                self.occ,
                self.nxt,
                self.lines,
                self.verts,
                self.tmp,
                self.rad,
                self.tang,
                self.clen,
                self.turn,
                self.bump,
                self.qp,
                self.cpts,
                self.carc,
                self.cwid,
            ],
            outputs=[ws.line, ws.line_width, self.attempts],
        )


def preset_fields(num_envs: int, **fields) -> dict:
    """The config fields of :func:`~track_gen.pipeline.presets.circuit`: metres, 4 m beads,
    ``N_max`` and ``num_points`` sized to ``length_max``, ``half_width`` the widest half width
    the width fields allow, no relaxation. ``fields`` override any of them."""
    lmax = max(
        float(fields.get("length_max", LENGTH_MAX.default)),
        float(fields.get("length_min", LENGTH_MIN.default)),
    )
    spacing = float(fields.get("spacing") or SPACING_M)
    hw = widest_half_width(
        fields.get("road_width_max", ROAD_WIDTH_MAX.default),
        fields.get("road_narrowing", ROAD_NARROWING.default),
        fields.get("start_widening", START_WIDENING.default),
    )
    n_max = int(math.ceil(1.02 * lmax / spacing)) + 8
    points = int(min(16384, 2 ** math.ceil(math.log2(max(2.0 * lmax / spacing, 16.0)))))
    out = {
        "generator": "circuit",
        "num_envs": num_envs,
        "unit": METRES,
        "spacing": spacing,
        "half_width": round(hw, 3),
        "N_max": min(n_max, 16384),
        "num_points": points,
        "relax_enable": False,
    }
    out.update(fields)
    return out


__all__ = [
    "CORNER_COUNT_MAX",
    "CORNER_COUNT_MIN",
    "CORNER_RADIUS_MAX",
    "CORNER_RADIUS_MEDIAN",
    "CORNER_RADIUS_MIN",
    "DYNAMIC",
    "LAYOUT_ATTEMPTS",
    "LENGTH_MAX",
    "LENGTH_MIN",
    "ROAD_NARROWING",
    "ROAD_WIDTH_MAX",
    "ROAD_WIDTH_MIN",
    "SPACING_M",
    "START_WIDENING",
    "STRAIGHT_BEND",
    "SamplerCircuit",
    "preset_fields",
]
