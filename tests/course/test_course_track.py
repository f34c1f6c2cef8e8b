"""Course.track: preset checks, components, progress through regenerations, invalid envs."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import PerEnvSeededRNG, TrackGenConfig, TrackGenerator
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import Component

E = 8


def spec(device, **kw):
    return presets.track(num_envs=E, device=device, **kw)


def test_components_and_attributes(device):
    course = Course.track(spec(device), checkpoint_spacing=0.6, seeds=42)
    assert list(course.components) == ["checkpoints", "progress"]
    assert course.checkpoint_sampler is course.components["checkpoints"].utility
    assert course.checkpoints is course.components["checkpoints"].result
    assert course.progress is course.components["progress"].utility
    assert course.collision is None and course.localizer is None
    assert course.rng is None and course.seeds is course.generator.seeds
    counts = course.checkpoints.count.numpy()
    lengths = course.result.length.numpy()
    np.testing.assert_array_equal(counts, np.clip(np.round(lengths / 0.6), 3, None))


@pytest.mark.parametrize(
    "kw, err, match",
    [
        (dict(checkpoint_spacing=0.0), ValueError, "checkpoint_spacing"),
        (dict(checkpoint_spacing=True), TypeError, "checkpoint_spacing"),
        (dict(checkpoint_spacing=0.6, collision=True), TypeError, "collision"),
        (dict(checkpoint_spacing=0.6, collision="boxes"), ValueError, "segments"),
        (dict(checkpoint_spacing=0.6, max_checkpoints=2), ValueError, "max_checkpoints"),
        (dict(checkpoint_spacing=0.6, extra=Component(name="acme.x")), TypeError, "sequence"),
        (dict(checkpoint_spacing=0.6, extra=[Component(name="progress")]), ValueError, "unique"),
        (
            dict(checkpoint_spacing=0.6, collision=Component(name="acme.c")),
            ValueError,
            "named 'collision'",
        ),
    ],
)
def test_preset_checks_before_building(kw, err, match, monkeypatch):
    built = []
    real = TrackGenerator.__init__

    def spy(self, *a, **k):
        built.append(1)
        real(self, *a, **k)

    monkeypatch.setattr(TrackGenerator, "__init__", spy)
    with pytest.raises(err, match=match):
        Course.track(spec("cpu"), seeds=1, **kw)
    assert built == []  # refused before any generator was built


def test_source_rules(device):
    gen = TrackGenerator(spec(device), seeds=3)
    with pytest.raises(TypeError, match="seeds= and stream="):
        Course.track(gen, checkpoint_spacing=0.6, seeds=1)
    with pytest.raises(TypeError, match=r"gates source goes to Course\.gates"):
        Course.track(
            presets.gates(num_envs=E, device=device, gate_width=0.1), checkpoint_spacing=0.6
        )
    rng = PerEnvSeededRNG(seeds=9, num_envs=E, device=device)
    a = Course.track(spec(device), checkpoint_spacing=0.6, seeds=rng)
    assert a.rng is rng
    b = Course.track(TrackGenConfig(num_envs=E, device=device), checkpoint_spacing=0.6, seeds=9)
    assert a.result.center.numpy().tobytes() == b.result.center.numpy().tobytes()


def test_masked_regeneration_keeps_unmasked_progress(device):
    course = Course.track(spec(device), checkpoint_spacing=0.6, seeds=42)
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    course.bind(position=pos)
    n = course.generator.layout.N_max
    center = course.result.center.numpy().reshape(E, n, 3)
    count = course.result.count.numpy()
    for k in range(60):  # spawn just behind checkpoint 0 (the start line), drive forward
        pos.assign(np.stack([center[e, (k - 3) % count[e]] for e in range(E)]).astype(np.float32))
        course.step()
    ev = course.progress.events
    progress_before = ev.progress.numpy().copy()
    cps_before = course.checkpoints.position.numpy().copy()
    assert progress_before.min() > 0
    regen = course.inputs["regen_mask"]
    m = np.zeros(E, np.int32)
    m[[1, 6]] = 1
    regen.assign(m)
    course.regenerate(mask=regen, advance=True)
    after = ev.progress.numpy()
    np.testing.assert_array_equal(after[m == 0], progress_before[m == 0])
    np.testing.assert_array_equal(after[m == 1], 0)
    M = course.checkpoints.max_checkpoints
    cps = course.checkpoints.position.numpy().reshape(E, M, 3)
    old = cps_before.reshape(E, M, 3)
    assert cps[m == 0].tobytes() == old[m == 0].tobytes()
    assert cps[m == 1].tobytes() != old[m == 1].tobytes()


def test_invalid_env_is_frozen(device):
    # N_max too small: every env is TRUNCATED, so invalid
    course = Course.track(spec(device, N_max=16), checkpoint_spacing=0.6, seeds=0)
    assert np.all(course.result.valid.numpy() == 0)
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    course.bind(position=pos)
    res = course.step()
    np.testing.assert_array_equal(res.events.dist_to_next.numpy(), 0.0)
    np.testing.assert_array_equal(res.events.passed.numpy(), 0)
    np.testing.assert_array_equal(res.valid.numpy(), 0)
