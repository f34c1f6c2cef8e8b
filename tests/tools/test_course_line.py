"""CourseLineUtility / CenterlineFromGates: the closed Hermite line through the gates, against
a float64 NumPy oracle, on generated gate courses and hand-written ones."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.results import GateSequence
from track_gen.tools.course_line import (
    SAMPLES_PER_GATE,
    VERTICAL_EPS,
    CenterlineFromGates,
    CourseLineResult,
    CourseLineUtility,
)

E = 8
SEED = 3
FIELDS = ("center", "tangent", "normal", "arclen", "length", "count")


def make_gates(device, num_envs: int = E, seed: int = SEED) -> GateGenerator:
    gen = GateGenerator(presets.gates(num_envs=num_envs, device=device, gate_width=0.1), seeds=seed)
    gen.generate()
    return gen


@functools.cache
def shared_gates(device) -> GateSequence:
    """A read-only generated batch per device (tests must not regenerate it)."""
    seq = make_gates(device).result
    assert seq.valid.numpy().all()
    return seq


def host(line: CourseLineResult) -> dict:
    return {f: getattr(line, f).numpy().copy() for f in FIELDS}


def assert_rows_equal(a: dict, b: dict, envs, L: int) -> None:
    """Bitwise equality of the envs' rows (NaN payloads included)."""
    for f in FIELDS:
        x, y = a[f], b[f]
        if f in ("length", "count"):
            xs, ys = x[list(envs)], y[list(envs)]
        else:
            per = x.reshape(len(a["count"]), L, -1)
            xs = per[list(envs)]
            ys = y.reshape(len(b["count"]), L, -1)[list(envs)]
        assert xs.tobytes() == ys.tobytes(), f


# ------------------------------------------------------------------------------- oracle
def hermite_oracle(P: np.ndarray, T: np.ndarray, K: int) -> dict:
    """float64 line through gates ``P`` [n, 3] with unit tangents ``T`` [n, 3].

    Span g: c(u) = h00 P_g + h10 d T_g + h01 P_{g+1} + h11 d T_{g+1}, d = |P_{g+1} - P_g|,
    at u = k / K; then the unit central-difference tangent (0 where the difference is 0), the
    plan-view left normal ((0, 1, 0) for a near-vertical tangent), the cumulative chords and
    the closed length.
    """
    P = np.asarray(P, np.float64)
    T = np.asarray(T, np.float64)
    n = len(P)
    u = np.arange(K, dtype=np.float64) / K
    h00 = 2 * u**3 - 3 * u**2 + 1
    h10 = u**3 - 2 * u**2 + u
    h01 = -2 * u**3 + 3 * u**2
    h11 = u**3 - u**2
    spans = []
    for g in range(n):
        p0, p1 = P[g], P[(g + 1) % n]
        d = np.linalg.norm(p1 - p0)
        m0, m1 = d * T[g], d * T[(g + 1) % n]
        spans.append(h00[:, None] * p0 + h10[:, None] * m0 + h01[:, None] * p1 + h11[:, None] * m1)
    c = np.concatenate(spans)
    diff = np.roll(c, -1, 0) - np.roll(c, 1, 0)
    dl = np.linalg.norm(diff, axis=1)
    t = np.where(dl[:, None] > 0, diff / np.where(dl > 0, dl, 1)[:, None], 0.0)
    h = np.hypot(t[:, 0], t[:, 1])
    big = h > VERTICAL_EPS
    hs = np.where(big, h, 1.0)
    nrm = np.where(
        big[:, None],
        np.stack([-t[:, 1] / hs, t[:, 0] / hs, np.zeros(len(t))], -1),
        np.array([0.0, 1.0, 0.0]),
    )
    chords = np.linalg.norm(np.roll(c, -1, 0) - c, axis=1)
    arclen = np.concatenate([[0.0], np.cumsum(chords)[:-1]])
    return {"center": c, "tangent": t, "normal": nrm, "arclen": arclen, "length": chords.sum()}


def env_rows(line: CourseLineResult, e: int) -> dict:
    L, n = line.N_max, int(line.count.numpy()[e])
    E_ = line.num_envs
    return {
        "center": line.center.numpy().reshape(E_, L, 3)[e, :n].astype(np.float64),
        "tangent": line.tangent.numpy().reshape(E_, L, 3)[e, :n].astype(np.float64),
        "normal": line.normal.numpy().reshape(E_, L, 3)[e, :n].astype(np.float64),
        "arclen": line.arclen.numpy().reshape(E_, L)[e, :n].astype(np.float64),
        "length": float(line.length.numpy()[e]),
    }


