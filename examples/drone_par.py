"""Minimum-time pars of drone gate courses and of the published waypoint paths.

Run:  python examples/drone_par.py --device cpu --num-envs 16

A gate course with the `"min_time"` component (`Course.gates(..., min_time={...})`): every
env's par lap of a point mass (thrust acceleration |a - g| <= t_max, speed <= v_max) through
its gates, re-planned for the envs a masked regeneration rebuilds. The example checks each
trajectory on the host (thrust and speed bounds at every sample, the gates passed at their
passage times, the unmasked envs unchanged by the regeneration), then plans the published
paths of `../shared/data/drone` (when present; `--data` elsewhere) from rest to rest beside
their reference times.
"""

from __future__ import annotations

import argparse
import glob
import os

import numpy as np
import warp as wp

from track_gen import io
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import MinTimeUtility

LIMITS = {"t_max": 30.0, "v_max": 15.0, "gravity": 9.81}  # m/s^2, m/s on a ~30 m course
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")


def check_env(par, e: int, gates: np.ndarray, limits: dict) -> None:
    """Thrust and speed bounds at every sample, and every gate at its passage time."""
    n = int(par.sample_count.numpy()[e])
    R = par.rows_per_env
    t = par.sample_time.numpy()[e * R : e * R + n]
    p = par.position.numpy()[e * R : e * R + n]
    v = par.velocity.numpy()[e * R : e * R + n]
    th = par.thrust.numpy()[e * R : e * R + n - 1]
    assert np.linalg.norm(th, axis=1).max() <= limits["t_max"] * (1 + 1e-5)
    assert np.linalg.norm(v, axis=1).max() <= limits["v_max"] * (1 + 1e-5)
    K = par.capacity
    for i, when in enumerate(par.passage_time.numpy()[e * K : e * K + len(gates)]):
        j = int(np.argmin(np.abs(t - when)))
        assert np.linalg.norm(p[j] - gates[i]) <= 1e-4 * (1 + np.abs(gates).max())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--data", default=os.path.join(DATA, "drone"))
    args = ap.parse_args(argv)
    device = args.device or wp.get_preferred_device()
    E = args.num_envs

    course = Course.gates(
        presets.gates(num_envs=E, device=device, scale=20.0, gate_width=1.0),
        min_time=LIMITS,
        seeds=7,
    )
    par = course.components["min_time"].result
    gates = course.result
    for e in range(E):
        if par.status.numpy()[e] == 0:
            n = int(gates.count.numpy()[e])
            check_env(par, e, gates.host("position")[e, :n], LIMITS)
    lap = par.time.numpy()
    print(
        f"{E} gate courses: lap par {np.nanmin(lap):.2f} .. {np.nanmax(lap):.2f} s, "
        f"{int((par.status.numpy() == 0).sum())} converged, iterations "
        f"{par.iterations.numpy().mean():.1f}"
    )
    mask = np.zeros(E, np.int32)
    mask[::3] = 1
    before = lap.copy()
    course.inputs["regen_mask"].assign(mask)
    course.regenerate(mask=course.inputs["regen_mask"], advance=True)
    after = par.time.numpy()
    assert np.array_equal(after[mask == 0], before[mask == 0]), "an unmasked par changed"
    assert (after[mask == 1] != before[mask == 1]).all(), "a regenerated par did not change"

    files = sorted(glob.glob(os.path.join(args.data, "*.json")))
    for f in files:
        path = io.read_waypoint_path(f)
        planner = MinTimeUtility(
            **io.waypoint_arrays([path], num_envs=1, device=device),
            closed=False,
            t_max=path.t_max,
            v_max=path.v_max,
            gravity=path.gravity,
        )
        t = float(planner.result.time.numpy()[0])
        lim = {"t_max": path.t_max, "v_max": path.v_max}
        check_env(planner.result, 0, path.points(), lim)
        print(
            f"{path.name}: {t:.4f} s from rest to rest, reference {path.reference_time} s "
            f"({100 * t / path.reference_time:.1f}%)"
        )
        assert t <= 1.01 * path.reference_time
    if not files:
        print(f"(no published paths under {args.data})")
    print("ok: every par trajectory keeps its bounds and passes its gates; masked re-plans")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
