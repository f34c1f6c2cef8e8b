"""The config of :class:`~track_gen.envs.RaceEnv`: :class:`RaceConfig` (the car, the episode,
the reward, the course, the observation), declared once per field."""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

from ..config import TRACK_GENERATORS, TrackGenConfig
from ..core.tunable import Tunable, config_class
from ..core.units import METRES, TRACK_UNITS, UNITS
from ..course.rules import check_checkpoint_capacity, check_props_capacity
from ..stages.circuit import preset_fields as circuit_fields
from ..tools import observation_term
from ..tools.checkpoints import MAX_CHECKPOINTS, SPACING
from . import vehicles
from .base import STATE_TERM, observation_fields, observation_namespace
from .race_kernels import BASE_OBS, DYN_OBS, LINE_OBS
from .vehicles import VehicleSettings

__all__ = ["CarLimits", "RaceConfig"]

#: What a refusal of the env's own buffers (its seeds, car state, observations) suggests.
ENV_BUDGET_HINT = "lower num_envs or the number of lookahead points"


# ------------------------------------------------------------------------------ fields
#: Smallest value of a positive car, step or episode field (a float32 kernel divides by it).
POSITIVE_LO = 1.0e-6
#: Largest magnitude of a reward weight: a weight times the largest per-step term (a par lap
#: time of up to 1e27 s at the slowest accepted car) stays finite in float32.
REWARD_HI = 1.0e6


def _positive(name: str, default: float, hi: float, unit: str, doc: str) -> Tunable:
    """A float field in ``[POSITIVE_LO, hi]``."""
    return Tunable(name, default, lo=POSITIVE_LO, hi=hi, unit=unit, doc=doc)


def _weight(name: str, default: float, unit: str, doc: str) -> Tunable:
    """A reward weight in ``[-REWARD_HI, REWARD_HI]``."""
    return Tunable(name, default, lo=-REWARD_HI, hi=REWARD_HI, unit=unit, doc=doc)


