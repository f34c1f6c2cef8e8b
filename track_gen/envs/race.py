"""``RaceEnv``: a batched kinematic car racing on a :class:`~track_gen.course.Course` track.

One car per env drives laps of its own generated course. Everything of a step runs as Warp
kernels on the course's device; the adapters (:mod:`track_gen.envs.gym`,
:mod:`track_gen.envs.rsl_rl`) only copy actions in and views out.

A step, in order (:meth:`RaceEnv.step`):

1. ``drive``: a kinematic bicycle (rear-axle reference) moves each car by ``dt``. Each action
   component is clamped to [-1, 1]; a NaN or infinite one is read as 0 (the env cannot check
   device actions on the host without a sync, so every adapter follows the same rule).
2. ``course.step()``: checkpoints and laps (``progress``), the band collision (``oob``,
   clearance) and the localizer (arc length ``s``, lateral offset, closest segment).
3. ``observe``: ONE kernel writes the observation, reward, done mask and the episode
   bookkeeping of every env, gated on ``valid`` with selects.
4. auto-reset of the done envs: with ``new_course_on_reset=True`` (default) a masked
   regeneration ``course.regenerate(mask=done, advance=True)`` gives each a NEW course (its
   ``(seed, epoch + 1)``); with ``False`` ``course.reset(mask=done)`` keeps its course; with
   a ``curriculum=`` its ``LevelReplay`` first scores the ended episodes
   (``curriculum.update(done, curriculum_signal)``, every step) and then
   ``curriculum.regenerate(done)`` picks and builds each done env's next level. The car
   respawns at rest behind the start line, the course is stepped once more (the first update
   after a reset never counts a crossing) and the observation of the done envs is replaced
   by their new episode's first one (gymnasium's same-step autoreset). ``final_obs`` keeps
   the last observation of the ended episode.

Observation (float32 ``[E, obs_dim]``): the terms of ``config.observations`` in order,
``"state"`` (the default) and the sensors ``"lidar"``, ``"lookahead"``, ``"cones"``, whose
columns :mod:`track_gen.envs.race_sensors` documents (one kernel writes them after the state
kernel; every column finite, 0 for an invalid env). The ``state`` term
(``config.state_dim = 8 + 2 * len(lookahead)``, plus 2 with ``racing_line="observe"``), per
column: speed / max_speed; steering angle / max_steer; lateral
offset ``n`` from the centerline (track units, left positive); sin and cos of the heading
error (car yaw minus the closest segment's direction); band clearance (track units, negative
off the road); distance to the next checkpoint (track units); lap fraction ``s / length`` in
``[0, 1)``; then for each look-ahead distance ``d`` the centerline point at arc length
``s + d``, in the car frame (x forward, y left, track units); then, with
``racing_line="observe"``, the racing line at the car's arc ``s``
(:meth:`~track_gen.tools.RacingLinePlanner.sample`): its offset relative to the car (the
line's lateral offset minus ``n``, track units, positive: the line lies to the car's left,
toward the left border) and its target speed / max_speed (0 where the course has no line).
An invalid env (no usable course, or a non-finite car state) observes all zeros (the cos
column 1), gets reward 0 and is done.

Reward per step: ``reward_progress * ds + reward_checkpoint * passed - penalty_oob * oob +
reward_par * (ds / length * par - dt)``, where ``ds`` is the arc length gained along the
centerline this step (track units, wrapped at the start line, 0 on the first step of an
episode) and ``par`` the course's par lap time (s, the racing line's ``lap_time``): the last
term is positive when the car gains arc faster than the par pace ``length / par``. It is
added only when ``reward_par != 0`` (default 0: the reward of the other terms, bit for bit)
and the course has a finite par (0 otherwise). Episode progress (laps, the metric of the
training notes) is the sum of ``ds / length`` over the episode.

Racing line (``racing_line="par"`` or ``"observe"``, or ``reward_par != 0``): the course gets
a ``tools.RacingLine`` with the car's limits (``vehicle_width = 2 * half_extents[1]``,
``a_lat = max_lateral_accel``, ``a_lon = max_accel``, ``v_max = max_speed``; the planner's
default iterations, no curvature bound), re-planned by the course for every env a (masked)
regeneration rebuilds. It costs about 1 ms per env per regeneration on the CPU. The par is a
point-mass bound under a friction ellipse; the car has a box (full throttle and full grip at
once), a steering-rate limit and a minimum turning radius, so a lap can beat it slightly or
miss it.

Lap times: a lap completes on the step the last checkpoint is passed; every lap of an
episode after its first (one loop from the last checkpoint back to it, at racing speed) is
timed in whole steps, ``steps * dt`` (each within ``dt`` of the continuous time, the error
zero in the mean: both ends round the same way). :attr:`RaceEnv.final_lap_time` holds each
env's last timed lap and :meth:`RaceEnv.stats` their mean and the mean percentage of par.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np
import warp as wp

from .. import tools
from ..config import TRACK_GENERATORS, TrackGenConfig
from ..core.budget import AllocationBudget
from ..core.checks import (
    INT32_MAX,
    INT32_MIN,
    check_bool,
    check_int,
    check_seed_values,
    is_int,
)
from ..core.tunable import Tunable, config_class
from ..course import Course
from ..course.rules import check_checkpoint_capacity, check_props_capacity
from ..curriculum import LevelReplay
from ..curriculum import fields as curriculum_fields
from ..pipeline import PipelineSpec, presets
from ..seeds import PerEnvSeededRNG
from ..tools.checkpoints import SPACING
from .base import FixedArrays
from .race_kernels import (
    _BASE_OBS,
    _LINE_OBS,
    SIGNAL_LAP_TIME,
    SIGNAL_NONE,
    SIGNAL_SUCCESS,
    RaceDone,
    _drive,
    _observe,
    _observe_reset,
    _respawn,
)
from .race_sensors import (
    SENSOR_DEFAULTS,
    SENSOR_FIELDS,
    observe_sensors,
    raster_channels,
    sensor_components,
    sensor_dims,
    stochastic_sensors,
    terms,
)

__all__ = ["RaceConfig", "RaceDone", "RaceEnv", "RaceStats"]

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
GENERATOR = Tunable(
    "generator",
    "bezier",
    choices=TRACK_GENERATORS,
    doc="the track sampler (presets.track(generator=...)).",
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
    line = _LINE_OBS if self.racing_line == "observe" else 0
    return _BASE_OBS + 2 * len(self.lookahead) + line


def _obs_dim(self) -> int:
    """Columns of the observation: the state's (when observed) and each sensor's."""
    state = _state_dim(self) if "state" in terms(self) else 0
    return state + sum(sensor_dims(self).values())


def _plans_line(self) -> bool:
    """Whether the env plans a racing line: ``racing_line`` is not ``"off"``, ``reward_par``
    is nonzero, or the observed look-ahead points lie on the racing line."""
    looks = "lookahead" in terms(self) and self.lookahead_source == "racing_line"
    return self.racing_line != "off" or self.reward_par != 0.0 or looks


def _check_capacities(config, track_config=None, where: str = "RaceConfig") -> None:
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
    if "cones" in terms(config):
        check_props_capacity(
            track_config,
            config.cones_spacing,
            2,
            f"{where}.cones_spacing",
            fix.format("cones_spacing"),
        )


RaceConfig = config_class(
    "RaceConfig",
    [
        ("Car, episode, reward and course", "", RACE_FIELDS),
        ("Observations and sensors", "", SENSOR_FIELDS),
    ],
    doc="""The car, the episode and the reward of a :class:`RaceEnv` (checked on construction:
TypeError for a wrong kind, ValueError for a value out of range, naming the field).

