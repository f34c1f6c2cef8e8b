"""Vehicles in SI units for :class:`~track_gen.envs.RaceEnv`: :class:`VehicleSettings`, the
presets :data:`GT` and :data:`F1TENTH`, and what the env derives from a vehicle (the grip
limit, the integration substeps, the observation scales, the racing line's limits).

A vehicle drives metre courses (``RaceConfig(unit="m")``: ``presets.circuit``, real circuits
read in metres) with either model of ``RaceConfig.dynamics``:

* ``"kinematic"``: the env's kinematic bicycle with the vehicle's wheelbase ``lf + lr``, top
  speed, acceleration, steering limits and the grip limit ``mu * g`` on the lateral
  acceleration;
* ``"single_track"``: the dynamic single-track (bicycle) model of ``race_kernels.py``: body
  velocities ``vx``, ``vy`` and yaw rate ``r``, slip angles, linear tyres whose lateral force
  ``mu * C * Fz * alpha`` is saturated by each axle's friction circle, yaw inertia and
  aerodynamic drag, integrated with ``substeps`` explicit Euler steps per env step (below
  ``BLEND_HI * max_speed`` blended into the kinematic model, whose slip angles are zero).

The presets and their sources:

:data:`GT` (a GT3-class circuit car, for metre circuits; parameters of the class, not of one
car): mass 1300 kg (GT3 cars race at about 1250-1350 kg with the driver under the balance of
performance); wheelbase 2.46 m (Porsche 911 GT3 R: 2459 mm) split 1.35 / 1.11 m (45 % of the
weight on the front axle, a rear-engined car); yaw inertia 1950 kg m^2 (``m * lf * lr``, the
"dynamic index 1" rule of Milliken & Milliken, *Race Car Vehicle Dynamics*, 1995);
cornering stiffness 10 and 11.5 per rad of load (slicks peak near 5-6 degrees of slip; the
stiffer rear makes the car understeer mildly); friction 1.6 (slicks on dry asphalt with some
downforce); 9 m/s^2 of drive and of braking (one longitudinal limit, as the racing line's
``a_lon``); 75 m/s top speed (270 km/h); 0.35 rad steering lock at 1 rad/s; drag
``0.5 * rho * Cd * A`` = 0.5 kg/m (``Cd * A`` about 0.8 m^2); 4.6 x 2.0 m.

:data:`F1TENTH` (the 1:10 F1TENTH car, for 1:10 circuits): the vehicle parameters f1tenth_gym
publishes (its ``F110Env`` defaults, the CommonRoad single-track parameter names): ``mu``
1.0489, ``C_Sf`` 4.718 and ``C_Sr`` 5.4562 1/rad, ``lf`` 0.15875 m, ``lr`` 0.17145 m, ``m``
3.74 kg, ``I`` 0.04712 kg m^2, ``s_max`` 0.4189 rad, ``sv_max`` 3.2 rad/s, ``a_max`` 9.51
m/s^2, ``v_max`` 20 m/s, width 0.31 m, length 0.58 m; no drag (f1tenth_gym has none). Not
modelled: f1tenth_gym's drive limit above ``v_switch`` (7.319 m/s, ``a_max * v_switch / v``),
its load transfer (``h`` 0.074 m) and reverse.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.tunable import Tunable, config_class

__all__ = [
    "BLEND_HI",
    "BLEND_LO",
    "F1TENTH",
    "GRAVITY",
    "GT",
    "MAX_SUBSTEPS",
    "VEHICLES",
    "VehicleSettings",
    "braking_distance",
    "lateral_accel",
    "length_scale",
    "stable_step",
    "substeps",
    "vehicle_preset",
]

#: Gravity, m/s^2: the normal load of an axle is its static share of ``mass * GRAVITY``.
GRAVITY = 9.81
#: Below ``BLEND_LO * max_speed`` the single-track model is the kinematic bicycle (zero slip
#: angles); above ``BLEND_HI * max_speed`` it is fully dynamic; linear in between.
BLEND_LO = 0.04
BLEND_HI = 0.08
#: Most explicit Euler substeps per env step: a vehicle and ``dt`` that need more are refused.
MAX_SUBSTEPS = 64
#: A substep is at most this share of the longest stable explicit Euler step.
SAFETY = 0.25


def _field(name, default, lo, hi, unit, doc) -> Tunable:
    return Tunable(name, default, lo=lo, hi=hi, unit=unit, doc=doc)


MASS = _field("mass", 1300.0, 0.1, 1.0e5, "kg", "the vehicle's mass.")
YAW_INERTIA = _field(
    "yaw_inertia", 1950.0, 1.0e-4, 1.0e6, "kg m^2", "moment of inertia about the vertical axis."
)
LF = _field("lf", 1.35, 0.01, 10.0, "m", "distance from the centre of gravity to the front axle.")
LR = _field("lr", 1.11, 0.01, 10.0, "m", "distance from the centre of gravity to the rear axle.")
CORNERING_FRONT = _field(
    "cornering_front",
    10.0,
    0.1,
    100.0,
    "1/rad",
    "front cornering stiffness per unit of friction and load (CommonRoad / f1tenth_gym C_Sf): "
    "the front lateral force is mu * cornering_front * Fz_front * slip angle until the "
    "friction circle.",
)
CORNERING_REAR = _field(
    "cornering_rear",
    11.5,
    0.1,
    100.0,
    "1/rad",
    "rear cornering stiffness per unit of friction and load (C_Sr).",
)
MU = _field(
    "mu",
    1.6,
    0.05,
    3.0,
    "ratio",
    "tyre-road friction coefficient: each axle's force stays inside mu * its load (the "
    "friction circle); the grip limit mu * g is the racing line's a_lat.",
)
MAX_ACCEL = _field(
    "max_accel",
    9.0,
    0.01,
    100.0,
    "m/s^2",
    "longitudinal acceleration at full throttle and deceleration at full brake (capped by "
    "mu * g); the racing line's a_lon.",
)
MAX_SPEED = _field(
    "max_speed",
    75.0,
    0.1,
    200.0,
    "m/s",
    "top speed (a limiter; no reverse); the racing line's v_max and the observation's speed scale.",
)
MAX_STEER = _field("max_steer", 0.35, 0.01, 1.2, "rad", "front-wheel angle at full command.")
MAX_STEER_RATE = _field(
    "max_steer_rate", 1.0, 0.01, 100.0, "rad/s", "fastest change of the front-wheel angle."
)
DRAG = _field(
    "drag",
    0.5,
    0.0,
    100.0,
    "kg/m",
    "aerodynamic drag factor 0.5 * rho * Cd * A: the drag force is drag * vx^2 (single_track "
    "only).",
)
LENGTH = _field("length", 4.6, 0.05, 20.0, "m", "the car box's length (collision).")
WIDTH = _field(
    "width", 2.0, 0.05, 10.0, "m", "the car box's width (collision; the racing line's width)."
)

FIELDS = (
    MASS,
    YAW_INERTIA,
    LF,
    LR,
    CORNERING_FRONT,
    CORNERING_REAR,
    MU,
    MAX_ACCEL,
    MAX_SPEED,
    MAX_STEER,
    MAX_STEER_RATE,
    DRAG,
    LENGTH,
    WIDTH,
)


# ------------------------------------------------------------------------------ analysis
def lateral_accel(v) -> float:
    """The grip limit ``mu * g``, m/s^2 (``v``: a :class:`VehicleSettings`)."""
    return float(v.mu) * GRAVITY


def length_scale(v) -> float:
    """``max_speed^2 / (mu * g)``, m: the radius of the tightest curve at top speed, the unit
    of every length the state observation gives in metres."""
    return float(v.max_speed) ** 2 / lateral_accel(v)


def braking_distance(v) -> float:
    """``max_speed^2 / (2 * a)``, m, ``a = min(max_accel, mu * g)``: the distance from top
    speed to rest at full brake."""
    a = min(float(v.max_accel), lateral_accel(v))
    return float(v.max_speed) ** 2 / (2.0 * a)


def _lateral_matrix(v, speed: float) -> np.ndarray:
    """The Jacobian of ``(dvy/dt, dr/dt)`` over ``(vy, r)`` of the linear-tyre model at
    forward speed ``speed``, straight ahead, float64."""
    m, iz, lf, lr = float(v.mass), float(v.yaw_inertia), float(v.lf), float(v.lr)
    wb = lf + lr
    cf = v.mu * v.cornering_front * m * GRAVITY * lr / wb
    cr = v.mu * v.cornering_rear * m * GRAVITY * lf / wb
    return np.array(
        [
            [-(cf + cr) / (m * speed), -speed - (lf * cf - lr * cr) / (m * speed)],
            [-(lf * cf - lr * cr) / (iz * speed), -(lf * lf * cf + lr * lr * cr) / (iz * speed)],
        ]
    )


def stable_step(v) -> float:
    """The longest explicit Euler substep, s, that keeps the single-track model's linear
    lateral and yaw motion and its drag stable at every speed from ``BLEND_HI * max_speed``
    (where the model is fully dynamic) to ``max_speed``, times ``SAFETY`` (0.25); ``0.0``
    when the vehicle itself is unstable at some speed there (an oversteering car above its
    critical speed): :class:`VehicleSettings` refuses such a vehicle."""
    h = math.inf
    v_max = float(v.max_speed)
    for speed in np.linspace(BLEND_HI * v_max, v_max, 97):
        for lam in np.linalg.eigvals(_lateral_matrix(v, float(speed))):
            if not lam.real < 0.0:
                return 0.0
            h = min(h, -2.0 * lam.real / abs(lam) ** 2)  # |1 + h lam| <= 1
    if v.drag > 0.0:  # dvx/dt = -drag vx^2 / m: stable for h * 2 drag v / m <= 2
        h = min(h, float(v.mass) / (float(v.drag) * v_max))
    return SAFETY * h


def substeps(v, dt: float) -> int:
    """Explicit Euler substeps of the single-track model per env step of ``dt`` s:
    ``ceil(dt / stable_step(v))``, at least 1 (:data:`MAX_SUBSTEPS` at most: RaceConfig
    refuses a ``dt`` that needs more)."""
    h = stable_step(v)
    return max(1, math.ceil(float(dt) / h - 1e-9)) if h > 0.0 else MAX_SUBSTEPS + 1


def _check_vehicle(v) -> None:
    """The rules between a vehicle's fields: a stable single-track model up to its top speed."""
    if stable_step(v) > 0.0:
        return
    wb = v.lf + v.lr
    k = (1.0 / v.cornering_front - 1.0 / v.cornering_rear) / lateral_accel(v)
    crit = math.sqrt(wb / -k) if k < 0.0 else math.nan
    raise ValueError(
        f"VehicleSettings: the single-track model of this vehicle is unstable below its "
        f"max_speed = {v.max_speed} m/s (cornering_front = {v.cornering_front} > "
        f"cornering_rear = {v.cornering_rear} oversteers, critical speed {crit:.3g} m/s): raise "
        "cornering_rear or lower cornering_front (an understeering car: cornering_rear >= "
        "cornering_front), or lower max_speed below the critical speed"
    )


