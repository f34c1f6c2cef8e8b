"""Validity (``stages/validate.py``): fail bits against the NumPy oracle in ``loops.py``
(turning number, Menger radius, non-neighbour distance with the band rule), relax off."""

from __future__ import annotations

import numpy as np
import pytest

from track_gen import FailBit

from ..oracles import loops as L

P = 96  # divisible by 6 for the hexagon
N_MAX = 128
HW = 0.1
PIPELINE_BITS = FailBit.TRUNCATED | FailBit.NONFINITE | FailBit.DEGENERATE


def _shapes():
    return {
        # radius 5 * hw: valid
        "big_circle": L.circle(0.5, P),
        "big_circle_cw": L.circle(0.5, P, ccw=False),
        "ellipse": L.ellipse(0.6, 0.35, P),
        # self-crossing: total turning 0 (and the crossing beads touch: thin as well)
        "figure_eight": L.figure_eight(0.6, 0.6, P),
        # neck gap 0.12 < 2 * 0.98 * hw, every curvature radius >= 0.3 = 3 * hw
        "pinched": L.pinched(0.35, 0.3, 0.12, P),
        # radius 0.8 * hw: curvature radius below the floor
        "small_circle": L.circle(0.8 * HW, P),
        # sharp 60-degree corners: the Menger radius at a corner (~0.06) is below the floor,
        # while beads 4 apart across a corner stay >= ~0.2 apart (curvature-only failure)
        "hexagon": L.regular_polygon(6, 8.2 * 0.6 * HW, 16),
    }


@pytest.fixture
def run(device):
    shapes = _shapes()
    gen = L.make_generator(
        L.stack(*shapes.values()), device, N_max=N_MAX, half_width=HW, relax_enable=False
    )
    gen.generate()
    return shapes, gen, L.snapshot(gen)


def _idx(shapes, name):
    return list(shapes).index(name)


def test_valid_is_fail_mask_zero(run):
    _, _, snap = run
    np.testing.assert_array_equal(snap["valid"], (snap["fail_mask"] == 0).astype(np.int32))


def test_bits_match_oracle(run):
    """Every env's fail_mask equals the oracle's TURNING/THICKNESS bits, nothing else."""
    shapes, gen, snap = run
    for e, name in enumerate(shapes):
        c = L.real_rows(snap, e)
        assert len(c) >= 4, name
        want = L.expected_bits(c, HW, gen.config.thickness_tol, gen.config.turning_tol)
        assert snap["fail_mask"][e] == want, f"{name}: {snap['fail_mask'][e]} != {want}"


def test_named_cases(run):
    shapes, _, snap = run
    bits = {name: int(snap["fail_mask"][e]) for e, name in enumerate(shapes)}

    for name in ("big_circle", "big_circle_cw", "ellipse"):
        assert bits[name] == 0, name
        assert snap["valid"][_idx(shapes, name)] == 1

    fig8 = L.real_rows(snap, _idx(shapes, "figure_eight"))
    assert L.turning_number(fig8) == 0
    assert bits["figure_eight"] & FailBit.TURNING
    assert not bits["figure_eight"] & PIPELINE_BITS

    pin = L.real_rows(snap, _idx(shapes, "pinched"))
    th = L.thickness_oracle(pin, HW, 0.02)
    assert th["thin_separation"] and not th["thin_curvature"]
    assert abs(L.turning_number(pin)) == 1
    assert bits["pinched"] == FailBit.THICKNESS

    small = L.real_rows(snap, _idx(shapes, "small_circle"))
    assert L.thickness_oracle(small, HW, 0.02)["thin_curvature"]
    assert bits["small_circle"] == FailBit.THICKNESS

    hexagon = L.real_rows(snap, _idx(shapes, "hexagon"))
    th = L.thickness_oracle(hexagon, HW, 0.02)
    assert th["thin_curvature"] and not th["thin_separation"]
    assert bits["hexagon"] == FailBit.THICKNESS