DT = _positive("dt", 0.05, 1.0, "s", "the step.")
WHEELBASE = _positive("wheelbase", 0.03, 1.0, "track units", "distance between the axles.")
MAX_SPEED = _positive("max_speed", 2.0, 100.0, "track units / s", "top speed (no reverse).")
MAX_ACCEL = _positive("max_accel", 4.0, 1e3, "track units / s^2", "acceleration at full throttle.")
MAX_STEER = _positive("max_steer", 0.5, 1.5, "rad", "front-wheel angle at full command.")
MAX_STEER_RATE = _positive("max_steer_rate", 4.0, 1e3, "rad / s", "fastest steering change.")
MAX_LATERAL_ACCEL = _positive(
    "max_lateral_accel",
    6.0,
    1e4,
    "track units / s^2",
    "the yaw rate is capped at max_lateral_accel / speed (a fast car cannot take a tight "
    "corner: brake).",
)
HALF_EXTENTS = Tunable(
    "half_extents",
    (0.02, 0.01),
    kind="floats",
    length=(2, 2),
    lo=POSITIVE_LO,
    hi=1.0,
    unit="track units",
    doc="the car's (half length, half width).",
)
SPAWN_BACK = _positive(
    "spawn_back",
    0.03,
    1000.0,
    "track units or m (unit)",
    "how far behind the start line a car respawns.",
)
MAX_LAPS = Tunable("max_laps", 2, lo=1, hi=1000, unit="laps", doc="laps that end an episode.")
MAX_EPISODE_STEPS = Tunable(
    "max_episode_steps", 300, lo=1, hi=10**6, unit="steps", doc="steps that time an episode out."
)
LOOKAHEAD = Tunable(
    "lookahead",
    (0.1, 0.2, 0.35, 0.5, 0.7),
    kind="floats",
    length=(1, 16),
    lo=POSITIVE_LO,
    hi=10000.0,
    unit="track units or m (unit)",
    doc="arc-length distances ahead of the car whose centerline points are observed (any "
    "order; one past a lap wraps).",
)
REWARD_PROGRESS = _weight(
    "reward_progress",
    10.0,
    "per track unit or m (unit)",
    "reward per unit of arc length gained along the centerline.",
)
REWARD_CHECKPOINT = _weight(
    "reward_checkpoint", 0.0, "per checkpoint", "reward per checkpoint passed."
)
PENALTY_OOB = _weight("penalty_oob", 2.0, "", "subtracted on the step the car leaves the road.")
REWARD_PAR = _weight(
    "reward_par",
    0.0,
    "per s",
    "weight of the par-pace term reward_par * (ds / length * par_lap_time - dt), positive "
    "when the car gains arc faster than the racing line's par pace; nonzero plans the racing "
    "line even with racing_line='off'.",
)
RACING_LINE = Tunable(
    "racing_line",
    "off",
    choices=("off", "par", "observe"),
    doc="'par': plan a racing line on every course (tools.RacingLine, refreshed with each "
    "regeneration) for par lap times in stats() and reward_par; 'observe': also append its "
    "offset relative to the car and its target speed / max_speed to the observation; "
    "'off': no line (about 1 ms per env per regeneration saved on the CPU).",
)
#: The sampler of a RaceEnv's own courses in metres.
CIRCUIT = "circuit"
GENERATOR = Tunable(
    "generator",
    "bezier",
    choices=TRACK_GENERATORS,
    doc="the sampler of the env's own courses (without spec=): 'circuit' draws circuits in "
    "metres (presets.circuit, unit='m' only), every other sampler in track units "
    "(presets.track(generator=...), unit='track units' only).",
)
UNIT = Tunable(
    "unit",
    TRACK_UNITS,
    choices=UNITS,
    doc="the unit of every length of the env (course, car, lookahead, spacings, rewards): "
    "'track units' drives the track-unit car of the fields above on normalized courses; 'm' "
    "drives the vehicle (RaceConfig.vehicle, SI units) on courses in metres "
    "(generator='circuit', or a metre spec such as io.tracks_spec(..., units='metres')). "
    "RaceConfig.for_vehicle(...) gives a metre config with lengths sized to the vehicle.",
)
VEHICLE = Tunable(
    "vehicle",
    vehicles.GT,
    kind="settings",
    settings_class=VehicleSettings,
    flat_prefix="vehicle_",
    doc="the car of a metre env (unit='m'), SI units: a VehicleSettings or a preset name "
    "('gt', 'f1tenth'; envs.vehicles); flat keywords vehicle_<field> set one field. Read "
    "only with unit='m'.",
)
DYNAMICS = Tunable(
    "dynamics",
    "kinematic",
    choices=("kinematic", "single_track"),
    doc="the car model: 'kinematic' (a kinematic bicycle with a grip limit on the yaw rate) "
    "or 'single_track' (the dynamic single-track model of the vehicle: tyre forces with a "
    "friction circle, slip angles, yaw inertia, drag; unit='m' only).",
)

#: The track-unit car's fields: with unit="m" the vehicle is the car, and these must keep
#: their defaults (a value given there would be silently ignored, so it is refused).
TRACK_UNIT_CAR = (
    WHEELBASE,
    MAX_SPEED,
    MAX_ACCEL,
    MAX_STEER,
    MAX_STEER_RATE,
    MAX_LATERAL_ACCEL,
    HALF_EXTENTS,
)

#: RaceConfig's fields, in order. ``checkpoint_spacing`` is the course checkpoints' own
#: declaration (``tools.checkpoints.SPACING``, alias ``checkpoint_spacing``): a value is checked
#: against its range first, then against RaceConfig's narrower one (<= 100, see ``narrow=``).
RACE_FIELDS = (
    DT,
    WHEELBASE,
    MAX_SPEED,
    MAX_ACCEL,
    MAX_STEER,
    MAX_STEER_RATE,
    MAX_LATERAL_ACCEL,
    HALF_EXTENTS,
    SPAWN_BACK,
    MAX_LAPS,
    MAX_EPISODE_STEPS,
    LOOKAHEAD,
    REWARD_PROGRESS,
    REWARD_CHECKPOINT,
    PENALTY_OOB,
    REWARD_PAR,
    RACING_LINE,
    SPACING,
    GENERATOR,
    UNIT,
    VEHICLE,
    DYNAMICS,
)


def _state_dim(self) -> int:
    """Columns of the ``state`` term: ``8 + 2 * len(lookahead)``, plus 2 with
    ``racing_line="observe"``, plus 2 with ``dynamics="single_track"``."""
    line = LINE_OBS if self.racing_line == "observe" else 0
    dyn = DYN_OBS if self.dynamics == "single_track" else 0
    return BASE_OBS + 2 * len(self.lookahead) + line + dyn


