"""``CarRaceEnv``: a batched car-racing environment on a track_gen course, stepped entirely on
the device (auto-reset included) and recordable into one graph."""

from __future__ import annotations

import math
from typing import NamedTuple

import warp as wp

from track_gen import tools
from track_gen.course import Course
from track_gen.pipeline import presets

from .kernels import OBS_DIM, bicycle_step, observe_reward_done, respawn_cars

__all__ = ["CarRaceEnv", "EnvStep"]


class EnvStep(NamedTuple):
    """What :meth:`CarRaceEnv.step` returns: the env's own stable arrays (the same objects on
    every call, overwritten by the next step; copy what you keep)."""

    obs: wp.array
    reward: wp.array
    done: wp.array
    time_out: wp.array


def _positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return float(value)


def _count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


class CarRaceEnv:
    """``E`` kinematic cars, one per env, each racing laps on its own generated track.

    ``CarRaceEnv(num_envs, device=None, seed=0, *, ...)`` builds a track course
    (checkpoints, progress, a segment band collision and a warm-window localizer), allocates
    every buffer once, binds the car's pose to the course once and spawns every car behind
    its start line. After construction nothing allocates and nothing reads back to the host:

    * :meth:`step` moves the cars (kinematic bicycle), steps the course, computes reward,
      observation and done mask in ONE kernel gated on ``valid``, then auto-resets on
      device: ``course.regenerate(mask=done, advance=True)`` gives every done env a NEW
      course, and a respawn kernel puts those cars behind its start line.
    * :meth:`reset` respawns the masked envs on their SAME course (``course.reset(mask)``).
    * :meth:`capture` records :meth:`step` once (``wp.ScopedCapture``, cpu or cuda); later
      steps copy the actions into :attr:`actions` and replay it (``wp.capture_launch``).

    For a done env, ``obs`` and ``reward`` of that step describe the episode that ended (its
    final observation, read BEFORE the regeneration); the car already stands on its new
    course, and the next step observes it there.

    Args:
        num_envs: E, number of envs (cars and courses).
        device: Warp device (None: the default device).
        seed: course seed (``Course.track(..., seeds=seed)``): same seed, same courses.
        dt: step, seconds. wheelbase: track units. max_speed: track units / s (no reverse).
        max_accel: track units / s^2 at full throttle. max_steer: rad. max_steer_rate: rad/s.
        half_extents: the car's (half length, half width), track units (the band's road is
            0.1 wide each side of the centerline at the default preset).
        spawn_back: how far behind the start line a car respawns, track units.
        max_laps: laps that finish an episode. max_episode_steps: steps that time it out.
        checkpoint_spacing: arc length between checkpoints, track units.
        reward_checkpoint: reward per checkpoint passed. reward_speed: reward per track unit
            driven along the centerline (``speed * cos(heading error) * dt``).
        penalty_oob: subtracted on the step the car leaves the road (which ends the episode).
        generator: the track sampler (``presets.track(generator=...)``).
        captured: record the step at construction (:meth:`capture`).

    Attributes (device arrays, allocated once; ``E`` = ``num_envs``):
        course: the :class:`~track_gen.course.Course` (its result, inputs and step results).
        actions: float32 ``[E, 2]``: ``[:, 0]`` throttle in [-1, 1], ``[:, 1]`` steering
            command in [-1, 1] (non-finite read as 0). The buffer a captured step reads.
        position: vec3f ``[E]``: rear-axle position, track units (bound to the course).
        orientation: quatf ``[E]``: yaw about +z (bound to the course).
        half_extents: vec2f ``[E]``: the car's box, track units (bound to the course).
        yaw: float32 ``[E]``: heading, rad, in [-pi, pi).
        speed: float32 ``[E]``: track units / s, in [0, max_speed].
        steer: float32 ``[E]``: front-wheel angle, rad, in [-max_steer, max_steer].
        obs: float32 ``[E, OBS_DIM]`` (``OBS_DIM = 8``): per column, speed / max_speed,
            steer / max_steer, lateral offset n (track units, left +), sin and cos of the
            heading error (car yaw minus the closest segment's yaw), band clearance (track
            units, < 0 off road), distance to the next checkpoint (track units), lap
            fraction s / length. All 0 (cos column 1) for an invalid env.
        reward: float32 ``[E]``: 0 for an invalid env.
        done: int32 ``[E]``: 1 where the episode ended this step (the regeneration mask).
        time_out: int32 ``[E]``: 1 where it ended by ``max_episode_steps`` alone (truncated).
        done_reason: int32 ``[E]``: :class:`~kernels.DoneBit` flags, 0 when not done.
        episode_length: int32 ``[E]``: steps since the env's last (re)spawn.
        graph: the recorded step (after :meth:`capture`), else None.
    """

    def __init__(
        self,
        num_envs: int,
        device=None,
        seed: int = 0,
        *,
        dt: float = 0.05,
        wheelbase: float = 0.03,
        max_speed: float = 1.0,
        max_accel: float = 2.0,
        max_steer: float = 0.5,
        max_steer_rate: float = 4.0,
        half_extents: tuple[float, float] = (0.02, 0.01),
        spawn_back: float = 0.03,
        max_laps: int = 1,
        max_episode_steps: int = 200,
        checkpoint_spacing: float = 0.6,
        reward_checkpoint: float = 1.0,
        reward_speed: float = 1.0,
        penalty_oob: float = 5.0,
        generator: str = "bezier",
        captured: bool = False,
    ):
        E = _count("num_envs", num_envs)
        self.dt = _positive("dt", dt)
        self.wheelbase = _positive("wheelbase", wheelbase)
        self.max_speed = _positive("max_speed", max_speed)
        self.max_accel = _positive("max_accel", max_accel)
        self.max_steer = _positive("max_steer", max_steer)
        if self.max_steer >= 0.5 * math.pi:
            raise ValueError(f"max_steer must be < pi/2, got {max_steer!r}")
        self.max_steer_rate = _positive("max_steer_rate", max_steer_rate)
        hx, hy = (_positive("half_extents[i]", v) for v in half_extents)
        self.spawn_back = _positive("spawn_back", spawn_back)
        self.max_laps = _count("max_laps", max_laps)
        self.max_episode_steps = _count("max_episode_steps", max_episode_steps)
        weights = (reward_checkpoint, reward_speed, penalty_oob)
        for name, w in zip(
            ("reward_checkpoint", "reward_speed", "penalty_oob"), weights, strict=True
        ):
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w):
                raise TypeError(f"{name} must be a finite number, got {w!r}")
        self.reward_weights = tuple(float(w) for w in weights)

        self.num_envs = E
        self.course = Course.track(
            presets.track(num_envs=E, device=device, generator=generator),
            checkpoint_spacing=checkpoint_spacing,
            collision="segments",
            extra=[tools.Localizer(warm_window=8)],
            seeds=seed,
        )
        self.device = self.course.device
        self.n_max = self.course.generator.layout.N_max
        dev = self.device

        # car state, bound to the course once
        self.position = wp.zeros(E, dtype=wp.vec3f, device=dev)
        self.orientation = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=dev)
        self.half_extents = wp.full(E, wp.vec2f(hx, hy), dtype=wp.vec2f, device=dev)
        self.yaw = wp.zeros(E, dtype=wp.float32, device=dev)
        self.speed = wp.zeros(E, dtype=wp.float32, device=dev)
        self.steer = wp.zeros(E, dtype=wp.float32, device=dev)
        self.course.bind(
            position=self.position, orientation=self.orientation, half_extents=self.half_extents
        )
        # policy interface and episode bookkeeping
        self.actions = wp.zeros((E, 2), dtype=wp.float32, device=dev)
        self.obs = wp.zeros((E, OBS_DIM), dtype=wp.float32, device=dev)
        self.reward = wp.zeros(E, dtype=wp.float32, device=dev)
        self.done = wp.zeros(E, dtype=wp.int32, device=dev)
        self.time_out = wp.zeros(E, dtype=wp.int32, device=dev)
        self.done_reason = wp.zeros(E, dtype=wp.int32, device=dev)
        self.episode_length = wp.zeros(E, dtype=wp.int32, device=dev)
        self._everyone = wp.ones(E, dtype=wp.int32, device=dev)
        self._out = EnvStep(self.obs, self.reward, self.done, self.time_out)
        self.graph = None

        self._respawn(self._everyone)
        if captured:
            self.capture()

    # ------------------------------------------------------------------ checks
    def _check_array(self, name: str, arr, dtype, shape: tuple[int, ...]) -> None:
        """Host-side metadata checks only (no device sync): TypeError for a wrong kind or
        dtype, ValueError for a wrong shape, device or layout."""
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

    # ------------------------------------------------------------------ stages
    def _move_cars(self) -> None:
        wp.launch(
            bicycle_step,
            self.num_envs,
            inputs=[
                self.actions,
                self.dt,
                self.wheelbase,
                self.max_speed,
                self.max_accel,
                self.max_steer,
                self.max_steer_rate,
                self.position,
                self.yaw,
                self.speed,
                self.steer,
            ],
            outputs=[self.orientation],
            device=self.device,
        )

    def _observe(self, res) -> None:
        ev, frame = res.events, res.frame
        wp.launch(
            observe_reward_done,
            self.num_envs,
            inputs=[
                res.valid,
                res.contacts.oob,
                res.contacts.distance,
                ev.passed,
                ev.laps,
                ev.dist_to_next,
                frame.n,
                frame.s,
                frame.tangent,
                self.course.result.length,
                self.yaw,
                self.speed,
                self.steer,
                self.dt,
                self.max_speed,
                self.max_steer,
                self.max_laps,
                self.max_episode_steps,
                *self.reward_weights,
                self.episode_length,
            ],
            outputs=[self.obs, self.reward, self.done, self.time_out, self.done_reason],
            device=self.device,
        )

    def _respawn(self, mask: wp.array) -> None:
        r = self.course.result
        wp.launch(
            respawn_cars,
            self.num_envs,
            inputs=[mask, r.center, r.tangent, r.count, self.n_max, self.spawn_back],
            outputs=[
                self.position,
                self.yaw,
                self.speed,
                self.steer,
                self.orientation,
                self.episode_length,
            ],
            device=self.device,
        )

    def _auto_reset(self) -> None:
        # NEW courses for the done envs (their progress and localizer memory reset too);
        # an all-zero mask is an exact no-op (skipped on device in a CUDA >= 12.4 capture)
        self.course.regenerate(mask=self.done, advance=True)
        self._respawn(self.done)

    def _simulate(self) -> None:
        """One RL step, every stage on device: the body :meth:`capture` records."""
        self._move_cars()
        res = self.course.step()
        self._observe(res)
        self._auto_reset()

    # ------------------------------------------------------------------ public API
    def step(self, actions: wp.array | None = None) -> EnvStep:
        """Advance every env one step and auto-reset the done ones (on device).

        ``actions``: float32 ``[E, 2]`` on the env's device, copied into :attr:`actions`
        (None, or :attr:`actions` itself: use what it holds). Returns :class:`EnvStep`
        (the env's stable ``obs``, ``reward``, ``done``, ``time_out`` arrays).
        """
        if actions is not None and actions is not self.actions:
            self._check_array("actions", actions, wp.float32, (self.num_envs, 2))
            wp.copy(self.actions, actions)
        if self.graph is not None:
            wp.capture_launch(self.graph)
        else:
            self._simulate()
        return self._out

    def reset(self, mask: wp.array | None = None) -> None:
        """Respawn the envs with ``mask[e] != 0`` (None: every env) on their SAME course:
        progress and localizer memory reset, car at rest behind its start line, episode
        counter 0. Every other env is left bitwise unchanged.

        ``mask``: a contiguous int32 ``[E]`` wp.array on the env's device (TypeError for a
        wrong kind or dtype, ValueError for a wrong shape or device; nothing changes then).
        The mask is read on device: no host sync.
        """
        if mask is None:
            self.course.reset()
            self._respawn(self._everyone)
            return
        self._check_array("mask", mask, wp.int32, (self.num_envs,))
        self.course.reset(mask)
        self._respawn(mask)

    def capture(self):
        """Record one :meth:`step` (without the action copy) into a ``wp.ScopedCapture`` on
        the env's device, once; every later :meth:`step` replays it. Returns the graph.

        Recording runs nothing, so the state is unchanged by this call. Scalars (dt, limits,
        weights) are frozen into the graph; everything that changes lives in the env's
        arrays. Call it outside any other capture.
        """
        if self.graph is None:
            with wp.ScopedCapture(device=self.device) as cap:
                self._simulate()
            self.graph = cap.graph
        return self.graph
