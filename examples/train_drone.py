"""Train a quadrotor racing policy with rsl_rl PPO on gate courses regenerated per episode.

Run:  python examples/train_drone.py --device cpu --out /tmp/train_drone
      (``--iterations 2 --num-envs 16 --eval-envs 4`` for a smoke run)

Each of the ``--num-envs`` envs of a :class:`track_gen.envs.DroneRaceEnv` (the 5-inch racing
quad, ``--preset crazyflie`` for the Crazyflie) flies its own generated gate course in metres;
an ended episode's env gets the next course of its seed. After every PPO iteration the script
reads the episodes that ended in it (mean progress in laps, the share that completed
``max_laps`` laps). It writes ``metrics.json`` and ``training_curve.png`` into ``--out``.

Then the policy (mean action) flies one episode on each of ``--eval-envs`` held-out courses
(seeds 1,000,000 + e, never trained on) and on every published waypoint path of ``--paths``
(``*.json`` in the layout of ``../shared/data/drone``, read with ``io.read_waypoint_path`` and
flown as the reader's gate course, ``io.gates_spec``), each with a minimum-time par planned on
it (``DroneConfig(par=True)``: the drone's thrust bound, the observation unchanged). Reported:
gates passed (share of the episode's ``max_laps * count`` gates), laps completed, crash rate,
and the timed laps' time as % of par.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
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

from track_gen import io
from track_gen.envs import DroneRaceEnv, RaceDone, drone_config
from track_gen.envs.rsl_rl import RslRlEnv, ppo_config

#: Seed of the first held-out course (env e: HELD_OUT + e, epoch 0).
HELD_OUT = 1_000_000
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")


def train(
    *,
    config,
    num_envs=256,
    iterations=100,
    seed=0,
    device=None,
    steps_per_env=32,
    verbose=True,
    **ppo,
):
    """PPO from scratch; returns ``(runner, env, history)`` (one dict per iteration:
    ``episodes``, ``mean_progress`` laps, ``lap_rate``, ``mean_length`` steps, ``seconds``).
    ``ppo``: keyword arguments of ``ppo_config`` over this script's (``init_std`` 0.3, two
    hidden layers of 128)."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    from rsl_rl.runners import OnPolicyRunner

    env = DroneRaceEnv(num_envs, device, seed * 100003, config=config)
    vec = RslRlEnv(env)
    ppo = {"init_std": 0.3, "hidden_dims": (128, 128), **ppo}
    cfg = ppo_config(num_steps_per_env=steps_per_env, **ppo)
    runner = OnPolicyRunner(vec, cfg, log_dir=None, device=str(vec.device))
    history = []
    t0 = time.perf_counter()
    env.stats(clear=True)
    for it in range(iterations):
        runner.learn(1)
        st = env.stats(clear=True)
        row = {
            "iteration": it,
            "episodes": st.episodes,
            "mean_progress": st.mean_progress,
            "lap_rate": st.lap_rate,
            "mean_length": st.mean_length,
            "seconds": time.perf_counter() - t0,
        }
        history.append(row)
        if verbose and (it % 10 == 0 or it == iterations - 1):
            print(
                f"seed {seed} it {it:4d}  episodes {st.episodes:5d}  progress "
                f"{st.mean_progress:.3f} laps  laps done {st.lap_rate:.2f}  "
                f"{row['seconds']:.0f} s",
                flush=True,
            )
    return runner, env, history