VehicleSettings = config_class(
    "VehicleSettings",
    [("Vehicle", "", FIELDS)],
    doc="""A vehicle in SI units (metres, kilograms, seconds, radians) for a metre
:class:`~track_gen.envs.RaceEnv` (``RaceConfig(unit="m", vehicle=...)``; its defaults are
the :data:`GT` preset). Checked on construction: every field in its range, and the
single-track model stable at every speed up to ``max_speed`` (an oversteering vehicle above
its critical speed is refused, naming the fields to change).""",
    check=_check_vehicle,
    module="track_gen.envs.vehicles",
)

#: The GT3-class circuit car (the module docs give the sources): VehicleSettings' defaults.
GT = VehicleSettings()
#: The F1TENTH 1:10 car with the parameters f1tenth_gym publishes (module docs).
F1TENTH = VehicleSettings(
    mass=3.74,
    yaw_inertia=0.04712,
    lf=0.15875,
    lr=0.17145,
    cornering_front=4.718,
    cornering_rear=5.4562,
    mu=1.0489,
    max_accel=9.51,
    max_speed=20.0,
    max_steer=0.4189,
    max_steer_rate=3.2,
    drag=0.0,
    length=0.58,
    width=0.31,
)
#: The presets by name (``RaceConfig(vehicle="gt")`` takes a name).
VEHICLES = {"gt": GT, "f1tenth": F1TENTH}


def vehicle_preset(name: str, owner: str = "vehicle"):
    """The preset ``name`` (``"gt"``, ``"f1tenth"``); ValueError naming ``owner`` and the
    presets."""
    if name not in VEHICLES:
        raise ValueError(
            f"{owner} = {name!r} is not a vehicle preset: pass one of {tuple(VEHICLES)} or a "
            "VehicleSettings"
        )
    return VEHICLES[str(name)]
