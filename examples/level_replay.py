"""Prioritized level replay at the auto-reset, recorded in the step graph.

Run:  python examples/level_replay.py --device cpu --steps 60 --num-envs 16

A stand-in learner plays each env's course for ``--horizon`` steps (staggered per env) and
succeeds with a probability that falls with the course's length (short courses are easy, long
ones hard); ``LevelReplay(score="learnability")`` scores each level by ``p * (1 - p)`` of its
success rate and, at each auto-reset, replays a buffered level or draws a fresh one. The whole
step (episode kernel, ``update``, ``regenerate``) is recorded once with ``wp.ScopedCapture``
and replayed (on the CPU too).

Checks: (a) every replayed step equals the same step run eagerly on a twin, bitwise, with the
per-step outputs poisoned before each replay; (b) levels were replayed once the buffer filled,
and every env's course is bit for bit the course a fresh generator builds from the level's
effective seed (``buffer.env_level``); (c) every score is finite.
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import warp as wp

from track_gen.course import Course
from track_gen.curriculum import LevelReplay
from track_gen.pipeline import presets


@wp.kernel
def play(
    # inputs
    length: wp.array(dtype=wp.float32),
    seeds: wp.array(dtype=wp.int32),
    # static
    horizon: int,
    # outputs
    tick_inout: wp.array(dtype=wp.int32),
    done_out: wp.array(dtype=wp.int32),
    success_out: wp.array(dtype=wp.float32),
):
    """Env ``e``'s episode ends every ``horizon`` steps (offset by ``e``); it succeeds with
    probability ``clamp((6 - length) / 2.5, 0, 1)``, drawn from the level's seed and the step.
    Writes EVERY entry of ``done_out`` and ``success_out``."""
    e = wp.tid()
    t = tick_inout[e] + 1
    tick_inout[e] = t
    done = int(0)
    if (t + e) % horizon == 0:
        done = 1
    p = wp.clamp((6.0 - length[e]) / 2.5, 0.0, 1.0)
    state = wp.rand_init(seeds[e], t)
    done_out[e] = done
    success_out[e] = wp.where(wp.randf(state) < p, 1.0, 0.0)


class Setup:
    """A course, its curriculum and the learner's buffers; :meth:`step` is one RL step."""

    def __init__(self, E: int, device, horizon: int):
        spec = presets.track(num_envs=E, device=device)
        self.course = Course.track(spec, checkpoint_spacing=0.6, seeds=0)
        self.curriculum = LevelReplay(
            self.course, buffer_size=max(2, E // 2), replay_prob=0.5, score="learnability"
        )
        self.E, self.device, self.horizon = E, device, horizon
        self.tick = wp.zeros(E, dtype=wp.int32, device=device)
        self.done = wp.zeros(E, dtype=wp.int32, device=device)
        self.success = wp.zeros(E, dtype=wp.float32, device=device)

    def step(self) -> None:
        wp.launch(
            play,
            self.E,
            inputs=[self.course.result.length, self.course.seeds.seeds, self.horizon],
            outputs=[self.tick, self.done, self.success],
            device=self.device,
        )
        self.curriculum.update(self.done, self.success)  # score the ended episodes first
        self.curriculum.regenerate(self.done)  # then give the done envs their next level

    def state(self) -> dict:
        """Host copies of everything a step writes."""
        out = {f"buffer.{k}": np.asarray(v) for k, v in self.curriculum.snapshot().items()}
        out.update(result_arrays(self.course.result))
        out["done"], out["success"] = self.done.numpy(), self.success.numpy()
        return out


def result_arrays(result) -> dict:
    return {
        f.name: getattr(result, f.name).numpy()
        for f in dataclasses.fields(result)
        if isinstance(getattr(result, f.name), wp.array)
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--horizon", type=int, default=3)
    ap.add_argument("--headless", action="store_true", help="accepted; nothing is drawn")
    args = ap.parse_args(argv)
    wp.config.quiet = True

    live = Setup(args.num_envs, args.device, args.horizon)
    twin = Setup(args.num_envs, args.device, args.horizon)
    with wp.ScopedCapture(device=args.device) as cap:
        live.step()
    replays = 0
    for n in range(args.steps):
        live.done.fill_(-5)  # poisoned: a replay that skips a write differs from the twin
        live.success.fill_(np.nan)
        wp.capture_launch(cap.graph)
        twin.step()
        got, want = live.state(), twin.state()
        bad = [k for k in want if np.asarray(got[k]).tobytes() != np.asarray(want[k]).tobytes()]
        assert not bad, f"step {n}: the replay differs from the eager step in {bad}"
        replays += int((got["buffer.replayed"] * got["done"]).sum())

    snap = live.curriculum.snapshot()
    assert replays > 0, "no level was replayed: raise --steps"
    assert np.isfinite(snap["score"]).all()
    levels = wp.array(snap["env_level"], dtype=wp.int32, device=args.device)
    fresh = Course.track(presets.track(num_envs=args.num_envs, device=args.device),
                         checkpoint_spacing=0.6, seeds=levels)  # fmt: skip
    got, want = result_arrays(live.course.result), result_arrays(fresh.result)
    bad = [k for k in want if got[k].tobytes() != want[k].tobytes()]
    assert not bad, f"the courses differ from fresh ones of their level seeds in {bad}"

    mean = snap["successes"] / np.maximum(snap["plays"], 1)
    print(f"buffer: {len(snap['seed'])} levels, plays {snap['plays'].tolist()}")
    print(f"        success rates {np.round(mean.astype(float), 2).tolist()}")
    print(f"        scores p(1-p) {np.round(snap['score'].astype(float), 3).tolist()}")
    print(
        f"ok: {args.steps} replayed steps equal the eager steps bitwise; {replays} levels "
        f"replayed; every course rebuilt from its level seed"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
