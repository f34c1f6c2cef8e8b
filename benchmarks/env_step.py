"""Env-step throughput of ``track_gen.envs`` with the policy in the loop (env-steps/s).

Run:  PYTHONPATH=. python benchmarks/env_step.py --device cpu --E 256 1024 --steps 200

For each E: a :class:`RaceEnv` behind the rsl_rl adapter, driven by the PPO actor of
``ppo_config()`` (an untrained MLP 18-64-64-2 with observation normalization, sampling its
Gaussian as in a training rollout) for ``--steps`` steps after ``--warmup`` steps. Prints
env-steps/s (E * steps / s) with the policy forward pass included, the same for the env alone
(uniform random actions drawn beforehand), the ms per step and the auto-resets per step.
Episodes end and courses regenerate as in early training (random actions crash often: a
pessimistic regeneration load). No pass/fail.

``--dynamics``: the car(s) to time: ``track-units`` (the default env: the kinematic car on
normalized courses), ``kinematic`` and ``single_track`` (``RaceConfig.for_vehicle(--vehicle,
dynamics=...)``: the vehicle in metres on ``presets.circuit`` courses, dt 0.1 s for the GT).
Run:  PYTHONPATH=. python benchmarks/env_step.py --E 1024 --dynamics kinematic single_track

``--env drone``: the same for a :class:`DroneRaceEnv` (the 5-inch preset, its observation of
32 columns: the state and two next gates; 4 actions), whose random actions crash within
about a second: a pessimistic regeneration load.

``--curriculum``: per E, the env alone (the same random actions) with and without
``RaceEnv(curriculum={"buffer_size": ..., "replay_prob": 0.5, "score": "learnability"})``:
a :class:`~track_gen.curriculum.LevelReplay` at the auto-reset (the env's signal: 1.0 where
the episode completed ``max_laps`` laps; ``update`` every step, then ``regenerate(done)`` in
place of ``course.regenerate(mask=done, advance=True)``), alternated
over ``--rounds`` rounds (medians), and the curriculum's own calls timed apart: ``update``
plus ``regenerate`` of an all-zero mask minus ``course.regenerate`` of the same mask.
"""

from __future__ import annotations

import argparse
import json
import time

import torch
import warp as wp

from track_gen.envs import DroneRaceEnv, RaceConfig, RaceEnv
from track_gen.envs.rsl_rl import RslRlRaceEnv, ppo_config

ENVS = {"race": RaceEnv, "drone": DroneRaceEnv}


def env_only(env: RaceEnv, device, steps: int, warmup: int) -> dict:
    """ms per env step (random actions drawn beforehand) and auto-resets per step."""
    vec = RslRlRaceEnv(env)
    gen = torch.Generator(device=vec.device).manual_seed(0)
    actions = torch.rand((warmup + steps, env.num_envs, 2), generator=gen, device=vec.device)
    actions = actions * 2.0 - 1.0
    with torch.inference_mode():
        for i in range(warmup):
            vec.step(actions[i])
        wp.synchronize_device(env.device)
        env.stats(clear=True)
        t = time.perf_counter()
        for i in range(warmup, warmup + steps):
            vec.step(actions[i])
        wp.synchronize_device(env.device)
        dt = time.perf_counter() - t
    return {"ms": 1e3 * dt / steps, "resets": env.stats(clear=True).episodes / steps}


