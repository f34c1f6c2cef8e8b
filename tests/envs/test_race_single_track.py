"""The single-track car of RaceEnv (``RaceConfig(unit="m", dynamics="single_track")``): its
motion against an independent float64 NumPy integration of the equations of
docs/training.md, the steady-state cornering of the closed forms (the understeer gradient in
the linear range, ``v^2 / R = mu g`` at the friction limit), the integration's convergence,
graph replay == eager, the same bits for any CPU thread count, the metre env (circuits, the
vehicle's racing line and observation scales) and the refusals of bad vehicles and mixed
units before anything is built."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from track_gen import io
from track_gen.envs import RaceConfig, RaceEnv
from track_gen.envs.vehicles import F1TENTH, GT, VehicleSettings
from track_gen.pipeline import presets

G = 9.81


# ------------------------------------------------------------------------------ the oracle
def oracle_step(state: np.ndarray, action, v, dt: float, substeps: int) -> np.ndarray:
    """One env step of the single-track model in float64 (docs/training.md, "The
    single-track car"), written from the equations: ``state`` = (x, y, yaw, vx, vy, r,
    steer)."""
    x, y, psi, vx, vy, r, delta = (float(a) for a in state)
    throttle = float(np.clip(action[0], -1.0, 1.0))
    command = float(np.clip(action[1], -1.0, 1.0))
    wb = v.lf + v.lr
    weight = v.mass * G
    fz_front, fz_rear = weight * v.lr / wb, weight * v.lf / wb
    fx = throttle * min(v.mass * v.max_accel, v.mu * weight)
    fx_front, fx_rear = fx * v.lr / wb, fx * v.lf / wb
    cap_front = math.sqrt(max((v.mu * fz_front) ** 2 - fx_front**2, 0.0))
    cap_rear = math.sqrt(max((v.mu * fz_rear) ** 2 - fx_rear**2, 0.0))
    lo, hi = 0.04 * v.max_speed, 0.08 * v.max_speed
    h = dt / substeps
    for _ in range(substeps):
        step = v.max_steer_rate * h
        delta += min(max(command * v.max_steer - delta, -step), step)
        lam = min(max((vx - lo) / (hi - lo), 0.0), 1.0)
        drag = v.drag * vx * vx
        alpha_f = delta - math.atan2(vy + v.lf * r, vx)
        alpha_r = -math.atan2(vy - v.lr * r, vx)
        fy_f = min(max(v.mu * v.cornering_front * fz_front * alpha_f, -cap_front), cap_front)
        fy_r = min(max(v.mu * v.cornering_rear * fz_rear * alpha_r, -cap_rear), cap_rear)
        c, s = math.cos(delta), math.sin(delta)
        ax_dyn = (fx_rear + fx_front * c - fy_f * s - drag) / v.mass + vy * r
        ay_dyn = (fy_r + fy_f * c + fx_front * s) / v.mass - vx * r
        ar_dyn = (v.lf * (fy_f * c + fx_front * s) - v.lr * fy_r) / v.yaw_inertia
        ax = lam * ax_dyn + (1.0 - lam) * (fx - drag) / v.mass
        vx_next = min(max(vx + h * ax, 0.0), v.max_speed)
        t = math.tan(delta)
        vy = lam * (vy + h * ay_dyn) + (1.0 - lam) * vx_next * v.lr * t / wb
        r = lam * (r + h * ar_dyn) + (1.0 - lam) * vx_next * t / wb
        vx = vx_next
        psi += h * r
        x += h * (vx * math.cos(psi) - vy * math.sin(psi))
        y += h * (vx * math.sin(psi) + vy * math.cos(psi))
    psi = psi - 2.0 * math.pi * math.floor((psi + math.pi) / (2.0 * math.pi))
    return np.array([x, y, psi, vx, vy, r, delta])


def _state(env) -> np.ndarray:
    """The cars as oracle states, float64 ``[E, 7]``."""
    p = env.position.numpy().astype(np.float64)
    cols = [env.yaw, env.speed, env.lateral_speed, env.yaw_rate, env.steer]
    return np.column_stack([p[:, 0], p[:, 1], *(a.numpy().astype(np.float64) for a in cols)])


def _wide_circle(radius: float = 2000.0, width: float = 400.0) -> io.RealTrack:
    """A circle so wide the car never leaves it, starting at the origin heading +x."""
    t = np.linspace(0.0, 2.0 * np.pi, 64, endpoint=False)
    xy = np.column_stack([radius * np.sin(t), radius - radius * np.cos(t)])
    w = np.full(64, width)
    return io.RealTrack("wide circle", xy, w, w)


def _open_field(E: int, vehicle, dt: float, **fields) -> RaceEnv:
    config = RaceConfig.for_vehicle(vehicle, dt=dt, max_episode_steps=100000, **fields)
    spec = io.tracks_spec([_wide_circle()], num_envs=E, device="cpu", units="metres")
    return RaceEnv(E, seeds=0, config=config, spec=spec, new_course_on_reset=False)


def _actions(steps: int, E: int, seed: int) -> np.ndarray:
    """Driving that visits every regime: full throttle from rest, steering sweeps that reach
    the friction limit, braking in a corner, a stop (the kinematic blend) and a restart;
    smooth random commands with full-range bursts, float32 ``[steps, E, 2]``."""
    rng = np.random.default_rng(seed)
    t = np.arange(steps)[:, None]
    phase = rng.uniform(0, 2 * np.pi, (1, E))
    steer = np.sin(2 * np.pi * t / rng.uniform(40, 90, (1, E)) + phase)
    steer = np.clip(steer * rng.uniform(0.3, 1.5, (1, E)), -1, 1)
    throttle = np.where(t < 50, 1.0, 0.4 * np.sin(2 * np.pi * t / 70.0 + phase))
    throttle = np.where((t > 120) & (t < 160), -1.0, throttle)  # brake to a stop
    throttle = np.where(t >= 170, 0.8, throttle)
    return np.stack([throttle, steer], -1).astype(np.float32)


@pytest.mark.parametrize("name, vehicle, dt", [("gt", GT, 0.05), ("f1tenth", F1TENTH, 0.02)])
def test_motion_matches_a_float64_integration_of_the_same_equations(name, vehicle, dt):
    """200 steps of four cars through every regime: positions within 1e-4 m of the float64
    NumPy integration, velocities within 1e-4 (of their unit), steering within 1e-5 rad."""
    E = 4
    env = _open_field(E, name, dt)
    n = env.config.car.substeps
    actions = _actions(200, E, seed=3)
    state = _state(env)
    assert np.all(state[:, 3:] == 0.0)  # at rest after the respawn
    saturated = 0
    stopped = False
    travelled = np.zeros(E)
    for k in range(200):
        env.step(wp.array(actions[k], device=env.device))
        assert not env.done.numpy().any()
        before = state[:, :2]
        state = np.stack([oracle_step(state[e], actions[k, e], vehicle, dt, n) for e in range(E)])
        travelled += np.linalg.norm(state[:, :2] - before, axis=1)
        got = _state(env)
        dpos = np.abs(got[:, :2] - state[:, :2]).max()
        assert dpos < 1e-4, (k, dpos)
        dyaw = np.abs((got[:, 2] - state[:, 2] + np.pi) % (2 * np.pi) - np.pi).max()
        assert dyaw < 1e-5, (k, dyaw)
        np.testing.assert_allclose(got[:, 3:6], state[:, 3:6], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got[:, 6], state[:, 6], rtol=0, atol=1e-5)
        # the regimes were visited: the friction limit (|a_y| near mu g) and a stop
        ay = np.abs(state[:, 3] * state[:, 5])
        saturated += int((ay > 0.9 * vehicle.mu * G).sum())
        stopped = stopped or bool((state[:, 3] < 0.04 * vehicle.max_speed).any() and k > 60)
    assert saturated > 20 and stopped
    assert travelled.min() > 10 * vehicle.length  # every car did go somewhere


def _world_velocity(state: np.ndarray) -> np.ndarray:
    c, sn = np.cos(state[:, 2]), np.sin(state[:, 2])
    return np.stack([c * state[:, 3] - sn * state[:, 4], sn * state[:, 3] + c * state[:, 4]], 1)


def test_steady_state_cornering_follows_the_understeer_gradient():
    """Constant speed and steering angle in the linear tyre range: the yaw rate is the
    closed form ``r = vx * delta / (L + K vx^2)``, ``K = (1/Csf - 1/Csr) / (mu g)`` (the
    understeer gradient with the axle stiffness mu * C * Fz), within 1 %."""
    v = GT.replace(drag=0.0)
    speeds = (10.0, 25.0, 40.0)
    env = _open_field(len(speeds), v, 0.05)
    delta = 0.01  # rad
    command = delta / v.max_steer
    # each env holds its own speed: one P-controller per env
    for _ in range(200):
        vx = env.speed.numpy()
        throttle = np.clip(2.0 * (np.array(speeds) - vx), -1, 1)
        a = np.stack([throttle, np.full(len(speeds), command)], 1).astype(np.float32)
        env.step(wp.array(a, device=env.device))
    vx, r = env.speed.numpy().astype(np.float64), env.yaw_rate.numpy().astype(np.float64)
    wb = v.lf + v.lr
    k = (1.0 / v.cornering_front - 1.0 / v.cornering_rear) / (v.mu * G)
    expect = vx * delta / (wb + k * vx**2)
    np.testing.assert_allclose(vx, speeds, rtol=2e-3)
    np.testing.assert_allclose(r, expect, rtol=1e-2)
    assert k > 0 and r[-1] < vx[-1] * delta / wb * 0.9  # it understeers, measurably


@pytest.mark.parametrize("name", ["gt", "f1tenth"])
def test_steady_state_cornering_at_the_friction_limit(name):
    """A fixed steering angle and a slowly rising speed (throttle capped at 0.3): the
    acceleration across the car's path, ``|V x A| / |V|`` (world frame, every step above the
    kinematic blend), climbs to the friction limit ``mu g`` within 2 % and never exceeds it
    by more than 1 %: the closed form of the fastest steady cornering, ``v = sqrt(mu g R)``
    on a path of radius ``R``. The path at the limit is wider than the kinematic radius
    ``L / tan(delta)`` (the car understeers)."""
    base = GT if name == "gt" else F1TENTH
    v = base.replace(drag=0.0)
    dt = 0.05 if name == "gt" else 0.02
    env = _open_field(1, v, dt)
    limit = v.mu * G
    lateral, radius = [], []
    prev = _state(env)
    target = 0.05 * v.max_speed
    for _ in range(1500):
        target += 0.0003 * v.max_speed
        vx = env.speed.numpy()
        throttle = np.clip(2.0 * (target - vx), -1.0, 0.3)
        a = np.stack([throttle, np.full(1, 0.2)], 1).astype(np.float32)
        env.step(wp.array(a, device=env.device))
        s = _state(env)
        if s[0, 3] > 0.1 * v.max_speed:
            vel = _world_velocity(s)[0]
            acc = (vel - _world_velocity(prev)[0]) / dt
            lateral.append(abs(vel[0] * acc[1] - vel[1] * acc[0]) / np.linalg.norm(vel))
            radius.append(s[0, 3] / max(abs(s[0, 5]), 1e-9))
        prev = s
    lateral = np.array(lateral)
    assert lateral.max() <= 1.01 * limit
    assert lateral.max() >= 0.98 * limit
    top = int(np.argmax(lateral))
    assert radius[top] > (v.lf + v.lr) / math.tan(0.2 * v.max_steer)


def test_substeps_converge():
    """The substeps the env takes (from dt and the vehicle) integrate accurately below the
    friction limit: 100 steps of 0.1 s (accelerating, then weaving at up to 0.6 g) end
    within 0.5 % of the distance travelled of the same integration with 32 times as many
    substeps; a quarter of the step halves the difference or better (first order)."""
    vehicle, dt = GT, 0.1
    n = RaceConfig.for_vehicle("gt", dt=dt).car.substeps
    assert n == 6
    t = np.arange(100)
    actions = np.stack([np.where(t < 30, 1.0, 0.1), 0.1 * np.sin(2 * np.pi * t / 40)], 1)
    ends, travelled = [], 0.0
    for mult in (1, 4, 32):
        a = np.zeros(7)
        for k in range(100):
            b = oracle_step(a, actions[k], vehicle, dt, n * mult)
            travelled += np.linalg.norm(b[:2] - a[:2]) if mult == 1 else 0.0
            a = b
        ends.append(a[:2])
    err, err4 = np.linalg.norm(ends[0] - ends[2]), np.linalg.norm(ends[1] - ends[2])
    assert err < 0.005 * travelled and err4 < 0.5 * err
    assert travelled > 200.0


# ------------------------------------------------------------------------------ the env
def _host(env) -> dict:
    names = (
        "obs final_obs reward done done_reason position yaw speed lateral_speed yaw_rate "
        "steer final_lap_time"
    ).split()
    return {n: getattr(env, n).numpy().copy() for n in names}


def test_captured_replay_equals_eager_on_circuits():
    """A single-track env on circuits in metres with crashes and regenerations: the recorded
    step replays the eager one bit for bit (outputs poisoned before each replay)."""
    config = RaceConfig.for_vehicle("gt", max_episode_steps=40)
    eager = RaceEnv(3, "cpu", 11, config=config)
    graph = RaceEnv(3, "cpu", 11, config=config, captured=True)
    rng = np.random.default_rng(2)
    ended = 0
    for _ in range(90):
        a = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
        a[:, 0] = np.abs(a[:, 0])
        graph.obs.fill_(float("nan"))
        graph.reward.fill_(float("nan"))
        graph.speed.numpy()  # (a read: nothing cached)
        eager.step(wp.array(a, device="cpu"))
        graph.step(wp.array(a, device="cpu"))
        he, hg = _host(eager), _host(graph)
        for k in he:
            assert he[k].tobytes() == hg[k].tobytes(), k
        ended += int(he["done"].sum())
    assert ended >= 3  # episodes ended (time-outs, crashes) and courses were regenerated
    assert np.abs(_host(eager)["lateral_speed"]).max() > 0.0


def test_bitwise_the_same_for_any_cpu_thread_count():
    """Courses (circuits, regenerated at every crash) built on 1 or 3 CPU threads give the
    same env, bit for bit, over 60 steps of random driving with a racing line."""
    rng = np.random.default_rng(4)
    actions = rng.uniform(-1, 1, (60, 4, 2)).astype(np.float32)
    runs = []
    for threads in (1, 3):
        spec = presets.circuit(4, device="cpu", cpu_threads=threads, length_max=4000.0)
        config = RaceConfig.for_vehicle("gt", racing_line="observe", max_episode_steps=25)
        env = RaceEnv(4, seeds=5, config=config, spec=spec)
        hist = []
        for k in range(60):
            env.step(wp.array(actions[k], device="cpu"))
            hist.append(b"".join(v.tobytes() for v in _host(env).values()))
        runs.append((hist, env.epochs.numpy().sum(), env.racing_line.lap_time.numpy()))
    assert runs[0][0] == runs[1][0]
    assert runs[0][1] > 0  # regenerated on the way
    assert runs[0][2].tobytes() == runs[1][2].tobytes()


def test_metre_env_on_circuits_and_its_observation_scales():
    """``RaceConfig.for_vehicle("gt")``: circuits in metres, the vehicle's box and racing
    line, the state's lengths in units of the vehicle's length scale and its two dynamic
    columns; a line follower drives and the par is the vehicle's."""
    config = RaceConfig.for_vehicle("gt", racing_line="par")
    car = config.car
    assert config.unit == "m" and config.generator == "circuit"
    assert car.max_speed == GT.max_speed and car.max_lateral_accel == pytest.approx(GT.mu * G)
    assert car.length_scale == pytest.approx(GT.max_speed**2 / (GT.mu * G))
    assert config.state_dim == 8 + 2 * len(config.lookahead) + 2
    env = RaceEnv(2, "cpu", 0, config=config)
    assert env.course.result.length.numpy().min() > 3000.0  # metres
    np.testing.assert_allclose(env.half_extents.numpy(), [[2.3, 1.0]] * 2)
    par = env.racing_line.lap_time.numpy()
    assert np.all((par > 60.0) & (par < 250.0))  # a GT lap of a 3.5-7 km circuit
    # the line's limits are the vehicle's
    line = env.course.components["racing_line"].utility
    assert float(np.nanmax(env.racing_line.speed.numpy())) <= GT.max_speed * (1 + 1e-5)
    assert line is not None
    # the first observation: lateral offset and look-ahead in units of the length scale
    obs = env.obs.numpy()
    la = obs[:, 8 : 8 + 2 * len(config.lookahead)].reshape(2, -1, 2)
    ahead = np.array(config.lookahead) / car.length_scale
    assert np.all(la[:, -1, 0] > 0.5 * ahead[-1]) and np.all(la[:, -1, 0] <= ahead[-1] + 0.02)
    # drive: a line follower on the scaled observation keeps the car on the road a while
    for _ in range(150):
        o = env.obs.numpy()
        steer = np.clip(4.0 * np.arctan2(o[:, 11], np.maximum(o[:, 10], 1e-4)), -1, 1)
        throttle = np.clip(3.0 * (0.3 - o[:, 0]), -1, 1)
        env.step(wp.array(np.stack([throttle, steer], 1).astype(np.float32), device="cpu"))
    assert np.all(env.episode_progress.numpy() > 0.05)
    dyn = env.obs.numpy()[:, config.state_dim - 2 :]
    np.testing.assert_allclose(dyn[:, 0], env.lateral_speed.numpy() / GT.max_speed, rtol=1e-6)
    np.testing.assert_allclose(
        dyn[:, 1], env.yaw_rate.numpy() * GT.max_speed / (GT.mu * G), rtol=1e-5
    )


