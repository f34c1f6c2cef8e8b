"""Curriculum study: PPO (rsl_rl) on ``RaceEnv`` with domain randomisation, prioritized level
replay and learnability sampling, evaluated zero-shot on held-out courses and real circuits.

Run (from the repository root):
      python -m studies.curriculum --device cpu \\
          --circuits /path/to/tum/tracks --out /tmp/curriculum_study
      (3 methods x 3 training seeds; see docs/training.md for the size and the wall time)
      ``--smoke``: a seconds-long run of every method, seed and evaluation (the test's).

Methods (the same PPO setup as ``examples/train_ppo.py``: ``ppo_config()``, ``--num-envs``
envs, ``--iterations`` iterations of ``--steps-per-env`` steps, so the same env steps):

* ``dr``: domain randomisation, the library's default: every ended episode's env gets the
  next course of its seed (``RaceEnv(..., curriculum=None)``).
* ``plr``: prioritized level replay, ``curriculum={"score": "value_loss", ...}``. After each
  PPO update the script writes each env's mean positive GAE advantage into
  ``env.curriculum_signal`` (float32 ``[E]``); see :class:`PositiveAdvantage`.
* ``learnability``: ``curriculum={"score": "learnability", ...}``: the env scores a level by
  ``p * (1 - p)`` of its episodes' success (the env passes the success itself).

Both curricula: a ``LevelReplay(buffer_size=--buffer-size, replay_prob=--replay-prob,
staleness=--staleness, temperature=--temperature, seed=training seed)``.

Evaluation (the policy's mean action, one episode per env, zero-shot):

* held-out generated courses: seeds ``1,000,000 + i`` for ``i < --eval-envs`` at epoch 0,
  never trained on, the training env's episode rules;
* real circuits: the four circuits of the test suite (``tests/io/__init__.py``) plus every
  ``*.csv`` in ``--circuits`` (TUM racetrack-database layout, read in place), each scaled
  (widths too) until its median half width is the generated courses' (the rule of
  ``studies/generalization.py``); a circuit the library marks invalid is left out and
  named. One env per circuit (the mean action is deterministic) with episodes long enough for
  ``max_laps`` laps at half the top speed (``--circuit-steps`` to choose).

Metrics: lap completion rate (the episode reached ``max_laps`` laps), crash rate (the car left
the road), progress (laps) and lap time as a percentage of par (every timed lap, against the
par of a racing line planned on each evaluation course: ``RaceConfig(racing_line="par")``,
the observation unchanged). Writes ``study.json`` (every number, per run and per iteration),
``table.md`` (mean +- std over the training seeds) and ``curriculum_study.png`` (a learning
curve per method) into ``--out``.
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
from pathlib import Path

import numpy as np
import torch
import warp as wp

from examples.train_ppo import HELD_OUT, first_episodes, make_env, no_nan
from studies.generalization import scaled_circuits
from track_gen.envs import RaceConfig, RaceDone, RaceEnv
from track_gen.envs.rsl_rl import RslRlRaceEnv, ppo_config

#: The methods and their ``curriculum`` score rule (None: no curriculum).
METHODS = {"dr": None, "plr": "value_loss", "learnability": "learnability"}


# ---------------------------------------------------------------------------- training
class PositiveAdvantage:
    """PLR's score for ``score="value_loss"``: after each PPO update, env ``e``'s mean of
    ``max(GAE, 0)`` over the steps of its current episode so far (across rollouts), written
    into ``env.curriculum_signal`` (float32 ``[E]``).

    The GAE is rsl_rl's, unnormalized: ``storage.returns - storage.values`` of the rollout
    just used (``[T, E, 1]``, still in the storage after the update). The env scores a level
    when its episode ends, inside ``step()``, with the signal as written after the previous
    update: so an episode's score is the mean positive advantage of its steps up to the start
    of the rollout it ended in (at most ``num_steps_per_env`` steps stale). An env whose
    episode has no step before the current rollout (it ended on the rollout's last step) gets
    its mean over the whole rollout instead. Before the first update the env's signal is NaN,
    so the episodes that end in the first rollout leave their levels unscored."""

    def __init__(self, env: RaceEnv, runner):
        self.storage = runner.alg.storage
        self.signal = wp.to_torch(env.curriculum_signal)
        dev = self.signal.device
        self.sum = torch.zeros(env.num_envs, dtype=torch.float64, device=dev)
        self.count = torch.zeros(env.num_envs, dtype=torch.float64, device=dev)

    def __call__(self) -> None:
        st = self.storage
        pos = (st.returns - st.values)[..., 0].clamp(min=0.0).double()  # [T, E]
        done = st.dones[..., 0] != 0
        for t in range(pos.shape[0]):
            self.sum += pos[t]
            self.count += 1.0
            self.sum[done[t]] = 0.0  # that episode ended at step t: the next one starts
            self.count[done[t]] = 0.0
        whole = pos.mean(0)
        mean = torch.where(self.count > 0, self.sum / self.count.clamp(min=1.0), whole)
        self.signal.copy_(mean.float())


def curriculum_settings(method: str, seed: int, args) -> dict | None:
    """The ``RaceEnv(curriculum=...)`` mapping of a method (None for ``dr``)."""
    score = METHODS[method]
    if score is None:
        return None
    return {
        "buffer_size": args.buffer_size,
        "replay_prob": args.replay_prob,
        "score": score,
        "staleness": args.staleness,
        "temperature": args.temperature,
        "seed": seed,
    }


def train_env(method: str, seed: int, args, config: RaceConfig) -> RaceEnv:
    """The training env of ``examples/train_ppo.py`` (env ``e`` seeded ``seed * 100003 + e``,
    a new course per episode), through a curriculum for ``plr`` and ``learnability``."""
    settings = curriculum_settings(method, seed, args)
    if settings is None:
        return make_env(args.num_envs, args.device, seed, False, config)
    return RaceEnv(args.num_envs, args.device, seed * 100003, config=config, curriculum=settings)


def train(method: str, seed: int, args, config: RaceConfig, verbose: bool = False):
    """One PPO training run; returns ``(runner, env, history)`` (per-iteration dicts:
    ``iteration``, ``env_steps``, ``episodes``, ``mean_progress`` laps, ``lap_rate``,
    ``replayed`` (share of the envs whose current level is a replay, NaN for ``dr``),
    ``levels`` (filled buffer slots), ``scored`` (buffered levels scored above 0),
    ``seconds``)."""
    from rsl_rl.runners import OnPolicyRunner

    torch.manual_seed(seed)
    np.random.seed(seed)
    env = train_env(method, seed, args, config)
    vec = RslRlRaceEnv(env)
    cfg = ppo_config(num_steps_per_env=args.steps_per_env)
    with contextlib.redirect_stdout(io.StringIO()):  # rsl_rl prints the models
        runner = OnPolicyRunner(vec, cfg, log_dir=None, device=str(vec.device))
    signal = PositiveAdvantage(env, runner) if METHODS[method] == "value_loss" else None
    lr = getattr(env, "curriculum", None)
    history = []
    t0 = time.perf_counter()
    env.stats(clear=True)
    for it in range(args.iterations):
        runner.learn(1)
        if signal is not None:
            signal()
        st = env.stats(clear=True)
        row = {
            "iteration": it,
            "env_steps": (it + 1) * args.num_envs * args.steps_per_env,
            "episodes": st.episodes,
            "mean_progress": st.mean_progress,
            "lap_rate": st.lap_rate,
            "replayed": math.nan,
            "levels": 0,
            "scored": 0,
            "seconds": time.perf_counter() - t0,
        }
        if lr is not None:
            snap = lr.snapshot()
            row["replayed"] = float(np.asarray(snap["replayed"]).mean())
            row["levels"] = len(snap["seed"])
            score = np.asarray(snap["score"], np.float64)
            row["scored"] = int(np.sum(score > 0))  # levels whose score is above 0
        history.append(row)
        if verbose and (it % 25 == 0 or it == args.iterations - 1):
            print(
                f"  {method} seed {seed} it {it:4d}: progress {st.mean_progress:.3f} laps, "
                f"laps done {st.lap_rate:.2f}, replayed {row['replayed']:.2f}, "
                f"{row['seconds']:.0f} s",
                flush=True,
            )
    return runner, env, history


# -------------------------------------------------------------------------- evaluation
def episode_metrics(final, reason, lap_time, par) -> dict:
    """The four metrics of one episode per env: ``lap_rate`` (reached ``max_laps``),
    ``crash_rate`` (left the road), ``mean_progress`` (laps) and ``mean_par_percent`` (mean
    of ``100 * lap time / par`` over the timed laps, NaN when none; ``laps_timed``)."""
    laps = (reason & RaceDone.LAPS) != 0
    crash = (reason & RaceDone.OOB) != 0
    timed = np.isfinite(lap_time) & np.isfinite(par) & (par > 0)
    pct = 100.0 * lap_time[timed] / par[timed]
    return {
        "episodes": int(len(final)),
        "lap_rate": float(laps.mean()),
        "crash_rate": float(crash.mean()),
        "mean_progress": float(np.nanmean(final)),
        "mean_par_percent": float(pct.mean()) if timed.any() else math.nan,
        "laps_timed": int(timed.sum()),
    }


def drive(runner, env: RaceEnv) -> tuple[dict, dict]:
    """One episode per env of ``env`` (a racing line on each course); returns the metrics
    and the per-env arrays (``progress``, ``reason``, ``lap_time``, ``par``) as lists."""
    par = env.racing_line.lap_time.numpy().astype(np.float64)  # the courses stay: one read
    lap_time = np.full(env.num_envs, np.nan)
    final, reason = first_episodes(runner, env, lap_time)
    per_env = {
        "progress": final.tolist(),
        "reason": reason.tolist(),
        "lap_time": lap_time.tolist(),
        "par": par.tolist(),
    }
    return episode_metrics(final, reason, lap_time, par), per_env


def held_out(runner, args, config: RaceConfig) -> dict:
    """The generated courses of seeds ``HELD_OUT + i`` (epoch 0), one episode each."""
    seeds = [HELD_OUT + i for i in range(args.eval_envs)]
    env = RaceEnv(
        len(seeds),
        args.device,
        seeds,
        config=config.replace(racing_line="par"),
        new_course_on_reset=False,
    )
    metrics, _ = drive(runner, env)
    return metrics


def suite_circuit_files(folder: Path) -> list[Path]:
    """The test suite's circuits (``tests/io/__init__.py`` CIRCUITS) written into ``folder``
    in the database layout (millimetres, as the generalization study writes them)."""
    from tests.io import CIRCUITS, write_csv

    paths = []
    for name, make in CIRCUITS.items():
        p = folder / f"suite-{name}.csv"
        write_csv(p, *make(), fmt="{:.3f}")
        paths.append(p)
    return paths


def load_circuits(paths: list[Path], device) -> tuple[list, list[str]]:
    """The circuits of ``paths`` scaled to the generated half width, and the names of those
    left out as invalid (``studies/generalization.py``'s ``scaled_circuits``)."""
    from track_gen.io import read_tum

    return scaled_circuits([read_tum(p) for p in paths], device)


def circuit_env(tracks: list, args, config: RaceConfig) -> RaceEnv:
    """One env per circuit, a racing line on each, episodes of ``--circuit-steps`` steps
    (default: ``max_laps`` laps of the longest circuit at half the top speed)."""
    from track_gen.io import tracks_spec

    steps = args.circuit_steps
    if steps is None:
        longest = max(
            float(np.sum(np.linalg.norm(np.roll(t.xy, -1, 0) - t.xy, axis=1))) for t in tracks
        )
        pace = 0.5 * config.max_speed * config.dt  # track units per step
        steps = int(math.ceil(config.max_laps * longest / pace))
    cfg = config.replace(racing_line="par", max_episode_steps=steps)
    spec = tracks_spec(tracks, num_envs=len(tracks), device=args.device, units="metres")
    return RaceEnv(len(tracks), None, 0, config=cfg, spec=spec, new_course_on_reset=False)


def on_circuits(runner, env: RaceEnv, names: list[str]) -> dict:
    """The metrics over the circuits, and each circuit's episode."""
    metrics, per_env = drive(runner, env)
    metrics["per_circuit"] = {n: {k: per_env[k][i] for k in per_env} for i, n in enumerate(names)}
    metrics["episode_steps"] = env.config.max_episode_steps
    return metrics


# ------------------------------------------------------------------------------ report
METRICS = (
    ("lap_rate", "laps completed", "{:.3f}"),
    ("crash_rate", "crashed", "{:.3f}"),
    ("mean_progress", "progress (laps)", "{:.3f}"),
    ("mean_par_percent", "lap time, % of par", "{:.1f}"),
)


def mean_std(values, fmt: str) -> str:
    v = [x for x in values if x is not None and math.isfinite(x)]
    if not v:
        return "n/a"
    tail = "" if len(v) == len(values) else f" ({len(v)} of {len(values)} seeds)"
    return f"{fmt.format(np.mean(v))} +- {fmt.format(np.std(v))}{tail}"


def table(runs: list[dict], where: str) -> str:
    """A markdown table of ``where`` (``held_out``, ``circuits``): mean +- std over seeds."""
    head = "| method | " + " | ".join(label for _, label, _ in METRICS) + " |"
    lines = [head, "|---" * (len(METRICS) + 1) + "|"]
    for method in METHODS:
        rs = [r[where] for r in runs if r["method"] == method]
        if not rs:
            continue
        cells = [mean_std([r[k] for r in rs], fmt) for k, _, fmt in METRICS]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(runs: list[dict], path: Path) -> None:
    """One panel per method: each seed's training curve (mean episode progress per PPO
    iteration, thin) and their mean (thick), over env steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = [m for m in METHODS if any(r["method"] == m for r in runs)]
    fig, axes = plt.subplots(
        1, len(methods), figsize=(4.0 * len(methods), 3.4), dpi=100, sharey=True, squeeze=False
    )
    for ax, method in zip(axes[0], methods, strict=True):
        rs = [r for r in runs if r["method"] == method]
        curves = []
        for r in rs:
            x = np.array([h["env_steps"] for h in r["history"]]) / 1e6
            y = np.array([h["mean_progress"] for h in r["history"]], dtype=np.float64)
            curves.append(y)
            ax.plot(x, y, lw=0.8, alpha=0.5, label=f"seed {r['train_seed']}")
        ax.plot(x, np.nanmean(np.stack(curves), 0), lw=2.0, color="k", label="mean")
        ax.set_title(method, fontsize=10)
        ax.set_xlabel("env steps (millions)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("training episode progress (laps)")
    axes[0][0].set_ylim(bottom=0)
    axes[0][-1].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# -------------------------------------------------------------------------------- main
def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--train-seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--iterations", type=int, default=150)
    ap.add_argument("--steps-per-env", type=int, default=24)
    ap.add_argument("--buffer-size", type=int, default=512, help="LevelReplay slots")
    ap.add_argument("--replay-prob", type=float, default=0.5)
    ap.add_argument("--staleness", type=float, default=0.3)
    ap.add_argument("--temperature", type=float, default=0.1)
    ap.add_argument("--eval-envs", type=int, default=256, help="held-out generated courses")
    ap.add_argument("--circuits", type=Path, default=None, help="folder of TUM-layout CSVs")
    ap.add_argument("--circuit-steps", type=int, default=None, help="circuit episode steps")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument(
        "--out", type=Path, default=Path(tempfile.gettempdir()) / "track_gen_curriculum_study"
    )
    ap.add_argument("--smoke", action="store_true", help="a seconds-long run of everything")
    args = ap.parse_args(argv)
    if args.smoke:
        args.num_envs, args.iterations, args.steps_per_env = 16, 2, 8
        args.buffer_size, args.eval_envs = 8, 8
        args.circuit_steps = args.circuit_steps or 40
        args.train_seeds = args.train_seeds[:2]
    for name in ("num_envs", "iterations", "steps_per_env", "buffer_size", "eval_envs"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.circuit_steps is not None and args.circuit_steps < 1:
        ap.error(f"--circuit-steps must be >= 1, got {args.circuit_steps}")
    if args.circuits is not None and not sorted(args.circuits.glob("*.csv")):
        ap.error(f"--circuits {args.circuits}: no *.csv file there (a folder of TUM CSVs)")
    if len(set(args.train_seeds)) != len(args.train_seeds):
        ap.error(f"--train-seeds must be distinct, got {args.train_seeds}")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    wp.config.quiet = True
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    config = RaceConfig()
    wall0 = time.perf_counter()

    with tempfile.TemporaryDirectory() as tmp:
        paths = suite_circuit_files(Path(tmp))
        if args.circuits is not None:
            paths += sorted(args.circuits.glob("*.csv"))
        tracks, dropped = load_circuits(paths, args.device)
    names = [t.name for t in tracks]
    print(f"circuits: {', '.join(names)}" + (f" (invalid, left out: {dropped})" if dropped else ""))

    runs = []
    for method in args.methods:
        for seed in args.train_seeds:
            t0 = time.perf_counter()
            runner, env, history = train(method, seed, args, config, verbose=not args.smoke)
            train_s = time.perf_counter() - t0
            row = {
                "method": method,
                "train_seed": seed,
                "curriculum": curriculum_settings(method, seed, args),
                "train_seconds": train_s,
                "train_final_progress": float(
                    np.nanmean([h["mean_progress"] for h in history[-5:]])
                ),
                "history": history,
                "held_out": held_out(runner, args, config),
                "circuits": on_circuits(runner, circuit_env(tracks, args, config), names),
            }
            row["seconds"] = time.perf_counter() - t0
            runs.append(row)
            h, c = row["held_out"], row["circuits"]
            print(
                f"{method:12s} seed {seed}: held-out laps {h['lap_rate']:.3f} crash "
                f"{h['crash_rate']:.3f} progress {h['mean_progress']:.3f} par "
                f"{h['mean_par_percent']:.1f}% | circuits laps {c['lap_rate']:.3f} crash "
                f"{c['crash_rate']:.3f} progress {c['mean_progress']:.3f} par "
                f"{c['mean_par_percent']:.1f}% ({train_s:.0f} s training, "
                f"{row['seconds']:.0f} s)",
                flush=True,
            )
            del runner, env

    wall = time.perf_counter() - wall0
    text = (
        f"Held-out generated courses ({args.eval_envs}, seeds {HELD_OUT}+):\n\n"
        f"{table(runs, 'held_out')}\n\n"
        f"Real circuits ({len(names)}: {', '.join(names)}):\n\n{table(runs, 'circuits')}\n"
    )
    print()
    print(text)
    env_steps = args.num_envs * args.steps_per_env * args.iterations
    study = {
        "command": " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]]),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "env_steps_per_run": env_steps,
        "circuits": names,
        "invalid_circuits": dropped,
        "wall_seconds": wall,
        "runs": runs,
    }
    (args.out / "study.json").write_text(json.dumps(no_nan(study), indent=1))
    (args.out / "table.md").write_text(text)
    plot(runs, args.out / "curriculum_study.png")
    print(
        f"ok: {len(runs)} runs of {env_steps:,} env steps in {wall:.0f} s; wrote "
        f"{args.out}/study.json, table.md and curriculum_study.png"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
