"""The in-graph auto-reset recipe: the whole RL step, auto-reset included, as one replay.

Run:  python examples/ingraph_autoreset.py --device cpu --steps 40 --num-envs 32

The spec's recipe ("The recipe inside your graph"), verbatim: sim_step moves one kinematic
agent per env along its centerline with a deterministic lateral wobble (the agents with the
widest wobble leave the road, so oob fires), course.step() answers, reward_and_done gates
reward, observation and done on valid, course.regenerate(mask=done, advance=True) gives the
done envs a NEW course, and respawn puts their agents on bead 0 of it. wp.ScopedCapture
records on the CPU too, so this runs unchanged on a CPU machine.

Checks, every replayed step: (a) the replay is bitwise equal to the same step run eagerly on
a twin course (same seeds, same initial buffers), with every per-step output poisoned before
each replay so a replay that skips a write is caught; (b) the course changed exactly where
done was set (generation and centerline rows); (c) no NaN reached reward or obs_dist.
"""

from __future__ import annotations

import argparse
import time
from types import SimpleNamespace

import numpy as np
import warp as wp

from track_gen.course import Course
from track_gen.pipeline import presets

#: Poison written into every per-step output before a replay: a NaN with a payload no kernel
#: writes (so a skipped float write differs bitwise even where NaN is legitimate) and an int
#: no output takes (nonzero, so a skipped ``done`` write would regenerate the env).
POISON_NAN_BITS = 0x7FC0DEAD
POISON_INT = -12345


# fmt: off
# --- "The recipe inside your graph", verbatim
@wp.kernel
def reward_and_done(valid: wp.array(dtype=wp.int32), oob: wp.array(dtype=wp.int32),
                    passed: wp.array(dtype=wp.int32), dist: wp.array(dtype=wp.float32),
                    laps: wp.array(dtype=wp.int32), max_laps: int,
                    reward: wp.array(dtype=wp.float32), obs_dist: wp.array(dtype=wp.float32),
                    done: wp.array(dtype=wp.int32)):
    e = wp.tid()
    ok = valid[e] != 0
    r = 10.0 * float(passed[e]) - 5.0 * float(oob[e])
    reward[e] = wp.where(ok, r, 0.0)        # a select: never r * float(valid[e])
    obs_dist[e] = wp.where(ok, dist[e], 0.0)
    d = 0
    if oob[e] != 0 or laps[e] >= max_laps:
        d = 1
    if not ok:
        d = 1                               # done |= 1 - valid
    done[e] = d                             # EVERY entry, every step
# fmt: on


@wp.kernel
def drive(
    center: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    n_max: int,
    speed: float,
    index: wp.array(dtype=wp.float32),
    age: wp.array(dtype=wp.int32),
    pos: wp.array(dtype=wp.vec3f),
    quat: wp.array(dtype=wp.quatf),
):
    """Advance each agent ``speed`` beads along its centerline with a lateral wobble of
    ``reach * half_width * sin(0.45 * age)``; ``reach`` grows with a per-env hash, so the
    agents with reach above ~0.9 leave the road at the wobble's peaks. Writes EVERY entry of
    ``pos`` and ``quat`` (the origin for an env with fewer than 3 beads)."""
    e = wp.tid()
    a = age[e] + 1
    age[e] = a
    n = count[e]
    if n < 3:
        pos[e] = wp.vec3f(0.0, 0.0, 0.0)
        quat[e] = wp.quat_identity()
        return
    k = index[e] + speed
    if k >= float(n):
        k = k - float(n)
    index[e] = k
    i = int(wp.floor(k))
    t = k - float(i)
    c0 = center[e * n_max + i]
    c1 = center[e * n_max + (i + 1) % n]
    d = c1 - c0
    yaw = wp.atan2(d[1], d[0])
    side = wp.vec3f(-wp.sin(yaw), wp.cos(yaw), 0.0)
    half_width = wp.length(outer[e * n_max + i] - c0)
    h = float(e) * 0.6180339887
    reach = 0.2 + 0.9 * (h - wp.floor(h))
    pos[e] = c0 + t * d + (reach * half_width * wp.sin(0.45 * float(a))) * side
    quat[e] = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), yaw)