def test_real_circuits_at_their_own_size_and_per_episode_par_percent(tmp_path):
    """A real circuit read in metres drives at its own size; a lap's time is reported in
    seconds and as a percentage of the vehicle's par."""
    circuit = _wide_circle(radius=120.0, width=8.0)
    spec = io.tracks_spec([circuit], num_envs=2, device="cpu", units="metres")
    config = RaceConfig.for_vehicle("gt", racing_line="par", checkpoint_spacing=30.0)
    env = RaceEnv(2, seeds=0, config=config, spec=spec, new_course_on_reset=False)
    assert env.course.result.length.numpy()[0] == pytest.approx(2 * np.pi * 120.0, rel=1e-2)
    pct = env.par_percent()
    assert pct.shape == (2,) and np.isnan(pct).all()  # no lap yet
    par = env.racing_line.lap_time.numpy()
    # a circle of radius 120 m: the par is the friction limit's lap, 2 pi R / sqrt(mu g R)
    assert par[0] == pytest.approx(2 * np.pi * 120 / math.sqrt(GT.mu * G * 120), rel=0.1)


# ------------------------------------------------------------------------------ refusals
def test_mixing_units_is_refused_before_anything_is_built():
    spec_m = presets.circuit(2, device="cpu")
    with pytest.raises(ValueError, match=r"spec is in 'm' and config.unit = 'track units'"):
        RaceEnv(2, spec=spec_m)
    with pytest.raises(ValueError, match=r"spec is in 'track units' and config.unit = 'm'"):
        RaceEnv(2, spec=presets.track(num_envs=2, device="cpu"), config=RaceConfig.for_vehicle())
    with pytest.raises(ValueError, match=r"RaceConfig.generator = 'circuit'.*unit='m'"):
        RaceConfig(generator="circuit")
    with pytest.raises(ValueError, match=r"RaceConfig.unit = 'm'.*generator='circuit'"):
        RaceConfig(unit="m")
    with pytest.raises(ValueError, match=r"RaceConfig.dynamics = 'single_track'.*unit='m'"):
        RaceConfig(dynamics="single_track")
    with pytest.raises(ValueError, match=r"RaceConfig.max_speed = 3.0 is a field of the track"):
        RaceConfig.for_vehicle("gt", max_speed=3.0)
    with pytest.raises(ValueError, match=r"RaceConfig.half_extents"):
        RaceConfig.for_vehicle("gt", half_extents=(2.0, 1.0))