def gates_of(seq: GateSequence, e: int):
    G, n = seq.max_gates, int(seq.count.numpy()[e])
    P = seq.position.numpy().reshape(seq.num_envs, G, 3)[e, :n]
    T = seq.tangent.numpy().reshape(seq.num_envs, G, 3)[e, :n]
    return P, T


def turning_deg(c: np.ndarray) -> np.ndarray:
    """Turning angle at each bead i of a closed polyline: between chord i-1 -> i and i -> i+1."""
    ch = np.roll(c, -1, 0) - c
    a = ch / np.linalg.norm(ch, axis=1)[:, None]
    return np.degrees(np.arccos(np.clip((a * np.roll(a, 1, 0)).sum(1), -1.0, 1.0)))


def angle_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.degrees(np.arccos(np.clip((a * b).sum(-1), -1.0, 1.0)))


# ------------------------------------------------------------------- generated courses
@pytest.mark.parametrize("K", [8, 3])
def test_passes_through_every_gate_centre_in_order(device, K):
    seq = shared_gates(device)
    b = CourseLineUtility(seq, K)
    line = b.line
    G = seq.max_gates
    assert b.samples_per_gate == K
    assert line.num_envs == E and line.N_max == G * K
    assert line.valid is seq.valid  # aliased, not copied
    gates = seq.count.numpy()
    assert line.count.numpy().tolist() == (gates * K).tolist()
    center = line.center.numpy().reshape(E, G * K, 3)
    pos = seq.position.numpy().reshape(E, G, 3)
    for e in range(E):
        n = gates[e]
        # bead g*K is gate g's position, bitwise, for g = 0 .. n-1 in order
        assert center[e, : n * K : K].tobytes() == pos[e, :n].tobytes()
    # deterministic: a second builder gives the same bytes
    again = host(CourseLineUtility(seq, K).line)
    assert all(again[f].tobytes() == host(line)[f].tobytes() for f in FIELDS)


