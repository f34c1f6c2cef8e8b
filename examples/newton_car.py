"""A four-wheel car per world in the Newton physics engine, on regenerated track_gen courses.

Run:  python examples/newton_car.py --device cpu --num-envs 4 --steps 600
      python examples/newton_car.py --check        (what tests/test_examples.py runs)

Needs Newton: pip install 'track_gen[newton]'.

E Newton worlds, one course each (metres: a 1.5 m wide road about 12 m across, climbing up to
0.6 m, cones along both borders). `track_gen.interop.newton.NewtonCourse` builds each world's
height field and cones once; each world gets a car built here in Newton: a box chassis, four
sphere wheels on revolute axles, the front two on steering knuckles (a revolute joint about
the chassis' z axis driven to a target angle), torque on the rear axles. The course reads the
chassis poses through `BodyPoses` (bound once): checkpoints and progress, the band collision
(off the road) and the localizer, whose lateral offset and tangent steer the car. One
recorded step (`wp.ScopedCapture`, on the CPU too; `--eager` runs it without the graph):

    physics (collide + XPBD substeps) -> poses.update -> course.step() -> control and done
    -> course.regenerate(mask=done, advance=True) -> shapes.write(done) -> respawn(done)

A world is done when its car left the road (band collision), fell or flipped, finished
--laps laps, ran out of time, or its course is invalid: its course is regenerated, written
into the Newton model in place, and its car respawned at the new start line.

--check (E=4): every car makes progress under constant throttle; a regeneration forced on
world 0 gives it a new course whose heights and cones reach Newton (and only there: the other
worlds' engine data is bitwise unchanged), restarts its car, and the other cars carry on; no
NaN reaches a pose; a parked car sits on the road at the baked height.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings

import numpy as np
import warp as wp

from track_gen.course import Course
from track_gen.interop.newton import BodyPoses, NewtonCourse, require_newton
from track_gen.pipeline import presets
from track_gen.tools import HeightFieldBake, Localizer, Props

# the car, metres and kilograms per cubic metre
CHASSIS = (0.22, 0.10, 0.04)  # half extents
CHASSIS_DENSITY = 400.0
WHEEL_RADIUS = 0.07
WHEEL_DENSITY = 300.0
AXLE = (0.16, 0.18, -0.05)  # wheel centres at (+-x, +-y, z) from the chassis centre
STEER_LIMIT = 0.6  # rad
STEER_KE = 2000.0  # the knuckles' target stiffness
TORQUE = 0.5  # N m per rear wheel at full throttle
TOP_SPEED = 1.5  # m/s: the torque fades to 0 there
LOOKAHEAD = 1.5  # m: pure pursuit's target distance
SPAWN_CLEARANCE = 0.02  # m above the road
SPAWN_BACK = 0.5  # m behind the start line (checkpoint 0), so the first crossing counts
FPS, SUBSTEPS = 60, 8

# the bodies of one car, in build order: chassis, then (knuckle, wheel) x 2 front, wheel x 2
BODIES_PER_CAR = 7
_REAR_WHEEL_JOINT = wp.constant(0)


def course_for(E: int, device, seeds: int = 3) -> Course:
    """A track course in metres with the components the Newton side needs."""
    spec = presets.track(
        num_envs=E,
        device=device,
        scale=12.0,
        half_width=1.0,
        z_profile="random_walk",
        z_base=0.3,
        z_min=0.0,
        z_max=0.6,
        z_max_step=0.08,
        z_valid_grade=0.15,
    )
    return Course.track(
        spec,
        checkpoint_spacing=3.0,
        collision="segments",
        extra=(
            Localizer(),
            HeightFieldBake(64, fill=-0.2),
            Props("cone", spacing=2.0, max_props=48, cone_diameter=0.25, cone_height=0.35),
        ),
        seeds=seeds,
    )


def add_car(builder, newton) -> dict:
    """One car in the builder's current world, at the origin; returns its body ids, the
    joints that steer and drive, and each body's rest transform relative to the chassis."""
    shape = newton.ModelBuilder.ShapeConfig
    hx, hy, hz = CHASSIS
    ax, ay, az = AXLE
    chassis = builder.add_link(xform=wp.transform_identity())
    chassis_shape = builder.add_shape_box(
        chassis, hx=hx, hy=hy, hz=hz, cfg=shape(density=CHASSIS_DENSITY)
    )
    joints = [builder.add_joint_free(chassis)]
    steer, drive, bodies = [], [], [chassis]
    for x, y, front in ((ax, ay, True), (ax, -ay, True), (-ax, ay, False), (-ax, -ay, False)):
        parent, anchor = chassis, wp.transform((x, y, az), wp.quat_identity())
        if front:
            knuckle = builder.add_link(
                xform=wp.transform((x, y, az), wp.quat_identity()),
                mass=0.05,
                inertia=wp.mat33(np.eye(3) * 2.0e-5),
            )
            steer.append(
                builder.add_joint_revolute(
                    chassis,
                    knuckle,
                    parent_xform=anchor,
                    axis=(0.0, 0.0, 1.0),
                    target_ke=STEER_KE,
                    limit_lower=-STEER_LIMIT,
                    limit_upper=STEER_LIMIT,
                )
            )
            joints.append(steer[-1])
            bodies.append(knuckle)
            parent, anchor = knuckle, wp.transform_identity()
        wheel = builder.add_link(xform=wp.transform((x, y, az), wp.quat_identity()))
        wheel_shape = builder.add_shape_sphere(
            wheel, radius=WHEEL_RADIUS, cfg=shape(density=WHEEL_DENSITY, mu=1.0)
        )
        builder.add_shape_collision_filter_pair(chassis_shape, wheel_shape)
        axle = builder.add_joint_revolute(parent, wheel, parent_xform=anchor, axis=(0.0, 1.0, 0.0))
        joints.append(axle)
        bodies.append(wheel)
        if not front:
            drive.append(axle)
    builder.add_articulation(joints)
    return {"bodies": bodies, "steer": steer, "drive": drive}


