"""Constant-spacing resample (``stages/resample.py``) through the public API, against the
NumPy oracle in ``loops.py``; relax is off so the final centerline is
``resample -> inflate's arc-uniform re-resample``."""

from __future__ import annotations

import numpy as np

from track_gen import FailBit

from ..oracles import loops as L

P = 128  # sampler points per loop
N_MAX = 96
PER_BEAD = ("center", "outer", "inner", "tangent", "normal")


def _smooth_loops():
    return {
        "circle": L.circle(0.5, P),
        "circle_cw_offcentre": L.circle(0.42, P, ccw=False, center=(0.3, -0.2), phase=0.3),
        "ellipse": L.ellipse(0.6, 0.35, P),
        "stadium": L.stadium(0.6, 0.3, P, ccw=False),
        "rounded_rectangle": L.rounded_rectangle(1.1, 0.7, 0.2, P),
    }


def _assert_padding(snap, e):
    """Rows past count are NaN in every per-bead output (all components)."""
    n, N = snap["count"][e], snap["center"].shape[1]
    for name in PER_BEAD:
        assert np.isnan(snap[name][e, n:]).all(), name
        assert np.isfinite(snap[name][e, :n]).all(), name
    assert np.isnan(snap["arclen"][e, n:]).all()
    assert np.isfinite(snap["arclen"][e, :n]).all()
    assert snap["center"][e].shape[0] == N


def _assert_valid_consistent(snap):
    np.testing.assert_array_equal(snap["valid"], (snap["fail_mask"] == 0).astype(np.int32))


def test_centerline_matches_oracle(device):
    shapes = _smooth_loops()
    names = list(shapes)
    gen = L.make_generator(L.stack(*shapes.values()), device, N_max=N_MAX, relax_enable=False)
    gen.generate()
    snap = L.snapshot(gen)
    spacing = L.float32_spacing(gen.config)
    _assert_valid_consistent(snap)
    for e, name in enumerate(names):
        o = L.centerline_oracle(shapes[name], spacing, N_MAX)
        # the loops are chosen so that T/spacing is far from an integer (count well-posed)
        assert o["margin"] > 1e-3, name
        assert o["fail"] == 0, name
        assert snap["count"][e] == o["count"], name
        n = o["count"]
        size = np.abs(shapes[name]).max()
        np.testing.assert_allclose(
            snap["center"][e, :n, :2], o["center"][:n], rtol=0, atol=1e-5 * size, err_msg=name
        )
        np.testing.assert_array_equal(snap["center"][e, :n, 2], 0.0)
        _assert_padding(snap, e)
        assert snap["fail_mask"][e] == 0, name


def test_count_reduced_on_exact_multiple(device):
    """A loop whose perimeter is an exact multiple of the spacing: floor(T/s) + 1 = 65 beads
    would put bead 64 on top of bead 0; the rule reduces it to 64 = N_max, which is neither
    truncated nor duplicated. Every coordinate and length here is exact in float32."""
    side = np.linspace(-0.5, 0.5, 9)[:-1]  # 8 segments of 0.125 per side, perimeter 4.0
    sq = np.concatenate(
        [
            np.stack([side, np.full(8, -0.5)], 1),
            np.stack([np.full(8, 0.5), side], 1),
            np.stack([-side, np.full(8, 0.5)], 1),
            np.stack([np.full(8, -0.5), -side], 1),
        ]
    )
    assert sq.shape == (32, 2) and L.closed_length(sq) == 4.0
    gen = L.make_generator(L.stack(sq), device, N_max=64, spacing=0.0625, relax_enable=False)
    gen.generate()
    snap = L.snapshot(gen)
    o = L.resample_oracle(sq, 0.0625, 64)
    assert o["count"] == 64 and o["fail"] == 0
    assert snap["count"][0] == 64
    assert not snap["fail_mask"][0] & FailBit.TRUNCATED
    np.testing.assert_allclose(
        snap["center"][0, :, :2], L.centerline_oracle(sq, 0.0625, 64)["center"], atol=1e-6
    )


