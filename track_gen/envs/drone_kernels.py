"""The Warp kernels of :class:`~track_gen.envs.DroneRaceEnv` (``drone.py``): the quadrotor's
dynamics (``_fly_kernel``, one thread per env, ``substeps`` per step), the ONE writer of the
state columns (a step and a reset alike), the episode kernel (crashes, reward, done,
bookkeeping) and the respawn.

The dynamics, in SI units, per env (``docs/drone-racing.md``, "Dynamics"): the state is the
position ``p`` (m), velocity ``v`` (m/s), attitude ``q`` (world from body, unit), body rates
``w`` (rad/s) and the collective thrust per unit mass ``c`` (m/s^2, along body +z). An action
``a`` (4 components in [-1, 1]; non-finite read as 0) commands the thrust ``c_cmd = g + a0 *
(thrust_max - g)`` for ``a0 >= 0``, ``g + a0 * (g - thrust_min)`` below (0 hovers) and the
body rates ``w_cmd = a[1:4] * max_rate``. Each substep of ``h = dt / substeps``:

1. first-order lags, exact for a held command: ``c += (c_cmd - c) * (1 - exp(-h / tau_thrust))``,
   ``w += (w_cmd - w) * (1 - exp(-h / tau_rate))`` (the gains come from the host, float64);
2. attitude: ``q = normalize(q * exp(w h / 2))`` (the exact rotation at the new rates);
3. ``a = R(q) (-drag * (R(q)^T v) + (0, 0, c)) - (0, 0, g)`` (linear drag per body axis);
4. semi-implicit Euler: ``v += a h``, ``p += v h``.
"""

from __future__ import annotations

import warp as wp

from ..tools.terms import final_flag, put_column, unit_or_zero
from .episode import EpisodeArrays, EpisodeRules, close_step

__all__: list[str] = []

wp.set_module_options({"enable_backward": False})

#: Columns of the ``state`` term (``docs/drone-racing.md``, "Observation").
STATE_DIM = 18
#: Why a drone crashed (``DroneCrash`` bits, ``env.crash``).
CRASH_GATE, CRASH_GROUND, CRASH_BOUNDS = 1, 2, 4
_CRASH_GATE = wp.constant(CRASH_GATE)
_CRASH_GROUND = wp.constant(CRASH_GROUND)
_CRASH_BOUNDS = wp.constant(CRASH_BOUNDS)


@wp.func
def _action(x: float) -> float:
    return wp.clamp(wp.where(wp.isfinite(x), x, 0.0), -1.0, 1.0)


@wp.func
def _finite3(v: wp.vec3f) -> bool:
    return wp.isfinite(v[0]) and wp.isfinite(v[1]) and wp.isfinite(v[2])


@wp.func
def _body_rotation(w: wp.vec3f, h: float) -> wp.quatf:
    """``exp(w h / 2)``: the rotation by ``|w| h`` about ``w`` (identity at rest)."""
    rate = wp.length(w)
    if rate > 0.0:
        half = 0.5 * rate * h
        s = wp.sin(half) / rate
        return wp.quatf(w[0] * s, w[1] * s, w[2] * s, wp.cos(half))
    return wp.quat_identity()