@wp.kernel
def respawn_masked(
    mask: wp.array(dtype=wp.int32),
    center: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    n_max: int,
    index: wp.array(dtype=wp.float32),
    age: wp.array(dtype=wp.int32),
    pos: wp.array(dtype=wp.vec3f),
    quat: wp.array(dtype=wp.quatf),
):
    """Put the masked agents on bead 0 of the course the env has NOW (read after the
    regeneration), facing bead 1; the wobble restarts."""
    e = wp.tid()
    if mask[e] == 0:
        return
    index[e] = 0.0
    age[e] = 0
    if count[e] < 3:
        pos[e] = wp.vec3f(0.0, 0.0, 0.0)
        quat[e] = wp.quat_identity()
        return
    c0 = center[e * n_max]
    d = center[e * n_max + 1] - c0
    pos[e] = c0
    quat[e] = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), wp.atan2(d[1], d[0]))


class Agents:
    """The example's "sim": one kinematic agent per env and its two recipe calls,
    ``sim_step(pos, quat)`` and ``respawn(done, pos, quat)`` (one launch each, capturable).
    Both read the course's live result arrays, so a respawn recorded after the regeneration
    reads the new course."""

    def __init__(self, course: Course, speed: float = 2.0):
        E, device = course.generator.layout.num_envs, course.device
        self.track = course.result
        self.n_max = course.generator.layout.N_max
        self.speed = float(speed)
        self.device = device
        self.index = wp.zeros(E, dtype=wp.float32, device=device)  # bead coordinate
        self.age = wp.zeros(E, dtype=wp.int32, device=device)  # steps since the respawn

    def sim_step(self, pos, quat) -> None:
        t = self.track
        wp.launch(
            drive,
            pos.shape[0],
            inputs=[t.center, t.outer, t.count, self.n_max, self.speed],
            outputs=[self.index, self.age, pos, quat],
            device=self.device,
        )

    def respawn(self, done, pos, quat) -> None:
        t = self.track
        wp.launch(
            respawn_masked,
            pos.shape[0],
            inputs=[done, t.center, t.count, self.n_max],
            outputs=[self.index, self.age, pos, quat],
            device=self.device,
        )


def build(E: int, device=None, seeds: int = 42, speed: float = 2.0) -> SimpleNamespace:
    """One course with its bound buffers and agents, every agent respawned at its start."""
    course = Course.track(
        presets.track(num_envs=E, device=device),
        checkpoint_spacing=0.6,
        collision="segments",
        seeds=seeds,
    )
    device = course.device
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)  # your sim's stable buffers
    quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)
    he = wp.full(E, wp.vec2f(0.02, 0.01), dtype=wp.vec2f, device=device)
    course.bind(position=pos, orientation=quat, half_extents=he)
    agents = Agents(course, speed)
    agents.respawn(wp.full(E, 1, dtype=wp.int32, device=device), pos, quat)
    done = course.inputs["regen_mask"]
    reward = wp.zeros(E, dtype=wp.float32, device=device)
    obs_dist = wp.zeros(E, dtype=wp.float32, device=device)
    return SimpleNamespace(
        E=E,
        device=device,
        course=course,
        pos=pos,
        quat=quat,
        he=he,
        agents=agents,
        done=done,
        reward=reward,
        obs_dist=obs_dist,
    )


