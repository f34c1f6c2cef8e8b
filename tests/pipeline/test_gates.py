"""GateGenerator: determinism, padding, frames, validity bits and dynamic gate width.

Geometry is checked against the NumPy oracles of ``gate_oracle.py`` (written from the stage
docstrings of ``gate_anchors``, ``gate_frames`` and ``gate_validate``); crafted courses come in
through the ``"centerline"`` sampler (``gen.inputs["centerline.xy"]``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import warp as wp

from track_gen import (
    FailBit,
    GateGenConfig,
    GateGenerator,
    TrackGenConfig,
    TrackGenerator,
    effective_seed,
)
from track_gen.config import GATE_RESOLUTION, TRACK_GENERATORS, SamplerConfig
from track_gen.pipeline import presets

from ..oracles import gate_oracle as O
from ..support.strategies import sampler_config

REPO = Path(__file__).resolve().parents[2]


def _load_gate_width():
    spec = importlib.util.spec_from_file_location(
        "gate_width", REPO / "benchmarks" / "gate_width.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: benchmarks/gate_width.py: its placement measure (spread, order) is the one tested here
GW = _load_gate_width()

E = 8
WIDTH = "gate_frames.gate_width"


def make(device, seeds=0, num_envs=E, **kw) -> GateGenerator:
    return GateGenerator(GateGenConfig(num_envs=num_envs, device=device, **kw), seeds=seeds)


def make_on_loop(loop: np.ndarray, device, num_envs=E, **kw) -> GateGenerator:
    """A generator whose every env places its gates on the closed polyline ``loop``."""
    gen = GateGenerator(
        GateGenConfig(
            generator="centerline", num_envs=num_envs, num_points=len(loop), device=device, **kw
        )
    )
    xy = gen.inputs["centerline.xy"]
    ptr = xy.ptr
    xy.assign(np.tile(np.asarray(loop, np.float32), (num_envs, 1)))
    assert xy.ptr == ptr
    return gen


def assert_bitwise_equal(a: dict, b: dict, skip=()):
    for k in a:
        if k not in skip:
            assert a[k].tobytes() == b[k].tobytes(), f"field {k} differs"


# a course that exercises every random stream of the gate stages
RICH = dict(
    gate_width=0.08,
    gate_ordering="random_pairs",
    z_profile="random_walk",
    z_min=-0.5,
    z_max=0.5,
    z_max_step=0.3,
)


@pytest.fixture(params=["bezier", "polar"])
def generator(request):
    return request.param


# ----------------------------------------------------------------------------- determinism


def test_same_seeds_identical_bytes(generator, device):
    a = O.snapshot(make(device, seeds=3, generator=generator, **RICH).generate())
    b = O.snapshot(make(device, seeds=3, generator=generator, **RICH).generate())
    assert_bitwise_equal(a, b)
    assert set(a) == set(O.VEC_FIELDS) | {
        "orientation",
        "half_size",
        "count",
        "valid",
        "fail_mask",
        "generation",
    }
    c = O.snapshot(make(device, seeds=4, generator=generator, **RICH).generate())
    assert a["position"].tobytes() != c["position"].tobytes()


def test_course_depends_only_on_effective_seed(generator, device):
    """Env e's epoch-1 gates are rebuilt bit for bit in another slot of a fresh generator."""
    gen = make(device, seeds=100, generator=generator, **RICH)
    gen.generate()
    gen.generate(advance=True)  # every env at epoch 1
    snap = O.snapshot(gen.result)
    G = gen.config.max_gates
    slots = np.arange(E, dtype=np.int32) + 5000
    for env, slot in [(3, 6), (0, 0), (7, 2)]:
        slots[slot] = effective_seed(100 + env, 1)
    fresh = GateGenerator(gen.config, seeds=wp.array(slots, dtype=wp.int32, device=device))
    other = O.snapshot(fresh.generate())
    for env, slot in [(3, 6), (0, 0), (7, 2)]:
        a, b = O.env_rows(snap, env, G), O.env_rows(other, slot, G)
        assert_bitwise_equal(a, b, skip=("generation",))
        assert a["generation"][0] == 1 and b["generation"][0] == 0


def test_masked_regeneration(device):
    gen = make(device, seeds=7, **RICH)
    gen.generate()
    before = O.snapshot(gen.result)
    mask = gen.inputs["regen_mask"]
    m = np.zeros(E, np.int32)
    m[[1, 4, 6]] = 1
    mask.assign(m)
    gen.generate(advance=True, mask=mask)
    after = O.snapshot(gen.result)
    G = gen.config.max_gates
    for e in range(E):
        a, b = O.env_rows(before, e, G), O.env_rows(after, e, G)
        if m[e]:
            assert a["position"].tobytes() != b["position"].tobytes(), e
            assert a["orientation"].tobytes() != b["orientation"].tobytes(), e
        else:
            assert_bitwise_equal(a, b)
    np.testing.assert_array_equal(gen.seeds.epochs.numpy(), m)
    np.testing.assert_array_equal(after["generation"], gen.seeds.epochs.numpy())
    np.testing.assert_array_equal(mask.numpy(), m)  # read, never cleared
    # a masked env's new course equals a fresh build at its effective seed
    eff = np.full(E, effective_seed(7 + 4, 1), np.int32)
    fresh = GateGenerator(gen.config, seeds=wp.array(eff, dtype=wp.int32, device=device))
    f = O.env_rows(O.snapshot(fresh.generate()), 0, G)
    assert_bitwise_equal(f, O.env_rows(after, 4, G), skip=("generation",))


def test_all_zero_mask_is_exact_noop(device):
    gen = make(device, **RICH)
    gen.generate()
    before = O.snapshot(gen.result)
    epochs = gen.seeds.epochs.numpy().copy()
    gen.generate(advance=True, mask=gen.inputs["regen_mask"])
    assert_bitwise_equal(before, O.snapshot(gen.result))
    np.testing.assert_array_equal(gen.seeds.epochs.numpy(), epochs)