@wp.kernel
def _fly_kernel(
    # inputs
    actions: wp.array2d(dtype=wp.float32),
    # static
    substeps: int,
    h: float,
    gravity: float,
    thrust_min: float,
    thrust_max: float,
    max_rate: wp.vec3f,
    thrust_gain: float,
    rate_gain: float,
    drag: wp.vec3f,
    # outputs
    position_inout: wp.array(dtype=wp.vec3f),
    velocity_inout: wp.array(dtype=wp.vec3f),
    orientation_inout: wp.array(dtype=wp.quatf),
    rates_inout: wp.array(dtype=wp.vec3f),
    thrust_inout: wp.array(dtype=wp.float32),
):
    """One step of every drone: ``substeps`` substeps of ``h`` s (the module docs)."""
    e = wp.tid()
    a0 = _action(actions[e, 0])
    c_cmd = gravity + a0 * wp.where(a0 >= 0.0, thrust_max - gravity, gravity - thrust_min)
    w_cmd = wp.vec3f(
        _action(actions[e, 1]) * max_rate[0],
        _action(actions[e, 2]) * max_rate[1],
        _action(actions[e, 3]) * max_rate[2],
    )
    p = position_inout[e]
    v = velocity_inout[e]
    q = orientation_inout[e]
    w = rates_inout[e]
    c = thrust_inout[e]
    g = wp.vec3f(0.0, 0.0, -gravity)
    for _ in range(substeps):
        c = c + (c_cmd - c) * thrust_gain
        w = w + (w_cmd - w) * rate_gain
        q = wp.normalize(q * _body_rotation(w, h))
        R = wp.quat_to_matrix(q)
        vb = wp.transpose(R) * v
        f = wp.vec3f(-drag[0] * vb[0], -drag[1] * vb[1], c - drag[2] * vb[2])
        v = v + (R * f + g) * h
        p = p + v * h
    position_inout[e] = p
    velocity_inout[e] = v
    orientation_inout[e] = q
    rates_inout[e] = w
    thrust_inout[e] = c


@wp.kernel
def _state_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    frame_s: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    position: wp.array(dtype=wp.vec3f),
    velocity: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    rates: wp.array(dtype=wp.vec3f),
    thrust: wp.array(dtype=wp.float32),
    bounds_hi: wp.array(dtype=wp.vec3f),
    # static
    inv_speed: float,
    inv_rate: wp.vec3f,
    inv_thrust: float,
    masked_only: int,
    write_final: int,
    # outputs
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
    ok_out: wp.array(dtype=wp.int32),
    s_prev_out: wp.array(dtype=wp.float32),
):
    """The state columns of one env and its usable flag, for a step and a reset alike (the
    column list: ``docs/drone-racing.md``); zeros and ``ok`` 0 for an unusable env."""
    e = wp.tid()
    if masked_only != 0 and mask[e] == 0:
        return
    L = length[e]
    s = frame_s[e]
    p = position[e]
    v = velocity[e]
    q = orientation[e]
    w = rates[e]
    top = bounds_hi[e][2]
    ok = valid[e] != 0 and L > 0.0 and wp.isfinite(L) and wp.isfinite(s) and top > 0.0
    ok = ok and _finite3(p) and _finite3(v) and _finite3(w) and wp.isfinite(thrust[e])
    ok = ok and wp.isfinite(q[0] + q[1] + q[2] + q[3])
    ok_out[e] = wp.where(ok, 1, 0)
    fin = final_flag(write_final, mask[e])
    R = wp.quat_to_matrix(q)
    vb = wp.transpose(R) * v
    for i in range(3):
        put_column(obs_out, final_obs_out, e, i, unit_or_zero(ok, vb[i] * inv_speed), fin)
        for j in range(3):
            put_column(obs_out, final_obs_out, e, 3 + 3 * i + j, unit_or_zero(ok, R[i, j]), fin)
        put_column(obs_out, final_obs_out, e, 12 + i, unit_or_zero(ok, w[i] * inv_rate[i]), fin)
    put_column(obs_out, final_obs_out, e, 15, unit_or_zero(ok, thrust[e] * inv_thrust), fin)
    put_column(obs_out, final_obs_out, e, 16, unit_or_zero(ok, p[2] / top), fin)
    put_column(obs_out, final_obs_out, e, 17, unit_or_zero(ok, s / L), fin)
    if masked_only != 0:
        s_prev_out[e] = wp.where(ok, s, wp.nan)


@wp.func
def _crash_bits(hit: int, p: wp.vec3f, radius: float, lo: wp.vec3f, hi: wp.vec3f) -> int:
    """``DroneCrash`` bits: a gate contact, the ground (``z < radius``), beside or above the
    bounding box (``lo``, ``hi``; its floor is the ground's)."""
    bits = wp.where(hit != 0, _CRASH_GATE, 0)
    if p[2] < radius:
        bits = bits | _CRASH_GROUND
    out = p[0] < lo[0] or p[1] < lo[1] or p[0] > hi[0] or p[1] > hi[1]
    if out or p[2] > hi[2]:
        bits = bits | _CRASH_BOUNDS
    return bits


