"""Add a sensor of your own to an env's observation: ``acme.start_gap``, in one folder
(``examples/sensor_start_gap/``), plus ONE registration line.

Run:  python examples/custom_sensor.py --device cpu --steps 40 --num-envs 8

The sensor answers where each env's start line lies in its car's frame; its observation term
writes two columns after the car's state. The script registers the term, builds a RaceEnv
observing ``("state", "acme.start_gap")``, drives it eager and recorded (a CUDA graph on a
GPU, a recording on the CPU) with the same actions, and checks that both give the same bytes,
that the sensor's columns match a NumPy oracle (the start line rotated into the car's frame
in float64) and that the state columns are those of a state-only env. See
docs/writing-a-sensor.md.
"""

from __future__ import annotations

import argparse

import numpy as np
import warp as wp
from sensor_start_gap import StartGapTerm  # the sensor's folder, beside this script

from track_gen import tools
from track_gen.envs import RaceConfig, RaceEnv

tools.register_term(StartGapTerm())  # the one registration line


def oracle(env) -> np.ndarray:
    """``[E, 2]``: bead 0 of each course in the car's frame (yaw rotation, float64), over
    max_range, clamped to [-1, 1]; 0 where the env is not usable."""
    E, n_max = env.num_envs, env.n_max
    start = env.course.result.center.numpy().reshape(E, n_max, 3)[:, 0].astype(np.float64)
    d = start - env.position.numpy().astype(np.float64)
    yaw = env.yaw.numpy().astype(np.float64)
    x = np.cos(yaw) * d[:, 0] + np.sin(yaw) * d[:, 1]
    y = -np.sin(yaw) * d[:, 0] + np.cos(yaw) * d[:, 1]
    r = env.config.term_settings("acme.start_gap").max_range
    cols = np.clip(np.stack([x, y], 1) / r, -1.0, 1.0)
    ok = (env.course.result.valid.numpy() != 0)[:, None]
    return np.where(ok, cols, 0.0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--num-envs", type=int, default=8)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)
    wp.config.quiet = True
    config = RaceConfig(observations=("state", "acme.start_gap"))
    E = args.num_envs
    eager = RaceEnv(E, args.device, 5, config=config)
    graph = RaceEnv(E, args.device, 5, config=config, captured=True)
    plain = RaceEnv(E, args.device, 5)  # the state alone
    a, b = eager.term_slices()["acme.start_gap"]
    assert (a, b) == (config.state_dim, config.state_dim + 2) and eager.obs_dim == b
    rng = np.random.default_rng(0)
    worst = 0.0
    for t in range(args.steps):
        actions = wp.array(rng.uniform(-1, 1, (E, 2)).astype(np.float32), device=eager.device)
        for env in (eager, graph, plain):
            env.step(actions)
        obs = eager.obs.numpy()
        assert obs.tobytes() == graph.obs.numpy().tobytes(), f"step {t}: replay != eager"
        assert np.array_equal(obs[:, :a], plain.obs.numpy()), f"step {t}: state columns"
        moved = eager.done.numpy() == 0  # a done env's obs is its new episode's first
        err = np.abs(obs[:, a:b] - oracle(eager))[moved]
        worst = max(worst, float(err.max(initial=0.0)))
        assert worst < 1e-4, f"step {t}: columns off the oracle by {worst}"
    print(
        f"ok: {E} envs x {args.steps} steps observe acme.start_gap (columns {a}..{b - 1}), "
        f"replay == eager, oracle within {worst:.1e}"
    )


if __name__ == "__main__":
    main()