def test_result_is_same_instance_and_clone_detaches(device):
    gen = make(device, **RICH)
    g1 = gen.generate()
    ptrs = {k: getattr(g1, k).ptr for k in g1.__dataclass_fields__}
    saved = g1.clone()
    before = O.snapshot(saved)
    g2 = gen.generate(advance=True)
    assert g2 is g1 is gen.result
    assert {k: getattr(g2, k).ptr for k in g2.__dataclass_fields__} == ptrs
    assert all(getattr(saved, k).ptr != p for k, p in ptrs.items())
    assert_bitwise_equal(before, O.snapshot(saved))
    assert O.snapshot(g2)["position"].tobytes() != before["position"].tobytes()


def test_fresh_generator_has_no_course(device):
    r = make(device).result
    assert np.all(r.generation.numpy() == -1) and np.all(r.valid.numpy() == 0)
    assert np.isnan(r.position.numpy()).all() and np.isnan(r.orientation.numpy()).all()


# ----------------------------------------------------------------------------- shapes, padding


def test_shapes_dtypes_and_nan_padding(generator, device):
    G = 16
    gen = make(device, generator=generator, max_gates=G, num_gates_min=5, num_gates_max=9, **RICH)
    seq = gen.generate()
    assert seq.num_envs == E and seq.max_gates == G
    for k in O.VEC_FIELDS:
        arr = getattr(seq, k)
        assert arr.dtype == wp.vec3f and arr.shape == (E * G,), k
    assert seq.orientation.dtype == wp.quatf and seq.orientation.shape == (E * G,)
    assert seq.half_size.dtype == wp.float32 and seq.half_size.shape == (E * G,)
    for k in ("count", "valid", "fail_mask", "generation"):
        arr = getattr(seq, k)
        assert arr.dtype == wp.int32 and arr.shape == (E,), k
    v = O.per_env(seq)
    count = v["count"]
    assert np.all((count >= 5) & (count <= 9))
    assert len(np.unique(count)) > 1  # the count is drawn per env
    for e in range(E):
        c = count[e]
        for k in (*O.VEC_FIELDS, "orientation", "half_size"):
            assert np.isfinite(v[k][e, :c]).all(), (e, k)
            assert np.isnan(v[k][e, c:]).all(), (e, k)
    np.testing.assert_array_equal(v["valid"], (v["fail_mask"] == 0).astype(np.int32))
    np.testing.assert_array_equal(v["generation"], 0)


# ----------------------------------------------------------------------------- frames


def _check_rotation(v, e, c):
    """The quaternion's matrix has orthonormal columns (forward, left, up), det +1."""
    q = v["orientation"][e, :c]
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)
    R = O.quat_to_matrix(q)
    np.testing.assert_allclose(
        R.transpose(0, 2, 1) @ R, np.broadcast_to(np.eye(3), R.shape), atol=1e-5
    )
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-5)
    fwd, left, up = R[..., 0], R[..., 1], R[..., 2]
    np.testing.assert_allclose(fwd, v["forward"][e, :c], atol=1e-5)
    np.testing.assert_allclose(left[:, 2], 0.0, atol=1e-6)  # roll-free
    assert np.all(up[:, 2] > 0.0)
    return fwd, left, up


@pytest.mark.parametrize("align", ["yaw_only", "full_tangent"])
def test_frames_match_oracle(align, device):
    width = 0.12
    gen = make(
        device,
        seeds=11,
        gate_width=width,
        gate_align=align,
        z_profile="uniform",
        z_min=0.0,
        z_max=0.3,
    )
    v = O.per_env(gen.generate())
    tilted = 0
    for e in range(E):
        c = v["count"][e]
        pos = v["position"][e, :c]
        assert np.ptp(pos[:, 2]) > 0.0  # not flat: the two alignments differ
        want = O.frames(pos, width, align)
        np.testing.assert_allclose(v["tangent"][e, :c], want["tangent"], atol=2e-5)
        np.testing.assert_allclose(np.linalg.norm(v["tangent"][e, :c], axis=1), 1.0, atol=1e-5)
        np.testing.assert_allclose(v["forward"][e, :c], want["forward"], atol=2e-5)
        np.testing.assert_allclose(np.linalg.norm(v["forward"][e, :c], axis=1), 1.0, atol=1e-5)
        fwd, left, up = _check_rotation(v, e, c)
        np.testing.assert_allclose(left, want["left_axis"], atol=2e-5)
        np.testing.assert_allclose(up, want["up"], atol=2e-5)
        if align == "yaw_only":
            np.testing.assert_array_equal(v["forward"][e, :c, 2], 0.0)
        else:
            np.testing.assert_allclose(v["forward"][e, :c], v["tangent"][e, :c], atol=1e-6)
            tilted += int(np.sum(np.abs(v["forward"][e, :c, 2]) > 1e-3))
        # bars: position +- half_size * left axis, |left - right| = gate_width
        np.testing.assert_allclose(v["half_size"][e, :c], np.float32(width) / 2, rtol=1e-7)
        np.testing.assert_allclose(v["left"][e, :c], pos + width / 2 * left, atol=2e-6)
        np.testing.assert_allclose(v["right"][e, :c], pos - width / 2 * left, atol=2e-6)
        np.testing.assert_allclose(
            np.linalg.norm(v["left"][e, :c] - v["right"][e, :c], axis=1), width, rtol=1e-5
        )
        np.testing.assert_allclose(v["left"][e, :c], want["left"], atol=3e-6)
        np.testing.assert_allclose(v["right"][e, :c], want["right"], atol=3e-6)
    if align == "full_tangent":
        assert tilted > 0