@wp.kernel
def _episode_kernel(
    # inputs
    ok_env: wp.array(dtype=wp.int32),
    hit: wp.array(dtype=wp.int32),
    passed: wp.array(dtype=wp.int32),
    laps: wp.array(dtype=wp.int32),
    gates: wp.array(dtype=wp.int32),
    next_index: wp.array(dtype=wp.int32),
    frame_s: wp.array(dtype=wp.float32),
    frame_distance: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    par_time: wp.array(dtype=wp.float32),
    position: wp.array(dtype=wp.vec3f),
    velocity: wp.array(dtype=wp.vec3f),
    rates: wp.array(dtype=wp.vec3f),
    bounds_lo: wp.array(dtype=wp.vec3f),
    bounds_hi: wp.array(dtype=wp.vec3f),
    gate_position: wp.array(dtype=wp.vec3f),
    gate_count: wp.array(dtype=wp.int32),
    # static
    rules: EpisodeRules,
    max_gates: int,
    gate_progress: int,
    radius: float,
    progress_tube: float,
    reward_progress: float,
    reward_gate: float,
    penalty_crash: float,
    penalty_rate: float,
    reward_par: float,
    # outputs
    episode_inout: EpisodeArrays,
    crash_out: wp.array(dtype=wp.int32),
    final_gates_out: wp.array(dtype=wp.int32),
    target_inout: wp.array(dtype=wp.int32),
    target_distance_inout: wp.array(dtype=wp.float32),
):
    """Crashes, reward, done flags and bookkeeping of one env after its state columns: the
    arc gained along the course line ``ds`` (m, wrapped; 0 while the drone is farther than
    ``progress_tube`` from the line, and at most the distance its speed covers in ``dt``
    (``rules.dt``, s) either way: the closest point cannot be dragged along the line faster
    than the drone flies), the decrease ``dg`` (m) of the distance to the centre of the gate
    targeted at the step's start (``target_inout``; its distance then
    ``target_distance_inout``, NaN: none; at most the speed's distance either way, 0 without
    a target), and the reward ``reward_progress * (dg if gate_progress else ds) +
    reward_gate * passed - penalty_crash * crashed - penalty_rate * |w|^2 (+ reward_par *
    (ds / length * par - dt) with a par)``; 0 where the env is not usable. Then the target is
    the step's ``next_index`` (switched at a pass) and its distance the drone's to that
    gate's centre (:func:`~track_gen.envs.episode.close_step` closes the step)."""
    e = wp.tid()
    ok = ok_env[e] != 0
    L = length[e]
    s = frame_s[e]
    p = position[e]
    reach = wp.length(velocity[e]) * rules.dt
    ds = float(0.0)
    sp = episode_inout.s_prev[e]
    if ok and wp.isfinite(sp):
        ds = s - sp
        ds = ds - L * wp.floor(ds / L + 0.5)
        ds = wp.where(frame_distance[e] <= progress_tube, wp.clamp(ds, -reach, reach), 0.0)
    episode_inout.s_prev[e] = wp.where(ok, s, sp)
    n = wp.clamp(gate_count[e], 0, max_gates)
    dg = float(0.0)
    t = target_inout[e]
    dp = target_distance_inout[e]
    if ok and t >= 0 and t < n and wp.isfinite(dp):
        dg = dp - wp.length(p - gate_position[e * max_gates + t])
        dg = wp.where(wp.isfinite(dg), wp.clamp(dg, -reach, reach), 0.0)
    t_new = next_index[e]
    d_new = float(wp.nan)
    if ok and t_new >= 0 and t_new < n:
        d_new = wp.length(p - gate_position[e * max_gates + t_new])
    target_inout[e] = wp.where(ok, t_new, -1)
    target_distance_inout[e] = d_new
    prog = episode_inout.progress[e] + wp.where(ok, ds / wp.max(L, 1.0e-9), 0.0)
    episode_inout.progress[e] = prog
    bits = _crash_bits(hit[e], p, radius, bounds_lo[e], bounds_hi[e])
    bits = wp.where(ok, bits, 0)
    crash_out[e] = bits
    crashed = bits != 0
    w = rates[e]
    r = reward_progress * wp.where(gate_progress != 0, dg, ds) + reward_gate * float(passed[e])
    r = r - wp.where(crashed, penalty_crash, 0.0) - penalty_rate * wp.dot(w, w)
    par = par_time[e]
    has_par = wp.isfinite(par) and par > 0.0
    if reward_par != 0.0 and has_par:
        r = r + reward_par * (ds / wp.max(L, 1.0e-9) * par - rules.dt)
    episode_inout.reward[e] = wp.where(ok and wp.isfinite(r), r, 0.0)
    final_gates_out[e] = gates[e]
    lap_completed = passed[e] != 0 and next_index[e] == 0
    close_step(e, ok, crashed, lap_completed, laps[e], prog, par, has_par, rules, episode_inout)


