"""Write an env of your own on ``track_gen.envs.BatchedEnv``: a puck (a point mass) that races
laps of its own generated course in every env.

Run:  python examples/custom_env.py --device cpu --steps 200 --num-envs 16

The base owns what every batched env shares: the observation (your state columns, then any
registered sensor term the config names: a lidar here), the step, the masked auto-reset with
regeneration, capture into a graph, final observations, statistics and the adapters
(gymnasium, rsl_rl). The env is its agent: a config, a state container and four kernels
launched by ``_act``, ``_write_state``, ``_close_step`` and ``_respawn``. The episode kernel
computes the reward and hands the shared bookkeeping to ``envs.episode.close_step`` with two
structs the base built once from the config's ``dt``, ``max_laps`` and ``max_episode_steps``
and the env's arrays: ``self._episode_rules`` (``EpisodeRules``) and ``self._episode_arrays``
(``EpisodeArrays``: reward, done flags, episode state, statistics). The script drives
it eager and recorded with the same line-following actions and checks that both give the
same bytes, that every column is finite, that the state columns match a NumPy oracle and
that done envs got new courses. See docs/training.md ("Your own env").
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import warp as wp

from track_gen import PerEnvSeededRNG, tools
from track_gen.core.budget import AllocationBudget
from track_gen.core.tunable import config_class
from track_gen.course import Course
from track_gen.envs import BatchedEnv
from track_gen.envs.base import (
    DeviceArrays,
    array,
    env_seeds,
    observation_fields,
    observation_namespace,
)
from track_gen.envs.episode import SIGNAL_NONE, EpisodeArrays, EpisodeRules, close_step
from track_gen.pipeline import Tunable, presets

#: The state columns: velocity along and across the track, lateral offset, lap fraction, ok.
STATE_DIM = 5

# ------------------------------------------------------------------------------ the config
MAX_SPEED = Tunable("max_speed", 1.5, lo=1e-6, hi=100.0, unit="track units / s", doc="top speed.")
PUCK_FIELDS = (
    Tunable("dt", 0.05, lo=1e-6, hi=1.0, unit="s", doc="the step."),
    Tunable("max_accel", 3.0, lo=1e-6, hi=1e3, unit="track units / s^2", doc="full thrust."),
    MAX_SPEED,
    Tunable("max_laps", 1, lo=1, hi=100, unit="laps", doc="laps that end an episode."),
    Tunable("max_episode_steps", 400, lo=1, hi=10**6, unit="steps", doc="the time out."),
)
PuckConfig = config_class(
    "PuckConfig",
    [("Puck", "", PUCK_FIELDS), ("Observations", "", observation_fields("the puck's columns"))],
    doc="The puck, its episode and its observation.",
    namespace=observation_namespace(lambda c: STATE_DIM, lambda c: 1.0 / c.max_speed),
    module=__name__,
)


@dataclasses.dataclass
class PuckState(DeviceArrays):
    """position vec3f [E] (track units), velocity vec3f [E] (track units / s), orientation
    quatf [E] (the heading of the velocity, for the sensors), half_extents vec2f [E],
    actions float32 [E, 2] (thrust along the track's tangent and normal, each in [-1, 1])."""

    position: wp.array = array(wp.vec3f)
    velocity: wp.array = array(wp.vec3f)
    orientation: wp.array = array(wp.quatf, fill=wp.quat_identity())
    half_extents: wp.array = array(wp.vec2f, fill=wp.vec2f(0.01, 0.01))
    actions: wp.array = array(wp.float32, "E,D")


# ------------------------------------------------------------------------------ kernels
@wp.kernel
def puck_act_kernel(
    # inputs
    actions: wp.array2d(dtype=wp.float32),
    tangent: wp.array(dtype=wp.vec3f),
    # static
    dt: float,
    max_accel: float,
    max_speed: float,
    # outputs
    position_inout: wp.array(dtype=wp.vec3f),
    velocity_inout: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
):
    """Thrust along the closest segment's tangent and normal, speed capped, one step."""
    e = wp.tid()
    a0 = wp.clamp(wp.where(wp.isfinite(actions[e, 0]), actions[e, 0], 0.0), -1.0, 1.0)
    a1 = wp.clamp(wp.where(wp.isfinite(actions[e, 1]), actions[e, 1], 0.0), -1.0, 1.0)
    t = tangent[e]
    if not (wp.isfinite(t[0]) and wp.isfinite(t[1])):
        t = wp.vec3f(1.0, 0.0, 0.0)
    n = wp.vec3f(-t[1], t[0], 0.0)
    v = velocity_inout[e] + (a0 * t + a1 * n) * (max_accel * dt)
    speed = wp.length(v)
    if speed > max_speed:
        v = v * (max_speed / speed)
    velocity_inout[e] = v
    position_inout[e] = position_inout[e] + v * dt
    yaw = wp.atan2(v[1], v[0])
    orientation_out[e] = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), yaw)


