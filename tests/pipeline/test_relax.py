"""Position-based relaxation (``stages/relax.py``) through the public API: it must turn a
pinched loop into a valid one, leave a large circle a circle, report its sweeps and cache
overflow, and give bitwise-identical tracks and diagnostics in both thread layouts
(``kernel_layout`` per_env and per_item, compared on the CPU)."""

from __future__ import annotations

import numpy as np
import pytest

from track_gen import FailBit
from track_gen.pipeline import default_registry

from ..oracles import loops as L
from ..support.strategies import METRE_SAMPLERS

P = 128
N_MAX = 128
HW = 0.1
ITERS = 60


def _pinched(gap=0.12, ccw=True):
    # Lobes of radius 0.35 and neck arcs of radius 0.3 (>= 3 * hw: never too curved) joined
    # tangentially; the two neck arcs, half a loop apart in index, come within ``gap`` of each
    # other. With gap 0.12 < 2 * (1 - thickness_tol) * hw = 0.196 the raw loop fails THICKNESS
    # (separation only). Relax pushes non-band beads apart toward 2 * hw * (1 + margin) =
    # 0.23 while the lobes have room to give, so the neck opens past 0.196 and the bending
    # floor hw * (1 + margin) keeps every curvature radius above the 0.098 gate.
    return L.pinched(0.35, 0.3, gap, P, ccw=ccw)


def test_relax_fixes_pinched_loop(device):
    loops = L.stack(_pinched(), _pinched(ccw=False))
    raw = L.make_generator(loops, device, N_max=N_MAX, relax_enable=False)
    raw.generate()
    before = L.snapshot(raw)
    np.testing.assert_array_equal(before["fail_mask"], [FailBit.THICKNESS] * 2)

    gen = L.make_generator(loops, device, N_max=N_MAX, relax_enable=True, relax_iters=ITERS)
    gen.generate()
    snap = L.snapshot(gen)
    np.testing.assert_array_equal(snap["count"], before["count"])  # relax keeps the count
    np.testing.assert_array_equal(snap["fail_mask"], [0, 0])
    np.testing.assert_array_equal(snap["valid"], [1, 1])
    for e in range(2):
        c = L.real_rows(snap, e)
        th = L.thickness_oracle(c, HW, gen.config.thickness_tol)
        assert not th["thin"], th
        assert L.expected_bits(c, HW, gen.config.thickness_tol, gen.config.turning_tol) == 0
        # the neck really opened: half the smallest non-neighbour distance passes the gate
        assert th["min_sep"] >= 2.0 * th["floor"]
        assert abs(L.turning_number(c)) == 1
        assert snap["winding"][e] == before["winding"][e]


@pytest.mark.parametrize("converge_tol", [0.005, 0.0])
def test_relax_keeps_large_circle_round(device, converge_tol):
    R = 1.0  # 10 * hw
    loops = L.stack(L.circle(R, P), L.circle(R, P, ccw=False, phase=1.0))
    gen = L.make_generator(loops, device, N_max=N_MAX, relax_converge_tol=converge_tol)
    gen.generate()
    snap = L.snapshot(gen)
    np.testing.assert_array_equal(snap["valid"], [1, 1])
    for e in range(2):
        c = L.real_rows(snap, e)
        r = np.linalg.norm(c, axis=1)
        np.testing.assert_allclose(r, R, rtol=0.01)
        np.testing.assert_allclose(c.mean(axis=0), 0.0, atol=0.01 * R)
        assert snap["length"][e] == pytest.approx(2 * np.pi * R, rel=0.01)


