"""Thread layouts (``kernel_layout``): ``per_item`` (one thread per bead in resample and
inflate, per-env sums in bead order) gives the same bytes as ``per_env`` in every field of the
Track, for every sampler, through regenerations, epoch advances and masked regenerations,
with relaxation on and off and with elevation; and on edge-case loops (NaN, inf, too few or
too many beads, self-crossing). Run on the CPU, where both layouts execute the same
arithmetic; a stage without a per_item path runs per_env in both generators.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import TRACK_GENERATORS, TrackGenConfig, TrackGenerator
from track_gen.pipeline import default_registry, presets

from ..oracles import loops as L
from ..support.strategies import METRE_SAMPLERS, sampler_config

E = 32
#: every built-in sampler a config selects by name (the registry's, never copied here)
SAMPLERS = TRACK_GENERATORS
VARIANTS = {
    "relax": {},
    "no_relax": {"relax_enable": False},
    "elevation": {"z_profile": "noise", "z_min": 0.0, "z_max": 0.5},
}


def _masks(num_envs: int) -> list[np.ndarray]:
    a = np.zeros(num_envs, np.int32)
    a[::3] = 1
    b = np.zeros(num_envs, np.int32)
    b[1::4] = 1
    return [a, b]


def _run_calls(gen: TrackGenerator) -> list[dict]:
    """Every Track field after: a build, an advance, two masked advances, a masked rebuild
    without advance and a full advance."""
    out = [L.track_arrays(gen.generate())]
    out.append(L.track_arrays(gen.generate(advance=True)))
    mask = gen.inputs["regen_mask"]
    for m in _masks(gen.num_envs):
        mask.assign(m)
        out.append(L.track_arrays(gen.generate(advance=True, mask=mask)))
    out.append(L.track_arrays(gen.generate(mask=mask)))
    out.append(L.track_arrays(gen.generate(advance=True)))
    return out


def _assert_layouts_equal(make) -> None:
    """``make(kernel_layout)`` builds a generator; both layouts give identical bytes."""
    per_env, per_item = make("per_env"), make("per_item")
    assert per_env.layout.kernel_layout == "per_env"
    assert per_item.layout.kernel_layout == "per_item"
    for call, (a, b) in enumerate(zip(_run_calls(per_env), _run_calls(per_item), strict=True)):
        L.assert_bitwise_equal(a, b, where=f"call {call}")


def test_samplers_are_the_registrys():
    # the registry's built-in samplers (a namespaced one is a plugin a test registered), less
    # those a config alone cannot build
    built_in = {s for s in default_registry().samplers() if "." not in s}
    assert set(SAMPLERS) == built_in - {"mix", "centerline", "real_track", "gate_table"}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("sampler", SAMPLERS)
def test_per_item_equals_per_env(sampler, variant):
    num_envs = 8 if sampler == "repulsive" else E

    fields = dict(VARIANTS[variant])
    if sampler in METRE_SAMPLERS and variant == "relax":
        fields = {"relax_enable": True, "relax_iters": 4}  # the preset has no relaxation

    def make(layout):
        cfg = sampler_config(
            sampler, num_envs=num_envs, device="cpu", kernel_layout=layout, **fields
        )
        return TrackGenerator(cfg, seeds=11)

    _assert_layouts_equal(make)


def test_per_item_equals_per_env_mixed_samplers():
    def make(layout):
        spec = presets.track_mix(
            {"bezier": 1, "polar": 1, "voronoi": 1},
            num_envs=E,
            device="cpu",
            kernel_layout=layout,
            relax_iters=6,  # few sweeps: some envs stay thin (THICKNESS) or cross
        )
        return TrackGenerator(spec, seeds=3)

    _assert_layouts_equal(make)


def test_per_item_equals_per_env_edge_case_loops():
    """NaN and inf vertices, fewer than 4 beads, more than N_max beads, exactly N_max,
    a self-crossing loop, a loop whose perimeter overflows float32 and ordinary loops of both
    orientations (relax off and on)."""
    P, n_max, spacing = 96, 48, 0.06
    inf_loop = L.circle(0.3, P)
    inf_loop[10, 0] = np.inf
    loops = L.stack(
        L.circle(0.3, P),
        L.ellipse(0.4, 0.2, P, ccw=False),
        L.with_nan(L.circle(0.3, P), index=5),
        inf_loop,
        L.tiny_loop(spacing, P),
        L.too_long_loop(n_max, spacing, P),
        L.too_long_loop(n_max, spacing, P, extra=-0.5),
        L.figure_eight(0.4, 0.4, P),
        L.pinched(0.35, 0.3, 0.12, P),
        L.circle(3.0e38, P),  # finite vertices, perimeter overflowing float32 (inf arc)
    )
    for relax in (False, True):
        snaps = {}
        for layout in ("per_env", "per_item"):
            gen = L.make_generator(
                loops,
                "cpu",
                N_max=n_max,
                spacing=spacing,
                relax_enable=relax,
                kernel_layout=layout,
            )
            first = L.track_arrays(gen.generate())
            # shrink every loop: counts drop, the rows between the counts turn NaN
            L.write_loops(gen, np.where(np.isfinite(loops), loops, 0.0) * 0.5)
            snaps[layout] = [first, L.track_arrays(gen.generate())]
        for call, (a, b) in enumerate(zip(snaps["per_env"], snaps["per_item"], strict=True)):
            L.assert_bitwise_equal(a, b, where=f"relax={relax} call {call}")


def test_per_item_replay_equals_eager():
    """The per_item launches record into a (CPU) graph: a replay rewrites every output row
    (poisoned first) with the bytes of the eager regeneration."""
    cfg = dict(generator="polar", num_envs=8, device="cpu", kernel_layout="per_item")
    gen = TrackGenerator(TrackGenConfig(**cfg), seeds=4)
    eager = TrackGenerator(TrackGenConfig(**cfg), seeds=4)
    gen.generate()
    eager.generate()
    with wp.ScopedCapture(device="cpu") as cap:
        gen.generate(advance=True)
    rows = gen.num_envs * gen.layout.N_max
    for _ in range(2):
        for field in ("center", "outer", "inner", "tangent", "normal"):
            getattr(gen.result, field).assign(np.full((rows, 3), 7.0, np.float32))
        gen.result.arclen.assign(np.full(rows, 7.0, np.float32))
        wp.capture_launch(cap.graph)
        want = L.track_arrays(eager.generate(advance=True))
        L.assert_bitwise_equal(want, L.track_arrays(gen.result))
