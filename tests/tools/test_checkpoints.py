"""CheckpointsResult / CheckpointsUtility against a NumPy oracle on crafted loops."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import warp as wp

from track_gen import FailBit, GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.tools.checkpoints import CheckpointsResult, CheckpointsUtility

E, P = 3, 128
HALF_WIDTH = 0.1  # TrackGenConfig default


def loops(scale: float = 1.0) -> np.ndarray:
    """A circle (r = 1), an ellipse (1.2 x 0.5) and a circle too tight for the road band
    (r = 0.05 < half_width: THICKNESS), counter-clockwise, float32 [E*P, 2]."""
    t = 2 * np.pi * np.arange(P) / P
    shapes = [(1.0, 1.0), (1.2, 0.5), (0.05, 0.05)]
    xy = [np.stack([a * np.cos(t), b * np.sin(t)], -1) for a, b in shapes]
    return (scale * np.concatenate(xy)).astype(np.float32)


def make_generator(device, xy: np.ndarray) -> TrackGenerator:
    gen = TrackGenerator(
        TrackGenConfig(
            generator="centerline", num_envs=E, num_points=P, device=device, relax_enable=False
        )
    )
    gen.inputs["centerline.xy"].assign(xy)
    gen.generate()
    return gen


@functools.cache
def shared_track(device):
    """A read-only generated batch per device (tests must not regenerate it)."""
    return make_generator(device, loops()).result


def oracle(track, spacing: float, cap: int, envs=None):
    """NumPy placement: per env (count [E], clipped [E], step [E], rows dict of [E, M, ...])."""
    n_max = track.N_max
    center = track.center.numpy().reshape(E, n_max, 3).astype(np.float64)
    inner = track.inner.numpy().reshape(E, n_max, 3).astype(np.float64)
    outer = track.outer.numpy().reshape(E, n_max, 3).astype(np.float64)
    arclen = track.arclen.numpy().reshape(E, n_max).astype(np.float64)
    length = track.length.numpy()
    beads = track.count.numpy()
    valid = track.valid.numpy()
    count = np.zeros(E, np.int32)
    clipped = np.zeros(E, np.int32)
    step = np.zeros(E, np.float64)
    rows = {k: np.full((E, cap, 3), np.nan) for k in ("position", "left", "right", "tangent")}
    rows["up_half"] = np.full((E, cap), np.nan)
    for e in range(E):
        nb, total = int(beads[e]), float(length[e])
        if valid[e] == 0 or nb < 3:
            continue
        r = math.floor(float(np.float32(total) / np.float32(spacing)) + 0.5)
        n = min(max(r, 3), cap)
        clipped[e] = int(r > cap)
        count[e] = n
        step32 = np.float32(total) / np.float32(n)
        step[e] = step32
        ends = np.append(arclen[e, 1:nb], total)  # arc at the end of segment i
        arc32 = arclen[e, :nb].astype(np.float32)
        for k in range(n):
            # the float32 arc decides the segment (checkpoints can fall on bead boundaries)
            s32 = np.float32(k) * step32
            s = float(s32)
            i = int(np.searchsorted(arc32, s32, side="right") - 1)
            j = (i + 1) % nb
            t = (s - arclen[e, i]) / (ends[i] - arclen[e, i])
            rows["position"][e, k] = center[e, i] + t * (center[e, j] - center[e, i])
            rows["left"][e, k] = inner[e, i] + t * (inner[e, j] - inner[e, i])
            rows["right"][e, k] = outer[e, i] + t * (outer[e, j] - outer[e, i])
            chord = center[e, j] - center[e, i]
            rows["tangent"][e, k] = chord / np.linalg.norm(chord)
            rows["up_half"][e, k] = 1e30
    return count, clipped, step, rows


def assert_matches_oracle(sampler: CheckpointsUtility, envs=range(E)):
    cs, cap = sampler.checkpoints, sampler.max_checkpoints
    count, clipped, step, rows = oracle(sampler.track, sampler.spacing, cap)
    envs = list(envs)
    np.testing.assert_array_equal(cs.count.numpy()[envs], count[envs])
    np.testing.assert_array_equal(sampler.clipped.numpy()[envs], clipped[envs])
    np.testing.assert_allclose(sampler.step.numpy()[envs], step[envs], rtol=1e-6)
    for name in ("position", "left", "right", "tangent"):
        got = getattr(cs, name).numpy().reshape(E, cap, 3)[envs]
        np.testing.assert_allclose(got, rows[name][envs], atol=2e-5, err_msg=name)
    got = cs.up_half.numpy().reshape(E, cap)[envs]
    np.testing.assert_allclose(got, rows["up_half"][envs], rtol=1e-6)


def test_crafted_batch_is_as_expected(device):
    track = shared_track(device)
    np.testing.assert_array_equal(track.valid.numpy(), [1, 1, 0])
    assert track.fail_mask.numpy()[2] & FailBit.THICKNESS


def test_placement_matches_oracle(device):
    track = shared_track(device)
    sampler = CheckpointsUtility(track, 0.6, max_loop_length=8.0)
    assert sampler.max_checkpoints == math.ceil(8.0 / 0.6)
    cs = sampler.checkpoints
    assert isinstance(cs, CheckpointsResult) and cs.max_checkpoints == sampler.max_checkpoints
    assert_matches_oracle(sampler)
    count = cs.count.numpy()
    # circle: 2*pi / 0.6 -> 10; ellipse 5.57 / 0.6 -> 9; the invalid env has none
    np.testing.assert_array_equal(count, [10, 9, 0])
    np.testing.assert_array_equal(sampler.clipped.numpy(), 0)
    pos = cs.position.numpy().reshape(E, -1, 3)
    # checkpoint 0 is bead 0 (the start line); left/right straddle the centre at half_width
    np.testing.assert_array_equal(pos[:2, 0], track.center.numpy().reshape(E, -1, 3)[:2, 0])
    left = cs.left.numpy().reshape(E, -1, 3)
    right = cs.right.numpy().reshape(E, -1, 3)
    up_half = cs.up_half.numpy().reshape(E, -1)
    for e in range(2):
        n = count[e]
        np.testing.assert_allclose(0.5 * (left[e, :n] + right[e, :n]), pos[e, :n], atol=1e-5)
        np.testing.assert_allclose(
            np.linalg.norm(right[e, :n] - left[e, :n], axis=1), 2 * HALF_WIDTH, rtol=2e-3
        )
        assert np.isnan(pos[e, n:]).all() and np.isnan(up_half[e, n:]).all()
        np.testing.assert_array_equal(up_half[e, :n], np.float32(1e30))
    # circle: checkpoints on the unit circle, tangents counter-clockwise
    np.testing.assert_allclose(np.linalg.norm(pos[0, :10, :2], axis=1), 1.0, atol=1e-3)
    tan = cs.tangent.numpy().reshape(E, -1, 3)[0, :10]
    np.testing.assert_allclose(np.cross(pos[0, :10], tan)[:, 2], 1.0, atol=1e-3)
    assert np.isnan(pos[2]).all() and np.isnan(up_half[2]).all()


def test_capacity_rule_min_count_and_clipping(device):
    track = shared_track(device)
    # ceil rule with the floor of 3
    assert CheckpointsUtility(track, 10.0, max_loop_length=1.0).max_checkpoints == 3
    small = CheckpointsUtility(track, 10.0, max_checkpoints=4)
    assert small.max_checkpoints == 4
    np.testing.assert_array_equal(small.checkpoints.count.numpy(), [3, 3, 0])  # round -> 1
    np.testing.assert_array_equal(small.clipped.numpy(), 0)
    assert_matches_oracle(small)
    # max_checkpoints wins over max_loop_length; rounding past it clips
    clip = CheckpointsUtility(track, 0.3, max_checkpoints=20, max_loop_length=100.0)
    assert clip.max_checkpoints == 20
    np.testing.assert_array_equal(clip.checkpoints.count.numpy(), [20, 19, 0])  # 20.9, 18.6
    np.testing.assert_array_equal(clip.clipped.numpy(), [1, 0, 0])
    assert_matches_oracle(clip)
    np.testing.assert_allclose(clip.step.numpy()[0], track.length.numpy()[0] / 20, rtol=1e-6)


def test_masked_sample_changes_only_masked_envs(device):
    gen = make_generator(device, loops())
    sampler = CheckpointsUtility(gen.result, 0.6, max_checkpoints=20)
    cs = sampler.checkpoints
    before = {k: v.numpy().copy() for k, v in vars(cs).items()}
    before["clipped"] = sampler.clipped.numpy().copy()
    before["step"] = sampler.step.numpy().copy()
    gen.inputs["centerline.xy"].assign(loops(1.5))
    gen.generate()
    mask = wp.array(np.array([0, 1, 0], np.int32), device=device)
    assert sampler.sample(mask) is cs
    after = {k: v.numpy() for k, v in vars(cs).items()}
    after["clipped"] = sampler.clipped.numpy()
    after["step"] = sampler.step.numpy()
    for k in before:
        a, b = before[k], after[k]
        if a.shape[0] != E:
            a, b = a.reshape(E, -1, *a.shape[1:]), b.reshape(E, -1, *b.shape[1:])
        for e in (0, 2):
            assert a[e].tobytes() == b[e].tobytes(), k
    assert after["count"][1] == 14  # 1.5x the ellipse: 13.9
    assert_matches_oracle(sampler, envs=[1])
    # an all-zero mask is a no-op, None resamples everything
    mask.zero_()
    sampler.sample(mask)
    assert cs.count.numpy()[0] == 10
    sampler.sample()
    assert_matches_oracle(sampler)
    np.testing.assert_array_equal(cs.count.numpy(), [16, 14, 0])


def test_sample_is_deterministic_and_clone_detaches(device):
    track = shared_track(device)
    a = CheckpointsUtility(track, 0.45, max_loop_length=8.0)
    b = CheckpointsUtility(track, 0.45, max_loop_length=8.0)
    snap = a.checkpoints.clone()
    a.sample()
    for name in ("position", "left", "right", "tangent", "up_half", "count"):
        x = getattr(a.checkpoints, name).numpy().tobytes()
        assert x == getattr(b.checkpoints, name).numpy().tobytes(), name
        assert x == getattr(snap, name).numpy().tobytes(), name
        assert getattr(snap, name).ptr != getattr(a.checkpoints, name).ptr


def test_sample_replays_in_a_graph(device):
    gen = make_generator(device, loops())
    sampler = CheckpointsUtility(gen.result, 0.6, max_checkpoints=20)
    mask = wp.array(np.array([1, 1, 1], np.int32), device=device)
    with wp.ScopedCapture(device=device) as cap:
        sampler.sample(mask)
    gen.inputs["centerline.xy"].assign(loops(1.5))
    gen.generate()
    cs = sampler.checkpoints
    for a in (cs.position, cs.left, cs.right, cs.tangent):
        a.fill_(wp.vec3f(7.0, 7.0, 7.0))
    cs.up_half.fill_(7.0)
    cs.count.fill_(7)
    sampler.clipped.fill_(7)
    wp.capture_launch(cap.graph)
    assert_matches_oracle(sampler)
    np.testing.assert_array_equal(cs.count.numpy(), [16, 14, 0])


def test_from_gates_aliases_the_gate_arrays(device):
    gen = GateGenerator(GateGenConfig(num_envs=E, device=device, gate_width=0.2), seeds=0)
    seq = gen.generate()
    cs = CheckpointsResult.from_gates(seq)
    pairs = {
        "position": seq.position,
        "left": seq.left,
        "right": seq.right,
        "tangent": seq.forward,
        "up_half": seq.half_size,
        "count": seq.count,
    }
    for name, arr in pairs.items():
        assert getattr(cs, name) is arr, name
    assert cs.max_checkpoints == seq.max_gates
    first = cs.position.numpy().copy()
    gen.generate(seeds=5)  # a regeneration is seen through the alias
    assert cs.position.numpy().tobytes() == seq.position.numpy().tobytes()
    assert cs.position.numpy().tobytes() != first.tobytes()
    np.testing.assert_allclose(cs.up_half.numpy()[: seq.count.numpy()[0]], 0.1)
    with pytest.raises(TypeError, match="GateSequence"):
        CheckpointsResult.from_gates(object())


def test_argument_validation(device):
    track = shared_track(device)
    # one rule: a wrong kind is a TypeError, a wrong value a ValueError
    for bad in (0, -1.0, float("nan"), float("inf"), 1e-9, 1e9):
        with pytest.raises(ValueError, match="spacing"):
            CheckpointsUtility(track, bad, max_checkpoints=10)
    for bad in (True, "0.6", None):
        with pytest.raises(TypeError, match="spacing"):
            CheckpointsUtility(track, bad, max_checkpoints=10)
    for bad in (2, 0, 10**6):
        with pytest.raises(ValueError, match="max_checkpoints"):
            CheckpointsUtility(track, 0.6, bad)
    for bad in (3.0, True, "10"):
        with pytest.raises(TypeError, match="max_checkpoints"):
            CheckpointsUtility(track, 0.6, bad)
    for bad in (0.0, -2.0, float("nan")):
        with pytest.raises(ValueError, match="max_loop_length"):
            CheckpointsUtility(track, 0.6, max_loop_length=bad)
    with pytest.raises(TypeError, match="max_loop_length"):
        CheckpointsUtility(track, 0.6, max_loop_length=False)
    with pytest.raises(ValueError, match="65536"):
        CheckpointsUtility(track, 1e-5, max_loop_length=100.0)
    with pytest.raises(ValueError, match="max_checkpoints.*max_loop_length"):
        CheckpointsUtility(track, 0.6)
    with pytest.raises(TypeError, match="Track"):
        CheckpointsUtility(object(), 0.6, max_checkpoints=10)
    sampler = CheckpointsUtility(track, 0.6, max_checkpoints=10)
    before = sampler.checkpoints.position.numpy().tobytes()
    with pytest.raises(TypeError, match="mask"):
        sampler.sample(np.ones(E, np.int32))
    with pytest.raises(TypeError, match="mask"):
        sampler.sample(wp.ones(E, dtype=wp.float32, device=device))
    for bad in (
        wp.ones(E + 1, dtype=wp.int32, device=device),
        wp.ones((E, 1), dtype=wp.int32, device=device),
    ):
        with pytest.raises(ValueError, match="mask"):
            sampler.sample(bad)
    assert sampler.checkpoints.position.numpy().tobytes() == before


# ------------------------------------------------------------------ elevated tracks
def _elevated(device, **kw):
    from track_gen.course import Course
    from track_gen.pipeline import presets

    spec = presets.track(num_envs=8, device=device, z_profile="noise", z_min=0.0, z_max=0.6)
    return Course.track(spec, checkpoint_spacing=0.6, seeds=4, **kw)


def test_elevated_capacity_reads_the_construction_batch_back(device):
    import warnings

    from track_gen.pipeline import presets

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no clipping warning
        course = _elevated(device)
    r = course.result
    ok = r.valid.numpy() != 0
    longest = float(r.length.numpy()[ok].max())
    assert course.checkpoints.max_checkpoints == max(3, int(np.ceil(longest / 0.6)))
    assert not course.checkpoints.truncated.numpy().any()
    # the batch built at attach is the generator's first batch (prepare kept it)
    fresh = TrackGenerator(
        presets.track(num_envs=8, device=device, z_profile="noise", z_min=0.0, z_max=0.6),
        seeds=4,
    ).generate()
    assert fresh.center.numpy().tobytes() == r.center.numpy().tobytes()
    np.testing.assert_array_equal(r.generation.numpy(), 0)
    # vertical checkpoint planes through the 3D centerline
    t = course.checkpoints.tangent.numpy()
    assert np.all(t[np.isfinite(t[:, 0]), 2] == 0.0)
    assert np.nanmax(np.abs(course.checkpoints.position.numpy()[:, 2])) > 0.05


def test_a_course_chosen_capacity_that_clips_warns_once(device, monkeypatch):
    from track_gen.tools.checkpoints import Checkpoints, construction_result

    def too_short(self, ctx):  # the first batch exists, the capacity is too small for it
        construction_result(ctx)
        return 3 * self.spacing

    monkeypatch.setattr(Checkpoints, "_longest_loop", too_short)
    with pytest.warns(RuntimeWarning, match="pass a larger max_checkpoints") as rec:
        course = _elevated(device)
    assert len([w for w in rec if "max_checkpoints" in str(w.message)]) == 1
    trunc = course.checkpoints.truncated.numpy()
    assert trunc.any()
    assert course.checkpoint_sampler.clipped is course.checkpoints.truncated


def test_gate_checkpoints_are_never_truncated(device):
    gen = GateGenerator(GateGenConfig(num_envs=4, device=device, gate_width=0.1), seeds=1)
    cs = CheckpointsResult.from_gates(gen.generate())
    np.testing.assert_array_equal(cs.truncated.numpy(), 0)