def curriculum_calls(env: RaceEnv, reps: int = 200) -> float:
    """ms of the curriculum's own work per step, the median over ``reps`` paired runs:
    update + regenerate(zero mask) minus the course's regenerate of the same zero mask run
    right after it (pairs cancel most of a loaded machine's drift)."""
    zero = wp.zeros(env.num_envs, dtype=wp.int32, device=env.device)
    lr, course = env.curriculum, env.course

    def timed(fn) -> float:
        t = time.perf_counter()
        fn()
        wp.synchronize_device(env.device)
        return time.perf_counter() - t

    diffs = []
    for _ in range(reps):
        a = timed(lambda: (lr.update(zero, env.curriculum_signal), lr.regenerate(zero)))
        b = timed(lambda: course.regenerate(mask=zero, advance=False))
        diffs.append(1e3 * (a - b))
    return sorted(diffs)[reps // 2]


def measure_curriculum(E, device, steps, warmup, captured, rounds, buffer_size) -> dict:
    base, cur = [], []
    plain = RaceEnv(E, device, 0, captured=captured)
    settings = {"buffer_size": buffer_size, "replay_prob": 0.5, "score": "learnability"}
    level = RaceEnv(E, device, 0, captured=captured, curriculum=settings)
    for _ in range(rounds):
        base.append(env_only(plain, device, steps, warmup))
        cur.append(env_only(level, device, steps, warmup))
    med = sorted(r["ms"] for r in base)[rounds // 2]
    med_c = sorted(r["ms"] for r in cur)[rounds // 2]
    snap = level.curriculum.snapshot()
    calls = curriculum_calls(level)
    return {
        "E": E,
        "device": str(plain.device),
        "captured": captured,
        "buffer_size": buffer_size,
        "ms_per_step": med,
        "ms_per_step_curriculum": med_c,
        "overhead_pct": 100.0 * (med_c - med) / med,
        "rounds_ms": [r["ms"] for r in base],
        "rounds_ms_curriculum": [r["ms"] for r in cur],
        "resets_per_step": sum(r["resets"] for r in base) / rounds,
        "resets_per_step_curriculum": sum(r["resets"] for r in cur) / rounds,
        "replayed_share": float(snap["replayed"].mean()),
        "curriculum_calls_ms": calls,
        "curriculum_calls_pct": 100.0 * calls / med,
    }


def config_for(dynamics: str, vehicle: str) -> RaceConfig:
    """The env's config: the default one (``"track-units"``) or the vehicle's in metres."""
    if dynamics == "track-units":
        return RaceConfig()
    return RaceConfig.for_vehicle(vehicle, dynamics=dynamics)


def measure(
    E: int,
    device,
    steps: int,
    warmup: int,
    captured: bool,
    dynamics="track-units",
    vehicle="gt",
    kind: str = "race",
) -> dict:
    from rsl_rl.runners import OnPolicyRunner

    torch.manual_seed(0)
    if kind == "race":
        env = RaceEnv(E, device, 0, captured=captured, config=config_for(dynamics, vehicle))
    else:
        env = ENVS[kind](E, device, 0, captured=captured)
    vec = RslRlRaceEnv(env)
    runner = OnPolicyRunner(vec, ppo_config(), log_dir=None, device=str(vec.device))
    actor = runner.alg.actor
    A = env.actions.shape[1]
    out = {"env": kind, "E": E, "device": str(env.device), "captured": captured}
    if kind == "race":
        out["dynamics"] = dynamics
        if dynamics != "track-units":
            out["vehicle"] = vehicle
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
        actions = torch.rand((steps, E, A), generator=gen, device=vec.device) * 2.0 - 1.0
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
    ap.add_argument("--env", default="race", choices=tuple(ENVS), help="the env measured")
    ap.add_argument("--curriculum", action="store_true", help="with and without LevelReplay")
    ap.add_argument("--rounds", type=int, default=3, help="--curriculum: alternated rounds")
    ap.add_argument("--buffer-size", type=int, default=256, help="--curriculum: buffer slots")
    ap.add_argument(
        "--dynamics",
        nargs="+",
        default=["track-units"],
        choices=["track-units", "kinematic", "single_track"],
        help="the car(s): the default track-unit env, or the vehicle in metres on circuits",
    )
    ap.add_argument("--vehicle", default="gt", choices=["gt", "f1tenth"], help="metre cars' preset")
    args = ap.parse_args(argv)
    wp.config.quiet = True
    torch.set_num_threads(args.threads)
    rows = []
    if args.curriculum:
        for E in args.E:
            r = measure_curriculum(
                E, args.device, args.steps, args.warmup, args.captured, args.rounds,
                args.buffer_size,
            )  # fmt: skip
            rows.append(r)
            print(
                f"E={E:5d} {r['device']}: step + auto-reset {r['ms_per_step']:.2f} ms "
                f"({r['resets_per_step']:.1f} resets/step), with LevelReplay(buffer_size="
                f"{r['buffer_size']}) {r['ms_per_step_curriculum']:.2f} ms "
                f"({r['resets_per_step_curriculum']:.1f} resets/step, "
                f"{100 * r['replayed_share']:.0f}% replayed): {r['overhead_pct']:+.1f}%; the "
                f"curriculum's own calls {r['curriculum_calls_ms']:.3f} ms/step = "
                f"{r['curriculum_calls_pct']:.1f}% of the step "
                f"(rounds {' '.join(f'{x:.2f}' for x in r['rounds_ms'])} vs "
                f"{' '.join(f'{x:.2f}' for x in r['rounds_ms_curriculum'])} ms)",
                flush=True,
            )
        args.E = []
    dynamics = args.dynamics if args.env == "race" else ["track-units"]
    for E, dyn in ((E, d) for E in args.E for d in dynamics):
        r = measure(
            E, args.device, args.steps, args.warmup, args.captured, dyn, args.vehicle, args.env
        )
        rows.append(r)
        car = dyn if dyn == "track-units" else f"{args.vehicle} {dyn}"
        car = car if args.env == "race" else "racing_5inch"
        print(
            f"{args.env} E={E:5d} {r['device']} {car}: "
            f"{r['steps_per_s_with_policy']:9.0f} env-steps/s "
            f"with the policy ({r['ms_per_step_with_policy']:.2f} ms/step), "
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