# ----------------------------------------------------------------------------- kernels
@wp.kernel
def control(
    # inputs
    valid: wp.array(dtype=wp.int32),
    center: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    segment: wp.array(dtype=wp.int32),
    body_q: wp.array(dtype=wp.transformf),
    body_qd: wp.array(dtype=wp.spatial_vectorf),
    chassis: wp.array(dtype=wp.int32),
    steer_q: wp.array(dtype=wp.int32),
    drive_qd: wp.array(dtype=wp.int32),
    throttle: wp.array(dtype=wp.float32),
    # static
    n_max: int,
    lookahead: float,
    wheelbase: float,
    steer_limit: float,
    torque: float,
    top_speed: float,
    # outputs
    target_q_out: wp.array(dtype=wp.float32),
    joint_f_out: wp.array(dtype=wp.float32),
):
    """Pure pursuit: steer both front knuckles towards the first centerline bead at least
    ``lookahead`` metres ahead of the localizer's segment (``atan(wheelbase * 2 y / d^2)``,
    ``y`` the target's lateral offset in the car frame, ``d`` its distance); drive both rear
    axles with ``throttle * torque``, fading to 0 at ``top_speed`` (forward speed)."""
    e = wp.tid()
    x = body_q[chassis[e]]
    pos = wp.transform_get_translation(x)
    rot = wp.transform_get_rotation(x)
    fwd = wp.quat_rotate(rot, wp.vec3f(1.0, 0.0, 0.0))
    left = wp.quat_rotate(rot, wp.vec3f(0.0, 1.0, 0.0))
    n = count[e]
    seg = segment[e]
    delta = float(0.0)
    if valid[e] != 0 and n >= 2 and seg >= 0:
        target = center[e * n_max + (seg + 1) % n]
        for j in range(n):
            target = center[e * n_max + (seg + 1 + j) % n]
            if wp.length(target - pos) >= lookahead:
                break
        d = target - pos
        y = wp.dot(d, left)
        dist2 = wp.max(wp.dot(d, d), 1.0e-6)
        delta = wp.clamp(wp.atan(wheelbase * 2.0 * y / dist2), -steer_limit, steer_limit)
    target_q_out[steer_q[2 * e]] = delta
    target_q_out[steer_q[2 * e + 1]] = delta
    v = wp.spatial_top(body_qd[chassis[e]])
    speed = wp.dot(v, fwd)
    tau = throttle[e] * torque * wp.clamp(1.0 - speed / top_speed, 0.0, 1.0)
    joint_f_out[drive_qd[2 * e]] = tau
    joint_f_out[drive_qd[2 * e + 1]] = tau


