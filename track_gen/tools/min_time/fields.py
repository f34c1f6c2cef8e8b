"""The Tunable declarations of the minimum-time planner (read by its utility and its
component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ...core.tunable import Tunable, config_label
from ..fields import count, positive

_SURFACES = ("tools.MinTime", "tools.MinTimeUtility")

T_MAX = positive(
    "t_max",
    None,
    unit="track units/s^2 (m/s^2 on a metre course)",
    doc="largest thrust acceleration |t| = |a - g| of the point mass (no default); it must "
    "exceed gravity by at least 0.1% (a mass that cannot hover cannot climb).",
    surfaces=_SURFACES,
)

V_MAX = positive(
    "v_max",
    None,
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

SAMPLES = count(
    "samples",
    8,
    lo=2,
    hi=16,
    unit="intervals per segment",
    doc="equal time intervals of constant thrust between two consecutive points (the "
    "trajectory's samples); the cost of a segment grows with samples.",
    surfaces=_SURFACES,
)

ITERATIONS = count(
    "iterations",
    80,
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

#: Every field of the tool, in its keyword order.
FIELDS = (T_MAX, V_MAX, GRAVITY, SAMPLES, ITERATIONS)


def _check_gravity(settings) -> None:
    """``t_max >= GRAVITY_MARGIN * gravity``: a point mass that cannot hover cannot climb."""
    s = settings
    if not s.t_max >= GRAVITY_MARGIN * s.gravity:
        raise ValueError(
            f"{config_label(s)}.t_max = {s.t_max!r} must be at least {GRAVITY_MARGIN} * gravity "
            f"({GRAVITY_MARGIN * s.gravity!r}): a point mass that cannot hover cannot "
            "climb; raise t_max or lower gravity"
        )


MinTimeSettings = settings_class(
    "MinTimeSettings",
    FIELDS,
    title="Minimum time",
    doc="The settings of a minimum-time planner (tools.MinTime, tools.MinTimeUtility, "
    "CourseConfig.min_time): the point mass's thrust and speed bounds, gravity and the "
    "solver's samples and iterations. ``t_max`` and ``v_max`` are required; ``t_max >= "
    "1.001 gravity``.",
    module="track_gen.tools.min_time",
    check=_check_gravity,
)
