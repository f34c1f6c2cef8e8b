"""tools.RacingLine / RacingLineUtility against independent float64 NumPy / SciPy oracles.

The QP oracle is SciPy's bounded least squares (``lsq_linear``, BVLS) of the same
discretisation: residuals ``s_i (p_{i-1} - 2 p_i + p_{i+1})``, ``p_i = c_i + a_i n_i``,
``s_i = (h / ds_i)^(3/2)`` with ``ds_i`` the mean of the two chords at bead ``i`` of the line
the QP is linearised around (the centre line, or the first linearisation's line for the
second) and ``h`` the centre line's mean chord; the speed oracle runs the forward/backward
passes twice around the loop from bead 0 (no choice of start bead) and keeps the second lap.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp

from track_gen import TrackGenerator, tools
from track_gen.course import Course
from track_gen.io import read_tum, tracks_spec
from track_gen.pipeline import presets
from track_gen.results import Track

from ..io import CIRCUITS, write_csv

scipy_optimize = pytest.importorskip("scipy.optimize")

ROWS = ("offset", "position", "curvature", "speed")
ENVS = ("lap_time", "length")
LIMITS = {"a_lat": 8.0, "a_lon": 4.0, "v_max": 6.0}


# ------------------------------------------------------------------------------- tracks
def _loop(xy, wl, wr):
    xy = np.asarray(xy, np.float64)
    n = len(xy)
    wl = np.broadcast_to(np.asarray(wl, np.float64), (n,))
    wr = np.broadcast_to(np.asarray(wr, np.float64), (n,))
    return xy, wl, wr


def circle(n=64, r=1.0, w=0.2):
    t = 2 * np.pi * np.arange(n) / n
    return _loop(np.c_[r * np.cos(t), r * np.sin(t)], w, w)


def ellipse(n=96, a=1.6, b=0.7):
    t = 2 * np.pi * np.arange(n) / n
    wl = 0.15 + 0.05 * np.cos(3 * t)  # varying widths, left and right unequal
    return _loop(np.c_[a * np.cos(t), b * np.sin(t)], wl, 0.22)


def stadium(r=0.5, straight=1.5, spacing=0.05, w=0.18):
    """Two straights joined by half circles, counter-clockwise, arc-uniform."""
    per = 2 * straight + 2 * np.pi * r
    n = int(round(per / spacing))
    s = np.arange(n) * per / n
    pts = []
    for u in s:
        if u < straight:
            pts.append((u - straight / 2, -r))
        elif u < straight + np.pi * r:
            a = -np.pi / 2 + (u - straight) / r
            pts.append((straight / 2 + r * np.cos(a), r * np.sin(a)))
        elif u < 2 * straight + np.pi * r:
            pts.append((straight / 2 - (u - straight - np.pi * r), r))
        else:
            a = np.pi / 2 + (u - 2 * straight - np.pi * r) / r
            pts.append((-straight / 2 + r * np.cos(a), r * np.sin(a)))
    return _loop(pts, w, w)


def make_track(loops, device, n_max=None, valid=None) -> Track:
    """A Track batch from ``(xy, width_left, width_right)`` loops (normal: left of the
    central-difference tangent; outer/inner: the left/right borders)."""
    E = len(loops)
    n_max = n_max or max(len(xy) for xy, _, _ in loops) + 5
    nan = np.float32("nan")
    arr = {
        k: np.full((E, n_max, 3), nan, np.float32)
        for k in ("center", "normal", "inner", "outer", "tangent")
    }
    count = np.zeros(E, np.int32)
    for e, (xy, wl, wr) in enumerate(loops):
        n = len(xy)
        d = np.roll(xy, -1, 0) - np.roll(xy, 1, 0)
        t = d / np.linalg.norm(d, axis=1)[:, None]
        nrm = np.c_[-t[:, 1], t[:, 0]]
        z = np.zeros((n, 1))
        arr["center"][e, :n] = np.c_[xy, z]
        arr["tangent"][e, :n] = np.c_[t, z]
        arr["normal"][e, :n] = np.c_[nrm, z]
        arr["outer"][e, :n] = np.c_[xy + wl[:, None] * nrm, z]
        arr["inner"][e, :n] = np.c_[xy - wr[:, None] * nrm, z]
        count[e] = n
    track = Track.allocate(E, n_max, device)
    for k, v in arr.items():
        getattr(track, k).assign(v.reshape(-1, 3))
    track.count.assign(count)
    track.valid.assign(np.ones(E, np.int32) if valid is None else np.asarray(valid, np.int32))
    return track


@functools.cache
def generated(device, num_envs=6, seed=5):
    gen = TrackGenerator(presets.track(num_envs=num_envs, device=device), seeds=seed)
    gen.generate()
    assert gen.result.valid.numpy().all()
    return gen.result


# ------------------------------------------------------------------------------- oracles
def env_geometry(track, e, vehicle_width):
    """``(c [n,2], n [n,2], z [n], lo [n], hi [n])`` in float64 from the track's arrays."""
    n = int(track.count.numpy()[e])
    rows = slice(0, n)
    c = track.host("center")[e, rows].astype(np.float64)
    nrm = track.host("normal")[e, rows, :2].astype(np.float64)
    dl = np.einsum("ij,ij->i", track.host("outer")[e, rows, :2] - c[:, :2], nrm)
    di = np.einsum("ij,ij->i", track.host("inner")[e, rows, :2] - c[:, :2], nrm)
    w_left, w_right = np.maximum(dl, di), np.maximum(-dl, -di)
    lo, hi = -(w_right - vehicle_width / 2), w_left - vehicle_width / 2
    return c[:, :2], nrm, c[:, 2], lo, hi


