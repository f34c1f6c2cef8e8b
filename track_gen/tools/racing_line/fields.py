"""The Tunable declarations of the racing line planner (read by its utility and its
component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ...core.tunable import Tunable, config_label
from ..fields import count, positive

_SURFACES = ("tools.RacingLine", "tools.RacingLineUtility")

VEHICLE_WIDTH = Tunable(
    "vehicle_width",
    None,
    kind="float",
    lo=0.0,
    hi=1.0e6,
    unit="track units",
    doc="width of the vehicle: the line keeps its centre vehicle_width/2 inside each border "
    "(no default: RacingLine and RacingLineUtility require it).",
    surfaces=_SURFACES,
)

A_LAT = positive(
    "a_lat",
    None,
    unit="track units/s^2",
    doc="largest lateral acceleration v^2 |kappa| of the speed profile (no default).",
    surfaces=_SURFACES,
)

A_LON = positive(
    "a_lon",
    None,
    unit="track units/s^2",
    doc="largest longitudinal acceleration (and braking) of the speed profile, at zero "
    "lateral acceleration: the friction ellipse (a_x/a_lon)^2 + (a_y/a_lat)^2 <= 1 (no default).",
    surfaces=_SURFACES,
)

V_MAX = positive(
    "v_max",
    None,
    unit="track units/s",
    doc="top speed of the speed profile (no default).",
    surfaces=_SURFACES,
)

KAPPA_MAX = positive(
    "kappa_max",
    None,
    unit="1/track units",
    optional=True,
    doc="bound on the line's linearised curvature |kappa| (None: unbounded), enforced by "
    "kappa_iterations ADMM iterations after the box solve.",
    surfaces=_SURFACES,
)

ITERATIONS = count(
    "iterations",
    40,
    hi=10000,
    unit="iterations",
    doc="primal-dual active-set iterations of the box-constrained QP per linearisation (a "
    "fixed count: the solve never stops early); linearisations x (iterations + "
    "kappa_iterations) <= 40000 per plan (about 0.5 s per env of ~100 beads on a 2-core CPU).",
    surfaces=_SURFACES,
)

LINEARISATIONS = count(
    "linearisations",
    2,
    hi=16,
    unit="solves",
    doc="QP solves; each after the first re-linearises the curvature around the last line "
    "(its bead spacing weights the second differences).",
    surfaces=_SURFACES,
)

KAPPA_ITERATIONS = count(
    "kappa_iterations",
    200,
    hi=100000,
    unit="iterations",
    doc="ADMM iterations that add the kappa_max bound per linearisation (unused when "
    "kappa_max is None).",
    surfaces=_SURFACES,
)

#: Most solver iterations per plan, ``linearisations * (iterations + kappa_iterations)``
#: (``kappa_iterations`` only with a ``kappa_max``): about 0.5 s per env of ~100 beads on a
#: 2-core CPU, proportional to the beads (benchmarks/work_bounds.py).
SOLVE_WORK_HI = 40000

#: Every field of the tool, in its keyword order.
FIELDS = (
    VEHICLE_WIDTH,
    A_LAT,
    A_LON,
    V_MAX,
    KAPPA_MAX,
    ITERATIONS,
    LINEARISATIONS,
    KAPPA_ITERATIONS,
)


def _check_work(settings) -> None:
    """The solver's work per plan is bounded (:data:`SOLVE_WORK_HI`)."""
    s = settings
    work = s.linearisations * (
        s.iterations + (s.kappa_iterations if s.kappa_max is not None else 0)
    )
    if work > SOLVE_WORK_HI:
        raise ValueError(
            f"{config_label(s)}: linearisations x (iterations + kappa_iterations) = {work:,} "
            f"solver iterations per plan, above {SOLVE_WORK_HI:,} (about half a second per env "
            "of the default track size on a 2-core CPU, more on longer tracks): lower "
            "linearisations, iterations or kappa_iterations (kappa_iterations count only with "
            "kappa_max)"
        )


RacingLineSettings = settings_class(
    "RacingLineSettings",
    FIELDS,
    title="Racing line",
    doc="The settings of a racing line planner (tools.RacingLine, tools.RacingLineUtility, "
    "CourseConfig.racing_line): the vehicle's width and limits and the solver's iteration "
    "counts. ``vehicle_width``, ``a_lat``, ``a_lon`` and ``v_max`` are required.",
    module="track_gen.tools.racing_line",
    check=_check_work,
)
