"""The Warp kernels of :class:`~track_gen.envs.RaceEnv` (``race.py``): the car's drive (the
kinematic bicycle and the dynamic single-track model), the ONE writer of the state columns (a
step and a reset alike), the episode kernel (reward, done, bookkeeping) and the respawn, with
the state columns."""

from __future__ import annotations

import warp as wp

from ..geometry import arc_ahead, point_at_arc, wrap_angle
from ..tools.terms import final_flag
from .episode import EpisodeArrays, EpisodeRules, close_step

__all__: list[str] = []

wp.set_module_options({"enable_backward": False})


#: Fixed observation columns before the look-ahead points.
BASE_OBS = 8
#: Racing-line columns after the look-ahead points (``racing_line="observe"``).
LINE_OBS = 2
#: Single-track columns after those (``dynamics="single_track"``): lateral speed, yaw rate.
DYN_OBS = 2
OBS_SPEED = wp.constant(0)
OBS_STEER = wp.constant(1)
OBS_LATERAL = wp.constant(2)
OBS_HEADING_SIN = wp.constant(3)
OBS_HEADING_COS = wp.constant(4)
OBS_CLEARANCE = wp.constant(5)
OBS_DIST_NEXT = wp.constant(6)
OBS_LAP_FRACTION = wp.constant(7)
OBS_LOOKAHEAD = wp.constant(8)


# ------------------------------------------------------------------------------ kernels
@wp.func
def _finite_or_zero(x: float) -> float:
    return wp.where(wp.isfinite(x), x, 0.0)


@wp.kernel
def _drive_kernel(
    # inputs
    actions: wp.array2d(dtype=wp.float32),
    # static
    dt: float,
    wheelbase: float,
    max_speed: float,
    max_accel: float,
    max_steer: float,
    max_steer_rate: float,
    max_lateral_accel: float,
    # outputs
    pos_inout: wp.array(dtype=wp.vec3f),
    yaw_inout: wp.array(dtype=wp.float32),
    speed_inout: wp.array(dtype=wp.float32),
    steer_inout: wp.array(dtype=wp.float32),
    orientation_out: wp.array(dtype=wp.quatf),
):
    """Kinematic bicycle with a grip limit, one explicit step: ``actions[e, 0]`` throttle and
    ``actions[e, 1]`` steering command, each clamped to [-1, 1] (non-finite read as 0); the
    yaw rate ``v / wheelbase * tan(steer)`` is clamped to ``max_lateral_accel / v``."""
    e = wp.tid()
    throttle = wp.clamp(_finite_or_zero(actions[e, 0]), -1.0, 1.0)
    command = wp.clamp(_finite_or_zero(actions[e, 1]), -1.0, 1.0)
    v = wp.clamp(speed_inout[e] + max_accel * throttle * dt, 0.0, max_speed)
    turn = max_steer_rate * dt
    delta = steer_inout[e]
    delta = delta + wp.clamp(command * max_steer - delta, -turn, turn)
    # grip: the yaw rate is capped at max_lateral_accel / v (the car understeers)
    grip = max_lateral_accel / wp.max(v, 1.0e-6)
    rate = wp.clamp(v / wheelbase * wp.tan(delta), -grip, grip)
    yaw = wrap_angle(yaw_inout[e] + rate * dt)
    p = pos_inout[e]
    pos_inout[e] = wp.vec3f(p[0] + v * wp.cos(yaw) * dt, p[1] + v * wp.sin(yaw) * dt, p[2])
    yaw_inout[e] = yaw
    speed_inout[e] = v
    steer_inout[e] = delta
    orientation_out[e] = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), yaw)


