"""``DroneRaceEnv``: batched quadrotors racing gate courses in metres.

One quadrotor per env flies laps of its own generated gate course (``Course.gates``: gate
checkpoints, the course line through the gate centres, the gate frames or posts, the
localizer, the observed sensors and, with ``par``, the minimum-time par). Everything of a step
runs as Warp kernels on the course's device; the machinery every env shares (observation
terms, masked auto-reset with regeneration, the curriculum hook, capture, statistics) is
:class:`~track_gen.envs.base.BatchedEnv`'s, the adapters :mod:`track_gen.envs.gym`
(``DroneVectorEnv``) and :mod:`track_gen.envs.rsl_rl` (``RslRlEnv``) take it as any env.

A step, in order: the dynamics (``drone_kernels``: collective thrust and body rates as
actions, first-order lags, linear drag, gravity; ``substeps`` per step), ``course.step()``
(gate passes, laps, gate contacts, the localizer, the sensors), the state writer and the
observed terms, the episode kernel (crashes: a gate frame or post, the ground, the bounding
volume; the reward; done flags), then the masked auto-reset of the done envs. The drone
respawns hovering ``spawn_back`` behind gate 0.

Actions (float32 ``[E, 4]``, each clamped to [-1, 1], a non-finite one read as 0): collective
thrust (0 hovers, +1 ``thrust_max``, -1 ``thrust_min``), then roll, pitch and yaw rate
(times ``max_rate``). ``docs/drone-racing.md`` documents the dynamics, the presets, the
observation columns and the reward.
"""

from __future__ import annotations

import dataclasses
import enum
import math

import warp as wp

from .. import tools
from ..core.budget import AllocationBudget
from ..core.checks import check_bool, check_int
from ..course import Course
from ..pipeline import PipelineSpec
from ..seeds import PerEnvSeededRNG
from .base import (
    BatchedEnv,
    DeviceArrays,
    array,
    curriculum_settings,
    device_of,
    env_seeds,
)
from .drone_config import (
    DRONE_PRESETS,
    ENV_BUDGET_HINT,
    DroneConfig,
    drone_config,
    drone_gates_spec,
)
from .drone_kernels import (
    CRASH_BOUNDS,
    CRASH_GATE,
    CRASH_GROUND,
    STATE_DIM,
    _episode_kernel,
    _fly_kernel,
    _respawn_kernel,
    _state_kernel,
)
from .episode import SIGNAL_LAP_TIME, SIGNAL_NONE, SIGNAL_SUCCESS

__all__ = [
    "DRONE_PRESETS",
    "DroneConfig",
    "DroneCrash",
    "DroneRaceEnv",
    "DroneState",
    "drone_config",
    "drone_gates_spec",
    "fly_drones",
]

_SIGNAL_MODE = {
    "value_loss": SIGNAL_NONE,
    "learnability": SIGNAL_SUCCESS,
    "regret": SIGNAL_LAP_TIME,
}
#: Columns of the ``state`` term.
DRONE_STATE_DIM = STATE_DIM


class DroneCrash(enum.IntFlag):
    """Why a drone crashed on the last step (``env.crash[e]``; 0: no crash)."""

    GATE = CRASH_GATE  #: a gate frame member (or post) touched
    GROUND = CRASH_GROUND  #: the drone's sphere below the ground (z < radius)
    BOUNDS = CRASH_BOUNDS  #: beside or above the env's bounding volume