Lengths in track units (the default road is 0.1 wide on each side of the centerline, a lap
about 5 long), times in seconds, angles in radians. ``checkpoint_spacing`` is the course
checkpoints' declaration (``tools.checkpoints.SPACING``), narrowed to at most 100 here; a
spacing giving more than 65536 checkpoints on the longest loop the track config allows is
refused by :class:`RaceEnv` before anything is built. ``observations`` names the observed
terms joined by ``+`` (default ``"state"``); the ``lidar_*``, ``lookahead_*`` and ``cones_*``
fields are the settings of ``tools.Lidar``, ``tools.Lookahead`` and ``tools.ConeDetections``
(their own declarations), read only when the sensor is observed (column layout:
:mod:`track_gen.envs.race_sensors`). ``obs_dim``: the observation's columns; ``state_dim``:
the ``state`` term's, ``8 + 2 * len(lookahead)`` (+ 2 with ``racing_line="observe"``);
``observed``: the terms as a tuple; ``plans_racing_line``: whether the env plans a racing
line (``racing_line != "off"``, ``reward_par != 0`` or observed ``lookahead_source=
"racing_line"``).""",
    namespace={
        "obs_dim": property(_obs_dim),
        "state_dim": property(_state_dim),
        "observed": property(terms),
        "sensor_dims": property(sensor_dims),
        "plans_racing_line": property(_plans_line),
    },
    defaults={"checkpoint_spacing": 0.6, **SENSOR_DEFAULTS},
    narrow={"checkpoint_spacing": {"hi": 100.0}},
    check=_check_capacities,
    module=__name__,
)


@dataclasses.dataclass(frozen=True)
class RaceStats:
    """Episodes that ended, and laps timed, since the last :meth:`RaceEnv.stats` call with
    ``clear=True``.

    Attributes:
        episodes: episodes ended (all envs).
        mean_progress: mean episode progress, laps (NaN when no episode ended).
        lap_rate: fraction of those episodes that completed ``max_laps`` laps.
        mean_length: mean episode length, steps.
        laps_timed: timed laps completed in the same period (every lap of an episode after
            its first: one loop of the course from the last checkpoint to the last
            checkpoint, see :attr:`RaceEnv.final_lap_time`).
        mean_lap_time: mean time of those laps, s (NaN when none).
        mean_par_percent: mean of ``100 * lap time / par lap time`` over the timed laps on
            courses with a racing line (NaN without ``racing_line`` or when none): 100 is
            the racing line's par pace, below 100 faster.
    """

    episodes: int
    mean_progress: float
    lap_rate: float
    mean_length: float
    laps_timed: int = 0
    mean_lap_time: float = math.nan
    mean_par_percent: float = math.nan


# ------------------------------------------------------------------------------ the env
def _racing_line_for(config: RaceConfig) -> tools.RacingLine:
    """The ``tools.RacingLine`` a :class:`RaceEnv` with ``config`` adds to its course: the
    car's limits as the point-mass limits of the speed profile (``vehicle_width = 2 *
    half_extents[1]``, ``a_lat = max_lateral_accel``, ``a_lon = max_accel`` for traction and
    braking, ``v_max = max_speed``), the planner's default iteration counts and no curvature
    bound (``kappa_max = None``)."""
    return tools.RacingLine(
        2.0 * config.half_extents[1],
        a_lat=config.max_lateral_accel,
        a_lon=config.max_accel,
        v_max=config.max_speed,
    )


def _device(device) -> wp.context.Device:
    """``device`` (None, a name such as ``"cpu"`` / ``"cuda:0"``, or a wp Device) as a Warp
    device; ValueError naming ``device`` and the devices present otherwise."""
    try:
        return wp.get_device(device)
    except Exception:
        names = [d.alias for d in wp.get_devices()]
        raise ValueError(
            f"device = {device!r} is not a Warp device here: pass None or one of {names}"
        ) from None


def _env_seeds(seeds, E: int) -> np.ndarray:
    """``seeds`` as int32 ``[E]``: an int ``s`` gives ``s + e``, else one int per env."""
    if is_int(seeds):
        s = int(seeds)
        if s < INT32_MIN or s + E - 1 > INT32_MAX:
            raise ValueError(
                f"seeds = {s} gives env seeds {s}..{s + E - 1}, outside the int32 range: pass "
                f"an int in [{INT32_MIN}, {INT32_MAX - E + 1}]"
            )
        return (s + np.arange(E, dtype=np.int64)).astype(np.int32)
    if isinstance(seeds, (str, bytes, float, bool, np.floating, np.bool_)) or seeds is None:
        raise TypeError(
            f"seeds must be an int (env e gets seeds + e) or one int per env, got "
            f"{type(seeds).__name__} {seeds!r}"
        )
    return check_seed_values("seeds", seeds, E)


#: The settings ``RaceEnv(curriculum={...})`` takes: LevelReplay's own declarations.
CURRICULUM_FIELDS = {
    t.name: t
    for t in (
        curriculum_fields.BUFFER_SIZE,
        curriculum_fields.REPLAY_PROB,
        curriculum_fields.SCORE,
        curriculum_fields.STALENESS,
        curriculum_fields.TEMPERATURE,
        curriculum_fields.SEED,
    )
}
#: What the observe kernel writes into ``curriculum_signal`` for each score rule.
_SIGNAL_MODE = {
    "value_loss": SIGNAL_NONE,
    "learnability": SIGNAL_SUCCESS,
    "regret": SIGNAL_LAP_TIME,
}


def _curriculum_settings(curriculum, config: RaceConfig, new_course_on_reset: bool):
    """``curriculum`` (None or a mapping of LevelReplay keyword arguments) checked: the
    keyword arguments with normalized values, or None; TypeError / ValueError naming
    ``curriculum.<key>`` otherwise (nothing is built before)."""
    if curriculum is None:
        return None
    names = ", ".join(CURRICULUM_FIELDS)
    if not isinstance(curriculum, Mapping):
        raise TypeError(
            f"curriculum must be None or a mapping of LevelReplay settings ({names}), e.g. "
            f"{{'buffer_size': 256, 'replay_prob': 0.5}}, got {type(curriculum).__name__}"
        )
    for key in curriculum:
        if key not in CURRICULUM_FIELDS:
            raise ValueError(
                f"curriculum.{key!s} ({key!r}) is not a LevelReplay setting: use only {names}"
            )
    for key in ("buffer_size", "replay_prob"):
        if key not in curriculum:
            raise ValueError(
                f"curriculum.{key} is missing: LevelReplay has no default for it, pass e.g. "
                "curriculum={'buffer_size': 256, 'replay_prob': 0.5}"
            )
    kw = {k: CURRICULUM_FIELDS[k].check(v, f"curriculum.{k}") for k, v in curriculum.items()}
    if not new_course_on_reset:
        raise ValueError(
            "curriculum needs new_course_on_reset=True (a curriculum picks each done env's "
            "next course; with False every episode restarts on the same course): pass "
            "new_course_on_reset=True or curriculum=None"
        )
    if kw.get("score") == "regret" and not config.plans_racing_line:
        raise ValueError(
            "curriculum.score = 'regret' scores each lap time against the racing line's par "
            "time, and config plans no racing line: pass config=RaceConfig(racing_line='par') "
            "(or 'observe'), or pick curriculum.score 'learnability' or 'value_loss'"
        )
    return kw


class RaceEnv(FixedArrays):
    """``E`` kinematic cars, one per env, each racing its own course; see the module docs.

    Args:
        num_envs: E, in [1, 2**20].
        device: Warp device (None: the default device).
        seeds: an int ``s`` (env ``e`` gets seed ``s + e``) or one int32 per env (a sequence,
            NumPy array or wp.array). Env ``e``'s course is a pure function of
            ``(seeds[e], epoch[e])``: :mod:`track_gen.distributed` gives each rank its slice.
            The same seed for every env and ``new_course_on_reset=False`` trains on one
            fixed course.
        config: a :class:`RaceConfig` (None: the defaults).
        new_course_on_reset: True: an ended episode's env gets the next course of its seed
            (masked regeneration, ``advance=True``); False: it restarts on the same course.
        captured: record :meth:`step` into a ``wp.ScopedCapture`` once and replay it (the
            auto-reset then runs every step, an all-zero mask being an exact no-op).
        spec: None (``presets.track`` with ``config.generator``) or a track
            :class:`~track_gen.pipeline.PipelineSpec` of ``num_envs`` envs, e.g.
            ``io.tracks_spec(circuits, num_envs=E, units="normalized")`` to drive imported
            real circuits; its device is the env's (``device`` must then be None or equal).
        curriculum: None, or a mapping of :class:`~track_gen.curriculum.LevelReplay` keyword
            arguments (``buffer_size``, ``replay_prob`` required; ``score``, ``staleness``,
            ``temperature``, ``seed``): the auto-reset then gives each done env the level the
            curriculum picks (see :attr:`curriculum`). Needs ``new_course_on_reset=True``;
            ``score="regret"`` needs a racing line (``config.plans_racing_line``).

    Every argument is checked before anything is built (TypeError / ValueError naming it).

    Attributes (device arrays allocated once, ``E`` = num_envs, ``D`` = ``obs_dim``):
        course: the :class:`~track_gen.course.Course` (checkpoints, progress, segment band
            collision, localizer).
        actions: float32 ``[E, 2]``: throttle and steering command, each clamped to [-1, 1]
            by the drive kernel; a NaN or infinite component is read as 0 (no throttle,
            straight steering command), the rule of every adapter.
        obs: float32 ``[E, D]``: the observation after the last step (for a done env, its
            new episode's first observation).
        final_obs: float32 ``[E, D]``: the observation the last step computed before any
            reset (for a done env, its ended episode's last observation).
        reward: float32 ``[E]``. done: int32 ``[E]`` (1: the episode ended this step).
        time_out: int32 ``[E]`` (1: ended by ``max_episode_steps`` alone, a truncation).
        done_reason: int32 ``[E]``, :class:`RaceDone` flags (0 when not done).
        episode_length: int32 ``[E]``: steps of the running episode.
        episode_progress: float32 ``[E]``: laps gained in the running episode.
        final_progress: float32 ``[E]``: laps gained by the episode as of the last step
            (its total for a done env).
        final_lap_time: float32 ``[E]``: s, the episode's last timed lap as of the last step
            (a done env: its ended episode's), NaN before one completes (see the module docs).
        racing_line: the course's :class:`~track_gen.tools.RacingLineSet` (per-env
            ``lap_time``, the par, and per-bead offset and speed), or None without a racing
            line (``config.plans_racing_line`` False).
        position: vec3f ``[E]`` (track units), yaw, speed, steer: float32 ``[E]`` (rad,
            track units / s, rad): the car state.
        observed: the observed terms (``config.observed``, e.g. ``("state", "lidar")``).
        sensor_dims: ``{term: columns}`` of the observed sensors, in column order.
        sensors: ``{term: result}`` of the observed sensors (``tools.LidarScan``,
            ``tools.LookaheadPoints``, ``tools.ConeDetectionSet``: the arrays the
            observation's columns are read from, as of the last step; empty without).
        curriculum: the :class:`~track_gen.curriculum.LevelReplay` on :attr:`course` (None
            without ``curriculum=``). Each step, after the observe kernel and before the
            auto-reset, the env calls ``curriculum.update(done, curriculum_signal)`` (every
            step, done or not: the staleness counts steps), and the auto-reset calls
            ``curriculum.regenerate(done)`` in place of ``course.regenerate(mask=done,
            advance=True)``.
        curriculum_signal: float32 ``[E]`` (None without a curriculum), read where done:
            with ``score="learnability"`` the observe kernel writes 1.0 where the episode
            ended with ``max_laps`` laps completed, else 0.0; with ``"regret"`` the episode's
            last timed lap (s, :attr:`final_lap_time`), ``+inf`` when no lap was timed; with
            ``"value_loss"`` the env never writes it: the training loop writes each env's
            positive value loss estimate there before the step (NaN until then: unscored).

    Every public array above is allocated once and read by pointer: rebinding one
    (``env.curriculum_signal = other``) raises AttributeError; write into it instead
    (``env.curriculum_signal.assign(values)``, ``wp.copy``).
    """

    _FIXED = ("curriculum_signal",)

    def __init__(
        self,
        num_envs: int,
        device=None,
        seeds=0,
        *,
        config: RaceConfig | None = None,
        new_course_on_reset: bool = True,
        captured: bool = False,
        spec=None,
        curriculum=None,
    ):
        E = check_int("num_envs", num_envs, 1, 2**20)
        if config is None:
            config = RaceConfig()
        if not isinstance(config, RaceConfig):
            raise TypeError(f"config must be a RaceConfig, got {type(config).__name__}")
        self.new_course_on_reset = check_bool("new_course_on_reset", new_course_on_reset)
        captured = check_bool("captured", captured)
        seed_values = _env_seeds(seeds, E)
        self._curriculum_kw = _curriculum_settings(curriculum, config, self.new_course_on_reset)

        if spec is None:
            dev = _device(device)
            spec = presets.track(num_envs=E, device=str(dev), generator=config.generator)
        else:
            if not isinstance(spec, PipelineSpec) or spec.family != "track":
                raise TypeError(
                    f"spec must be a track PipelineSpec (presets.track(...), "
                    f"io.tracks_spec(...)) or None, got {type(spec).__name__}"
                )
            if spec.config.num_envs != E:
                raise ValueError(
                    f"spec is built for num_envs = {spec.config.num_envs}, the env has {E}: "
                    "build the spec with the same num_envs"
                )
            dev = wp.get_device(spec.config.device)
            if device is not None and _device(device) != dev:
                raise ValueError(
                    f"device = {device!r} but spec is on {dev}: pass device=None with a spec"
                )

        _check_capacities(config, spec.config, "config")
        self.config = config
        self.num_envs = E
        self.obs_dim = config.obs_dim
        extra = [tools.Localizer(warm_window=8)]
        if config.plans_racing_line:
            extra.append(_racing_line_for(config))
        extra.extend(sensor_components(config))
        self.course = Course.track(
            spec,
            checkpoint_spacing=config.checkpoint_spacing,
            collision="segments",
            extra=extra,
            seeds=PerEnvSeededRNG(
                AllocationBudget(dev, ENV_BUDGET_HINT, owner="this env's").array(
                    seed_values, wp.int32, "the env seeds"
                ),
                num_envs=E,
                device=dev,
            ),
        )
        self.device = self.course.device
        self.n_max = self.course.generator.layout.N_max
        # a step without a done env skips the auto-reset pass on the CPU, unless a sensor draws
        # noise: that pass steps the course again (new draws), as a recorded step always does
        self._host_guard = self.device.is_cpu and not stochastic_sensors(config)

        budget = AllocationBudget(dev, ENV_BUDGET_HINT, owner="this env's")

        def f32(shape=E, what="the env's float32 state"):
            return budget.zeros(shape, wp.float32, what)

        def i32(what="the env's int32 state"):
            return budget.zeros(E, wp.int32, what)

        self.position = budget.zeros(E, wp.vec3f, "car positions")
        self.orientation = budget.full(E, wp.quat_identity(), wp.quatf, "car orientations")
        self.half_extents = budget.full(
            E, wp.vec2f(*config.half_extents), wp.vec2f, "car half extents"
        )
        self.yaw, self.speed, self.steer = f32(), f32(), f32()
        self.course.bind(
            position=self.position, orientation=self.orientation, half_extents=self.half_extents
        )
        self.lookahead = budget.array(
            np.asarray(config.lookahead, np.float32), wp.float32, "lookahead distances"
        )
        self.actions = f32((E, 2), "actions")
        self.obs = f32((E, self.obs_dim), "observations")
        self.final_obs = f32((E, self.obs_dim), "final observations")
        self._ok = i32("usable-env flags")
        self._sensor_setup(config, budget)
        self.reward = f32()
        self.done, self.time_out, self.done_reason = i32(), i32(), i32()
        self.episode_length = i32()
        self.episode_progress = f32()
        self.final_progress = f32()
        self.final_lap_time = budget.full(E, wp.nan, wp.float32, "final lap times")
        self._s_prev = budget.full(E, wp.nan, wp.float32, "previous progress")
        self._lap_mark = budget.full(E, -1, wp.int32, "lap marks")
        self._lap_last = budget.full(E, wp.nan, wp.float32, "last lap times")
        self._stat_episodes, self._stat_laps, self._stat_steps = i32(), i32(), i32()
        self._stat_progress = f32()
        self._stat_timed, self._stat_par_laps = i32(), i32()
        self._stat_lap_time, self._stat_par_ratio = f32(), f32()
        # the racing line sampled at each car's arc, and the par lap times (NaN: no line)
        self._line_offset = budget.full(E, wp.nan, wp.float32, "racing line offsets")
        self._line_speed = budget.full(E, wp.nan, wp.float32, "racing line speeds")
        line = self.course.components.get("racing_line")
        self.racing_line = None if line is None else line.result
        self._par_time = (
            self.racing_line.lap_time
            if line is not None
            else budget.full(E, wp.nan, wp.float32, "par lap times")
        )
        self._observe_line = config.racing_line == "observe"
        self._everyone = budget.full(E, 1, wp.int32, "all-envs mask")
        self._signal = budget.full(E, wp.nan, wp.float32, "curriculum signals")
        kw = self._curriculum_kw
        self._signal_mode = (
            SIGNAL_NONE if kw is None else _SIGNAL_MODE[kw.get("score", "value_loss")]
        )
        self.curriculum = None if kw is None else LevelReplay(self.course, **kw)
        self.curriculum_signal = None if kw is None else self._signal
        self.graph = None

        self._respawn_observe(self._everyone)
        if captured:
            self.capture()
        self._seal()

    # ------------------------------------------------------------------ sensors
    def _sensor_setup(self, config: RaceConfig, budget: AllocationBudget) -> None:
        """The state term's buffers (the observation itself when ``state`` is observed, else
        scratch) and the sensor kernel's fixed arguments."""
        E = self.num_envs
        self.observed = config.observed
        self.sensor_dims = config.sensor_dims
        if "state" in self.observed:
            self._state_obs, self._state_final = self.obs, self.final_obs
        else:
            S = config.state_dim
            self._state_obs = budget.zeros((E, S), wp.float32, "state scratch")
            self._state_final = budget.zeros((E, S), wp.float32, "state scratch")
        self._has_sensors = bool(self.sensor_dims)
        self.sensors: dict = {}
        one_f = budget.zeros(1, wp.float32, "placeholders")
        one_i = budget.zeros(1, wp.int32, "placeholders")
        one_v = budget.zeros(1, wp.vec3f, "placeholders")
        one_u = budget.zeros(1, wp.uint8, "placeholders")
        self._placeholders = (one_f, one_i, one_v, one_u)
        col = config.state_dim if "state" in self.observed else 0
        cols = {}
        for name, dim in self.sensor_dims.items():
            cols[name] = col
            col += dim
        K, h = config.lookahead_num_points, config.lookahead_spacing
        self._sensor_static = [
            config.lidar_num_beams if "lidar" in cols else 0,
            cols.get("lidar", 0),
            1.0 / config.lidar_max_range,
            K if "lookahead" in cols else 0,
            cols.get("lookahead", 0),
            self.sensor_dims.get("lookahead", 0) // max(K, 1),
            1.0 / (K * h),
            h,
            1.0 / config.max_speed,
            config.cones_max_cones if "cones" in cols else 0,
            cols.get("cones", 0),
            1.0 / config.cones_max_range,
            config.raster_resolution**2 if "raster" in cols else 0,
            cols.get("raster", 0),
            raster_channels(config),
        ]

    def _observe_sensors(self, mask: wp.array, res, write_final: int) -> None:
        """The sensor columns of every env (one kernel; nothing without sensors): after a
        step (``write_final`` 1: into ``final_obs`` too) or after the course step of a reset
        of ``mask`` (2: ``final_obs`` of the others too; see the kernel)."""
        if not self._has_sensors:
            return
        f, i, v, u = self._placeholders
        if not self.sensors:  # the sensors answer into the same arrays every step
            self.sensors = {name: res[name] for name in self.sensor_dims}
        lidar = self.sensors.get("lidar")
        look = self.sensors.get("lookahead")
        cones = self.sensors.get("cones")
        raster = self.sensors.get("raster")
        speed = f if look is None or look.speed is None else look.speed
        wp.launch(
            observe_sensors,
            self.num_envs,
            inputs=[
                mask,
                self._ok,
                f if lidar is None else lidar.distance,
                v if look is None else look.position,
                f if look is None else look.width_left,
                f if look is None else look.width_right,
                f if look is None else look.curvature,
                speed,
                i if look is None else look.valid,
                v if cones is None else cones.position,
                i if cones is None else cones.colour,
                i if cones is None else cones.count,
                i if cones is None else cones.valid,
                u if raster is None else raster.cells,
                *self._sensor_static,
                write_final,
            ],
            outputs=[self.obs, self.final_obs],
            device=self.device,
        )

    # ------------------------------------------------------------------ stages
    def _drive(self) -> None:
        c = self.config
        wp.launch(
            _drive,
            self.num_envs,
            inputs=[
                self.actions,
                c.dt,
                c.wheelbase,
                c.max_speed,
                c.max_accel,
                c.max_steer,
                c.max_steer_rate,
                c.max_lateral_accel,
                self.position,
                self.yaw,
                self.speed,
                self.steer,
            ],
            outputs=[self.orientation],
            device=self.device,
        )

    def _sample_line(self, frame) -> None:
        """The racing line's offset and target speed at each car's arc (observed columns)."""
        if self._observe_line:
            self.course.racing_line.sample(frame.s, self._line_offset, self._line_speed)

    def _observe(self, res) -> None:
        c, r, ev, frame = self.config, self.course.result, res.events, res.frame
        self._sample_line(frame)
        wp.launch(
            _observe,
            self.num_envs,
            inputs=[
                res.valid,
                res.contacts.oob,
                res.contacts.distance,
                ev.passed,
                ev.laps,
                ev.dist_to_next,
                frame.s,
                frame.n,
                frame.segment,
                frame.tangent,
                r.center,
                r.arclen,
                r.length,
                r.count,
                self.lookahead,
                ev.next_index,
                self._line_offset,
                self._line_speed,
                self._par_time,
                self.position,
                self.yaw,
                self.speed,
                self.steer,
                self.n_max,
                c.dt,
                c.max_speed,
                c.max_steer,
                c.max_laps,
                c.max_episode_steps,
                c.reward_progress,
                c.reward_checkpoint,
                c.penalty_oob,
                c.reward_par,
                int(self._observe_line),
                self._signal_mode,
            ],
            outputs=[
                self.episode_length,
                self._s_prev,
                self.episode_progress,
                self._lap_mark,
                self._lap_last,
                self._stat_episodes,
                self._stat_progress,
                self._stat_laps,
                self._stat_steps,
                self._stat_timed,
                self._stat_lap_time,
                self._stat_par_laps,
                self._stat_par_ratio,
                self._state_obs,
                self._state_final,
                self.reward,
                self.done,
                self.time_out,
                self.done_reason,
                self.final_progress,
                self.final_lap_time,
                self._signal,
                self._ok,
            ],
            device=self.device,
        )
        self._observe_sensors(self._everyone, res, 1)

    def _respawn_observe(self, mask: wp.array) -> None:
        """Respawn the masked cars behind the start line of their current course, step the
        course once and write their first observation."""
        c, r = self.config, self.course.result
        wp.launch(
            _respawn,
            self.num_envs,
            inputs=[mask, r.center, r.tangent, r.count, self.n_max, c.spawn_back],
            outputs=[
                self.position,
                self.yaw,
                self.speed,
                self.steer,
                self.orientation,
                self.episode_length,
                self.episode_progress,
                self._lap_mark,
                self._lap_last,
            ],
            device=self.device,
        )
        res = self.course.step()
        frame = res.frame
        self._sample_line(frame)
        wp.launch(
            _observe_reset,
            self.num_envs,
            inputs=[
                mask,
                res.valid,
                res.contacts.distance,
                res.events.dist_to_next,
                frame.s,
                frame.n,
                frame.segment,
                frame.tangent,
                r.center,
                r.arclen,
                r.length,
                r.count,
                self.lookahead,
                self._line_offset,
                self._line_speed,
                self.position,
                self.yaw,
                self.speed,
                self.steer,
                self.n_max,
                c.max_speed,
                c.max_steer,
                int(self._observe_line),
            ],
            outputs=[self._s_prev, self._state_obs, self._ok],
            device=self.device,
        )
        self._observe_sensors(mask, res, 2)

    def _auto_reset(self) -> None:
        if self.curriculum is not None:
            self.curriculum.regenerate(self.done)
        elif self.new_course_on_reset:
            self.course.regenerate(mask=self.done, advance=True)
        else:
            self.course.reset(self.done)
        self._respawn_observe(self.done)

    def _simulate(self, guard: bool) -> None:
        self._drive()
        self._observe(self.course.step())
        if self.curriculum is not None:  # every step: the staleness counts steps
            self.curriculum.update(self.done, self._signal)
        if guard and not self.done.numpy().any():  # CPU only: a free read of host memory
            return
        self._auto_reset()

    # ------------------------------------------------------------------ public API
    def step(self, actions: wp.array | None = None) -> None:
        """Advance every env one step and auto-reset the done ones (see the module docs).

        ``actions``: None (use :attr:`actions` as it is: write into it first) or a float32
        ``[E, 2]`` wp.array on the env's device, copied into :attr:`actions` (each component
        clamped to [-1, 1], a NaN or infinite one read as 0). The outputs are
        the env's stable arrays (:attr:`obs`, :attr:`reward`, :attr:`done`, ...), overwritten
        by the next step. On CUDA nothing is read back to the host.
        """
        if actions is not None and actions is not self.actions:
            self._check_array("actions", actions, wp.float32, (self.num_envs, 2))
            wp.copy(self.actions, actions)
        if self.graph is not None:
            wp.capture_launch(self.graph)
        else:
            self._simulate(self._host_guard)

    def reset(self, mask: wp.array | None = None) -> None:
        """Restart the episodes of the envs with ``mask[e] != 0`` (None: every env) on their
        SAME course: car at rest behind the start line, progress, localizer and episode
        counters reset, first observation in :attr:`obs`. Other envs are unchanged.

        ``mask``: a contiguous int32 ``[E]`` wp.array on the env's device (checked first).
        """
        if mask is None:
            mask = self._everyone
        else:
            self._check_array("mask", mask, wp.int32, (self.num_envs,))
        self.course.reset(mask)
        self._respawn_observe(mask)

    def reseed(self, seeds) -> None:
        """New seeds for every env (int ``s``: env ``e`` gets ``s + e``; or one int32 per
        env), epochs back to 0, new courses, every episode restarted.

        With a curriculum, :attr:`curriculum` becomes a new ``LevelReplay`` of the same
        settings (an empty buffer; its fresh levels follow the new seeds) and a recorded
        step is recorded again (it launched the old one's kernels)."""
        self.course.generate(seeds=_env_seeds(seeds, self.num_envs))
        if self.curriculum is not None:
            self.curriculum = LevelReplay(self.course, **self._curriculum_kw)
            self._signal.fill_(wp.nan)
        self._respawn_observe(self._everyone)
        if self.curriculum is not None and self.graph is not None:
            self.graph = None
            self.capture()

    def capture(self):
        """Record :meth:`step` (without the action copy) once; every later :meth:`step`
        replays it. Returns the graph. Recording runs nothing."""
        if self.graph is None:
            with wp.ScopedCapture(device=self.device) as cap:
                self._simulate(False)
            self.graph = cap.graph
        return self.graph

    @property
    def seeds(self) -> wp.array:
        """int32 ``[E]``: each env's seed (read-only use)."""
        return self.course.generator.seeds.seeds

    @property
    def epochs(self) -> wp.array:
        """int32 ``[E]``: each env's epoch (its course is that of ``(seed, epoch)``)."""
        return self.course.generator.seeds.epochs

    def stats(self, clear: bool = True) -> RaceStats:
        """Episodes ended (and laps timed) since the last clearing call, summed on the host
        (reads device memory: call it between rollouts, not per step)."""
        clear = check_bool("clear", clear)
        eps = self._stat_episodes.numpy().astype(np.int64)
        n = int(eps.sum())
        prog = float(self._stat_progress.numpy().astype(np.float64).sum())
        laps = int(self._stat_laps.numpy().sum())
        steps = int(self._stat_steps.numpy().astype(np.int64).sum())
        timed = int(self._stat_timed.numpy().astype(np.int64).sum())
        lap_s = float(self._stat_lap_time.numpy().astype(np.float64).sum())
        par_laps = int(self._stat_par_laps.numpy().astype(np.int64).sum())
        ratio = float(self._stat_par_ratio.numpy().astype(np.float64).sum())
        if clear:
            for a in self._stat_arrays():
                a.zero_()
        nan = math.nan
        return RaceStats(
            episodes=n,
            mean_progress=prog / n if n else nan,
            lap_rate=laps / n if n else nan,
            mean_length=steps / n if n else nan,
            laps_timed=timed,
            mean_lap_time=lap_s / timed if timed else nan,
            mean_par_percent=100.0 * ratio / par_laps if par_laps else nan,
        )

    def _stat_arrays(self) -> tuple[wp.array, ...]:
        return (
            self._stat_episodes,
            self._stat_progress,
            self._stat_laps,
            self._stat_steps,
            self._stat_timed,
            self._stat_lap_time,
            self._stat_par_laps,
            self._stat_par_ratio,
        )

    def _check_array(self, name: str, arr, dtype, shape: tuple[int, ...]) -> None:
        if not isinstance(arr, wp.array):
            raise TypeError(f"{name} must be a wp.array, got {type(arr).__name__}")
        if arr.dtype != dtype:
            raise TypeError(f"{name} must have dtype {dtype.__name__}, got {arr.dtype.__name__}")
        if tuple(arr.shape) != shape:
            raise ValueError(f"{name} must have shape {shape}, got {tuple(arr.shape)}")
        if arr.device != self.device:
            raise ValueError(f"{name} is on {arr.device}, the env on {self.device}")
        if not arr.is_contiguous:
            raise ValueError(f"{name} must be contiguous")