def record(env: SimpleNamespace):
    """The spec's capture block, verbatim; returns the graph (``step``)."""
    E, device, course, pos, quat = env.E, env.device, env.course, env.pos, env.quat
    sim_step, respawn = env.agents.sim_step, env.agents.respawn
    reward, obs_dist, done = env.reward, env.obs_dist, env.done
    # fmt: off
    with wp.ScopedCapture(device=device) as cap:
        sim_step(pos, quat)                     # your physics: writes the bound buffers
        res = course.step()                     # progress events + contacts + valid
        wp.launch(reward_and_done, E,
                  [res.valid, res.contacts.oob, res.events.passed, res.events.dist_to_next,
                   res.events.laps, 3, reward, obs_dist, done], device=device)
        course.regenerate(mask=done, advance=True)  # new courses where done[e] != 0
        respawn(done, pos, quat)                # your kernel: restart the masked agents
    step = cap.graph
    # fmt: on
    return step


def eager_step(env: SimpleNamespace) -> None:
    """The body of the capture block, run eagerly (the reference a replay must equal)."""
    E, device, course, pos, quat = env.E, env.device, env.course, env.pos, env.quat
    sim_step, respawn = env.agents.sim_step, env.agents.respawn
    reward, obs_dist, done = env.reward, env.obs_dist, env.done
    # fmt: off
    sim_step(pos, quat)
    res = course.step()
    wp.launch(reward_and_done, E,
              [res.valid, res.contacts.oob, res.events.passed, res.events.dist_to_next,
               res.events.laps, 3, reward, obs_dist, done], device=device)
    course.regenerate(mask=done, advance=True)
    respawn(done, pos, quat)
    # fmt: on


def _fields(obj) -> dict:
    return {k: v for k, v in vars(obj).items() if isinstance(v, wp.array)}


def outputs(env: SimpleNamespace) -> dict[str, wp.array]:
    """Every array one step overwrites in full: the recipe's outputs, the bound buffers the
    sim writes, the progress events that are not state, and every contact array."""
    ev = env.course.progress.events
    out = {
        "reward": env.reward,
        "obs_dist": env.obs_dist,
        "done": env.done,
        "pos": env.pos,
        "quat": env.quat,
        "events.passed": ev.passed,
        "events.wrong_way": ev.wrong_way,
        "events.dist_to_next": ev.dist_to_next,
    }
    out.update({f"contacts.{k}": v for k, v in _fields(env.course.collision.contact).items()})
    return out


def course_arrays(course: Course) -> dict[str, wp.array]:
    """Every array of the course's state: the generator's result and seed state, and each
    component's result and utility arrays (checkpoints, collision derived data, progress
    state and events, contacts)."""
    out = {f"result.{k}": v for k, v in _fields(course.result).items()}
    out.update({f"seeds.{k}": v for k, v in _fields(course.seeds).items()})
    for name, comp in course.components.items():
        for part in ("result", "utility"):
            obj = getattr(comp, part)
            if obj is None:
                continue
            for k, v in _fields(obj).items():
                out.setdefault(f"{name}.{part}.{k}", v)
    return out


def state_arrays(env: SimpleNamespace) -> dict[str, wp.array]:
    """Everything a step reads or writes: outputs, agent state and the course's arrays."""
    out = outputs(env)
    out.update({"agents.index": env.agents.index, "agents.age": env.agents.age})
    out.update(course_arrays(env.course))
    return out


def snapshot(arrays: dict[str, wp.array]) -> dict[str, np.ndarray]:
    """Host copies (``.copy()``: on the cpu ``.numpy()`` is a view)."""
    return {k: a.numpy().copy() for k, a in arrays.items()}


def make_poison(arrays: dict[str, wp.array]) -> list[tuple[wp.array, np.ndarray]]:
    """Host poison for each array (see POISON_NAN_BITS / POISON_INT)."""
    pairs = []
    for a in arrays.values():
        host = a.numpy().copy()
        if host.dtype.kind == "f":
            host.view(np.uint32)[...] = POISON_NAN_BITS
        else:
            host[...] = POISON_INT
        pairs.append((a, host))
    return pairs


def poison(pairs) -> None:
    for a, host in pairs:
        a.assign(host)