def test_two_gate_course_uses_the_chord(device):
    gen = make(
        device,
        min_gates=2,
        num_gates_min=2,
        num_gates_max=2,
        max_gates=4,
        gate_width=0.1,
        z_profile="uniform",
        z_max=0.2,
        gate_align="full_tangent",
    )
    v = O.per_env(gen.generate())
    np.testing.assert_array_equal(v["count"], 2)
    for e in range(E):
        pos = v["position"][e, :2]
        np.testing.assert_allclose(v["tangent"][e, :2], O.central_tangents(pos), atol=2e-5)
        np.testing.assert_allclose(v["tangent"][e, 0], -v["tangent"][e, 1], atol=1e-6)


# ----------------------------------------------------------------------------- anchors, bars


def test_unjittered_anchors_follow_the_arc(device):
    P, K = 200, 10
    loop = O.ellipse(0.7, 0.4, P)
    gen = make_on_loop(
        loop, device, num_gates_min=K, num_gates_max=K, gate_jitter=0.0, gate_solve_iters=0
    )
    v = O.per_env(gen.generate())
    want = O.anchors_no_jitter(loop.astype(np.float32), K)
    for e in range(E):
        assert v["count"][e] == K
        np.testing.assert_allclose(v["position"][e, :K, :2], want, atol=2e-6)
        np.testing.assert_array_equal(v["position"][e, :K, 2], 0.0)
    assert np.all(v["valid"] == 1)


def test_oracle_strict_crossing():
    """The oracle itself (no device): only proper crossings count."""
    z = np.zeros(2)
    x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    assert O.segments_cross(-x, x, -y, y) == (True, False)  # an X
    assert O.segments_cross(-x, x, z, y) == (False, True)  # a T: touching
    assert O.segments_cross(-x, x, -x + y, x + y) == (False, False)  # parallel
    assert O.segments_cross(-x, x, z, 2 * x)[0] is False  # collinear, overlapping
    assert O.segments_cross(-x, x, 2 * x - y, 2 * x + y) == (False, False)  # apart


def test_crossing_bars_match_oracle(device):
    """A thin ellipse (sides 0.12 apart): wide gates on opposite sides cross in plan view."""
    P, K = 256, 8
    loop = O.ellipse(0.6, 0.06, P)
    n = 16
    widths = np.linspace(0.02, 0.4, n)
    gen = make_on_loop(
        loop,
        device,
        num_envs=n,
        num_gates_min=K,
        num_gates_max=K,
        gate_jitter=0.0,
        gate_radius=0.0,
        gate_width=0.1,
    )
    gen.params[WIDTH] = widths
    v = O.per_env(gen.generate())
    pos = v["position"][0, :K]
    want = []
    for e in range(n):
        assert v["count"][e] == K
        np.testing.assert_array_equal(v["position"][e, :K], pos)  # same course everywhere
        f = O.frames(pos, widths[e], "yaw_only")
        hit, amb = O.bars_cross(f["left"], f["right"])
        assert not amb, f"width {widths[e]} sits on a crossing threshold"
        got = bool(v["fail_mask"][e] & FailBit.CROSSING_BARS)
        assert got == hit, (widths[e], got, hit)
        assert v["fail_mask"][e] & ~FailBit.CROSSING_BARS == 0
        want.append(hit)
    assert not want[0] and want[-1]  # narrow gates pass, wide ones cross
    # the same crossings from the kernel's own bar end points
    for e in range(n):
        hit, _ = O.bars_cross(v["left"][e, :K], v["right"][e, :K])
        assert hit == want[e]


def test_point_gates_never_cross(device):
    gen = make_on_loop(
        O.ellipse(0.6, 0.06, 256),
        device,
        num_gates_min=8,
        num_gates_max=8,
        gate_jitter=0.0,
        gate_radius=0.0,
    )
    v = O.per_env(gen.generate())
    np.testing.assert_array_equal(v["fail_mask"], 0)
    np.testing.assert_array_equal(v["half_size"][:, :8], 0.0)


@pytest.mark.parametrize("r0", [0.02, 0.045])
def test_gate_spacing_and_separation(r0, device):
    """Six gates on a circle of radius r0 sit r0 apart (< 2 * gate_radius = 0.05)."""
    K, P, rad = 6, 64, 0.025
    loop = O.circle(r0, P)
    kw = dict(num_gates_min=K, num_gates_max=K, gate_jitter=0.0, gate_radius=rad, max_gates=8)
    off = make_on_loop(loop, device, gate_solve_iters=0, **kw)
    v = O.per_env(off.generate())
    for e in range(E):
        assert O.min_plan_distance(v["position"][e, :K]) < 2 * rad
    np.testing.assert_array_equal(v["fail_mask"], FailBit.GATE_SPACING)
    for iters in (8, 64):
        on = make_on_loop(loop, device, gate_solve_iters=iters, **kw)
        w = O.per_env(on.generate())
        for e in range(E):
            assert O.min_plan_distance(w["position"][e, :K]) >= 2 * rad * (1 - 1e-4), iters
        np.testing.assert_array_equal(w["fail_mask"], 0)
        np.testing.assert_array_equal(w["valid"], 1)


def out_and_back(n_half: int = 8) -> np.ndarray:
    """A zero-area loop along [0, 1] on the x axis and back (exact float32 samples)."""
    x = np.r_[np.arange(n_half + 1), np.arange(n_half - 1, 0, -1)] / n_half
    return np.stack([x, np.zeros_like(x)], -1)