def _plans_line(self) -> bool:
    """Whether the env plans a racing line: ``racing_line`` is not ``"off"``, ``reward_par``
    is nonzero, or an observed term reads the racing line."""
    reads = any(
        observation_term(n).needs_racing_line(self.term_settings(n))
        for n in self.observations
        if n != STATE_TERM
    )
    return self.racing_line != "off" or self.reward_par != 0.0 or reads


class CarLimits(NamedTuple):
    """The car of a :class:`RaceConfig` in the config's unit.

    Attributes:
        wheelbase: length. max_speed: length / s. max_accel: length / s^2 (throttle and
            brake). max_steer: rad. max_steer_rate: rad / s. max_lateral_accel: length /
            s^2 (the grip limit, ``mu * g`` for a vehicle). half_extents: (half length, half
            width). length_scale: the unit of the state observation's lengths (1 in track
            units, ``vehicles.length_scale(vehicle)`` m in metres). substeps: the
            single-track model's integration substeps per step (1 for the kinematic car).
    """

    wheelbase: float
    max_speed: float
    max_accel: float
    max_steer: float
    max_steer_rate: float
    max_lateral_accel: float
    half_extents: tuple
    length_scale: float
    substeps: int


def _car(self) -> CarLimits:
    if self.unit == TRACK_UNITS:
        return CarLimits(
            self.wheelbase,
            self.max_speed,
            self.max_accel,
            self.max_steer,
            self.max_steer_rate,
            self.max_lateral_accel,
            tuple(self.half_extents),
            1.0,
            1,
        )
    v = self.vehicle
    steps = vehicles.substeps(v, self.dt) if self.dynamics == "single_track" else 1
    return CarLimits(
        v.lf + v.lr,
        v.max_speed,
        v.max_accel,
        v.max_steer,
        v.max_steer_rate,
        vehicles.lateral_accel(v),
        (0.5 * v.length, 0.5 * v.width),
        vehicles.length_scale(v),
        steps,
    )


def default_track_config(config) -> TrackGenConfig:
    """The track config of the env's own courses (no ``spec``): ``presets.circuit``'s for
    ``generator="circuit"``, else ``TrackGenConfig(generator=config.generator)``."""
    if config.generator == CIRCUIT:
        return TrackGenConfig(**circuit_fields(1))
    return TrackGenConfig(generator=config.generator)


def check_capacities(config, track_config=None, where: str = "RaceConfig") -> None:
    """The rules between RaceConfig's fields and the track config the env generates from
    (``track_config``; None: the default one of ``config.generator``, the env's when it gets
    no ``spec``): the checkpoints ``checkpoint_spacing`` gives, and the cones
    ``cones_spacing`` gives when ``cones`` is observed, fit their capacity on the longest
    loop the track config allows. ValueError naming the field and the spacing that fits."""
    if track_config is None:
        track_config = default_track_config(config)
    fix = f"raise {where}.{{}}"
    check_checkpoint_capacity(
        track_config,
        config.checkpoint_spacing,
        None,
        f"{where}.checkpoint_spacing",
        fix.format("checkpoint_spacing"),
    )
    if "cones" in config.observations:
        check_props_capacity(
            track_config,
            config.term_settings("cones").spacing,
            2,
            f"{where}.cones_spacing",
            fix.format("cones_spacing"),
        )