def qp_system(c, nrm, around=None):
    """``(A, b)`` of the least-squares form ``|A a + b|^2`` of the objective (dense), its
    weights taken from the line ``c + around * nrm`` (the centre line when ``around`` is
    None; ``h`` is always the centre line's mean chord)."""
    n = len(c)
    h = np.linalg.norm(np.roll(c, -1, 0) - c, axis=1).mean()
    p = c if around is None else c + np.asarray(around, np.float64)[:, None] * nrm
    ch = np.linalg.norm(np.roll(p, -1, 0) - p, axis=1)
    ds = 0.5 * (ch + np.roll(ch, 1))
    s = (h / ds) ** 1.5
    A = np.zeros((2 * n, n))
    for i in range(n):
        for k, coef in ((-1, 1.0), (0, -2.0), (1, 1.0)):
            j = (i + k) % n
            A[2 * i : 2 * i + 2, j] += s[i] * coef * nrm[j] / h
    b = (s[:, None] * (np.roll(c, 1, 0) - 2 * c + np.roll(c, -1, 0)) / h).ravel()
    return A, b


def objective(A, b, a):
    r = A @ a + b
    return float(r @ r)


def oracle_speed(curv, ds, a_lat, a_lon, v_max):
    """Forward / backward point-mass passes, two laps each from bead 0, second lap kept."""
    n = len(curv)
    lim = np.minimum(
        v_max**2, np.where(curv != 0, a_lat / np.maximum(np.abs(curv), 1e-300), np.inf)
    )

    def ax(v2, k):
        q = v2 * abs(k) / a_lat
        return a_lon * np.sqrt(max(1 - q * q, 0.0))

    fwd = np.empty(2 * n)
    fwd[0] = lim[0]
    for k in range(1, 2 * n):
        i, p = k % n, (k - 1) % n
        fwd[k] = min(lim[i], fwd[k - 1] + 2 * ax(fwd[k - 1], curv[p]) * ds[p])
    f = np.empty(n)
    f[(np.arange(n, 2 * n)) % n] = fwd[n:]
    bwd = np.empty(2 * n)
    bwd[0] = lim[0]
    for k in range(1, 2 * n):
        i, nx = (-k) % n, (-k + 1) % n
        bwd[k] = min(lim[i], bwd[k - 1] + 2 * ax(bwd[k - 1], curv[nx]) * ds[i])
    b = np.empty(n)
    b[(-np.arange(n, 2 * n)) % n] = bwd[n:]
    return np.sqrt(np.minimum(f, b))


def menger(p):
    pm, pp = np.roll(p, 1, 0), np.roll(p, -1, 0)
    ua, ub = p - pm, pp - p
    cr = ua[:, 0] * ub[:, 1] - ua[:, 1] * ub[:, 0]
    den = np.linalg.norm(ua, axis=1) * np.linalg.norm(ub, axis=1) * np.linalg.norm(pp - pm, axis=1)
    return 2 * cr / den