def test_vanishing_tangent_is_degenerate(device):
    """Three gates on an out-and-back loop: gates 0 and 2 coincide, gate 1's tangent
    vanishes (DEGENERATE) and the coincident pair is too close (GATE_SPACING)."""
    gen = make_on_loop(
        out_and_back(),
        device,
        num_gates_min=3,
        num_gates_max=3,
        gate_jitter=0.0,
        gate_solve_iters=0,
        min_gates=2,
        gate_width=0.1,
    )
    v = O.per_env(gen.generate())
    np.testing.assert_allclose(v["position"][:, :3, 0], [[1 / 3, 1.0, 1 / 3]] * E, atol=1e-6)
    np.testing.assert_array_equal(v["tangent"][:, 1], 0.0)
    np.testing.assert_array_equal(v["fail_mask"], FailBit.DEGENERATE | FailBit.GATE_SPACING)
    np.testing.assert_array_equal(v["valid"], 0)


@pytest.mark.parametrize("align", ["yaw_only", "full_tangent"])
def test_vertical_tangent_falls_back_to_x(align, device):
    """Gate 1's neighbours stack vertically: its tangent is vertical, so its forward falls
    back to the horizontal tangent (vanishing) and then +x; the frame stays valid."""
    gen = make_on_loop(
        out_and_back(),
        device,
        num_gates_min=3,
        num_gates_max=3,
        gate_jitter=0.0,
        gate_solve_iters=0,
        min_gates=2,
        gate_width=0.1,
        gate_align=align,
        z_profile="uniform",
        z_min=0.0,
        z_max=1.0,
    )
    v = O.per_env(gen.generate())
    for e in range(E):
        t = v["tangent"][e, 1]
        if abs(v["position"][e, 2, 2] - v["position"][e, 0, 2]) > 1e-3:
            np.testing.assert_allclose(np.abs(t), [0.0, 0.0, 1.0], atol=1e-5)
        np.testing.assert_array_equal(v["forward"][e, 1], [1.0, 0.0, 0.0])
        _check_rotation(v, e, 3)
        assert not v["fail_mask"][e] & FailBit.DEGENERATE


def test_nonfinite_loop_then_recovery(device):
    loop = O.ellipse(0.7, 0.4, 64)
    gen = make_on_loop(loop, device, num_envs=4)
    xy = gen.inputs["centerline.xy"]
    bad = np.tile(loop, (4, 1)).astype(np.float32)
    bad[64 + 5] = np.nan  # env 1
    xy.assign(bad)
    v = O.per_env(gen.generate())
    assert v["count"][1] == 0 and v["valid"][1] == 0
    assert v["fail_mask"][1] & FailBit.NONFINITE and v["fail_mask"][1] & FailBit.GATE_COUNT
    assert np.isnan(v["position"][1]).all() and np.isnan(v["orientation"][1]).all()
    np.testing.assert_array_equal(v["valid"][[0, 2, 3]], 1)
    # fix the loop and rebuild env 1 only: its fail bits are recomputed, not accumulated
    xy.assign(np.tile(loop, (4, 1)).astype(np.float32))
    gen.inputs["regen_mask"].assign(np.array([0, 1, 0, 0], np.int32))
    gen.generate(mask=gen.inputs["regen_mask"])
    w = O.per_env(gen.result)
    np.testing.assert_array_equal(w["fail_mask"], 0)
    clean = make_on_loop(loop, device, num_envs=4)
    np.testing.assert_array_equal(w["position"], O.per_env(clean.generate())["position"])


def test_gate_spacing_is_scale_invariant(device):
    """The same course and radius scaled by s give the same GATE_SPACING verdict."""
    flags = {}
    for s in (1.0, 0.01):
        gen = make_on_loop(
            O.circle(0.03 * s, 64),
            device,
            num_gates_min=6,
            num_gates_max=6,
            gate_jitter=0.0,
            gate_solve_iters=0,
            gate_radius=0.025 * s,
        )
        v = O.per_env(gen.generate())
        assert O.min_plan_distance(v["position"][0, :6]) < 0.05 * s * 0.7
        flags[s] = v["fail_mask"].copy()
    np.testing.assert_array_equal(flags[1.0], FailBit.GATE_SPACING)
    np.testing.assert_array_equal(flags[0.01], flags[1.0])


# ----------------------------------------------------------------------------- grade


@pytest.mark.parametrize("z_max, grade", [(1.0, 0.1), (0.3, 0.5)])
def test_grade_matches_oracle(z_max, grade, device):
    n = 16
    kw = dict(seeds=5, num_envs=n, z_profile="uniform", z_min=0.0, z_max=z_max)
    v = O.per_env(make(device, z_valid_grade=grade, **kw).generate())
    hits = []
    for e in range(n):
        c = v["count"][e]
        hit, amb = O.grade_violated(v["position"][e, :c], grade)
        assert not amb
        assert bool(v["fail_mask"][e] & FailBit.GRADE) == hit, e
        hits.append(hit)
    if grade == 0.1:
        assert all(hits)  # steep everywhere
    else:
        assert any(hits) and not all(hits)
    # z_valid_grade = 0 disables the check: same course, never GRADE
    w = O.per_env(make(device, **kw).generate())
    np.testing.assert_array_equal(w["position"], v["position"])
    assert not np.any(w["fail_mask"] & FailBit.GRADE)


def test_grade_includes_the_closing_pair(device):
    """A random walk with steps below the limit: only the closing pair can climb too much."""
    n = 16
    gen = make(
        device,
        seeds=21,
        num_envs=n,
        z_profile="random_walk",
        z_min=-10.0,
        z_max=10.0,
        z_max_step=0.45,
        z_valid_grade=0.5,
    )
    v = O.per_env(gen.generate())
    closing_only = 0
    for e in range(n):
        pos = v["position"][e, : v["count"][e]]
        # every step of the walk stays below the limit ...
        rise = np.abs(np.diff(pos[:, 2]))
        run = np.linalg.norm(np.diff(pos[:, :2], axis=0), axis=1)
        assert np.all(rise <= 0.45 * (1 + 1e-5) * run)
        # ... so a GRADE bit comes from the closing pair, which the oracle includes
        hit, amb = O.grade_violated(pos, 0.5)
        assert not amb
        assert bool(v["fail_mask"][e] & FailBit.GRADE) == hit
        closing_only += int(hit)
    assert closing_only > 0