@wp.kernel
def puck_state_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    frame_s: wp.array(dtype=wp.float32),
    frame_n: wp.array(dtype=wp.float32),
    frame_tangent: wp.array(dtype=wp.vec3f),
    length: wp.array(dtype=wp.float32),
    velocity: wp.array(dtype=wp.vec3f),
    # static
    inv_speed: float,
    masked_only: int,
    write_final: int,
    # outputs
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
    ok_out: wp.array(dtype=wp.int32),
    s_prev_out: wp.array(dtype=wp.float32),
):
    """The ONE state writer (a step and a reset): velocity along and across the track over
    the top speed, lateral offset, lap fraction, and 1 (a usable env); zeros and ok 0 for an
    invalid env."""
    e = wp.tid()
    if masked_only != 0 and mask[e] == 0:
        return
    L = length[e]
    s = frame_s[e]
    t = frame_tangent[e]
    v = velocity[e]
    ok = valid[e] != 0 and L > 0.0 and wp.isfinite(s) and wp.isfinite(frame_n[e])
    ok = ok and wp.isfinite(t[0]) and wp.isfinite(v[0]) and wp.isfinite(v[1])
    ok_out[e] = wp.where(ok, 1, 0)
    fin = tools.final_flag(write_final, mask[e])
    cols = wp.vector(
        wp.dot(v, t) * inv_speed,
        (t[0] * v[1] - t[1] * v[0]) * inv_speed,
        frame_n[e],
        s / L,
        1.0,
        dtype=wp.float32,
    )
    for k in range(5):
        tools.put_column(obs_out, final_obs_out, e, k, tools.unit_or_zero(ok, cols[k]), fin)
    if masked_only != 0:
        s_prev_out[e] = wp.where(ok, s, wp.nan)


@wp.kernel
def puck_episode_kernel(
    # inputs
    ok_env: wp.array(dtype=wp.int32),
    oob: wp.array(dtype=wp.int32),
    passed: wp.array(dtype=wp.int32),
    laps: wp.array(dtype=wp.int32),
    next_index: wp.array(dtype=wp.int32),
    frame_s: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    # static: dt, max_laps, max_episode_steps and the curriculum signal's mode
    rules: EpisodeRules,
    # outputs: the episode's arrays (the reward, done flags, statistics, ...)
    episode_inout: EpisodeArrays,
):
    """Reward: the laps gained this step, -1 on leaving the road; the shared bookkeeping."""
    e = wp.tid()
    ok = ok_env[e] != 0
    L = length[e]
    s = frame_s[e]
    ds = float(0.0)
    sp = episode_inout.s_prev[e]
    if ok and wp.isfinite(sp):
        ds = s - sp
        ds = ds - L * wp.floor(ds / L + 0.5)
    episode_inout.s_prev[e] = wp.where(ok, s, sp)
    gained = wp.where(ok, ds / wp.max(L, 1.0e-9), 0.0)
    prog = episode_inout.progress[e] + gained
    episode_inout.progress[e] = prog
    crashed = oob[e] != 0
    episode_inout.reward[e] = wp.where(ok, gained - wp.where(crashed, 1.0, 0.0), 0.0)
    lap_completed = passed[e] != 0 and next_index[e] == 0
    # no par lap time here (NaN, has_par False): laps are timed, no par ratio is summed
    close_step(e, ok, crashed, lap_completed, laps[e], prog, wp.nan, False, rules, episode_inout)


@wp.kernel
def puck_respawn_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    center: wp.array(dtype=wp.vec3f),
    # static
    n_max: int,
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    velocity_out: wp.array(dtype=wp.vec3f),
    episode_length_out: wp.array(dtype=wp.int32),
    progress_out: wp.array(dtype=wp.float32),
    lap_mark_out: wp.array(dtype=wp.int32),
    lap_last_out: wp.array(dtype=wp.float32),
):
    """The masked pucks at rest on bead 0 (the start line); the origin without a course."""
    e = wp.tid()
    if mask[e] == 0:
        return
    c = center[e * n_max]
    ok = wp.isfinite(c[0]) and wp.isfinite(c[1]) and wp.isfinite(c[2])
    position_out[e] = wp.where(ok, c, wp.vec3f(0.0, 0.0, 0.0))
    velocity_out[e] = wp.vec3f(0.0, 0.0, 0.0)
    episode_length_out[e] = 0
    progress_out[e] = 0.0
    lap_mark_out[e] = -1
    lap_last_out[e] = wp.nan


