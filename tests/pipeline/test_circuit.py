"""The circuit sampler (``presets.circuit``): circuits in metres, their lengths, widths and
corners against the declared fields, a NumPy (float64) oracle of their geometry, the
fallback, the pair rules and every refusal. What every sampler must do (determinism, masks,
graphs, yield, layouts, thread counts) is in test_samplers.py and its neighbours."""

from __future__ import annotations

import numpy as np
import pytest

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.pipeline import presets
from track_gen.stages import circuit as C

from ..oracles.loops import centerlines, proper_crossings, shoelace_area

E = 48


@pytest.fixture(scope="module")
def batch():
    gen = TrackGenerator(presets.circuit(E, device="cpu"), seeds=3)
    gen.generate()
    return gen


def _rows(track, e):
    n = int(track.count.numpy()[e])
    rows = slice(e * track.N_max, e * track.N_max + n)
    pick = {
        k: getattr(track, k).numpy()[rows].astype(np.float64)
        for k in ("center", "outer", "inner", "normal")
    }
    return {k: v[:, :2] for k, v in pick.items()}


def test_preset_is_metres_sized_to_its_longest_lap():
    cfg = presets.circuit(4).config
    assert (cfg.generator, cfg.unit, cfg.spacing, cfg.relax_enable) == ("circuit", "m", 4.0, False)
    assert cfg.N_max * cfg.spacing >= 1.02 * cfg.length_max
    assert cfg.num_points * cfg.spacing >= 2.0 * cfg.length_max
    want = C.widest_half_width(cfg.road_width_max, cfg.road_narrowing, cfg.start_widening)
    assert cfg.half_width == pytest.approx(want, abs=1e-3)
    # the derived fields follow the given ones
    small = presets.circuit(4, length_min=1000.0, length_max=2000.0, spacing=3.0).config
    assert small.N_max * 3.0 >= 1.02 * 2000.0 and small.N_max < cfg.N_max


def test_circuits_are_metres_within_their_declared_ranges(batch):
    t, cfg = batch.result, batch.config
    assert t.unit == "m" and t.clone().unit == "m" and t.env_range(0, 2).unit == "m"
    assert t.valid.numpy().all()
    length = t.length.numpy()
    # the polygon is scaled to the drawn lap; the bows of the straights add a little
    assert (length > 0.97 * cfg.length_min).all() and (length < 1.03 * cfg.length_max).all()
    assert np.ptp(length) > 0.3 * (cfg.length_max - cfg.length_min)  # drawn per env
    for e in range(E):
        r = _rows(t, e)
        wl = np.hypot(*(r["outer"] - r["center"]).T)
        wr = np.hypot(*(r["inner"] - r["center"]).T)
        full = wl + wr
        assert full.max() <= 2.0 * cfg.half_width * (1 + 1e-5)
        # the lap-mean width is the drawn one (within the ramps' share), the start straight
        # (bead 0 on) the widest part
        assert 0.9 * cfg.road_width_min < full.mean() < 1.1 * cfg.road_width_max, e
        assert np.argmax(full) < 0.35 * len(full), e  # on the longest straight, the first
        assert full.min() < 0.95 * full.mean()  # the sides narrow along the lap


def test_numpy_oracle_simple_counter_clockwise_and_thick_enough(batch):
    """float64 oracle: no crossing, counter-clockwise, every curvature radius above the
    width on the inside of the bend, and the beads arc-uniform at about 4 m."""
    t = batch.result
    for e, c in enumerate(centerlines(t)):
        c = c.astype(np.float64)
        assert proper_crossings(c) == 0, e
        assert shoelace_area(c) > 0, e
        seg = np.hypot(*(np.roll(c, -1, 0) - c).T)
        assert 3.9 < seg.min() and seg.max() < 4.2, (e, seg.min(), seg.max())
        r = _rows(t, e)
        a, b = c - np.roll(c, 1, 0), np.roll(c, -1, 0) - c
        ac = np.roll(c, -1, 0) - np.roll(c, 1, 0)
        cross = a[:, 0] * ac[:, 1] - a[:, 1] * ac[:, 0]
        kappa = 2.0 * np.abs(cross) / (np.hypot(*a.T) * np.hypot(*b.T) * np.hypot(*ac.T))
        left = np.einsum("ij,ij->i", r["outer"] - r["center"], r["normal"]) > 0
        wl = np.where(
            left, np.hypot(*(r["outer"] - r["center"]).T), np.hypot(*(r["inner"] - r["center"]).T)
        )
        wr = np.where(
            left, np.hypot(*(r["inner"] - r["center"]).T), np.hypot(*(r["outer"] - r["center"]).T)
        )
        inside = np.where(cross > 0, wl, wr)
        assert (kappa * inside < 1.0).all(), e