@wp.kernel
def episode_done(
    # inputs
    valid: wp.array(dtype=wp.int32),
    oob: wp.array(dtype=wp.int32),
    laps: wp.array(dtype=wp.int32),
    n_up: wp.array(dtype=wp.float32),
    orientation: wp.array(dtype=wp.quatf),
    force: wp.array(dtype=wp.int32),
    # static
    max_laps: int,
    max_age: int,
    # outputs
    age_inout: wp.array(dtype=wp.int32),
    done_out: wp.array(dtype=wp.int32),
):
    """Every entry of ``done``, every step: off the road, fallen (more than 0.5 m below the
    road) or flipped, ``max_laps`` laps, ``max_age`` steps, an invalid course, or forced."""
    e = wp.tid()
    a = age_inout[e] + 1
    up = wp.quat_rotate(orientation[e], wp.vec3f(0.0, 0.0, 1.0))
    d = int(0)
    if valid[e] == 0 or oob[e] != 0 or laps[e] >= max_laps or a >= max_age:
        d = 1
    if not (n_up[e] > -0.5) or up[2] < 0.3 or force[e] != 0:
        d = 1
    age_inout[e] = wp.where(d != 0, 0, a)
    done_out[e] = d


@wp.kernel
def respawn(
    # inputs
    mask: wp.array(dtype=wp.int32),
    center: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    rest: wp.array(dtype=wp.transformf),
    # static
    n_max: int,
    bodies_per_car: int,
    lift: float,
    back: float,
    # outputs
    body_q_out: wp.array(dtype=wp.transformf),
    body_qd_out: wp.array(dtype=wp.spatial_vectorf),
):
    """Body ``k`` of car ``e`` (masked): ``back`` behind bead 0 of the env's (new) course (the
    start line) along the chord to bead 1, ``lift`` above it, facing bead 1, in its rest pose;
    at rest. A course with fewer than 2 beads (an
    invalid env) puts the car at the origin."""
    e, k = wp.tid()
    if mask[e] == 0:
        return
    p = wp.vec3f(0.0, 0.0, lift)
    yaw = float(0.0)
    if count[e] >= 2:
        c0 = center[e * n_max]
        c1 = center[e * n_max + 1]
        p = c0 - back * wp.normalize(c1 - c0) + wp.vec3f(0.0, 0.0, lift)
        yaw = wp.atan2(c1[1] - c0[1], c1[0] - c0[0])
    spawn = wp.transformf(p, wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), yaw))
    b = e * bodies_per_car + k
    body_q_out[b] = wp.transform_multiply(spawn, rest[k])
    body_qd_out[b] = wp.spatial_vectorf(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


# ----------------------------------------------------------------------------- the scene
class Scene:
    """The course, the Newton model with E worlds (course shapes + a car each) and the step."""

    def __init__(self, E: int, device=None, max_laps: int = 2, max_age: int = 3600):
        newton = require_newton()
        self.E, self.max_laps, self.max_age = E, max_laps, max_age
        self.course = course = course_for(E, device)
        self.device = dev = course.device
        self.shapes = shapes = NewtonCourse(course)
        builder = newton.ModelBuilder()
        cars = []
        for e in range(E):
            builder.begin_world()
            shapes.add_world(builder, e)
            cars.append(add_car(builder, newton))
            builder.end_world()
        with warnings.catch_warnings():  # E height fields in E worlds never meet
            warnings.filterwarnings("ignore", message="Heightfield-vs-heightfield")
            self.model = model = builder.finalize(device=dev)
        shapes.attach(model)
        first = [c["bodies"][0] for c in cars]
        for c, b in zip(cars, first, strict=True):  # a car's bodies are contiguous
            assert c["bodies"] == list(range(b, b + BODIES_PER_CAR))
        assert first == [e * BODIES_PER_CAR + first[0] for e in range(E)] and first[0] == 0
        q_start = model.joint_q_start.numpy()
        qd_start = model.joint_qd_start.numpy()
        self.chassis = wp.array(first, dtype=wp.int32, device=dev)
        steer = [q_start[j] for c in cars for j in c["steer"]]
        drive = [qd_start[j] for c in cars for j in c["drive"]]
        self.steer_q = wp.array(steer, dtype=wp.int32, device=dev)
        self.drive_qd = wp.array(drive, dtype=wp.int32, device=dev)
        rest = model.body_q.numpy()[:BODIES_PER_CAR]  # car 0 at the origin
        self.rest = wp.array(rest, dtype=wp.transformf, device=dev)

        self.solver = newton.solvers.SolverXPBD(model, iterations=4)
        self.pipeline = newton.CollisionPipeline(model)
        self.contacts = self.pipeline.contacts()
        self.state0, self.state1 = model.state(), model.state()
        self.control = model.control()
        self.dt = 1.0 / (FPS * SUBSTEPS)

        self.poses = BodyPoses(first, dev)
        half = wp.full(E, wp.vec2f(CHASSIS[0], CHASSIS[1]), dtype=wp.vec2f, device=dev)
        p, q = self.poses.position, self.poses.orientation
        course.bind(position=p, orientation=q, half_extents=half)  # once
        self.throttle = wp.full(E, 1.0, dtype=wp.float32, device=dev)
        self.force = wp.zeros(E, dtype=wp.int32, device=dev)
        self.age = wp.zeros(E, dtype=wp.int32, device=dev)
        self.done = course.inputs["regen_mask"]
        self.spawn(wp.full(E, 1, dtype=wp.int32, device=dev))
        self.graph = None

    def spawn(self, mask) -> None:
        """Put the masked cars at their start lines (and refresh the bound poses)."""
        t = self.course.result
        wp.launch(
            respawn,
            (self.E, BODIES_PER_CAR),
            inputs=[mask, t.center, t.count, self.rest, t.N_max, BODIES_PER_CAR]
            + [WHEEL_RADIUS - AXLE[2] + SPAWN_CLEARANCE, SPAWN_BACK],
            outputs=[self.state0.body_q, self.state0.body_qd],
            device=self.device,
        )
        self.poses.update(self.state0.body_q)

    def physics(self) -> None:
        """One frame: collide, then SUBSTEPS XPBD steps (an even count: the frame ends in
        state0)."""
        self.pipeline.collide(self.state0, self.contacts)
        for _ in range(SUBSTEPS):
            self.state0.clear_forces()
            self.solver.step(self.state0, self.state1, self.control, self.contacts, self.dt)
            self.state0, self.state1 = self.state1, self.state0

    def body(self) -> None:
        """The whole RL step (what the graph records)."""
        course, frame, t = self.course, self.course.localizer.frame, self.course.result
        self.physics()
        self.poses.update(self.state0.body_q)
        res = course.step()
        wp.launch(
            control,
            self.E,
            inputs=[res.valid, t.center, t.count, frame.segment, self.state0.body_q]
            + [self.state0.body_qd, self.chassis, self.steer_q, self.drive_qd, self.throttle]
            + [t.N_max, LOOKAHEAD, 2.0 * AXLE[0], STEER_LIMIT, TORQUE, TOP_SPEED],
            outputs=[self.control.joint_target_q, self.control.joint_f],
            device=self.device,
        )
        wp.launch(
            episode_done,
            self.E,
            inputs=[res.valid, res.contacts.oob, res.events.laps, frame.n_up]
            + [self.poses.orientation, self.force, self.max_laps, self.max_age],
            outputs=[self.age, self.done],
            device=self.device,
        )
        course.regenerate(mask=self.done, advance=True)  # new courses where done
        self.shapes.write(self.done)  # their heights and cones, into Newton
        self.spawn(self.done)  # their cars at the new start lines

    def record(self) -> None:
        with wp.ScopedCapture(device=self.device) as cap:
            self.body()
        self.graph = cap.graph

    def step(self) -> None:
        if self.graph is not None:
            wp.capture_launch(self.graph)
        else:
            self.body()


# ----------------------------------------------------------------------------- checks
class CheckError(AssertionError):
    pass


def check(ok: bool, what: str) -> None:
    if not ok:
        raise CheckError(what)


def world_rows(model, E: int) -> dict[str, list[np.ndarray]]:
    """Each world's rows of the engine data a write may touch: its shapes' transforms,
    scales and radii and its height field's elevations (host copies)."""
    world = model.shape_world.numpy()
    idx = model.shape_heightfield_index.numpy()
    offsets = model.heightfield_data.numpy()
    elev = model.heightfield_elevations.numpy()
    out: dict[str, list[np.ndarray]] = {"transform": [], "scale": [], "elevation": []}
    for e in range(E):
        rows = np.flatnonzero(world == e)
        out["transform"].append(model.shape_transform.numpy()[rows].copy())
        out["scale"].append(model.shape_scale.numpy()[rows].copy())
        hf = rows[idx[rows] >= 0]
        h = offsets[idx[hf[0]]]
        start, n = int(h["data_offset"]), int(h["nrow"]) * int(h["ncol"])
        out["elevation"].append(elev[start : start + n].copy())
    return out


def run_check(scene: Scene, steps: int) -> dict:
    """The --check run (see the module docstring); returns what it measured."""
    E, course = scene.E, scene.course
    loc, ev = course.localizer.frame, course.progress.events
    # a parked car settles on the road: chassis height above the baked road
    scene.throttle.fill_(0.0)
    for _ in range(30):
        scene.step()
    z = scene.poses.position.numpy()[:, 2]
    field = course.heightfield.field
    bake = sample_bake(field, scene.poses.position.numpy())
    expect = WHEEL_RADIUS - AXLE[2]
    grade, cell = 0.15, max(float(field.frame.numpy()[:, 2].max()), scene.shapes.cell)
    error = np.abs(z - bake - expect)
    check(np.isfinite(z).all(), f"NaN chassis height: {z}")
    check(
        (error <= grade * cell + 0.005).all(),
        f"parked chassis heights above the bake {z - bake} m, expected {expect} "
        f"(+- {grade * cell + 0.005:.3f}: one cell's grade plus 5 mm)",
    )
    # constant throttle: every car makes progress
    scene.throttle.fill_(1.0)
    gen0 = course.result.generation.numpy().copy()
    for _ in range(steps):
        scene.step()
    gen = course.result.generation.numpy()
    progress = ev.progress.numpy().copy()
    ended = gen != gen0
    check(
        ((progress >= 1) | ended).all() and (progress >= 1).any(),
        f"progress {progress.tolist()} checkpoints (regenerated: {np.flatnonzero(ended)})",
    )
    # force a regeneration of world 0: it restarts, the others carry on
    before = world_rows(scene.model, E)
    s_before = loc.s.numpy().copy()
    prog_before = ev.progress.numpy().copy()
    gen0 = course.result.generation.numpy().copy()
    ptrs = {k: v.ptr for k, v in vars(scene.model).items() if isinstance(v, wp.array)}
    force = np.zeros(E, np.int32)
    force[0] = 1
    scene.force.assign(force)
    scene.step()
    scene.force.zero_()
    done = scene.done.numpy().copy()
    after = world_rows(scene.model, E)
    gen = course.result.generation.numpy()
    check(done[0] == 1 and gen[0] == gen0[0] + 1, f"world 0 not regenerated: done {done}")
    check(
        ptrs == {k: v.ptr for k, v in vars(scene.model).items() if isinstance(v, wp.array)},
        "a model array moved",
    )
    for e in range(E):
        same = all(np.array_equal(before[k][e], after[k][e]) for k in before)
        if done[e]:
            check(
                not np.array_equal(before["elevation"][e], after["elevation"][e]),
                f"world {e} was regenerated but its heights did not change",
            )
        else:
            check(same, f"world {e} was not regenerated but its engine data changed")
    scene.step()  # the localizer answers for the respawned car
    s_after = loc.s.numpy()
    length = course.result.length.numpy()
    from_start = min(s_after[0], length[0] - s_after[0])
    check(from_start < SPAWN_BACK + 0.1, f"world 0's car did not restart: s = {s_after[0]:.2f} m")
    for _ in range(30):
        scene.step()
    prog = ev.progress.numpy()
    others = [
        e for e in range(1, E) if not done[e] and course.result.generation.numpy()[e] == gen[e]
    ]
    check(
        all(prog[e] >= prog_before[e] for e in others),
        f"the other cars lost progress: {prog_before.tolist()} -> {prog.tolist()}",
    )
    check(np.isfinite(scene.poses.position.numpy()).all(), "NaN pose")
    return {
        "progress": progress,
        "s_before": s_before,
        "restart_s": float(from_start),
        "height_error": float(error.max()),
    }


def sample_bake(field, xy: np.ndarray) -> np.ndarray:
    """NumPy bilinear of each env's bake at its point (texel centres, fill outside)."""
    E, res = field.num_envs, field.resolution
    h = field.height.numpy().reshape(E, res, res).astype(np.float64)
    out = np.zeros(E)
    for e, (x0, y0, cell, fill) in enumerate(field.frame.numpy().astype(np.float64)):
        u, v = (xy[e, 0] - x0) / cell - 0.5, (xy[e, 1] - y0) / cell - 0.5
        i, j = math.floor(u), math.floor(v)
        a, b = u - i, v - j

        def at(ii, jj, e=e, fill=fill):
            return h[e, jj, ii] if 0 <= ii < res and 0 <= jj < res else fill

        out[e] = (1 - b) * ((1 - a) * at(i, j) + a * at(i + 1, j)) + b * (
            (1 - a) * at(i, j + 1) + a * at(i + 1, j + 1)
        )
    return out


def time_write(scene: Scene, calls: int = 20) -> tuple[float, float]:
    """Wall and process CPU ms of one ``shapes.write`` of a single world (eager, after a
    regeneration of it)."""
    mask = np.zeros(scene.E, np.int32)
    mask[scene.E - 1] = 1
    m = wp.array(mask, dtype=wp.int32, device=scene.device)
    scene.course.regenerate(mask=m, advance=True)
    scene.spawn(m)
    wp.synchronize_device(scene.device)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(calls):
        scene.shapes.write(m)
    wp.synchronize_device(scene.device)
    return 1e3 * (time.perf_counter() - t0) / calls, 1e3 * (time.process_time() - c0) / calls


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--num-envs", type=int, default=4)
    ap.add_argument("--steps", type=int, default=600, help="frames of 1/60 s")
    ap.add_argument("--laps", type=int, default=2, help="laps that end an episode")
    ap.add_argument("--eager", action="store_true", help="run the step without the graph")
    ap.add_argument("--check", action="store_true", help="the test run (E=4, checks)")
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    if args.num_envs < 1 or args.steps < 1:
        ap.error("--num-envs and --steps must be >= 1")
    t0 = time.perf_counter()
    scene = Scene(4 if args.check else args.num_envs, args.device, max_laps=args.laps)
    if not args.eager:
        scene.record()
    build_s = time.perf_counter() - t0
    if args.check:
        try:
            out = run_check(scene, steps=min(args.steps, 240))
        except CheckError as err:
            print(f"FAIL: {err}")
            return 1
        print(
            f"progress {out['progress'].tolist()} checkpoints in 4 s; world 0 restarted "
            f"{out['restart_s']:.2f} m from its start; parked height error "
            f"{1e3 * out['height_error']:.1f} mm"
        )
        print(
            "ok: every car made progress; the forced regeneration reached Newton in world 0 "
            "only (model arrays unmoved, other worlds bitwise unchanged) and restarted its car "
            "while the others carried on"
        )
        return 0
    gen0 = scene.course.result.generation.numpy().copy()
    wp.synchronize_device(scene.device)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(args.steps):
        scene.step()
    wp.synchronize_device(scene.device)
    ms = 1e3 * (time.perf_counter() - t0) / args.steps
    cpu_ms = 1e3 * (time.process_time() - c0) / args.steps
    regenerated = int((scene.course.result.generation.numpy() - gen0).sum())
    write_ms, write_cpu = time_write(scene)
    mode = "eager" if args.eager else "recorded"
    print(
        f"{args.steps} steps x {scene.E} worlds on {scene.device} ({mode}): {ms:.2f} ms per step "
        f"({cpu_ms:.2f} ms process CPU; physics {SUBSTEPS} substeps, course, control, masked "
        f"regeneration, write, respawn); {regenerated} regenerations; one world's shapes.write "
        f"{write_ms:.3f} ms ({write_cpu:.3f} CPU); build {build_s:.1f} s; load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    print("ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