def test_truncation_boundary(device):
    """Perimeter (N_max + 0.5) * spacing needs N_max + 1 beads: TRUNCATED, count == N_max.
    Perimeter (N_max - 0.5) * spacing needs exactly N_max beads: not truncated."""
    n_max = 64
    spacing = 0.06
    too_long = L.too_long_loop(n_max, spacing, P, extra=0.5)
    exact = L.too_long_loop(n_max, spacing, P, extra=-0.5)
    way_too_long = L.too_long_loop(n_max, spacing, P, extra=2.0 * n_max)
    loops = L.stack(too_long, exact, way_too_long)
    gen = L.make_generator(loops, device, N_max=n_max, spacing=spacing, relax_enable=False)
    gen.generate()
    snap = L.snapshot(gen)
    _assert_valid_consistent(snap)

    o = [L.centerline_oracle(lp, L.float32_spacing(gen.config), n_max) for lp in loops]
    assert [x["count"] for x in o] == [n_max, n_max, n_max]
    assert o[0]["fail"] == o[2]["fail"] == int(FailBit.TRUNCATED) and o[1]["fail"] == 0

    np.testing.assert_array_equal(snap["count"], [n_max, n_max, n_max])
    assert snap["fail_mask"][0] & FailBit.TRUNCATED
    assert snap["fail_mask"][2] & FailBit.TRUNCATED
    assert snap["fail_mask"][1] == 0 and snap["valid"][1] == 1
    assert snap["valid"][0] == 0 and snap["valid"][2] == 0
    # the truncated chain is still what the oracle predicts (first N_max beads, re-spaced)
    for e in range(3):
        size = np.abs(loops[e]).max()
        np.testing.assert_allclose(
            snap["center"][e, :, :2], o[e]["center"], rtol=0, atol=1e-5 * size
        )
        _assert_padding(snap, e)


def test_nonfinite_and_degenerate(device):
    spacing = 0.06
    good = L.circle(0.5, P)
    nan_loop = L.with_nan(L.circle(0.5, P), index=17)
    inf_loop = L.circle(0.5, P)
    inf_loop[40, 1] = np.inf
    tiny = L.tiny_loop(spacing, P)  # perimeter 2.5 * spacing -> 3 beads
    loops = L.stack(good, nan_loop, inf_loop, tiny)
    gen = L.make_generator(loops, device, N_max=N_MAX, spacing=spacing, relax_enable=False)
    gen.generate()
    snap = L.snapshot(gen)
    _assert_valid_consistent(snap)
    assert snap["fail_mask"][0] == 0 and snap["valid"][0] == 1

    for e in (1, 2):
        bits = snap["fail_mask"][e]
        assert bits & FailBit.NONFINITE, e
        assert not bits & (FailBit.TRUNCATED | FailBit.TURNING | FailBit.THICKNESS), e
        assert snap["count"][e] == 0 and snap["valid"][e] == 0
        _assert_padding(snap, e)

    o = L.resample_oracle(tiny, L.float32_spacing(gen.config), N_MAX)
    assert o["count"] == 3 and o["fail"] == int(FailBit.DEGENERATE)
    bits = snap["fail_mask"][3]
    assert bits & FailBit.DEGENERATE
    assert not bits & (FailBit.TRUNCATED | FailBit.NONFINITE)
    assert snap["count"][3] < 4 and snap["valid"][3] == 0
    _assert_padding(snap, 3)


def test_masked_regeneration_only_touches_masked_envs(device):
    """generate(mask=m) rebuilds only envs with m[e] != 0, even though the plugin input was
    rewritten for every env; the others stay bitwise unchanged."""
    a = L.stack(L.circle(0.5, P), L.ellipse(0.6, 0.35, P), L.stadium(0.5, 0.3, P), L.circle(0.3, P))
    b = L.stack(
        L.ellipse(0.45, 0.3, P, ccw=False),
        L.circle(0.55, P, ccw=False),
        L.rounded_rectangle(1.0, 0.8, 0.25, P),
        L.figure_eight(0.6, 0.6, P),
    )
    gen = L.make_generator(a, device, N_max=N_MAX, relax_enable=False)
    gen.generate()
    before = L.snapshot(gen)
    L.write_loops(gen, b)
    mask = gen.inputs["regen_mask"]
    mask.assign(np.array([0, 1, 0, 1], dtype=np.int32))
    gen.generate(mask=mask)
    after = L.snapshot(gen)
    spacing = L.float32_spacing(gen.config)
    for e in (0, 2):
        for k, v in before.items():
            np.testing.assert_array_equal(after[k][e], v[e], err_msg=f"{k}[{e}]")
    for e in (1, 3):
        o = L.centerline_oracle(b[e], spacing, N_MAX)
        assert after["count"][e] == o["count"]
        n = o["count"]
        np.testing.assert_allclose(after["center"][e, :n, :2], o["center"][:n], atol=1e-5)
        _assert_padding(after, e)
    # the same mask again with the input back to `a`: the masked envs return to `before`
    L.write_loops(gen, a)
    gen.generate(mask=mask)
    again = L.snapshot(gen)
    for k, v in before.items():
        np.testing.assert_array_equal(again[k], v, err_msg=k)
