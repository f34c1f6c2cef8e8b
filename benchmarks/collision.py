"""BandCollisionUtility: "segments" vs "sdf" query time, SDF bake time and SDF accuracy.

Run from the repository root (or with track_gen installed):

    PYTHONPATH=. python benchmarks/collision.py                     # best device, defaults
    PYTHONPATH=. python benchmarks/collision.py --device cpu --E 1024
    PYTHONPATH=. python benchmarks/collision.py --device cuda:0 --E 8192 --res 128
    PYTHONPATH=. python benchmarks/collision.py --device cpu --E 256 --layout per_item

One bezier batch (``TrackGenConfig(num_envs=E)``, seed 0) and B boxes per env near the
centerline (a random bead, offset across the road by up to ``--offset`` half widths, yaw along
the tangent +- 0.3 rad, half extents ``--half-extents``). Every time is the median of
``--calls`` calls, each followed by ``wp.synchronize_device`` (kernels loaded first):
``segments query``, ``sdf bake`` (a full ``refresh()``) and ``sdf query``, both colliders built
with ``kernel_layout=--layout`` (``auto``: per_env on the CPU, per_item on CUDA; the answers
are bitwise the same either way, only the times differ). Agreement compares
the SDF answers with the exact "segments" ones over the boxes of valid envs: oob flag
agreement, and the |distance| error in cells of the env's grid (boxes deeper than
``SDF_BAND_CELLS - 1`` cells outside, where the SDF distance is clamped, are left out of the
distance columns and counted separately).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import warp as wp

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.tools import BandCollisionUtility
from track_gen.tools.band_collision import SDF_BAND_CELLS


def _median_ms(fn, calls: int, device) -> float:
    fn()
    wp.synchronize_device(device)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        wp.synchronize_device(device)
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def make_boxes(track, B: int, offset: float, half_extents, hw: float, seed: int):
    rng = np.random.default_rng(seed)
    E, n_max = track.num_envs, track.N_max
    center = track.center.numpy().reshape(E, n_max, 3)
    normal = track.normal.numpy().reshape(E, n_max, 3)
    tangent = track.tangent.numpy().reshape(E, n_max, 3)
    count = np.maximum(track.count.numpy(), 1)
    rows = np.repeat(np.arange(E), B)
    bead = (rng.random(E * B) * count[rows]).astype(np.int64)
    u = rng.uniform(-offset, offset, E * B)[:, None] * hw
    pos = center[rows, bead] + u * normal[rows, bead]
    t = tangent[rows, bead]
    yaw = np.arctan2(t[:, 1], t[:, 0]) + rng.normal(0.0, 0.3, E * B)
    zero = np.zeros_like(yaw)
    quat = np.stack([zero, zero, np.sin(yaw / 2), np.cos(yaw / 2)], -1)
    he = np.tile(np.asarray(half_extents, np.float32), (E * B, 1))
    dev = track.count.device
    return (
        wp.array(pos.astype(np.float32), dtype=wp.vec3f, device=dev),
        wp.array(quat.astype(np.float32), dtype=wp.quatf, device=dev),
        wp.array(he, dtype=wp.vec2f, device=dev),
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None, help="cpu or cuda:N (default: cuda:0 if present)")
    ap.add_argument("--E", type=int, default=None, help="envs (default 1024 cpu, 8192 cuda)")
    ap.add_argument("--B", type=int, default=1, help="boxes per env")
    ap.add_argument("--res", type=int, default=128, help="SDF texels per side")
    ap.add_argument("--calls", type=int, default=50, help="timed query calls")
    ap.add_argument("--bake-calls", type=int, default=5, help="timed bakes")
    ap.add_argument("--offset", type=float, default=1.0, help="max offset, in half widths")
    ap.add_argument("--half-extents", type=float, nargs=2, default=(0.02, 0.01))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--layout", default="auto", choices=("auto", "per_env", "per_item"), help="kernel_layout"
    )
    args = ap.parse_args(argv)

    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    device = args.device or ("cuda:0" if wp.get_cuda_device_count() > 0 else "cpu")
    E = args.E or (8192 if wp.get_device(device).is_cuda else 1024)
    cfg = TrackGenConfig(num_envs=E, device=device)
    track = TrackGenerator(cfg, seeds=args.seed).generate()
    valid = track.valid.numpy() != 0
    boxes = make_boxes(track, args.B, args.offset, args.half_extents, cfg.half_width, args.seed + 1)

    seg = BandCollisionUtility(
        track, method="segments", max_boxes=args.B, kernel_layout=args.layout
    )
    seg_ms = _median_ms(lambda: seg.query(*boxes), args.calls, device)
    exact = seg.query(*boxes).clone()

    t0 = time.perf_counter()
    sdf = BandCollisionUtility(
        track, method="sdf", max_boxes=args.B, sdf_resolution=args.res, kernel_layout=args.layout
    )
    wp.synchronize_device(device)
    first_s = time.perf_counter() - t0
    bake_ms = _median_ms(sdf.refresh, args.bake_calls, device)
    sdf_ms = _median_ms(lambda: sdf.query(*boxes), args.calls, device)
    approx = sdf.query(*boxes)

    rows = np.repeat(valid, args.B)
    cell = np.repeat(sdf.sdf_frame.numpy()[:, 2], args.B)[rows]
    d_exact = exact.distance.numpy()[rows]
    d_sdf = approx.distance.numpy()[rows]
    oob_exact = exact.oob.numpy()[rows]
    oob_sdf = approx.oob.numpy()[rows]
    agree = oob_exact == oob_sdf
    near = np.abs(d_exact) < cell
    deep = d_exact < -(SDF_BAND_CELLS - 1) * cell
    err = np.abs(d_sdf - d_exact)[~deep] / cell[~deep]
    mem_mb = E * args.res * args.res * 5 / 2**20

    print(
        f"device {device}  E {E}  B {args.B}  res {args.res}  valid {valid.mean():.1%}  "
        f"half extents {tuple(args.half_extents)}  offset <= {args.offset} hw  "
        f"layout {sdf.kernel_layout}"
    )
    print(f"segments query     {seg_ms:9.3f} ms   ({1e6 * seg_ms / (E * args.B):.0f} ns/box)")
    print(f"sdf bake (refresh) {bake_ms:9.1f} ms   (first construction {first_s:.2f} s)")
    print(f"sdf query          {sdf_ms:9.3f} ms   ({1e6 * sdf_ms / (E * args.B):.0f} ns/box)")
    print(f"sdf memory         {mem_mb:9.1f} MB   (float32 phi + int8 border)")
    print(
        f"oob agreement      {agree.mean():9.2%}    ({(~agree).sum()} disagree, "
        f"{(~agree & ~near).sum()} of them beyond 1 cell of zero clearance; "
        f"exact oob rate {oob_exact.mean():.1%})"
    )
    print(
        f"|distance error|   median {np.median(err):.1e}  p99 {np.percentile(err, 99):.3f}  "
        f"max {err.max():.3f} cells   ({deep.sum()} boxes deeper than "
        f"{SDF_BAND_CELLS - 1} cells outside left out)"
    )


if __name__ == "__main__":
    main()