def fly(runner, env: DroneRaceEnv, record: int = 0) -> dict:
    """Each env's first episode with the policy's mean action (the courses stay): per env
    ``gates`` passed, ``laps`` completed, ``crashed``, ``lap_time`` (s, NaN: none timed),
    ``par`` (s), ``count`` (gates of the course), ``valid``; with ``record`` the first
    ``record`` envs' positions per step (``track``, float ``[steps, record, 3]``, m)."""
    vec = RslRlEnv(env)
    policy = runner.get_inference_policy(device=str(vec.device))
    n = env.num_envs
    count = env.course.result.count.numpy().astype(np.int64)
    valid = env.course.result.valid.numpy() != 0
    par = env.par.time.numpy().astype(np.float64)
    gates = np.full(n, -1, np.int64)
    reason = np.zeros(n, np.int64)
    lap_time = np.full(n, np.nan)
    progress = np.full(n, np.nan)
    track = []
    obs = vec.get_observations()
    with torch.inference_mode():
        for _ in range(env.config.max_episode_steps):
            obs, _, dones, _ = vec.step(policy(obs))
            d = dones.cpu().numpy() != 0
            first = d & (gates < 0)
            if record:  # a done env's position is its new episode's: NaN from its first end
                stop = ((gates >= 0) | first)[:record, None]
                track.append(np.where(stop, np.nan, env.position.numpy()[:record]))
            if first.any():
                gates[first] = env.final_gates.numpy()[first]
                reason[first] = env.done_reason.numpy()[first]
                lap_time[first] = env.final_lap_time.numpy()[first]
                progress[first] = env.final_progress.numpy()[first]
            if (gates >= 0).all():
                break
    laps = np.minimum(gates // np.maximum(count, 1), env.config.max_laps)
    return {
        "gates": gates,
        "count": count,
        "laps": laps,
        "crashed": (reason & int(RaceDone.OOB)) != 0,
        "lap_time": lap_time,
        "par": par,
        "valid": valid,
        "progress": progress,
        "track": np.array(track) if record else None,
    }


def summary(res: dict, max_laps: int) -> dict:
    """Gates passed (share of ``max_laps * count``), laps completed, crash rate and timed
    laps' time as % of par, over the valid envs."""
    v = res["valid"] & (res["count"] > 0)
    share = np.minimum(res["gates"], max_laps * res["count"]) / np.maximum(
        max_laps * res["count"], 1
    )
    timed = v & np.isfinite(res["lap_time"]) & np.isfinite(res["par"]) & (res["par"] > 0)
    pct = 100.0 * res["lap_time"][timed] / res["par"][timed]
    return {
        "envs": int(v.sum()),
        "invalid": int((~v).sum()),
        "gates_passed": float(share[v].mean()) if v.any() else math.nan,
        "mean_laps": float(res["laps"][v].mean()) if v.any() else math.nan,
        "lap_rate": float((res["laps"][v] >= max_laps).mean()) if v.any() else math.nan,
        "crash_rate": float(res["crashed"][v].mean()) if v.any() else math.nan,
        "laps_timed": int(timed.sum()),
        "par_percent": float(pct.mean()) if timed.any() else math.nan,
    }


def evaluate_generated(runner, config, n: int, device=None) -> dict:
    """One episode on each of ``n`` held-out generated courses (seeds ``HELD_OUT + e``)."""
    env = DroneRaceEnv(
        n, device, HELD_OUT, config=config.replace(par=True), new_course_on_reset=False
    )
    return summary(fly(runner, env), config.max_laps)


def read_paths(folder: str) -> list:
    """The waypoint paths ``*.json`` of ``folder`` (sorted by name; none if absent)."""
    return [io.read_waypoint_path(f) for f in sorted(glob.glob(os.path.join(folder, "*.json")))]


def path_env(paths, config, device=None) -> DroneRaceEnv:
    """One env per path, flying its gate course (``io.gates_spec``, metres) with a par."""
    spec = io.gates_spec(
        paths, num_envs=len(paths), device=device, gate_width=config.gate_width, unit="m"
    )
    return DroneRaceEnv(
        len(paths),
        None,
        0,
        config=config.replace(par=True),
        new_course_on_reset=False,
        spec=spec,
    )


def evaluate_paths(runner, config, paths, device=None) -> dict:
    """Each path flown once: ``{name: summary}``."""
    res = fly(runner, path_env(paths, config, device))
    out = {}
    for k, p in enumerate(paths):
        one = {key: (v[k : k + 1] if isinstance(v, np.ndarray) else v) for key, v in res.items()}
        out[p.name] = {
            **summary(one, config.max_laps),
            "gates": int(res["gates"][k]),
            "count": int(res["count"][k]),
            "par": float(res["par"][k]),
            "lap_time": float(res["lap_time"][k]),
        }
    return out


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
    ax.plot(it, [h["lap_rate"] for h in history], label="episodes completing max_laps")
    ax.set_xlabel("PPO iteration")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--preset", default="racing_5inch", choices=("racing_5inch", "crazyflie"))
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--steps-per-env", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-laps", type=int, default=1, help="DroneConfig.max_laps (training)")
    ap.add_argument("--eval-laps", type=int, default=2, help="max_laps of the evaluation")
    ap.add_argument("--eval-envs", type=int, default=256, help="held-out courses flown")
    ap.add_argument("--paths", default=os.path.join(DATA, "drone"), help="waypoint paths")
    ap.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "track_gen_train_drone"))
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a DroneConfig field of the training (a JSON value), repeatable",
    )
    ap.add_argument("--init-std", type=float, default=0.3, help="PPO's initial action std")
    ap.add_argument("--entropy", type=float, default=0.003, help="PPO's entropy coefficient")
    ap.add_argument("--lr", type=float, default=1e-3, help="PPO's learning rate")
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)
    wp.config.quiet = True
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fields = {k: json.loads(v) for k, v in (a.split("=", 1) for a in args.set)}
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    config = drone_config(args.preset, **{"max_laps": args.max_laps, **fields})
    runner, env, history = train(
        config=config,
        num_envs=args.num_envs,
        iterations=args.iterations,
        seed=args.seed,
        device=args.device,
        steps_per_env=args.steps_per_env,
        init_std=args.init_std,
        entropy_coef=args.entropy,
        learning_rate=args.lr,
    )
    train_s = history[-1]["seconds"]
    t0 = time.perf_counter()
    eval_config = config.replace(max_laps=args.eval_laps)
    held = evaluate_generated(runner, eval_config, args.eval_envs, args.device)
    paths = read_paths(args.paths)
    flown = evaluate_paths(runner, eval_config, paths, args.device) if paths else {}
    metrics = {
        "command": " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]]),
        "preset": args.preset,
        "num_envs": args.num_envs,
        "iterations": args.iterations,
        "steps_per_env": args.steps_per_env,
        "seed": args.seed,
        "env_steps": args.num_envs * args.steps_per_env * args.iterations,
        "train_seconds": train_s,
        "eval_seconds": time.perf_counter() - t0,
        "config": dataclasses.asdict(config),
        "history": history,
        "held_out": {"first_seed": HELD_OUT, **held},
        "paths": flown,
    }
    (out / "metrics.json").write_text(json.dumps(no_nan(metrics), indent=1))
    runner.save(str(out / "model.pt"))
    plot(
        history,
        out / "training_curve.png",
        f"PPO on DroneRaceEnv ({args.preset}), E={args.num_envs}, seed {args.seed}",
    )
    print(
        f"held-out ({held['envs']} courses, {held['invalid']} invalid): gates passed "
        f"{100 * held['gates_passed']:.1f} %, laps {held['mean_laps']:.2f} / {args.eval_laps}, "
        f"crash rate {held['crash_rate']:.2f}, time {held['par_percent']:.1f} % of par over "
        f"{held['laps_timed']} timed laps"
    )
    for name, r in flown.items():
        print(
            f"path {name}: {r['gates']} of {args.eval_laps * r['count']} gates, laps "
            f"{r['mean_laps']:.0f}, crashed {bool(r['crash_rate'])}, time "
            f"{r['par_percent']:.1f} % of par {r['par']:.2f} s"
        )
    if not paths:
        print(f"(no waypoint paths under {args.paths})")
    print(f"ok: trained {train_s:.0f} s, wrote {out}/metrics.json and training_curve.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
