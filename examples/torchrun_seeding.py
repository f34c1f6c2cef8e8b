"""Multi-rank seeding check: R ranks of E envs draw the courses of one process with R*E envs.

Run:  python -m torch.distributed.run --standalone --nproc_per_node=2 \\
          examples/torchrun_seeding.py --device cpu --num-envs 8 --steps 120
      (``torchrun`` is the same command; without it the script runs as rank 0 of 1)

Each rank joins a gloo process group, takes its global env ids from
``track_gen.distributed.RankLayout`` (rank r owns ``r*E .. r*E+E-1``), builds a
``RaceEnv`` seeded ``base_seed + global id`` and drives it with a fixed controller whose
gains depend on the global id only, so episodes end (and courses regenerate, epochs advance)
at different steps on different envs. Rank 0 then gathers every rank's course hashes, epochs
and car positions, replays the same steps in ONE process with ``R*E`` envs, and checks that
global env ``g`` has the same course (bitwise), epoch and car state in both runs.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
import warp as wp

from track_gen.distributed import RankLayout, course_hashes
from track_gen.envs import RaceEnv


def controller(obs: np.ndarray, global_ids: np.ndarray) -> np.ndarray:
    """Steer towards the first look-ahead point; a throttle that depends on the global id
    (some envs drive too fast and crash). float32 ``[E, 2]``; row ``e`` depends only on
    ``obs[e]`` and ``global_ids[e]``."""
    x, y = obs[:, 8], obs[:, 9]
    steer = np.clip(3.0 * np.arctan2(y, np.maximum(x, 1e-3)), -1.0, 1.0)
    target = 0.3 + 0.25 * (global_ids % 4)  # a fraction of max_speed
    throttle = np.clip(4.0 * (target - obs[:, 0]), -1.0, 1.0)
    return np.stack([throttle, steer], axis=1).astype(np.float32)


def run(num_envs: int, device, seeds: np.ndarray, global_ids: np.ndarray, steps: int) -> dict:
    """Drive ``steps`` steps; returns the per-env course hashes, epochs and car positions."""
    env = RaceEnv(num_envs, device, seeds)
    actions = wp.zeros((num_envs, 2), dtype=wp.float32, device=env.device)
    for _ in range(steps):
        actions.assign(controller(env.obs.numpy(), global_ids))
        env.step(actions)
    return {
        "global_ids": global_ids.tolist(),
        "hashes": course_hashes(env.course.result),
        "epochs": env.epochs.numpy().tolist(),
        "position": env.position.numpy().tolist(),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--num-envs", type=int, default=8, help="envs per rank (E)")
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--base-seed", type=int, default=1000)
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)
    wp.config.quiet = True
    torch.set_num_threads(1)

    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group(backend="gloo")
    layout = RankLayout.from_torch(args.num_envs)
    mine = run(
        args.num_envs, args.device, layout.seeds(args.base_seed), layout.global_ids, args.steps
    )
    gathered = [None] * layout.world_size
    if distributed:
        dist.all_gather_object(gathered, mine)
    else:
        gathered = [mine]

    status = 0
    if layout.rank == 0:
        R, E = layout.world_size, args.num_envs
        ids = np.concatenate([np.asarray(g["global_ids"]) for g in gathered])
        assert np.array_equal(ids, np.arange(R * E)), "ranks overlap or leave a gap"
        whole = RankLayout(0, 1, R * E)
        single = run(R * E, args.device, whole.seeds(args.base_seed), whole.global_ids, args.steps)
        hashes = [h for g in gathered for h in g["hashes"]]
        epochs = [k for g in gathered for k in g["epochs"]]
        pos = np.concatenate([np.asarray(g["position"], np.float32) for g in gathered])
        same_course = hashes == single["hashes"]
        same_epoch = epochs == single["epochs"]
        same_car = np.array_equal(pos, np.asarray(single["position"], np.float32))
        ok = same_course and same_epoch and same_car and sum(epochs) > 0
        print(
            f"{'ok: ' if ok else 'FAIL: '}{R} rank(s) x {E} envs vs 1 process x {R * E} envs "
            f"after {args.steps} steps: "
            f"courses {'equal' if same_course else 'DIFFERENT'}, epochs "
            f"{'equal' if same_epoch else 'DIFFERENT'} (sum {sum(epochs)}, max {max(epochs)}), "
            f"cars {'equal' if same_car else 'DIFFERENT'}"
        )
        status = 0 if ok else 1
        if sum(epochs) == 0:
            print("FAIL: no episode ended: raise --steps")
    if distributed:
        flag = torch.tensor([status])
        dist.broadcast(flag, src=0)
        status = int(flag.item())
        dist.destroy_process_group()
    return status


if __name__ == "__main__":
    sys.exit(main())
