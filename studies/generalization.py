"""Generalization study: PPO policies trained on ONE fixed course vs on courses regenerated per
episode, evaluated on held-out seeds (and on imported circuits, with ``--circuits``).

Run (from the repository root):
      python -m studies.generalization --device cpu --out /tmp/generalization.json
      (2 conditions x 3 training seeds x ``examples/train_ppo.py``-sized runs: ~10 minutes
      on a 2-core CPU)

Conditions (``examples/train_ppo.py``'s ``train``, same size and hyper-parameters):

* ``fixed``: every training env drives the course of seed ``s`` (``seeds=[s] * E``,
  ``new_course_on_reset=False``): one course, forever.
* ``regenerated``: env ``e`` starts on seed ``s * 100003 + e`` and gets the next course of its
  seed at every episode end (masked regeneration, ``advance=True``).

Evaluation: one episode per held-out course, seeds ``--eval-base + i`` for ``i <
--eval-envs`` at epoch 0 (never a training course), the policy's mean action, the training
env's episode rules. Reported per run and as mean +- std over the training seeds: mean
episode progress (laps) and the rate of episodes that reached the lap target. The fixed
condition is also evaluated on its own training course (256 envs on that one course).
``--circuits DIR`` adds an evaluation on the TUM-layout CSVs in DIR
(``io.tracks_spec(..., units="normalized")``). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
import warp as wp

from examples.train_ppo import evaluate, first_episodes, train
from track_gen.stages.inflate import HALF_WIDTH as _HALF_WIDTH

#: Half road width of the generated training courses (the declaration's default).
HALF_WIDTH = float(_HALF_WIDTH.default)


def scaled_circuits(tracks: list, device) -> tuple[list, list[str]]:
    """``tracks`` (``io.RealTrack``) scaled to the generated courses' road, and the names of
    those left out as invalid.

    The car knows roads of the generated courses' width: each circuit (widths too) is scaled
    so its median half road width is ``HALF_WIDTH`` (a real circuit is then far longer than a
    generated course, relative to its width, so an episode may cover part of a lap). A
    circuit the library marks invalid (too thin for its width) is left out and named.
    """
    from track_gen import TrackGenerator
    from track_gen.io import RealTrack, tracks_spec

    scaled = []
    for t in tracks:
        s = HALF_WIDTH / float(np.median(0.5 * (t.width_left + t.width_right)))
        scaled.append(RealTrack(t.name, t.xy * s, t.width_right * s, t.width_left * s))
    probe = TrackGenerator(tracks_spec(scaled, num_envs=len(scaled), device=device))
    valid = probe.generate().valid.numpy().astype(bool)
    dropped = [t.name for t, ok in zip(scaled, valid, strict=True) if not ok]
    return [t for t, ok in zip(scaled, valid, strict=True) if ok], dropped


def evaluate_circuits(runner, directory: Path, episodes: int, device) -> dict:
    """One episode per env on the imported circuits (env ``e`` drives circuit ``e % K``)."""
    from track_gen.envs import RaceDone, RaceEnv
    from track_gen.io import read_tum, tracks_spec

    tracks = [read_tum(p) for p in sorted(directory.glob("*.csv"))]
    if not tracks:
        raise ValueError(f"--circuits {directory}: no *.csv file there")
    scaled, dropped = scaled_circuits(tracks, device)
    if not scaled:
        raise ValueError(f"--circuits {directory}: every circuit is invalid ({dropped})")
    spec = tracks_spec(scaled, num_envs=episodes, device=device, units="metres")
    env = RaceEnv(episodes, None, 0, spec=spec, new_course_on_reset=False)
    final, reason = first_episodes(runner, env)
    laps = (reason & RaceDone.LAPS) != 0
    crash = (reason & RaceDone.OOB) != 0
    return {
        "circuits": [t.name for t in scaled],
        "invalid_circuits": dropped,
        "mean_progress": float(np.nanmean(final)),
        "mean_distance": float(np.nanmean(final * env.course.result.length.numpy())),
        "lap_rate": float(laps.mean()),
        "crash_rate": float(crash.mean()),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--iterations", type=int, default=150)
    ap.add_argument("--train-seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--eval-envs", type=int, default=256)
    ap.add_argument("--eval-base", type=int, default=1_000_000)
    ap.add_argument("--circuits", type=Path, default=None, help="folder of TUM-layout CSVs")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=None, help="write every number to this JSON file")
    args = ap.parse_args(argv)
    wp.config.quiet = True
    torch.set_num_threads(args.threads)
    held_out = [args.eval_base + i for i in range(args.eval_envs)]

    runs = []
    t0 = time.perf_counter()
    for condition in ("fixed", "regenerated"):
        for s in args.train_seeds:
            runner, env, history = train(
                num_envs=args.num_envs,
                iterations=args.iterations,
                seed=s,
                device=args.device,
                fixed_course=condition == "fixed",
                verbose=False,
            )
            row = {
                "condition": condition,
                "train_seed": s,
                "train_final_progress": float(
                    np.nanmean([h["mean_progress"] for h in history[-5:]])
                ),
                "held_out": evaluate(runner, held_out, args.device),
            }
            row["held_out"].pop("progress")
            if condition == "fixed":
                own = evaluate(runner, [s] * args.eval_envs, args.device)
                own.pop("progress")
                row["own_course"] = own
            if args.circuits is not None:
                row["circuits"] = evaluate_circuits(
                    runner, args.circuits, args.eval_envs, args.device
                )
            row["seconds"] = time.perf_counter() - t0
            runs.append(row)
            h = row["held_out"]
            print(
                f"{condition:12s} seed {s}: training progress {row['train_final_progress']:.3f}, "
                f"held-out progress {h['mean_progress']:.3f} laps, lap target "
                f"{h['lap_rate']:.3f} ({row['seconds']:.0f} s)",
                flush=True,
            )

    def stat(cond, *keys):
        v = []
        for r in runs:
            if r["condition"] != cond:
                continue
            x = r
            for k in keys:
                x = x.get(k, {}) if isinstance(x, dict) else {}
            if isinstance(x, float):
                v.append(x)
        if not v:
            return "n/a"
        return f"{np.mean(v):.3f} +- {np.std(v):.3f}"

    print()
    print(
        "| trained on | held-out progress (laps) | held-out lap target reached | "
        "own course progress | own course lap target |"
    )
    print("|---|---|---|---|---|")
    for cond in ("fixed", "regenerated"):
        print(
            f"| {cond} | {stat(cond, 'held_out', 'mean_progress')} | "
            f"{stat(cond, 'held_out', 'lap_rate')} | {stat(cond, 'own_course', 'mean_progress')}"
            f" | {stat(cond, 'own_course', 'lap_rate')} |"
        )
    if args.circuits is not None:
        for cond in ("fixed", "regenerated"):
            print(
                f"circuits, {cond}: progress {stat(cond, 'circuits', 'mean_progress')} laps, "
                f"distance {stat(cond, 'circuits', 'mean_distance')}, crashes "
                f"{stat(cond, 'circuits', 'crash_rate')}, lap target "
                f"{stat(cond, 'circuits', 'lap_rate')}"
            )
    if args.out:
        Path(args.out).write_text(
            json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "runs": runs}, indent=1)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
