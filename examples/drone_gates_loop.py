"""Point-mass drones racing gate courses, with the host auto-reset recipe of gates mode.

Run:  python examples/drone_gates_loop.py --device cpu --steps 400 --num-envs 16

One drone per env (position and velocity in stable buffers, integrated by a kernel) chases a
point two beads ahead of its `res.frame` segment on the course line at a speed limit, so it
passes every gate through its opening. Every --faulty-th drone aims at the left post of its
target gate instead, and hits it. A crash respawns the drone on the SAME course (course.reset)
for its first --retries crashes there; after that, after --laps laps, or for an invalid env,
the env gets a NEW course (course.regenerate(mask=..., advance=True)), and the example checks
that exactly those envs changed. Rewards and observations are gated on `valid` with a select.
With 0.02 posts on 0.1 gates about one valid course in ten has its course line within a post
radius of a post (at hairpins: docs/gates-course.md), so healthy drones crash there too and
move on after their retries.
"""

from __future__ import annotations

import argparse

import numpy as np
import warp as wp

from track_gen.course import Course
from track_gen.pipeline import presets

SPEED, LOOKAHEAD, GAIN, SPAWN_BACK = 0.03, 2, 0.5, 0.05  # per step (dt = 1), beads, -, units


@wp.kernel
def fly(
    # inputs
    line: wp.array(dtype=wp.vec3f),
    line_count: wp.array(dtype=wp.int32),
    line_stride: int,
    segment: wp.array(dtype=wp.int32),
    gate_left: wp.array(dtype=wp.vec3f),
    next_gate: wp.array(dtype=wp.int32),
    max_gates: int,
    faulty: wp.array(dtype=wp.int32),
    # outputs
    spawned_inout: wp.array(dtype=wp.int32),
    pos_inout: wp.array(dtype=wp.vec3f),
    vel_inout: wp.array(dtype=wp.vec3f),
    quat_out: wp.array(dtype=wp.quatf),
):
    """One step of a point mass steering its velocity towards its target point."""
    e = wp.tid()
    n = line_count[e]
    p = pos_inout[e]
    v_des = wp.vec3f(0.0, 0.0, 0.0)  # no line (invalid env): hover
    if n > 0:
        seg = segment[e]
        if spawned_inout[e] != 0 or seg < 0:
            seg = n - 1  # just respawned: the frame still describes the old position
        target = line[e * line_stride + (seg + LOOKAHEAD) % n]
        if faulty[e] != 0:
            target = gate_left[e * max_gates + next_gate[e]]
        d = target - p
        if wp.length(d) > 1.0e-6:
            v_des = SPEED * wp.normalize(d)
    spawned_inout[e] = 0
    v = vel_inout[e] + GAIN * (v_des - vel_inout[e])
    vel_inout[e] = v
    pos_inout[e] = p + v
    quat_out[e] = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), wp.atan2(v[1], v[0]))


@wp.kernel
def respawn(
    # inputs
    mask: wp.array(dtype=wp.int32),
    gate_position: wp.array(dtype=wp.vec3f),
    gate_forward: wp.array(dtype=wp.vec3f),
    max_gates: int,
    # outputs
    spawned_out: wp.array(dtype=wp.int32),
    pos_out: wp.array(dtype=wp.vec3f),
    vel_out: wp.array(dtype=wp.vec3f),
):
    """Put the masked drones just behind gate 0 (the start line), flying forward."""
    e = wp.tid()
    if mask[e] == 0:
        return
    f = gate_forward[e * max_gates]
    p = gate_position[e * max_gates] - SPAWN_BACK * f
    if not (wp.isfinite(p[0]) and wp.isfinite(p[1]) and wp.isfinite(p[2])):
        p = wp.vec3f(0.0, 0.0, 0.0)  # an invalid env's gates may be NaN
        f = wp.vec3f(0.0, 0.0, 0.0)
    pos_out[e] = p
    vel_out[e] = SPEED * f
    spawned_out[e] = 1


def snapshot(course) -> list[np.ndarray]:
    """Per-env rows ``[E, ...]`` of the gates, generation, course line and progress (copies:
    on cpu ``.numpy()`` is a view)."""
    g, ev, E = course.result, course.progress.events, course.result.num_envs
    arrays = [g.generation, g.position, g.left, course.course_line.line.center]
    arrays += [ev.laps, ev.progress, ev.next_index, ev.dist_to_next]
    return [(x := a.numpy().copy()).reshape(E, -1, *x.shape[1:]) for a in arrays]