@dataclasses.dataclass
class DroneState(DeviceArrays):
    """The drones (``E`` envs).

    Attributes:
        position: vec3f ``[E]``: m. velocity: vec3f ``[E]``: m/s, world frame.
        orientation: quatf ``[E]``: world from body (x forward, y left, z up: the thrust).
        rates: vec3f ``[E]``: body rates (roll, pitch, yaw), rad/s.
        thrust: float32 ``[E]``: collective thrust per unit mass, m/s^2 (the lagged one).
        half_extents: vec2f ``[E]``: the drone's square in plan view (posts), m.
        bounds_lo, bounds_hi: vec3f ``[E]``: the env's bounding volume, m (set at respawn).
        crash: int32 ``[E]``: :class:`DroneCrash` bits of the last step.
        final_gates: int32 ``[E]``: gates passed in the episode as of the last step (a done
            env: its ended episode's).
        actions: float32 ``[E, 4]``: thrust, roll rate, pitch rate, yaw rate commands.
        target: int32 ``[E]``: the gate targeted after the last step (the course's next
            gate; -1: none) and target_distance: float32 ``[E]``: the drone's distance to its
            centre then, m (NaN: none): ``progress_reward="gate"``'s reference.
    """

    position: wp.array = array(wp.vec3f)
    velocity: wp.array = array(wp.vec3f)
    orientation: wp.array = array(wp.quatf, fill=wp.quat_identity())
    rates: wp.array = array(wp.vec3f)
    thrust: wp.array = array(wp.float32)
    half_extents: wp.array = array(wp.vec2f)
    bounds_lo: wp.array = array(wp.vec3f)
    bounds_hi: wp.array = array(wp.vec3f)
    crash: wp.array = array(wp.int32)
    final_gates: wp.array = array(wp.int32)
    actions: wp.array = array(wp.float32, "E,D")
    target: wp.array = array(wp.int32)
    target_distance: wp.array = array(wp.float32)


def _gates_spec(spec, E: int, device, config: DroneConfig):
    """``(spec, device)``: :func:`drone_gates_spec` of ``config`` when ``spec`` is None, else
    the checked gates spec (metres, ``E`` envs) and its device."""
    if spec is None:
        dev = device_of(device)
        return drone_gates_spec(config, E, str(dev)), dev
    if not isinstance(spec, PipelineSpec) or spec.family != "gates":
        raise TypeError(
            "spec must be a gates PipelineSpec (drone_gates_spec(...), io.gates_spec(...)) or "
            f"None, got {type(spec).__name__}"
        )
    if spec.config.num_envs != E:
        raise ValueError(
            f"spec is built for num_envs = {spec.config.num_envs}, the env has {E}: build "
            "the spec with the same num_envs"
        )
    if spec.config.unit != "m":
        raise ValueError(
            f"spec's courses are in {spec.config.unit!r}, the drone flies in metres: build it "
            "with unit='m' (io.gates_spec(paths, ..., unit='m'))"
        )
    dev = wp.get_device(spec.config.device)
    if device is not None and device_of(device) != dev:
        raise ValueError(f"device = {device!r} but spec is on {dev}: pass device=None with a spec")
    return spec, dev


def _lag_gain(h: float, tau: float) -> float:
    """``1 - exp(-h / tau)`` in float64: a held command's share reached after ``h``."""
    return -math.expm1(-h / tau)


def _launch_fly(config, actions, position, velocity, orientation, rates, thrust) -> None:
    h = config.dt / config.substeps
    wp.launch(
        _fly_kernel,
        actions.shape[0],
        inputs=[
            actions,
            config.substeps,
            h,
            config.gravity,
            config.thrust_min,
            config.thrust_max,
            wp.vec3f(*config.max_rate),
            _lag_gain(h, config.tau_thrust),
            _lag_gain(h, config.tau_rate),
            wp.vec3f(*config.drag),
        ],
        outputs=[position, velocity, orientation, rates, thrust],
        device=actions.device,
    )


