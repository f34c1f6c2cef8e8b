"""Env-step throughput of ``track_gen.envs`` with the policy in the loop (env-steps/s).

Run:  PYTHONPATH=. python benchmarks/env_step.py --device cpu --E 256 1024 --steps 200

For each E: a :class:`RaceEnv` behind the rsl_rl adapter, driven by the PPO actor of
``ppo_config()`` (an untrained MLP 18-64-64-2 with observation normalization, sampling its
Gaussian as in a training rollout) for ``--steps`` steps after ``--warmup`` steps. Prints
env-steps/s (E * steps / s) with the policy forward pass included, the same for the env alone
(uniform random actions drawn beforehand), the ms per step and the auto-resets per step.
Episodes end and courses regenerate as in early training (random actions crash often: a
pessimistic regeneration load). No pass/fail.
"""

from __future__ import annotations

import argparse
import json
import time

import torch
import warp as wp

from track_gen.envs import RaceEnv
from track_gen.envs.rsl_rl import RslRlRaceEnv, ppo_config


def measure(E: int, device, steps: int, warmup: int, captured: bool) -> dict:
    from rsl_rl.runners import OnPolicyRunner

    torch.manual_seed(0)
    env = RaceEnv(E, device, 0, captured=captured)
    vec = RslRlRaceEnv(env)
    runner = OnPolicyRunner(vec, ppo_config(), log_dir=None, device=str(vec.device))
    actor = runner.alg.actor
    out = {"E": E, "device": str(env.device), "captured": captured}
    with torch.inference_mode():
        obs = vec.get_observations()
        for _ in range(warmup):
            obs, *_ = vec.step(actor(obs, stochastic_output=True))
        wp.synchronize_device(env.device)
        env.stats(clear=True)
        t = time.perf_counter()
        for _ in range(steps):
            obs, *_ = vec.step(actor(obs, stochastic_output=True))
        wp.synchronize_device(env.device)
        dt = time.perf_counter() - t
        st = env.stats(clear=True)
        out["steps_per_s_with_policy"] = E * steps / dt
        out["ms_per_step_with_policy"] = 1e3 * dt / steps
        out["resets_per_step"] = st.episodes / steps
        gen = torch.Generator(device=vec.device).manual_seed(0)
        actions = torch.rand((steps, E, 2), generator=gen, device=vec.device) * 2.0 - 1.0
        t = time.perf_counter()
        for i in range(steps):
            vec.step(actions[i])
        wp.synchronize_device(env.device)
        dt = time.perf_counter() - t
        out["resets_per_step_env_only"] = env.stats(clear=True).episodes / steps
        out["steps_per_s_env_only"] = E * steps / dt
        out["ms_per_step_env_only"] = 1e3 * dt / steps
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--E", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--captured", action="store_true", help="replay a recorded step")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args(argv)
    wp.config.quiet = True
    torch.set_num_threads(args.threads)
    rows = []
    for E in args.E:
        r = measure(E, args.device, args.steps, args.warmup, args.captured)
        rows.append(r)
        print(
            f"E={E:5d} {r['device']}: {r['steps_per_s_with_policy']:9.0f} env-steps/s with the "
            f"policy ({r['ms_per_step_with_policy']:.2f} ms/step), "
            f"{r['resets_per_step']:.1f} auto-resets/step; env only "
            f"{r['steps_per_s_env_only']:9.0f} ({r['ms_per_step_env_only']:.2f} ms/step, "
            f"{r['resets_per_step_env_only']:.1f} auto-resets/step)",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