@wp.kernel
def _single_track_kernel(
    # inputs
    actions: wp.array2d(dtype=wp.float32),
    # static: the step and the vehicle (SI units, race.py derives them from VehicleSettings)
    dt: float,
    substeps: int,
    mass: float,
    yaw_inertia: float,
    lf: float,
    lr: float,
    stiffness_front: float,
    stiffness_rear: float,
    grip_front: float,
    grip_rear: float,
    drive_force: float,
    max_speed: float,
    max_steer: float,
    max_steer_rate: float,
    drag: float,
    blend_lo: float,
    blend_hi: float,
    # outputs
    pos_inout: wp.array(dtype=wp.vec3f),
    yaw_inout: wp.array(dtype=wp.float32),
    speed_inout: wp.array(dtype=wp.float32),
    lateral_speed_inout: wp.array(dtype=wp.float32),
    yaw_rate_inout: wp.array(dtype=wp.float32),
    steer_inout: wp.array(dtype=wp.float32),
    orientation_out: wp.array(dtype=wp.quatf),
):
    """The dynamic single-track model, ``substeps`` explicit Euler substeps of ``h = dt /
    substeps`` per step (the equations are in ``docs/training.md``, "The single-track car").

    ``actions[e, 0]``: the longitudinal force ``Fx = throttle * drive_force`` (drive and
    brake), split over the axles by their static loads; ``actions[e, 1]``: the front-wheel
    angle target ``command * max_steer``, reached at ``max_steer_rate`` (each clamped to
    [-1, 1], non-finite read as 0). Per substep: the steering moves; each axle's lateral
    force is ``stiffness * slip angle`` clamped to its friction circle ``sqrt(grip^2 -
    Fx_axle^2)``; drag ``drag * vx^2``; the body velocities ``vx`` (>= 0, <= max_speed),
    ``vy`` and the yaw rate ``r`` follow Newton-Euler in the body frame, blended below
    ``blend_hi`` into the kinematic bicycle (zero slip angles); yaw and position follow the
    updated velocities (the position's step summed locally, added once)."""
    e = wp.tid()
    throttle = wp.clamp(_finite_or_zero(actions[e, 0]), -1.0, 1.0)
    command = wp.clamp(_finite_or_zero(actions[e, 1]), -1.0, 1.0)
    h = dt / float(substeps)
    wb = lf + lr
    fx = throttle * drive_force
    fx_front = fx * (lr / wb)
    fx_rear = fx * (lf / wb)
    cap_front = wp.sqrt(wp.max(grip_front * grip_front - fx_front * fx_front, 0.0))
    cap_rear = wp.sqrt(wp.max(grip_rear * grip_rear - fx_rear * fx_rear, 0.0))
    target = command * max_steer
    turn = max_steer_rate * h
    vx = speed_inout[e]
    vy = lateral_speed_inout[e]
    r = yaw_rate_inout[e]
    delta = steer_inout[e]
    psi = yaw_inout[e]
    dx = float(0.0)
    dy = float(0.0)
    for _k in range(substeps):
        delta = delta + wp.clamp(target - delta, -turn, turn)
        lam = wp.clamp((vx - blend_lo) / (blend_hi - blend_lo), 0.0, 1.0)
        f_drag = drag * vx * vx
        ax = (fx - f_drag) / mass  # the kinematic bicycle's
        ay = float(0.0)
        ar = float(0.0)
        if lam > 0.0:
            slip_front = delta - wp.atan2(vy + lf * r, vx)
            slip_rear = -wp.atan2(vy - lr * r, vx)
            fy_front = wp.clamp(stiffness_front * slip_front, -cap_front, cap_front)
            fy_rear = wp.clamp(stiffness_rear * slip_rear, -cap_rear, cap_rear)
            c = wp.cos(delta)
            sn = wp.sin(delta)
            ax_dyn = (fx_rear + fx_front * c - fy_front * sn - f_drag) / mass + vy * r
            ay = (fy_rear + fy_front * c + fx_front * sn) / mass - vx * r
            ar = (lf * (fy_front * c + fx_front * sn) - lr * fy_rear) / yaw_inertia
            ax = lam * ax_dyn + (1.0 - lam) * ax
        vx_next = wp.clamp(vx + h * ax, 0.0, max_speed)
        t = wp.tan(delta)
        vy = lam * (vy + h * ay) + (1.0 - lam) * vx_next * lr * t / wb
        r = lam * (r + h * ar) + (1.0 - lam) * vx_next * t / wb
        vx = vx_next
        psi = psi + h * r
        cp = wp.cos(psi)
        sp = wp.sin(psi)
        dx = dx + h * (vx * cp - vy * sp)
        dy = dy + h * (vx * sp + vy * cp)
    yaw = wrap_angle(psi)
    p = pos_inout[e]
    pos_inout[e] = wp.vec3f(p[0] + dx, p[1] + dy, p[2])
    yaw_inout[e] = yaw
    speed_inout[e] = vx
    lateral_speed_inout[e] = vy
    yaw_rate_inout[e] = r
    steer_inout[e] = delta
    orientation_out[e] = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), yaw)


