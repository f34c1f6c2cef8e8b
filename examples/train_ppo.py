"""Train a racing policy with rsl_rl PPO on courses regenerated per episode (CPU-sized).

Run:  python examples/train_ppo.py --device cpu --out /tmp/train_ppo
      (about 4 minutes on a 2-core CPU; ``--iterations 2 --num-envs 16`` for a smoke run)

Each of the ``--num-envs`` envs of a :class:`track_gen.envs.RaceEnv` drives its own course;
an ended episode's env gets the next course of its seed (``new_course_on_reset``; pass
``--fixed-course`` to train every env on the course of one seed instead). After every PPO
iteration the script reads the episodes that ended in it (mean episode progress in laps, lap
completion rate). It writes ``metrics.json`` and ``training_curve.png`` into ``--out`` and
checks, with ``--check``, that the final mean episode progress (mean of the last 5
iterations) is at least 3x the first iteration's (the first in which episodes ended).

Then the policy (mean action) drives one episode on each of ``--eval-envs`` held-out courses
(seeds 1,000,000 + e, never trained on) with a racing line planned on each
(``RaceConfig(racing_line="par")``, the observation unchanged): the script reports the
held-out progress, lap rate and the mean lap time as a percentage of the racing line's par
(every timed lap: the laps of an episode after its first). ``--racing-line`` and
``--reward-par`` train with the racing line observed and with the par-pace reward.

``--obs`` (a comma list of ``state``, ``lidar``, ``lookahead``, ``cones``, ``raster``;
default ``state``) picks the observation (``RaceConfig.observations``, its columns in that
order whatever the list's): ``--obs lidar`` trains from the LiDAR's 64 normalized ranges alone
(``--lidar-beams`` sets their number), ``--obs state,cones`` adds the nearest cones.
"""

from __future__ import annotations

import argparse
import dataclasses
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

from track_gen.envs import RaceConfig, RaceDone, RaceEnv
from track_gen.envs.rsl_rl import RslRlRaceEnv, ppo_config
from track_gen.tools import observation_terms


def make_env(num_envs: int, device, seed: int, fixed_course: bool, config=None) -> RaceEnv:
    """The training env: envs ``e`` seeded ``seed * 100003 + e`` and a new course per
    episode, or (``fixed_course``) every env on the one course of seed ``seed``."""
    seeds = [seed] * num_envs if fixed_course else seed * 100003
    return RaceEnv(num_envs, device, seeds, config=config, new_course_on_reset=not fixed_course)


#: Seed of the first held-out course (env e: HELD_OUT + e, epoch 0), as in the generalization
#: study (studies/generalization.py).
HELD_OUT = 1_000_000