def check_car(config, where: str = "RaceConfig") -> None:
    """The rules between the car's fields: the unit, the sampler, the model and the vehicle
    agree (ValueError naming the field and the fix)."""
    metres = config.unit == METRES
    if config.generator == CIRCUIT and not metres:
        raise ValueError(
            f"{where}.generator = 'circuit' draws circuits in metres, and {where}.unit = "
            f"'track units': pass unit='m' (a car in SI units: RaceConfig.for_vehicle('gt')) "
            "or a track-unit sampler such as generator='bezier'"
        )
    if metres and config.generator != CIRCUIT:
        raise ValueError(
            f"{where}.unit = 'm' but {where}.generator = {config.generator!r} draws in track "
            "units: pass generator='circuit' (the env's own courses in metres; "
            "RaceConfig.for_vehicle(...) sets it), or unit='track units'"
        )
    if config.dynamics == "single_track" and not metres:
        raise ValueError(
            f"{where}.dynamics = 'single_track' needs a vehicle in SI units (mass, inertia, "
            "tyres) on a course in metres, and unit = 'track units': pass unit='m' (e.g. "
            "RaceConfig.for_vehicle('gt')) or dynamics='kinematic'"
        )
    if metres:
        for t in TRACK_UNIT_CAR:
            value = getattr(config, t.field)
            default = tuple(t.default) if isinstance(t.default, (tuple, list)) else t.default
            if value != default:
                raise ValueError(
                    f"{where}.{t.field} = {value!r} is a field of the track-unit car, and with "
                    f"unit = 'm' the car is {where}.vehicle (SI units; it would be ignored): "
                    f"set the vehicle's field instead (VehicleSettings, e.g. vehicle_max_speed="
                    f") and leave {t.field} at its default {default!r}"
                )
    if metres and config.dynamics == "single_track":
        n = vehicles.substeps(config.vehicle, config.dt)
        if n > vehicles.MAX_SUBSTEPS:
            h = vehicles.stable_step(config.vehicle)
            raise ValueError(
                f"{where}.dt = {config.dt} s needs {n} explicit substeps of at most {h:.3g} s "
                f"for this vehicle's single-track model (tyre stiffness against mass and yaw "
                f"inertia), more than {vehicles.MAX_SUBSTEPS}: lower dt to at most "
                f"{vehicles.MAX_SUBSTEPS * h:.3g} s, or soften the vehicle (lower "
                "cornering_front / cornering_rear, raise mass or yaw_inertia)"
            )


def check_race_config(config) -> None:
    """Every rule between RaceConfig's fields (the class's check)."""
    check_car(config)
    check_capacities(config)


#: RaceConfig's narrowing of shared declarations.
RACE_NARROW = {"checkpoint_spacing": {"hi": 100.0}}

#: Look-ahead distances of :meth:`RaceConfig.for_vehicle`, as shares of the vehicle's
#: braking distance from top speed.
LOOKAHEAD_SHARES = (0.03, 0.08, 0.16, 0.3, 0.5, 0.75, 1.0)


def _round(x: float, digits: int = 3) -> float:
    """``x`` to ``digits`` significant digits."""
    return float(f"{x:.{digits}g}")


def _within(t: Tunable, x, name: str | None = None):
    """``x`` clamped into the range of the RaceConfig field ``t`` (``name``: its name in
    RaceConfig when that differs; narrowed as RaceConfig narrows it)."""
    hi = RACE_NARROW.get(name or t.field, {}).get("hi", t.hi)
    return type(x)(min(max(x, t.lo), hi))


def dt_or(dt) -> float:
    """``dt`` when it is a usable step, else the default step (the class refuses a bad one)."""
    return (
        float(dt) if isinstance(dt, (int, float)) and dt > 0 and math.isfinite(dt) else DT.default
    )