# ----------------------------------------------------------------------------- gate width


def test_gate_width_param_is_dynamic(device):
    gen = make(device, gate_width=0.1)
    arr = gen.params[WIDTH]
    ptr = arr.ptr
    np.testing.assert_allclose(arr.numpy(), 0.1, rtol=1e-7)
    gen.generate()
    gen.params[WIDTH] = 0.2
    assert gen.params[WIDTH].ptr == ptr
    np.testing.assert_array_equal(gen.params[WIDTH].numpy(), np.float32(0.2))
    v = O.per_env(gen.generate())
    for e in range(E):
        c = v["count"][e]
        np.testing.assert_array_equal(v["half_size"][e, :c], np.float32(0.1))
        np.testing.assert_allclose(
            np.linalg.norm(v["left"][e, :c] - v["right"][e, :c], axis=1), 0.2, rtol=1e-5
        )
    before = gen.params[WIDTH].numpy().copy()
    for bad in (0.0, 0, -0.1, np.full(E, 0.0), np.r_[np.full(E - 1, 0.1), -1.0]):
        with pytest.raises(ValueError, match="gate_frames.gate_width"):
            gen.params[WIDTH] = bad
        np.testing.assert_array_equal(gen.params[WIDTH].numpy(), before)


def test_zero_width_makes_point_gates(device):
    gen = make(device, gate_width=0.0)
    np.testing.assert_array_equal(gen.params[WIDTH].numpy(), 0.0)
    v = O.per_env(gen.generate())
    for e in range(E):
        c = v["count"][e]
        np.testing.assert_array_equal(v["half_size"][e, :c], 0.0)
        np.testing.assert_array_equal(v["left"][e, :c], v["right"][e, :c])
        np.testing.assert_array_equal(v["left"][e, :c], v["position"][e, :c])
    assert presets.gates(device=device).config.gate_width == 0.0


def test_randomized_gate_width(device):
    lo, hi = 0.05, 0.15
    spec = presets.gates(num_envs=E, device=device).with_randomize({WIDTH: (lo, hi)})
    gen = GateGenerator(spec, seeds=30)
    gen.generate()
    w0 = gen.params[WIDTH].numpy().copy()
    assert np.all((w0 >= lo) & (w0 < hi)) and len(np.unique(w0)) == E
    v = O.per_env(gen.result)
    for e in range(E):
        np.testing.assert_array_equal(v["half_size"][e, : v["count"][e]], np.float32(0.5) * w0[e])
    # (seed, epoch) decides the widths
    again = GateGenerator(spec, seeds=30)
    again.generate()
    np.testing.assert_array_equal(again.params[WIDTH].numpy(), w0)
    # masked regeneration redraws only the masked envs
    m = np.zeros(E, np.int32)
    m[[2, 5]] = 1
    gen.inputs["regen_mask"].assign(m)
    gen.generate(advance=True, mask=gen.inputs["regen_mask"])
    w1 = gen.params[WIDTH].numpy()
    np.testing.assert_array_equal(w1[m == 0], w0[m == 0])
    assert np.all(w1[m == 1] != w0[m == 1])
    assert np.all((w1 >= lo) & (w1 < hi))
    # a fresh generator seeded with the effective seeds draws the same widths
    eff = np.array([effective_seed(30 + e, int(m[e])) for e in range(E)], np.int32)
    fresh = GateGenerator(spec, seeds=wp.array(eff, dtype=wp.int32, device=device))
    fresh.generate()
    np.testing.assert_array_equal(fresh.params[WIDTH].numpy(), w1)
    assert_bitwise_equal(O.snapshot(fresh.result), O.snapshot(gen.result), skip=("generation",))


# ----------------------------------------------------------------------------- orderings


def test_random_pairs_permutes_pairs_of_ccw(device):
    kw = dict(gate_solve_iters=0, num_gates_min=7, num_gates_max=12)
    ccw = O.per_env(make(device, seeds=40, **kw).generate())
    rp = O.per_env(make(device, seeds=40, gate_ordering="random_pairs", **kw).generate())
    np.testing.assert_array_equal(ccw["count"], rp["count"])
    shuffled = 0
    for e in range(E):
        c = ccw["count"][e]
        a, b = ccw["position"][e, :c], rp["position"][e, :c]
        # same anchor set
        np.testing.assert_array_equal(a[np.lexsort(a.T[::-1])], b[np.lexsort(b.T[::-1])])
        # ... moved as consecutive pairs (an odd last gate stays put)
        pairs = c // 2
        pa = a[: 2 * pairs].reshape(pairs, 2, 3)
        pb = b[: 2 * pairs].reshape(pairs, 2, 3)
        perm = []
        for p in range(pairs):
            match = [q for q in range(pairs) if np.array_equal(pb[p], pa[q])]
            assert len(match) == 1, (e, p)
            perm.append(match[0])
        assert sorted(perm) == list(range(pairs))
        np.testing.assert_array_equal(a[2 * pairs :], b[2 * pairs :])
        shuffled += int(perm != list(range(pairs)))
    assert shuffled > 0


# ----------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    "fields, name",
    [
        (dict(gate_ordering="cw"), "gate_ordering"),
        (dict(gate_align="roll"), "gate_align"),
        (dict(z_profile="sine"), "z_profile"),
        (dict(num_gates_max=12, max_gates=10), "max_gates"),
        (dict(z_min=0.5, z_max=0.1), "z_min"),
        (dict(gate_width=-0.1), "gate_width"),
        (dict(gate_jitter=0.5), "gate_jitter"),
        (dict(num_gates_min=9, num_gates_max=8), "num_gates_max"),
        (dict(min_gates=1), "min_gates"),
        (dict(min_gates=9, num_gates_min=8), "num_gates_min"),
        (dict(gate_radius=-1.0), "gate_radius"),
        (dict(gate_solve_iters=-1), "gate_solve_iters"),
        (dict(z_valid_grade=-0.1), "z_valid_grade"),
    ],
)
def test_config_validation(fields, name, device):
    with pytest.raises(ValueError, match=rf"GateGenConfig\.{name}\b"):
        GateGenConfig(device=device, **fields)
    with pytest.raises(ValueError, match=rf"GateGenConfig\.{name}\b"):
        presets.gates(device=device, **fields)


