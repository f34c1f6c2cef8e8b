"""Soak: the host auto-reset recipe for 2,000 steps at E=256 with random crash/finish masks."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest
import warp as wp

from track_gen.course import Course
from track_gen.pipeline import presets


@pytest.mark.slow
def test_host_recipe_soak():
    E, steps = 256, 2000
    course = Course.track(
        presets.track(num_envs=E, device="cpu"),
        checkpoint_spacing=0.6,
        collision="segments",
        seeds=11,
    )
    n = course.generator.layout.N_max
    regen, respawn = course.inputs["regen_mask"], course.inputs["reset_mask"]
    pos = wp.zeros(E, dtype=wp.vec3f)
    quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf)
    he = wp.full(E, wp.vec2f(0.02, 0.01), dtype=wp.vec2f)
    course.bind(position=pos, orientation=quat, half_extents=he)
    rs = np.random.default_rng(0)
    bead = np.zeros(E, np.int64)
    laps_prev = np.zeros(E, np.int64)
    regenerated = 0
    tracemalloc.start()
    mem0 = None
    for step in range(steps):
        center = course.result.center.numpy().reshape(E, n, 3)
        count = course.result.count.numpy()
        bead = (bead + 1) % np.maximum(count, 1)
        p = center[np.arange(E), bead].copy()
        p[~np.isfinite(p)] = 0.0
        p[:, :2] += rs.normal(0.0, 0.03, size=(E, 2))
        pos.assign(p.astype(np.float32))
        res = course.step()
        valid = res.valid.numpy() != 0
        dist = res.events.dist_to_next.numpy()
        laps = res.events.laps.numpy().astype(np.int64)
        assert np.isfinite(dist[valid]).all()  # finite for every valid env
        assert np.isfinite(res.contacts.distance.numpy()[valid]).all()
        assert (laps >= laps_prev).all()  # laps only increase between resets
        crashed = (rs.random(E) < 0.02) & valid
        finished = (rs.random(E) < 0.01) | ~valid
        crashed &= ~finished
        if crashed.any():
            respawn.assign(crashed.astype(np.int32))
            course.reset(respawn)
            bead[crashed] = 0
        if finished.any():
            gen_before = course.result.generation.numpy().copy()
            regen.assign(finished.astype(np.int32))
            course.regenerate(mask=regen, advance=True)
            gen_after = course.result.generation.numpy()
            assert (gen_after[finished] == gen_before[finished] + 1).all()
            assert (gen_after[~finished] == gen_before[~finished]).all()
            bead[finished] = 0
            regenerated += int(finished.sum())
        laps_prev = res.events.laps.numpy().astype(np.int64)
        if step == 1000:
            gc.collect()
            mem0 = tracemalloc.get_traced_memory()[0]
    gc.collect()
    mem1 = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert regenerated > 1000
    # flat: the second thousand steps hold no more Python memory than the first (a leak of
    # even 1 KB per step would show as ~1 MB here)
    assert mem1 - mem0 < 500_000, (mem0, mem1)
