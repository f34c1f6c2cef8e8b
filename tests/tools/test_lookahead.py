"""tools.Lookahead / LookaheadUtility against an independent float64 NumPy arc walk.

The oracle walks each env's closed centre line from the localizer's arc position in float64
(its own chord lengths, not ``Track.arclen``), interpolates the line, the widths (the
borders' distances along the left normal) and the curvature (the 3D turning angle over the
mean chord, signed by the plan-view turn) at each arc ``s + k * spacing``, then expresses
the point in the agent's yaw frame.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp

from tests.course.test_course_budget import _allocated_by_component
from track_gen import tools
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.results import Track

E = 5
K = 12
SPACING = 0.15
ROWS = ("position", "width_left", "width_right", "curvature", "speed", "arc")
RACING = {"a_lat": 8.0, "a_lon": 4.0, "v_max": 6.0}


# ------------------------------------------------------------------------------- courses
def make_course(device, source="center", cpu_threads=None, num_points=K, spacing=SPACING):
    extra = [tools.Localizer(), tools.Lookahead(num_points, spacing, along=source)]
    if source == "racing_line":
        extra.insert(0, tools.RacingLine(0.05, **RACING))
    kw = {} if cpu_threads is None else {"cpu_threads": cpu_threads}
    return Course.track(
        presets.track(num_envs=E, device=device, **kw),
        checkpoint_spacing=0.6,
        extra=extra,
        seeds=21,
    )


@functools.cache
def course_of(device, source="center"):
    return make_course(device, source)


def quats(yaw) -> np.ndarray:
    yaw = np.asarray(yaw, np.float64)
    q = np.zeros((len(yaw), 4), np.float32)
    q[:, 2], q[:, 3] = np.sin(yaw / 2), np.cos(yaw / 2)
    return q


def poses(track: Track, seed: int):
    """Positions near each env's centre line (off it by up to 0.05, 0.02 up) and yaws."""
    rng = np.random.default_rng(seed)
    count = track.count.numpy()
    c = track.host("center")
    pos = np.zeros((track.num_envs, 3), np.float32)
    for e in range(track.num_envs):
        i = rng.integers(count[e])
        pos[e] = c[e, i] + np.r_[rng.uniform(-0.05, 0.05, 2), 0.02]
    return pos, rng.uniform(-np.pi, np.pi, track.num_envs)


def bind(course, pos, yaw):
    dev = course.device
    p = wp.array(np.asarray(pos, np.float32), dtype=wp.vec3f, device=dev)
    q = wp.array(quats(yaw), dtype=wp.quatf, device=dev)
    course.bind(position=p, orientation=q)
    return p, q


def host(points) -> dict:
    return {k: points.host(k) for k in ROWS + ("valid",) if getattr(points, k) is not None}


# ------------------------------------------------------------------------------- oracle
def curvature_oracle(c: np.ndarray) -> np.ndarray:
    a = c - np.roll(c, 1, 0)
    b = np.roll(c, -1, 0) - c
    la, lb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    cos = np.clip(np.einsum("ij,ij->i", a, b) / (la * lb), -1.0, 1.0)
    turn = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return np.where(turn < 0, -1.0, 1.0) * np.arccos(cos) / (0.5 * (la + lb))


