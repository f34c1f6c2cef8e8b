"""Invalid fraction of gate courses versus gate width, per sampler.

Run from the repository root:

    PYTHONPATH=. python benchmarks/gate_width.py --device cpu --E 1024
    PYTHONPATH=. python benchmarks/gate_width.py --widths 0 0.1 0.2 0.3 0.4 --generators bezier
    PYTHONPATH=. python benchmarks/gate_width.py --num-points 256 --num-points-per-segment 30

The sampler runs at the ``GateGenConfig`` defaults (gate resolution: 32 loop points, 2 per
spline segment) unless ``--num-points`` / ``--num-points-per-segment`` are given (256 and 30
are the track resolution the gates used before).

Wide gates on a course whose gates are close together get bars that cross in plan view
(``FailBit.CROSSING_BARS``); this prints, for each sampler and width, the fraction of a batch
(one generate() at seed --seed) that is invalid and the share of it due to crossing bars.
"""

from __future__ import annotations

import argparse
import sys

import warp as wp

from track_gen import FailBit, GateGenConfig, GateGenerator
from track_gen.pipeline import default_registry


def main(argv=None) -> int:
    samplers = [s for s in default_registry().samplers() if s not in ("mix", "centerline")]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--E", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--widths", type=float, nargs="+", default=[0.0, 0.1, 0.2, 0.3, 0.4])
    ap.add_argument(
        "--generators",
        nargs="+",
        choices=samplers,
        default=[s for s in samplers if s != "repulsive"],
    )
    ap.add_argument("--num-points", type=int, default=None, help="default: GateGenConfig's")
    ap.add_argument(
        "--num-points-per-segment", type=int, default=None, help="default: GateGenConfig's"
    )
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    resolution = {
        k: v
        for k, v in (
            ("num_points", args.num_points),
            ("num_points_per_segment", args.num_points_per_segment),
        )
        if v is not None
    }
    shown = GateGenConfig(**resolution)
    print(
        f"# invalid fraction (crossing-bars share) at E={args.E}, seed {args.seed}, "
        f"scale 1, default GateGenConfig but num_points={shown.num_points}, "
        f"num_points_per_segment={shown.num_points_per_segment}",
        flush=True,
    )
    print(
        f"{'generator':<11}" + "".join(f"{'w=' + format(w, 'g'):>16}" for w in args.widths),
        flush=True,
    )
    for g in args.generators:
        cells = []
        for w in args.widths:
            cfg = GateGenConfig(
                generator=g, num_envs=args.E, device=args.device, gate_width=w, **resolution
            )
            seq = GateGenerator(cfg, seeds=args.seed).generate()
            valid = seq.valid.numpy()
            bars = (seq.fail_mask.numpy() & int(FailBit.CROSSING_BARS)) != 0
            inv = 1.0 - valid.mean()
            share = bars.sum() / max(int((valid == 0).sum()), 1)
            cells.append(f"{inv:>9.3f} ({share:>4.0%})")
        print(f"{g:<11}" + "".join(f"{c:>16}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