def test_wrong_family_raises(device):
    with pytest.raises(TypeError, match="GateGenConfig"):
        GateGenerator(TrackGenConfig(num_envs=2, device=device))
    with pytest.raises(TypeError, match="track"):
        TrackGenerator(presets.gates(num_envs=2, device=device))
    with pytest.raises(TypeError, match="gates"):
        GateGenerator(presets.track(num_envs=2, device=device))
    with pytest.raises(TypeError):
        TrackGenerator(GateGenConfig(num_envs=2, device=device))


# ----------------------------------------------------------------------------- yield


def test_invalid_fraction_grows_with_width(device):
    """Monotone sanity check on bezier courses: wider gates cross more often."""
    gen = make(device, seeds=0, num_envs=256, gate_width=0.0)
    bad = {0.0: 1.0 - gen.generate().valid.numpy().mean()}
    for w in (0.1, 0.4):
        gen.params[WIDTH] = w
        bad[w] = 1.0 - gen.generate().valid.numpy().mean()
    assert bad[0.0] == 0.0
    assert bad[0.4] > bad[0.1]


# ----------------------------------------------------------------------------- gate resolution

#: sha256 (first 16 hex digits) of every Track field after generate() and after
#: generate(advance=True) (TrackGenConfig defaults, E=6, seeds 5, cpu), recorded at commit
#: 2c82419, before the gate pipeline got its own sampler resolution. Gate speed work must never
#: move a track byte; a change that moves track bytes on purpose updates these pins (the loop
#: in test_tracks_are_pinned_bit_for_bit prints them).
TRACK_PINS = {
    "bezier": ("569d8f976438864c", "0e4f83dc19f36b17"),
    "checkpoint": ("83bad7afa27236d3", "f66d2244f1dbd3cb"),
    "hull": ("137e7a6c92c9f29c", "3495904ed2d0ac50"),
    "polar": ("3e0903eed9e6e55d", "55bef881289efb0b"),
    "repulsive": ("b70e3f5626d9a884", "006b682db0e67d06"),
    "voronoi": ("3f53a36eced7d135", "f3d3575a7f2a962d"),
    "circuit": ("fcc7efacccf3a1d5", "5cda7acd43cf2da2"),  # presets.circuit's config (metres)
}


def _track_digest(track) -> str:
    h = hashlib.sha256()
    for f in track.__dataclass_fields__:
        h.update(getattr(track, f).numpy().tobytes())
    return h.hexdigest()[:16]


def test_tracks_are_pinned_bit_for_bit():
    assert set(TRACK_PINS) == set(TRACK_GENERATORS)
    got = {}
    for name in TRACK_GENERATORS:
        gen = TrackGenerator(sampler_config(name, num_envs=6, device="cpu"), seeds=5)
        first = _track_digest(gen.generate())
        got[name] = (first, _track_digest(gen.generate(advance=True)))
    assert got == TRACK_PINS, "\n".join(f'    "{k}": {v},' for k, v in got.items())


def test_gate_resolution_defaults_leave_tracks_alone(device):
    """GateGenConfig defaults the sampler resolution to GATE_RESOLUTION; TrackGenConfig and
    SamplerConfig keep the declarations' defaults; a value passed explicitly wins."""
    track, gate, shared = TrackGenConfig(), GateGenConfig(), SamplerConfig()
    assert (track.num_points, track.num_points_per_segment) == (256, 30)
    assert (shared.num_points, shared.num_points_per_segment) == (256, 30)
    assert {k: getattr(gate, k) for k in GATE_RESOLUTION} == dict(GATE_RESOLUTION)
    for f in dataclasses.fields(TrackGenConfig):  # every track default is the declaration's
        assert f.default == f.metadata["tunable"].default, f.name
    for k in GATE_RESOLUTION:
        assert getattr(GateGenConfig(**{k: 40}), k) == 40
        assert getattr(gate.replace(**{k: 40}), k) == 40
    fine = GateGenConfig(num_envs=2, device=device, num_points=256, num_points_per_segment=30)
    assert GateGenerator(fine).layout.num_points == 256
    assert GateGenerator(GateGenConfig(num_envs=2, device=device)).layout.num_points == 32
    # num_points_per_segment reaches a sampler that builds its dense loop (voronoi): the
    # loops, hence the gates, differ; a knot sampler (polar) never builds its spline
    a = O.snapshot(make(device, generator="voronoi", num_points_per_segment=30).generate())
    b = O.snapshot(make(device, generator="voronoi").generate())
    assert a["position"].tobytes() != b["position"].tobytes()
    a = O.snapshot(make(device, generator="polar", num_points_per_segment=30).generate())
    b = O.snapshot(make(device, generator="polar").generate())
    assert_bitwise_equal(a, b)
    with pytest.raises(ValueError, match=r"GateGenConfig\.num_points\b"):
        GateGenConfig(num_points=8)
    with pytest.raises(ValueError, match=r"GateGenConfig\.num_points_per_segment\b"):
        GateGenConfig(num_points_per_segment=1)


# ----------------------------------------------------------------------------- knot loops