def check_regeneration(course, mask: np.ndarray, before: list[np.ndarray]) -> None:
    """Exactly the masked envs got a new course: a new epoch and new gates; every other env
    kept its gates, course line and progress bitwise."""
    after = snapshot(course)
    for b, a in zip(before, after, strict=True):
        assert b[~mask].tobytes() == a[~mask].tobytes(), "an unmasked env changed"
    assert (after[0][mask] == before[0][mask] + 1).all(), "a regenerated env kept its epoch"
    for e in np.flatnonzero(mask & (course.result.valid.numpy() != 0)):
        assert before[1][e].tobytes() != after[1][e].tobytes(), f"env {e} kept its gates"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--laps", type=int, default=1, help="laps that finish an episode")
    ap.add_argument("--faulty", type=int, default=4, help="every n-th drone aims at a post")
    ap.add_argument("--retries", type=int, default=1, help="crashes respawned on a course")
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    E = args.num_envs
    device = wp.get_device(args.device) if args.device else wp.get_preferred_device()
    seeds = wp.array(np.arange(100, 100 + E), dtype=wp.int32, device=device)
    course = Course.gates(
        presets.gates(num_envs=E, device=str(device), gate_width=0.1),
        collision=0.02,
        localize_window=8,
        seeds=seeds,
    )
    gates, line, M = course.result, course.course_line.line, course.result.max_gates
    regen, reset_mask = course.inputs["regen_mask"], course.inputs["reset_mask"]
    healthy = np.arange(E) % args.faulty != args.faulty - 1
    faulty = wp.array((~healthy).astype(np.int32), dtype=wp.int32, device=device)

    pos = wp.zeros(E, dtype=wp.vec3f, device=device)  # the "sim": stable buffers
    vel = wp.zeros(E, dtype=wp.vec3f, device=device)
    quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)
    he = wp.full(E, wp.vec2f(0.01, 0.01), dtype=wp.vec2f, device=device)
    spawned = wp.zeros(E, dtype=wp.int32, device=device)
    course.bind(position=pos, orientation=quat, half_extents=he)

    def respawn_masked(mask: wp.array) -> None:
        inputs = [mask, gates.position, gates.forward, M]
        wp.launch(respawn, E, inputs, [spawned, pos, vel], device=device)

    respawn_masked(wp.full(E, 1, dtype=wp.int32, device=device))
    tries, laps_done = np.zeros(E, np.int64), np.zeros(E, np.int64)  # laps: every course
    crashes = resets = regenerations = invalid_seen = 0
    for _ in range(args.steps):
        inputs = [line.center, line.count, line.N_max, course.localizer.frame.segment]
        inputs += [gates.left, course.progress.events.next_index, M, faulty]
        wp.launch(fly, E, inputs, [spawned, pos, vel, quat], device=device)
        res = course.step()
        valid = res.valid.numpy() != 0  # read it first: a regeneration rewrites it
        hit = res.contacts.hit.numpy() != 0
        laps = res.events.laps.numpy()
        reward = np.where(valid, 10.0 * res.events.passed.numpy() - 5.0 * hit, 0.0)  # a select
        assert np.isfinite(reward).all() and not reward[~valid].any(), "an invalid env scored"
        # a policy's observation: lateral / vertical offset, lap fraction, next gate offset
        f, length = res.frame, line.length.numpy()
        to_gate = gates.position.numpy()[np.arange(E) * M + res.events.next_index.numpy()]
        lap_frac = f.s.numpy() / np.where(length > 0, length, 1.0)
        obs = np.column_stack([f.n.numpy(), f.n_up.numpy(), lap_frac, to_gate - pos.numpy()])
        obs = np.where(valid[:, None], obs, 0.0)  # never "* valid": NaN * 0 is NaN
        assert not np.isnan(obs).any(), "a NaN reached an observation"

        crashed = hit & valid
        retry = crashed & (tries < args.retries)  # respawn on the SAME course
        finished = (laps >= args.laps) | ~valid | (crashed & ~retry)  # a NEW course
        laps_done += np.where(valid & (laps >= args.laps), laps, 0)  # finished episodes
        crashes, invalid_seen = crashes + int(crashed.sum()), invalid_seen + int((~valid).sum())
        if retry.any():
            tries += retry
            reset_mask.assign(retry.astype(np.int32))
            course.reset(reset_mask)
            respawn_masked(reset_mask)
            resets += int(retry.sum())
        if finished.any():
            before = snapshot(course)
            regen.assign(finished.astype(np.int32))
            course.regenerate(mask=regen, advance=True)
            check_regeneration(course, finished, before)
            respawn_masked(regen)
            tries[finished] = 0
            regenerations += int(finished.sum())
    lapped = laps_done[healthy] > 0
    print(
        f"{args.steps} steps x {E} envs: {int(lapped.sum())} of {int(healthy.sum())} healthy "
        f"drones lapped ({int(laps_done.sum())} laps), crashes {crashes}, respawns {resets}, "
        f"regenerations {regenerations}, invalid env-steps {invalid_seen}"
    )
    assert lapped.mean() >= 0.75, "under 3/4 of the healthy drones lapped: raise --steps"
    assert not laps_done[~healthy].any(), "a faulty drone lapped"
    assert resets > 0 and regenerations > 0, "no crash was respawned or regenerated"
    print("ok: healthy drones lapped; every regeneration changed exactly its masked envs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
