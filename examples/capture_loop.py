"""Record a done-mask kernel and the masked regeneration into one graph, then replay it.

Run:  python examples/capture_loop.py --device cpu --steps 5 --num-envs 16

wp.ScopedCapture records on the CPU too, so this runs unchanged on a CPU machine. The kernel
writes EVERY entry of the mask each replay; the generator records its masked body into the
capture (gen.enqueue), so one replay is one auto-reset step with no host work in between.
"""

from __future__ import annotations

import argparse

import numpy as np
import warp as wp

from track_gen import TrackGenConfig, TrackGenerator


@wp.kernel
def done_every_k(step: wp.array(dtype=wp.int32), k: int, done: wp.array(dtype=wp.int32)):
    e = wp.tid()
    d = 0
    if (e + step[0]) % k == 0:
        d = 1
    done[e] = d  # every entry, every replay


@wp.kernel
def advance_step(step: wp.array(dtype=wp.int32)):
    step[0] = step[0] + 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)

    wp.config.log_level = wp.LOG_WARNING  # no banner or module-load lines
    device = str(wp.get_device(args.device))
    E = args.num_envs
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device=device), seeds=5)
    gen.generate()  # build (and load every module) outside the capture
    done = gen.inputs["regen_mask"]
    step = wp.zeros(1, dtype=wp.int32, device=device)

    with wp.ScopedCapture(device=device) as cap:
        wp.launch(done_every_k, E, inputs=[step, 4], outputs=[done], device=device)
        gen.enqueue(advance=True, mask=done)
        wp.launch(advance_step, 1, inputs=[step], device=device)

    for _ in range(args.steps):
        wp.capture_launch(cap.graph)
    epochs = gen.seeds.epochs.numpy()
    expect = np.array([sum((e + s) % 4 == 0 for s in range(args.steps)) for e in range(E)])
    assert np.array_equal(epochs, expect), (epochs, expect)
    assert np.array_equal(gen.result.generation.numpy(), epochs)
    print(f"epochs after {args.steps} replays: {epochs.tolist()}")
    print("ok: the recorded auto-reset advanced exactly the envs the kernel marked")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
