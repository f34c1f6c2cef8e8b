"""The "centerline" sampler: user-provided loops through generator.inputs."""

from __future__ import annotations

import numpy as np

from track_gen import TrackGenConfig, TrackGenerator

E, P = 3, 128


def loops() -> np.ndarray:
    t = 2 * np.pi * np.arange(P) / P
    radii = [0.6, 0.8, 1.0]
    return np.stack([np.stack([r * np.cos(t), r * np.sin(t)], -1) for r in radii])


def test_user_loops_become_tracks(device):
    gen = TrackGenerator(
        TrackGenConfig(generator="centerline", num_envs=E, num_points=P, device=device)
    )
    assert "centerline.xy" in gen.inputs and "centerline.xy" in gen.input_info
    xy = gen.inputs["centerline.xy"]
    ptr = xy.ptr
    xy.assign(loops().reshape(-1, 2).astype(np.float32))
    t = gen.generate()
    assert xy.ptr == ptr
    np.testing.assert_array_equal(t.valid.numpy(), 1)
    # a circle's perimeter survives the pipeline (chords of 128 points: within 0.1 %)
    np.testing.assert_allclose(t.length.numpy(), 2 * np.pi * np.array([0.6, 0.8, 1.0]), rtol=2e-3)


def test_rewriting_the_input_changes_only_masked_envs(device):
    gen = TrackGenerator(
        TrackGenConfig(generator="centerline", num_envs=E, num_points=P, device=device)
    )
    gen.inputs["centerline.xy"].assign(loops().reshape(-1, 2).astype(np.float32))
    gen.generate()
    before = gen.result.length.numpy().copy()
    gen.inputs["centerline.xy"].assign((2.0 * loops()).reshape(-1, 2).astype(np.float32))
    m = np.array([0, 1, 0], np.int32)
    gen.inputs["regen_mask"].assign(m)
    gen.generate(mask=gen.inputs["regen_mask"])
    after = gen.result.length.numpy()
    assert after[0] == before[0] and after[2] == before[2]
    np.testing.assert_allclose(after[1] / before[1], 2.0, rtol=1e-3)
