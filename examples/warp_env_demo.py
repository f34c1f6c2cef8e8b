"""Drive the on-device car environment (examples/warp_env) with a line-following policy.

Run:  python examples/warp_env_demo.py --device cpu --steps 300 --num-envs 64

Each step is one graph replay (``--eager`` runs the stages instead): the cars move, the course
answers, one kernel writes reward, observation and done mask, and the done envs get a new
course and respawn, all on device. The tally below is a kernel too; the host reads the
counters once, at the end, and checks that every env's epoch advanced once per done.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import warp as wp
from warp_env import OBS_DIM, CarRaceEnv, DoneBit, follow_line


@wp.kernel
def tally(
    # inputs
    done: wp.array(dtype=wp.int32),
    done_reason: wp.array(dtype=wp.int32),
    obs: wp.array2d(dtype=wp.float32),
    # in/out
    dones_inout: wp.array(dtype=wp.int32),
    reasons_inout: wp.array(dtype=wp.int32),
    non_finite_inout: wp.array(dtype=wp.int32),
):
    """Per-env done counts, per-bit reason counts, and non-finite observations seen."""
    e = wp.tid()
    dones_inout[e] = dones_inout[e] + done[e]
    for b in range(4):
        if (done_reason[e] >> b) & 1 != 0:
            wp.atomic_add(reasons_inout, b, 1)
    for k in range(obs.shape[1]):
        if not wp.isfinite(obs[e, k]):
            wp.atomic_add(non_finite_inout, 0, 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eager", action="store_true", help="run the stages instead of a replay")
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    E = args.num_envs

    env = CarRaceEnv(E, args.device, args.seed, max_episode_steps=150, captured=not args.eager)
    device = env.device
    dones = wp.zeros(E, dtype=wp.int32, device=device)
    reasons = wp.zeros(4, dtype=wp.int32, device=device)
    non_finite = wp.zeros(1, dtype=wp.int32, device=device)

    t0 = time.perf_counter()
    for _ in range(args.steps):
        # the policy writes straight into the env's stable action buffer
        wp.launch(follow_line, E, [env.obs, 0.9, 10.0, 2.0, 0.8, 1], [env.actions], device=device)
        out = env.step()
        wp.launch(
            tally,
            E,
            [out.done, env.done_reason, out.obs],
            [dones, reasons, non_finite],
            device=device,
        )
    wp.synchronize_device(device)
    ms = 1e3 * (time.perf_counter() - t0) / max(args.steps, 1)

    per_env = dones.numpy()
    counts = dict(zip([b.name for b in DoneBit], reasons.numpy().tolist(), strict=True))
    generation = env.course.result.generation.numpy()
    print(
        f"{args.steps} steps x {E} envs ({'eager' if args.eager else 'replayed'}, "
        f"{ms:.2f} ms/step incl. policy): {int(per_env.sum())} episodes ended {counts}"
    )
    assert non_finite.numpy()[0] == 0, "a non-finite observation reached the policy"
    assert env.obs.shape == (E, OBS_DIM)
    assert np.array_equal(generation, per_env), (generation, per_env)
    print("ok: every done env got a new course on device; no NaN reached an observation")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