def fly_drones(config, actions, position, velocity, orientation, rates, thrust) -> None:
    """One control step (``config.dt``) of the quadrotor dynamics of ``config`` on your own
    arrays, in place (what :class:`DroneRaceEnv` runs first in every step; the dynamics:
    ``drone_kernels``' module docs and ``docs/drone-racing.md``).

    Args:
        config: a :class:`DroneConfig`.
        actions: float32 ``[N, 4]``: thrust, roll, pitch and yaw rate commands in [-1, 1]
            (clamped; non-finite read as 0).
        position: vec3f ``[N]`` (m), velocity: vec3f ``[N]`` (m/s), orientation: quatf
            ``[N]`` (world from body, unit), rates: vec3f ``[N]`` (rad/s), thrust: float32
            ``[N]`` (m/s^2): read and written.

    Every argument is checked first (TypeError / ValueError naming it); allocation-free and
    capturable."""
    if not isinstance(config, DroneConfig):
        raise TypeError(f"config must be a DroneConfig, got {type(config).__name__}")
    if not isinstance(actions, wp.array):
        raise TypeError(f"actions must be a wp.array, got {type(actions).__name__}")
    if actions.dtype != wp.float32 or actions.ndim != 2 or actions.shape[1] != 4:
        raise ValueError(
            f"actions must be float32 [N, 4], got {actions.dtype.__name__} {actions.shape}"
        )
    n, dev = actions.shape[0], actions.device
    named = {"position": (position, wp.vec3f), "velocity": (velocity, wp.vec3f)}
    named.update(orientation=(orientation, wp.quatf), rates=(rates, wp.vec3f))
    named.update(thrust=(thrust, wp.float32))
    for name, (a, dtype) in named.items():
        if not isinstance(a, wp.array):
            raise TypeError(f"{name} must be a wp.array, got {type(a).__name__}")
        if a.dtype != dtype or a.shape != (n,) or not a.is_contiguous:
            raise ValueError(
                f"{name} must be a contiguous {dtype.__name__} [{n}] array (one per action "
                f"row), got {a.dtype.__name__} {a.shape}"
            )
        if a.device != dev:
            raise ValueError(f"{name} is on {a.device}, actions on {dev}: use one device")
    if not actions.is_contiguous:
        raise ValueError("actions must be contiguous")
    _launch_fly(config, actions, position, velocity, orientation, rates, thrust)


