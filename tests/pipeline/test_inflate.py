"""Inflation (``stages/inflate.py``): frames, arc length, length, winding and borders,
checked against the NumPy oracle in ``loops.py`` with relax off."""

from __future__ import annotations

import numpy as np
import pytest

from ..oracles import loops as L

P = 128
N_MAX = 96
HW = 0.1


def _loops():
    return {
        "circle_ccw": L.circle(0.5, P),
        "circle_cw": L.circle(0.5, P, ccw=False),
        "ellipse_ccw": L.ellipse(0.6, 0.35, P, center=(0.2, 0.1)),
        "ellipse_cw": L.ellipse(0.6, 0.35, P, ccw=False),
        "stadium_cw": L.stadium(0.6, 0.3, P, ccw=False),
        "rounded_rectangle_ccw": L.rounded_rectangle(1.1, 0.7, 0.2, P),
        "pinched_cw": L.pinched(0.35, 0.3, 0.12, P, ccw=False),
    }


@pytest.fixture
def run(device):
    shapes = _loops()
    gen = L.make_generator(
        L.stack(*shapes.values()), device, N_max=N_MAX, half_width=HW, relax_enable=False
    )
    gen.generate()
    return shapes, L.snapshot(gen), L.float32_spacing(gen.config)


def test_frames_match_oracle(run):
    shapes, snap, spacing = run
    for e, (name, loop) in enumerate(shapes.items()):
        n = snap["count"][e]
        o_center = L.centerline_oracle(loop, spacing, N_MAX)
        assert n == o_center["count"], name
        center = L.real_rows(snap, e)
        np.testing.assert_allclose(center, o_center["center"][:n], atol=1e-5, err_msg=name)
        # frames of the kernel's own centerline, so errors do not compound
        f = L.frames_oracle(center, HW)
        for key in ("tangent", "normal", "outer", "inner"):
            np.testing.assert_allclose(
                L.real_rows(snap, e, key), f[key], atol=2e-5, err_msg=f"{name} {key}"
            )
        np.testing.assert_allclose(snap["arclen"][e, :n], f["arclen"], atol=1e-5, err_msg=name)
        assert snap["arclen"][e, 0] == 0.0
        assert snap["length"][e] == pytest.approx(f["length"], rel=1e-5), name
        assert snap["winding"][e] == f["winding"], name
        # the oracle computed on the oracle centerline agrees too
        f2 = L.frames_oracle(o_center["center"][:n], HW)
        assert snap["length"][e] == pytest.approx(f2["length"], rel=1e-5), name
        np.testing.assert_allclose(L.real_rows(snap, e, "outer"), f2["outer"], atol=5e-5)


def test_unit_vectors_and_flat(run):
    shapes, snap, _ = run
    for e, name in enumerate(shapes):
        n = snap["count"][e]
        for key in ("center", "outer", "inner", "tangent", "normal"):
            np.testing.assert_array_equal(snap[key][e, :n, 2], 0.0, err_msg=f"{name} {key}")
        t, nrm = L.real_rows(snap, e, "tangent"), L.real_rows(snap, e, "normal")
        np.testing.assert_allclose(np.linalg.norm(t, axis=1), 1.0, atol=1e-6)
        # left normal: (-t.y, t.x)
        np.testing.assert_allclose(nrm, np.stack([-t[:, 1], t[:, 0]], 1), atol=1e-7)
        c = L.real_rows(snap, e)
        for side in ("outer", "inner"):
            off = np.linalg.norm(L.real_rows(snap, e, side) - c, axis=1)
            np.testing.assert_allclose(off, HW, rtol=1e-5, err_msg=f"{name} {side}")
        # the arc length is cumulative: increments are the chord lengths
        seg = np.linalg.norm(np.diff(c, axis=0), axis=1)
        np.testing.assert_allclose(np.diff(snap["arclen"][e, :n]), seg, atol=1e-6)
        closing = np.linalg.norm(c[0] - c[-1])
        assert snap["length"][e] == pytest.approx(snap["arclen"][e, n - 1] + closing, rel=1e-6)


def test_outer_is_the_larger_loop_for_both_orientations(run):
    shapes, snap, _ = run
    for e, name in enumerate(shapes):
        ccw = name.endswith("_ccw")
        assert snap["winding"][e] == (1.0 if ccw else -1.0), name
        c = L.real_rows(snap, e)
        a_out = abs(L.shoelace_area(L.real_rows(snap, e, "outer")))
        a_c = abs(L.shoelace_area(c))
        a_in = abs(L.shoelace_area(L.real_rows(snap, e, "inner")))
        assert a_out > a_c > a_in, name
        # the left normal points inward on a counter-clockwise loop, outward on a clockwise one
        nrm = L.real_rows(snap, e, "normal")
        sign = -1.0 if ccw else 1.0
        np.testing.assert_allclose(
            L.real_rows(snap, e, "outer"), c + sign * HW * nrm, atol=1e-6, err_msg=name
        )


def test_circle_borders_are_concentric(device):
    """On a circle of radius R the borders are circles of radius R +- hw."""
    R = 0.5
    loops = L.stack(L.circle(R, P), L.circle(R, P, ccw=False))
    gen = L.make_generator(loops, device, N_max=N_MAX, half_width=HW, relax_enable=False)
    gen.generate()
    snap = L.snapshot(gen)
    for e in range(2):
        r_c = np.linalg.norm(L.real_rows(snap, e), axis=1)
        r_o = np.linalg.norm(L.real_rows(snap, e, "outer"), axis=1)
        r_i = np.linalg.norm(L.real_rows(snap, e, "inner"), axis=1)
        np.testing.assert_allclose(r_o - r_c, HW, atol=1e-3)
        np.testing.assert_allclose(r_c - r_i, HW, atol=1e-3)


@pytest.mark.parametrize("layout", ["per_env", "per_item"])
def test_shrinking_and_growing_loops_keep_padding_nan(device, layout):
    """Regenerations whose bead counts fall, rise and drop below 4: every per-bead field is
    finite on the real rows and NaN past the count after each one, in both layouts."""
    big = L.stack(L.circle(0.5, P), L.ellipse(0.6, 0.35, P, ccw=False))
    gen = L.make_generator(
        big, device, N_max=N_MAX, half_width=HW, relax_enable=False, kernel_layout=layout
    )
    counts = []
    for scale in (1.0, 0.5, 1.0, 0.02, 0.7):
        L.write_loops(gen, big * scale)
        gen.generate()
        snap = L.snapshot(gen)
        counts.append(snap["count"].tolist())
        for e in range(2):
            n = snap["count"][e]
            for name in ("outer", "center", "inner", "tangent", "normal", "arclen"):
                assert np.isnan(snap[name][e, n:]).all(), (scale, name)
                assert np.isfinite(snap[name][e, :n]).all(), (scale, name)
    assert counts[3] == [0, 0] and counts[1][0] < counts[0][0] < N_MAX  # fewer than 4 beads