def test_real_circuit_structure(batch):
    """Long straights, corners of mixed radius, about the drawn count."""
    t, cfg = batch.result, batch.config
    from track_gen import tools

    s = tools.CourseStatsUtility(t).stats
    corners = s.corners.numpy()
    assert np.median(corners) >= 0.5 * cfg.corner_count_min
    assert corners.max() <= cfg.corner_count_max + 12
    assert 0.6 < np.median(s.straight_fraction.numpy()) < 0.97
    kmax = s.curvature_max.numpy()
    assert (1.0 / kmax).min() < 30.0 and np.median(1.0 / kmax) < 60.0  # tight hairpins exist
    assert np.median(s.turning.numpy()) > 3.0 * np.pi  # esses and bends, not an oval


def test_attempts_and_fallback(batch):
    used = batch.diagnostics["circuit.attempts"].numpy()
    assert ((used >= 1) & (used <= batch.config.layout_attempts + 1)).all()
    assert (used == 1).mean() > 0.5
    # one attempt and a layout that cannot keep its clearance: the rounded rectangle
    gen = TrackGenerator(
        presets.circuit(8, device="cpu", layout_attempts=1, length_min=600.0, length_max=600.0,
                        road_width_min=30.0, road_width_max=30.0),
        seeds=1,
    )  # fmt: skip
    t = gen.generate()
    used = gen.diagnostics["circuit.attempts"].numpy()
    assert (used == 2).any()
    fb = np.flatnonzero(used == 2)
    assert t.valid.numpy()[fb].all()
    np.testing.assert_allclose(t.length.numpy()[fb], 600.0, rtol=0.03)


def test_pairs_written_the_wrong_way_round_are_ordered_by_the_kernel():
    gen = TrackGenerator(presets.circuit(6, device="cpu"), seeds=2)
    base = gen.generate().length.numpy().copy()
    gen.params["circuit.length_min"] = 5000.0
    gen.params["circuit.length_max"] = 4000.0  # read as (4000, 5000)
    t = gen.generate()
    assert t.valid.numpy().all()
    assert ((t.length.numpy() > 0.97 * 4000.0) & (t.length.numpy() < 1.03 * 5000.0)).all()
    assert not (gen.result.fail_mask.numpy() != 0).any()
    assert not np.array_equal(base, t.length.numpy())


def test_refusals_name_the_field_and_the_fix():
    with pytest.raises(ValueError, match=r"length_min.*generator = 'circuit'.*unit='m'"):
        TrackGenConfig(generator="circuit")
    with pytest.raises(ValueError, match=r"length_min.*N_max \* spacing.*presets\.circuit"):
        TrackGenConfig(generator="circuit", unit="m")
    with pytest.raises(ValueError, match=r"length_max.*cannot hold"):
        TrackGenConfig(**{**C.preset_fields(2), "length_max": 50000.0, "N_max": 1800})
    with pytest.raises(ValueError, match=r"road_width_min.*<= road_width_max"):
        presets.circuit(2, road_width_min=20.0)
    with pytest.raises(ValueError, match=r"corner_count_min.*<= corner_count_max"):
        presets.circuit(2, corner_count_min=30.0)
    with pytest.raises(ValueError, match=r"corner_radius_min.*<= corner_radius_max"):
        presets.circuit(2, corner_radius_min=500.0)
    with pytest.raises(TypeError, match="sets generator='circuit' itself"):
        presets.circuit(2, generator="bezier")
    with pytest.raises(ValueError, match="track pipelines only"):
        GateGenerator(GateGenConfig(generator="circuit", num_envs=2, device="cpu"))
    assert not hasattr(GateGenConfig(), "length_max")  # a track-only sampler's fields