def test_sweeps_diagnostic(device):
    loops = L.stack(L.circle(1.0, P), L.ellipse(0.6, 0.35, P), _pinched(), _pinched(0.05))
    gen = L.make_generator(loops, device, N_max=N_MAX, relax_iters=ITERS)
    assert "relax.sweeps" in gen.diagnostics
    gen.generate()
    sweeps = gen.diagnostics["relax.sweeps"].numpy()
    assert ((sweeps > 0) & (sweeps <= ITERS)).all(), sweeps
    # a round loop converges sooner than a pinched one
    assert sweeps[0] < sweeps[2]

    few = L.make_generator(loops, device, N_max=N_MAX, relax_iters=3)
    few.generate()
    sweeps = few.diagnostics["relax.sweeps"].numpy()
    assert ((sweeps > 0) & (sweeps <= 3)).all(), sweeps


def test_zero_converge_tol_runs_every_sweep(device):
    loops = L.stack(L.circle(1.0, P), L.ellipse(0.6, 0.35, P), _pinched(), L.stadium(0.6, 0.3, P))
    iters = 12
    gen = L.make_generator(loops, device, N_max=N_MAX, relax_iters=iters, relax_converge_tol=0.0)
    gen.generate()
    np.testing.assert_array_equal(gen.diagnostics["relax.sweeps"].numpy(), [iters] * 4)
    # masked: only the active envs run (and report) their sweeps
    gen.diagnostics["relax.sweeps"].zero_()
    mask = gen.inputs["regen_mask"]
    mask.assign(np.array([1, 0, 0, 1], dtype=np.int32))
    gen.generate(mask=mask)
    np.testing.assert_array_equal(gen.diagnostics["relax.sweeps"].numpy(), [iters, 0, 0, iters])


def test_sep_overflow_diagnostic(device):
    # one cache slot per bead: the pinched neck has many candidates per bead -> dropped
    tight = L.make_generator(L.stack(_pinched()), device, N_max=N_MAX, relax_sep_cache_slots=1)
    assert "relax.sep_overflow" in tight.diagnostics
    tight.generate()
    assert tight.diagnostics["relax.sep_overflow"].numpy()[0] > 0

    # the default 16 slots hold every candidate of a big circle
    roomy = L.make_generator(L.stack(L.circle(1.0, P)), device, N_max=N_MAX)
    roomy.generate()
    assert roomy.diagnostics["relax.sep_overflow"].numpy()[0] == 0

    # 0 slots: dense separation, nothing is ever dropped, and the pinch is still fixed
    dense = L.make_generator(
        L.stack(_pinched(), _pinched(0.05)), device, N_max=N_MAX, relax_sep_cache_slots=0
    )
    dense.generate()
    np.testing.assert_array_equal(dense.diagnostics["relax.sep_overflow"].numpy(), [0, 0])
    np.testing.assert_array_equal(L.snapshot(dense)["valid"], [1, 1])


def test_masked_regeneration_with_relax(device):
    """Masked envs are rebuilt from the rewritten input exactly as a fresh generator builds
    them; the others (results and relax diagnostics) stay bitwise unchanged."""
    a = L.stack(L.circle(1.0, P), L.circle(0.8, P), L.ellipse(0.6, 0.35, P), L.circle(0.9, P))
    b = L.stack(_pinched(), _pinched(0.08, ccw=False), L.stadium(0.5, 0.3, P), _pinched(0.16))
    gen = L.make_generator(a, device, N_max=N_MAX)
    gen.generate()
    before = L.snapshot(gen)
    diag_before = {k: v.numpy().copy() for k, v in gen.diagnostics.items()}

    L.write_loops(gen, b)
    mask = gen.inputs["regen_mask"]
    mask.assign(np.array([1, 0, 1, 0], dtype=np.int32))
    gen.generate(mask=mask)
    after = L.snapshot(gen)
    diag_after = {k: v.numpy().copy() for k, v in gen.diagnostics.items()}

    fresh = L.make_generator(b, device, N_max=N_MAX)
    fresh.generate()
    ref = L.snapshot(fresh)
    diag_ref = {k: v.numpy() for k, v in fresh.diagnostics.items()}

    for k in before:
        for e in (1, 3):
            np.testing.assert_array_equal(after[k][e], before[k][e], err_msg=f"{k}[{e}]")
        for e in (0, 2):
            np.testing.assert_array_equal(after[k][e], ref[k][e], err_msg=f"{k}[{e}]")
    for k in diag_before:
        np.testing.assert_array_equal(diag_after[k][[1, 3]], diag_before[k][[1, 3]], err_msg=k)
        np.testing.assert_array_equal(diag_after[k][[0, 2]], diag_ref[k][[0, 2]], err_msg=k)
    assert (after["valid"][[0, 2]] == 1).all()


