"""io.read_waypoint_path, path_gates, gates_spec and waypoint_arrays: drone waypoint paths as
gate courses and planner inputs (the published paths from ``../shared/data/drone`` when
present; the rest from paths written here)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import warp as wp

from track_gen import FailBit, GateGenerator, io
from track_gen.course import Course

DRONE_DATA = Path(
    os.environ.get(
        "TRACK_GEN_DRONE_DATA", Path(__file__).resolve().parents[2].parent / "shared/data/drone"
    )
)

CUBOID = {
    "name": "box",
    "start": {"position": [0, 0, 0], "velocity": [0, 0, 0]},
    "end": {"position": [5, 5, 2.5], "velocity": [1, 0, 0]},
    "waypoints": [[0, 10, 0], [0, 10, 5], [10, 0, 5], [0, 0, 0]],
    "vehicle": {"max_thrust_accel_norm": 34.32, "max_speed": 90.0, "gravity": 9.8066},
    "reference": {"time_s": 4.83, "solve_ms": 3.5},
}


def write(tmp_path, data, name="path.json") -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(data))
    return f


def test_read_a_path(tmp_path):
    p = io.read_waypoint_path(write(tmp_path, CUBOID))
    assert p.name == "box" and p.waypoints.shape == (4, 3)
    assert np.array_equal(p.end_velocity, [1, 0, 0]) and not p.waypoints.flags.writeable
    assert (p.t_max, p.v_max, p.gravity) == (34.32, 90.0, 9.8066)
    assert (p.reference_time, p.reference_ms) == (4.83, 3.5)
    assert np.array_equal(p.points(), np.vstack([[0, 0, 0], CUBOID["waypoints"], [5, 5, 2.5]]))
    bare = {k: CUBOID[k] for k in ("start", "end", "waypoints")}
    bare["start"] = {"position": [0, 0, 0]}
    q = io.read_waypoint_path(write(tmp_path, bare, "bare.json"))
    assert q.name == "bare" and q.t_max is None and q.reference_time is None
    assert np.array_equal(q.start_velocity, np.zeros(3))


@pytest.mark.parametrize("name", ["cuboid", "eight", "race"])
def test_read_the_published_paths(name):
    f = DRONE_DATA / f"{name}.json"
    if not f.exists():
        pytest.skip(f"no published drone path at {f}")
    p = io.read_waypoint_path(f)
    assert p.name == name and p.t_max == 34.32 and p.v_max == 90.0 and p.gravity == 9.8066
    assert p.reference_time > 0 and not p.start_velocity.any() and not p.end_velocity.any()


@pytest.mark.parametrize(
    ("edit", "error", "match"),
    [
        (lambda d: d.pop("waypoints"), ValueError, "'waypoints' is missing"),
        (lambda d: d["start"].pop("position"), ValueError, "'position' is missing"),
        (lambda d: d.update(waypoints=[[0, 1]]), ValueError, r"waypoints must be \[K >= 1, 3\]"),
        (lambda d: d.update(waypoints=[]), ValueError, r"waypoints must be \[K >= 1, 3\]"),
        (lambda d: d.update(waypoints=[[0, "a", 1]]), TypeError, "real numbers"),
        (lambda d: d["end"].update(position=[0, 0, float("nan")]), ValueError, "finite"),
        (lambda d: d["end"].update(position=[0, 0, 1e300]), ValueError, "finite"),
        (lambda d: d["vehicle"].update(max_speed=-1), ValueError, "v_max = -1"),
        (lambda d: d["vehicle"].update(gravity=-1), ValueError, "gravity"),
        (lambda d: d.update(start=[0, 0, 0]), ValueError, "expected an object"),
        (
            lambda d: d.update(
                start={"position": [1, 1, 1]}, end={"position": [1, 1, 1]}, waypoints=[[1, 1, 1]]
            ),
            ValueError,
            "all one point",
        ),
    ],
)
def test_bad_files_refused_naming_the_file_and_key(tmp_path, edit, error, match):
    data = json.loads(json.dumps(CUBOID))
    edit(data)
    f = write(tmp_path, data)
    with pytest.raises(error, match=match) as info:
        io.read_waypoint_path(f)
    assert str(f) in str(info.value)


def test_unreadable_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        io.read_waypoint_path(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a UTF-8 JSON file"):
        io.read_waypoint_path(tmp_path / "bad.json")
    with pytest.raises(TypeError, match="str or os.PathLike"):
        io.read_waypoint_path(3)


# ------------------------------------------------------------------------------ gates
def _bisector(before, p, after):
    a = (p - before) / np.linalg.norm(p - before)
    b = (after - p) / np.linalg.norm(after - p)
    return (a + b) / np.linalg.norm(a + b)


def test_path_gates_face_along_the_path():
    start = np.array([0.0, 0, 0])
    wps = np.array([[0, 10, 0], [0, 10, 5], [10, 0, 5], [0, 0, 0]], float)
    end = np.array([5.0, 5, 2.5])
    pos, fwd = io.path_gates(start, wps, end)
    assert np.array_equal(pos, np.vstack([wps, end]))
    poly = np.vstack([start, wps, end])
    for i in range(4):
        assert np.allclose(fwd[i], _bisector(poly[i], poly[i + 1], poly[i + 2]))
    assert np.allclose(fwd[4], (end - wps[3]) / np.linalg.norm(end - wps[3]))
    assert np.allclose(np.linalg.norm(fwd, axis=1), 1.0)


def test_path_gates_closing_lap_u_turn_and_repeated_points():
    # the end returns to the start: no gate there (the lap closes), the last gate faces it
    pos, fwd = io.path_gates([0, 0, 0], [[10, 0, 0], [10, 10, 0], [0, 10, 0]], [0, 0, 0])
    assert len(pos) == 3
    assert np.allclose(fwd[2], _bisector(np.array([10, 10, 0]), pos[2], np.zeros(3)))
    # a U-turn faces the incoming direction; a repeated point takes the one before it
    pos, fwd = io.path_gates([0, 0, 0], [[10, 0, 0], [10, 0, 0], [0, 0, 0]], [0, 5, 0])
    assert np.allclose(fwd[0], [1, 0, 0]) and np.allclose(fwd[1], [1, 0, 0])
    # one waypoint and a return: two gates
    pos, fwd = io.path_gates([0, 0, 0], [[4, 0, 0]], [0, 0, 0])
    assert len(pos) == 2 and np.allclose(fwd[1], [-1, 0, 0])


def test_gates_spec_builds_valid_courses_of_the_path_gates(tmp_path):
    paths = [io.read_waypoint_path(write(tmp_path, CUBOID))]
    loop = io.WaypointPath("loop", [0, 0, 1], [[10, 0, 1], [10, 10, 3], [0, 10, 1]], [0, 0, 1])
    paths.append(loop)
    spec = io.gates_spec(paths, num_envs=4, device="cpu", gate_width=1.5)
    seq = GateGenerator(spec).generate()
    assert (seq.valid.numpy() == 1).all(), seq.fail_mask.numpy()
    assert seq.count.numpy().tolist() == [5, 3, 5, 3]
    for e in range(4):
        pos, fwd = paths[e % 2].gates()
        n = len(pos)
        assert np.allclose(seq.host("position")[e, :n], pos, atol=1e-5)
        assert np.allclose(seq.host("forward")[e, :n], fwd, atol=1e-5)  # full_tangent
        assert np.allclose(seq.host("half_size")[e, :n], 0.75)
        assert np.isnan(seq.host("position")[e, n:]).all()
    # yaw_only keeps the gates level, facing the horizontal direction
    level = GateGenerator(
        io.gates_spec(paths, num_envs=2, device="cpu", gate_width=1.5, gate_align="yaw_only")
    ).generate()
    assert np.allclose(level.host("forward")[0, :5, 2], 0.0)
    # the stacked cuboid gates cross in plan view: refused with the check on
    checked = GateGenerator(
        io.gates_spec(paths, num_envs=2, device="cpu", gate_width=1.5, gate_check_bars=True)
    ).generate()
    assert checked.fail_mask.numpy()[0] & int(FailBit.CROSSING_BARS)


def test_gates_spec_draw_is_a_function_of_the_seed():
    paths = [
        io.WaypointPath(f"p{i}", [0, 0, 0], [[5 + i, 0, 0], [5, 5, 1]], [0, 5, 2]) for i in range(3)
    ]
    spec = io.gates_spec(paths, num_envs=16, device="cpu", gate_width=1.0, assign="draw")
    a = GateGenerator(spec, seeds=3).generate().host("position").copy()
    b = GateGenerator(spec, seeds=3).generate().host("position")
    assert np.array_equal(a, b, equal_nan=True)
    firsts = {float(a[e, 0, 0]) for e in range(16)}
    assert len(firsts) > 1


def test_a_path_course_flies_with_checkpoints_and_the_par(tmp_path):
    path = io.read_waypoint_path(write(tmp_path, CUBOID))
    course = Course.gates(
        io.gates_spec([path], num_envs=2, device="cpu", gate_width=1.5),
        min_time={"t_max": path.t_max, "v_max": path.v_max, "gravity": path.gravity},
    )
    par = course.components["min_time"].result
    assert (par.status.numpy() == 0).all() and (par.time.numpy() > 0).all()
    # fly the path (start, then each gate centre) in straight lines: every gate is passed
    pos = wp.zeros(2, dtype=wp.vec3f, device="cpu")
    course.bind(position=pos)
    pos.assign(np.tile(path.start.astype(np.float32), (2, 1)))
    course.reset()
    stops = np.vstack([path.start, path.gates()[0]])
    for a, b in zip(stops[:-1], stops[1:], strict=True):
        for t in np.linspace(0, 1, 9)[1:]:
            pos.assign(np.tile((a + t * (b - a) + 1e-3 * (b - a)).astype(np.float32), (2, 1)))
            res = course.step()
    assert res.events.progress.numpy().tolist() == [5, 5]


def test_gates_spec_and_waypoint_arrays_refusals():
    p = io.WaypointPath("p", [0, 0, 0], [[5, 0, 0]], [5, 5, 0])
    with pytest.raises(TypeError, match="WaypointPath"):
        io.gates_spec(["x"], num_envs=2, gate_width=1.0)
    with pytest.raises(TypeError, match="WaypointPath"):
        io.gates_spec("x", num_envs=2, gate_width=1.0)
    with pytest.raises(ValueError, match="empty"):
        io.gates_spec([], num_envs=2, gate_width=1.0)
    with pytest.raises(ValueError, match="gate_width"):
        io.gates_spec([p], num_envs=2, gate_width=0.0)
    with pytest.raises(TypeError, match="sets 'generator' itself"):
        io.gates_spec([p], num_envs=2, gate_width=1.0, generator="bezier")
    with pytest.raises(ValueError, match="assign"):
        io.gates_spec([p], num_envs=2, gate_width=1.0, assign="cycle")
    with pytest.raises(ValueError, match="max_gates"):
        io.gates_spec([p], num_envs=2, gate_width=1.0, max_gates=1)
    with pytest.raises(ValueError, match="num_envs"):
        io.waypoint_arrays([p], num_envs=0)


def test_waypoint_arrays():
    a = io.WaypointPath("a", [0, 0, 0], [[5, 0, 0]], [5, 5, 0], start_velocity=[1, 2, 3])
    b = io.WaypointPath("b", [0, 0, 0], [[5, 0, 0], [5, 5, 5]], [0, 5, 0])
    arr = io.waypoint_arrays([a, b], num_envs=3, device="cpu")
    pts = arr["points"].numpy().reshape(3, 4, 3)
    assert arr["count"].numpy().tolist() == [3, 4, 3]
    assert np.array_equal(pts[1], b.points()) and np.array_equal(pts[2, :3], a.points())
    assert np.isnan(pts[0, 3]).all()
    assert arr["v_start"].numpy().tolist() == [[1, 2, 3], [0, 0, 0], [1, 2, 3]]
