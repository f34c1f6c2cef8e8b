"""tools.ConeDetections / ConeDetectionsUtility against an independent float64 NumPy oracle: which
cones are seen (range, field of view), their order, positions in the agent's frame and
colours; invalid envs; the random stream of dropout and noise (determinism, replay, masked
regeneration, reset, statistics)."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from tests.course.test_course_budget import _allocated_by_component
from track_gen import tools
from track_gen.course import Course
from track_gen.course import presets as course_presets
from track_gen.pipeline import presets

E = 5
ROWS = ("position", "distance", "colour", "prop")


def make_course(device, cpu_threads=None, props_spacing=0.25, **cones):
    settings = {"max_cones": 12, "fov": 2.2, "max_range": 1.2} | cones
    max_cones = settings.pop("max_cones")
    kw = {} if cpu_threads is None else {"cpu_threads": cpu_threads}
    return Course.track(
        presets.track(num_envs=E, device=device, **kw),
        checkpoint_spacing=0.6,
        extra=[tools.Props("cone", props_spacing), tools.ConeDetections(max_cones, **settings)],
        seeds=31,
    )


def quats(yaw) -> np.ndarray:
    yaw = np.asarray(yaw, np.float64)
    q = np.zeros((len(yaw), 4), np.float32)
    q[:, 2], q[:, 3] = np.sin(yaw / 2), np.cos(yaw / 2)
    return q


def poses(track, seed):
    rng = np.random.default_rng(seed)
    count = track.count.numpy()
    c = track.host("center")
    pos = np.zeros((track.num_envs, 3), np.float32)
    for e in range(track.num_envs):
        pos[e] = c[e, rng.integers(count[e])] + np.r_[rng.uniform(-0.05, 0.05, 2), 0.03]
    return pos, rng.uniform(-np.pi, np.pi, track.num_envs)


def bind(course, pos, yaw):
    dev = course.device
    p = wp.array(np.asarray(pos, np.float32), dtype=wp.vec3f, device=dev)
    q = wp.array(quats(yaw), dtype=wp.quatf, device=dev)
    course.bind(position=p, orientation=q)
    return p, q


def host(det) -> dict:
    return {k: det.host(k).copy() for k in ROWS + ("count", "valid")}


# ------------------------------------------------------------------------------- oracle
def left_is_inner(track, e) -> bool:
    """Float64: the inner border lies on the left of the centre line (the mean of its
    distances along the left normal is positive)."""
    n = int(track.count.numpy()[e])
    c = track.host("center")[e, :n, :2].astype(np.float64)
    d = track.host("inner")[e, :n, :2] - c
    return float(np.einsum("ij,ij->i", d, track.host("normal")[e, :n, :2]).mean()) > 0


def oracle(props, track, e, p, yaw, fov, max_range):
    """``(rows, frame positions [P,3], distances [P], colours [P], seen [P], ambiguous)`` of
    env ``e``'s cones in float64, ``rows`` sorted by (distance, row)."""
    n = int(props.count.numpy()[e])
    w = props.host("position")[e, :n].astype(np.float64) - p
    cy, sy = np.cos(yaw), np.sin(yaw)
    v = np.c_[cy * w[:, 0] + sy * w[:, 1], cy * w[:, 1] - sy * w[:, 0], w[:, 2]]
    d = np.linalg.norm(v, axis=1)
    bearing = np.abs(np.arctan2(v[:, 1], v[:, 0]))
    seen = (d <= max_range) & (bearing <= fov / 2)
    ambiguous = bool(
        (np.abs(d - max_range) < 1e-4).any() or (np.abs(bearing - fov / 2) < 1e-4).any()
    )
    inner = props.host("side")[e, :n] == tools.PropSide.INNER
    left = inner == left_is_inner(track, e)
    colour = np.where(left, tools.ConeColour.LEFT, tools.ConeColour.RIGHT)
    rows = np.flatnonzero(seen)
    rows = rows[np.lexsort((rows, d[rows]))]
    return rows, v, d, colour, ambiguous


