"""Seeds, epochs and the (seed, epoch) hash."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import PerEnvSeededRNG, SeedState, effective_seed


def test_effective_seed_epoch_zero_is_the_seed():
    for s in (0, 1, -7, 2**31 - 1, -(2**31)):
        assert effective_seed(s, 0) == s


def test_effective_seed_is_int32_and_mixes():
    vals = {effective_seed(s, k) for s in range(50) for k in range(1, 21)}
    assert len(vals) == 50 * 20  # no collisions on a small grid
    assert all(-(2**31) <= v < 2**31 for v in vals)
    # neighbouring epochs and seeds differ in about half the bits (well mixed)
    flips = [
        bin((effective_seed(s, 1) ^ effective_seed(s + 1, 1)) & 0xFFFFFFFF).count("1")
        for s in range(200)
    ]
    assert 12 < np.mean(flips) < 20


def test_device_hash_matches_host(device):
    rng = np.random.default_rng(3)
    seeds = rng.integers(-(2**31), 2**31, size=257, dtype=np.int64).astype(np.int32)
    epochs = rng.integers(0, 10_000, size=257).astype(np.int32)
    epochs[:5] = 0
    st = SeedState.create(wp.array(seeds, dtype=wp.int32, device=device), 257, device)
    st.epochs.assign(epochs)
    got = st.effective_seeds()
    want = [effective_seed(int(s), int(k)) for s, k in zip(seeds, epochs, strict=True)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.int32))


def test_rng_int_seed_expands_per_env(device):
    rng = PerEnvSeededRNG(seeds=10, num_envs=4, device=device)
    np.testing.assert_array_equal(rng.seeds_warp.numpy(), [10, 11, 12, 13])


def test_rng_array_is_used_by_pointer(device):
    arr = wp.array(np.arange(4, dtype=np.int32), dtype=wp.int32, device=device)
    rng = PerEnvSeededRNG(seeds=arr, num_envs=4, device=device)
    assert rng.seeds_warp.ptr == arr.ptr


def test_rng_set_seeds_in_place(device):
    rng = PerEnvSeededRNG(seeds=0, num_envs=4, device=device)
    ptr = rng.seeds_warp.ptr
    rng.set_seeds_warp(100)
    np.testing.assert_array_equal(rng.seeds_warp.numpy(), [100, 101, 102, 103])
    rng.set_seeds_warp([7, 9], ids=[1, 3])
    np.testing.assert_array_equal(rng.seeds_warp.numpy(), [100, 7, 102, 9])
    assert rng.seeds_warp.ptr == ptr
    with pytest.raises(ValueError, match="env indices"):
        rng.set_seeds_warp([1], ids=[4])
    with pytest.raises(ValueError):
        rng.set_seeds_warp([1, 2, 3], ids=[0, 1])


def test_rng_rejects_bad_arrays(device):
    with pytest.raises(TypeError, match="int32"):
        PerEnvSeededRNG(wp.zeros(4, dtype=wp.float32, device=device), 4, device)
    with pytest.raises(ValueError, match=r"\[4\]"):
        PerEnvSeededRNG(wp.zeros(3, dtype=wp.int32, device=device), 4, device)
    with pytest.raises(ValueError, match="num_envs"):
        PerEnvSeededRNG(0, 0, device)


def test_seed_state_ownership(device):
    own = SeedState.create(5, 3, device)
    own.set(20)
    np.testing.assert_array_equal(own.seeds.numpy(), [20, 21, 22])
    own.epochs.fill_(4)
    own.reset_epoch()
    np.testing.assert_array_equal(own.epochs.numpy(), [0, 0, 0])

    rng = PerEnvSeededRNG(0, 3, device)
    via_rng = SeedState.create(rng, 3, device)
    via_rng.set([4, 5, 6])
    np.testing.assert_array_equal(rng.seeds_warp.numpy(), [4, 5, 6])

    user = wp.array([1, 2, 3], dtype=wp.int32, device=device)
    bound = SeedState.create(user, 3, device)
    with pytest.raises(RuntimeError, match="never writes"):
        bound.set(0)
    np.testing.assert_array_equal(user.numpy(), [1, 2, 3])