def test_pipeline_bits_are_kept(device):
    """TRUNCATED / NONFINITE / DEGENERATE raised by resample survive validation."""
    spacing = 0.6 * HW
    loops = L.stack(
        L.too_long_loop(40, spacing, P),
        L.with_nan(L.circle(0.5, P)),
        L.tiny_loop(spacing, P),
        L.circle(0.35, P),
    )
    gen = L.make_generator(loops, device, N_max=40, half_width=HW, relax_enable=False)
    gen.generate()
    snap = L.snapshot(gen)
    assert snap["fail_mask"][0] & FailBit.TRUNCATED
    assert snap["fail_mask"][1] & FailBit.NONFINITE
    assert snap["fail_mask"][2] & FailBit.DEGENERATE
    assert snap["fail_mask"][3] == 0
    np.testing.assert_array_equal(snap["valid"], [0, 0, 0, 1])


def test_params_exist_and_are_range_checked(device):
    gen = L.make_generator(L.stack(L.circle(0.5, P)), device, N_max=N_MAX, relax_enable=False)
    for key, default in (("validate.turning_tol", 0.1), ("validate.thickness_tol", 0.02)):
        assert key in gen.params
        np.testing.assert_allclose(gen.params[key].numpy(), [default], rtol=1e-6)
    with pytest.raises(ValueError):
        gen.params["validate.thickness_tol"] = 0.6
    with pytest.raises(ValueError):
        gen.params["validate.turning_tol"] = 0.0
    gen.params["validate.turning_tol"] = 1.0
    gen.generate()
    assert L.snapshot(gen)["valid"][0] == 1


def test_thickness_tol_write_is_seen_by_next_generate(device):
    """A circle of radius 0.8 * hw: invalid (THICKNESS) with thickness_tol 0.02, valid with 0.5
    (floor 0.05: the Menger radius ~0.07 and half the non-neighbour distance ~0.065 pass)."""
    small = L.circle(0.8 * HW, P)
    gen = L.make_generator(L.stack(small, small), device, N_max=N_MAX, relax_enable=False)
    gen.generate()
    snap = L.snapshot(gen)
    np.testing.assert_array_equal(snap["fail_mask"], [FailBit.THICKNESS] * 2)
    c = L.real_rows(snap, 0)
    assert not L.thickness_oracle(c, HW, 0.5)["thin"]

    gen.params["validate.thickness_tol"] = [0.02, 0.5]  # per env
    gen.generate()
    snap = L.snapshot(gen)
    np.testing.assert_array_equal(snap["fail_mask"], [FailBit.THICKNESS, 0])
    np.testing.assert_array_equal(snap["valid"], [0, 1])

    gen.params["validate.thickness_tol"] = 0.5  # scalar, both envs
    gen.generate()
    np.testing.assert_array_equal(L.snapshot(gen)["valid"], [1, 1])

    gen.params["validate.thickness_tol"] = 0.0
    gen.generate()
    np.testing.assert_array_equal(L.snapshot(gen)["valid"], [0, 0])


def test_thickness_tol_borderline_pinch(device):
    """The neck gap sets half the non-neighbour distance: gap 0.19 is thin for
    thickness_tol 0.02 (needs >= 0.196) and thick enough for 0.1 (needs >= 0.18)."""
    loop = L.pinched(0.35, 0.3, 0.19, P)
    gen = L.make_generator(L.stack(loop, loop), device, N_max=N_MAX, relax_enable=False)
    gen.params["validate.thickness_tol"] = [0.02, 0.1]
    gen.generate()
    snap = L.snapshot(gen)
    for e, tol in enumerate((0.02, 0.1)):
        th = L.thickness_oracle(L.real_rows(snap, e), HW, tol)
        assert bool(snap["fail_mask"][e] & FailBit.THICKNESS) == th["thin"]
    np.testing.assert_array_equal(snap["fail_mask"], [FailBit.THICKNESS, 0])