@wp.func
def _write_obs(
    e: int,
    ok: bool,
    s: float,
    n: float,
    heading: float,
    gap: float,
    dist: float,
    length: float,
    count: int,
    n_max: int,
    center: wp.array(dtype=wp.vec3f),
    arclen: wp.array(dtype=wp.float32),
    lookahead: wp.array(dtype=wp.float32),
    pos: wp.vec3f,
    yaw: float,
    speed: float,
    steer: float,
    max_speed: float,
    max_steer: float,
    inv_length: float,
    observe_line: int,
    line_offset: float,
    line_speed: float,
    dynamic: int,
    lateral_speed: float,
    yaw_rate: float,
    yaw_scale: float,
    obs_out: wp.array2d(dtype=wp.float32),
):
    """Every column of ``obs_out[e]`` (zeros, cos column 1, when not ``ok``); every length
    times ``inv_length`` (1 in track units: the columns unchanged bit for bit). With
    ``observe_line`` the two racing-line columns follow the look-ahead points: the line's
    offset minus the car's lateral offset ``n`` and the line's target speed / max_speed at
    ``s`` (``line_offset``, ``line_speed``: the line sampled at ``s``; 0 where not finite).
    With ``dynamic`` (the single-track car) two more: the lateral speed / max_speed and the
    yaw rate * ``yaw_scale`` (max_speed / the grip limit)."""
    obs_out[e, OBS_SPEED] = wp.where(ok, speed / max_speed, 0.0)
    obs_out[e, OBS_STEER] = wp.where(ok, steer / max_steer, 0.0)
    obs_out[e, OBS_LATERAL] = wp.where(ok, n * inv_length, 0.0)
    obs_out[e, OBS_HEADING_SIN] = wp.where(ok, wp.sin(heading), 0.0)
    obs_out[e, OBS_HEADING_COS] = wp.where(ok, wp.cos(heading), 1.0)
    obs_out[e, OBS_CLEARANCE] = wp.where(ok, gap * inv_length, 0.0)
    obs_out[e, OBS_DIST_NEXT] = wp.where(ok, dist * inv_length, 0.0)
    obs_out[e, OBS_LAP_FRACTION] = wp.where(ok, s / length, 0.0)
    c = wp.cos(yaw)
    sn = wp.sin(yaw)
    base = e * n_max
    for k in range(lookahead.shape[0]):
        # the centerline at arc s + d (one past a lap wraps): the look-ahead of the sensors
        # (geometry.point_at_arc, float64 arcs)
        x = float(0.0)
        y = float(0.0)
        if ok:
            u = arc_ahead(s, wp.float64(lookahead[k]), length)
            q = point_at_arc(center, arclen, base, count, length, u)
            dx = q[0] - pos[0]
            dy = q[1] - pos[1]
            x = (c * dx + sn * dy) * inv_length
            y = (-sn * dx + c * dy) * inv_length
            if not (wp.isfinite(x) and wp.isfinite(y)):
                x = 0.0
                y = 0.0
        obs_out[e, OBS_LOOKAHEAD + 2 * k] = x
        obs_out[e, OBS_LOOKAHEAD + 2 * k + 1] = y
    col = OBS_LOOKAHEAD + 2 * lookahead.shape[0]
    if observe_line != 0:
        obs_out[e, col] = wp.where(ok, _finite_or_zero((line_offset - n) * inv_length), 0.0)
        obs_out[e, col + 1] = wp.where(ok, _finite_or_zero(line_speed / max_speed), 0.0)
        col = col + 2
    if dynamic != 0:
        obs_out[e, col] = wp.where(ok, _finite_or_zero(lateral_speed / max_speed), 0.0)
        obs_out[e, col + 1] = wp.where(ok, _finite_or_zero(yaw_rate * yaw_scale), 0.0)


