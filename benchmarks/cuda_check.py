"""One-shot CUDA check for a lent GPU: graphs, masks, replay == eager, timings at E=8192.

Run (on a machine with CUDA, from the repository root, after `pip install -e .`):

    python benchmarks/cuda_check.py --E 8192 --calls 5
    python benchmarks/cuda_check.py --device cpu --E 64 --calls 1   # a CPU dry run

For every built-in sampler (tracks and gates; the circuit sampler, in metres, as tracks through
presets.circuit: at E=8192 about 1800 beads each) it checks, on cuda:0:
- the generator's own graph: generate() twice equals a fresh generator's eager enqueue();
- masked regeneration through a recorded variant leaves unmasked envs bitwise unchanged;
- a user wp.ScopedCapture of enqueue(advance=True, mask=...) replays like the eager call;
and prints warm ms per generate() (graph replay) and yield.

For gate courses (Course.gates(presets.gates(gate_width=0.1), localize_window=8), once with
posts, collision=0.02, once with frames, tools.FrameCollision) it checks:
- the course's own graph: regenerate() twice equals an eager enqueue_generate() of a fresh
  course of the same seeds, bitwise: the gates, the course line, the collider's derived
  arrays (posts or frames) and the localizer's curvature;
- step() recorded in a wp.ScopedCapture and replayed (its outputs poisoned before every
  replay) equals eager step() of the twin course: progress events, contacts and frame, with
  agents moving along the course line (gates are passed, posts are hit);
- a masked regenerate(advance=True) through the course graph equals the twin's eager
  enqueue_generate() of the same mask and leaves the unmasked envs bitwise unchanged (gates,
  line, derived data, progress, localizer memory); the replay check then runs again;
and prints ms per step (eager and replayed) and per masked regeneration (1 env in 7).

The capture section (--only capture) checks the in-graph auto-reset: a masked
regenerate(mask=..., advance=True) recorded into a wp.ScopedCapture (behind a conditional node
when wp.is_conditional_graph_supported()) replays an all-zero mask as an exact no-op and a
nonzero mask like an eager twin, bitwise; and times, at --E, the all-zero replay against the
same call recorded inside track_gen.core.exec.unconditional() (a full body), the course's own graph
for an all-zero mask, and one captured step of a RaceEnv (captured=True).

The envs section (--only envs) steps RaceEnv (the default car and the GT single-track car in
metres) and the DroneRaceEnv recorded (captured=True) against an eager twin with the same
seeded actions, auto-resets included: every output bitwise; then ms per recorded and eager step.

The layouts section (--only layouts) builds every sampler's track generator twice, with
kernel_layout="per_env" and "per_item", checks the two produce bitwise-identical tracks
(full and masked regeneration) and prints warm ms per generate() of each, so the first GPU
run picks the default layout with numbers; then the same for a BandCollision (sdf bake via a
regeneration, sdf and segments step).

The sensors section (--only sensors) builds a track course with the per-step sensors of
issue 25 (tools.Lidar(360) with noise and dropout, tools.Lookahead(32), tools.ConeDetections
on cone props, tools.EgoRaster(64, cones and height)) and a gate course with
tools.NextGates(3, reveal_range, nominal_noise), twice each; it checks that a recorded
course step replays like the twin's eager step (every sensor output bitwise, poisoned before
each replay, the agents moving along the course), again after a masked reset and after a
masked regeneration through the course graph (the sensors' refresh and streams), and prints
the ms of each sensor's own step hook, of the whole step, eager and replayed, and of the
masked regeneration.

The min_time section (--only min_time) builds a gate course with the minimum-time par
(Course.gates(presets.gates(scale=20, gate_width=1), min_time={"t_max": 30, "v_max": 15}))
twice: the course graph's regenerate() equals the twin's eager enqueue_generate(), bitwise
(every MinTimeResult array), a masked regenerate(advance=True) through the graph equals the
twin's eager one and leaves the unmasked envs' pars bitwise unchanged, and the planner's plan()
recorded in a wp.ScopedCapture replays (outputs poisoned first) like its eager call; it prints
the ms of a full and of a masked re-plan (1 env in 7), the statuses and iterations, and the
three published paths (../shared/data/drone, when present) planned at E envs from rest to rest
beside their CPU times.

--device cpu runs every comparison on the CPU (eager calls and CPU captures: a course has no
graph of its own there), to check the logic without a GPU. --only picks one section. Exits
non-zero on a mismatch.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

import numpy as np
import warp as wp

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator, io
from track_gen.config import TRACK_GENERATORS
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import DiscCollisionUtility, FrameCollision, MinTimeUtility


def _bytes(res) -> bytes:
    return b"".join(getattr(res, f).numpy().tobytes() for f in res.__dataclass_fields__)


def track_config(g: str, E: int, device: str, **fields):
    """The track config of sampler ``g``: ``presets.circuit``'s for the circuit sampler (metres),
    else ``TrackGenConfig(generator=g, ...)``."""
    if g == "circuit":
        return presets.circuit(E, device=device, **fields).config
    return TrackGenConfig(generator=g, num_envs=E, device=device, **fields)


def check(family: str, g: str, E: int, calls: int, device: str) -> bool:
    make = (
        (
            lambda: GateGenerator(
                GateGenConfig(generator=g, num_envs=E, device=device, gate_width=0.1), seeds=3
            )
        )
        if family == "gates"
        else (lambda: TrackGenerator(track_config(g, E, device), seeds=3))
    )
    a, b = make(), make()
    a.generate()  # graph (recorded, replayed)
    b.enqueue()  # eager
    ok = _bytes(a.result) == _bytes(b.result)
    m = np.zeros(E, np.int32)
    m[::7] = 1
    for gen in (a, b):
        gen.inputs["regen_mask"].assign(m)
    before = (
        a.result.center.numpy().copy() if family == "track" else a.result.position.numpy().copy()
    )
    a.generate(advance=True, mask=a.inputs["regen_mask"])  # graph variant
    with wp.ScopedCapture(device=device) as cap:  # user capture
        b.enqueue(advance=True, mask=b.inputs["regen_mask"])
    wp.capture_launch(cap.graph)
    ok &= _bytes(a.result) == _bytes(b.result)
    after = a.result.center.numpy() if family == "track" else a.result.position.numpy()
    n = a.layout.N_max
    kept = np.repeat(m == 0, n)
    ok &= before[kept].tobytes() == after[kept].tobytes()
    wp.synchronize_device(device)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        a.generate(advance=True)
        wp.synchronize_device(device)
        times.append((time.perf_counter() - t0) * 1e3)
    y = a.result.valid.numpy().mean()
    print(
        f"{family:<6} {g:<11} E={E:<6} {np.median(times):9.2f} ms/call  yield {y:.4f}  "
        f"{'ok' if ok else 'MISMATCH'}",
        flush=True,
    )
    return bool(ok)


# ------------------------------------------------------------------------- gate courses
#: Poison written into the step outputs before every replay (no kernel writes these values).
POISON_INT, POISON_FLOAT = -12345, 1.25e30
#: Step outputs that are progress state (read and written by a step): never poisoned.
STEP_STATE = ("events.laps", "events.progress", "events.next_index")


def _fields(prefix: str, obj) -> dict:
    if obj is None:
        return {}
    return {
        f"{prefix}.{f}": getattr(obj, f)
        for f in obj.__dataclass_fields__
        if isinstance(getattr(obj, f), wp.array)
    }


def course_state(course) -> dict:
    """Every per-env array of a gate course: gates, course line, collider-derived data,
    localizer curvature and memory, progress events."""
    col, loc = course.collision, course.localizer
    if isinstance(col, DiscCollisionUtility):
        derived = {"posts.posts": col.posts, "posts.num_posts": col.num_posts}
    else:
        derived = {"frames.frame": col.frame, "frames.rotation": col.rotation}
        derived["frames.num_gates"] = col.num_gates
    return {
        **_fields("gates", course.result),
        **_fields("line", course.course_line.line),
        **derived,
        "localizer.curvature": loc.curvature,
        "localizer.memory": loc.memory,
        **_fields("events", course.progress.events),
    }


def step_outputs(res) -> dict:
    """The per-step results a course step writes: progress events, contacts, frame."""
    events, contacts = _fields("events", res.events), _fields("contacts", res.contacts)
    return {**events, **contacts, **_fields("frame", res.frame)}


def _host(arrays: dict, E: int) -> dict:
    """Host copies, one row per env (``.numpy()`` is a view on the cpu)."""
    return {k: a.numpy().copy().reshape(E, -1) for k, a in arrays.items()}


def _differ(a: dict, b: dict, rows=None) -> list[str]:
    """Names whose bytes differ (on ``rows`` only, when given)."""
    pick = slice(None) if rows is None else rows
    return [k for k in a if a[k][pick].tobytes() != b[k][pick].tobytes()]


def _report(what: str, diff: list[str]) -> bool:
    if diff:
        print(f"    MISMATCH {what}: {diff}", flush=True)
    return not diff


def _poison(res) -> None:
    """Overwrite every pure step output (not the progress state) with POISON values."""
    for name, arr in step_outputs(res).items():
        if name not in STEP_STATE:
            x = arr.numpy()
            fill = POISON_INT if np.issubdtype(x.dtype, np.integer) else POISON_FLOAT
            arr.assign(np.full(x.shape, fill, dtype=x.dtype))


def _replay_matches(res_a, graph, b, pos_a, pos_b, line, steps: int) -> tuple[bool, int, int]:
    """Replay the recorded step of course a (outputs ``res_a``) and run ``b.step()`` eagerly
    ``steps`` times, the agents moving one bead a step along ``line`` from just behind gate 0;
    returns (every step equal, gate passes, post or frame hits)."""
    E, L = line.num_envs, line.N_max
    center = line.center.numpy().reshape(E, L, 3).copy()
    count = np.maximum(line.count.numpy(), 1)
    ok, passes, hits = True, 0, 0
    for k in range(steps):
        p = np.nan_to_num(center[np.arange(E), (count - 2 + k) % count])
        pos_a.assign(p)
        pos_b.assign(p)
        _poison(res_a)
        wp.capture_launch(graph)
        res_b = b.step()
        diff = _differ(_host(step_outputs(res_a), E), _host(step_outputs(res_b), E))
        if ok:  # the first mismatching step only: later ones follow from it
            ok = _report(f"step {k}: replay != eager", diff)
        passes += int(res_b.events.passed.numpy().sum())
        hits += int(res_b.contacts.hit.numpy().sum())
    return ok, passes, hits


def check_course(kind: str, E: int, calls: int, device: str, steps: int = 24) -> bool:
    """One gate-course variant (``"posts"`` or ``"frames"``): course graph == eager, step
    replay == eager step, masked regeneration; prints timings. True when all match."""

    def make():
        collision = 0.02 if kind == "posts" else FrameCollision(0.01, 0.01, 0.01)
        return Course.gates(
            presets.gates(num_envs=E, device=device, gate_width=0.1),
            collision=collision,
            localize_window=8,
            seeds=3,
        )

    a, b = make(), make()
    a.regenerate()  # records the course's graph (CUDA) ...
    a.regenerate()  # ... and replays it
    b.enqueue_generate()  # eager
    ok = _report(
        "regenerate graph != eager", _differ(_host(course_state(a), E), _host(course_state(b), E))
    )

    bufs = []
    for course in (a, b):
        pos = wp.zeros(E, dtype=wp.vec3f, device=device)
        quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)
        he = wp.full(E, wp.vec2f(0.01, 0.01), dtype=wp.vec2f, device=device)
        course.bind(position=pos, orientation=quat, half_extents=he)
        bufs.append(pos)
    with wp.ScopedCapture(device=device) as cap:
        res_a = a.step()
    step_graph = cap.graph
    a.reset()
    b.reset()
    line = a.course_line.line
    same, passes, hits = _replay_matches(res_a, step_graph, b, *bufs, line, steps)
    ok &= same

    m = np.zeros(E, np.int32)
    m[::7] = 1
    for course in (a, b):
        course.inputs["regen_mask"].assign(m)
    before = _host(course_state(a), E)
    a.regenerate(mask=a.inputs["regen_mask"], advance=True)  # the course graph's variant
    b.enqueue_generate(mask=b.inputs["regen_mask"], advance=True)  # eager
    after = _host(course_state(a), E)
    ok &= _report("masked regenerate: an unmasked env changed", _differ(before, after, m == 0))
    ok &= _report("masked regenerate graph != eager", _differ(after, _host(course_state(b), E)))
    gen_ok = (after["gates.generation"][m != 0] == before["gates.generation"][m != 0] + 1).all()
    ok &= _report("masked regenerate: epochs", [] if gen_ok else ["gates.generation"])
    same, p2, h2 = _replay_matches(res_a, step_graph, b, *bufs, line, steps)
    ok &= same

    step_ms = _ms(b.step, device, calls)
    replay_ms = _ms(lambda: wp.capture_launch(step_graph), device, calls)
    regen = a.inputs["regen_mask"]
    masked_ms = _ms(lambda: a.regenerate(mask=regen, advance=True), device, calls)
    valid = (a.result.valid.numpy() != 0).mean()
    print(
        f"course {kind:<6} E={E:<6} step {step_ms:7.3f} ms  replay {replay_ms:7.3f} ms  "
        f"masked regenerate ({int(m.sum())} envs) {masked_ms:7.2f} ms  course graph "
        f"{'yes' if a.graph is not None else 'no'}  valid {valid:.4f}  passes {passes + p2}  "
        f"hits {hits + h2}  {'ok' if ok else 'MISMATCH'}",
        flush=True,
    )
    return bool(ok)


def _ms(fn, device, calls: int) -> float:
    fn()
    wp.synchronize_device(device)
    times = []
    for _ in range(max(calls, 1)):
        t0 = time.perf_counter()
        fn()
        wp.synchronize_device(device)
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def _course_bytes(course) -> bytes:
    r = course.result
    arrays = (r.center, r.generation, r.valid, course.checkpoints.position)
    return b"".join(a.numpy().tobytes() for a in arrays)


def check_capture(E: int, calls: int, device: str) -> bool:
    """The in-graph auto-reset: conditional node (where supported) vs unconditional body."""
    import track_gen.core.exec as tg_exec

    def make():
        return Course.track(
            presets.track(num_envs=E, device=device),
            checkpoint_spacing=0.6,
            collision="segments",
            seeds=11,
        )

    a, b, c = make(), make(), make()
    node = device != "cpu" and wp.is_conditional_graph_supported()
    mask = a.inputs["regen_mask"]
    with wp.ScopedCapture(device=device) as cap:
        recorded_node = tg_exec.use_conditional(device)
        a.regenerate(mask=mask, advance=True)
    with wp.ScopedCapture(device=device) as cap_full, tg_exec.unconditional():
        c.regenerate(mask=c.inputs["regen_mask"], advance=True)
    ok = recorded_node == node
    before = _course_bytes(a)
    zero_ms = _ms(lambda: wp.capture_launch(cap.graph), device, calls)
    ok &= _course_bytes(a) == before
    full_ms = _ms(lambda: wp.capture_launch(cap_full.graph), device, calls)
    own_ms = _ms(lambda: b.regenerate(mask=b.inputs["regen_mask"], advance=True), device, calls)
    m = np.zeros(E, np.int32)
    m[:: max(E // 64, 1)] = 1
    mask.assign(m)
    b.inputs["regen_mask"].assign(m)
    wp.capture_launch(cap.graph)
    b.enqueue_generate(mask=b.inputs["regen_mask"], advance=True)
    wp.synchronize_device(device)
    same = a.result.center.numpy().tobytes() == b.result.center.numpy().tobytes()
    same &= (a.result.generation.numpy() == b.result.generation.numpy()).all()
    ok &= bool(same)
    env_ms = float("nan")
    try:
        from track_gen.envs import RaceEnv

        env = RaceEnv(E, device, 3, captured=True)  # the whole step recorded once, replayed
        env_ms = _ms(lambda: env.step(), device, calls)
    except Exception as err:  # report, do not hide the other figures
        print(f"capture: RaceEnv step failed: {type(err).__name__}: {err}")
        ok = False
    print(
        f"capture E={E:<6} conditional node {'yes' if recorded_node else 'no '} "
        f"(supported {'yes' if node else 'no'})   all-zero replay {zero_ms:8.3f} ms   "
        f"unconditional body {full_ms:8.2f} ms   own graph all-zero {own_ms:8.3f} ms   "
        f"masked replay == eager {'yes' if same else 'NO'}   RaceEnv captured step "
        f"{env_ms:8.3f} ms   {'ok' if ok else 'MISMATCH'}",
        flush=True,
    )
    return bool(ok)


def check_layouts(E: int, calls: int, device: str, names) -> bool:
    """per_env vs per_item: bitwise-equal tracks and collisions, ms of each."""
    from track_gen.tools import BandCollision

    ok = True
    m = np.zeros(E, np.int32)
    m[::7] = 1
    for g in names:
        gens = {
            lay: TrackGenerator(track_config(g, E, device, kernel_layout=lay), seeds=5)
            for lay in ("per_env", "per_item")
        }
        ms = {
            lay: _ms(lambda gen=gen: gen.generate(advance=True), device, calls)
            for lay, gen in gens.items()
        }
        for gen in gens.values():
            gen.inputs["regen_mask"].assign(m)
            gen.generate(advance=True, mask=gen.inputs["regen_mask"])
        same = _bytes(gens["per_env"].result) == _bytes(gens["per_item"].result)
        ok &= same
        print(
            f"layouts track {g:<10} E={E:<6} per_env {ms['per_env']:9.3f} ms   "
            f"per_item {ms['per_item']:9.3f} ms   bitwise {'ok' if same else 'MISMATCH'}",
            flush=True,
        )
    for method in ("sdf", "segments"):
        courses = {}
        for lay in ("per_env", "per_item"):
            courses[lay] = Course.track(
                presets.track(num_envs=E, device=device),
                checkpoint_spacing=0.6,
                collision=BandCollision(method, kernel_layout=lay),
                seeds=13,
            )
        regen = {
            lay: _ms(lambda c=c: c.regenerate(advance=True), device, calls)
            for lay, c in courses.items()
        }
        for c in courses.values():
            n = c.generator.layout.N_max
            center = c.result.center.numpy().reshape(E, n, 3)
            c.bind(
                position=wp.array(
                    np.nan_to_num(center[:, 3]).astype(np.float32), dtype=wp.vec3f, device=device
                ),
                orientation=wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device),
                half_extents=wp.full(E, wp.vec2f(0.02, 0.01), dtype=wp.vec2f, device=device),
            )
        step = {lay: _ms(lambda c=c: c.step(), device, calls) for lay, c in courses.items()}
        outs = []
        for lay in ("per_env", "per_item"):
            c = courses[lay]
            c.collision.refresh()
            res = c.step()
            arrays = {**_fields("track", c.result), **step_outputs(res)}
            outs.append(b"".join(a.numpy().tobytes() for a in arrays.values()))
        same = outs[0] == outs[1]
        ok &= same
        print(
            f"layouts collision {method:<8} E={E:<6} regenerate per_env {regen['per_env']:9.3f} "
            f"ms per_item {regen['per_item']:9.3f} ms   step per_env {step['per_env']:8.3f} ms "
            f"per_item {step['per_item']:8.3f} ms   bitwise {'ok' if same else 'MISMATCH'}",
            flush=True,
        )
    return bool(ok)


# ------------------------------------------------------------------------------ sensors
#: Sensor outputs that are state (read and written by a step): never poisoned.
SENSOR_STATE = ("lidar.step",)


def _sensor_course(kind: str, E: int, device: str):
    """The sensors of issue 25 on one course: a track course with the lidar (360 beams, with
    noise and dropout), the lookahead (32), the cones and the raster (64 x 64, cones and
    height), or a gate course with the next gates (3, with reveal and nominal noise)."""
    from track_gen import tools

    if kind == "gates":
        return Course.gates(
            presets.gates(num_envs=E, device=device, gate_width=0.1),
            extra=[tools.NextGates(3, reveal_range=0.3, nominal_noise=0.05)],
            seeds=3,
        )
    return Course.track(
        presets.track(num_envs=E, device=device),
        checkpoint_spacing=0.6,
        extra=[
            tools.Localizer(),
            tools.Lookahead(32, 0.1),
            tools.Props("cone", 0.1),
            tools.ConeDetections(32, fov=2.0, max_range=1.5, dropout=0.1, noise=0.01),
            tools.Lidar(360, max_range=1.0, noise_std=0.005, dropout=0.01),
            tools.HeightFieldBake(128),
            tools.EgoRaster(64, 1.0, cones="props", height="heightfield"),
        ],
        seeds=3,
    )


SENSOR_NAMES = {"track": ("lookahead", "cones", "lidar", "raster"), "gates": ("next_gates",)}


def _sensor_outputs(course, kind: str) -> dict:
    out = {}
    for name in SENSOR_NAMES[kind]:
        out.update(_fields(name, course.components[name].result))
    return out


def _sensor_path(course, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Each env's agent path (the track's centre line, or the gate course's line), [E, L, 3],
    and its bead counts (at least 2)."""
    E = course.result.num_envs
    line = course.result if kind == "track" else course.course_line.line
    center = np.nan_to_num(line.center.numpy().reshape(E, -1, 3))
    return center, np.maximum(line.count.numpy(), 2)


