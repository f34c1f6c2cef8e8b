"""Hull sampler: its parameters, its polygon fallbacks and its corner grid.

The checks every sampler must pass (determinism, seeds and epochs, masks, capture, scale,
winding, shape, yield) are in test_samplers.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from track_gen.stages.hull import SamplerHull

from ..oracles.loops import assert_sampler_loops, centerlines, probed_generator, sampler_generator


def make(device, seeds=0, num_envs=8, **kw):
    return sampler_generator("hull", device, seeds=seeds, num_envs=num_envs, **kw)


def test_params_declared_and_seen_next_generation(device):
    gen = make(device, hull_displacement=0.3, scale=1.5)
    hull_params = {k for k in gen.params if k.startswith("hull.")}
    assert hull_params == {"hull.displacement", "hull.scale"}
    np.testing.assert_allclose(gen.params["hull.displacement"].numpy(), 0.3, rtol=1e-6)
    np.testing.assert_allclose(gen.params["hull.scale"].numpy(), 1.5, rtol=1e-6)
    c0 = gen.generate().center.numpy().copy()
    gen.params["hull.displacement"] = 0.0
    assert gen.generate().center.numpy().tobytes() != c0.tobytes()
    with pytest.raises(ValueError, match="hull.displacement"):
        gen.params["hull.displacement"] = 0.95


@pytest.mark.parametrize("displacement", [0.0, 0.9])
def test_sampler_output_never_crosses(device, displacement):
    # relax off: the beads follow the sampler's loop. Large inward pulls make the spline
    # cross often; the (re-checked) polygon fallbacks must leave no crossing loop behind.
    assert_sampler_loops(
        "hull", device, hull_displacement=displacement, min_corners=20, max_corners=30
    )


def test_tight_grid_fills_distinct_cells(device):
    # 3 x 3 cells for 9 corners: random draws collide, the forward probe must still place
    # every corner in its own cell
    gen, probe = probed_generator(
        "hull", SamplerHull, device, seeds=2, min_point_distance=0.15, min_corners=9, max_corners=9
    )
    t = gen.generate()
    stage = probe.last
    cells = stage.cell_ids.numpy().reshape(8, 9)
    corners = stage.corners.numpy().reshape(8, 9, 2)
    for e in range(8):
        assert sorted(cells[e]) == list(range(9))
        # corners were angle-sorted after placement: every cell still holds exactly one
        ix = np.floor(corners[e] * 3.0).astype(int).clip(0, 2)
        assert sorted(ix[:, 1] * 3 + ix[:, 0]) == list(range(9))
    for p in centerlines(t):
        assert np.isfinite(p).all() and len(p) > 8
    assert np.all(t.winding.numpy() == 1.0)