@pytest.mark.parametrize("K", [8, 3])
def test_matches_float64_oracle(device, K):
    seq = shared_gates(device)
    line = CourseLineUtility(seq, K).line
    for e in range(E):
        want = hermite_oracle(*gates_of(seq, e), K)
        got = env_rows(line, e)
        np.testing.assert_allclose(got["center"], want["center"], rtol=0, atol=2e-6)
        np.testing.assert_allclose(got["tangent"], want["tangent"], rtol=0, atol=2e-4)
        np.testing.assert_allclose(got["normal"], want["normal"], rtol=0, atol=2e-4)
        np.testing.assert_allclose(got["arclen"], want["arclen"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["length"], want["length"], rtol=1e-5)
        # unit tangents, level unit normals perpendicular to them
        np.testing.assert_allclose(np.linalg.norm(got["tangent"], axis=1), 1.0, atol=1e-6)
        np.testing.assert_allclose(np.linalg.norm(got["normal"], axis=1), 1.0, atol=1e-6)
        assert (got["normal"][:, 2] == 0).all()
        np.testing.assert_allclose((got["normal"] * got["tangent"]).sum(1), 0.0, atol=1e-6)
        # left of the direction of travel: cross(t, n) points up
        assert (np.cross(got["tangent"], got["normal"])[:, 2] > 0).all()
        # closed: the length adds the closing chord (count-1 -> 0) to the last arclen
        c = got["center"]
        assert got["arclen"][0] == 0.0
        closing = np.linalg.norm(c[0] - c[-1])
        assert closing > 0
        np.testing.assert_allclose(got["length"], got["arclen"][-1] + closing, rtol=1e-5)


def test_direction_at_each_gate_is_its_tangent(device):
    """The spline leaves gate g along T_g (both spans share the chord-scaled T_g, C1). The
    beads' central difference approaches it as O(1/K): within 8 degrees at K = 8 (measured
    up to 5.8 on 256 default courses), 1.5 at K = 64."""
    seq = shared_gates(device)
    for K, bound in ((8, 8.0), (64, 1.5)):
        line = CourseLineUtility(seq, K).line
        for e in range(E):
            _, T = gates_of(seq, e)
            t = env_rows(line, e)["tangent"][::K]
            assert angle_deg(t, T).max() < bound, (K, e)
    # the oracle's derivative at both ends of a span is d * T (the Hermite property itself)
    P, T = gates_of(seq, 0)
    eps = 1e-6
    for g in range(len(P)):
        n = len(P)
        d = np.linalg.norm(P[(g + 1) % n] - P[g])
        u = np.array([0.0, eps])
        h = np.stack([2 * u**3 - 3 * u**2 + 1, u**3 - 2 * u**2 + u, -2 * u**3 + 3 * u**2])
        c = h[0][:, None] * P[g] + h[1][:, None] * d * T[g] + h[2][:, None] * P[(g + 1) % n]
        c += (u**3 - u**2)[:, None] * d * T[(g + 1) % n]
        np.testing.assert_allclose((c[1] - c[0]) / eps, d * T[g], rtol=1e-4, atol=1e-5)


def test_smooth(device):
    """Turning angle between consecutive chords, K = 8, on the default courses.

    The line must pass every gate along its tangent, so at a hairpin gate (the next gate lies
    more than ~60 degrees off the gate's tangent) the spline turns through a tight loop of
    about one span: K = 8 beads resolve it coarsely. Measured on these 8 courses: at most
    113.5 degrees (a hairpin of env 0), 95th percentile per env at most 33.2, at gate beads
    at most 38. Bounds: 120 / 36 / 42 degrees. On 512 default courses a few hairpins turn
    more (up to ~180: the Hermite nearly cusps where a gate's tangent points more than 90
    degrees away from the next chord), so the bound holds for these seeds, not every course.

    C1: the kink a polyline through the gates would keep at every gate vanishes here as
    O(1/K): from K = 8 to K = 64 the largest turning at gate beads drops by >= 5x (measured
    ~8x), and the largest turning anywhere by >= 3.5x (measured >= 5.2x).
    """
    seq = shared_gates(device)
    l8 = CourseLineUtility(seq, 8).line
    l64 = CourseLineUtility(seq, 64).line
    for e in range(E):
        t8 = turning_deg(env_rows(l8, e)["center"])
        t64 = turning_deg(env_rows(l64, e)["center"])
        assert t8.max() < 120.0, e
        assert np.percentile(t8, 95) < 36.0, e
        assert t8[::8].max() < 42.0, e
        assert t64[::64].max() * 5 <= t8[::8].max(), e
        assert t64.max() * 3.5 <= t8.max(), e


def test_nan_padding_past_count(device):
    seq = shared_gates(device)
    K = 8
    line = CourseLineUtility(seq, K).line
    L = line.N_max
    cnt = line.count.numpy()
    assert (cnt < L).all()  # these courses leave padding
    c = line.center.numpy().reshape(E, L, 3)
    t = line.tangent.numpy().reshape(E, L, 3)
    nr = line.normal.numpy().reshape(E, L, 3)
    a = line.arclen.numpy().reshape(E, L)
    for e in range(E):
        n = cnt[e]
        for arr in (c, t, nr, a):
            assert np.isfinite(arr[e, :n]).all()
            assert np.isnan(arr[e, n:]).all()


def test_invalid_generated_env_has_no_line(device):
    gen = make_gates(device, num_envs=3, seed=5)
    b = CourseLineUtility(gen.result, 4)
    valid = gen.result.valid.numpy()
    valid[1] = 0
    gen.result.valid.assign(valid)
    line = b.build()
    assert line.valid.numpy().tolist() == [1, 0, 1]  # the alias sees the write
    cnt = line.count.numpy()
    assert cnt[1] == 0 and line.length.numpy()[1] == 0.0
    assert cnt[0] > 0 and cnt[2] > 0
    L = line.N_max
    for f in ("center", "tangent", "normal", "arclen"):
        rows = getattr(line, f).numpy().reshape(3, L, -1)
        assert np.isnan(rows[1]).all(), f


# ------------------------------------------------------------------- hand-written courses
def hand_written(device) -> GateSequence:
    """Seven envs of G = 6 gate slots:

    0: a regular hexagon on the unit circle (exact circle tangents);
    1: two gates (too few);
    2: a NaN tangent at gate 1;
    3: valid = 0;
    4: count 99 (clamped to G = 6), the hexagon of radius 2 raised to z = 0.5;
    5: four gates stacked on the z axis, tangents up (every bead tangent vertical or zero);
    6: the unit hexagon scaled by 1e38: finite gates, but the chord lengths overflow float32.
    """
    G = 6
    seq = GateSequence.allocate(7, G, device)
    nan = np.nan
    pos = np.full((7, G, 3), nan, np.float32)
    tan = np.full((7, G, 3), nan, np.float32)
    a = 2 * np.pi * np.arange(G) / G
    ring = np.stack([np.cos(a), np.sin(a), np.zeros(G)], -1)
    ring_t = np.stack([-np.sin(a), np.cos(a), np.zeros(G)], -1)
    pos[0], tan[0] = ring, ring_t
    pos[1, :2], tan[1, :2] = [[0, 0, 0], [1, 0, 0]], [[1, 0, 0], [-1, 0, 0]]
    pos[2, :3], tan[2, :3] = ring[:3], ring_t[:3]
    tan[2, 1, 0] = nan
    pos[3], tan[3] = ring, ring_t
    pos[4], tan[4] = 2 * ring + [0, 0, 0.5], ring_t
    pos[5, :4] = [[0, 0, z] for z in range(4)]
    tan[5, :4] = [0, 0, 1]
    pos[6], tan[6] = 1e38 * ring, ring_t
    seq.position.assign(pos.reshape(-1, 3))
    seq.tangent.assign(tan.reshape(-1, 3))
    seq.count.assign(np.array([6, 2, 3, 6, 99, 4, 6], np.int32))
    seq.valid.assign(np.array([1, 1, 1, 0, 1, 1, 1], np.int32))
    return seq


def test_hand_written_gates(device):
    seq = hand_written(device)
    K = 8
    line = CourseLineUtility(seq, K).line
    L = line.N_max
    assert L == 6 * K
    cnt, length = line.count.numpy(), line.length.numpy()
    assert cnt.tolist() == [48, 0, 0, 0, 48, 32, 0]
    # no line: count 0, length 0, NaN rows
    for e in (1, 2, 3, 6):
        assert length[e] == 0.0
        for f in ("center", "tangent", "normal", "arclen"):
            assert np.isnan(getattr(line, f).numpy().reshape(7, L, -1)[e]).all(), (e, f)
    pos = seq.position.numpy().reshape(7, 6, 3)
    tan = seq.tangent.numpy().reshape(7, 6, 3)
    for e in (0, 4):
        got = env_rows(line, e)
        want = hermite_oracle(pos[e], tan[e], K)
        assert got["center"][::K].astype(np.float32).tobytes() == pos[e].tobytes()
        np.testing.assert_allclose(got["center"], want["center"], atol=2e-6)
        np.testing.assert_allclose(got["tangent"], want["tangent"], atol=2e-4)
        np.testing.assert_allclose(got["normal"], want["normal"], atol=2e-4)
        np.testing.assert_allclose(got["arclen"], want["arclen"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["length"], want["length"], rtol=1e-5)
    # the hexagon's line hugs the unit circle (chord-scaled tangents: within 1%) and is
    # counter-clockwise with the normal pointing inward (left)
    c0 = env_rows(line, 0)
    r = np.linalg.norm(c0["center"][:, :2], axis=1)
    assert np.abs(r - 1).max() < 0.01
    assert ((c0["normal"][:, :2] * c0["center"][:, :2]).sum(1) < 0).all()
    assert 2 * np.pi * 0.99 < c0["length"] < 2 * np.pi
    np.testing.assert_allclose(env_rows(line, 4)["center"][:, 2], 0.5, atol=1e-6)
    # vertical course: tangents (0, 0, +-1) or (0, 0, 0) where the beads turn back, the
    # normal falls back to (0, 1, 0)
    v = env_rows(line, 5)
    t = v["tangent"]
    assert (t[:, :2] == 0).all()
    assert np.isin(t[:, 2], [-1.0, 0.0, 1.0]).all()
    assert (v["normal"] == [0.0, 1.0, 0.0]).all()
    assert np.isfinite(v["arclen"]).all() and v["length"] > 6.0  # up 3, back down past 0


# ------------------------------------------------------------------------------- masks
def test_masked_build(device):
    gen = make_gates(device, num_envs=4, seed=11)
    K = 4
    b = CourseLineUtility(gen.result, K)
    L = b.line.N_max
    before = host(b.line)
    mask = wp.array(np.array([0, 1, 0, 1], np.int32), dtype=wp.int32, device=device)
    gen.generate(advance=True, mask=mask)
    b.build(mask)
    after = host(b.line)
    assert_rows_equal(after, before, [0, 2], L)
    fresh = host(CourseLineUtility(gen.result, K).line)
    assert_rows_equal(after, fresh, [0, 1, 2, 3], L)
    for e in (1, 3):  # a new course each
        assert after["length"][e] != before["length"][e]
    # an all-zero mask is an exact no-op, even over changed gates
    gen.generate(advance=True)
    b.build(wp.zeros(4, dtype=wp.int32, device=device))
    assert_rows_equal(host(b.line), after, [0, 1, 2, 3], L)
    # a bad mask is refused before launching
    with pytest.raises((TypeError, ValueError), match="mask"):
        b.build(wp.zeros(3, dtype=wp.int32, device=device))


def test_component_in_course(device):
    gen = make_gates(device, num_envs=4, seed=21)
    course = Course(gen, [CenterlineFromGates(4)])
    comp = course.components["centerline"]
    assert isinstance(comp, CenterlineFromGates) and comp.name == "centerline"
    assert isinstance(course.course_line, CourseLineUtility)
    assert comp.utility is course.course_line
    assert comp.result is course.course_line.line
    line = comp.result
    assert line.N_max == gen.layout.N_max * 4
    L = line.N_max
    fresh = host(CourseLineUtility(gen.result, 4).line)
    assert_rows_equal(host(line), fresh, range(4), L)
    before = host(line)
    mask = wp.array(np.array([1, 0, 0, 1], np.int32), dtype=wp.int32, device=device)
    course.regenerate(mask=mask, advance=True)
    after = host(line)
    assert_rows_equal(after, before, [1, 2], L)
    assert_rows_equal(after, host(CourseLineUtility(gen.result, 4).line), range(4), L)
    assert after["length"][0] != before["length"][0]
    named = CenterlineFromGates(name="line2")
    assert named.name == "line2" and named.samples_per_gate == 8


def test_track_generator_refused(device):
    gen = TrackGenerator(TrackGenConfig(num_envs=2, device=device))
    with pytest.raises(TypeError, match="CenterlineFromGates needs a gate generator.*Localizer"):
        Course(gen, [CenterlineFromGates()])
    gen.generate()
    with pytest.raises(TypeError, match="GateSequence"):
        CourseLineUtility(gen.result)
    with pytest.raises(TypeError, match="GateSequence"):
        CourseLineUtility(None)


@pytest.mark.parametrize(
    "value, error",
    [
        (1, ValueError),
        (0, ValueError),
        (257, ValueError),
        (2.5, TypeError),
        (True, TypeError),
        ("8", TypeError),
    ],
)
def test_samples_per_gate_checked(device, value, error):
    with pytest.raises(error, match="samples_per_gate"):
        CenterlineFromGates(value)
    with pytest.raises(error, match="samples_per_gate"):
        CourseLineUtility(shared_gates(device), value)


def test_tunable_and_clone(device):
    assert SAMPLES_PER_GATE.name == "samples_per_gate"
    assert SAMPLES_PER_GATE.default == 8
    assert (SAMPLES_PER_GATE.lo, SAMPLES_PER_GATE.hi) == (2, 256)
    assert SAMPLES_PER_GATE.unit == "beads per gate"
    seq = shared_gates(device)
    assert CourseLineUtility(seq, 2).line.N_max == 2 * seq.max_gates
    line = CourseLineUtility(seq).line
    snap = line.clone()
    assert isinstance(snap, CourseLineResult)
    for f in (*FIELDS, "valid"):
        assert getattr(snap, f) is not getattr(line, f)
        assert getattr(snap, f).numpy().tobytes() == getattr(line, f).numpy().tobytes()
    assert snap.num_envs == E and snap.N_max == line.N_max
    fresh = CourseLineResult.allocate(2, 5, device)
    assert fresh.count.numpy().tolist() == [0, 0] and fresh.valid.numpy().tolist() == [0, 0]
    assert np.isnan(fresh.center.numpy()).all() and fresh.N_max == 5