def assert_matches_oracle(course, pos, yaw):
    comp = course.components["cones"]
    det, s = comp.result, comp.settings
    props = course.components["props"].result
    track = course.generator.result
    got = host(det)
    M = s["max_cones"]
    checked = 0
    for e in range(E):
        assert got["valid"][e] == 1
        rows, v, d, colour, ambiguous = oracle(
            props, track, e, pos[e].astype(np.float64), yaw[e], s["fov"], s["max_range"]
        )
        m = int(got["count"][e])
        if not ambiguous:
            assert m == min(len(rows), M)
            checked += 1
        mine = got["prop"][e, :m]
        np.testing.assert_allclose(got["position"][e, :m], v[mine], atol=1e-5)
        np.testing.assert_allclose(got["distance"][e, :m], d[mine], atol=1e-5)
        assert (np.diff(got["distance"][e, :m]) >= 0).all()
        np.testing.assert_array_equal(got["colour"][e, :m], colour[mine])
        if not ambiguous:
            gap = len(rows) <= M or d[rows[M]] - d[rows[M - 1]] > 1e-5
            if gap:  # no near tie at the cut: the same cones
                assert sorted(mine) == sorted(rows[:m])
            ties = np.abs(np.diff(d[rows[:m]])) < 1e-5
            if not ties.any():
                np.testing.assert_array_equal(mine, rows[:m])
        # padding: no NaN in an env with an answer
        np.testing.assert_array_equal(got["position"][e, m:], 0.0)
        np.testing.assert_array_equal(got["distance"][e, m:], 0.0)
        np.testing.assert_array_equal(got["colour"][e, m:], -1)
        np.testing.assert_array_equal(got["prop"][e, m:], -1)
    assert checked >= E - 1


# ------------------------------------------------------------------------------- tests
def test_visibility_order_and_colour_match_numpy(device):
    course = make_course(device)
    track = course.generator.result
    seen = 0
    for seed in (1, 2, 3):
        pos, yaw = poses(track, seed)
        bind(course, pos, yaw)
        res = course.step()
        assert res["cones"] is course.components["cones"].result
        assert_matches_oracle(course, pos, yaw)
        seen += int(res["cones"].count.numpy().sum())
    assert seen > 0
    colours = res["cones"].colour.numpy()
    assert set(colours[colours >= 0]) <= {0, 1}


def test_the_cut_keeps_the_nearest(device):
    """All around and far: every cone is a candidate, the first max_cones by distance stay."""
    course = make_course(device, max_cones=5, fov=2 * np.pi, max_range=1.0e6)
    pos, yaw = poses(course.generator.result, 4)
    bind(course, pos, yaw)
    course.step()
    np.testing.assert_array_equal(course.components["cones"].result.count.numpy(), 5)
    assert_matches_oracle(course, pos, yaw)


def test_left_and_right_cones_are_on_their_sides(device):
    """An agent on the centre line facing along it has the left cones beside it at y > 0,
    the right ones at y < 0."""
    course = make_course(device, max_cones=32, fov=2 * np.pi, max_range=0.3, props_spacing=0.04)
    track = course.generator.result
    c, t = track.host("center"), track.host("tangent")
    pos = c[:, 5].copy()
    yaw = np.arctan2(t[:, 5, 1], t[:, 5, 0])
    bind(course, pos, yaw)
    det = course.step()["cones"]
    count, p, colour = det.count.numpy(), det.host("position"), det.host("colour")
    for e in range(E):
        near = np.flatnonzero(np.abs(p[e, : count[e], 0]) < 0.05)  # beside the agent
        assert len(near) >= 2
        assert ((p[e, near, 1] > 0) == (colour[e, near] == tools.ConeColour.LEFT)).all()
        assert (colour[e, near] == tools.ConeColour.LEFT).any()
        assert (colour[e, near] == tools.ConeColour.RIGHT).any()


def test_invalid_envs_and_poses(device):
    course = make_course(device)
    track = course.generator.result
    pos, yaw = poses(track, 5)
    q = quats(yaw)
    pos[1, 0] = np.inf
    q[2] = np.nan
    course.bind(
        position=wp.array(pos, dtype=wp.vec3f, device=device),
        orientation=wp.array(q, dtype=wp.quatf, device=device),
    )
    comp = course.components["cones"]
    track.valid.assign(np.array([1, 1, 1, 0, 1], np.int32))
    comp.utility.refresh()  # env 3's course is now invalid
    got = host(course.step()["cones"])
    assert got["valid"].tolist() == [1, 0, 0, 0, 1]
    bad = [1, 2, 3]
    np.testing.assert_array_equal(got["count"][bad], 0)
    assert np.isnan(got["position"][bad]).all() and np.isnan(got["distance"][bad]).all()
    assert (got["colour"][bad] == -1).all() and (got["prop"][bad] == -1).all()
    for k in ("position", "distance"):
        assert np.isfinite(got[k][[0, 4]]).all()


