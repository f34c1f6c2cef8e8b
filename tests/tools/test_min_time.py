"""tools.MinTime / MinTimeUtility against independent float64 oracles.

* Every returned trajectory is integrated in float64 (``tests/oracles/min_time.py``,
  ``check_trajectory``): each interval is the constant-thrust motion from its sample to the
  next, ``|thrust| <= t_max`` and ``|velocity| <= v_max`` hold at every sample (so along the
  whole trajectory), the trajectory passes through every point at its passage time and has the
  boundary velocities (a closed course: the same velocity at both ends).
* The published paths (``../shared/data/drone``, skipped when absent) from rest to rest, with
  the file's limits and gravity: our time is at most 101% of the reference heuristic's.
* An independent SciPy solution of the same problem (a first-order-hold transcription solved
  by SLSQP, ``solve_min_time``) on small paths: within 2% (the published cuboid and eight: the
  ``slow`` marker, SLSQP's dense algebra takes tens of seconds there).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenConfig, GateGenerator, TrackGenConfig, io, tools
from track_gen.course import Course, CourseConfig
from track_gen.pipeline import presets
from track_gen.tools import MinTimeStatus, MinTimeUtility

from ..oracles.min_time import check_trajectory, solve_min_time, solve_min_time_continued

DRONE_DATA = Path(
    os.environ.get(
        "TRACK_GEN_DRONE_DATA", Path(__file__).resolve().parents[2].parent / "shared/data/drone"
    )
)
PATHS = ("cuboid", "eight", "race")
LIMITS = {"t_max": 34.32, "v_max": 90.0, "gravity": 9.8066}
TOL = 2e-5  # float32 rounding of the returned samples, relative


def published(name: str) -> io.WaypointPath:
    f = DRONE_DATA / f"{name}.json"
    if not f.exists():
        pytest.skip(f"no published drone path at {f}")
    return io.read_waypoint_path(f)


def plan_open(points, device, v_start=None, v_end=None, **settings):
    """A planner over one env per path of ``points`` (a list of [n, 3] arrays)."""
    E = len(points)
    K = max(len(p) for p in points)
    rows = np.full((E, K, 3), np.nan, np.float32)
    for e, p in enumerate(points):
        rows[e, : len(p)] = p
    kw = {}
    if v_start is not None:
        kw["v_start"] = wp.array(np.asarray(v_start, np.float32), dtype=wp.vec3f, device=device)
    if v_end is not None:
        kw["v_end"] = wp.array(np.asarray(v_end, np.float32), dtype=wp.vec3f, device=device)
    return MinTimeUtility(
        wp.array(rows.reshape(-1, 3), dtype=wp.vec3f, device=device),
        wp.array([len(p) for p in points], dtype=wp.int32, device=device),
        closed=False,
        **kw,
        **{**LIMITS, **settings},
    )


def assert_feasible(result, e, points, *, closed, t_max, v_max, gravity, v_start=None, v_end=None):
    c = check_trajectory(
        result,
        e,
        points,
        closed=closed,
        t_max=t_max,
        v_max=v_max,
        gravity=gravity,
        v_start=v_start,
        v_end=v_end,
    )
    assert c["thrust_ratio"] <= 1.0 + TOL, c
    assert c["speed_ratio"] <= 1.0 + TOL, c
    assert c["integration_p"] <= TOL and c["integration_v"] <= 10 * TOL, c
    assert c["through_points"] <= TOL, c
    assert c["dt_min"] > 0 and c["thrust_last_nan"], c
    assert abs(c["last_time"] - c["time"]) <= TOL * c["time"], c
    if closed:
        assert c["periodic_v"] <= 10 * TOL and c["closes"] <= TOL, c
    else:
        assert c["start_v"] <= 10 * TOL and c["end_v"] <= 10 * TOL and c["ends"] <= TOL, c
    return c


# ------------------------------------------------------------------------------ published paths
def test_published_paths_beat_the_reference_heuristic():
    paths = [published(n) for n in PATHS]
    planner = MinTimeUtility(
        **io.waypoint_arrays(paths, num_envs=len(paths), device="cpu"),
        closed=False,
        t_max=paths[0].t_max,
        v_max=paths[0].v_max,
        gravity=paths[0].gravity,
    )
    r = planner.result
    assert (r.status.numpy() == 0).all()
    for e, p in enumerate(paths):
        assert (p.t_max, p.v_max, p.gravity) == (paths[0].t_max, paths[0].v_max, paths[0].gravity)
        c = assert_feasible(
            r, e, p.points(), closed=False, t_max=p.t_max, v_max=p.v_max, gravity=p.gravity
        )
        assert c["time"] <= 1.01 * p.reference_time, (p.name, c["time"], p.reference_time)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cuboid", "eight"])
def test_published_paths_match_an_independent_scipy_solution(name):
    p = published(name)
    planner = plan_open([p.points()], "cpu", t_max=p.t_max, v_max=p.v_max, gravity=p.gravity)
    ours = float(planner.result.time.numpy()[0])
    ref, res = solve_min_time(
        p.points(), closed=False, t_max=p.t_max, v_max=p.v_max, gravity=p.gravity, nodes=12
    )
    assert res.success, res.message
    assert abs(ours - ref) <= 0.02 * ref, (ours, ref)


# ------------------------------------------------------------------------------ small problems
SMALL_OPEN = np.array([[0.0, 0.0, 1.0], [6.0, 2.0, 2.0], [3.0, 8.0, 1.0], [-2.0, 4.0, 3.0]])
SMALL_LOOP = np.array([[0.0, 0.0, 1.0], [8.0, 0.0, 2.0], [4.0, 6.0, 1.5]])


@pytest.mark.parametrize(
    ("points", "closed", "v_max"),
    [
        (SMALL_OPEN, False, 90.0),
        (SMALL_LOOP, True, 90.0),
        # the speed bound holds on most of the path: SLSQP needs a continuation in v_max
        # (five solves, ~15 s)
        pytest.param(SMALL_OPEN, False, 6.0, marks=pytest.mark.slow),
    ],
)
def test_small_problems_match_an_independent_scipy_solution(device, points, closed, v_max):
    settings = {**LIMITS, "v_max": v_max}
    planner = MinTimeUtility(
        wp.array(points.astype(np.float32), dtype=wp.vec3f, device=device),
        wp.array([len(points)], dtype=wp.int32, device=device),
        closed=closed,
        **settings,
    )
    r = planner.result
    assert r.status.numpy()[0] == 0
    c = assert_feasible(r, 0, points, closed=closed, **settings)
    solve = solve_min_time if v_max > 10 else solve_min_time_continued
    ref, res = solve(points, closed=closed, nodes=8, **settings)
    assert res.success, res.message
    assert abs(c["time"] - ref) <= 0.02 * ref, (c["time"], ref)
    if v_max < 10:
        assert c["speed_ratio"] > 0.99  # the bound is reached


def test_start_and_end_velocities(device):
    pts = SMALL_OPEN
    vs = np.array([[4.0, -3.0, 0.5]])
    ve = np.array([[0.0, 5.0, 0.0]])
    planner = plan_open([pts], device, v_start=vs, v_end=ve)
    r = planner.result
    assert r.status.numpy()[0] == 0
    assert_feasible(r, 0, pts, closed=False, **LIMITS, v_start=vs[0], v_end=ve[0])
    rest = plan_open([pts], device).result.time.numpy()[0]
    assert r.time.numpy()[0] != rest
    # a boundary speed at or above v_max has no trajectory
    fast = plan_open([pts], device, v_start=np.array([[90.0, 0.0, 0.0]]))
    assert fast.result.status.numpy()[0] == MinTimeStatus.BOUNDARY_SPEED
    assert np.isnan(fast.result.time.numpy()[0]) and fast.result.sample_count.numpy()[0] == 0


def test_generated_gate_courses_are_feasible_closed_laps(device):
    gen = GateGenerator(
        presets.gates(
            num_envs=6,
            device=device,
            scale=20.0,
            gate_width=1.0,
            z_profile="uniform",
            z_min=1.0,
            z_max=6.0,
        ),
        seeds=5,
    )
    seq = gen.generate()
    settings = {"t_max": 30.0, "v_max": 12.0, "gravity": 9.81}
    planner = MinTimeUtility(seq.position, seq.count, closed=True, valid=seq.valid, **settings)
    r = planner.result
    pos = seq.position.numpy().reshape(6, -1, 3)
    for e, n in enumerate(seq.count.numpy()):
        assert r.status.numpy()[e] == 0
        assert_feasible(r, e, pos[e, :n], closed=True, **settings)
        assert r.sample_count.numpy()[e] == n * planner.samples + 1
        pt = r.host("passage_time")[e]
        assert pt[0] == 0 and (np.diff(pt[:n]) > 0).all() and np.isnan(pt[n:]).all()


def test_coincident_points_are_merged_and_passage_times_follow(device):
    pts = np.array([[0, 0, 1], [5, 0, 1], [5, 0, 1], [5, 5, 2], [5, 5, 2]], np.float64)
    r = plan_open([pts], device).result
    assert r.status.numpy()[0] == 0
    pt = r.host("passage_time")[0][:5]
    assert pt[1] == pt[2] and pt[3] == pt[4] and pt[2] < pt[3]
    assert r.sample_count.numpy()[0] == 2 * 8 + 1  # two segments
    merged = plan_open([pts[[0, 1, 3]]], device).result
    assert r.time.numpy()[0] == merged.time.numpy()[0]


def test_envs_without_a_trajectory_are_nan(device):
    good = SMALL_OPEN
    nan = good.copy()
    nan[1, 0] = np.nan
    same = np.repeat(good[:1], 3, axis=0)
    planner = plan_open([good, nan, same, good[:1]], device)
    r = planner.result
    st = r.status.numpy()
    assert st[0] == 0
    assert st[1] == MinTimeStatus.INPUT and st[3] == MinTimeStatus.INPUT
    assert st[2] == MinTimeStatus.DEGENERATE
    for e in (1, 2, 3):
        assert np.isnan(r.time.numpy()[e]) and r.sample_count.numpy()[e] == 0
        assert np.isnan(r.host("position")[e]).all() and np.isnan(r.host("passage_time")[e]).all()
    # valid = 0 (an invalid course) likewise
    valid = wp.array([1, 0, 1, 1], dtype=wp.int32, device=device)
    closed = MinTimeUtility(
        planner.points, planner.count, closed=True, valid=valid, **LIMITS
    ).result.status.numpy()
    assert closed[1] & MinTimeStatus.INPUT


def test_a_spent_budget_returns_the_best_trajectory_through_every_point(device):
    r = plan_open([SMALL_OPEN], device, iterations=1).result
    assert r.status.numpy()[0] == MinTimeStatus.NOT_CONVERGED and r.iterations.numpy()[0] == 1
    c = assert_feasible(r, 0, SMALL_OPEN, closed=False, **LIMITS)
    full = plan_open([SMALL_OPEN], device).result.time.numpy()[0]
    assert c["time"] > full


# ------------------------------------------------------------------------------ contract
def _bytes(result, envs=None):
    out = {}
    for k in result._row_arrays + result._env_arrays + ("passage_time",):
        a = result.host(k)
        out[k] = (a if envs is None else a[list(envs)]).tobytes()
    return out


def _poison(result):
    for k in result._row_arrays + result._env_arrays + ("passage_time",):
        a = getattr(result, k)
        a.fill_(wp.vec3f(7.0, 7.0, 7.0) if a.dtype == wp.vec3f else 7)


def test_masked_plan_changes_only_the_masked_envs_and_replays_in_a_graph(device):
    pts = [SMALL_OPEN, SMALL_OPEN[::-1], SMALL_OPEN[:3], SMALL_OPEN[1:]]
    planner = plan_open(pts, device)
    eager = _bytes(planner.result)
    _poison(planner.result)
    poisoned = _bytes(planner.result, [0, 2])
    planner.plan(wp.array([0, 1, 0, 1], dtype=wp.int32, device=device))
    assert _bytes(planner.result, [0, 2]) == poisoned  # unmasked envs keep every byte
    assert _bytes(planner.result, [1, 3]) == _bytes(plan_open(pts, device).result, [1, 3])
    planner.plan(wp.zeros(4, dtype=wp.int32, device=device))  # an all-zero mask: a no-op
    assert _bytes(planner.result, [0, 2]) == poisoned
    planner.plan()
    assert _bytes(planner.result) == eager
    # recorded: the replay equals eager (outputs poisoned first)
    with wp.ScopedCapture(device=device) as cap:
        planner.plan(wp.ones(4, dtype=wp.int32, device=device))
    _poison(planner.result)
    wp.capture_launch(cap.graph)
    assert _bytes(planner.result) == eager


def test_component_in_a_gate_course_replans_masked_envs_bitwise(device):
    course = Course.gates(
        presets.gates(num_envs=4, device=device, scale=20.0, gate_width=1.0),
        min_time={"t_max": 30.0, "v_max": 15.0},
        seeds=3,
    )
    comp = course.components["min_time"]
    assert isinstance(comp, tools.MinTime) and course.min_time is comp.utility
    res = comp.result
    seq = course.generator.result
    fresh = MinTimeUtility(
        seq.position, seq.count, closed=True, valid=seq.valid, t_max=30.0, v_max=15.0
    )
    assert _bytes(res) == _bytes(fresh.result)
    before = _bytes(res, [0, 2])
    t_before = res.time.numpy().copy()
    course.regenerate(mask=wp.array([0, 1, 0, 1], dtype=wp.int32, device=device), advance=True)
    assert _bytes(res, [0, 2]) == before
    assert (res.time.numpy()[[1, 3]] != t_before[[1, 3]]).all()
    fresh.plan()
    assert _bytes(res) == _bytes(fresh.result)
    assert tools.check_component("min_time", course) == []


def test_the_same_bits_for_any_thread_count():
    courses = [
        Course.gates(
            presets.gates(num_envs=6, device="cpu", scale=20.0, gate_width=1.0, cpu_threads=n),
            min_time={"t_max": 30.0, "v_max": 15.0},
            seeds=9,
        )
        for n in (1, 3)
    ]
    assert len(courses[1].generator.env_ranges) == 3
    one, three = (c.components["min_time"].result for c in courses)
    assert _bytes(one) == _bytes(three)
    mask = wp.array([1, 0, 0, 1, 1, 0], dtype=wp.int32, device="cpu")
    for c in courses:
        c.regenerate(mask=mask, advance=True)
    assert _bytes(one) == _bytes(three)


# ------------------------------------------------------------------------------ refusals
def _arrays(device, E=2, K=4):
    return (
        wp.zeros(E * K, dtype=wp.vec3f, device=device),
        wp.full(E, K, dtype=wp.int32, device=device),
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"t_max": None}, TypeError, r"MinTimeUtility\.t_max is required"),
        ({"v_max": None}, TypeError, r"MinTimeUtility\.v_max is required"),
        ({"t_max": 0.0}, ValueError, r"MinTimeUtility\.t_max = 0\.0"),
        ({"t_max": 9.8}, ValueError, r"t_max = 9\.8 must be at least 1\.001 \* gravity"),
        ({"v_max": float("inf")}, ValueError, r"MinTimeUtility\.v_max"),
        ({"gravity": -1.0}, ValueError, r"MinTimeUtility\.gravity = -1\.0"),
        ({"samples": 1}, ValueError, r"MinTimeUtility\.samples = 1"),
        ({"samples": 17}, ValueError, r"MinTimeUtility\.samples = 17"),
        ({"samples": 4.0}, TypeError, r"MinTimeUtility\.samples"),
        ({"iterations": 0}, ValueError, r"MinTimeUtility\.iterations = 0"),
        ({"closed": 1}, TypeError, r"closed"),
    ],
)
def test_bad_settings_refused(kwargs, error, match):
    pts, cnt = _arrays("cpu")
    with pytest.raises(error, match=match):
        MinTimeUtility(pts, cnt, **{"closed": False, **LIMITS, **kwargs})
    if "closed" not in kwargs:  # the component takes the same settings (and no closed)
        with pytest.raises(error, match=match.replace("MinTimeUtility", "MinTime")):
            tools.MinTime(**{**LIMITS, **kwargs})


def test_bad_arrays_and_cost_refused_before_anything_is_allocated():
    pts, cnt = _arrays("cpu")
    with pytest.raises(TypeError, match="count"):
        MinTimeUtility(pts, np.zeros(2, np.int32), closed=False, **LIMITS)
    with pytest.raises(TypeError, match="count has dtype"):
        MinTimeUtility(pts, wp.zeros(2, dtype=wp.float32), closed=False, **LIMITS)
    with pytest.raises(ValueError, match="points has shape"):
        MinTimeUtility(wp.zeros(7, dtype=wp.vec3f), cnt, closed=False, **LIMITS)
    with pytest.raises(ValueError, match="points has shape"):
        MinTimeUtility(wp.zeros(2, dtype=wp.vec3f), cnt, closed=False, **LIMITS)  # K = 1
    with pytest.raises(TypeError, match="points has dtype"):
        MinTimeUtility(wp.zeros(8, dtype=wp.vec3d), cnt, closed=False, **LIMITS)
    vel = wp.zeros(2, dtype=wp.vec3f)
    with pytest.raises(ValueError, match="closed course's velocities are free"):
        MinTimeUtility(pts, cnt, closed=True, v_start=vel, **LIMITS)
    with pytest.raises(ValueError, match="v_end has shape"):
        MinTimeUtility(pts, cnt, closed=False, v_end=wp.zeros(3, dtype=wp.vec3f), **LIMITS)
    with pytest.raises(ValueError, match="valid has shape"):
        MinTimeUtility(pts, cnt, closed=False, valid=wp.zeros(3, dtype=wp.int32), **LIMITS)
    big = wp.zeros(2 * 256, dtype=wp.vec3f)
    with pytest.raises(ValueError, match="lower iterations, samples or the number of points"):
        MinTimeUtility(big, cnt, closed=False, samples=16, iterations=400, **LIMITS)
    planner = MinTimeUtility(pts, cnt, closed=False, **LIMITS)
    with pytest.raises((TypeError, ValueError), match="mask"):
        planner.plan(wp.zeros(3, dtype=wp.int32))


def test_course_options_refused_before_building():
    spec = presets.gates(num_envs=2, device="cpu", gate_width=1.0)
    with pytest.raises(ValueError, match="min_time needs the keys"):
        Course.gates(spec, min_time={"t_max": 30.0})
    with pytest.raises(ValueError, match="unknown keys"):
        Course.gates(spec, min_time={"t_max": 30.0, "v_max": 5.0, "vmax": 1.0})
    with pytest.raises(TypeError, match="a tools.MinTimeSettings or a mapping of its fields"):
        Course.gates(spec, min_time=tools.MinTime(t_max=30.0, v_max=5.0))
    with pytest.raises(ValueError, match="gravity"):
        Course.gates(spec, min_time={"t_max": 5.0, "v_max": 5.0})
    with pytest.raises(TypeError, match="gates"):
        Course.track(
            presets.track(num_envs=2, device="cpu"),
            checkpoint_spacing=0.6,
            extra=[tools.MinTime(t_max=30.0, v_max=5.0)],
        )


def test_course_config_min_time_equals_the_preset():
    gen = GateGenConfig(num_envs=3, device="cpu", scale=20.0, gate_width=1.0)
    settings = {"t_max": 30.0, "v_max": 15.0, "iterations": 50}
    cfg = CourseConfig(mode="gates", gen=gen, seeds=4, min_time=settings)
    assert dict(cfg.min_time) == {**settings, "gravity": 9.81, "samples": 8}
    a = Course.from_config(cfg).components["min_time"].result
    b = Course.gates(gen, min_time=settings, seeds=4).components["min_time"].result
    assert _bytes(a) == _bytes(b)
    with pytest.raises(ValueError, match="min_time"):
        CourseConfig(
            mode="track", gen=TrackGenConfig(num_envs=2), checkpoint_spacing=0.6, min_time=settings
        )


def test_settings_object_equals_the_keywords_and_old_names_warn():
    """``MinTimeSettings`` is the one settings class: the utility, the component and
    ``CourseConfig.min_time`` take it or its fields; the names before the naming convention
    (``MinTimePlanner``, ``MinTimeSet``) still work with a DeprecationWarning."""
    pts, cnt = _arrays("cpu")
    s = tools.MinTimeSettings(**LIMITS, samples=4)
    a = MinTimeUtility(pts, cnt, s, closed=False)
    b = MinTimeUtility(pts, cnt, closed=False, **LIMITS, samples=4)
    assert a.settings == b.settings == s and a.samples == 4
    assert _bytes(a.result) == _bytes(b.result)
    assert tools.MinTime(s).settings == tools.MinTime(**LIMITS, samples=4).settings
    gen = GateGenConfig(num_envs=2, device="cpu", gate_width=1.0)
    assert CourseConfig(mode="gates", gen=gen, min_time=s).min_time is s
    with pytest.raises(TypeError, match="MinTime settings must be a MinTimeSettings"):
        tools.MinTime(settings=tools.RacingLineSettings(0.04, a_lat=8.0, a_lon=4.0, v_max=6.0))
    with pytest.warns(DeprecationWarning, match="MinTimeUtility"):
        assert tools.MinTimePlanner is MinTimeUtility
    with pytest.warns(DeprecationWarning, match="MinTimeResult"):
        assert tools.min_time.MinTimeSet is tools.MinTimeResult
