"""The checkpoint sampler (steer a car through random checkpoints, best of K candidates):
its parameters, best of K, and the pruned crossing counter it ranks candidates with.

Built through the public config (``generator="checkpoint"``). The checks every sampler must
pass (registration, determinism, seeds and epochs, masks, capture, scale, winding, shape,
yield) are in test_samplers.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.geometry import count_crossings

from ..oracles.loops import centerlines, proper_crossings, sampler_generator, shoelace_area

wp.set_module_options({"enable_backward": False})

NAME = "checkpoint"
E = 8
PARAM_FIELDS = {
    "radius_min_frac": "checkpoint_radius_min_frac",
    "angle_jitter": "checkpoint_angle_jitter",
    "turn_rate": "checkpoint_turn_rate",
    "steer_gain": "checkpoint_steer_gain",
    "lookahead_frac": "checkpoint_lookahead_frac",
    "scale": "scale",
}
# harsher than the defaults (which almost never cross before relaxation): checkpoints may swap
# angular order and approach the centre, so single candidates often cross themselves
CROSSY = dict(checkpoint_angle_jitter=1.0, checkpoint_radius_min_frac=0.0)


def make(device, seeds=0, num_envs=E, **kw) -> TrackGenerator:
    return sampler_generator(NAME, device, seeds=seeds, num_envs=num_envs, **kw)


def test_params_declared_with_config_defaults(device):
    cfg = TrackGenConfig(generator=NAME, num_envs=2, device=device)
    gen = make(device, num_envs=2)
    for field, config_field in PARAM_FIELDS.items():
        arr = gen.params[f"{NAME}.{field}"]
        np.testing.assert_allclose(arr.numpy(), getattr(cfg, config_field), rtol=1e-6)
    with pytest.raises(ValueError, match="checkpoint.turn_rate"):
        gen.params[f"{NAME}.turn_rate"] = 0.0


def test_param_write_seen_by_next_generate(device):
    gen = make(device, seeds=1)
    base = gen.generate().center.numpy().copy()
    for field, value in (
        ("angle_jitter", 0.0),
        ("radius_min_frac", 0.9),
        ("turn_rate", 0.1),
        ("steer_gain", 3.0),
        ("lookahead_frac", 0.4),
    ):
        gen.params[f"{NAME}.{field}"] = value
        changed = gen.generate().center.numpy()
        assert changed.tobytes() != base.tobytes(), field
        cfg_default = getattr(TrackGenConfig(), PARAM_FIELDS[field])
        gen.params[f"{NAME}.{field}"] = cfg_default


@pytest.mark.parametrize("k", [1, 4])
def test_best_of_k_builds_closed_ccw_loops(device, k):
    gen = make(device, seeds=11, checkpoint_best_of_k=k)
    t = gen.generate()
    valid = t.valid.numpy()
    assert valid.sum() >= E - 1
    winding = t.winding.numpy()
    for e, p in enumerate(centerlines(t)):
        assert np.isfinite(p).all() and len(p) >= 4
        if valid[e]:
            assert winding[e] == 1.0 and shoelace_area(p) > 0.0, e


def test_best_of_4_crosses_no_more_than_best_of_1(device):
    """Pre-relax crossings (relax disabled, so the centerline is the resampled sampler line).

    The heading-ramp closure makes every candidate's total turning exactly 2*pi, so a crossing
    does not show up as a TURNING failure: crossings are counted directly."""
    n = 16
    counts = {}
    for k in (1, 4):
        gen = make(
            device, seeds=0, num_envs=n, relax_enable=False, checkpoint_best_of_k=k, **CROSSY
        )
        counts[k] = np.array(
            [proper_crossings(p, rel_tol=0.0) for p in centerlines(gen.generate())]
        )
    assert counts[1].sum() > 0  # the harsh setting does cross: the comparison means something
    assert counts[4].mean() <= counts[1].mean()
    assert (counts[4] > 0).sum() <= (counts[1] > 0).sum()


@wp.kernel
def _count_kernel(
    pts: wp.array(dtype=wp.vec2f),
    n: int,
    nch: int,
    stop_at: int,
    boxes: wp.array(dtype=wp.vec4f),
    turns: wp.array(dtype=wp.float32),
    out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    out[e] = count_crossings(pts, e * n, n, boxes, turns, e * nch, stop_at)


def test_crossing_count_matches_brute_force(device):
    """The pruned counter (chunk boxes, arcs turning less than pi) equals a brute-force count
    on wiggly random loops, and stops at ``stop_at``."""
    rng = np.random.default_rng(5)
    n, m = 96, 24
    nch = (n + 15) // 16
    t = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    loops = []
    for _ in range(m):
        r = 1.0
        for f in range(2, 9):
            r = r + rng.uniform(0.0, 0.5) * np.cos(f * t + rng.uniform(0, 2 * np.pi))
        loops.append(np.stack([r * np.cos(t), r * np.sin(t)], 1) + rng.normal(0, 0.01, (n, 2)))
    loops = np.array(loops)
    want = np.array(
        [proper_crossings(p.astype(np.float32).astype(np.float64), rel_tol=0.0) for p in loops]
    )
    assert (want > 0).sum() >= 3 and (want == 0).sum() >= 3
    pts = wp.array(loops.reshape(-1, 2).astype(np.float32), dtype=wp.vec2f, device=device)
    boxes = wp.zeros(m * nch, dtype=wp.vec4f, device=device)
    turns = wp.zeros(m * nch, dtype=wp.float32, device=device)
    out = wp.zeros(m, dtype=wp.int32, device=device)
    for stop_at in (1 << 30, 2):
        wp.launch(
            _count_kernel,
            m,
            inputs=[pts, n, nch, stop_at, boxes, turns],
            outputs=[out],
            device=device,
        )
        np.testing.assert_array_equal(out.numpy(), np.minimum(want, stop_at))