def differences(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> list[str]:
    """Names whose arrays differ bitwise, with the first differing env row."""
    bad = []
    for k in a:
        x, y = a[k], b[k]
        if x.tobytes() == y.tobytes():
            continue
        E = x.shape[0]
        rows = np.flatnonzero([xr.tobytes() != yr.tobytes() for xr, yr in zip(x, y, strict=True)])
        bad.append(f"{k} (rows {rows[:6].tolist()} of {E})")
    return bad


def changed_rows(before: np.ndarray, after: np.ndarray, E: int) -> np.ndarray:
    """Per env: whether any byte of its rows changed."""
    b = np.ascontiguousarray(before).view(np.uint8).reshape(E, -1)
    a = np.ascontiguousarray(after).view(np.uint8).reshape(E, -1)
    return (a != b).any(axis=1)


class CheckError(AssertionError):
    pass


def check(ok: bool, what: str) -> None:
    if not ok:
        raise CheckError(what)


def run(E: int, steps: int, device=None) -> dict:
    """Replay the recorded step ``steps`` times against an eager twin, checking (a), (b), (c)
    each step. Returns counts and timings; raises CheckError naming the first failure."""
    live, twin = build(E, device), build(E, device)
    step = record(live)
    pairs = make_poison(outputs(live))
    live_arrays, twin_arrays = state_arrays(live), state_arrays(twin)
    check(
        not differences(snapshot(live_arrays), snapshot(twin_arrays)),
        "the twin differs from the live course before any step",
    )
    track = live.course.result
    regenerated = np.zeros(E, np.int64)
    replay_s = 0.0
    for n in range(steps):
        poison(pairs)
        gen0 = track.generation.numpy().copy()
        center0 = track.center.numpy().copy()
        wp.synchronize_device(live.device)
        t0 = time.perf_counter()
        wp.capture_launch(step)  # one RL step, auto-reset included
        wp.synchronize_device(live.device)
        replay_s += time.perf_counter() - t0
        eager_step(twin)
        # (a) replay == eager, bitwise, over everything a step reads or writes
        bad = differences(snapshot(live_arrays), snapshot(twin_arrays))
        check(not bad, f"step {n}: replay != eager in {bad}")
        # (b) the course changed exactly where done was set
        done = live.done.numpy() != 0
        gen1 = track.generation.numpy()
        check(
            np.array_equal(gen1 != gen0, done) and np.array_equal(gen1[done], gen0[done] + 1),
            f"step {n}: generation changed in envs {np.flatnonzero(gen1 != gen0).tolist()}, "
            f"done envs {np.flatnonzero(done).tolist()}",
        )
        moved = changed_rows(center0, track.center.numpy(), E)
        check(
            np.array_equal(moved, done),
            f"step {n}: centerline changed in envs {np.flatnonzero(moved).tolist()}, "
            f"done envs {np.flatnonzero(done).tolist()}",
        )
        # (c) no NaN reaches the policy
        check(
            np.isfinite(live.reward.numpy()).all() and np.isfinite(live.obs_dist.numpy()).all(),
            f"step {n}: NaN in reward or obs_dist",
        )
        regenerated += done
    return {
        "device": str(live.device),
        "regenerations": int(regenerated.sum()),
        "envs_regenerated": int((regenerated > 0).sum()),
        "ms_per_step": 1e3 * replay_s / max(steps, 1),
        "passes": int(live.course.progress.events.progress.numpy().sum()),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--num-envs", type=int, default=32)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING  # no banner or module-load lines
    E = args.num_envs
    try:
        out = run(E, args.steps, args.device)
    except CheckError as err:
        print(f"FAIL: {err}")
        return 1
    print(
        f"{args.steps} replayed steps x {E} envs on {out['device']}: "
        f"{out['regenerations']} regenerations ({out['envs_regenerated']} envs), "
        f"{out['ms_per_step']:.3f} ms per replayed step"
    )
    print(
        "ok: every replay equals the eager step bitwise (outputs poisoned before each replay); "
        "courses changed exactly where done was set; no NaN reached reward or obs_dist"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