def run(course, steps):
    out = []
    for _ in range(steps):
        out.append(host(course.step()["cones"]))
    return out


NOISY = {"dropout": 0.3, "noise": 0.01}


def test_noise_is_deterministic_and_replays_like_eager(device):
    a, b = make_course(device, **NOISY), make_course(device, **NOISY)
    pos, yaw = poses(a.generator.result, 6)
    bind(a, pos, yaw)
    bind(b, pos, yaw)
    eager = run(a, 3)
    assert eager[0]["position"].tobytes() != eager[1]["position"].tobytes()  # a new draw
    b.step()  # load the modules before recording
    with wp.ScopedCapture(device=device) as cap:
        b.step()
    b.reset()  # every step counter back to 0
    np.testing.assert_array_equal(b.components["cones"].utility.step.numpy(), 0)
    det = b.components["cones"].result
    for want in eager:
        det.position.fill_(wp.vec3f(7.0, 7.0, 7.0))
        det.distance.fill_(7.0)
        for arr in (det.colour, det.prop, det.count, det.valid):
            arr.fill_(7)
        wp.capture_launch(cap.graph)
        got = host(det)
        for k in want:
            assert got[k].tobytes() == want[k].tobytes(), k
    np.testing.assert_array_equal(b.components["cones"].utility.step.numpy(), 3)


def test_masked_regeneration_leaves_other_streams_and_reset_restarts_one(device):
    a, b = make_course(device, **NOISY), make_course(device, **NOISY)
    pos, yaw = poses(a.generator.result, 7)
    bind(a, pos, yaw)
    bind(b, pos, yaw)
    first = run(a, 1)[0]
    run(a, 1)
    run(b, 2)
    mask = wp.array(np.array([0, 1, 0, 0, 1], np.int32), device=device)
    b.regenerate(mask=mask, advance=True)
    assert b.components["cones"].utility.step.numpy().tolist() == [2, 0, 2, 2, 0]
    for x, y in zip(run(a, 2), run(b, 2), strict=True):
        for k in ROWS + ("count",):
            for e in (0, 2, 3):
                assert x[k][e].tobytes() == y[k][e].tobytes(), (k, e)
    # reset(mask): env 0's stream restarts at the draw of its first step
    m0 = wp.array(np.array([1, 0, 0, 0, 0], np.int32), device=device)
    a.reset(m0)
    assert a.components["cones"].utility.step.numpy().tolist() == [0, 4, 4, 4, 4]
    again = run(a, 1)[0]
    for k in ROWS + ("count",):
        assert again[k][0].tobytes() == first[k][0].tobytes(), k
    assert again["position"][1].tobytes() != first["position"][1].tobytes()  # env 1 went on


def test_dropout_and_noise_statistics():
    """All around and far, every cone is a candidate: dropout 0.5 keeps about half of them,
    noise 0.02 scatters the positions by a Gaussian of that deviation around the exact ones."""
    course = make_course("cpu", max_cones=256, fov=2 * np.pi, max_range=1e6, dropout=0.5)
    exact = make_course("cpu", max_cones=256, fov=2 * np.pi, max_range=1e6, noise=0.02)
    pos, yaw = poses(course.generator.result, 8)
    bind(course, pos, yaw)
    bind(exact, pos, yaw)
    total = course.components["props"].result.count.numpy().sum()
    kept = np.mean([r["count"].sum() / total for r in run(course, 20)])
    assert abs(kept - 0.5) < 0.03  # 20 steps of ~300 cones: sd ~0.006
    base = make_course("cpu", max_cones=256, fov=2 * np.pi, max_range=1e6)
    bind(base, pos, yaw)
    ref = run(base, 1)[0]
    resid = []
    for r in run(exact, 10):
        for e in range(E):
            m = r["count"][e]
            order = np.argsort(r["prop"][e, :m])
            ref_order = np.argsort(ref["prop"][e, : ref["count"][e]])
            assert m == ref["count"][e]
            resid.append(r["position"][e, order] - ref["position"][e, ref_order])
    resid = np.concatenate(resid)
    assert abs(resid.std() / 0.02 - 1) < 0.05 and abs(resid.mean()) < 1e-3


