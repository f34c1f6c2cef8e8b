"""Write a track generator of your own: a rose-curve sampler, registered as "example.rose".

Run:  python examples/custom_generator.py --device cpu --num-envs 32

A generator is a sampler stage: it gets per-env effective seeds and dynamic parameters and
writes one closed centerline per env; the library's resample -> relax -> inflate -> validate
stages and masked regeneration then work unchanged. See docs/writing-a-generator.md.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import warp as wp

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.pipeline import Stage, Tunable, presets, register
from track_gen.seeds import stage_rng

SALT_ROSE = wp.constant(wp.uint32(0x05E5A1D0))  # this stage's own random stream
TWO_PI = wp.constant(2.0 * math.pi)


@wp.kernel
def rose_kernel(
    eff_seed: wp.array(dtype=wp.int32),  # per-env effective seed: the only randomness source
    active: wp.array(dtype=wp.int32),  # envs this call rebuilds
    amplitude: wp.array(dtype=wp.float32),  # dynamic parameters: [E] device arrays
    scale: wp.array(dtype=wp.float32),
    num_points: int,
    line_out: wp.array(dtype=wp.vec2f),  # [E*num_points] closed loops
):
    e = wp.tid()
    if active[e] == 0:
        return  # an env that is not rebuilt keeps every byte
    st = stage_rng(eff_seed[e], SALT_ROSE)
    lobes = 2 + int(wp.randf(st) * 4.0)  # 2..5 lobes
    phase = TWO_PI * wp.randf(st)
    a = amplitude[e] * (0.5 + 0.5 * wp.randf(st))
    for i in range(num_points):
        th = TWO_PI * float(i) / float(num_points)
        r = 1.0 + a * wp.sin(float(lobes) * th + phase)
        line_out[e * num_points + i] = scale[e] * wp.vec2f(r * wp.cos(th), r * wp.sin(th))


class SamplerRose(Stage):
    """Rose-curve loops ``r = 1 + a sin(k theta + phi)`` with k, phi and a drawn per env."""

    role = "sampler"
    # each field declared once: default, closed range, unit, doc; dynamic fields become
    # [E] float32 device arrays, generator.params["example.rose.<name>"]
    FIELDS = (
        Tunable("amplitude", 0.35, lo=0.0, hi=0.6, dynamic=True, doc="lobe depth (fraction of r)"),
        Tunable(
            "scale", 0.8, lo=1e-6, hi=100.0, dynamic=True, unit="track units", doc="base radius"
        ),
    )

    def enqueue(self, ws, params):
        wp.launch(
            rose_kernel,
            ws.layout.num_envs,
            inputs=[
                ws.eff_seed,
                ws.active,
                params["amplitude"],
                params["scale"],
                ws.layout.num_points,
            ],
            outputs=[ws.line],
            device=ws.layout.device,
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--num-envs", type=int, default=32)
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    E = args.num_envs

    register("example.rose", SamplerRose, capturable=True, replace=True)

    gen = TrackGenerator(
        TrackGenConfig(generator="example.rose", num_envs=E, device=args.device), seeds=7
    )
    track = gen.generate()
    print(
        f"example.rose: yield {track.valid.numpy().mean():.3f}, "
        f"mean length {track.length.numpy().mean():.2f}, params {sorted(gen.params)[:2]}"
    )

    # masked regeneration works unchanged: envs 0 and 1 get new courses, the rest keep theirs
    n = gen.layout.N_max
    before = track.center.numpy().reshape(E, n, 3).copy()
    mask = gen.inputs["regen_mask"]
    mask.assign((np.arange(E) < 2).astype(np.int32))
    gen.generate(advance=True, mask=mask)
    after = track.center.numpy().reshape(E, n, 3)
    assert before[2:].tobytes() == after[2:].tobytes()
    assert before[:2].tobytes() != after[:2].tobytes()

    # and it mixes with the built-in samplers, its fields randomized per env like theirs
    spec = presets.track_mix(
        {"bezier": 1, "example.rose": 1}, num_envs=E, device=args.device
    ).with_randomize({"example.rose.amplitude": (0.2, 0.5)})
    mixed = TrackGenerator(spec, seeds=0)
    mixed.generate()
    shares = np.bincount(mixed.diagnostics["mix.choice"].numpy(), minlength=2)
    print(
        f"mix: {shares[0]} bezier + {shares[1]} rose envs, "
        f"yield {mixed.result.valid.numpy().mean():.3f}"
    )
    print("ok: a plugin generator ran through the pipeline, masks and mixes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