def _sensor_replays(a, graph, b, kind, bufs, steps: int) -> bool:
    """Replay a's recorded step (its sensor outputs poisoned first) and run b.step() eagerly
    ``steps`` times, the agents one bead a step along the path, heading to the next bead;
    True when every sensor output is bitwise the same."""
    center, count = _sensor_path(b, kind)
    E = center.shape[0]
    rows = np.arange(E)
    for k in range(steps):
        here, ahead = center[rows, k % count], center[rows, (k + 1) % count]
        yaw = np.arctan2(ahead[:, 1] - here[:, 1], ahead[:, 0] - here[:, 0])
        quat = np.zeros((E, 4), np.float32)
        quat[:, 2], quat[:, 3] = np.sin(yaw / 2), np.cos(yaw / 2)
        for pos, orient in bufs:
            pos.assign(here.astype(np.float32))
            orient.assign(quat)
        for name, arr in _sensor_outputs(a, kind).items():
            if name not in SENSOR_STATE:
                x = arr.numpy()
                fill = POISON_INT if np.issubdtype(x.dtype, np.integer) else POISON_FLOAT
                arr.assign(np.full(x.shape, np.array(fill).astype(x.dtype)))  # uint8: 0xC7
        wp.capture_launch(graph)
        b.step()
        diff = _differ(_host(_sensor_outputs(a, kind), E), _host(_sensor_outputs(b, kind), E))
        if not _report(f"{kind} sensors step {k}: replay != eager", diff):
            return False  # later steps follow from the first mismatch
    return True