@wp.func
def _usable(
    valid: int,
    count: int,
    segment: int,
    s: float,
    n: float,
    heading: float,
    length: float,
    gap: float,
    dist: float,
) -> bool:
    """Whether an env's course and the course's answers for its car are usable (else the env
    observes zeros, gets reward 0 and is done with INVALID)."""
    ok = valid != 0 and count >= 2 and segment >= 0 and length > 0.0
    ok = ok and wp.isfinite(s) and wp.isfinite(n) and wp.isfinite(heading)
    return ok and wp.isfinite(length) and wp.isfinite(gap) and wp.isfinite(dist)


@wp.func
def _heading_error(yaw: float, tangent: wp.vec3f) -> float:
    return wrap_angle(yaw - wp.atan2(tangent[1], tangent[0]))


@wp.kernel
def _state_kernel(
    # inputs: course results of this step
    mask: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    clearance: wp.array(dtype=wp.float32),
    dist_to_next: wp.array(dtype=wp.float32),
    frame_s: wp.array(dtype=wp.float32),
    frame_n: wp.array(dtype=wp.float32),
    frame_segment: wp.array(dtype=wp.int32),
    frame_tangent: wp.array(dtype=wp.vec3f),
    center: wp.array(dtype=wp.vec3f),
    arclen: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    count: wp.array(dtype=wp.int32),
    lookahead: wp.array(dtype=wp.float32),
    # inputs: the racing line sampled at s
    line_offset: wp.array(dtype=wp.float32),
    line_speed: wp.array(dtype=wp.float32),
    # inputs: car state
    pos: wp.array(dtype=wp.vec3f),
    yaw: wp.array(dtype=wp.float32),
    speed: wp.array(dtype=wp.float32),
    steer: wp.array(dtype=wp.float32),
    lateral_speed: wp.array(dtype=wp.float32),
    yaw_rate: wp.array(dtype=wp.float32),
    # static
    n_max: int,
    max_speed: float,
    max_steer: float,
    inv_length: float,
    observe_line: int,
    dynamic: int,
    yaw_scale: float,
    masked_only: int,
    write_final: int,
    # outputs
    obs_inout: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
    ok_out: wp.array(dtype=wp.int32),
    s_prev_out: wp.array(dtype=wp.float32),
):
    """The state columns of one env and its usable flag, for a step and a reset alike: every
    env of a step (``masked_only`` 0; ``write_final``: the final observation too), or the
    masked envs of a reset (``masked_only`` 1), which also start their progress at the car's
    arc (``s_prev_out``; NaN when the env is not usable)."""
    e = wp.tid()
    if masked_only != 0 and mask[e] == 0:
        return
    L = length[e]
    s = frame_s[e]
    n = frame_n[e]
    heading = _heading_error(yaw[e], frame_tangent[e])
    gap = clearance[e]
    dist = dist_to_next[e]
    p = pos[e]
    ok = _usable(valid[e], count[e], frame_segment[e], s, n, heading, L, gap, dist)
    ok = ok and wp.isfinite(p[0]) and wp.isfinite(p[1]) and wp.isfinite(yaw[e])
    if dynamic != 0:  # the single-track car's velocities too
        ok = ok and wp.isfinite(speed[e]) and wp.isfinite(lateral_speed[e])
        ok = ok and wp.isfinite(yaw_rate[e])
    ok_out[e] = wp.where(ok, 1, 0)
    _write_obs(
        e,
        ok,
        s,
        n,
        heading,
        gap,
        dist,
        L,
        count[e],
        n_max,
        center,
        arclen,
        lookahead,
        p,
        yaw[e],
        speed[e],
        steer[e],
        max_speed,
        max_steer,
        inv_length,
        observe_line,
        line_offset[e],
        line_speed[e],
        dynamic,
        lateral_speed[e],
        yaw_rate[e],
        yaw_scale,
        obs_inout,
    )
    if final_flag(write_final, mask[e]) != 0:  # the whole row: terms then overwrite theirs
        for k in range(obs_inout.shape[1]):
            final_obs_out[e, k] = obs_inout[e, k]
    if masked_only != 0:
        s_prev_out[e] = wp.where(ok, s, wp.nan)