@pytest.mark.parametrize(
    "fields, match",
    [
        ({"cornering_front": 30.0}, r"VehicleSettings: .* unstable below its max_speed"),
        ({"mass": 0.0}, r"VehicleSettings.mass = 0.0 is out of range"),
        ({"mu": math.nan}, r"VehicleSettings.mu = nan"),
        ({"yaw_inertia": -1.0}, r"VehicleSettings.yaw_inertia"),
        ({"max_steer": 1.5}, r"VehicleSettings.max_steer = 1.5"),
        ({"drag": 1e-300}, r"VehicleSettings.drag"),
        ({"lf": "1"}, r"VehicleSettings.lf"),
    ],
)
def test_bad_vehicles_are_refused(fields, match):
    err = TypeError if isinstance(next(iter(fields.values())), str) else ValueError
    with pytest.raises(err, match=match):
        VehicleSettings(**fields)
    with pytest.raises(err, match=r"RaceConfig.vehicle: " + match):  # a mapping of fields
        RaceConfig(unit="m", generator="circuit", vehicle=fields)
    ((name, value),) = fields.items()
    flat = match if "unstable" in match else rf"RaceConfig.vehicle_{name}\b"
    with pytest.raises(err, match=flat):  # the flat keyword
        RaceConfig.for_vehicle("gt", **{f"vehicle_{name}": value})