def check_env(track, line, e, vehicle_width, limits, qp_gap=0.02):
    """Every oracle check of env ``e``."""
    c, nrm, z, lo, hi = env_geometry(track, e, vehicle_width)
    n = len(c)
    a = line.host("offset")[e, :n].astype(np.float64)
    tol = 1e-6 * max(1.0, np.abs(c).max())
    assert np.all(a >= lo - tol) and np.all(a <= hi + tol)
    A, b = qp_system(c, nrm)
    f, f0 = objective(A, b, a), objective(A, b, np.zeros(n))
    if np.all(lo <= 0) and np.all(hi >= 0):
        assert f <= f0 * (1 + 1e-6)
    ref = scipy_optimize.lsq_linear(A, -b, bounds=(lo, hi), method="bvls", tol=1e-12)
    fs = objective(A, b, ref.x)
    assert f <= fs * (1 + qp_gap) + 1e-12, (f, fs)
    # the line, its curvature, the speed profile and the lap
    pos = line.host("position")[e, :n].astype(np.float64)
    np.testing.assert_allclose(
        pos[:, :2], c + a[:, None] * nrm, atol=1e-5 * max(1.0, np.abs(c).max())
    )
    np.testing.assert_array_equal(pos[:, 2], z.astype(np.float32))
    curv = line.host("curvature")[e, :n].astype(np.float64)
    scale = np.abs(curv).max()
    np.testing.assert_allclose(curv, menger(pos[:, :2]), rtol=2e-3, atol=2e-3 * scale)
    ds = np.linalg.norm(np.roll(pos, -1, 0) - pos, axis=1)
    speed = line.host("speed")[e, :n].astype(np.float64)
    np.testing.assert_allclose(speed, oracle_speed(curv, ds, **limits), rtol=2e-5)
    a_lat, a_lon, v_max = limits["a_lat"], limits["a_lon"], limits["v_max"]
    assert np.all(speed <= v_max * (1 + 1e-6))
    assert np.all(speed**2 * np.abs(curv) <= a_lat * (1 + 1e-4))
    v2, v2n = speed**2, np.roll(speed, -1) ** 2
    ell = lambda v, k: a_lon * np.sqrt(np.maximum(1 - (v * np.abs(k) / a_lat) ** 2, 0))  # noqa: E731
    accel = (v2n - v2) / (2 * ds)
    assert np.all(accel <= ell(v2, curv) + 1e-3 * a_lon)
    assert np.all(-accel <= ell(v2n, np.roll(curv, -1)) + 1e-3 * a_lon)
    lap = np.sum(2 * ds / (speed + np.roll(speed, -1)))
    np.testing.assert_allclose(line.host("lap_time")[e], lap, rtol=1e-5)
    np.testing.assert_allclose(line.host("length")[e], ds.sum(), rtol=1e-5)
    # padding rows
    for name in ROWS:
        assert np.isnan(line.host(name)[e, n:]).all(), name
    return f / f0


# --------------------------------------------------------------------------------- tests
def test_hand_made_loops(device):
    loops = [circle(), ellipse(), stadium()]
    track = make_track(loops, device)
    vw = 0.1
    planner = tools.RacingLineUtility(track, vw, **LIMITS, linearisations=1)
    ratios = [check_env(track, planner.line, e, vw, LIMITS) for e in range(len(loops))]
    # a circle of constant width: the line is a concentric circle (the objective, weighted by
    # the centre line's bead spacing, is smallest on the inner border's); the ellipse and the
    # stadium straighten their bends
    assert ratios[1] < 0.9 and ratios[2] < 0.9
    # the circle's line is concentric: the same offset at every bead
    off = planner.line.host("offset")[0, :64]
    assert np.ptp(off) < 1e-4


def test_generated_batch(device):
    track = generated(device)
    vw = 0.04
    planner = tools.RacingLineUtility(track, vw, **LIMITS, linearisations=1)
    for e in range(track.num_envs):
        assert check_env(track, planner.line, e, vw, LIMITS) < 0.9