KNOT_SAMPLERS = ("bezier", "checkpoint", "hull", "polar")
#: docs/gates.md's crossing-bar table before the knot loops (commit 5b183f3, E=1024, seed 0,
#: GateGenConfig defaults): the invalid fraction per width, every one of them crossing bars.
#: The knot loops must never cross more often.
BARS_BEFORE = {
    "bezier": (0.001, 0.021, 0.102, 0.251),
    "checkpoint": (0.000, 0.002, 0.009, 0.040),
    "hull": (0.006, 0.064, 0.177, 0.358),
    "polar": (0.001, 0.011, 0.072, 0.189),
    "voronoi": (0.000, 0.000, 0.004, 0.032),
}
BAR_WIDTHS = (0.1, 0.2, 0.3, 0.4)


def _loops(gen) -> np.ndarray:
    """The sampler's loops ``[E, num_points, 2]`` the gates were placed on (the workspace)."""
    lay = gen.layout
    return gen._ws.line.numpy().reshape(lay.num_envs, lay.num_points, 2).astype(np.float64)


def test_knot_loop_oracle(device):
    """emit_knots against NumPy: ``rounds`` edge-midpoint rounds, bounding box centred with
    its longest side ``extent``, the last vertex repeated; more vertices than rows: the
    polygon arc-resampled to the rows."""
    from track_gen.stages.common import emit_knots

    @wp.kernel
    def _emit(
        knots: wp.array(dtype=wp.vec2f),
        n: int,
        rounds: int,
        seg_len: wp.array(dtype=wp.float32),
        num_points: int,
        extent: float,
        out: wp.array(dtype=wp.vec2f),
    ):
        emit_knots(knots, 0, n, rounds, seg_len, 0, out, 0, num_points, extent)

    rng = np.random.default_rng(3)
    poly = O.ellipse(1.0, 0.6, 9) + rng.uniform(-0.2, 0.2, (9, 2))
    for rounds in (0, 1, 2):
        want = poly.copy()
        for _ in range(rounds):
            want = 0.5 * (want + np.roll(want, -1, axis=0))
        lo, hi = want.min(0), want.max(0)
        want = (want - 0.5 * (lo + hi)) * (1.44 / (hi - lo).max())
        for num_points in (9, 16):
            knots = wp.array(poly.astype(np.float32), dtype=wp.vec2f, device=device)
            seg = wp.zeros(9, dtype=wp.float32, device=device)
            out = wp.zeros(num_points, dtype=wp.vec2f, device=device)
            wp.launch(_emit, 1, [knots, 9, rounds, seg, num_points, 1.44, out], device=device)
            got = out.numpy().astype(np.float64)
            np.testing.assert_allclose(got[:9], want, atol=2e-6)
            np.testing.assert_array_equal(got[9:], np.tile(got[8], (num_points - 9, 1)))
        # 9 vertices into 6 rows: the resampled polygon, on the polygon, 1.44 across
        knots = wp.array(poly.astype(np.float32), dtype=wp.vec2f, device=device)
        out = wp.zeros(6, dtype=wp.vec2f, device=device)
        wp.launch(_emit, 1, [knots, 9, rounds, seg, 6, 1.44, out], device=device)
        got = out.numpy().astype(np.float64)
        np.testing.assert_allclose(np.ptp(got, axis=0).max(), 1.44, rtol=1e-5)
        assert len(np.unique(got.round(5), axis=0)) == 6


@pytest.mark.parametrize("generator", KNOT_SAMPLERS)
def test_gates_lie_on_the_knot_loop(generator, device):
    """Without separation every gate lies on the sampler's loop (a polygon of at most
    num_points vertices, the last one repeated), whose bounding box is 1.44 * scale across and
    centred; the knot fields alone shape it (the spline and walk fields are not read)."""
    kw = dict(generator=generator, num_envs=16, gate_solve_iters=0, scale=2.0)
    gen = make(device, **kw)
    v = O.per_env(gen.generate())
    loops = _loops(gen)
    for e in range(16):
        loop = loops[e]
        lo, hi = loop.min(0), loop.max(0)
        np.testing.assert_allclose((hi - lo).max(), 1.44 * 2.0, rtol=1e-5)
        np.testing.assert_allclose(0.5 * (lo + hi), 0.0, atol=1e-5)
        c = v["count"][e]
        s, total = GW.arc_positions(loop, v["position"][e, :c, :2])
        on = np.stack([O.point_at_arc(loop, x) for x in s])
        np.testing.assert_allclose(on, v["position"][e, :c, :2], atol=1e-5)
    other = {
        "bezier": dict(rad=1.0, edgy=3.0, num_points_per_segment=7),
        "hull": dict(num_points_per_segment=7),
        "polar": dict(num_points_per_segment=7),
        "checkpoint": dict(checkpoint_turn_rate=0.1, checkpoint_best_of_k=1),
    }[generator]
    same = make(device, **kw, **other)
    assert_bitwise_equal(O.snapshot(same.generate()), O.snapshot(gen.result))


def test_long_knot_loops_are_resampled(device):
    """A knot polygon longer than num_points (hull: 2 * max_corners vertices) is resampled to
    num_points: still gates spread along a loop 1.44 across."""
    gen = make(device, generator="hull", num_envs=16, num_points=16, min_corners=12)
    seq = gen.generate()
    loops = _loops(gen)
    assert len(np.unique(loops[0].round(6), axis=0)) == 16
    np.testing.assert_allclose(np.ptp(loops, axis=1).max(-1), 1.44, rtol=1e-5)
    spread, in_order = GW.placement(gen, seq)
    assert spread >= 0.95 and in_order == 1.0