# ------------------------------------------------------------------------------ the env
class PuckEnv(BatchedEnv):
    """``E`` pucks, one per env, each racing its own course (see the module docs)."""

    def __init__(self, num_envs: int, device=None, seeds=0, *, config=None, captured=False):
        self.config = PuckConfig() if config is None else config
        self.num_envs = E = num_envs
        self._init_terms(self.config, 1.0 / self.config.max_speed, STATE_DIM)
        dev = wp.get_device(device)
        budget = AllocationBudget(dev, "lower num_envs", owner="the puck env's")
        seeds_arr = budget.array(env_seeds(seeds, E), wp.int32, "the env seeds")
        self.course = Course.track(
            presets.track(num_envs=E, device=str(dev)),
            checkpoint_spacing=0.6,
            collision="segments",
            extra=[tools.Localizer(warm_window=8), *self.term_components()],
            seeds=PerEnvSeededRNG(seeds_arr, num_envs=E, device=dev),
        )
        # the localizer's answer of the last step (the same arrays every step): the act
        # kernel thrusts along the track's tangent where the puck last was
        self._frame = self.course.components["localizer"].result
        self.device, self.n_max = self.course.device, self.course.generator.layout.N_max
        self.puck = PuckState.allocate(budget, E, 2)
        self.actions, self.position = self.puck.actions, self.puck.position
        self.course.bind(
            position=self.puck.position,
            orientation=self.puck.orientation,
            half_extents=self.puck.half_extents,
        )
        self._init_state(budget, True, None, SIGNAL_NONE, False)
        self._finish_init(captured)

    def _act(self) -> None:
        c, p = self.config, self.puck
        wp.launch(
            puck_act_kernel,
            self.num_envs,
            [p.actions, self._frame.tangent, c.dt, c.max_accel, c.max_speed],
            [p.position, p.velocity, p.orientation],
            device=self.device,
        )

    def _write_state(self, res, mask, masked_only: int, write_final: int) -> None:
        f = res.frame
        wp.launch(
            puck_state_kernel,
            self.num_envs,
            [mask, res.valid, f.s, f.n, f.tangent, self.course.result.length, self.puck.velocity]
            + [1.0 / self.config.max_speed, masked_only, write_final],
            [self._state_obs, self._state_final, self.outputs.ok, self.episode.s_prev],
            device=self.device,
        )

    def _close_step(self, res) -> None:
        ev, out = res.events, self.outputs
        wp.launch(
            puck_episode_kernel,
            self.num_envs,
            [out.ok, res.contacts.oob, ev.passed, ev.laps, ev.next_index, res.frame.s]
            + [self.course.result.length, self._episode_rules],
            [self._episode_arrays],
            device=self.device,
        )

    def _respawn(self, mask) -> None:
        ep, p = self.episode, self.puck
        wp.launch(
            puck_respawn_kernel,
            self.num_envs,
            [mask, self.course.result.center, self.n_max],
            [p.position, p.velocity, ep.length, ep.progress, ep.lap_mark, ep.lap_last],
            device=self.device,
        )


def follow(obs: np.ndarray, rng) -> np.ndarray:
    """Half the top speed along the track, thrust back to the centre line, a little noise."""
    thrust = np.clip(4.0 * (0.5 - obs[:, 0]), -1, 1)
    steer = np.clip(-30.0 * obs[:, 2] - 6.0 * obs[:, 1], -1, 1)
    a = np.stack([thrust, steer], 1) + rng.normal(0, 0.1, (len(obs), 2))
    return a.astype(np.float32)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)
    wp.config.quiet = True
    config = PuckConfig(observations=("state", "lidar"), lidar_num_beams=8)
    E = args.num_envs
    eager = PuckEnv(E, args.device, 3, config=config)
    graph = PuckEnv(E, args.device, 3, config=config, captured=True)
    assert eager.obs_dim == STATE_DIM + 8 and eager.term_slices()["lidar"] == (5, 13)
    rng = np.random.default_rng(0)
    dones = 0
    for t in range(args.steps):
        actions = wp.array(follow(eager.obs.numpy(), rng), device=eager.device)
        graph.obs.fill_(np.nan)  # poisoned: a stale column cannot pass
        eager.step(actions)
        graph.step(actions)
        for name in ("obs", "final_obs", "reward", "done", "final_progress"):
            a, b = getattr(eager, name).numpy(), getattr(graph, name).numpy()
            assert a.tobytes() == b.tobytes(), f"step {t}: {name} replay != eager"
        obs = eager.obs.numpy()
        assert np.isfinite(obs).all(), f"step {t}: a column is not finite"
        ok = eager.outputs.ok.numpy() != 0
        assert np.array_equal(obs[:, 4], ok.astype(np.float32)), f"step {t}: ok column"
        dones += int(eager.done.numpy().sum())
    st = eager.stats()
    epochs = eager.epochs.numpy()
    assert dones == st.episodes == int(epochs.sum()), (dones, st, epochs)
    print(
        f"ok: {E} pucks x {args.steps} steps, replay == eager; {st.episodes} episodes ended "
        f"(a new course each), mean progress {st.mean_progress:.2f} laps"
    )


if __name__ == "__main__":
    main()
