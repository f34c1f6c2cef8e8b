"""Drone racing study: PPO (rsl_rl) on ``DroneRaceEnv`` over regenerated gate courses, three
training seeds, evaluated zero-shot on held-out generated courses and the published waypoint
paths.

Run (from the repository root):
      python -m studies.drone --device cpu --out /tmp/drone_study
      (3 seeds x ``--iterations`` PPO iterations of ``--num-envs`` x ``--steps-per-env`` steps;
      docs/drone-racing.md gives the size and the wall time of the published run)
      ``--smoke``: a seconds-long run of every seed and evaluation (the test's);
      ``--set FIELD=VALUE`` (repeatable): a DroneConfig field over the recipe's, in training
      and evaluation (the published second run: ``--set reward_gate=10``); ``--init-std``:
      PPO's initial action std (0.3).

Training: ``examples/train_drone.py``'s ``train`` (the 5-inch preset, ``max_laps`` 1, a new
course per episode). Evaluation with the policy's mean action, ``max_laps`` 2, pars planned
on every course (``DroneConfig(par=True)``): ``--eval-envs`` held-out courses (seeds
1,000,000 + e, epoch 0) and every ``*.json`` path of ``--paths`` as its gate course. Metrics:
gates passed (share of the episode's ``2 * count`` gates), laps completed, crash rate, timed
laps' time as % of par. Writes ``study.json`` (every number), ``table.md`` (mean +- std over
the seeds), ``drone_study.png`` (the learning curves) and ``trajectories.npz`` (the first
seed's flights of four held-out courses and the paths, with their gates and par trajectories,
for ``docs/gen_drone_images.py``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
import warp as wp

from examples.train_drone import (
    DATA,
    HELD_OUT,
    evaluate_paths,
    fly,
    no_nan,
    path_env,
    read_paths,
    summary,
    train,
)
from track_gen.envs import DroneRaceEnv, drone_config

KEYS = ("gates_passed", "mean_laps", "lap_rate", "crash_rate", "par_percent")


def par_samples(env: DroneRaceEnv, e: int) -> np.ndarray:
    """Env ``e``'s par trajectory positions (float ``[n, 3]``, m)."""
    par = env.par
    R, n = par.rows_per_env, int(par.sample_count.numpy()[e])
    return par.position.numpy()[e * R : e * R + n].astype(np.float64)


def gates_of(env: DroneRaceEnv, e: int) -> np.ndarray:
    g = env.course.result
    return g.host("position")[e, : int(g.count.numpy()[e])].astype(np.float64)


def record(runner, config, paths, device, n: int, out: Path) -> None:
    """The flights of ``n`` held-out courses and of the paths, beside their pars."""
    env = DroneRaceEnv(
        n, device, HELD_OUT, config=config.replace(par=True), new_course_on_reset=False
    )
    res = fly(runner, env, record=n)
    arrays = {}
    for e in range(n):
        arrays[f"held{e}_flight"] = res["track"][:, e]
        arrays[f"held{e}_gates"] = gates_of(env, e)
        arrays[f"held{e}_par"] = par_samples(env, e)
    if paths:
        penv = path_env(paths, config, device)
        pres = fly(runner, penv, record=len(paths))
        for k, p in enumerate(paths):
            arrays[f"path_{p.name}_flight"] = pres["track"][:, k]
            arrays[f"path_{p.name}_gates"] = gates_of(penv, k)
            arrays[f"path_{p.name}_par"] = par_samples(penv, k)
    np.savez_compressed(out / "trajectories.npz", **arrays)


def mean_std(rows: list[dict], key: str) -> tuple[float, float]:
    v = np.array([r[key] for r in rows], np.float64)
    v = v[np.isfinite(v)]
    return (float(v.mean()), float(v.std())) if v.size else (math.nan, math.nan)