def check_sensors(E: int, calls: int, device: str, steps: int = 6) -> bool:
    """The per-step sensors: a recorded course step replays like the eager step of a twin
    course (every sensor output bitwise, outputs poisoned before each replay), again after a
    masked reset and after a masked regeneration through the course graph; prints the ms
    of each sensor's own step, of the whole step (eager and replayed) and of the masked
    regeneration (1 env in 7, the sensors' refresh included)."""
    ok = True
    for kind in ("track", "gates"):
        ok &= _check_sensor_course(kind, E, calls, device, steps)
    return bool(ok)


def _check_sensor_course(kind: str, E: int, calls: int, device: str, steps: int) -> bool:
    a, b = _sensor_course(kind, E, device), _sensor_course(kind, E, device)
    a.regenerate()  # records the course's graph (CUDA) ...
    a.regenerate()  # ... and replays it
    b.enqueue_generate()
    bufs = []
    for course in (a, b):
        pos = wp.zeros(E, dtype=wp.vec3f, device=device)
        quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)
        course.bind(position=pos, orientation=quat)
        bufs.append((pos, quat))
    with wp.ScopedCapture(device=device) as cap:
        a.step()
    graph = cap.graph
    a.reset()
    b.reset()
    same = _sensor_replays(a, graph, b, kind, bufs, steps)
    m = np.zeros(E, np.int32)
    m[::7] = 1
    a.reset(wp.array(m, dtype=wp.int32, device=device))
    b.reset(wp.array(m, dtype=wp.int32, device=device))
    same = same and _sensor_replays(a, graph, b, kind, bufs, steps)
    for course in (a, b):
        course.inputs["regen_mask"].assign(m)
    a.regenerate(mask=a.inputs["regen_mask"], advance=True)  # the course graph's variant
    b.enqueue_generate(mask=b.inputs["regen_mask"], advance=True)  # eager
    same = same and _sensor_replays(a, graph, b, kind, bufs, steps)
    ctx = b._ctx  # the components' hooks' argument
    for name in SENSOR_NAMES[kind]:
        comp = b.components[name]
        hook_ms = _ms(lambda comp=comp: comp.step(ctx), device, calls)
        print(f"sensor {name:<10} E={E:<6} own step {hook_ms:8.3f} ms", flush=True)
    step_ms = _ms(b.step, device, calls)
    replay_ms = _ms(lambda: wp.capture_launch(graph), device, calls)
    regen = a.inputs["regen_mask"]
    masked_ms = _ms(lambda: a.regenerate(mask=regen, advance=True), device, calls)
    print(
        f"sensors {kind:<6} E={E:<6} step {step_ms:8.3f} ms  replay {replay_ms:8.3f} ms  "
        f"masked regenerate ({int(m.sum())} envs) {masked_ms:8.2f} ms  replay == eager "
        f"{'yes' if same else 'NO'}  {'ok' if same else 'MISMATCH'}",
        flush=True,
    )
    return bool(same)


