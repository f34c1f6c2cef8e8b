"""Kernels of the car environment: the car model, the reward/observation/done stage, the
respawn and a line-following policy. Every kernel writes each of its outputs for every env it
owns, allocates nothing and reads nothing back to the host, so a whole step is safe to record.
"""

from __future__ import annotations

import enum

import warp as wp

wp.set_module_options({"enable_backward": False})

# Columns of the observation ``obs[e, k]`` (float32 ``[E, OBS_DIM]``); every column is 0
# (OBS_HEADING_COS: 1) for an env whose course is invalid or whose answer is not finite.
OBS_SPEED = wp.constant(0)  # speed / max_speed, in [0, 1]
OBS_STEER = wp.constant(1)  # steering angle / max_steer, in [-1, 1]
OBS_LATERAL = wp.constant(2)  # lateral offset from the centerline, left positive, track units
OBS_HEADING_SIN = wp.constant(3)  # sin(car yaw - yaw of the closest centerline segment)
OBS_HEADING_COS = wp.constant(4)  # cos(the same heading error)
OBS_CLEARANCE = wp.constant(5)  # signed clearance to the road border, track units (< 0: off)
OBS_DIST_NEXT = wp.constant(6)  # distance to the next checkpoint, track units
OBS_LAP_FRACTION = wp.constant(7)  # arc length of the closest point / track length, [0, 1)
OBS_DIM = wp.constant(8)


class DoneBit(enum.IntFlag):
    """Why an episode ended (``done_reason[e]``, several bits may be set)."""

    OOB = 1  # part of the car left the road band
    LAPS = 2  # ``max_laps`` laps completed
    TIME_OUT = 4  # ``max_episode_steps`` steps taken (a truncation, not a termination)
    INVALID = 8  # no usable course (valid == 0) or a non-finite car state


_OOB = wp.constant(int(DoneBit.OOB))
_LAPS = wp.constant(int(DoneBit.LAPS))
_TIME_OUT = wp.constant(int(DoneBit.TIME_OUT))
_INVALID = wp.constant(int(DoneBit.INVALID))
_PI = wp.constant(3.14159265358979)
_TWO_PI = wp.constant(6.28318530717959)


@wp.func
def _finite_or_zero(x: float) -> float:
    return wp.where(wp.isfinite(x), x, 0.0)


@wp.func
def _wrap_angle(a: float) -> float:
    """``a`` wrapped to ``[-pi, pi)`` (NaN stays NaN)."""
    return a - _TWO_PI * wp.floor((a + _PI) / _TWO_PI)


@wp.kernel
def bicycle_step(
    # inputs
    actions: wp.array2d(dtype=wp.float32),
    dt: float,
    wheelbase: float,
    max_speed: float,
    max_accel: float,
    max_steer: float,
    max_steer_rate: float,
    # in/out
    pos_inout: wp.array(dtype=wp.vec3f),
    yaw_inout: wp.array(dtype=wp.float32),
    speed_inout: wp.array(dtype=wp.float32),
    steer_inout: wp.array(dtype=wp.float32),
    # outputs
    orientation_out: wp.array(dtype=wp.quatf),
):
    """Kinematic bicycle (rear-axle reference), one explicit step of ``dt``.

    ``actions[e, 0]``: throttle in [-1, 1] (times ``max_accel``; the speed stays in
    ``[0, max_speed]``); ``actions[e, 1]``: steering command in [-1, 1] (times ``max_steer``),
    reached at most at ``max_steer_rate``. Non-finite actions read as 0.
    """
    e = wp.tid()
    throttle = wp.clamp(_finite_or_zero(actions[e, 0]), -1.0, 1.0)
    command = wp.clamp(_finite_or_zero(actions[e, 1]), -1.0, 1.0)
    v = wp.clamp(speed_inout[e] + max_accel * throttle * dt, 0.0, max_speed)
    turn = max_steer_rate * dt
    delta = steer_inout[e]
    delta = delta + wp.clamp(command * max_steer - delta, -turn, turn)
    yaw = _wrap_angle(yaw_inout[e] + v / wheelbase * wp.tan(delta) * dt)
    p = pos_inout[e]
    pos_inout[e] = wp.vec3f(p[0] + v * wp.cos(yaw) * dt, p[1] + v * wp.sin(yaw) * dt, p[2])
    yaw_inout[e] = yaw
    speed_inout[e] = v
    steer_inout[e] = delta
    orientation_out[e] = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), yaw)