def test_a_step_the_vehicle_cannot_integrate_is_refused():
    """A vehicle so stiff for its mass and inertia that ``dt`` would need more than 64
    substeps: refused naming dt and the largest dt that fits."""
    stiff = VehicleSettings(mass=1.0, yaw_inertia=1e-4, cornering_front=90.0, cornering_rear=95.0)
    with pytest.raises(ValueError, match=r"RaceConfig.dt = 0.5 s needs \d+ explicit substeps"):
        RaceConfig.for_vehicle(stiff, dt=0.5)
    RaceConfig.for_vehicle(stiff, dynamics="kinematic", dt=0.5)  # the kinematic car: fine


def test_vehicle_preset_names_and_flat_keywords():
    c = RaceConfig.for_vehicle("f1tenth", vehicle_mu=0.9)
    assert c.vehicle == F1TENTH.replace(mu=0.9) and c.vehicle_mu == 0.9
    assert RaceConfig(unit="m", generator="circuit", vehicle="f1tenth").vehicle == F1TENTH
    assert RaceConfig().vehicle == GT  # read only with unit="m"
    with pytest.raises(ValueError, match=r"vehicle = 'kart' is not a vehicle preset"):
        RaceConfig(unit="m", generator="circuit", vehicle="kart")
    assert c.dt == 0.04 and RaceConfig.for_vehicle("gt").dt == 0.1
