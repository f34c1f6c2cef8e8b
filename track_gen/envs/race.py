"""``RaceEnv``: a batched kinematic car racing on a :class:`~track_gen.course.Course` track.

One car per env drives laps of its own generated course. Everything of a step runs as Warp
kernels on the course's device; the adapters (:mod:`track_gen.envs.gym`,
:mod:`track_gen.envs.rsl_rl`) only copy actions in and views out. The machinery every env
shares (observation terms, auto-reset, curriculum, capture, statistics) is
:class:`~track_gen.envs.base.BatchedEnv`'s; this module is the car.

A step, in order (:meth:`RaceEnv.step`):

1. ``drive``: a kinematic bicycle (rear-axle reference) moves each car by ``dt``. Each action
   component is clamped to [-1, 1]; a NaN or infinite one is read as 0 (the env cannot check
   device actions on the host without a sync, so every adapter follows the same rule).
2. ``course.step()``: checkpoints and laps (``progress``), the band collision (``oob``,
   clearance), the localizer (arc length ``s``, lateral offset, closest segment) and the
   observed sensors.
3. the state writer (the ``state`` columns and the usable flags), then every observed sensor
   term's writer; then the episode kernel: reward, done mask and bookkeeping, gated on the
   usable flag with selects.
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

Observation (float32 ``[E, obs_dim]``): the terms of ``config.observations`` in order: the
``state`` term (the default) and any registered sensor term (``"lidar"``, ``"lookahead"``,
``"cones"``, ``"raster"``: :mod:`track_gen.tools.terms`; each term's module documents its
columns; every column finite, 0 for an invalid env). The ``state`` term
(``config.state_dim = 8 + 2 * len(lookahead)``, plus 2 with ``racing_line="observe"``), per
column: speed / max_speed; steering angle / max_steer; lateral offset ``n`` from the
centerline (track units, left positive); sin and cos of the heading error (car yaw minus the
closest segment's direction); band clearance (track units, negative off the road); distance
to the next checkpoint (track units); lap fraction ``s / length`` in ``[0, 1)``; then for
each look-ahead distance ``d`` the centerline point at arc length ``s + d``, in the car frame
(x forward, y left, track units); then, with ``racing_line="observe"``, the racing line at
the car's arc ``s`` (:meth:`~track_gen.tools.RacingLineUtility.sample`): its offset relative
to the car (the line's lateral offset minus ``n``, track units, positive: the line lies to
the car's left) and its target speed / max_speed (0 where the course has no line). An invalid
env (no usable course, or a non-finite car state) observes all zeros (the cos column 1), gets
reward 0 and is done.

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

import numpy as np
import warp as wp

from .. import tools
from ..core.budget import AllocationBudget
from ..core.checks import check_bool, check_int
from ..core.units import METRES
from ..course import Course
from ..pipeline import PipelineSpec, presets
from ..seeds import PerEnvSeededRNG
from . import vehicles
from .base import (
    BatchedEnv,
    DeviceArrays,
    EnvStats,
    array,
    curriculum_settings,
    device_of,
    env_seeds,
)
from .episode import SIGNAL_LAP_TIME, SIGNAL_NONE, SIGNAL_SUCCESS, RaceDone
from .race_config import CIRCUIT, ENV_BUDGET_HINT, RaceConfig, check_capacities
from .race_kernels import (
    _drive_kernel,
    _episode_kernel,
    _respawn_kernel,
    _single_track_kernel,
    _state_kernel,
)

__all__ = ["CarState", "RaceConfig", "RaceDone", "RaceEnv", "RaceStats"]

#: What :meth:`RaceEnv.stats` returns (the statistics every env keeps).
RaceStats = EnvStats

#: What the episode kernel writes into ``curriculum_signal`` for each score rule.
_SIGNAL_MODE = {
    "value_loss": SIGNAL_NONE,
    "learnability": SIGNAL_SUCCESS,
    "regret": SIGNAL_LAP_TIME,
}


@dataclasses.dataclass
class CarState(DeviceArrays):
    """The cars (``E`` envs).

    Lengths in the config's unit (track units, or metres with ``RaceConfig(unit="m")``).

    Attributes:
        position: vec3f ``[E]``: the reference point's position: the rear axle of the
            kinematic car, the centre of gravity of the single-track car.
        orientation: quatf ``[E]``: world from body (the yaw about +z).
        half_extents: vec2f ``[E]``: the car box's (half length, half width).
        yaw: float32 ``[E]``: rad. speed: float32 ``[E]``: length / s, forward (the body
            frame's ``vx``; no reverse).
        steer: float32 ``[E]``: the front-wheel angle, rad.
        lateral_speed: float32 ``[E]``: length / s, the body frame's ``vy`` (left +) of the
            single-track car; 0 for the kinematic car.
        yaw_rate: float32 ``[E]``: rad / s (left +) of the single-track car; 0 for the
            kinematic car.
        actions: float32 ``[E, 2]``: throttle (brake below 0) and steering command, each
            clamped to [-1, 1] by the drive kernel; a NaN or infinite component is read as 0.
    """

    position: wp.array = array(wp.vec3f)
    orientation: wp.array = array(wp.quatf, fill=wp.quat_identity())
    half_extents: wp.array = array(wp.vec2f)
    yaw: wp.array = array(wp.float32)
    speed: wp.array = array(wp.float32)
    steer: wp.array = array(wp.float32)
    lateral_speed: wp.array = array(wp.float32)
    yaw_rate: wp.array = array(wp.float32)
    actions: wp.array = array(wp.float32, "E,D")


def racing_line_for(config: RaceConfig) -> tools.RacingLine:
    """The ``tools.RacingLine`` a :class:`RaceEnv` with ``config`` adds to its course: the
    car's limits (``config.car``: the track-unit car's fields, or the vehicle's with
    ``unit="m"``) as the point-mass limits of the speed profile (``vehicle_width = 2 *
    half_extents[1]``, ``a_lat = max_lateral_accel`` (``mu * g`` for a vehicle), ``a_lon =
    max_accel`` for traction and braking, ``v_max = max_speed``), the planner's default
    iteration counts and no curvature bound (``kappa_max = None``)."""
    car = config.car
    return tools.RacingLine(
        2.0 * car.half_extents[1],
        a_lat=car.max_lateral_accel,
        a_lon=car.max_accel,
        v_max=car.max_speed,
    )


def _track_spec(spec, E: int, device, config: RaceConfig):
    """``(spec, device)``: ``presets.track`` with ``config.generator`` (``presets.circuit``
    for ``"circuit"``) when ``spec`` is None, else the checked track spec of ``E`` envs, in
    the config's unit, and its device."""
    if spec is None:
        dev = device_of(device)
        if config.generator == CIRCUIT:
            return presets.circuit(E, device=str(dev)), dev
        return presets.track(num_envs=E, device=str(dev), generator=config.generator), dev
    if not isinstance(spec, PipelineSpec) or spec.family != "track":
        raise TypeError(
            f"spec must be a track PipelineSpec (presets.track(...), io.tracks_spec(...)) or "
            f"None, got {type(spec).__name__}"
        )
    if spec.config.num_envs != E:
        raise ValueError(
            f"spec is built for num_envs = {spec.config.num_envs}, the env has {E}: build "
            "the spec with the same num_envs"
        )
    dev = wp.get_device(spec.config.device)
    if device is not None and device_of(device) != dev:
        raise ValueError(f"device = {device!r} but spec is on {dev}: pass device=None with a spec")
    unit = spec.config.unit
    if unit != config.unit:
        fix = (
            "build the config in metres, RaceConfig.for_vehicle('gt') (a car in SI units), or "
            "drive a track-unit spec"
            if unit == METRES
            else "pass a spec in metres (presets.circuit, io.tracks_spec(..., units='metres')) "
            "or a track-unit config"
        )
        raise ValueError(
            f"spec is in {unit!r} and config.unit = {config.unit!r}: a car drives courses in "
            f"its own unit: {fix}"
        )
    return spec, dev