def for_vehicle(cls, vehicle="gt", dynamics: str = "single_track", **fields):
    """A metre :class:`RaceConfig` for ``vehicle`` (a preset name, ``"gt"`` or
    ``"f1tenth"``, or a :class:`~track_gen.envs.vehicles.VehicleSettings`) with the car
    model ``dynamics`` and every length, time and reward sized to the vehicle; ``fields``
    override any of them. With ``a = min(max_accel, mu g)``, ``D = max_speed^2 / (2 a)``
    (the braking distance from top speed) and ``T = max_speed / (mu g)``:

    ``unit="m"``, ``generator="circuit"``, ``dt = T / 45`` to one significant digit (0.1 s
    for the GT, 0.04 s for the F1TENTH car), ``lookahead = D * (0.03, 0.08, 0.16, 0.3, 0.5,
    0.75, 1.0)`` (3 significant digits), ``spawn_back`` the vehicle's length,
    ``checkpoint_spacing = D / 6``, ``max_episode_steps`` = 600 s of steps and
    ``reward_progress = 1 / (max_speed * dt)`` per metre (1 per step at top speed, as the
    track-unit defaults give). Each derived value is clamped into its field's range (the
    checkpoint spacing at least the one whose checkpoints fit on the longest circuit), so
    every valid vehicle gets a valid config."""
    if isinstance(vehicle, str):
        vehicle = vehicles.vehicle_preset(vehicle, f"{cls.__name__}.vehicle")
    vehicle = VEHICLE.check(vehicle, f"{cls.__name__}.vehicle")
    a_lat = vehicles.lateral_accel(vehicle)
    brake = vehicles.braking_distance(vehicle)
    dt = _within(DT, float(f"{vehicle.max_speed / a_lat / 45.0:.1g}"))
    dt = dict(fields).get("dt", dt)
    steps = int(math.ceil(600.0 / dt_or(dt)))  # (a bad dt is refused by the class)
    # the circuits' longest loop over the most checkpoints: the least spacing that fits
    loop = TrackGenConfig(**circuit_fields(1))
    least = (loop.N_max + 1) * float(loop.resolved_spacing) / MAX_CHECKPOINTS.hi
    base = {
        "unit": METRES,
        "generator": CIRCUIT,
        "vehicle": vehicle,
        "dynamics": dynamics,
        "dt": dt,
        "lookahead": tuple(_within(LOOKAHEAD, _round(s * brake)) for s in LOOKAHEAD_SHARES),
        "spawn_back": _within(SPAWN_BACK, _round(vehicle.length)),
        "checkpoint_spacing": _within(
            SPACING, max(_round(brake / 6.0), _round(least * 1.01)), "checkpoint_spacing"
        ),
        "max_episode_steps": _within(MAX_EPISODE_STEPS, steps),
        "reward_progress": _within(REWARD_PROGRESS, _round(1.0 / (vehicle.max_speed * dt_or(dt)))),
    }
    base.update(fields)
    return cls(**base)


RaceConfig = config_class(
    "RaceConfig",
    [
        ("Car, episode, reward and course", "", RACE_FIELDS),
        ("Observations and sensors", "", observation_fields("the car and track-frame columns")),
    ],
    doc="""The car, the episode, the reward and the observation of a :class:`RaceEnv` (checked
on construction: TypeError for a wrong kind, ValueError for a value out of range, naming the
field; the rules between fields too, with the field to change).

Lengths in the config's ``unit``: track units by default (the default road is 0.1 wide on
each side of the centerline, a lap about 5 long, the track-unit car of the fields above), or
metres with ``unit="m"`` (the car is ``vehicle``, SI units, ``dynamics`` picks its model; the
track-unit car fields must then keep their defaults; :meth:`for_vehicle` sizes every length
to the vehicle); times in seconds, angles in radians. ``checkpoint_spacing`` is the course
checkpoints' declaration (``tools.checkpoints.SPACING``), narrowed to at most 100 here.
``car``: the car's limits in the config's unit (:class:`CarLimits`: the vehicle's with
``unit="m"``, the substeps of the single-track model). ``observations`` names the observed
terms in column order (default ``("state",)``); each
built-in sensor term has its settings field (``lidar=LidarSettings(...)``; the flat keywords
``lidar_num_beams=`` and so on set one field of it), read only when the term is observed.
``obs_dim``: the observation's columns; ``state_dim``: the ``state`` term's, ``8 + 2 *
len(lookahead)`` (+ 2 with ``racing_line="observe"``, + 2 with
``dynamics="single_track"``); ``observed``: the terms;
``sensor_dims``: ``{term: columns}`` of the observed sensors; ``plans_racing_line``: whether
the env plans a racing line (``racing_line != "off"``, ``reward_par != 0`` or an observed
term reading it); ``term_settings(name)``: a term's settings.""",
    namespace={
        **observation_namespace(_state_dim, lambda self: 1.0 / self.car.max_speed),
        "plans_racing_line": property(_plans_line),
        "car": property(_car, doc="The car's limits in the config's unit (CarLimits)."),
        "for_vehicle": classmethod(for_vehicle),
    },
    defaults={"checkpoint_spacing": 0.6},
    narrow=RACE_NARROW,
    check=check_race_config,
    module="track_gen.envs.race",
)


_checked_init = RaceConfig.__init__


@functools.wraps(_checked_init)
def _init_with_presets(self, *args, **kwargs):
    """RaceConfig's init, taking a vehicle preset's name (``vehicle="gt"``) for its
    settings."""
    if isinstance(kwargs.get("vehicle"), str):
        kwargs["vehicle"] = vehicles.vehicle_preset(kwargs["vehicle"], "RaceConfig.vehicle")
    _checked_init(self, *args, **kwargs)


RaceConfig.__init__ = _init_with_presets