def oracle(track: Track, e, s0, p, yaw, num_points, spacing, line=None):
    """Float64 ``(position [K,3], left [K], right [K], curvature [K], speed [K], arc [K])``."""
    n = int(track.count.numpy()[e])
    c = track.host("center")[e, :n].astype(np.float64)
    nrm = track.host("normal")[e, :n, :2].astype(np.float64)
    da = np.einsum("ij,ij->i", track.host("outer")[e, :n, :2] - c[:, :2], nrm)
    db = np.einsum("ij,ij->i", track.host("inner")[e, :n, :2] - c[:, :2], nrm)
    wl, wr = np.maximum(da, db), np.maximum(-da, -db)
    chord = np.linalg.norm(np.roll(c, -1, 0) - c, axis=1)
    total = chord.sum()
    if line is None:
        pts, kap, off, spd = c, curvature_oracle(c), np.zeros(n), np.full(n, np.nan)
    else:
        pts = line.host("position")[e, :n].astype(np.float64)
        kap = line.host("curvature")[e, :n].astype(np.float64)
        off = line.host("offset")[e, :n].astype(np.float64)
        spd = line.host("speed")[e, :n].astype(np.float64)
    out = {k: [] for k in ("position", "width_left", "width_right", "curvature", "speed", "arc")}
    cy, sy = np.cos(yaw), np.sin(yaw)
    for k in range(1, num_points + 1):
        u = (float(s0) + k * spacing) % total
        i, walked = 0, 0.0  # the walk: the segment holding arc u
        while i < n - 1 and walked + chord[i] <= u:
            walked += chord[i]
            i += 1
        j = (i + 1) % n
        t = min(max((u - walked) / chord[i], 0.0), 1.0)

        def lerp(a, i=i, j=j, t=t):
            return a[i] + t * (a[j] - a[i])

        d = lerp(pts) - p
        out["position"].append([cy * d[0] + sy * d[1], cy * d[1] - sy * d[0], d[2]])
        o = lerp(off)
        out["width_left"].append(lerp(wl) - o)
        out["width_right"].append(lerp(wr) + o)
        out["curvature"].append(lerp(kap))
        out["speed"].append(lerp(spd))
        out["arc"].append(u)
    return {k: np.asarray(v) for k, v in out.items()}


def assert_matches_oracle(course, pos, yaw, envs=None):
    la = course.components["lookahead"]
    line = la.utility.line
    got = host(la.result)
    s = course.components["localizer"].result.s.numpy()
    track = course.generator.result
    valid = track.valid.numpy()
    for e in envs if envs is not None else range(track.num_envs):
        if not valid[e]:
            continue
        assert got["valid"][e] == 1
        want = oracle(
            track, e, s[e], pos[e].astype(np.float64), yaw[e], la.num_points, la.spacing, line
        )
        np.testing.assert_allclose(got["position"][e], want["position"], atol=2e-5)
        np.testing.assert_allclose(got["width_left"][e], want["width_left"], atol=2e-5)
        np.testing.assert_allclose(got["width_right"][e], want["width_right"], atol=2e-5)
        kmax = np.abs(want["curvature"]).max()
        np.testing.assert_allclose(got["curvature"][e], want["curvature"], atol=1e-3 * kmax)
        arc = got["arc"][e]
        total = float(track.length.numpy()[e])
        d = np.abs(arc - want["arc"])
        np.testing.assert_array_less(np.minimum(d, total - d), 2e-5)  # on the loop
        assert ((arc >= 0) & (arc < total)).all()
        if line is not None:
            np.testing.assert_allclose(got["speed"][e], want["speed"], rtol=1e-4, atol=1e-4)
        for k in got:
            if k != "valid":
                assert np.isfinite(got[k][e]).all(), k


# ------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("source", ["center", "racing_line"])
def test_points_match_the_float64_arc_walk(device, source):
    course = course_of(device, source)
    track = course.generator.result
    for seed in (1, 2):
        pos, yaw = poses(track, seed)
        bind(course, pos, yaw)
        res = course.step()
        assert res["lookahead"] is course.components["lookahead"].result
        assert (res["lookahead"].speed is None) == (source == "center")
        comp, gen = course.components["lookahead"], course.generator
        planned = comp.planned_bytes(gen.layout, gen.config)
        assert planned == _allocated_by_component(course)["lookahead"]
        assert_matches_oracle(course, pos, yaw)


def test_the_frame_follows_the_heading(device):
    """Turning the agent rotates the points about z; moving it straight up lowers them."""
    course = course_of(device)
    track = course.generator.result
    pos, yaw = poses(track, 3)
    bind(course, pos, yaw)
    a = course.step()["lookahead"].host("position").copy()
    bind(course, pos, yaw + np.pi / 2)
    b = course.step()["lookahead"].host("position").copy()
    np.testing.assert_allclose(b[..., 0], a[..., 1], atol=1e-5)  # x' = y
    np.testing.assert_allclose(b[..., 1], -a[..., 0], atol=1e-5)  # y' = -x
    up = pos + np.array([0, 0, 0.25], np.float32)
    bind(course, up, yaw)
    c = course.step()["lookahead"].host("position")
    np.testing.assert_allclose(c[..., 2], a[..., 2] - 0.25, atol=1e-6)


