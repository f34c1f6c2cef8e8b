"""Invalid fraction of gate courses versus gate width, per sampler.

Run from the repository root:

    PYTHONPATH=. python benchmarks/gate_width.py --device cpu --E 1024
    PYTHONPATH=. python benchmarks/gate_width.py --widths 0 0.1 0.2 0.3 0.4 --generators bezier

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
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    print(
        f"# invalid fraction (crossing-bars share) at E={args.E}, seed {args.seed}, "
        f"scale 1, default GateGenConfig",
        flush=True,
    )
    print(
        f"{'generator':<11}" + "".join(f"{'w=' + format(w, 'g'):>16}" for w in args.widths),
        flush=True,
    )
    for g in args.generators:
        cells = []
        for w in args.widths:
            cfg = GateGenConfig(generator=g, num_envs=args.E, device=args.device, gate_width=w)
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