def test_any_cpu_thread_count_gives_the_same_bytes():
    out = []
    for threads in (1, 3):
        course = make_course("cpu", cpu_threads=threads, **NOISY)
        assert course.generator.cpu_threads == threads
        pos, yaw = poses(course.generator.result, 9)
        bind(course, pos, yaw)
        out.append(run(course, 2))
    for x, y in zip(*out, strict=True):
        for k in x:
            assert x[k].tobytes() == y[k].tobytes(), k


def test_contract_memory_and_an_all_zero_mask(device):
    a, b = make_course(device, **NOISY), make_course(device, **NOISY)
    comp = a.components["cones"]
    assert tools.check_component(comp, a) == []
    gen = a.generator
    assert comp.planned_bytes(gen.layout, gen.config) == _allocated_by_component(a)["cones"]
    names = list(a.components)
    assert names.index("props") < names.index("cones")
    pos, yaw = poses(gen.result, 11)
    bind(a, pos, yaw)
    bind(b, pos, yaw)
    run(a, 2)
    run(b, 2)
    zero = wp.zeros(E, dtype=wp.int32, device=device)
    b.regenerate(mask=zero, advance=True)  # an exact no-op: every stream goes on
    assert b.components["cones"].utility.step.numpy().tolist() == [2] * E
    x, y = run(a, 1)[0], run(b, 1)[0]
    for k in x:
        assert x[k].tobytes() == y[k].tobytes(), k


def test_wall_props_are_refused_before_the_generator_is_built(monkeypatch):
    def no_build(*args, **kwargs):
        raise AssertionError("the generator was built")

    monkeypatch.setattr(course_presets, "TrackGenerator", no_build)
    with pytest.raises(ValueError, match="kind='cone'"):
        Course.track(
            presets.track(num_envs=2, device="cpu"),
            checkpoint_spacing=0.6,
            extra=[tools.Props("wall", 0.3), tools.ConeDetections(4, fov=1.0, max_range=1.0)],
        )


def test_missing_props_gate_course_and_bad_settings_are_refused():
    with pytest.raises(ValueError, match="props"):
        Course.track(
            presets.track(num_envs=2, device="cpu"),
            checkpoint_spacing=0.6,
            extra=[tools.ConeDetections(4, fov=1.0, max_range=1.0)],
        )
    with pytest.raises(TypeError, match="track"):  # a gate course has no props of its own
        Course.gates(
            presets.gates(num_envs=2, device="cpu", gate_width=0.1),
            extra=[tools.ConeDetections(4, fov=1.0, max_range=1.0, source="centerline")],
        )
    base = {"fov": 1.0, "max_range": 1.0}
    for max_cones, kwargs, error, match in (
        (0, {}, ValueError, "max_cones = 0"),
        (None, {}, TypeError, "max_cones is required"),
        (4.0, {}, TypeError, "max_cones"),
        (4, {"fov": 0.0}, ValueError, "fov = 0.0"),
        (4, {"fov": 7.0}, ValueError, "fov"),
        (4, {"max_range": None}, TypeError, "max_range is required"),
        (4, {"max_range": -1.0}, ValueError, "max_range"),
        (4, {"dropout": 1.5}, ValueError, "dropout"),
        (4, {"noise": float("inf")}, ValueError, "noise"),
    ):
        with pytest.raises(error, match=match):
            tools.ConeDetections(max_cones, **(base | kwargs))


def test_detect_refuses_bad_arrays_before_it_launches(device):
    course = make_course(device)
    u = course.components["cones"].utility
    before = host(u.detections)
    steps = u.step.numpy().copy()
    good = wp.zeros(E, dtype=wp.vec3f, device=device)
    with pytest.raises(ValueError, match="position"):
        u.detect(wp.zeros(E - 1, dtype=wp.vec3f, device=device), good)
    with pytest.raises(TypeError, match="orientation"):
        u.detect(good, good)
    for k, v in host(u.detections).items():
        assert v.tobytes() == before[k].tobytes(), k
    assert (u.step.numpy() == steps).all()