@wp.kernel
def _episode_kernel(
    # inputs: this step's course results and usable flags
    ok_env: wp.array(dtype=wp.int32),
    oob: wp.array(dtype=wp.int32),
    passed: wp.array(dtype=wp.int32),
    laps: wp.array(dtype=wp.int32),
    next_index: wp.array(dtype=wp.int32),
    frame_s: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    par_time: wp.array(dtype=wp.float32),
    # static
    rules: EpisodeRules,
    reward_progress: float,
    reward_checkpoint: float,
    penalty_oob: float,
    reward_par: float,
    # outputs: the episode bookkeeping, this step's reward and done flags
    episode_inout: EpisodeArrays,
):
    """Reward, done flags and bookkeeping of one env after its state columns
    (:func:`~track_gen.envs.episode.close_step` closes the step): the arc gained along the
    centerline ``ds`` (wrapped at the start line, 0 on an episode's first step), the
    progress ``ds / length``, and the reward ``reward_progress * ds + reward_checkpoint *
    passed - penalty_oob * oob (+ reward_par * (ds / length * par - dt) with a par)``; 0
    where the env is not usable."""
    e = wp.tid()
    ok = ok_env[e] != 0
    L = length[e]
    s = frame_s[e]
    # arc length gained along the centerline, wrapped at the start line
    ds = float(0.0)
    sp = episode_inout.s_prev[e]
    if ok and wp.isfinite(sp):
        ds = s - sp
        ds = ds - L * wp.floor(ds / L + 0.5)
    episode_inout.s_prev[e] = wp.where(ok, s, sp)
    prog = episode_inout.progress[e] + wp.where(ok, ds / wp.max(L, 1.0e-9), 0.0)
    episode_inout.progress[e] = prog

    off_road = oob[e] != 0
    r = reward_progress * ds + reward_checkpoint * float(passed[e])
    r = r - wp.where(off_road, penalty_oob, 0.0)
    par = par_time[e]
    has_par = wp.isfinite(par) and par > 0.0
    if reward_par != 0.0 and has_par:  # a branch: the default reward keeps every bit
        # the par pace: ds / L of a lap in ds / L * par seconds, against the step's dt
        r = r + reward_par * (ds / wp.max(L, 1.0e-9) * par - rules.dt)
    episode_inout.reward[e] = wp.where(ok, r, 0.0)  # a select: never r * float(valid[e])
    lap_completed = passed[e] != 0 and next_index[e] == 0
    close_step(e, ok, off_road, lap_completed, laps[e], prog, par, has_par, rules, episode_inout)


@wp.kernel
def _respawn_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    center: wp.array(dtype=wp.vec3f),
    tangent: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    spawn_back: float,
    # outputs (masked envs only)
    pos_out: wp.array(dtype=wp.vec3f),
    yaw_out: wp.array(dtype=wp.float32),
    speed_out: wp.array(dtype=wp.float32),
    steer_out: wp.array(dtype=wp.float32),
    lateral_speed_out: wp.array(dtype=wp.float32),
    yaw_rate_out: wp.array(dtype=wp.float32),
    orientation_out: wp.array(dtype=wp.quatf),
    episode_length_out: wp.array(dtype=wp.int32),
    progress_out: wp.array(dtype=wp.float32),
    lap_mark_out: wp.array(dtype=wp.int32),
    lap_last_out: wp.array(dtype=wp.float32),
):
    """Each masked car at rest ``spawn_back`` behind bead 0 (the start line) of its course,
    facing along the centerline; without a finite bead 0, at the origin (the env is invalid
    and ends its next step)."""
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
    lateral_speed_out[e] = 0.0
    yaw_rate_out[e] = 0.0
    orientation_out[e] = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), yaw)
    episode_length_out[e] = 0
    progress_out[e] = 0.0
    lap_mark_out[e] = -1  # no lap completed in the new episode yet
    lap_last_out[e] = wp.nan
