"""The config of :class:`~track_gen.envs.RaceEnv`: :class:`RaceConfig` (the car, the episode,
the reward, the course, the observation), declared once per field."""

from __future__ import annotations

from ..config import TRACK_GENERATORS, TrackGenConfig
from ..core.tunable import Tunable, config_class
from ..course.rules import check_checkpoint_capacity, check_props_capacity
from ..tools import observation_term
from ..tools.checkpoints import SPACING
from .base import STATE_TERM, observation_fields, observation_namespace
from .race_kernels import BASE_OBS, LINE_OBS

__all__ = ["RaceConfig"]

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
    "spawn_back", 0.03, 1.0, "track units", "how far behind the start line a car respawns."
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
    hi=10.0,
    unit="track units",
    doc="arc-length distances ahead of the car whose centerline points are observed (any "
    "order; one past a lap wraps).",
)
REWARD_PROGRESS = _weight(
    "reward_progress", 10.0, "per track unit", "reward per track unit gained along the centerline."
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
#: The samplers of a RaceEnv's own courses: those that draw in track units, as its car is
#: (the circuit sampler draws in metres: presets.circuit).
GENERATOR = Tunable(
    "generator",
    "bezier",
    choices=tuple(g for g in TRACK_GENERATORS if g != "circuit"),
    doc="the track sampler (presets.track(generator=...)), in track units like the car.",
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
)


def _state_dim(self) -> int:
    """Columns of the ``state`` term: ``8 + 2 * len(lookahead)``, plus 2 with
    ``racing_line="observe"``."""
    line = LINE_OBS if self.racing_line == "observe" else 0
    return BASE_OBS + 2 * len(self.lookahead) + line


def _plans_line(self) -> bool:
    """Whether the env plans a racing line: ``racing_line`` is not ``"off"``, ``reward_par``
    is nonzero, or an observed term reads the racing line."""
    reads = any(
        observation_term(n).needs_racing_line(self.term_settings(n))
        for n in self.observations
        if n != STATE_TERM
    )
    return self.racing_line != "off" or self.reward_par != 0.0 or reads


def check_capacities(config, track_config=None, where: str = "RaceConfig") -> None:
    """The rules between RaceConfig's fields and the track config the env generates from
    (``track_config``; None: the default one of ``config.generator``, the env's when it gets
    no ``spec``): the checkpoints ``checkpoint_spacing`` gives, and the cones
    ``cones_spacing`` gives when ``cones`` is observed, fit their capacity on the longest
    loop the track config allows. ValueError naming the field and the spacing that fits."""
    if track_config is None:
        track_config = TrackGenConfig(generator=config.generator)
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


RaceConfig = config_class(
    "RaceConfig",
    [
        ("Car, episode, reward and course", "", RACE_FIELDS),
        ("Observations and sensors", "", observation_fields("the car and track-frame columns")),
    ],
    doc="""The car, the episode, the reward and the observation of a :class:`RaceEnv` (checked
on construction: TypeError for a wrong kind, ValueError for a value out of range, naming the
field; the rules between fields too, with the field to change).

Lengths in track units (the default road is 0.1 wide on each side of the centerline, a lap
about 5 long), times in seconds, angles in radians. ``checkpoint_spacing`` is the course
checkpoints' declaration (``tools.checkpoints.SPACING``), narrowed to at most 100 here.
``observations`` names the observed terms in column order (default ``("state",)``); each
built-in sensor term has its settings field (``lidar=LidarSettings(...)``; the flat keywords
``lidar_num_beams=`` and so on set one field of it), read only when the term is observed.
``obs_dim``: the observation's columns; ``state_dim``: the ``state`` term's, ``8 + 2 *
len(lookahead)`` (+ 2 with ``racing_line="observe"``); ``observed``: the terms;
``sensor_dims``: ``{term: columns}`` of the observed sensors; ``plans_racing_line``: whether
the env plans a racing line (``racing_line != "off"``, ``reward_par != 0`` or an observed
term reading it); ``term_settings(name)``: a term's settings.""",
    namespace={
        **observation_namespace(_state_dim, lambda self: 1.0 / self.max_speed),
        "plans_racing_line": property(_plans_line),
    },
    defaults={"checkpoint_spacing": 0.6},
    narrow={"checkpoint_spacing": {"hi": 100.0}},
    check=check_capacities,
    module="track_gen.envs.race",
)