def test_mixed_knot_loops_match_their_samplers(device):
    """A mix of knot samplers in a gate pipeline: each env's course is the one its chosen
    sampler alone draws for that env (the children write knot loops too)."""
    from track_gen.engine.spec import PipelineSpec, StageSpec

    n = 32
    cfg = GateGenConfig(num_envs=n, device=device, gate_width=0.1)
    choices = tuple((g, 1.0) for g in KNOT_SAMPLERS)
    stages = (
        StageSpec("mix", options={"generators": choices}),
        StageSpec("gate_anchors"),
        StageSpec("gate_frames"),
        StageSpec("gate_validate"),
    )
    mixed = GateGenerator(PipelineSpec(config=cfg, stages=stages, family="gates"), seeds=4)
    v = O.per_env(mixed.generate())
    choice = mixed.diagnostics["mix.choice"].numpy()
    assert len(set(choice.tolist())) == len(KNOT_SAMPLERS)
    for k, g in enumerate(KNOT_SAMPLERS):
        alone = O.per_env(make(device, seeds=4, num_envs=n, generator=g, gate_width=0.1).generate())
        for e in np.flatnonzero(choice == k):
            np.testing.assert_array_equal(v["position"][e], alone["position"][e])
            np.testing.assert_array_equal(v["left"][e], alone["left"][e])


@pytest.mark.parametrize("generator", [*KNOT_SAMPLERS, "voronoi"])
def test_gates_spread_in_loop_order(generator, device):
    """Spacing: consecutive gates' arc gaps within [0.5, 1.5] x L / K for >= 95% of gates,
    the gates once around the loop in order (ccw), no GATE_SPACING (none before either)."""
    gen = make(device, generator=generator, num_envs=256, gate_width=0.1)
    seq = gen.generate()
    spread, in_order = GW.placement(gen, seq)
    assert spread >= 0.95, spread
    assert in_order == 1.0, in_order
    assert not np.any(seq.fail_mask.numpy() & FailBit.GATE_SPACING)


def test_placement_measure_oracle():
    """The benchmark's measure on analytic gates: arc positions on a circle, gaps, order."""
    loop = O.circle(1.0, 400)
    ang = np.array([0.1, 1.0, 2.5, 4.0, 5.5])
    pts = np.stack([np.cos(ang), np.sin(ang)], -1)
    gaps, total = GW.loop_gaps(loop, pts)
    np.testing.assert_allclose(total, 2 * np.pi, rtol=1e-4)
    np.testing.assert_allclose(gaps, np.diff(np.append(ang, ang[0] + 2 * np.pi)), rtol=1e-3)
    gaps, _ = GW.loop_gaps(loop, pts[[0, 2, 1, 3, 4]])  # out of order: more than one lap
    assert gaps.sum() > 1.5 * total


@pytest.mark.parametrize("generator", [*KNOT_SAMPLERS, "voronoi"])
def test_crossing_bars_not_above_the_table(generator, device):
    """Crossing bars: the crossing-bar fraction per width is no higher than before (BARS_BEFORE)."""
    gen = make(device, generator=generator, num_envs=1024, gate_width=BAR_WIDTHS[0])
    for w, before in zip(BAR_WIDTHS, BARS_BEFORE[generator], strict=True):
        gen.params[WIDTH] = w
        bars = (gen.generate().fail_mask.numpy() & FailBit.CROSSING_BARS) != 0
        assert round(float(bars.mean()), 3) <= before, (w, bars.mean(), before)


@pytest.mark.parametrize("generator", KNOT_SAMPLERS)
def test_altitude_profiles(generator, device):
    """Altitudes: the altitude profiles are today's on the knot loops: flat at z_base, uniform
    in [z_min, z_max], a random walk from clamp(z_base) with steps within z_max_step * plan
    distance, the noise profile within its range."""
    kw = dict(generator=generator, num_envs=32, z_base=0.2, z_min=-0.3, z_max=0.6)
    flat = O.per_env(make(device, **kw).generate())
    uni = O.per_env(make(device, z_profile="uniform", **kw).generate())
    walk = O.per_env(make(device, z_profile="random_walk", z_max_step=0.4, **kw).generate())
    noise = O.per_env(make(device, z_profile="noise", **kw).generate())
    # the profile changes z only: the plan-view course is the same
    for v in (uni, walk, noise):
        np.testing.assert_array_equal(v["position"][..., :2], flat["position"][..., :2])
    lo, hi = np.float32(-0.3), np.float32(0.6)
    all_uni = []
    for e in range(32):
        c = flat["count"][e]
        np.testing.assert_array_equal(flat["position"][e, :c, 2], np.float32(0.2))
        z = uni["position"][e, :c, 2]
        assert np.all((z >= lo) & (z <= hi))
        all_uni.append(z)
        pw = walk["position"][e, :c]
        assert pw[0, 2] == np.float32(0.2)
        assert np.all((pw[:, 2] >= lo) & (pw[:, 2] <= hi))
        run = np.linalg.norm(np.diff(pw[:, :2], axis=0), axis=1)
        assert np.all(np.abs(np.diff(pw[:, 2])) <= 0.4 * run * (1 + 1e-5) + 1e-7)
        zn = noise["position"][e, :c, 2]
        assert np.all((zn >= lo) & (zn <= hi))
    all_uni = np.concatenate(all_uni)
    assert abs(all_uni.mean() - 0.15) < 0.05 and np.ptp(all_uni) > 0.7


def test_padding_is_rewritten_as_counts_shrink(device):
    """The stages write only the real rows of their staging buffers; the committed result is
    NaN past count after every regeneration, masked or not, as counts go up and down."""
    gen = make(device, seeds=3, num_gates_min=4, num_gates_max=12, max_gates=16, **RICH)
    mask = gen.inputs["regen_mask"]
    for step in range(6):
        if step % 2:
            mask.assign((np.arange(E) % 2 == step % 4 // 2).astype(np.int32))
            gen.generate(advance=True, mask=mask)
        else:
            gen.generate(advance=True)
        v = O.per_env(gen.result)
        for e in range(E):
            c = v["count"][e]
            for k in (*O.VEC_FIELDS, "orientation", "half_size"):
                assert np.isfinite(v[k][e, :c]).all(), (step, e, k)
                assert np.isnan(v[k][e, c:]).all(), (step, e, k)
