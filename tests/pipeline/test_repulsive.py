"""The repulsive sampler: its iteration budget and diagnostics, and the long folded tracks it
grows.

The checks every sampler must pass (determinism, seeds and epochs, masks with the
diagnostics of unmasked envs kept, capture, scale, winding, shape, yield) are in
test_samplers.py.
"""

from __future__ import annotations

import numpy as np

from track_gen import FailBit

from ..oracles.loops import compactness, sampler_generator


def make(device, seeds=0, num_envs=4, **kw):
    return sampler_generator("repulsive", device, seeds=seeds, num_envs=num_envs, **kw)


def test_iteration_budget_and_diagnostics(device):
    gen = make(device, seeds=1, repulsive_iters=12)
    t = gen.generate()
    iters = gen.diagnostics["repulsive.iters"].numpy()
    rollback = gen.diagnostics["repulsive.rollback"].numpy()
    assert np.all((iters >= 1) & (iters <= 12))
    assert np.all((rollback == 0) | (rollback == 1))
    assert np.all(t.fail_mask.numpy() & int(FailBit.NONFINITE) == 0)
    # the full budget: length reached, settled and stopped early
    gen = make(device, seeds=1)
    gen.generate()
    iters = gen.diagnostics["repulsive.iters"].numpy()
    assert np.all(iters <= gen.config.repulsive_iters)


def test_folded_long_tracks_at_e64():
    t = make("cpu", seeds=0, num_envs=64).generate()
    assert t.valid.numpy().mean() >= 0.99
    assert t.count.numpy().mean() < 384
    assert np.all(t.fail_mask.numpy() & int(FailBit.TRUNCATED) == 0)
    assert np.median(compactness(t)) < 0.5  # folded tracks