def _min_time_state(result, E: int) -> dict:
    out = _fields("min_time", result)
    return {k: a.numpy().copy().reshape(E, -1) for k, a in out.items()}


def _min_time_poison(result) -> None:
    for arr in _fields("min_time", result).values():
        x = arr.numpy()
        fill = POISON_INT if np.issubdtype(x.dtype, np.integer) else POISON_FLOAT
        arr.assign(np.full(x.shape, fill, dtype=x.dtype))


def _published_min_time(E: int, calls: int, device: str) -> bool:
    data = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "drone")
    files = sorted(glob.glob(os.path.join(data, "*.json")))
    if not files:
        print(f"min_time published paths: none under {data}, skipped", flush=True)
        return True
    paths = [io.read_waypoint_path(f) for f in files]
    p0 = paths[0]
    lim = {"t_max": p0.t_max, "v_max": p0.v_max, "gravity": p0.gravity}
    planners = {
        dev: MinTimeUtility(
            **io.waypoint_arrays(paths, num_envs=n, device=dev), closed=False, **lim
        )
        for dev, n in ((device, E), ("cpu", len(paths)))
    }
    here, cpu = planners[device], planners["cpu"]
    ms = _ms(here.plan, device, calls)
    t_dev = here.result.time.numpy()
    t_cpu = cpu.result.time.numpy()
    ok = True
    for k, p in enumerate(paths):
        rel = float(np.abs(t_dev[k :: len(paths)] - t_cpu[k]).max() / t_cpu[k])
        same = bool((here.result.status.numpy()[k :: len(paths)] == 0).all()) and rel < 1e-4
        ok &= same
        print(
            f"min_time {p.name:<8} E={E:<6} {t_dev[k]:9.4f} s (cpu {t_cpu[k]:9.4f}, max rel "
            f"diff {rel:.1e}; reference {p.reference_time} s)  {'ok' if same else 'MISMATCH'}",
            flush=True,
        )
    print(f"min_time published paths E={E}: plan {ms:8.2f} ms ({1e3 * ms / E:.2f} us/path)")
    return ok


