"""Full-scale study: PPO (rsl_rl) on the dynamic single-track car in metres, trained on
generated circuits (domain randomisation or a curriculum) or on real circuits, evaluated
zero-shot on real circuits it never saw, at their own size.

Run (from the repository root):
      python -m studies.full_scale --device cpu --circuits ../shared/data/tum \\
          --out /tmp/full_scale_study
      (the sizes of docs/training.md, "Full scale: generated vs real circuits"; ``--smoke``:
      a seconds-long run of every method, seed, fold and evaluation, the test's)

The car: ``RaceConfig.for_vehicle(--vehicle, dynamics=--dynamics)`` (the GT preset on the
single-track model by default: dt 0.1 s, the observation scaled by the vehicle's limits),
training episodes of ``--train-seconds`` s of sim time and ``max_laps = 1`` (an episode
succeeds when it completes a lap). The same PPO setup as ``examples/train_ppo.py``
(``ppo_config(num_steps_per_env=--steps-per-env)``, ``--num-envs`` envs, ``--iterations``
iterations: the same env steps for every run). Methods:

* ``dr``: generated circuits (``presets.circuit``, metres), a new circuit per episode (the
  library's default: domain randomisation over the circuit sampler's fields);
* ``learnability``: generated circuits through ``LevelReplay(score="learnability")``: a
  circuit is replayed in proportion to ``p * (1 - p)`` of its lap success. Chosen over
  ``score="regret"`` because regret needs a timed lap, and the env times the laps of an
  episode after its first (a standing start): at full scale that is two laps of 3.5-7 km
  (200+ s of sim time) per scored episode and a racing line planned at every regeneration,
  which this CPU budget cannot pay; learnability scores a one-lap episode;
* ``real``: the ``--circuits`` folder split into ``--folds`` folds (sorted by name,
  consecutive): fold ``k`` trains (seed ``k``) on the other circuits at their own size
  (``io.tracks_spec(..., units="metres")``, env ``e`` on circuit ``e % n``, restarting on
  it) and is evaluated on its own circuits only.

Evaluation (zero-shot, the policy's mean action, one episode per circuit, ``max_laps = 2``
so the second lap is timed, ``racing_line="par"`` for the vehicle's par; episodes of
``max_laps`` laps of the longest circuit at ``--eval-pace`` of the top speed): ``dr`` and
``learnability`` policies on every circuit of ``--circuits``, ``real`` on its fold's. Metrics:
lap completion (both laps), crash rate (left the road), progress (laps) and the timed lap as
a percentage of par. Writes ``study.json`` (every number, per run, per circuit and per
iteration), ``table.md`` (mean +- std over seeds / folds, and per circuit) and
``full_scale_study.png`` (the learning curves) into ``--out``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch
import warp as wp

from examples.train_ppo import no_nan
from studies.curriculum import METRICS, drive, episode_metrics, mean_std
from track_gen.envs import RaceConfig, RaceDone, RaceEnv
from track_gen.envs.rsl_rl import RslRlRaceEnv, ppo_config
from track_gen.io import read_tum, tracks_spec

#: The methods, in table order.
METHODS = ("dr", "learnability", "real")


# ---------------------------------------------------------------------------- circuits
def circuit_paths(folder: Path) -> list[Path]:
    """The TUM-layout CSVs of ``folder``, sorted by name."""
    return sorted(folder.glob("*.csv"))


def folds(names: list[str], k: int) -> list[list[str]]:
    """``names`` (sorted) cut into ``k`` consecutive folds of near-equal size."""
    return [list(a) for a in np.array_split(np.array(names, dtype=object), k)]


# ---------------------------------------------------------------------------- training
def base_config(args) -> RaceConfig:
    """The vehicle's metre config with training episodes of ``--train-seconds`` s and one
    lap."""
    config = RaceConfig.for_vehicle(args.vehicle, dynamics=args.dynamics, max_laps=1)
    steps = max(1, int(round(args.train_seconds / config.dt)))
    return config.replace(max_episode_steps=steps)


def train_env(method: str, seed: int, args, config: RaceConfig, tracks=None) -> RaceEnv:
    """The training env of a method (``tracks``: the real circuits of ``real``)."""
    seeds = seed * 100003
    if method == "dr":
        return RaceEnv(args.num_envs, args.device, seeds, config=config)
    if method == "learnability":
        curriculum = {
            "buffer_size": args.buffer_size,
            "replay_prob": args.replay_prob,
            "score": "learnability",
            "staleness": args.staleness,
            "temperature": args.temperature,
            "seed": seed,
        }
        return RaceEnv(args.num_envs, args.device, seeds, config=config, curriculum=curriculum)
    spec = tracks_spec(tracks, num_envs=args.num_envs, device=args.device, units="metres")
    return RaceEnv(args.num_envs, None, seeds, config=config, spec=spec, new_course_on_reset=False)


def train(method: str, seed: int, args, config: RaceConfig, tracks=None, label: str = ""):
    """One PPO run; returns ``(runner, history)`` (per iteration: ``env_steps``,
    ``episodes``, ``mean_progress`` laps, ``lap_rate``, ``mean_speed`` m/s over the envs at
    the iteration's end, ``seconds``)."""
    from rsl_rl.runners import OnPolicyRunner

    torch.manual_seed(seed)
    np.random.seed(seed)
    env = train_env(method, seed, args, config, tracks)
    vec = RslRlRaceEnv(env)
    with contextlib.redirect_stdout(io.StringIO()):  # rsl_rl prints the models
        runner = OnPolicyRunner(
            vec, ppo_config(num_steps_per_env=args.steps_per_env), log_dir=None, device="cpu"
        )
    history = []
    t0 = time.perf_counter()
    env.stats(clear=True)
    for it in range(args.iterations):
        runner.learn(1)
        st = env.stats(clear=True)
        history.append(
            {
                "iteration": it,
                "env_steps": (it + 1) * args.num_envs * args.steps_per_env,
                "episodes": st.episodes,
                "mean_progress": st.mean_progress,
                "lap_rate": st.lap_rate,
                "mean_speed": float(env.speed.numpy().mean()),
                "seconds": time.perf_counter() - t0,
            }
        )
        if not args.smoke and (it % 20 == 0 or it == args.iterations - 1):
            h = history[-1]
            print(
                f"  {label} it {it:4d}: progress {h['mean_progress']:.3f} laps, laps done "
                f"{h['lap_rate']:.2f}, speed {h['mean_speed']:.1f} m/s, {h['seconds']:.0f} s",
                flush=True,
            )
    del env, vec
    return runner, history


# -------------------------------------------------------------------------- evaluation
def eval_env(tracks: list, args, config: RaceConfig) -> RaceEnv:
    """One env per circuit at its own size, the vehicle's racing line on each, two laps
    (the second timed) within ``max_laps`` laps of the longest circuit at ``--eval-pace``
    of the top speed."""
    longest = max(
        float(np.sum(np.linalg.norm(np.roll(t.xy, -1, 0) - t.xy, axis=1))) for t in tracks
    )
    pace = args.eval_pace * config.car.max_speed * config.dt  # metres per step
    steps = args.eval_steps or int(math.ceil(2 * longest / pace))
    cfg = config.replace(racing_line="par", max_laps=2, max_episode_steps=steps)
    spec = tracks_spec(tracks, num_envs=len(tracks), device=args.device, units="metres")
    return RaceEnv(len(tracks), None, 0, config=cfg, spec=spec, new_course_on_reset=False)


def evaluate(runner, tracks: list, args, config: RaceConfig) -> dict:
    """The metrics over ``tracks`` and each circuit's episode (``per_circuit``)."""
    env = eval_env(tracks, args, config)
    metrics, per_env = drive(runner, env)
    names = [t.name for t in tracks]
    metrics["per_circuit"] = {n: {k: per_env[k][i] for k in per_env} for i, n in enumerate(names)}
    metrics["episode_steps"] = env.config.max_episode_steps
    metrics["valid"] = env.course.result.valid.numpy().astype(bool).tolist()
    return metrics


def restrict(metrics: dict, names: list[str]) -> dict:
    """The metrics of ``metrics["per_circuit"]`` over the circuits ``names`` only."""
    per = [metrics["per_circuit"][n] for n in names]
    arr = {k: np.array([p[k] for p in per], dtype=np.float64) for k in per[0]}
    out = episode_metrics(
        arr["progress"], arr["reason"].astype(np.int64), arr["lap_time"], arr["par"]
    )
    out["per_circuit"] = {n: metrics["per_circuit"][n] for n in names}
    return out


# ------------------------------------------------------------------------------ report
def table(rows: list[dict], key: str = "circuits") -> str:
    """Markdown: mean +- std over the runs of each method of ``rows[i][key]``."""
    head = "| method | runs | " + " | ".join(label for _, label, _ in METRICS) + " |"
    lines = [head, "|---" * (len(METRICS) + 2) + "|"]
    for method in METHODS:
        rs = [r[key] for r in rows if r["method"] == method]
        if rs:
            cells = [mean_std([r[k] for r in rs], fmt) for k, _, fmt in METRICS]
            lines.append(f"| {method} | {len(rs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _finite(x) -> bool:
    return x is not None and math.isfinite(x)


def per_circuit_table(runs: list[dict], names: list[str]) -> str:
    """Markdown: per circuit and method, the laps completed (of the runs that drove it), the
    crashes and the mean timed lap as % of par."""
    lines = ["| circuit | " + " | ".join(METHODS) + " |", "|---" * (len(METHODS) + 1) + "|"]
    for n in names:
        cells = []
        for method in METHODS:
            eps = [
                r["circuits"]["per_circuit"][n]
                for r in runs
                if r["method"] == method and n in r["circuits"]["per_circuit"]
            ]
            if not eps:
                cells.append("-")
                continue
            laps = sum(int(e["reason"]) & RaceDone.LAPS != 0 for e in eps)
            crash = sum(int(e["reason"]) & RaceDone.OOB != 0 for e in eps)
            pct = [
                100.0 * e["lap_time"] / e["par"]
                for e in eps
                if _finite(e["lap_time"]) and _finite(e["par"]) and e["par"] > 0
            ]
            p = f", {np.mean(pct):.0f}% of par" if pct else ""
            prog = np.mean([e["progress"] for e in eps])
            cells.append(f"{laps}/{len(eps)} laps, {crash} crashed, {prog:.2f} laps{p}")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(runs: list[dict], path: Path) -> None:
    """Per method: each run's training curve (mean episode progress per PPO iteration and
    the mean speed, thin) and their mean (thick), over env steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = [m for m in METHODS if any(r["method"] == m for r in runs)]
    fig, axes = plt.subplots(
        2, len(methods), figsize=(4.0 * len(methods), 5.6), dpi=100, sharey="row", squeeze=False
    )
    for j, method in enumerate(methods):
        rs = [r for r in runs if r["method"] == method]
        for i, (key, label) in enumerate(
            (("mean_progress", "episode progress (laps)"), ("mean_speed", "speed (m/s)"))
        ):
            ax = axes[i][j]
            curves = []
            for r in rs:
                x = np.array([h["env_steps"] for h in r["history"]]) / 1e6
                y = np.array([h[key] for h in r["history"]], dtype=np.float64)
                curves.append(y)
                ax.plot(x, y, lw=0.8, alpha=0.5, label=r["label"])
            with warnings.catch_warnings():  # an iteration where no episode ended: NaN
                warnings.simplefilter("ignore", RuntimeWarning)
                mean = np.nanmean(np.stack(curves), 0)
            ax.plot(x, mean, lw=2.0, color="k", label="mean")
            ax.grid(alpha=0.3)
            if i == 0:
                ax.set_title(method, fontsize=10)
            else:
                ax.set_xlabel("env steps (millions)")
            if j == 0:
                ax.set_ylabel(label)
        axes[0][j].legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# -------------------------------------------------------------------------------- main
def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--circuits", type=Path, required=True, help="folder of TUM-layout CSVs")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--train-seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--folds", type=int, default=5, help="real: folds of --circuits")
    ap.add_argument("--vehicle", default="gt", choices=["gt", "f1tenth"])
    ap.add_argument("--dynamics", default="single_track", choices=["single_track", "kinematic"])
    ap.add_argument("--num-envs", type=int, default=32)
    ap.add_argument("--iterations", type=int, default=480)
    ap.add_argument("--steps-per-env", type=int, default=32)
    ap.add_argument("--train-seconds", type=float, default=150.0, help="training episode, s")
    ap.add_argument("--buffer-size", type=int, default=64, help="LevelReplay slots")
    ap.add_argument("--replay-prob", type=float, default=0.5)
    ap.add_argument("--staleness", type=float, default=0.3)
    ap.add_argument("--temperature", type=float, default=0.1)
    ap.add_argument("--eval-pace", type=float, default=0.4, help="share of the top speed")
    ap.add_argument("--eval-steps", type=int, default=None, help="evaluation episode steps")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument(
        "--out", type=Path, default=Path(tempfile.gettempdir()) / "track_gen_full_scale_study"
    )
    ap.add_argument("--smoke", action="store_true", help="a seconds-long run of everything")
    args = ap.parse_args(argv)
    if args.smoke:
        args.num_envs, args.iterations, args.steps_per_env = 8, 2, 8
        args.buffer_size, args.train_seconds = 8, 3.0
        args.eval_steps = args.eval_steps or 20
        args.train_seeds = args.train_seeds[:2]
    for name in ("num_envs", "iterations", "steps_per_env", "buffer_size", "folds"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if not (math.isfinite(args.train_seconds) and args.train_seconds > 0):
        ap.error(f"--train-seconds must be > 0 s, got {args.train_seconds}")
    if not (0.0 < args.eval_pace <= 1.0):
        ap.error(f"--eval-pace must be in (0, 1], got {args.eval_pace}")
    if args.eval_steps is not None and args.eval_steps < 1:
        ap.error(f"--eval-steps must be >= 1, got {args.eval_steps}")
    if not args.circuits.is_dir() or not circuit_paths(args.circuits):
        ap.error(f"--circuits {args.circuits}: no *.csv file there (a folder of TUM CSVs)")
    n = len(circuit_paths(args.circuits))
    if "real" in args.methods and not (2 <= args.folds <= n):
        ap.error(
            f"--folds must be in [2, {n}] for the {n} circuits of --circuits, got {args.folds}"
        )
    if len(set(args.train_seeds)) != len(args.train_seeds):
        ap.error(f"--train-seeds must be distinct, got {args.train_seeds}")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    wp.config.quiet = True
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    config = base_config(args)
    wall0 = time.perf_counter()
    tracks = {t.name: t for t in (read_tum(p) for p in circuit_paths(args.circuits))}
    names = list(tracks)
    print(f"circuits ({len(names)}, metres): {', '.join(names)}; car {args.vehicle} "
          f"{args.dynamics}, dt {config.dt} s, training episodes {config.max_episode_steps} steps",
          flush=True)  # fmt: skip

    jobs = []
    for method in args.methods:
        if method == "real":
            for k, held in enumerate(folds(names, args.folds)):
                jobs.append((method, k, held, f"fold {k} (held out: {', '.join(held)})"))
        else:
            jobs += [(method, s, names, f"seed {s}") for s in args.train_seeds]
    runs = []
    for method, seed, held, label in jobs:
        t0 = time.perf_counter()
        train_tracks = [tracks[n] for n in names if n not in held] if method == "real" else None
        runner, history = train(method, seed, args, config, train_tracks, f"{method} {label}")
        train_s = time.perf_counter() - t0
        metrics = evaluate(runner, [tracks[n] for n in held], args, config)
        row = {
            "method": method,
            "train_seed": seed,
            "label": label,
            "held_out": held,
            "train_seconds": train_s,
            "history": history,
            "circuits": metrics,
            "seconds": time.perf_counter() - t0,
        }
        runs.append(row)
        c = metrics
        print(
            f"{method:12s} {label}: laps {c['lap_rate']:.3f} crash {c['crash_rate']:.3f} "
            f"progress {c['mean_progress']:.3f} par {c['mean_par_percent']:.1f}% "
            f"({train_s:.0f} s training, {row['seconds']:.0f} s)",
            flush=True,
        )
        del runner
    # the generated-circuit policies on each fold's circuits: the comparison with ``real``
    compare = []
    for r in runs:
        if r["method"] == "real":
            compare.append({"method": "real", "circuits": r["circuits"]})
            continue
        for held in folds(names, args.folds):
            compare.append({"method": r["method"], "circuits": restrict(r["circuits"], held)})

    wall = time.perf_counter() - wall0
    env_steps = args.num_envs * args.steps_per_env * args.iterations
    text = (
        f"Real circuits at full scale ({len(names)}: {', '.join(names)}); dr and learnability "
        f"on all of them (mean +- std over training seeds), real on each fold's held-out "
        f"circuits (mean +- std over folds):\n\n{table(runs)}\n\n"
        f"The same, every policy per fold of held-out circuits (mean +- std over "
        f"seed x fold):\n\n{table(compare)}\n\n"
        f"Per circuit (episodes of all runs that drove it):\n\n"
        f"{per_circuit_table(runs, names)}\n\n"
        f"{len(runs)} runs of {env_steps:,} env steps each; wall time {wall:.0f} s.\n"
    )
    print()
    print(text)
    study = {
        "command": " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]]),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "config": {"dt": config.dt, "max_episode_steps": config.max_episode_steps},
        "env_steps_per_run": env_steps,
        "circuits": names,
        "folds": folds(names, args.folds),
        "wall_seconds": wall,
        "runs": runs,
    }
    (args.out / "study.json").write_text(json.dumps(no_nan(study), indent=1))
    (args.out / "table.md").write_text(text)
    plot(runs, args.out / "full_scale_study.png")
    print(f"ok: {len(runs)} runs in {wall:.0f} s; wrote {args.out}/study.json, table.md and "
          "full_scale_study.png", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
