"""Invalid fraction of gate courses versus gate width, per sampler.

Run from the repository root:

    PYTHONPATH=. python benchmarks/gate_width.py --device cpu --E 1024
    PYTHONPATH=. python benchmarks/gate_width.py --widths 0 0.1 0.2 0.3 0.4 --generators bezier
    PYTHONPATH=. python benchmarks/gate_width.py --num-points 256 --num-points-per-segment 30

The sampler runs at the ``GateGenConfig`` defaults (gate resolution: 32 loop points, 2 per
spline segment; the bezier, hull, polar and checkpoint samplers write their corner-cut knot
polygon into those rows) unless ``--num-points`` / ``--num-points-per-segment`` are given.

Wide gates on a course whose gates are close together get bars that cross in plan view
(``FailBit.CROSSING_BARS``); this prints, for each sampler and width, the fraction of a batch
(one generate() at seed --seed) that is invalid and the share of it due to crossing bars.

Three placement columns follow (from the first width's batch; the placement does not depend
on the width): ``spread``, the share of gates whose arc gap to the next gate (the closing pair
included), measured along the sampler's loop between the loop points nearest to the gates, lies
within ``[0.5, 1.5] x L / K`` (``L`` the loop's length, ``K`` the env's gate count);
``order``, the share of envs whose gates go once around the loop in order; and ``spacing``, the
fraction of envs with ``FailBit.GATE_SPACING``.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import warp as wp

from track_gen import FailBit, GateGenConfig, GateGenerator
from track_gen.pipeline import default_registry


def arc_positions(loop: np.ndarray, pts: np.ndarray) -> tuple[np.ndarray, float]:
    """Arc length along the closed polyline ``loop`` (``[n, 2]``, from its first point) of the
    loop point nearest to each of ``pts`` (``[k, 2]``), and the loop's length."""
    loop = np.asarray(loop, np.float64)
    pts = np.asarray(pts, np.float64)
    d = np.roll(loop, -1, axis=0) - loop
    seg = np.linalg.norm(d, axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg)[:-1]])
    rel = pts[:, None, :] - loop[None, :, :]  # [k, n, 2]
    t = np.clip((rel * d).sum(-1) / np.maximum(seg * seg, 1e-300), 0.0, 1.0)
    dist = np.linalg.norm(rel - t[..., None] * d, axis=-1)
    i = dist.argmin(axis=1)
    k = np.arange(len(pts))
    return cum[i] + t[k, i] * seg[i], float(seg.sum())


def loop_gaps(loop: np.ndarray, pts: np.ndarray) -> tuple[np.ndarray, float]:
    """Arc gaps from each of the gates ``pts`` to the next (the closing pair included) along
    ``loop``, each in ``[0, L)``, and ``L``; gates in loop order have gaps summing to ``L``."""
    s, total = arc_positions(loop, pts)
    return np.mod(np.roll(s, -1) - s, total), total


def placement(gen, seq) -> tuple[float, float]:
    """``(spread, in_order)`` of a batch: the share of gates whose arc gap to the next gate
    along the sampler's loop lies within ``[0.5, 1.5] x L / K``, and the share of envs whose
    gates go once around the loop in order (gaps summing to ``L``)."""
    # the loop the gates were placed on: the sampler's output in the generator's workspace
    line = gen._ws.line.numpy().reshape(gen.layout.num_envs, gen.layout.num_points, 2)
    pos = seq.host("position")
    inside = gates = in_order = envs = 0
    for e, k in enumerate(seq.count.numpy()):
        if k < 3:
            continue
        gaps, total = loop_gaps(line[e], pos[e, :k, :2])
        slot = total / k
        inside += int(np.count_nonzero((gaps >= 0.5 * slot) & (gaps <= 1.5 * slot)))
        gates += int(k)
        in_order += int(abs(gaps.sum() - total) <= 1e-3 * total)
        envs += 1
    return inside / max(gates, 1), in_order / max(envs, 1)


def main(argv=None) -> int:
    # mix, centerline and real_track need options or inputs of their own
    skip = ("mix", "centerline", "real_track")
    samplers = [s for s in default_registry().samplers() if s not in skip]
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
    spacing_bit = int(FailBit.GATE_SPACING)
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
        f"{'generator':<11}"
        + "".join(f"{'w=' + format(w, 'g'):>16}" for w in args.widths)
        + f"{'spread':>9}{'order':>9}{'spacing':>9}",
        flush=True,
    )
    for g in args.generators:
        cells = []
        for w in args.widths:
            cfg = GateGenConfig(
                generator=g, num_envs=args.E, device=args.device, gate_width=w, **resolution
            )
            gen = GateGenerator(cfg, seeds=args.seed)
            seq = gen.generate()
            if w == args.widths[0]:
                spaced = (seq.fail_mask.numpy() & spacing_bit) != 0
                placed = (*placement(gen, seq), float(spaced.mean()))
            valid = seq.valid.numpy()
            bars = (seq.fail_mask.numpy() & int(FailBit.CROSSING_BARS)) != 0
            inv = 1.0 - valid.mean()
            share = bars.sum() / max(int((valid == 0).sum()), 1)
            cells.append(f"{inv:>9.3f} ({share:>4.0%})")
        print(
            f"{g:<11}" + "".join(f"{c:>16}" for c in cells) + "".join(f"{x:>9.3f}" for x in placed),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