@wp.kernel
def _respawn_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    gate_position: wp.array(dtype=wp.vec3f),
    gate_forward: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    # static
    max_gates: int,
    spawn_back: float,
    margin: float,
    gravity: float,
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    velocity_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
    rates_out: wp.array(dtype=wp.vec3f),
    thrust_out: wp.array(dtype=wp.float32),
    bounds_lo_out: wp.array(dtype=wp.vec3f),
    bounds_hi_out: wp.array(dtype=wp.vec3f),
    episode_length_out: wp.array(dtype=wp.int32),
    progress_out: wp.array(dtype=wp.float32),
    lap_mark_out: wp.array(dtype=wp.int32),
    lap_last_out: wp.array(dtype=wp.float32),
    target_out: wp.array(dtype=wp.int32),
    target_distance_out: wp.array(dtype=wp.float32),
):
    """Each masked drone hovering at rest ``spawn_back`` behind gate 0 (the start), level,
    facing along the gate's horizontal forward axis, targeting gate 0 (``target_out``; its
    distance to the gate's centre ``target_distance_out``, m); its bounding volume the gates'
    box grown by ``margin`` (the floor at 0: the ground is its own crash). Without a finite
    gate 0 or box: at the origin with NaN bounds and no target (-1, NaN; the env is invalid
    and ends its next step)."""
    e = wp.tid()
    if mask[e] == 0:
        return
    n = wp.clamp(count[e], 0, max_gates)
    big = 3.0e38
    lo = wp.vec3f(big, big, big)
    hi = wp.vec3f(-big, -big, -big)
    for g in range(n):
        x = gate_position[e * max_gates + g]
        if _finite3(x):
            lo = wp.min(lo, x)
            hi = wp.max(hi, x)
    p = wp.vec3f(0.0, 0.0, 0.0)
    yaw = float(0.0)
    nan = wp.vec3f(wp.nan, wp.nan, wp.nan)
    box_lo = nan
    box_hi = nan
    target = int(-1)
    target_distance = float(wp.nan)
    if n >= 1 and lo[0] <= hi[0]:
        c = gate_position[e * max_gates]
        f = gate_forward[e * max_gates]
        fh = wp.vec3f(f[0], f[1], 0.0)
        fl = wp.length(fh)
        if _finite3(c) and wp.isfinite(fl) and fl > 1.0e-6:
            fh = fh / fl
            p = c - spawn_back * fh
            yaw = wp.atan2(fh[1], fh[0])
            lo = wp.min(lo, p)
            hi = wp.max(hi, p)
            m = wp.vec3f(margin, margin, margin)
            box_lo = wp.vec3f(lo[0] - margin, lo[1] - margin, 0.0)
            box_hi = hi + m
            target = 0
            target_distance = wp.length(c - p)
    position_out[e] = p
    velocity_out[e] = wp.vec3f(0.0, 0.0, 0.0)
    orientation_out[e] = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), yaw)
    rates_out[e] = wp.vec3f(0.0, 0.0, 0.0)
    thrust_out[e] = gravity
    bounds_lo_out[e] = box_lo
    bounds_hi_out[e] = box_hi
    episode_length_out[e] = 0
    progress_out[e] = 0.0
    lap_mark_out[e] = -1
    lap_last_out[e] = wp.nan
    target_out[e] = target
    target_distance_out[e] = target_distance