def test_hand_made_circle_points_lie_on_the_circle():
    """A counter-clockwise circle of radius 1: every point is at distance 1 from the centre,
    the arc advances by ``spacing`` along the chords, the widths are the band's and the
    curvature about 1/R."""
    n, w = 256, 0.2
    a = 2 * np.pi * np.arange(n) / n
    xy = np.c_[np.cos(a), np.sin(a)]
    track = Track.allocate(1, n + 4, "cpu")
    z = np.zeros((n, 1))
    nrm = -xy  # left of a counter-clockwise circle: towards the centre
    pad = np.full((4, 3), np.nan, np.float32)
    for name, v in (
        ("center", np.c_[xy, z]),
        ("normal", np.c_[nrm, z]),
        ("inner", np.c_[xy * (1 - w), z]),
        ("outer", np.c_[xy * (1 + w), z]),
    ):
        getattr(track, name).assign(np.r_[v.astype(np.float32), pad])
    chord = 2 * np.sin(np.pi / n)
    track.arclen.assign(np.r_[np.arange(n) * chord, np.full(4, np.nan)].astype(np.float32))
    track.length.assign(np.array([n * chord], np.float32))
    track.count.assign(np.array([n], np.int32))
    track.valid.assign(np.array([1], np.int32))
    loc = tools.LocalizerUtility(track)
    sampler = tools.LookaheadUtility(track, loc.curvature, 40, 0.2)
    pos = wp.array(np.array([[1.0, 0.0, 0.0]], np.float32), dtype=wp.vec3f)
    q = wp.array(quats([np.pi / 2]), dtype=wp.quatf)  # heading +y: along the circle
    pts = sampler.sample(loc.locate(pos).s, pos, q)
    p = pts.host("position")[0].astype(np.float64)
    world = np.c_[1.0 - p[:, 1], p[:, 0]]  # back to the world: x = 1 - y', y = x'
    np.testing.assert_allclose(np.linalg.norm(world, axis=1), 1.0, atol=1e-4)
    np.testing.assert_allclose(pts.host("arc")[0], (np.arange(1, 41) * 0.2) % (n * chord), 1e-4)
    np.testing.assert_allclose(pts.host("width_left")[0], w, atol=1e-5)
    np.testing.assert_allclose(pts.host("width_right")[0], w, atol=1e-5)
    np.testing.assert_allclose(pts.host("curvature")[0], 1.0, rtol=1e-3)
    assert pts.speed is None and pts.host("valid").tolist() == [1]


def test_invalid_envs_answer_nan(device):
    course = make_course(device)
    track = course.generator.result
    pos, yaw = poses(track, 4)
    q = quats(yaw)
    pos[1] = np.nan  # a non-finite position: the localizer has no answer either
    q[2] = np.nan  # a non-finite orientation
    course.bind(
        position=wp.array(pos, dtype=wp.vec3f, device=device),
        orientation=wp.array(q, dtype=wp.quatf, device=device),
    )
    track.valid.assign(np.array([1, 1, 1, 0, 1], np.int32))  # env 3: an invalid course
    got = host(course.step()["lookahead"])
    assert got["valid"].tolist() == [1, 0, 0, 0, 1]
    for k in ROWS:
        if k in got:
            assert np.isnan(got[k][[1, 2, 3]]).all(), k
            assert np.isfinite(got[k][[0, 4]]).all(), k


def test_recorded_step_replays_like_eager(device):
    course = make_course(device, "racing_line")
    track = course.generator.result
    pos, yaw = poses(track, 5)
    p, q = bind(course, pos, yaw)
    course.step()  # load the modules before recording
    with wp.ScopedCapture(device=device) as cap:
        course.step()
    la = course.components["lookahead"].result
    for seed in (6, 7):
        pos, yaw = poses(track, seed)
        p.assign(pos)
        q.assign(quats(yaw))
        want = {k: v.copy() for k, v in host(course.step()["lookahead"]).items()}
        for k in ROWS:
            getattr(la, k).fill_(7.0)
        la.valid.fill_(7)
        wp.capture_launch(cap.graph)
        got = host(la)
        for k in want:
            assert got[k].tobytes() == want[k].tobytes(), k


def test_any_cpu_thread_count_gives_the_same_bytes():
    out = []
    for threads in (1, 3):
        course = make_course("cpu", cpu_threads=threads)
        assert course.generator.cpu_threads == threads
        pos, yaw = poses(course.generator.result, 8)
        bind(course, pos, yaw)
        out.append(host(course.step()["lookahead"]))
    for k in out[0]:
        assert out[0][k].tobytes() == out[1][k].tobytes(), k