def train(
    *,
    num_envs: int = 256,
    iterations: int = 150,
    seed: int = 0,
    device=None,
    fixed_course: bool = False,
    num_steps_per_env: int = 24,
    config: RaceConfig | None = None,
    verbose: bool = True,
):
    """Train; returns ``(runner, env, history)``, ``history`` a list of per-iteration dicts
    (``iteration``, ``episodes``, ``mean_progress`` laps, ``lap_rate``, ``mean_reward`` per
    step, ``seconds``)."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    from rsl_rl.runners import OnPolicyRunner

    env = make_env(num_envs, device, seed, fixed_course, config)
    vec = RslRlRaceEnv(env)
    cfg = ppo_config(num_steps_per_env=num_steps_per_env)
    runner = OnPolicyRunner(vec, cfg, log_dir=None, device=str(vec.device))
    reward = wp.to_torch(env.reward)
    history = []
    t0 = time.perf_counter()
    env.stats(clear=True)
    for it in range(iterations):
        rewards = []
        # the runner's rollout, with the step's mean reward recorded on the side
        step = vec.step

        def recording_step(actions, _step=step, _rewards=rewards):
            out = _step(actions)
            _rewards.append(out[1].mean())
            return out

        vec.step = recording_step
        runner.learn(1)
        vec.step = step
        st = env.stats(clear=True)
        row = {
            "iteration": it,
            "episodes": st.episodes,
            "mean_progress": st.mean_progress,
            "lap_rate": st.lap_rate,
            "mean_length": st.mean_length,
            "mean_reward": float(torch.stack(rewards).mean()) if rewards else math.nan,
            "seconds": time.perf_counter() - t0,
        }
        history.append(row)
        if verbose and (it % 10 == 0 or it == iterations - 1):
            print(
                f"it {it:4d}  episodes {st.episodes:5d}  progress {st.mean_progress:.3f} laps  "
                f"laps done {st.lap_rate:.2f}  reward/step {row['mean_reward']:.4f}  "
                f"{row['seconds']:.0f} s",
                flush=True,
            )
    del reward
    return runner, env, history


def first_episodes(
    runner, env: RaceEnv, lap_time: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Drive each env's first episode with the policy's mean action; returns each episode's
    progress (laps, float ``[E]``) and why it ended (``RaceDone`` bits, int ``[E]``).
    ``lap_time``: a float ``[E]`` array that gets each episode's last timed lap (s, NaN when
    it timed none)."""
    vec = RslRlRaceEnv(env)
    policy = runner.get_inference_policy(device=str(vec.device))
    n = env.num_envs
    final = np.full(n, np.nan)
    reason = np.zeros(n, np.int64)
    if lap_time is None:
        lap_time = np.full(n, np.nan)
    lap_time[:] = np.nan
    obs = vec.get_observations()
    with torch.inference_mode():
        for _ in range(env.config.max_episode_steps):
            obs, _, dones, _ = vec.step(policy(obs))
            d = dones.cpu().numpy() != 0
            first = d & np.isnan(final)
            if first.any():
                final[first] = env.final_progress.numpy()[first]
                reason[first] = env.done_reason.numpy()[first]
                lap_time[first] = env.final_lap_time.numpy()[first]
            if not np.isnan(final).any():
                break
    return final, reason


def evaluate(runner, seeds, device=None, config=None) -> dict:
    """One episode per held-out course (``seeds``: one int per env, or an int ``s`` for
    ``s + e``) with the policy's mean action, a racing line planned on each course; returns
    ``mean_progress`` (laps), ``lap_rate``, ``laps_timed``, ``mean_par_percent`` (mean of
    ``100 * lap time / par`` over the timed laps, NaN when none), ``episodes`` and per-env
    ``progress``, ``lap_time`` (s, None when none) and ``par`` (s, None without a line)."""
    config = config or RaceConfig()
    if config.racing_line == "off":
        config = config.replace(racing_line="par")  # the par, the observation unchanged
    n = len(seeds) if not isinstance(seeds, int) else 256
    env = RaceEnv(n, device, seeds, config=config, new_course_on_reset=False)
    par = env.racing_line.lap_time.numpy().astype(np.float64)  # the courses stay: one read
    lap_time = np.full(n, np.nan)
    final, reason = first_episodes(runner, env, lap_time)
    laps = (reason & RaceDone.LAPS) != 0
    timed = np.isfinite(lap_time) & np.isfinite(par) & (par > 0)
    pct = 100.0 * lap_time[timed] / par[timed]
    return {
        "episodes": int(n),
        "mean_progress": float(np.nanmean(final)),
        "lap_rate": float(laps.mean()),
        "laps_timed": int(timed.sum()),
        "mean_par_percent": float(pct.mean()) if timed.any() else math.nan,
        "progress": final.tolist(),
        "lap_time": no_nan(lap_time.tolist()),  # None: no timed lap (strict JSON)
        "par": no_nan(par.tolist()),  # None: no racing line on that course
    }


