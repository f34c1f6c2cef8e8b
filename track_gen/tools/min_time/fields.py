"""The Tunable declarations of the minimum-time planner (read by its utility and its
component)."""

from __future__ import annotations

from ...core.tunable import Tunable

_SURFACES = ("tools.MinTime", "tools.MinTimePlanner")

T_MAX = Tunable(
    "t_max",
    None,
    kind="float",
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units/s^2 (m/s^2 on a metre course)",
    doc="largest thrust acceleration |t| = |a - g| of the point mass (no default); it must "
    "exceed gravity by at least 0.1% (a mass that cannot hover cannot climb).",
    surfaces=_SURFACES,
)

V_MAX = Tunable(
    "v_max",
    None,
    kind="float",
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units/s (m/s on a metre course)",
    doc="largest speed |v| of the point mass (no default).",
    surfaces=_SURFACES,
)

GRAVITY = Tunable(
    "gravity",
    9.81,
    kind="float",
    lo=0.0,
    hi=1.0e5,
    unit="track units/s^2 (m/s^2 on a metre course)",
    doc="gravity g = (0, 0, -gravity) acting on the point mass besides its thrust.",
    surfaces=_SURFACES,
)

SAMPLES = Tunable(
    "samples",
    8,
    kind="int",
    lo=2,
    hi=16,
    unit="intervals per segment",
    doc="equal time intervals of constant thrust between two consecutive points (the "
    "trajectory's samples); the cost of a segment grows with samples.",
    surfaces=_SURFACES,
)

ITERATIONS = Tunable(
    "iterations",
    80,
    kind="int",
    lo=1,
    hi=400,
    unit="Newton iterations",
    doc="most interior-point iterations per env (an env stops earlier once converged); a "
    "budget that runs out returns the best iterate through every point (status "
    "NOT_CONVERGED).",
    surfaces=_SURFACES,
)

#: Most interval-iterations (points x samples x iterations) one env's plan may cost at its
#: budget: about 1.9 us each on one CPU thread of the 2-core development machine
#: (``benchmarks/min_time.py``), so at most about 0.4 s per env.
MAX_WORK = 2.0e5

#: The rule between ``t_max`` and ``gravity``: ``t_max >= GRAVITY_MARGIN * gravity``.
GRAVITY_MARGIN = 1.001