def test_masked_regeneration_and_memory(device):
    course = make_course(device)
    comp = course.components["lookahead"]
    assert tools.check_component(comp, course) == []
    gen = course.generator
    planned = comp.planned_bytes(gen.layout, gen.config)
    assert planned == _allocated_by_component(course)["lookahead"] > 0
    pos, yaw = poses(gen.result, 9)
    bind(course, pos, yaw)
    course.step()
    mask = wp.array(np.array([0, 1, 0, 0, 1], np.int32), device=device)
    course.regenerate(mask=mask, advance=True)
    course.step()
    assert_matches_oracle(course, pos, yaw)  # the new courses' points, the others' too


def test_component_order_names_and_families():
    comp = tools.Lookahead(4, 0.1, along="racing_line", after=("acme.x",))
    assert comp.name == "lookahead" and comp.along == "racing_line"
    assert comp.after == ("acme.x", "localizer", "racing_line") and comp.source is None
    assert comp.requires == ("localizer", "racing_line")
    assert tools.Lookahead(4, 0.1, name="la2").after == ("localizer",)
    with pytest.raises(ValueError, match="localizer"):
        Course.track(
            presets.track(num_envs=2, device="cpu"),
            checkpoint_spacing=0.6,
            extra=[tools.Lookahead(4, 0.1)],
        )
    with pytest.raises(ValueError, match="racing_line"):
        Course.track(
            presets.track(num_envs=2, device="cpu"),
            checkpoint_spacing=0.6,
            extra=[tools.Localizer(), tools.Lookahead(4, 0.1, along="racing_line")],
        )
    with pytest.raises(TypeError, match="track"):
        Course.gates(
            presets.gates(num_envs=2, device="cpu", gate_width=0.1),
            extra=[tools.Lookahead(4, 0.1)],
        )


def test_bind_and_settings_are_refused_before_anything_runs(device):
    course = course_of(device)
    la = course.components["lookahead"].utility
    bad = wp.zeros(E + 1, dtype=wp.vec3f, device=device)
    before = host(la.points)
    with pytest.raises(ValueError, match="position"):
        la.sample(course.components["localizer"].result.s, bad, bad)
    with pytest.raises(TypeError, match="orientation"):
        good = wp.zeros(E, dtype=wp.vec3f, device=device)
        la.sample(course.components["localizer"].result.s, good, good)
    for k, v in host(la.points).items():
        assert v.tobytes() == before[k].tobytes(), k
    for kwargs, error, match in (
        ({"num_points": 0}, ValueError, "num_points = 0"),
        ({"num_points": 2.5}, TypeError, "num_points"),
        ({"num_points": None}, TypeError, "num_points is required"),
        ({"spacing": -1.0}, ValueError, "spacing"),
        ({"spacing": float("nan")}, ValueError, "spacing"),
        ({"along": "left"}, ValueError, "along"),
    ):
        args = {"num_points": 4, "spacing": 0.1, "along": "center"} | kwargs
        with pytest.raises(error, match=match):
            tools.Lookahead(args.pop("num_points"), args.pop("spacing"), **args)


def test_course_bind_refuses_a_bad_orientation_and_keeps_the_binding(device):
    course = course_of(device)
    pos, yaw = poses(course.generator.result, 10)
    p, q = bind(course, pos, yaw)
    want = host(course.step()["lookahead"])
    for bad, error in (
        (wp.zeros(E, dtype=wp.vec4f, device=device), TypeError),
        (wp.zeros(E + 1, dtype=wp.quatf, device=device), ValueError),
    ):
        with pytest.raises(error, match="orientation"):
            course.bind(position=p, orientation=bad)
    assert course.components["lookahead"].bound["orientation"] is q
    got = host(course.step()["lookahead"])
    for k in want:
        assert got[k].tobytes() == want[k].tobytes(), k


def test_source_is_the_deprecated_name_of_along():
    with pytest.warns(DeprecationWarning, match="along"):
        comp = tools.Lookahead(4, 0.1, source="racing_line")
    assert comp.along == "racing_line" and comp.settings == tools.LookaheadSettings(
        num_points=4, spacing=0.1, along="racing_line"
    )
