"""One-shot CUDA check for a lent GPU: graphs, masks, replay == eager, timings at E=8192.

Run (on a machine with CUDA, from the repository root, after `pip install -e .`):

    python benchmarks/cuda_check.py --E 8192 --calls 5

For every built-in sampler (tracks and gates) it checks, on cuda:0:
- the generator's own graph: generate() twice equals a fresh generator's eager enqueue();
- masked regeneration through a recorded variant leaves unmasked envs bitwise unchanged;
- a user wp.ScopedCapture of enqueue(advance=True, mask=...) replays like the eager call;
and prints warm ms per generate() (graph replay) and yield. Exits non-zero on a mismatch.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import warp as wp

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.pipeline import default_registry


def _bytes(res) -> bytes:
    return b"".join(getattr(res, f).numpy().tobytes() for f in res.__dataclass_fields__)


def check(family: str, g: str, E: int, calls: int) -> bool:
    make = (
        (
            lambda: GateGenerator(
                GateGenConfig(generator=g, num_envs=E, device="cuda:0", gate_width=0.1), seeds=3
            )
        )
        if family == "gates"
        else (
            lambda: TrackGenerator(
                TrackGenConfig(generator=g, num_envs=E, device="cuda:0"), seeds=3
            )
        )
    )
    a, b = make(), make()
    a.generate()  # graph (recorded, replayed)
    b.enqueue()  # eager
    ok = _bytes(a.result) == _bytes(b.result)
    m = np.zeros(E, np.int32)
    m[::7] = 1
    for gen in (a, b):
        gen.inputs["regen_mask"].assign(m)
    before = (
        a.result.center.numpy().copy() if family == "track" else a.result.position.numpy().copy()
    )
    a.generate(advance=True, mask=a.inputs["regen_mask"])  # graph variant
    with wp.ScopedCapture(device="cuda:0") as cap:  # user capture
        b.enqueue(advance=True, mask=b.inputs["regen_mask"])
    wp.capture_launch(cap.graph)
    ok &= _bytes(a.result) == _bytes(b.result)
    after = a.result.center.numpy() if family == "track" else a.result.position.numpy()
    n = a.layout.N_max
    kept = np.repeat(m == 0, n)
    ok &= before[kept].tobytes() == after[kept].tobytes()
    wp.synchronize_device("cuda:0")
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        a.generate(advance=True)
        wp.synchronize_device("cuda:0")
        times.append((time.perf_counter() - t0) * 1e3)
    y = a.result.valid.numpy().mean()
    print(
        f"{family:<6} {g:<11} E={E:<6} {np.median(times):9.2f} ms/call  yield {y:.4f}  "
        f"{'ok' if ok else 'MISMATCH'}",
        flush=True,
    )
    return bool(ok)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--E", type=int, default=8192)
    ap.add_argument("--calls", type=int, default=5)
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    if wp.get_cuda_device_count() == 0:
        print("no CUDA device", file=sys.stderr)
        return 2
    names = [s for s in default_registry().samplers() if s not in ("mix", "centerline")]
    ok = True
    for g in names:
        ok &= check("track", g, args.E, args.calls)
    for g in names:
        ok &= check("gates", g, args.E, args.calls)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