@pytest.mark.parametrize(
    "radius, band, bits",
    [
        (0.3, None, 0),  # automatic band round(2 * hw / seg) = 3: thick enough
        (0.3, 1, FailBit.THICKNESS),  # beads 2 apart (~0.116) are compared
        (0.3, 2, FailBit.THICKNESS),  # beads 3 apart (~0.173 < 0.196) are compared
        # a huge band is capped at n // 4 = 3 (13 beads): beads 4 apart (~0.189) are thin
        (0.115, 1000, FailBit.THICKNESS),
    ],
)
def test_fixed_band(device, radius, band, bits):
    """``relax_band`` overrides the automatic band (capped at n // 4) in the separation
    check; the curvature radius of these circles is above the floor in every case."""
    gen = L.make_generator(
        L.stack(L.circle(radius, P)), device, N_max=N_MAX, relax_enable=False, relax_band=band
    )
    gen.generate()
    snap = L.snapshot(gen)
    th = L.thickness_oracle(L.real_rows(snap, 0), HW, 0.02, fixed_band=band or 0)
    assert not th["thin_curvature"]
    assert th["thin"] == bool(bits)
    assert snap["fail_mask"][0] == bits


def test_curvature_gate_follows_thickness_tol(device):
    """Sharp-cornered hexagons (smallest Menger radius ~0.0585, separation ~0.2) under
    per-env thickness_tol: the curvature floor (1 - tol) * hw moves across the corner radius,
    so the THICKNESS bit flips between 0.4 (floor 0.06) and 0.43 (floor 0.057)."""
    hexagon = L.regular_polygon(6, 8.2 * 0.6 * HW, 16)
    tols = [0.02, 0.3, 0.4, 0.43, 0.5]
    gen = L.make_generator(L.stack(*[hexagon] * len(tols)), device, N_max=N_MAX, relax_enable=False)
    gen.params["validate.thickness_tol"] = tols
    gen.generate()
    snap = L.snapshot(gen)
    want = []
    for e, tol in enumerate(tols):
        th = L.thickness_oracle(L.real_rows(snap, e), HW, tol)
        assert not th["thin_separation"]
        want.append(int(FailBit.THICKNESS) if th["thin_curvature"] else 0)
    assert want == [2, 2, 2, 0, 0]
    np.testing.assert_array_equal(snap["fail_mask"], want)


def test_separation_scan_matches_oracle_on_rotated_pinches(device):
    """The separation scan skips bead chunks by bounding box; on pinched loops of random
    neck gaps (around the 2 * floor threshold), rotations and offsets (far from the origin
    too), the THICKNESS bit still equals the exhaustive oracle's (envs within 1e-4 of the
    threshold, where float32 rounding decides, are left out)."""
    rng = np.random.default_rng(12)
    num = 40
    loops, gaps = [], rng.uniform(0.12, 0.28, num)
    for k in range(num):
        a = rng.uniform(0.0, 2.0 * np.pi)
        rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        offset = rng.uniform(-1.0, 1.0, 2) * (100.0 if k % 4 == 0 else 1.0)
        loops.append(L.pinched(0.35, 0.3, gaps[k], P) @ rot.T + offset)
    for band in (None, 4):
        gen = L.make_generator(
            L.stack(*loops), device, N_max=N_MAX, half_width=HW, relax_enable=False, relax_band=band
        )
        gen.generate()
        snap = L.snapshot(gen)
        seen = set()
        for e in range(num):
            th = L.thickness_oracle(L.real_rows(snap, e), HW, 0.02, fixed_band=band or 0)
            if th["thin_curvature"] or abs(th["min_sep"] - 2.0 * th["floor"]) < 1e-4:
                continue
            assert bool(snap["fail_mask"][e] & FailBit.THICKNESS) == th["thin_separation"], e
            seen.add(th["thin_separation"])
        assert seen == {False, True}  # both outcomes exercised
