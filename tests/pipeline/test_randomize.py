"""Per-env randomized fields (with_randomize): drawn from (seed, epoch), within range."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import TrackGenerator, effective_seed
from track_gen.pipeline import presets

E = 8
RANGES = {"bezier.rad": (0.2, 0.6), "bezier.scale": (1.0, 2.0)}


def make(device, seeds=0, ranges=RANGES, **kw):
    spec = presets.track(num_envs=E, device=device, **kw).with_randomize(ranges)
    return TrackGenerator(spec, seeds=seeds)


def test_draws_within_range_and_vary(device):
    gen = make(device)
    gen.generate()
    for name, (lo, hi) in RANGES.items():
        v = gen.params[name].numpy()
        assert np.all((v >= lo) & (v < hi)), (name, v)
        assert len(np.unique(v)) == E
    assert dict(gen.randomizers) == RANGES
    # the draw shapes the course: longer tracks for larger scale
    scale = gen.params["bezier.scale"].numpy()
    length = gen.result.length.numpy()
    assert np.corrcoef(scale, length)[0, 1] > 0.8


def test_draws_are_part_of_seed_and_epoch(device):
    gen = make(device, seeds=30)
    gen.generate()
    gen.generate(advance=True)
    env, slot = 2, 5
    seeds = np.arange(E, dtype=np.int32) + 900
    seeds[slot] = effective_seed(30 + env, 1)
    fresh = make(device, seeds=wp.array(seeds, device=device))
    fresh.generate()
    for name in RANGES:
        assert gen.params[name].numpy()[env] == fresh.params[name].numpy()[slot]
    n = gen.layout.N_max
    a = gen.result.center.numpy()[env * n : (env + 1) * n]
    b = fresh.result.center.numpy()[slot * n : (slot + 1) * n]
    assert a.tobytes() == b.tobytes()


def test_masked_regeneration_redraws_only_masked(device):
    gen = make(device)
    gen.generate()
    before = gen.params["bezier.rad"].numpy().copy()
    m = np.zeros(E, np.int32)
    m[3] = 1
    gen.inputs["regen_mask"].assign(m)
    gen.generate(advance=True, mask=gen.inputs["regen_mask"])
    after = gen.params["bezier.rad"].numpy()
    assert after[3] != before[3]
    np.testing.assert_array_equal(np.delete(after, 3), np.delete(before, 3))


def test_live_range_and_scalar_writes(device):
    gen = make(device)
    gen.generate()
    gen.randomizers["bezier.scale"] = (1.5, 1.5)
    assert gen.randomizers["bezier.scale"] == (1.5, 1.5)
    gen.params["bezier.scale"] = 3.0  # a scalar set writes every env ...
    np.testing.assert_allclose(gen.params["bezier.scale"].numpy(), 3.0)
    gen.generate(advance=True)  # ... until the next regeneration redraws it
    np.testing.assert_allclose(gen.params["bezier.scale"].numpy(), 1.5)
    with pytest.raises(ValueError, match="bezier.scale"):
        gen.randomizers["bezier.scale"] = (-1.0, 1.0)
    with pytest.raises(ValueError, match="lo <= hi"):
        gen.randomizers["bezier.scale"] = (2.0, 1.0)
    with pytest.raises(KeyError, match="not randomized"):
        gen.randomizers["bezier.edgy"] = (0.0, 1.0)
    assert gen.randomizers["bezier.scale"] == (1.5, 1.5)  # refused writes change nothing


def test_refused_specs():
    spec = presets.track(num_envs=2, device="cpu")
    with pytest.raises(ValueError, match="lo <= hi"):
        spec.with_randomize({"bezier.rad": (0.6, 0.2)})
    with pytest.raises(ValueError, match="<stage>.<field>"):
        spec.with_randomize({"rad": (0.1, 0.2)})
    with pytest.raises(TypeError, match="mapping"):
        spec.with_randomize([("bezier.rad", (0.1, 0.2))])
    # refused by with_randomize itself (the message the build gave before)
    with pytest.raises(KeyError, match="no dynamic parameter 'bezier.nope'"):
        spec.with_randomize({"bezier.nope": (0.1, 0.2)})
    with pytest.raises(ValueError, match="bezier.scale"):
        spec.with_randomize({"bezier.scale": (0.0, 1.0)})
    merged = spec.with_randomize({"bezier.rad": (0.1, 0.2)}).with_randomize(
        {"bezier.rad": (0.3, 0.4), "bezier.edgy": (0.0, 1.0)}
    )
    assert dict(merged.randomize) == {"bezier.rad": (0.3, 0.4), "bezier.edgy": (0.0, 1.0)}


def test_no_randomizer_keeps_config_values(device):
    gen = make(device, ranges={})
    gen.generate()
    np.testing.assert_allclose(gen.params["bezier.rad"].numpy(), 0.4)
    assert len(gen.randomizers) == 0