def check_min_time(E: int, calls: int, device: str) -> bool:
    """The min_time component: course graph == eager, masked re-plan, plan() replay."""

    def make():
        return Course.gates(
            presets.gates(num_envs=E, device=device, scale=20.0, gate_width=1.0),
            min_time={"t_max": 30.0, "v_max": 15.0},
            seeds=5,
        )

    a, b = make(), make()
    a.regenerate()  # records the course's graph (CUDA) ...
    a.regenerate()  # ... and replays it
    b.enqueue_generate()  # eager
    ra, rb = a.components["min_time"].result, b.components["min_time"].result
    ok = _report(
        "regenerate graph != eager", _differ(_min_time_state(ra, E), _min_time_state(rb, E))
    )
    m = np.zeros(E, np.int32)
    m[::7] = 1
    for course in (a, b):
        course.inputs["regen_mask"].assign(m)
    before = _min_time_state(ra, E)
    a.regenerate(mask=a.inputs["regen_mask"], advance=True)
    b.enqueue_generate(mask=b.inputs["regen_mask"], advance=True)
    after = _min_time_state(ra, E)
    ok &= _report("masked re-plan: an unmasked env changed", _differ(before, after, m == 0))
    ok &= _report("masked re-plan graph != eager", _differ(after, _min_time_state(rb, E)))
    planner = a.min_time
    eager = _min_time_state(ra, E)
    with wp.ScopedCapture(device=device) as cap:
        planner.plan()
    _min_time_poison(ra)
    wp.capture_launch(cap.graph)
    ok &= _report("plan() replay != eager", _differ(_min_time_state(ra, E), eager))
    full_ms = _ms(lambda: wp.capture_launch(cap.graph), device, calls)
    regen = a.inputs["regen_mask"]
    masked_ms = _ms(lambda: a.regenerate(mask=regen, advance=True), device, calls)
    st = ra.status.numpy()
    it = ra.iterations.numpy()
    print(
        f"min_time course E={E:<6} plan {full_ms:8.2f} ms ({1e3 * full_ms / E:.2f} us/env)  "
        f"masked regenerate ({int(m.sum())} envs) {masked_ms:7.2f} ms  converged "
        f"{int((st == 0).sum())}/{E}  iterations mean {it.mean():.1f} max {it.max()}  "
        f"{'ok' if ok else 'MISMATCH'}",
        flush=True,
    )
    ok &= _published_min_time(E, calls, device)
    return bool(ok)