def test_linearisations_and_vehicle_width(device):
    track = generated(device)
    vw = 0.08
    wide = tools.RacingLineUtility(track, vw, **LIMITS, linearisations=3, iterations=20)
    for e in range(track.num_envs):
        check_env(track, wide.line, e, vw, LIMITS, qp_gap=0.05)


def test_second_linearisation_reaches_its_optimum(device, tmp_path):
    """The QP of the second linearisation (weights from the first line) is solved to SciPy's
    optimum, not left at its starting line: a 6 m-bead hairpin whose first line presses on
    its bounds along the U (the case that needs the warm-started multipliers)."""
    csv = write_csv(tmp_path / "hairpin.csv", *CIRCUITS["hairpin"](2000), fmt="{:.3f}")
    gen = TrackGenerator(tracks_spec([read_tum(csv)], num_envs=1, device=device, spacing=6.0))
    gen.generate()
    track = gen.result
    assert track.valid.numpy().all()
    vw = 2.0
    limits = {"a_lat": 10.0, "a_lon": 10.0, "v_max": 70.0}
    c, nrm, z, lo, hi = env_geometry(track, 0, vw)
    n = len(c)
    first = tools.RacingLineUtility(track, vw, **limits, linearisations=1)
    a1 = first.line.host("offset")[0, :n].astype(np.float64)
    second = tools.RacingLineUtility(track, vw, **limits, linearisations=2)
    a2 = second.line.host("offset")[0, :n].astype(np.float64)
    A, b = qp_system(c, nrm, around=a1)
    f1, f2 = objective(A, b, np.clip(a1, lo, hi)), objective(A, b, a2)
    ref = scipy_optimize.lsq_linear(A, -b, bounds=(lo, hi), method="bvls", tol=1e-12)
    fs = objective(A, b, ref.x)
    assert fs < 0.97 * f1  # the second linearisation has room to improve on the first line
    assert f2 <= fs * 1.02 + 1e-12, (f2, fs, f1)
    check_env(track, second.line, 0, vw, limits, qp_gap=np.inf)


def test_kappa_max(device):
    # a circle: the free line hugs the inner border (radius 0.85, kappa 1.18); kappa_max = 1
    # moves it out to a radius >= 1
    track = make_track([circle(), circle()], device)
    free = tools.RacingLineUtility(track, 0.1, **LIMITS, linearisations=1)
    kfree = np.nanmax(np.abs(free.line.host("curvature")[0]))
    assert kfree > 1.15
    bounded = tools.RacingLineUtility(
        track, 0.1, **LIMITS, kappa_max=1.0, kappa_iterations=400, linearisations=1
    )
    k = np.abs(bounded.line.host("curvature")[0, :64])
    assert k.max() <= 1.0 * 1.02, k.max()
    c, nrm, z, lo, hi = env_geometry(track, 0, 0.1)
    a = bounded.line.host("offset")[0, :64]
    assert np.all(a >= lo - 1e-6) and np.all(a <= hi + 1e-6)


def test_invalid_and_too_short_envs_are_nan(device):
    short = _loop(np.c_[np.cos(np.arange(6)), np.sin(np.arange(6))], 0.2, 0.2)
    track = make_track([circle(), circle(), short], device, valid=[1, 0, 1])
    planner = tools.RacingLineUtility(track, 0.1, **LIMITS)
    line = planner.line
    assert np.isfinite(line.host("speed")[0, :64]).all()
    for e in (1, 2):
        for name in ROWS:
            assert np.isnan(line.host(name)[e]).all(), name
        for name in ENVS:
            assert np.isnan(line.host(name)[e]), name


def _bytes(line):
    return {k: getattr(line, k).numpy().tobytes() for k in ROWS + ENVS}


def _env_bytes(line, envs):
    out = {}
    for k in ROWS:
        a = line.host(k)
        out[k] = a[list(envs)].tobytes()
    for k in ENVS:
        out[k] = line.host(k)[list(envs)].tobytes()
    return out