class RaceEnv(BatchedEnv):
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
            collision, localizer, the observed sensors).
        car: the :class:`CarState`; its arrays by name too: ``actions`` (float32 ``[E, 2]``),
            ``position``, ``orientation``, ``half_extents``, ``yaw``, ``speed``, ``steer``.
        outputs: the :class:`~track_gen.envs.base.StepOutputs`; by name: ``obs``,
            ``final_obs`` (float32 ``[E, D]``), ``reward``, ``done``, ``time_out``,
            ``done_reason`` (:class:`RaceDone` flags).
        episode: the :class:`~track_gen.envs.base.EpisodeState`; by name:
            ``episode_length``, ``episode_progress``, ``final_progress`` (laps),
            ``final_lap_time`` (s, the episode's last timed lap as of the last step, NaN
            before one completes).
        racing_line: the course's :class:`~track_gen.tools.RacingLineResult` (per-env
            ``lap_time``, the par, and per-bead offset and speed), or None without a racing
            line (``config.plans_racing_line`` False).
        observed: the observed terms (``config.observations``, e.g. ``("state", "lidar")``).
        term_dims: ``{term: columns}``; sensor_dims: the same for the sensor terms.
        sensors: ``{term: result}`` of the observed sensors (``tools.LidarResult``, ...: the
            arrays the observation's columns are read from, as of the last step).
        curriculum: the :class:`~track_gen.curriculum.LevelReplay` on :attr:`course` (None
            without ``curriculum=``). Each step, after the episode kernel and before the
            auto-reset, the env calls ``curriculum.update(done, curriculum_signal)`` (every
            step, done or not: the staleness counts steps), and the auto-reset calls
            ``curriculum.regenerate(done)`` in place of ``course.regenerate(mask=done,
            advance=True)``.
        curriculum_signal: float32 ``[E]`` (None without a curriculum), read where done:
            with ``score="learnability"`` the episode kernel writes 1.0 where the episode
            ended with ``max_laps`` laps completed, else 0.0; with ``"regret"`` the episode's
            last timed lap (s, :attr:`final_lap_time`), ``+inf`` when no lap was timed; with
            ``"value_loss"`` the env never writes it: the training loop writes each env's
            positive value loss estimate there before the step (NaN until then: unscored).

    Every public array above is allocated once and read by pointer: rebinding one
    (``env.curriculum_signal = other``) raises AttributeError; write into it instead
    (``env.curriculum_signal.assign(values)``, ``wp.copy``).
    """

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
        config = RaceConfig() if config is None else config
        if not isinstance(config, RaceConfig):
            raise TypeError(f"config must be a RaceConfig, got {type(config).__name__}")
        new_course = check_bool("new_course_on_reset", new_course_on_reset)
        captured = check_bool("captured", captured)
        seed_values = env_seeds(seeds, E)
        kw = curriculum_settings(curriculum, new_course, config.plans_racing_line)
        spec, dev = _track_spec(spec, E, device, config)
        check_capacities(config, spec.config, "config")

        self.config, self.num_envs = config, E
        self.car_limits = car = config.car
        self._init_terms(config, 1.0 / car.max_speed, config.state_dim)
        self.sensor_dims = {n: d for n, d in self.term_dims.items() if n != self.STATE_TERM}
        extra = [tools.Localizer(warm_window=8)]
        if config.plans_racing_line:
            extra.append(racing_line_for(config))
        extra.extend(self.term_components())
        budget = AllocationBudget(dev, ENV_BUDGET_HINT, owner="this env's")
        self.course = Course.track(
            spec,
            checkpoint_spacing=config.checkpoint_spacing,
            collision="segments",
            extra=extra,
            seeds=PerEnvSeededRNG(
                budget.array(seed_values, wp.int32, "the env seeds"), num_envs=E, device=dev
            ),
        )
        self.device = self.course.device
        self.n_max = self.course.generator.layout.N_max

        self.car = CarState.allocate(budget, E, 2)
        self.car.half_extents.fill_(wp.vec2f(*car.half_extents))
        for f in dataclasses.fields(CarState):
            setattr(self, f.name, getattr(self.car, f.name))
        self.course.bind(
            position=self.position, orientation=self.orientation, half_extents=self.half_extents
        )
        self._lookahead = budget.array(
            np.asarray(config.lookahead, np.float32), wp.float32, "lookahead distances"
        )
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
        # a step without a done env skips the auto-reset pass on the CPU, unless a sensor draws
        # noise: that pass steps the course again (new draws), as a recorded step always does
        guard = self.device.is_cpu and not self.stochastic_terms()
        mode = SIGNAL_NONE if kw is None else _SIGNAL_MODE[kw.get("score", "value_loss")]
        self._init_state(budget, new_course, kw, mode, guard)
        self._finish_init(captured)

    def par_percent(self) -> np.ndarray:
        """float64 ``[E]``: each env's last timed lap as a percentage of its course's par,
        ``100 * final_lap_time / racing_line.lap_time`` (NaN before a lap is timed, or
        without a racing line). Reads device memory: call it between rollouts."""
        lap = self.final_lap_time.numpy().astype(np.float64)
        par = self._par_time.numpy().astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = 100.0 * lap / par
        return np.where(np.isfinite(out) & (par > 0), out, np.nan)

    # ------------------------------------------------------------------ the car
    def _act(self) -> None:
        c, car = self.config, self.car_limits
        if c.dynamics == "single_track":
            self._drive_single_track()
            return
        wp.launch(
            _drive_kernel,
            self.num_envs,
            inputs=[
                self.actions,
                c.dt,
                car.wheelbase,
                car.max_speed,
                car.max_accel,
                car.max_steer,
                car.max_steer_rate,
                car.max_lateral_accel,
                self.position,
                self.yaw,
                self.speed,
                self.steer,
            ],
            outputs=[self.orientation],
            device=self.device,
        )

    def _drive_single_track(self) -> None:
        v, car = self.config.vehicle, self.car_limits
        wb = v.lf + v.lr
        weight = v.mass * vehicles.GRAVITY
        load_front, load_rear = weight * v.lr / wb, weight * v.lf / wb
        wp.launch(
            _single_track_kernel,
            self.num_envs,
            inputs=[
                self.actions,
                self.config.dt,
                car.substeps,
                v.mass,
                v.yaw_inertia,
                v.lf,
                v.lr,
                v.mu * v.cornering_front * load_front,
                v.mu * v.cornering_rear * load_rear,
                v.mu * load_front,
                v.mu * load_rear,
                min(v.max_accel * v.mass, v.mu * weight),
                v.max_speed,
                v.max_steer,
                v.max_steer_rate,
                v.drag,
                vehicles.BLEND_LO * v.max_speed,
                vehicles.BLEND_HI * v.max_speed,
                self.position,
                self.yaw,
                self.speed,
                self.lateral_speed,
                self.yaw_rate,
                self.steer,
            ],
            outputs=[self.orientation],
            device=self.device,
        )

    def _write_state(self, res, mask: wp.array, masked_only: int, write_final: int) -> None:
        c, car, r, frame = self.config, self.car_limits, self.course.result, res.frame
        if self._observe_line:
            self.course.racing_line.sample(frame.s, self._line_offset, self._line_speed)
        wp.launch(
            _state_kernel,
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
                self._lookahead,
                self._line_offset,
                self._line_speed,
                self.position,
                self.yaw,
                self.speed,
                self.steer,
                self.lateral_speed,
                self.yaw_rate,
                self.n_max,
                car.max_speed,
                car.max_steer,
                1.0 / car.length_scale,
                int(self._observe_line),
                int(c.dynamics == "single_track"),
                car.max_speed / car.max_lateral_accel,
                masked_only,
                write_final,
            ],
            outputs=[self._state_obs, self._state_final, self.outputs.ok, self.episode.s_prev],
            device=self.device,
        )

    def _close_step(self, res) -> None:
        c, ev, out = self.config, res.events, self.outputs
        wp.launch(
            _episode_kernel,
            self.num_envs,
            inputs=[
                out.ok,
                res.contacts.oob,
                ev.passed,
                ev.laps,
                ev.next_index,
                res.frame.s,
                self.course.result.length,
                self._par_time,
                self._episode_rules,
                c.reward_progress,
                c.reward_checkpoint,
                c.penalty_oob,
                c.reward_par,
            ],
            outputs=[self._episode_arrays],
            device=self.device,
        )

    def _respawn(self, mask: wp.array) -> None:
        """The masked cars at rest behind the start line of their current course."""
        r, ep = self.course.result, self.episode
        wp.launch(
            _respawn_kernel,
            self.num_envs,
            inputs=[mask, r.center, r.tangent, r.count, self.n_max, self.config.spawn_back],
            outputs=[
                self.position,
                self.yaw,
                self.speed,
                self.steer,
                self.lateral_speed,
                self.yaw_rate,
                self.orientation,
                ep.length,
                ep.progress,
                ep.lap_mark,
                ep.lap_last,
            ],
            device=self.device,
        )