class DroneRaceEnv(BatchedEnv):
    """``E`` quadrotors, one per env, each racing its own gate course; see the module docs.

    Args:
        num_envs: E, in [1, 2**20].
        device: Warp device (None: the default device).
        seeds: an int ``s`` (env ``e`` gets seed ``s + e``) or one int32 per env.
        config: a :class:`DroneConfig` (None: the 5-inch racing quad's defaults;
            :func:`drone_config` for a preset).
        new_course_on_reset: True: an ended episode's env gets the next course of its seed
            (masked regeneration); False: it restarts on the same course.
        captured: record :meth:`step` once and replay it.
        spec: None (:func:`drone_gates_spec` of ``config``) or a gates
            :class:`~track_gen.pipeline.PipelineSpec` of ``num_envs`` envs in metres
            (``io.gates_spec(paths, num_envs=E, gate_width=..., unit="m")`` flies the
            published waypoint paths; ``drone_gates_spec(config, E, cpu_threads=2)``).
        curriculum: None or a mapping of ``LevelReplay`` keyword arguments (as
            :class:`~track_gen.envs.RaceEnv`'s; ``score="regret"`` needs ``config.par`` or
            ``reward_par``).

    Every argument is checked before anything is built (TypeError / ValueError naming it).

    Attributes: ``course``, ``drone`` (:class:`DroneState`; its arrays by name too:
    ``actions``, ``position``, ``velocity``, ``orientation``, ``rates``, ``thrust``,
    ``crash``, ``final_gates``, ...), ``par`` (the course's ``MinTimeResult`` or None), and the
    base's (``obs``, ``reward``, ``done``, ``final_obs``, ``final_progress``, ``stats()``, ...).
    """

    def __init__(
        self,
        num_envs: int,
        device=None,
        seeds=0,
        *,
        config: DroneConfig | None = None,
        new_course_on_reset: bool = True,
        captured: bool = False,
        spec=None,
        curriculum=None,
    ):
        E = check_int("num_envs", num_envs, 1, 2**20)
        config = DroneConfig() if config is None else config
        if not isinstance(config, DroneConfig):
            raise TypeError(f"config must be a DroneConfig, got {type(config).__name__}")
        new_course = check_bool("new_course_on_reset", new_course_on_reset)
        captured = check_bool("captured", captured)
        seed_values = env_seeds(seeds, E)
        plans_par = config.par or config.reward_par != 0.0
        kw = curriculum_settings(curriculum, new_course, plans_par)
        spec, dev = _gates_spec(spec, E, device, config)

        self.config, self.num_envs = config, E
        self._init_terms(config, 1.0 / config.max_speed, STATE_DIM)
        self.sensor_dims = {n: d for n, d in self.term_dims.items() if n != self.STATE_TERM}
        if config.gate_collision == "frame":
            collision = tools.FrameCollision(
                config.frame_thickness, config.frame_depth, config.radius
            )
        else:
            collision = 0.5 * config.frame_thickness
        min_time = None
        if plans_par:
            min_time = {
                "t_max": config.thrust_max,
                "v_max": config.par_v_max,
                "gravity": config.gravity,
            }
        budget = AllocationBudget(dev, ENV_BUDGET_HINT, owner="this env's")
        self.course = Course.gates(
            spec,
            collision=collision,
            localize_window=8,
            min_time=min_time,
            extra=self.term_components(),
            seeds=PerEnvSeededRNG(
                budget.array(seed_values, wp.int32, "the env seeds"), num_envs=E, device=dev
            ),
        )
        self.device = self.course.device
        self.max_gates = self.course.result.max_gates

        self.drone = DroneState.allocate(budget, E, 4)
        self.drone.half_extents.fill_(wp.vec2f(config.radius, config.radius))
        for f in dataclasses.fields(DroneState):
            setattr(self, f.name, getattr(self.drone, f.name))
        self.course.bind(
            position=self.position, orientation=self.orientation, half_extents=self.half_extents
        )
        mt = self.course.components.get("min_time")
        self.par = None if mt is None else mt.result
        self._par_time = (
            self.par.time if mt is not None else budget.full(E, wp.nan, wp.float32, "pars")
        )
        guard = self.device.is_cpu and not self.stochastic_terms()
        mode = SIGNAL_NONE if kw is None else _SIGNAL_MODE[kw.get("score", "value_loss")]
        self._init_state(budget, new_course, kw, mode, guard)
        self._finish_init(captured)

    # ------------------------------------------------------------------ the drone
    def _act(self) -> None:
        d = self.drone
        _launch_fly(
            self.config, d.actions, d.position, d.velocity, d.orientation, d.rates, d.thrust
        )

    def _write_state(self, res, mask: wp.array, masked_only: int, write_final: int) -> None:
        c, d = self.config, self.drone
        inv_rate = wp.vec3f(*(1.0 / r for r in c.max_rate))
        wp.launch(
            _state_kernel,
            self.num_envs,
            inputs=[
                mask,
                res.valid,
                res.frame.s,
                self.course.course_line.line.length,
                d.position,
                d.velocity,
                d.orientation,
                d.rates,
                d.thrust,
                d.bounds_hi,
                1.0 / c.max_speed,
                inv_rate,
                1.0 / c.thrust_max,
                masked_only,
                write_final,
            ],
            outputs=[self._state_obs, self._state_final, self.outputs.ok, self.episode.s_prev],
            device=self.device,
        )

    def _close_step(self, res) -> None:
        c, d, ev, out = self.config, self.drone, res.events, self.outputs
        g = self.course.result
        wp.launch(
            _episode_kernel,
            self.num_envs,
            inputs=[
                out.ok,
                res.contacts.hit,
                ev.passed,
                ev.laps,
                ev.progress,
                ev.next_index,
                res.frame.s,
                res.frame.distance,
                self.course.course_line.line.length,
                self._par_time,
                d.position,
                d.velocity,
                d.rates,
                d.bounds_lo,
                d.bounds_hi,
                g.position,
                g.count,
                self._episode_rules,
                self.max_gates,
                1 if c.progress_reward == "gate" else 0,
                c.radius,
                c.progress_tube,
                c.reward_progress,
                c.reward_gate,
                c.penalty_crash,
                c.penalty_rate,
                c.reward_par,
            ],
            outputs=[
                self._episode_arrays,
                d.crash,
                d.final_gates,
                d.target,
                d.target_distance,
            ],
            device=self.device,
        )

    def _respawn(self, mask: wp.array) -> None:
        c, d, g, ep = self.config, self.drone, self.course.result, self.episode
        wp.launch(
            _respawn_kernel,
            self.num_envs,
            inputs=[mask, g.position, g.forward, g.count]
            + [self.max_gates, c.spawn_back, c.bounds_margin, c.gravity],
            outputs=[d.position, d.velocity, d.orientation, d.rates, d.thrust]
            + [d.bounds_lo, d.bounds_hi, ep.length, ep.progress, ep.lap_mark, ep.lap_last]
            + [d.target, d.target_distance],
            device=self.device,
        )