def table(runs: list[dict], path_names: list[str]) -> str:
    head = "| courses | gates passed | laps (of 2) | 2 laps done | crash rate | time % of par |"
    lines = [head, "| --- | --- | --- | --- | --- | --- |"]

    def row(label, rows):
        cells = []
        for k in KEYS:
            m, s = mean_std(rows, k)
            scale = 100.0 if k in ("gates_passed", "lap_rate", "crash_rate") else 1.0
            unit = " %" if scale == 100.0 else ""
            cells.append("n/a" if math.isnan(m) else f"{scale * m:.1f} +- {scale * s:.1f}{unit}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    row(f"{runs[0]['held_out']['envs']} held-out generated", [r["held_out"] for r in runs])
    for name in path_names:
        row(f"path {name}", [r["paths"][name] for r in runs])
    return "\n".join(lines) + "\n"


def plot(runs: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), dpi=100)
    for r in runs:
        it = [h["iteration"] for h in r["history"]]
        axes[0].plot(it, [h["mean_progress"] for h in r["history"]], label=f"seed {r['seed']}")
        axes[1].plot(it, [h["lap_rate"] for h in r["history"]], label=f"seed {r['seed']}")
    axes[0].set_ylabel("mean episode progress (laps)")
    axes[1].set_ylabel("episodes completing the lap")
    for ax in axes:
        ax.set_xlabel("PPO iteration")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left")
    fig.suptitle("PPO on DroneRaceEnv (5-inch quad), a new gate course per episode", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--iterations", type=int, default=500)
    ap.add_argument("--steps-per-env", type=int, default=32)
    ap.add_argument("--eval-envs", type=int, default=256)
    ap.add_argument("--init-std", type=float, default=0.3, help="PPO's initial action std")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a DroneConfig field of training and evaluation (a JSON value), repeatable",
    )
    ap.add_argument("--paths", default=os.path.join(DATA, "drone"))
    ap.add_argument("--out", default="/tmp/drone_study")
    ap.add_argument("--smoke", action="store_true", help="a seconds-long run of everything")
    args = ap.parse_args(argv)
    for name in ("num_envs", "iterations", "steps_per_env", "eval_envs"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if not (math.isfinite(args.init_std) and args.init_std > 0):
        ap.error(f"--init-std must be a finite number > 0, got {args.init_std}")
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        ap.error(f"--seeds must be a comma list of ints, got {args.seeds!r}")
    if len(set(seeds)) != len(seeds) or not seeds:
        ap.error(f"--seeds must be distinct ints, got {args.seeds!r}")
    if args.smoke:
        args.num_envs, args.iterations, args.eval_envs = 16, 2, 4
    wp.config.quiet = True
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        fields = {k: json.loads(v) for k, v in (a.split("=", 1) for a in args.set)}
    except ValueError:
        ap.error(f"--set takes FIELD=VALUE with a JSON value, got {args.set!r}")
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    config = drone_config("racing_5inch", **{"max_laps": 1, **fields})
    eval_config = config.replace(max_laps=2)
    paths = read_paths(args.paths)
    t0 = time.perf_counter()
    runs = []
    for seed in seeds:
        runner, _, history = train(
            config=config,
            num_envs=args.num_envs,
            iterations=args.iterations,
            seed=seed,
            device=args.device,
            steps_per_env=args.steps_per_env,
            init_std=args.init_std,
        )
        env = DroneRaceEnv(
            args.eval_envs,
            args.device,
            HELD_OUT,
            config=eval_config.replace(par=True),
            new_course_on_reset=False,
        )
        held = summary(fly(runner, env), eval_config.max_laps)
        flown = evaluate_paths(runner, eval_config, paths, args.device) if paths else {}
        runs.append(
            {
                "seed": seed,
                "history": history,
                "held_out": held,
                "paths": flown,
                "train_seconds": history[-1]["seconds"],
            }
        )
        print(f"seed {seed}: held-out {held}; paths {flown}", flush=True)
        if seed == seeds[0]:
            record(runner, eval_config, paths, args.device, 4, out)
        del runner
    wall = time.perf_counter() - t0
    names = [p.name for p in paths]
    text = table(runs, names)
    study = {
        "command": " ".join(["python -m studies.drone", *sys.argv[1:]]),
        "wall_seconds": wall,
        "num_envs": args.num_envs,
        "iterations": args.iterations,
        "steps_per_env": args.steps_per_env,
        "init_std": args.init_std,
        "set": fields,
        "progress_reward": config.progress_reward,
        "reward_gate": config.reward_gate,
        "env_steps_per_seed": args.num_envs * args.iterations * args.steps_per_env,
        "runs": runs,
    }
    (out / "study.json").write_text(json.dumps(no_nan(study), indent=1))
    (out / "table.md").write_text(text)
    plot(runs, out / "drone_study.png")
    print(text)
    print(
        f"ok: {len(seeds)} seeds in {wall:.0f} s; wrote {out}/study.json, table.md, "
        "drone_study.png, trajectories.npz"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