@wp.kernel
def observe_reward_done(
    # inputs: course results of this step
    valid: wp.array(dtype=wp.int32),
    oob: wp.array(dtype=wp.int32),
    clearance: wp.array(dtype=wp.float32),
    passed: wp.array(dtype=wp.int32),
    laps: wp.array(dtype=wp.int32),
    dist_to_next: wp.array(dtype=wp.float32),
    lateral: wp.array(dtype=wp.float32),
    arc: wp.array(dtype=wp.float32),
    tangent: wp.array(dtype=wp.vec3f),
    length: wp.array(dtype=wp.float32),
    # inputs: car state
    yaw: wp.array(dtype=wp.float32),
    speed: wp.array(dtype=wp.float32),
    steer: wp.array(dtype=wp.float32),
    # inputs: constants
    dt: float,
    max_speed: float,
    max_steer: float,
    max_laps: int,
    max_episode_steps: int,
    reward_checkpoint: float,
    reward_speed: float,
    penalty_oob: float,
    # in/out
    episode_length_inout: wp.array(dtype=wp.int32),
    # outputs
    obs_out: wp.array2d(dtype=wp.float32),
    reward_out: wp.array(dtype=wp.float32),
    done_out: wp.array(dtype=wp.int32),
    time_out_out: wp.array(dtype=wp.int32),
    done_reason_out: wp.array(dtype=wp.int32),
):
    """Reward, observation and done mask of one env, gated on ``valid`` with selects.

    Writes EVERY entry of every output on every call (``done_out`` is the mask the masked
    regeneration and the respawn read next). The counter ``episode_length`` advances here.
    """
    e = wp.tid()
    t = tangent[e]
    heading = _wrap_angle(yaw[e] - wp.atan2(t[1], t[0]))
    lap_fraction = arc[e] / length[e]
    n = lateral[e]
    gap = clearance[e]
    dist = dist_to_next[e]
    ok = valid[e] != 0
    # a valid course answers finite values; anything else (a NaN car state) counts as invalid
    finite = (
        wp.isfinite(heading)
        and wp.isfinite(lap_fraction)
        and wp.isfinite(n)
        and wp.isfinite(gap)
        and wp.isfinite(dist)
    )
    ok = ok and finite

    obs_out[e, OBS_SPEED] = wp.where(ok, speed[e] / max_speed, 0.0)
    obs_out[e, OBS_STEER] = wp.where(ok, steer[e] / max_steer, 0.0)
    obs_out[e, OBS_LATERAL] = wp.where(ok, n, 0.0)
    obs_out[e, OBS_HEADING_SIN] = wp.where(ok, wp.sin(heading), 0.0)
    obs_out[e, OBS_HEADING_COS] = wp.where(ok, wp.cos(heading), 1.0)
    obs_out[e, OBS_CLEARANCE] = wp.where(ok, gap, 0.0)
    obs_out[e, OBS_DIST_NEXT] = wp.where(ok, dist, 0.0)
    obs_out[e, OBS_LAP_FRACTION] = wp.where(ok, lap_fraction, 0.0)

    off_road = oob[e] != 0
    r = reward_checkpoint * float(passed[e]) + reward_speed * speed[e] * wp.cos(heading) * dt
    r = r - wp.where(off_road, penalty_oob, 0.0)
    reward_out[e] = wp.where(ok, r, 0.0)  # a select: never r * float(valid[e])

    steps = episode_length_inout[e] + 1
    episode_length_inout[e] = steps
    reason = int(0)
    if not ok:
        reason = reason | _INVALID  # done |= 1 - valid
    else:
        if off_road:
            reason = reason | _OOB
        if laps[e] >= max_laps:
            reason = reason | _LAPS
    if steps >= max_episode_steps:
        reason = reason | _TIME_OUT
    done_reason_out[e] = reason
    done_out[e] = wp.where(reason != 0, 1, 0)
    time_out_out[e] = wp.where(reason == _TIME_OUT, 1, 0)  # truncated, not terminated


@wp.kernel
def respawn_cars(
    # inputs
    mask: wp.array(dtype=wp.int32),
    center: wp.array(dtype=wp.vec3f),
    tangent: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    n_max: int,
    spawn_back: float,
    # outputs (masked envs only)
    pos_out: wp.array(dtype=wp.vec3f),
    yaw_out: wp.array(dtype=wp.float32),
    speed_out: wp.array(dtype=wp.float32),
    steer_out: wp.array(dtype=wp.float32),
    orientation_out: wp.array(dtype=wp.quatf),
    episode_length_out: wp.array(dtype=wp.int32),
):
    """Put each masked car at rest ``spawn_back`` behind bead 0 (the start line, checkpoint 0)
    of its current course, facing along the centerline; a course without a finite bead 0 puts
    it at the origin (the env is invalid and ends its episode on the next step)."""
    e = wp.tid()
    if mask[e] == 0:
        return
    p = wp.vec3f(0.0, 0.0, 0.0)
    yaw = float(0.0)
    if count[e] >= 2:
        c = center[e * n_max]
        t = tangent[e * n_max]
        h = wp.vec3f(t[0], t[1], 0.0)
        hl = wp.length(h)
        if wp.isfinite(c[0]) and wp.isfinite(c[1]) and wp.isfinite(hl) and hl > 1.0e-6:
            h = h / hl
            p = c - spawn_back * h
            yaw = wp.atan2(h[1], h[0])
    pos_out[e] = p
    yaw_out[e] = yaw
    speed_out[e] = 0.0
    steer_out[e] = 0.0
    orientation_out[e] = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), yaw)
    episode_length_out[e] = 0


@wp.kernel
def follow_line(
    # inputs
    obs: wp.array2d(dtype=wp.float32),
    target_speed: float,
    gain_lateral: float,
    gain_heading: float,
    jitter: float,
    seed: int,
    # outputs
    actions_out: wp.array2d(dtype=wp.float32),
):
    """A proportional line follower on the observation (a stand-in for a policy): steer
    against the lateral offset and heading error, throttle towards ``target_speed`` (a
    fraction of ``max_speed``). ``jitter`` scales both gains per env by a fixed factor in
    ``[1 - jitter, 1 + jitter]`` drawn from ``(seed, env)``, so some envs drive worse."""
    e = wp.tid()
    rng = wp.rand_init(seed, e)
    scale = 1.0 + jitter * (2.0 * wp.randf(rng) - 1.0)
    steer = -scale * (gain_lateral * obs[e, OBS_LATERAL] + gain_heading * obs[e, OBS_HEADING_SIN])
    actions_out[e, 0] = wp.clamp(4.0 * (target_speed - obs[e, OBS_SPEED]), -1.0, 1.0)
    actions_out[e, 1] = wp.clamp(steer, -1.0, 1.0)