# ------------------------------------------------------------------ per_item == per_env
# Samplers a config alone builds ("mix" needs a weight table, "centerline" user loops,
# "real_track" a table of circuits, "gate_table" a table of gate courses).
NEEDS_MORE = ("mix", "centerline", "real_track", "gate_table")
SAMPLERS = [s for s in default_registry().samplers() if s not in NEEDS_MORE]
LAYOUT_E = 32


def _layout_state(gen) -> dict:
    """Every result field and every relax diagnostic, as host copies."""
    out = L.track_arrays(gen.result)
    out.update({k: v.numpy().copy() for k, v in gen.diagnostics.items() if k.startswith("relax")})
    return out


def _assert_layouts_agree(make, mask_rows) -> None:
    """Generators ``make(kernel_layout)`` in both layouts agree bitwise after a plain call,
    an advancing call and a masked advancing call (``mask_rows``: the envs it rebuilds)."""
    gens = {lay: make(lay) for lay in ("per_env", "per_item")}
    for lay, gen in gens.items():
        assert gen.layout.kernel_layout == lay
    calls = (
        dict(),
        dict(advance=True),
        dict(advance=True, mask=np.isin(np.arange(gens["per_env"].num_envs), mask_rows)),
    )
    for i, call in enumerate(calls):
        states = {}
        for lay, gen in gens.items():
            if "mask" in call:
                gen.inputs["regen_mask"].assign(call["mask"].astype(np.int32))
                gen.generate(advance=True, mask=gen.inputs["regen_mask"])
            else:
                gen.generate(**call)
            states[lay] = _layout_state(gen)
        L.assert_bitwise_equal(states["per_env"], states["per_item"], where=f"call {i}")
    assert states["per_env"]["relax.sweeps"].max() > 0


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_per_item_layout_matches_per_env(sampler):
    # the circuit preset runs without relaxation: switch it on, a few sweeps
    extra = {"relax_enable": True, "relax_iters": 6} if sampler in METRE_SAMPLERS else {}

    def make(layout):
        return L.sampler_generator(
            sampler, "cpu", seeds=11, num_envs=LAYOUT_E, kernel_layout=layout, **extra
        )

    _assert_layouts_agree(make, mask_rows=[0, 3, 4, 17, 31])


@pytest.mark.parametrize(
    "fields",
    [
        dict(relax_accel="none"),
        dict(relax_sep_cache_slots=0),
        dict(relax_sep_every=1),
        dict(relax_band=2, relax_sep_cache_slots=1, relax_sep_every=3),  # overflow
        dict(relax_converge_tol=0.0, relax_iters=7, relax_smooth_passes=0),
    ],
    ids=["accel_none", "dense", "sep_every_1", "fixed_band_overflow", "no_early_exit"],
)
def test_per_item_layout_matches_per_env_settings(fields):
    # hand-made loops: pinches (separation, overflow), tight lobes (bending), a NaN and a
    # too-short loop (skipped), round loops (early convergence)
    loops = L.stack(
        _pinched(),
        _pinched(0.05, ccw=False),
        L.circle(1.0, P),
        L.ellipse(0.6, 0.35, P),
        L.stadium(0.5, 0.3, P),
        L.with_nan(L.circle(0.8, P)),
        L.circle(0.01, P),  # fewer than 4 beads
        _pinched(0.16),
    )

    def make(layout):
        return L.make_generator(loops, "cpu", N_max=N_MAX, kernel_layout=layout, **fields)

    _assert_layouts_agree(make, mask_rows=[0, 2, 5, 6])