def test_component_masked_regeneration(device):
    course = Course.track(
        presets.track(num_envs=4, device=device),
        checkpoint_spacing=0.6,
        extra=[tools.RacingLine(0.04, **LIMITS)],
        seeds=7,
    )
    comp = course.components["racing_line"]
    assert isinstance(comp, tools.RacingLine) and isinstance(comp.utility, tools.RacingLineUtility)
    assert course.racing_line is comp.utility
    line = comp.result
    assert line is comp.utility.line and isinstance(line, tools.RacingLineResult)
    assert comp.planned_bytes(course.generator.layout, None) > 0
    fresh = tools.RacingLineUtility(course.generator.result, 0.04, **LIMITS).line
    assert _bytes(line) == _bytes(fresh)
    before = _env_bytes(line, [0, 2])
    lap_before = line.host("lap_time").copy()
    mask = wp.array(np.array([0, 1, 0, 1], np.int32), dtype=wp.int32, device=device)
    course.regenerate(mask=mask, advance=True)
    assert _env_bytes(line, [0, 2]) == before
    lap = line.host("lap_time")
    assert lap[1] != lap_before[1] and lap[3] != lap_before[3]
    again = tools.RacingLineUtility(course.generator.result, 0.04, **LIMITS).line
    assert _bytes(line) == _bytes(again)
    # an all-zero mask is an exact no-op
    snap = _bytes(line)
    course.regenerate(mask=wp.zeros(4, dtype=wp.int32, device=device), advance=True)
    assert _bytes(line) == snap
    assert tools.check_component("racing_line", course) == []


def test_plan_replays_in_a_graph(device):
    track = generated(device)
    planner = tools.RacingLineUtility(track, 0.04, **LIMITS)
    eager = _bytes(planner.line)
    mask = wp.ones(track.num_envs, dtype=wp.int32, device=device)
    with wp.ScopedCapture(device=device) as cap:
        planner.plan(mask)
    for k in ROWS + ENVS:
        getattr(planner.line, k).zero_()
    wp.capture_launch(cap.graph)
    assert _bytes(planner.line) == eager
    with pytest.raises((TypeError, ValueError), match="mask"):
        planner.plan(wp.zeros(3, dtype=wp.int32, device=device))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"vehicle_width": -1.0}, ValueError, r"RacingLine\.vehicle_width = -1\.0"),
        ({"vehicle_width": "1"}, TypeError, r"RacingLine\.vehicle_width"),
        ({"vehicle_width": None}, TypeError, r"RacingLine\.vehicle_width is required"),
        ({"a_lat": 0.0}, ValueError, r"RacingLine\.a_lat = 0\.0"),
        ({"a_lon": float("nan")}, ValueError, r"RacingLine\.a_lon"),
        ({"v_max": -3}, ValueError, r"RacingLine\.v_max = -3"),
        ({"a_lat": None}, TypeError, r"RacingLine\.a_lat is required"),
        ({"kappa_max": 0.0}, ValueError, r"RacingLine\.kappa_max = 0\.0"),
        ({"iterations": 0}, ValueError, r"RacingLine\.iterations = 0"),
        ({"iterations": 2.5}, TypeError, r"RacingLine\.iterations"),
        ({"linearisations": 17}, ValueError, r"RacingLine\.linearisations = 17"),
        ({"kappa_iterations": 0}, ValueError, r"RacingLine\.kappa_iterations = 0"),
        # work without a bound: 40 s per env per regeneration before
        (
            {"kappa_max": 5.0, "linearisations": 16, "kappa_iterations": 100000},
            ValueError,
            r"RacingLine: linearisations x \(iterations \+ kappa_iterations\) = 1,600,640",
        ),
        ({"iterations": 10000, "linearisations": 16}, ValueError, r"= 160,000 solver"),
        ({"iterations": 40000}, ValueError, r"RacingLine\.iterations = 40000 .* <= 10000"),
    ],
)
def test_bad_settings_refused(kwargs, error, match):
    args = {"vehicle_width": 0.1, **LIMITS, **kwargs}
    width = args.pop("vehicle_width")
    with pytest.raises(error, match=match):
        tools.RacingLine(width, **args)


def test_the_largest_solve_work_is_accepted():
    # at the rule's limit: 16 x (500 + 2000) = 40,000; without kappa_max the kappa count is free
    tools.RacingLine(
        0.1, **LIMITS, kappa_max=5.0, linearisations=16, iterations=500, kappa_iterations=2000
    )
    tools.RacingLine(0.1, **LIMITS, linearisations=4, iterations=10000, kappa_iterations=100000)