def no_nan(x):
    """``x`` with every NaN float as None (strict JSON)."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: no_nan(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [no_nan(v) for v in x]
    return x


def plot(history, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    it = [h["iteration"] for h in history]
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    ax.plot(it, [h["mean_progress"] for h in history], label="mean episode progress (laps)")
    laps = RaceConfig().max_laps
    ax.plot(it, [h["lap_rate"] for h in history], label=f"episodes reaching {laps} laps")
    ax.set_xlabel("PPO iteration")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--iterations", type=int, default=150)
    ap.add_argument("--steps-per-env", type=int, default=24)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fixed-course", action="store_true")
    ap.add_argument(
        "--racing-line",
        default="off",
        choices=("off", "par", "observe"),
        help="RaceConfig.racing_line of the training env ('observe': the line in the obs)",
    )
    ap.add_argument("--reward-par", type=float, default=0.0, help="RaceConfig.reward_par")
    ap.add_argument("--eval-envs", type=int, default=256, help="held-out courses driven")
    ap.add_argument(
        "--out",
        default=str(Path(tempfile.gettempdir()) / "track_gen_train_ppo"),
        help="folder for metrics.json and training_curve.png",
    )
    ap.add_argument("--check", action="store_true", help="exit 1 unless the curve rises 3x")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    terms = ("state", *observation_terms())
    ap.add_argument(
        "--obs",
        default="state",
        help=f"observation terms, a comma list of {', '.join(terms)}",
    )
    ap.add_argument("--lidar-beams", type=int, default=64, help="RaceConfig.lidar_num_beams")
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.obs.split(",") if n.strip()]
    unknown = [n for n in names if n not in terms]
    if unknown or not names:
        ap.error(f"--obs {args.obs!r}: use a comma list of {', '.join(terms)}")
    observations = tuple(t for t in terms if t in names)
    wp.config.quiet = True
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    config = RaceConfig(
        racing_line=args.racing_line,
        reward_par=args.reward_par,
        observations=observations,
        lidar_num_beams=args.lidar_beams,
    )
    runner, env, history = train(
        num_envs=args.num_envs,
        iterations=args.iterations,
        seed=args.seed,
        device=args.device,
        fixed_course=args.fixed_course,
        num_steps_per_env=args.steps_per_env,
        config=config,
    )
    held = evaluate(
        runner,
        [HELD_OUT + e for e in range(args.eval_envs)],
        device=args.device,
        config=config,
    )
    # the first iteration in which episodes ended (a tiny run may end none in its first)
    first = next((h["mean_progress"] for h in history if h["episodes"] > 0), math.nan)
    tail = [h["mean_progress"] for h in history[-5:]]
    final = float(np.nanmean(tail)) if not all(math.isnan(v) for v in tail) else math.nan
    ratio = final / first if first > 0 else math.nan
    metrics = {
        "command": " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]]),
        "num_envs": args.num_envs,
        "iterations": args.iterations,
        "steps_per_env": args.steps_per_env,
        "seed": args.seed,
        "fixed_course": args.fixed_course,
        "env_steps": args.num_envs * args.steps_per_env * args.iterations,
        "seconds": history[-1]["seconds"],
        "first_progress": first,
        "final_progress": final,
        "ratio": ratio,
        "config": dataclasses.asdict(config),
        "history": history,
        "held_out": {"first_seed": HELD_OUT, **held},
    }
    (out / "metrics.json").write_text(json.dumps(no_nan(metrics), indent=1))
    plot(
        history,
        out / "training_curve.png",
        f"PPO on RaceEnv, E={args.num_envs}, "
        f"{'one fixed course' if args.fixed_course else 'new course per episode'}",
    )
    if args.check and not ratio >= 3.0:
        print("FAIL: the final mean episode progress is not 3x the first iteration's")
        return 1
    par_text = (
        f"mean lap time {held['mean_par_percent']:.1f} % of par over {held['laps_timed']} "
        "timed laps"
        if held["laps_timed"]
        else f"no timed lap (no episode reached {config.max_laps} laps): train longer"
    )
    print(
        f"held-out ({held['episodes']} courses): progress {held['mean_progress']:.3f} laps, "
        f"{held['lap_rate']:.2f} reach {config.max_laps} laps, {par_text}"
    )
    print(
        f"ok: first-iteration progress {first:.3f} laps, final (last 5) {final:.3f} laps "
        f"({ratio:.1f}x) in {history[-1]['seconds']:.0f} s; wrote {out}/metrics.json and "
        f"{out}/training_curve.png"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