def _env_makers(E: int, device: str) -> dict:
    """The envs the ``envs`` section steps: RaceEnv's default car, the GT single-track car in
    metres and the 5-inch drone."""
    from track_gen.envs import DroneRaceEnv, RaceConfig, RaceEnv

    gt = RaceConfig.for_vehicle("gt", dynamics="single_track")
    return {
        "race": lambda captured: RaceEnv(E, device, 3, captured=captured),
        "race_single_track": lambda captured: RaceEnv(E, device, 3, captured=captured, config=gt),
        "drone": lambda captured: DroneRaceEnv(E, device, 3, captured=captured),
    }


def _env_outputs(env) -> bytes:
    out = env.outputs
    return b"".join(a.numpy().tobytes() for a in (out.obs, out.reward, out.done, out.ok))


def check_envs(E: int, calls: int, device: str, steps: int = 12) -> bool:
    """Each env recorded (``captured=True``) against the same env stepped eagerly, the same
    actions (uniform in [-1, 1], seeded), ``steps`` steps with auto-resets: every output
    bitwise; then ms per recorded and per eager step."""
    ok = True
    for name, make in _env_makers(E, device).items():
        try:
            a, b = make(True), make(False)
            rng = np.random.default_rng(0)
            same = True
            for _ in range(steps):
                act = rng.uniform(-1.0, 1.0, a.actions.shape).astype(np.float32)
                a.actions.assign(act)
                b.actions.assign(act)
                a.step()
                b.step()
                same &= _env_outputs(a) == _env_outputs(b)
            rec_ms = _ms(lambda a=a: a.step(), device, calls)
            eager_ms = _ms(lambda b=b: b.step(), device, calls)
        except Exception as err:  # report, do not hide the other envs
            print(f"env {name}: failed: {type(err).__name__}: {err}", flush=True)
            ok = False
            continue
        ok &= bool(same)
        print(
            f"env {name:<18} E={E:<6} captured == eager over {steps} steps "
            f"{'yes' if same else 'NO'}   recorded step {rec_ms:8.3f} ms   eager step "
            f"{eager_ms:8.3f} ms   {'ok' if same else 'MISMATCH'}",
            flush=True,
        )
    return bool(ok)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--E", type=int, default=8192)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--device", default="cuda:0", help="cuda:0, or cpu for a dry run")
    ap.add_argument(
        "--only",
        choices=("generators", "courses", "capture", "layouts", "sensors", "min_time", "envs"),
        default=None,
        help="run one section only",
    )
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    device = args.device
    if device != "cpu" and wp.get_cuda_device_count() == 0:
        print("no CUDA device (pass --device cpu for a dry run)", file=sys.stderr)
        return 2
    names = list(TRACK_GENERATORS)
    ok = True
    if args.only in (None, "generators"):
        for g in names:
            ok &= check("track", g, args.E, args.calls, device)
        for g in names:
            if g != "circuit":  # circuits are tracks only
                ok &= check("gates", g, args.E, args.calls, device)
    if args.only in (None, "courses"):
        for kind in ("posts", "frames"):
            ok &= check_course(kind, args.E, args.calls, device)
    if args.only in (None, "capture"):
        ok &= check_capture(args.E, args.calls, device)
    if args.only in (None, "layouts"):
        # repulsive is left out: its sampler, not the layout stages, sets its time
        ok &= check_layouts(args.E, args.calls, device, [g for g in names if g != "repulsive"])
    if args.only in (None, "sensors"):
        ok &= check_sensors(args.E, args.calls, device)
    if args.only in (None, "min_time"):
        ok &= check_min_time(args.E, args.calls, device)
    if args.only in (None, "envs"):
        ok &= check_envs(args.E, args.calls, device)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
