"""The Tunable declarations of the racing line planner (read by its utility and its
component)."""

from __future__ import annotations

from ...core.tunable import Tunable

_SURFACES = ("tools.RacingLine", "tools.RacingLinePlanner")

VEHICLE_WIDTH = Tunable(
    "vehicle_width",
    None,
    kind="float",
    lo=0.0,
    hi=1.0e6,
    unit="track units",
    doc="width of the vehicle: the line keeps its centre vehicle_width/2 inside each border "
    "(no default: RacingLine and RacingLinePlanner require it).",
    surfaces=_SURFACES,
)

A_LAT = Tunable(
    "a_lat",
    None,
    kind="float",
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units/s^2",
    doc="largest lateral acceleration v^2 |kappa| of the speed profile (no default).",
    surfaces=_SURFACES,
)

A_LON = Tunable(
    "a_lon",
    None,
    kind="float",
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units/s^2",
    doc="largest longitudinal acceleration (and braking) of the speed profile, at zero "
    "lateral acceleration: the friction ellipse (a_x/a_lon)^2 + (a_y/a_lat)^2 <= 1 (no default).",
    surfaces=_SURFACES,
)

V_MAX = Tunable(
    "v_max",
    None,
    kind="float",
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units/s",
    doc="top speed of the speed profile (no default).",
    surfaces=_SURFACES,
)

KAPPA_MAX = Tunable(
    "kappa_max",
    None,
    kind="float",
    lo=1.0e-6,
    hi=1.0e6,
    optional=True,
    unit="1/track units",
    doc="bound on the line's linearised curvature |kappa| (None: unbounded), enforced by "
    "kappa_iterations ADMM iterations after the box solve.",
    surfaces=_SURFACES,
)

ITERATIONS = Tunable(
    "iterations",
    40,
    kind="int",
    lo=1,
    hi=10000,
    unit="iterations",
    doc="primal-dual active-set iterations of the box-constrained QP per linearisation (a "
    "fixed count: the solve never stops early); linearisations x (iterations + "
    "kappa_iterations) <= 40000 per plan (about 0.5 s per env of ~100 beads on a 2-core CPU).",
    surfaces=_SURFACES,
)

LINEARISATIONS = Tunable(
    "linearisations",
    2,
    kind="int",
    lo=1,
    hi=16,
    unit="solves",
    doc="QP solves; each after the first re-linearises the curvature around the last line "
    "(its bead spacing weights the second differences).",
    surfaces=_SURFACES,
)

KAPPA_ITERATIONS = Tunable(
    "kappa_iterations",
    200,
    kind="int",
    lo=1,
    hi=100000,
    unit="iterations",
    doc="ADMM iterations that add the kappa_max bound per linearisation (unused when "
    "kappa_max is None).",
    surfaces=_SURFACES,
)
