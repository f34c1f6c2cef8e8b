"""Fuzz cases of the minimum-time planner's new inputs: its settings (drawn from their
Tunable declarations, the error oracle of ``tests/support/strategies.py``), any points,
counts, validity flags and boundary velocities in its arrays, ``CourseConfig.min_time``, and the
waypoint paths of ``track_gen.io`` (``WaypointPath``, ``path_gates``, ``gates_spec``).

A planner never crashes, hangs or leaks NaN into an env it answers: an env with an unusable
input answers NaN rows with its ``MinTimeStatus`` bit, every other env a finite time and a
trajectory the float64 oracle accepts (``tests/oracles/min_time.py``)."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import GateGenConfig, GateGenerator, io
from track_gen.core.extents import COORD_LIMIT
from track_gen.course import CourseConfig
from track_gen.stages.gate_frames import GATE_WIDTH
from track_gen.tools import MinTime, MinTimeStatus, MinTimeUtility
from track_gen.tools.min_time import GRAVITY, ITERATIONS, SAMPLES, T_MAX, V_MAX

from ..oracles.min_time import check_trajectory
from ..support.strategies import examples, expected_error, values

pytestmark = pytest.mark.fuzz

FIELDS = (T_MAX, V_MAX, GRAVITY, SAMPLES, ITERATIONS)
GOOD = {"t_max": 30.0, "v_max": 15.0, "gravity": 9.81, "samples": 4, "iterations": 60}


def _expected(field, value):
    """The oracle, plus the rule between t_max and gravity."""
    t = next(f for f in FIELDS if f.name == field)
    err = expected_error(t, value)
    if err is None:
        s = {**GOOD, field: value}
        if not float(s["t_max"]) >= 1.001 * float(s["gravity"]):
            err = ValueError
    return err


@settings(max_examples=examples(60))
@given(
    st.sampled_from([f.name for f in FIELDS]).flatmap(
        lambda name: st.tuples(st.just(name), values(next(f for f in FIELDS if f.name == name)))
    )
)
def test_settings_follow_their_declarations(case):
    field, value = case
    want = _expected(field, value)
    if want is None:
        comp = MinTime(**{**GOOD, field: value})
        assert comp.settings[field] == (
            int(value) if field in ("samples", "iterations") else float(value)
        )
    else:
        with pytest.raises(want, match=f"MinTime.{field}|t_max"):
            MinTime(**{**GOOD, field: value})


# ------------------------------------------------------------------------------ array contents
E, K = 4, 6


@functools.cache
def _planner(closed: bool):
    pts = wp.zeros(E * K, dtype=wp.vec3f, device="cpu")
    cnt = wp.zeros(E, dtype=wp.int32, device="cpu")
    kw = {}
    if not closed:
        kw = {
            "v_start": wp.zeros(E, dtype=wp.vec3f, device="cpu"),
            "v_end": wp.zeros(E, dtype=wp.vec3f, device="cpu"),
        }
    valid = wp.ones(E, dtype=wp.int32, device="cpu")
    return MinTimeUtility(pts, cnt, closed=closed, valid=valid, **kw, **GOOD)


coords = st.one_of(
    st.floats(-30, 30, width=32),
    st.sampled_from([0.0, 1e-30, -1e-30, 1e18, -1e18, 1e19, 3.4e38, float("nan"), float("inf")]),
    st.floats(width=32, allow_nan=True, allow_infinity=True),
)
point = st.tuples(coords, coords, coords)
small_point = st.tuples(*(st.floats(-30, 30, width=32),) * 3)
env_points = st.one_of(
    st.lists(small_point, min_size=K, max_size=K),  # usable
    st.lists(st.one_of(small_point, point), min_size=K, max_size=K),  # anything
    st.lists(st.sampled_from([(0.0, 0.0, 1.0), (5.0, 0.0, 1.0)]), min_size=K, max_size=K),
)
counts = st.one_of(st.integers(-3, K + 3), st.sampled_from([2, K, 2**31 - 1, -(2**31)]))
velocity = st.one_of(
    st.tuples(*(st.floats(-20, 20, width=32),) * 3),
    st.sampled_from([(0.0, 0.0, 0.0), (float("nan"), 0.0, 0.0), (1e30, 0.0, 0.0)]),
)


def _usable(p, n, valid, closed, vs, ve, vmax):
    """(status bits the env must show or 0, merged segment count) by the documented rules."""
    if not (2 <= n <= K) or valid == 0:
        return int(MinTimeStatus.INPUT), 0
    rows = p[:n].astype(np.float64)
    if not (np.isfinite(rows).all() and (np.abs(rows) <= COORD_LIMIT).all()):
        return int(MinTimeStatus.INPUT), 0
    if not closed:
        for v in (vs, ve):
            v = np.asarray(v, np.float64)
            if not (np.isfinite(v).all() and (np.abs(v) <= COORD_LIMIT).all()):
                return int(MinTimeStatus.INPUT), 0
    return 0, None


@settings(max_examples=examples(40))
@given(
    st.booleans(),
    st.lists(env_points, min_size=E, max_size=E),
    st.lists(counts, min_size=E, max_size=E),
    st.lists(st.sampled_from([1, 1, 1, 0, 7]), min_size=E, max_size=E),
    st.lists(velocity, min_size=E, max_size=E),
    st.lists(velocity, min_size=E, max_size=E),
)
def test_any_points_give_a_feasible_trajectory_or_nan_with_a_status(
    closed, pts, cnt, valid, vs, ve
):
    planner = _planner(closed)
    p = np.array(pts, np.float32)
    planner.points.assign(p.reshape(-1, 3))
    planner.count.assign(np.array(cnt, np.int64).clip(-(2**31), 2**31 - 1).astype(np.int32))
    planner.valid.assign(np.array(valid, np.int32))
    if not closed:
        planner.v_start.assign(np.array(vs, np.float32))
        planner.v_end.assign(np.array(ve, np.float32))
    r = planner.plan()
    st_ = r.status.numpy()
    t = r.time.numpy()
    for e in range(E):
        must, _ = _usable(p[e], cnt[e], valid[e], closed, vs[e], ve[e], GOOD["v_max"])
        assert bool(st_[e] & int(MinTimeStatus.INPUT)) == bool(must), (e, st_[e], must)
        ok = st_[e] in (0, int(MinTimeStatus.NOT_CONVERGED))
        rows = r.host("position")[e]
        if not ok:
            assert np.isnan(t[e]) and r.sample_count.numpy()[e] == 0 and np.isnan(rows).all()
            continue
        n = int(cnt[e])
        assert np.isfinite(t[e]) and t[e] > 0
        c = check_trajectory(
            r,
            e,
            p[e, :n],
            closed=closed,
            t_max=GOOD["t_max"],
            v_max=GOOD["v_max"],
            gravity=GOOD["gravity"],
            v_start=None if closed else vs[e],
            v_end=None if closed else ve[e],
        )
        assert c["thrust_ratio"] <= 1 + 1e-4 and c["speed_ratio"] <= 1 + 1e-4, c
        assert c["through_points"] <= 1e-4 and c["integration_p"] <= 1e-4, c


# ------------------------------------------------------------------------------ course config
@settings(max_examples=examples(40))
@given(
    st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {"t_max": values(T_MAX), "v_max": values(V_MAX)},
            optional={"gravity": values(GRAVITY), "samples": values(SAMPLES), "x": st.just(1)},
        ),
        st.sampled_from([3, "t_max", [("t_max", 30.0)]]),
    )
)
def test_course_config_min_time(value):
    gen = GateGenConfig(num_envs=2, device="cpu", gate_width=1.0)
    if value is None:
        assert CourseConfig(mode="gates", gen=gen, min_time=None).min_time is None
        return
    if not isinstance(value, dict):
        with pytest.raises(
            TypeError, match="min_time must be None, a tools.MinTimeSettings or a mapping"
        ):
            CourseConfig(mode="gates", gen=gen, min_time=value)
        return
    want = None
    if "x" in value:
        want = ValueError
    else:
        for t in FIELDS:
            if t.name in value and expected_error(t, value[t.name]) is not None:
                want = expected_error(t, value[t.name])
                break
        if want is None:
            s = {**{t.name: t.default for t in FIELDS}, **value}
            if not float(s["t_max"]) >= 1.001 * float(s["gravity"]):
                want = ValueError
    if want is None:
        cfg = CourseConfig(mode="gates", gen=gen, min_time=value)
        assert set(cfg.min_time) == {t.name for t in FIELDS}
    else:
        with pytest.raises(want):
            CourseConfig(mode="gates", gen=gen, min_time=value)


# ------------------------------------------------------------------------------ io
any_vec = st.one_of(point, st.lists(coords, min_size=0, max_size=4), st.just("abc"))


@settings(max_examples=examples(40))
@given(any_vec, st.lists(any_vec, min_size=0, max_size=4), any_vec)
def test_waypoint_paths_accept_finite_points_only(start, wps, end):
    try:
        s, w, e_ = np.array(start, np.float64), np.array(wps, np.float64), np.array(end, np.float64)
        shaped = s.shape == (3,) and e_.shape == (3,) and w.ndim == 2 and w.shape[1:] == (3,)
        shaped = shaped and len(w) >= 1
        fine = shaped and all(
            np.isfinite(a).all() and (np.abs(a) <= COORD_LIMIT).all() for a in (s, w, e_)
        )
        fine = fine and bool(np.ptp(np.vstack([s, w, e_]), axis=0).any())
    except (ValueError, TypeError):
        fine = False
    if not fine:
        with pytest.raises((TypeError, ValueError)):
            io.path_gates(start, wps, end)
        return
    pos, fwd = io.path_gates(start, wps, end)
    assert len(pos) >= 2 and np.isfinite(pos).all() and np.isfinite(fwd).all()
    assert np.allclose(np.linalg.norm(fwd, axis=1), 1.0)


@functools.cache
def _path():
    return io.WaypointPath("p", [0, 0, 1], [[6, 0, 1], [6, 6, 2]], [0, 6, 1])


@settings(max_examples=examples(30))
@given(values(GATE_WIDTH), st.sampled_from(["env", "draw", "cycle", 3]))
def test_gates_spec_gate_width_and_assign(width, assign):
    want = None  # the order of the checks: assign, then the width
    if not (isinstance(assign, str) and assign in ("env", "draw")):
        want = TypeError if not isinstance(assign, str) else ValueError
    else:
        want = expected_error(GATE_WIDTH, width, write=True)
    if want is not None:
        with pytest.raises(want):
            io.gates_spec([_path()], num_envs=2, device="cpu", gate_width=width, assign=assign)
        return
    seq = GateGenerator(
        io.gates_spec([_path()], num_envs=2, device="cpu", gate_width=width, assign=assign)
    ).generate()
    assert np.allclose(seq.host("half_size")[:, :3], np.float32(float(width)) / 2)


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**6), 10**6),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=4),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)
vec_json = st.one_of(st.lists(st.floats(-50, 50), min_size=3, max_size=3), json_values)


@settings(max_examples=examples(40))
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "name": json_values,
            "start": st.fixed_dictionaries({"position": vec_json}, optional={"velocity": vec_json}),
            "end": st.one_of(st.fixed_dictionaries({"position": vec_json}), json_values),
            "waypoints": st.one_of(
                st.lists(st.lists(st.floats(-50, 50), min_size=3, max_size=3), max_size=3),
                json_values,
            ),
            "vehicle": st.one_of(
                st.fixed_dictionaries(
                    {}, optional={"max_speed": json_values, "gravity": json_values}
                ),
                json_values,
            ),
            "reference": json_values,
        },
    )
)
def test_any_json_reads_as_a_path_or_a_named_error(tmp_path_factory, data):
    """Whatever the file holds: a WaypointPath, or a TypeError / ValueError naming the file."""
    f = tmp_path_factory.mktemp("wp") / "path.json"
    f.write_text(json.dumps(data))
    try:
        p = io.read_waypoint_path(f)
    except (TypeError, ValueError) as err:
        assert str(f) in str(err)
        return
    assert p.points().shape[1] == 3 and np.isfinite(p.points()).all()