def test_bad_track_and_gate_course_refused(device):
    with pytest.raises(TypeError, match="must be a Track"):
        tools.RacingLineUtility(object(), 0.1, **LIMITS)
    with pytest.raises(TypeError, match="RacingLineUtility.a_lat"):
        tools.RacingLineUtility(generated(device), 0.1, a_lat="x", a_lon=1.0, v_max=1.0)
    with pytest.raises(TypeError, match="track courses only"):
        Course.gates(
            presets.gates(num_envs=2, device=device, gate_width=0.1),
            extra=[tools.RacingLine(0.1, **LIMITS)],
            seeds=1,
        )


# ------------------------------------------------------------------------------ sampling
def _sample_oracle(track, line, s):
    """float64 NumPy: each env's offset and speed at arc s (periodic linear interpolation
    over the beads' arc positions)."""
    E = track.count.shape[0]
    off, spd = np.full(E, np.nan), np.full(E, np.nan)
    arc, L = track.host("arclen"), track.length.numpy().astype(np.float64)
    counts, valid = track.count.numpy(), track.valid.numpy()
    for e in range(E):
        n = int(counts[e])
        if not valid[e] or n < 2 or not np.isfinite(s[e]):
            continue
        xp = np.append(arc[e, :n].astype(np.float64), L[e])
        u = float(np.mod(s[e], L[e]))
        for dst, src in ((off, "offset"), (spd, "speed")):
            fp = line.host(src)[e, :n].astype(np.float64)
            dst[e] = np.interp(u, xp, np.append(fp, fp[0]))
    return off, spd


def test_sample_gives_the_offset_and_target_speed_at_an_arc_position(device):
    track = generated(device, num_envs=6)
    planner = tools.RacingLineUtility(track, 0.04, **LIMITS)
    L = track.length.numpy()
    s_host = np.array([0.0, 0.37 * L[1], L[2] * 0.999, -0.25 * L[3], 2.5 * L[4], np.nan])
    s = wp.array(s_host.astype(np.float32), dtype=wp.float32, device=device)
    off = wp.zeros(6, dtype=wp.float32, device=device)
    spd = wp.zeros(6, dtype=wp.float32, device=device)
    planner.sample(s, off, spd)
    want_off, want_spd = _sample_oracle(track, planner.line, s.numpy())
    np.testing.assert_allclose(off.numpy(), want_off, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(spd.numpy(), want_spd, rtol=1e-4, atol=1e-5)
    assert np.isnan(off.numpy()[5]) and np.isnan(spd.numpy()[5])
    # at a bead's own arc the answers are the bead's values
    arc = track.host("arclen")
    s.assign(np.array([arc[e, 3] for e in range(6)], np.float32))
    planner.sample(s, off, spd)
    assert np.allclose(off.numpy(), planner.line.host("offset")[:, 3], atol=1e-6)
    assert np.allclose(spd.numpy(), planner.line.host("speed")[:, 3], rtol=1e-5)


@pytest.mark.parametrize(
    "which, bad, error, match",
    [
        ("s", np.zeros(6, np.float32), TypeError, "sample s"),
        ("s", "rows", TypeError, "sample s"),
        ("offset_out", ("float64", 6), TypeError, "offset_out"),
        ("speed_out", ("float32", 5), ValueError, "speed_out"),
        ("same", None, ValueError, "same array"),
    ],
)
def test_sample_refuses_bad_arrays_before_it_launches(which, bad, error, match):
    track = generated("cpu", num_envs=6)
    planner = tools.RacingLineUtility(track, 0.04, **LIMITS)
    args = {
        name: wp.full(6, 7.0, dtype=wp.float32, device="cpu")
        for name in ("s", "offset_out", "speed_out")
    }
    if which == "same":
        args["speed_out"] = args["offset_out"]
    elif isinstance(bad, tuple):
        args[which] = wp.zeros(bad[1], dtype=getattr(wp, bad[0]), device="cpu")
    else:
        args[which] = bad
    before = {k: v.numpy().copy() for k, v in args.items() if isinstance(v, wp.array)}
    with pytest.raises(error, match=match):
        planner.sample(args["s"], args["offset_out"], args["speed_out"])
    for k, v in before.items():
        assert np.array_equal(args[k].numpy(), v)  # nothing written
