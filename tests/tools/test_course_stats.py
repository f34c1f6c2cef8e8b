"""tools.CourseStats / CourseStatsUtility against an independent float64 NumPy oracle.

The oracle (:func:`oracle`) recomputes every descriptor of ``docs/course-stats.md`` from the
host copies of the beads: turning angles with ``np.arctan2`` of the chords, curvature
``|theta| / ds``, corner runs found by rotating the loop to a non-corner bead and splitting
the flags where they change, percentiles by their nearest rank. Hand-made loops (a circle,
the test circuits of ``tests/io``, an elevated loop), generated tracks (flat, elevated, with
varying widths), real circuits through ``track_gen.io.tracks_spec`` and gate courses; then the
per-generation contract (masked envs, all-zero mask, capture, CPU thread counts).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import warp as wp

from track_gen import TrackGenerator, tools
from track_gen.course import Course
from track_gen.io import RealTrack, tracks_spec
from track_gen.pipeline import presets
from track_gen.results import Track
from track_gen.tools.course_stats import DESCRIPTORS

from ..io import CIRCUITS

SETTINGS = {"corner_radius": 20.0, "corner_angle": 0.2, "percentiles": (50.0, 90.0, 99.0)}


# ------------------------------------------------------------------------------- oracle
def _runs(flag: np.ndarray) -> list[np.ndarray]:
    """Maximal cyclic runs of True in ``flag`` as index arrays."""
    n = len(flag)
    if flag.all():
        return [np.arange(n)]
    start = int(np.flatnonzero(~flag)[0])
    order = (start + 1 + np.arange(n)) % n  # ends on a False bead: no run wraps
    f = flag[order].astype(np.int8)
    edges = np.flatnonzero(np.diff(np.r_[0, f, 0]))
    return [order[a:b] for a, b in zip(edges[::2], edges[1::2], strict=True)]


def oracle(center, widths, corner_radius, corner_angle, percentiles, lap=np.nan) -> dict:
    """Every descriptor of one closed line ``center`` [n, 3] with full widths ``widths``
    (per bead, or per gate), float64."""
    c = np.asarray(center, np.float64)
    n = len(c)
    xy = c[:, :2]
    a = xy - np.roll(xy, 1, 0)
    b = np.roll(xy, -1, 0) - xy
    la, lb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    cross = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    theta = np.where((la > 0) & (lb > 0), np.arctan2(cross, (a * b).sum(1)), 0.0)
    ds = 0.5 * (la + lb)
    kappa = np.divide(np.abs(theta), ds, out=np.zeros(n), where=ds > 0)
    w = np.asarray(widths, np.float64)
    hw = w.sum() / len(w) / 2
    runs = [
        r for r in _runs(kappa * hw * corner_radius > 1) if np.abs(theta[r]).sum() >= corner_angle
    ]
    plan = ds.sum()
    ks = np.sort(kappa)
    ranks = [min(max(math.ceil(p / 100.0 * n), 1), n) for p in percentiles]
    return {
        "length": np.linalg.norm(np.roll(c, -1, 0) - c, axis=1).sum(),
        "turning": np.abs(theta).sum(),
        "curvature_max": kappa.max(),
        "curvature_percentile": np.array([ks[r - 1] for r in ranks]),
        "corners": float(len(runs)),
        "corner_curvature": np.mean([kappa[r].max() for r in runs]) if runs else 0.0,
        "corner_angle": np.mean([np.abs(theta[r]).sum() for r in runs]) if runs else 0.0,
        "straight_fraction": (plan - sum(ds[r].sum() for r in runs)) / plan,
        "width_mean": w.mean(),
        "width_min": w.min(),
        "elevation_range": c[:, 2].max() - c[:, 2].min(),
        "par_time": lap,
    }


def track_widths(track, e) -> np.ndarray:
    n = int(track.count.numpy()[e])
    o = track.host("outer")[e, :n, :2].astype(np.float64)
    i = track.host("inner")[e, :n, :2].astype(np.float64)
    return np.linalg.norm(o - i, axis=1)


def assert_matches(stats, e, want, rtol=2e-5):
    for name in DESCRIPTORS:
        got = float(getattr(stats, name).numpy()[e])
        if np.isnan(want[name]):
            assert np.isnan(got), name
        elif name == "corners":
            assert got == want[name], (e, name, got, want[name])
        else:
            np.testing.assert_allclose(got, want[name], rtol=rtol, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(
        stats.host("curvature_percentile")[e], want["curvature_percentile"], rtol=rtol
    )


def assert_track_matches(meter, track, settings=SETTINGS, lap=None):
    stats = meter.stats
    counts, valid = track.count.numpy(), track.valid.numpy()
    for e in range(track.num_envs):
        if not valid[e]:
            assert all(np.isnan(getattr(stats, k).numpy()[e]) for k in DESCRIPTORS)
            continue
        n = int(counts[e])
        c = track.host("center")[e, :n]
        want = oracle(c, track_widths(track, e), lap=np.nan if lap is None else lap[e], **settings)
        assert_matches(stats, e, want)


# ------------------------------------------------------------------------------- tracks
def make_track(loops, device, n_max=None, valid=None) -> Track:
    """A Track from ``(xy [n, 2], width_left [n], width_right [n])`` loops, or
    ``(xyz [n, 3], wl, wr)`` for an elevated one (borders along the left normal)."""
    E = len(loops)
    n_max = n_max or max(len(p) for p, _, _ in loops) + 3
    nan = np.float32("nan")
    arr = {
        k: np.full((E, n_max, 3), nan, np.float32) for k in ("center", "normal", "inner", "outer")
    }
    count = np.zeros(E, np.int32)
    for e, (pts, wl, wr) in enumerate(loops):
        pts = np.asarray(pts, np.float64)
        n = len(pts)
        xyz = pts if pts.shape[1] == 3 else np.c_[pts, np.zeros(n)]
        d = np.roll(xyz[:, :2], -1, 0) - np.roll(xyz[:, :2], 1, 0)
        with np.errstate(invalid="ignore", divide="ignore"):  # a NaN bead
            t = d / np.linalg.norm(d, axis=1)[:, None]
        nrm = np.c_[-t[:, 1], t[:, 0], np.zeros(n)]
        wl = np.broadcast_to(np.asarray(wl, np.float64), (n,))[:, None]
        wr = np.broadcast_to(np.asarray(wr, np.float64), (n,))[:, None]
        arr["center"][e, :n] = xyz
        arr["normal"][e, :n] = nrm
        arr["outer"][e, :n] = xyz + wl * nrm
        arr["inner"][e, :n] = xyz - wr * nrm
        count[e] = n
    track = Track.allocate(E, n_max, device)
    for k, v in arr.items():
        getattr(track, k).assign(v.reshape(-1, 3))
    track.count.assign(count)
    track.valid.assign(np.ones(E, np.int32) if valid is None else np.asarray(valid, np.int32))
    return track


def circle(n=64, r=1.0, w=0.1):
    t = 2 * np.pi * np.arange(n) / n
    return np.c_[r * np.cos(t), r * np.sin(t)], w, w


def hilly(n=90):
    """A wobbly loop that climbs and falls (z = 0.3 sin 2t), widths varying."""
    t = 2 * np.pi * np.arange(n) / n
    r = 1.0 + 0.25 * np.cos(3 * t)
    pts = np.c_[r * np.cos(t), r * np.sin(t), 0.3 * np.sin(2 * t)]
    return pts, 0.08 + 0.02 * np.sin(t), 0.1


@functools.cache
def generated(device, num_envs=6, seed=5, **fields):
    gen = TrackGenerator(presets.track(num_envs=num_envs, device=device, **fields), seeds=seed)
    gen.generate()
    assert gen.result.valid.numpy().sum() >= num_envs - 1
    return gen.result


# ------------------------------------------------------------------------------- geometry
def test_circle_descriptors_are_the_analytic_ones(device):
    n, r = 64, 1.0
    inside = make_track([circle(n, r, 0.1)], device)  # radius 1 < 20 * 0.1: one corner
    meter = tools.CourseStatsUtility(inside)
    st = meter.stats
    chord = 2 * r * math.sin(math.pi / n)
    kappa = (2 * math.pi / n) / chord
    np.testing.assert_allclose(st.length.numpy()[0], n * chord, rtol=1e-6)
    np.testing.assert_allclose(st.turning.numpy()[0], 2 * math.pi, rtol=1e-6)
    np.testing.assert_allclose(st.curvature_max.numpy()[0], kappa, rtol=1e-5)
    np.testing.assert_allclose(st.host("curvature_percentile")[0], [kappa] * 3, rtol=1e-5)
    assert st.corners.numpy()[0] == 1  # the whole loop is one run
    np.testing.assert_allclose(st.corner_angle.numpy()[0], 2 * math.pi, rtol=1e-6)
    np.testing.assert_allclose(st.corner_curvature.numpy()[0], kappa, rtol=1e-5)
    assert st.straight_fraction.numpy()[0] == 0.0
    np.testing.assert_allclose(st.width_mean.numpy()[0], 0.2, rtol=1e-6)
    assert st.elevation_range.numpy()[0] == 0.0 and np.isnan(st.par_time.numpy()[0])
    assert_track_matches(meter, inside)
    # a radius above corner_radius half widths: no corner, all straight
    wide = tools.CourseStatsUtility(inside, corner_radius=5.0).stats  # 1 > 5 * 0.1
    assert wide.corners.numpy()[0] == 0 and wide.straight_fraction.numpy()[0] == 1.0
    assert wide.corner_curvature.numpy()[0] == 0.0 and wide.corner_angle.numpy()[0] == 0.0


def test_oval_has_two_half_turn_corners_and_its_straights(device):
    xy, wr, wl = CIRCUITS["oval"]()
    track = make_track([(xy, wl, wr)], device)
    meter = tools.CourseStatsUtility(track)  # radius 60 m < 20 * 5.5 m
    st = meter.stats
    assert st.corners.numpy()[0] == 2
    np.testing.assert_allclose(st.corner_angle.numpy()[0], math.pi, rtol=0.03)
    np.testing.assert_allclose(st.corner_curvature.numpy()[0], 1 / 60, rtol=0.03)
    perim = 400 + 120 * math.pi
    np.testing.assert_allclose(st.straight_fraction.numpy()[0], 400 / perim, atol=0.02)
    np.testing.assert_allclose(st.width_min.numpy()[0], 11.0, rtol=1e-5)
    assert_track_matches(meter, track)


@pytest.mark.parametrize(
    "settings",
    [
        SETTINGS,
        {"corner_radius": 60.0, "corner_angle": 0.05, "percentiles": (0.0, 25.0, 75.0, 100.0)},
    ],
)
def test_test_circuits_and_an_elevated_loop_match_the_oracle(device, settings):
    loops = [(xy, wl, wr) for xy, wr, wl in (f() for f in CIRCUITS.values())]
    loops += [hilly(), circle(40, 2.0, 0.05)]
    track = make_track(loops, device)
    meter = tools.CourseStatsUtility(track, **settings)
    assert_track_matches(meter, track, settings)
    np.testing.assert_allclose(meter.stats.elevation_range.numpy()[4], 0.6, rtol=1e-3)
    # widths that vary per bead: the narrowest and the mean
    _, wr, wl = CIRCUITS["variable"]()
    w = wl + wr
    np.testing.assert_allclose(meter.stats.width_min.numpy()[2], w.min(), rtol=1e-5)
    np.testing.assert_allclose(meter.stats.width_mean.numpy()[2], w.mean(), rtol=1e-5)


@pytest.mark.parametrize(
    "fields",
    [{}, {"z_profile": "uniform", "z_min": 0.0, "z_max": 0.2}, {"width_variation": 0.4}],
    ids=["flat", "elevated", "widths"],
)
def test_generated_tracks_match_the_oracle(device, fields):
    track = generated(device, **fields)
    meter = tools.CourseStatsUtility(track)
    assert_track_matches(meter, track)
    if fields.get("z_max"):
        assert (meter.stats.elevation_range.numpy()[track.valid.numpy() == 1] > 0).all()


def test_real_circuits_through_io_match_the_oracle():
    circuits = [RealTrack(k, *f()) for k, f in CIRCUITS.items()]  # xy, width_right, width_left
    gen = TrackGenerator(tracks_spec(circuits, num_envs=4, device="cpu"), seeds=0)
    gen.generate()
    valid = gen.result.valid.numpy()
    assert valid[[0, 2, 3]].all()  # the hairpin is too tight for its widths: NaN
    meter = tools.CourseStatsUtility(gen.result)
    assert_track_matches(meter, gen.result)
    w = meter.stats.width_mean.numpy()
    assert 10.9 < w[0] < 11.1 and 7 < w[2] < 13  # the oval's 11 m, the variable widths


def test_invalid_envs_are_nan_and_masked_envs_only_are_written(device):
    xy, wl, wr = circle(32)
    bad = np.array(xy)
    bad[5, 0] = np.nan
    loops = [
        (xy, wl, wr),
        (xy, wl, wr),
        (bad, wl, wr),
        (xy[:2], wl, wr),
        (xy * 1e-30, 1e-31, 1e-31),
    ]
    track = make_track(loops, device, n_max=40, valid=[1, 0, 1, 1, 1])
    st = tools.CourseStatsUtility(track).stats
    for e in (1, 2, 3):
        assert all(np.isnan(getattr(st, k).numpy()[e]) for k in DESCRIPTORS)
        assert np.isnan(st.host("curvature_percentile")[e]).all()
    for e in (0, 4):  # a tiny loop is still a loop: finite answers, clamped to float32
        assert all(np.isfinite(getattr(st, k).numpy()[e]) for k in DESCRIPTORS if k != "par_time")
    meter = tools.CourseStatsUtility(track)
    before = {k: getattr(meter.stats, k).numpy().copy() for k in DESCRIPTORS}
    track.valid.assign(np.array([0, 1, 1, 1, 1], np.int32))
    meter.measure(wp.array(np.array([0, 1, 0, 0, 0], np.int32), dtype=wp.int32, device=device))
    for k in DESCRIPTORS:
        now = getattr(meter.stats, k).numpy()
        same = [0, 2, 3, 4]
        assert np.array_equal(now[same], before[k][same], equal_nan=True), k
    assert meter.stats.length.numpy()[1] == meter.stats.length.numpy()[0]


# ------------------------------------------------------------------------------ contract
def _bytes(stats):
    return [a.numpy().tobytes() for a in stats.arrays()]


def test_course_component_contract(device):
    course = Course.track(
        presets.track(num_envs=4, device=device),
        checkpoint_spacing=0.6,
        extra=[
            tools.CourseStats(racing_line="racing_line"),
            tools.RacingLine(0.04, a_lat=8.0, a_lon=4.0, v_max=6.0),
        ],
        seeds=7,
    )
    names = list(course.components)
    assert names.index("racing_line") < names.index("stats")  # ordered after it
    comp = course.components["stats"]
    st = comp.result
    assert isinstance(st, tools.CourseStatsResult) and st is comp.utility.stats
    assert comp.planned_bytes(course.generator.layout, None) == sum(
        a.capacity
        for a in [
            *st.arrays(),
            comp.utility._no_lap,
            comp.utility._everyone,
            comp.utility._half_width,
            comp.utility._kappa,
        ]
    )
    lap = course.components["racing_line"].result.lap_time
    assert_track_matches(comp.utility, course.generator.result, lap=lap.numpy())
    before = [a.numpy()[[0, 2]].tobytes() for a in st.arrays(exclude=("curvature_percentile",))]
    pct = st.host("curvature_percentile")[[0, 2]].tobytes()
    mask = wp.array(np.array([0, 1, 0, 1], np.int32), dtype=wp.int32, device=device)
    course.regenerate(mask=mask, advance=True)
    after = [a.numpy()[[0, 2]].tobytes() for a in st.arrays(exclude=("curvature_percentile",))]
    assert after == before and st.host("curvature_percentile")[[0, 2]].tobytes() == pct
    assert_track_matches(comp.utility, course.generator.result, lap=lap.numpy())
    snap = _bytes(st)
    course.regenerate(mask=wp.zeros(4, dtype=wp.int32, device=device), advance=True)
    assert _bytes(st) == snap  # an all-zero mask is an exact no-op
    assert tools.check_component("stats", course) == []


def test_measure_replays_in_a_graph(device):
    track = generated(device)
    meter = tools.CourseStatsUtility(track)
    eager = _bytes(meter.stats)
    mask = wp.ones(track.num_envs, dtype=wp.int32, device=device)
    with wp.ScopedCapture(device=device) as cap:
        meter.measure(mask)
    for a in meter.stats.arrays():
        a.zero_()
    wp.capture_launch(cap.graph)
    assert _bytes(meter.stats) == eager


def test_gate_course_is_measured_along_its_course_line(device):
    course = Course.gates(
        presets.gates(num_envs=4, device=device, gate_width=0.1),
        extra=[tools.CourseStats(source="centerline")],
        seeds=3,
    )
    st = course.components["stats"].result
    line = course.components["centerline"].result
    gates = course.generator.result
    for e in range(4):
        if not gates.valid.numpy()[e]:
            assert np.isnan(st.length.numpy()[e])
            continue
        n, g = int(line.count.numpy()[e]), int(gates.count.numpy()[e])
        widths = 2 * gates.host("half_size")[e, :g].astype(np.float64)
        assert_matches(st, e, oracle(line.host("center")[e, :n], widths, **SETTINGS))
    assert (st.width_min.numpy()[gates.valid.numpy() == 1] == np.float32(0.1)).all()
    assert np.isnan(st.par_time.numpy()).all()
    comp = course.components["stats"]
    comp.planned_source = course.components["centerline"]  # as the course sets it
    owned = [*st.arrays(), *(getattr(comp.utility, k) for k in ("_no_lap", "_everyone"))]
    owned += [comp.utility._half_width, comp.utility._kappa]
    assert comp.planned_bytes(course.generator.layout, None) == sum(a.capacity for a in owned)
    assert tools.check_component("stats", course) == []


def test_stats_are_bitwise_identical_for_every_thread_count():
    runs = []
    for t in (1, 3):
        course = Course.track(
            presets.track(num_envs=6, device="cpu", cpu_threads=t),
            checkpoint_spacing=0.6,
            extra=[tools.CourseStats()],
            seeds=4,
        )
        assert len(course.generator.env_ranges) == (t if t > 1 else 0)
        st = course.components["stats"].result
        run = [_bytes(st)]
        course.regenerate(advance=True)
        run.append(_bytes(st))
        course.regenerate(
            mask=wp.array([1, 0, 0, 1, 0, 1], dtype=wp.int32, device="cpu"), advance=True
        )
        run.append(_bytes(st))
        runs.append(run)
    assert runs[0] == runs[1]


# ------------------------------------------------------------------------------- refusals
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"corner_radius": 0.0}, ValueError, r"CourseStats\.corner_radius = 0\.0"),
        ({"corner_radius": "2"}, TypeError, r"CourseStats\.corner_radius"),
        ({"corner_angle": -0.1}, ValueError, r"CourseStats\.corner_angle = -0\.1"),
        ({"corner_angle": float("inf")}, ValueError, r"CourseStats\.corner_angle"),
        ({"percentiles": ()}, ValueError, r"CourseStats\.percentiles"),
        ({"percentiles": (50.0, 101.0)}, ValueError, r"CourseStats\.percentiles"),
        ({"percentiles": tuple(range(9))}, ValueError, r"CourseStats\.percentiles"),
        ({"percentiles": 50.0}, TypeError, r"CourseStats\.percentiles"),
        ({"racing_line": 3}, TypeError, r"CourseStats\.racing_line"),
        ({"racing_line": ""}, TypeError, r"CourseStats\.racing_line"),
    ],
)
def test_bad_settings_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        tools.CourseStats(**kwargs)


def test_bad_courses_refused_before_anything_is_built():
    track = generated("cpu")
    with pytest.raises(TypeError, match="must be a Track or a GateSequence"):
        tools.CourseStatsUtility(object())
    with pytest.raises(ValueError, match="leave line=None"):
        tools.CourseStatsUtility(track, line=track)
    with pytest.raises(TypeError, match="lap_time"):
        tools.CourseStatsUtility(track, lap_time=wp.zeros(6, dtype=wp.float64, device="cpu"))
    with pytest.raises(ValueError, match="lap_time"):
        tools.CourseStatsUtility(track, lap_time=wp.zeros(5, dtype=wp.float32, device="cpu"))
    with pytest.raises(TypeError, match="CourseStatsUtility.corner_angle"):
        tools.CourseStatsUtility(track, corner_angle=None)
    meter = tools.CourseStatsUtility(track)
    snap = _bytes(meter.stats)
    with pytest.raises(TypeError, match="mask"):
        meter.measure(wp.zeros(6, dtype=wp.float32, device="cpu"))
    assert _bytes(meter.stats) == snap
    with pytest.raises(ValueError, match="source='centerline'"):
        Course.gates(
            presets.gates(num_envs=2, device="cpu", gate_width=0.1),
            extra=[tools.CourseStats()],
            seeds=1,
        )
    with pytest.raises(ValueError, match="'racing_line', which is not a component"):
        Course.track(
            presets.track(num_envs=2, device="cpu"),
            checkpoint_spacing=0.6,
            extra=[tools.CourseStats(racing_line="racing_line")],
            seeds=1,
        )
    with pytest.raises(TypeError, match="no lap_time"):
        Course.track(
            presets.track(num_envs=2, device="cpu"),
            checkpoint_spacing=0.6,
            extra=[tools.CourseStats(racing_line="checkpoints")],
            seeds=1,
        )


# ------------------------------------------------------------------------ realism script
def _realism():
    from studies import realism

    return realism


def test_realism_ks_statistic_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    realism = _realism()
    rng = np.random.default_rng(3)
    for a, b in [
        (rng.normal(size=50), rng.normal(0.3, 1.2, size=17)),
        (rng.integers(0, 4, 30).astype(float), rng.integers(1, 5, 12).astype(float)),  # ties
        (np.array([1.0]), np.array([1.0, 2.0])),
    ]:
        want = stats.ks_2samp(a, b).statistic
        assert realism.ks_statistic(a, b) == pytest.approx(want, abs=1e-12)
    assert np.isnan(realism.ks_statistic(np.array([]), np.array([1.0])))


def test_realism_script_ranks_samplers_against_a_folder_of_circuits(tmp_path, capsys):
    from ..io import write_csv

    for name in ("oval", "variable", "sample"):
        xy, wr, wl = CIRCUITS[name]()
        write_csv(tmp_path / f"{name}.csv", xy, wr, wl)
    realism = _realism()
    rows = realism.main(
        ["--mode", "dimensionless", "--circuits", str(tmp_path), "--E", "8"]
        + ["--samplers", "bezier", "polar", "--mixes"]
        + ["--half-widths", "0.1", "--csv", str(tmp_path / "out.csv")]
    )
    assert [r["mean"] for r in rows] == sorted(r["mean"] for r in rows)
    assert {r["source"] for r in rows} == {"bezier", "polar", "mix(bezier+polar)"}
    for r in rows:
        assert all(0.0 <= r[k] <= 1.0 for k in realism.FEATURES)
    out = capsys.readouterr().out
    assert "3 of 3 circuits measured" in out and "| mean |" in out
    assert (tmp_path / "out.csv").read_text().startswith("source,")
