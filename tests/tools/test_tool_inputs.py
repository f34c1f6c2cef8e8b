"""Hand-made courses and out-of-range poses through every tool utility.

Hand-made :class:`~track_gen.Track`, :class:`~track_gen.GateSequence` and
:class:`~track_gen.tools.CheckpointsResult` batches (built through their public ``allocate`` and
``assign``) hold counts below 0 and above the row stride, valid flags 0, 1 and others, and NaN,
inf, huge (1e19 .. float32 max) and tiny values in any array, or a whole env scaled far out.
Every utility that reads one (``BandCollisionUtility`` in both methods and both layouts, with and
without ``clearance``, ``HeightFieldUtility``, ``CheckpointsUtility``, ``ProgressUtility``,
``PropsUtility``, ``LocalizerUtility``, ``CourseLineUtility``, ``DiscCollisionUtility``,
``FrameCollisionUtility``) must build, refresh and answer without crashing or hanging, decide which
envs it can use by the documented rule (:mod:`track_gen.core.extents`: a valid env whose
coordinates are finite and within ``COORD_LIMIT``), answer NaN-free for those envs and the
documented "no course" answer for the others. Poses (positions, quaternions, half extents)
take any float32, up to its maximum: a finite pose of a usable env gets finite answers.

The second part steps built courses (track: segments, sdf, per_item layouts, a localizer;
gates: posts, frames) with huge-but-finite agent states: a valid env's outputs are never NaN
or inf. The tests at the end pin bugs these inputs found (each failed before its fix).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
import warp as wp
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen import GateSequence, Track, TrackGenerator
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import (
    BandCollision,
    BandCollisionUtility,
    CheckpointsResult,
    CheckpointsUtility,
    CourseLineUtility,
    DiscCollisionUtility,
    FrameCollision,
    FrameCollisionUtility,
    HeightFieldUtility,
    Localizer,
    LocalizerUtility,
    ProgressUtility,
    PropsUtility,
    RacingLineUtility,
)

from ..support.strategies import (
    INT32_MAX,
    INT32_MIN,
    examples,
    finite_pose_rows,
    poison_floats,
    pose_rows,
)

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 3  # envs of every hand-made batch
N = 12  # bead rows per env (N_max)
G = 5  # gate rows per env (max_gates)
LIMIT = 1.0e18  # COORD_LIMIT, as documented (docs/collision.md)
HW = 0.1  # half width of the hand-made roads
F32_MAX = float(np.finfo(np.float32).max)

_BAD_COUNTS = [-5, -1, 0, 1, 2, N, N + 1, 10**6, INT32_MIN, INT32_MAX]
_VALID_FLAGS = [1, 1, 1, 0, 2, -1, INT32_MIN, INT32_MAX]
#: Whole-env scales: in range, near the limit, beyond it, near the float32 maximum.
_SCALES = [1.0, 1.0, 1.0, 1e-30, 1e17, 1e19, 1e30, 1e37]
#: Scales of a clean env (in range: usable).
_CLEAN_SCALES = [1.0, 1.0, 1.0, 1e-30, 1e-6, 1e4, 1e17]


# ------------------------------------------------------------------------------ hand-made data
def in_range(a: np.ndarray) -> np.ndarray:
    """Per row (last axis): every component finite and ``|x| <= COORD_LIMIT``, as float32."""
    with np.errstate(invalid="ignore"):
        return (np.abs(a.astype(np.float32)) <= np.float32(LIMIT)).all(axis=-1)


def ring_rows(n: int, radius: float, z: float = 0.0) -> dict:
    """A counter-clockwise circle of ``n`` beads: every Track row array, float64."""
    t = 2 * np.pi * np.arange(n) / n
    c = np.stack([radius * np.cos(t), radius * np.sin(t), np.full(n, z)], -1)
    tan = np.stack([-np.sin(t), np.cos(t), np.zeros(n)], -1)
    nrm = np.stack([-tan[:, 1], tan[:, 0], np.zeros(n)], -1)
    chord = np.linalg.norm(np.roll(c, -1, 0) - c, axis=1)
    return {
        "center": c,
        "tangent": tan,
        "normal": nrm,
        "inner": c + HW * nrm,
        "outer": c - HW * nrm,
        "arclen": np.concatenate([[0.0], np.cumsum(chord)[:-1]]),
        "length": float(chord.sum()),
    }


_TRACK_ROWS = ("center", "inner", "outer", "tangent", "normal", "arclen")


@st.composite
def track_envs(draw) -> dict:
    """One hand-made env: a ring of 3..N beads, then (half the time: a clean, usable env) a
    count, a valid flag, a scale and up to four poisoned entries (any row array,
    ``length``)."""
    n = draw(st.integers(3, N), label="beads")
    rows = ring_rows(n, draw(st.sampled_from([0.5, 1.0, 2.0])), draw(st.sampled_from([0.0, 0.3])))
    clean = draw(st.booleans(), label="clean")
    scale = draw(st.sampled_from(_CLEAN_SCALES if clean else _SCALES), label="scale")
    env = {k: np.full((N, 3) if k != "arclen" else (N,), np.nan) for k in _TRACK_ROWS}
    for k in _TRACK_ROWS:
        env[k][:n] = rows[k] * (scale if k in ("center", "inner", "outer", "arclen") else 1.0)
    env["length"] = rows["length"] * scale
    env["count"], env["valid"] = n, 1
    if clean:
        return env
    env["count"] = draw(st.one_of(st.just(n), st.sampled_from(_BAD_COUNTS)), label="count")
    env["valid"] = draw(st.sampled_from(_VALID_FLAGS), label="valid")
    for _ in range(draw(st.integers(0, 4), label="poisoned")):
        what = draw(st.sampled_from([*_TRACK_ROWS, "length"]), label="array")
        value = draw(poison_floats, label="value")
        if what == "length":
            env["length"] = value
            continue
        i = draw(st.integers(0, N - 1), label="row")
        if what == "arclen":
            env[what][i] = value
        else:
            env[what][i, draw(st.integers(0, 2), label="axis")] = value
    return env


def make_track(device, envs: list[dict]) -> Track:
    t = Track.allocate(len(envs), N, device)
    for k in _TRACK_ROWS:
        host = np.stack([env[k] for env in envs]).astype(np.float32)
        getattr(t, k).assign(host.reshape(-1, 3) if host.ndim == 3 else host.reshape(-1))
    t.length.assign(np.array([env["length"] for env in envs], np.float32))
    t.count.assign(np.array([env["count"] for env in envs], np.int32))
    t.valid.assign(np.array([env["valid"] for env in envs], np.int32))
    t.fail_mask.assign(np.array([0 if env["valid"] else 8 for env in envs], np.int32))
    return t


def host_rows(arr, envs: int) -> np.ndarray:
    h = arr.numpy()
    return h.reshape(envs, h.shape[0] // envs, *h.shape[1:])


def band_usable(t: Track, use_center: bool = False) -> np.ndarray:
    """[E] beads the band collider (and height-field baker) must use: the clamped count of a
    valid env with >= 3 beads whose borders (and centerline) are in range, else 0."""
    E_, n_max = t.num_envs, t.N_max
    n = np.clip(t.count.numpy(), 0, n_max)
    ok = (t.valid.numpy() != 0) & (n >= 3)
    inner, outer, center = (host_rows(getattr(t, k), E_) for k in ("inner", "outer", "center"))
    out = np.zeros(E_, np.int64)
    for e in range(E_):
        good = ok[e] and in_range(inner[e, : n[e]]).all() and in_range(outer[e, : n[e]]).all()
        if use_center:
            good = good and in_range(center[e, : n[e]]).all()
        out[e] = n[e] if good else 0
    return out


def finite(*arrays) -> bool:
    return all(np.isfinite(a).all() for a in arrays)


# ------------------------------------------------------------------------------ track tools
def box_inputs(device, draw, t: Track, boxes: int):
    """``boxes`` per env: near the env's first real bead (in range) or any float32 pose."""
    rows = E * boxes
    pos = draw(pose_rows(rows, 3), label="position")
    near = draw(st.lists(st.booleans(), min_size=rows, max_size=rows), label="near")
    base = np.nan_to_num(host_rows(t.center, E)[:, 0].astype(np.float64), posinf=0, neginf=0)
    for r in range(rows):
        if near[r]:
            pos[r] = np.clip(base[r // boxes], -1e6, 1e6) + np.float32(0.05) * (r % 3)
    quat = draw(pose_rows(rows, 4, quaternion=True), label="orientation")
    half = draw(pose_rows(rows, 2), label="half_extents")
    return (pos, quat, half), device_boxes(device, pos, quat, half)


def device_boxes(device, pos, quat, half) -> tuple:
    return (
        wp.array(pos, dtype=wp.vec3f, device=device),
        wp.array(quat, dtype=wp.quatf, device=device),
        wp.array(half, dtype=wp.vec2f, device=device),
    )


def check_band_contact(c, beads: np.ndarray, boxes: int, host_boxes, method: str) -> None:
    """An invalid env: oob 1, NaN geometry, boundary -1; an inactive slot: oob 0, NaN; an
    active slot of a usable env: finite distance, nearest, normal (and height)."""
    pos, quat, half = host_boxes
    active = np.isfinite(pos).all(1) & np.isfinite(quat).all(1) & np.isfinite(half).all(1)
    oob, dist = c.oob.numpy(), c.distance.numpy()
    near, nrm, bnd = c.nearest.numpy(), c.normal.numpy(), c.boundary.numpy()
    assert np.isin(oob, (0, 1)).all(), oob
    for r in range(E * boxes):
        e = r // boxes
        if beads[e] == 0:
            assert oob[r] == 1 and bnd[r] == -1 and np.isnan(dist[r]), (r, oob[r], dist[r])
            assert np.isnan(near[r]).all() and np.isnan(nrm[r]).all()
        elif not active[r]:
            assert oob[r] == 0 and bnd[r] == -1 and np.isnan(dist[r]), r
        else:
            assert finite(dist[r], near[r], nrm[r]), (method, r, dist[r], near[r], nrm[r])
            assert bnd[r] in ((0, 1) if method == "segments" else (-1, 0, 1)), bnd[r]
            if c.height is None:  # (the height check may set oob on a clear box)
                assert oob[r] == int(dist[r] <= 0), (method, r, oob[r], dist[r])
            else:
                assert np.isfinite(c.height.numpy()[r]), (r, c.height.numpy()[r])


@settings(max_examples=examples(24))
@given(data=st.data())
def test_band_collider_on_hand_made_tracks(device, data):
    draw = data.draw
    t = make_track(device, [draw(track_envs(), label=f"env {e}") for e in range(E)])
    method = draw(st.sampled_from(["segments", "sdf"]), label="method")
    layout = draw(st.sampled_from(["per_env", "per_item"]), label="kernel_layout")
    clearance = draw(st.sampled_from([None, 0.05]), label="clearance")
    boxes = draw(st.integers(1, 3), label="boxes")
    col = BandCollisionUtility(
        t,
        method=method,
        max_boxes=boxes,
        sdf_resolution=8,
        clearance=clearance,
        kernel_layout=layout,
    )
    want = band_usable(t, use_center=clearance is not None)
    np.testing.assert_array_equal(col.beads.numpy(), want)
    event(f"usable envs: {int((want > 0).sum())}")
    if method == "sdf":
        frame = col.sdf_frame.numpy()
        sdf = host_rows(col.sdf, E)
        for e in range(E):
            assert np.isfinite(frame[e]).all() == bool(want[e]), (e, frame[e])
            if want[e]:
                assert np.isfinite(sdf[e]).all(), e
    host_boxes, dev_boxes = box_inputs(device, draw, t, boxes)
    check_band_contact(col.query(*dev_boxes), want, boxes, host_boxes, method)


@settings(max_examples=examples(16))
@given(data=st.data())
def test_height_field_baker_on_hand_made_tracks(device, data):
    draw = data.draw
    t = make_track(device, [draw(track_envs(), label=f"env {e}") for e in range(E)])
    fill = draw(st.sampled_from([None, 0.0, -1e6, 1e6]), label="fill")
    f = HeightFieldUtility(t, resolution=8, fill=fill).field
    want = band_usable(t)
    frame, height, on_road = f.frame.numpy(), host_rows(f.height, E), host_rows(f.on_road, E)
    assert np.isin(on_road, (0, 1)).all()
    for e in range(E):
        if want[e]:
            assert np.isfinite(frame[e]).all() and np.isfinite(height[e]).all(), e
        else:
            assert np.isnan(frame[e]).all() and np.isnan(height[e]).all(), e
            assert (on_road[e] == 0).all()


def placer_usable(t: Track) -> np.ndarray:
    """[E] bool: the checkpoint placer places the env (valid, 3 <= count <= N_max, a finite
    positive length, centerline and borders in range)."""
    count, valid, length = t.count.numpy(), t.valid.numpy(), t.length.numpy()
    rows = {k: host_rows(getattr(t, k), E) for k in ("center", "inner", "outer")}
    out = np.zeros(E, bool)
    for e in range(E):
        n = int(count[e])
        if valid[e] == 0 or not 3 <= n <= t.N_max:
            continue
        if not (np.isfinite(length[e]) and length[e] > 0):
            continue
        out[e] = all(in_range(rows[k][e, :n]).all() for k in rows)
    return out


def props_usable(t: Track, side: str) -> np.ndarray:
    """[E] bool: the prop placer may place the env (valid, 3 <= count <= N_max, the used
    borders in range); a border of zero or overflowing length still voids it."""
    count, valid = t.count.numpy(), t.valid.numpy()
    used = {"inner": ("inner",), "outer": ("outer",), "both": ("inner", "outer")}[side]
    rows = {k: host_rows(getattr(t, k), E) for k in used}
    out = np.zeros(E, bool)
    for e in range(E):
        n = int(count[e])
        if valid[e] != 0 and 3 <= n <= t.N_max:
            out[e] = all(in_range(rows[k][e, :n]).all() for k in used)
    return out


@settings(max_examples=examples(24))
@given(data=st.data())
def test_placers_and_progress_on_hand_made_tracks(device, data):
    """CheckpointsUtility and PropsUtility place finite rows only, for the envs they can use;
    a ProgressUtility over those checkpoints answers finite distances for finite positions."""
    draw = data.draw
    t = make_track(device, [draw(track_envs(), label=f"env {e}") for e in range(E)])
    cs = CheckpointsUtility(t, draw(st.sampled_from([0.05, 0.3, 1e6])), max_checkpoints=8)
    got = cs.checkpoints
    count = got.count.numpy()
    want = placer_usable(t)
    assert ((count > 0) == want).all(), (count, want)
    for name in ("position", "left", "right", "tangent"):
        rows = host_rows(getattr(got, name), E)
        for e in range(E):
            assert np.isfinite(rows[e, : count[e]]).all(), (name, e)
            assert np.isnan(rows[e, count[e] :]).all(), (name, e)
    assert np.isfinite(cs.step.numpy()).all()

    side = draw(st.sampled_from(["inner", "outer", "both"]), label="side")
    kind = draw(st.sampled_from(["cone", "wall"]), label="kind")
    ps = PropsUtility(t, kind, draw(st.sampled_from([0.05, 0.5])), side, max_props=16).props
    pcount = ps.count.numpy()
    allowed = props_usable(t, side)
    assert not ((pcount > 0) & ~allowed).any(), (pcount, allowed)
    for name in ("position", "orientation", "scale"):
        rows = host_rows(getattr(ps, name), E)
        for e in range(E):
            assert np.isfinite(rows[e, : pcount[e]]).all(), (name, e)

    tracker = ProgressUtility(got, valid=t.valid)
    live = (count > 0) & (t.valid.numpy() != 0)
    for step in range(draw(st.integers(1, 3), label="steps")):
        pos = draw(pose_rows(E, 3), label=f"position {step}")
        ev = tracker.update(wp.array(pos, dtype=wp.vec3f, device=device))
        check_events(ev, live, pos)


def check_events(ev, live: np.ndarray, pos: np.ndarray) -> None:
    h = {f.name: getattr(ev, f.name).numpy() for f in dataclasses.fields(ev)}
    assert np.isin(h["passed"], (0, 1)).all() and np.isin(h["wrong_way"], (0, 1)).all()
    assert (h["next_index"] >= 0).all() and (h["progress"] >= 0).all()
    d = h["dist_to_next"]
    ok = np.isfinite(pos).all(1)
    assert (d[~live] == 0).all(), d
    assert np.isfinite(d[live & ok]).all() and (d[live & ok] >= 0).all(), d
    assert np.isnan(d[live & ~ok]).all(), d


def check_frame(f, must_answer: np.ndarray) -> None:
    """An answered env (segment >= 0) is finite everywhere; an unanswered one NaN."""
    h = {k: getattr(f, k).numpy() for k in ("s", "n", "n_up", "distance", "closest", "tangent")}
    seg = f.segment.numpy()
    for e in range(len(seg)):
        if seg[e] >= 0:
            assert all(np.isfinite(v[e]).all() for v in h.values()), (
                e,
                {k: v[e] for k, v in h.items()},
            )
        else:
            assert all(np.isnan(v[e]).all() for v in h.values()), e
            assert not must_answer[e], f"env {e} has a usable line and a finite position"


def line_usable(line, n_max: int) -> np.ndarray:
    """[E] bool: a line every locate must answer (valid, >= 2 beads, all in range, a finite
    positive length, finite arc lengths, some segment of nonzero length)."""
    E_ = line.count.shape[0]
    n = np.clip(line.count.numpy(), 0, n_max)
    valid, length = line.valid.numpy(), line.length.numpy()
    center, arclen = host_rows(line.center, E_), host_rows(line.arclen, E_)
    out = np.zeros(E_, bool)
    for e in range(E_):
        c = center[e, : n[e]]
        if valid[e] == 0 or n[e] < 2 or not (np.isfinite(length[e]) and length[e] > 0):
            continue
        if not (in_range(c).all() and in_range(arclen[e, : n[e], None]).all()):
            continue
        with np.errstate(all="ignore"):  # float32 squared chords, as the kernel (underflow: 0)
            d = np.roll(c, -1, 0) - c
            out[e] = ((d * d).sum(1, dtype=np.float32) > 0).any()
    return out


@settings(max_examples=examples(24))
@given(data=st.data())
def test_track_localizer_on_hand_made_tracks(device, data):
    draw = data.draw
    t = make_track(device, [draw(track_envs(), label=f"env {e}") for e in range(E)])
    loc = LocalizerUtility(t, warm_window=draw(st.sampled_from([None, 1, 2])))
    usable = line_usable(t, N)
    curv = host_rows(loc.curvature, E)
    for e in np.flatnonzero(usable):
        n = int(np.clip(t.count.numpy()[e], 0, N))
        assert np.isfinite(curv[e, :n]).all(), (e, curv[e, :n])
    for step in range(draw(st.integers(1, 3), label="steps")):
        pos = draw(pose_rows(E, 3), label=f"position {step}")
        f = loc.locate(wp.array(pos, dtype=wp.vec3f, device=device))
        check_frame(f, usable & np.isfinite(pos).all(1))
    # the curvature helpers: finite for a usable line (and a finite s), NaN past it
    K = 2
    s = draw(finite_pose_rows(E * K, 1), label="s").reshape(-1)
    k_at = loc.curvature_at(
        wp.array(s, dtype=wp.float32, device=device), wp.zeros(E * K, wp.float32, device)
    )
    assert np.isfinite(k_at.numpy().reshape(E, K)[usable]).all(), k_at.numpy()
    v = loc.speed_profile(2.0, 5.0, wp.zeros(E * N, wp.float32, device)).numpy().reshape(E, N)
    for e in np.flatnonzero(usable):
        n = int(np.clip(t.count.numpy()[e], 0, N))
        assert np.isfinite(v[e, :n]).all() and (v[e, :n] <= 5.0).all(), v[e]


# ------------------------------------------------------------------------------ gate tools
def yaw_quat(yaw: np.ndarray) -> np.ndarray:
    return np.stack([0 * yaw, 0 * yaw, np.sin(yaw / 2), np.cos(yaw / 2)], -1)


_GATE_ROWS = ("position", "tangent", "forward", "orientation", "half_size", "left", "right")


@st.composite
def gate_envs(draw) -> dict:
    """One hand-made gate env: 3..G gates on a ring (yaw-only frames), then (half the time: a
    clean, usable env) a count, a valid flag, a scale and up to four poisoned entries (any
    gate array, a whole quaternion scaled by a huge or tiny factor included)."""
    n = draw(st.integers(3, G), label="gates")
    r = draw(st.sampled_from([0.6, 1.0, 3.0]))
    clean = draw(st.booleans(), label="clean")
    scale = draw(st.sampled_from(_CLEAN_SCALES if clean else _SCALES), label="scale")
    a = 2 * np.pi * np.arange(n) / n
    pos = np.stack([r * np.cos(a), r * np.sin(a), np.zeros(n)], -1) * scale
    tan = np.stack([-np.sin(a), np.cos(a), np.zeros(n)], -1)
    left_axis = np.stack([-tan[:, 1], tan[:, 0], np.zeros(n)], -1)
    hs = np.full(n, 0.1)
    env = {
        k: np.full((G, 4) if k == "orientation" else (G,) if k == "half_size" else (G, 3), np.nan)
        for k in _GATE_ROWS
    }
    env["position"][:n], env["tangent"][:n], env["forward"][:n] = pos, tan, tan
    env["orientation"][:n] = yaw_quat(a + np.pi / 2)
    env["half_size"][:n] = hs
    env["left"][:n] = pos + hs[:, None] * left_axis
    env["right"][:n] = pos - hs[:, None] * left_axis
    env["count"], env["valid"] = n, 1
    if clean:
        return env
    env["count"] = draw(st.one_of(st.just(n), st.sampled_from(_BAD_COUNTS)), label="count")
    env["valid"] = draw(st.sampled_from(_VALID_FLAGS), label="valid")
    for _ in range(draw(st.integers(0, 4), label="poisoned")):
        what = draw(st.sampled_from([*_GATE_ROWS, "quaternion scale"]), label="array")
        g = draw(st.integers(0, G - 1), label="gate")
        if what == "quaternion scale":
            env["orientation"][g] *= draw(st.sampled_from([1e30, 1e19, 1e-19, 1e-30, 0.0]))
        elif what == "half_size":
            env["half_size"][g] = draw(poison_floats)
        else:
            width = 4 if what == "orientation" else 3
            env[what][g, draw(st.integers(0, width - 1))] = draw(poison_floats, label="value")
    return env


def make_gates(device, envs: list[dict]) -> GateSequence:
    s = GateSequence.allocate(len(envs), G, device)
    for k in _GATE_ROWS:
        with np.errstate(over="ignore"):  # a scaled poisoned quaternion may leave float32: inf
            host = np.stack([env[k] for env in envs]).astype(np.float32)
        getattr(s, k).assign(
            host.reshape(-1, host.shape[-1]) if host.ndim == 3 else host.reshape(-1)
        )
    s.count.assign(np.array([env["count"] for env in envs], np.int32))
    s.valid.assign(np.array([env["valid"] for env in envs], np.int32))
    return s


def usable_gates(s: GateSequence) -> np.ndarray:
    """[E, G] bool: the gates the frame collider can hit (clamped count of a valid env; the
    centre and half size in range, a finite nonzero orientation)."""
    n = np.clip(s.count.numpy(), 0, G)
    valid = s.valid.numpy() != 0
    pos, quat = host_rows(s.position, E), host_rows(s.orientation, E)
    half = host_rows(s.half_size, E)
    out = np.zeros((E, G), bool)
    for e in range(E):
        for g in range(n[e] if valid[e] else 0):
            q = quat[e, g]
            out[e, g] = (
                in_range(pos[e, g])
                and in_range(half[e, g : g + 1])
                and (np.isfinite(q).all() and (q != 0).any())
            )
    return out


def usable_posts(s: GateSequence) -> np.ndarray:
    """[E] bool: the env has a post the disc collider can name."""
    n = np.clip(s.count.numpy(), 0, G)
    valid = s.valid.numpy() != 0
    left, right = host_rows(s.left, E)[..., :2], host_rows(s.right, E)[..., :2]
    return np.array(
        [
            bool(valid[e]) and (in_range(left[e, : n[e]]).any() or in_range(right[e, : n[e]]).any())
            for e in range(E)
        ]
    )


@settings(max_examples=examples(24))
@given(data=st.data())
def test_gate_tools_on_hand_made_gates(device, data):
    draw = data.draw
    s = make_gates(device, [draw(gate_envs(), label=f"env {e}") for e in range(E)])
    # posts: an active box of an env with a usable post is answered, finite
    boxes = draw(st.integers(1, 2), label="boxes")
    disc = DiscCollisionUtility(s, draw(st.sampled_from([0.02, 1e6])), max_boxes=boxes)
    pos = draw(pose_rows(E * boxes, 3), label="box position")
    quat = draw(pose_rows(E * boxes, 4, quaternion=True), label="orientation")
    half = draw(pose_rows(E * boxes, 2), label="half_extents")
    c = disc.query(*device_boxes(device, pos, quat, half))
    active = np.isfinite(pos).all(1) & np.isfinite(quat).all(1) & np.isfinite(half).all(1)
    posts = usable_posts(s)
    post, dist, near, hit = c.post.numpy(), c.distance.numpy(), c.nearest.numpy(), c.hit.numpy()
    for r in range(E * boxes):
        if active[r] and posts[r // boxes]:
            assert post[r] >= 0 and finite(dist[r], near[r]), (r, post[r], dist[r])
            assert hit[r] == int(dist[r] <= 0)
        else:
            assert post[r] == -1 and hit[r] == 0 and np.isnan(dist[r]), (r, post[r])
    # frames: an agent of an env with a usable gate is answered, finite (inside a member too)
    fc = FrameCollisionUtility(s, *draw(st.sampled_from([(0.01, 0.01, 0.0), (1e6, 1e6, 1e6)])))
    apos = draw(pose_rows(E, 3), label="agent position")
    fr = fc.query(wp.array(apos, dtype=wp.vec3f, device=device))
    gates = usable_gates(s).any(1)
    fh = {
        k: getattr(fr, k).numpy()
        for k in ("hit", "gate", "member", "distance", "nearest", "normal")
    }
    for e in range(E):
        if gates[e] and np.isfinite(apos[e]).all():
            assert fh["gate"][e] >= 0 and usable_gates(s)[e, fh["gate"][e]], e
            assert finite(fh["distance"][e], fh["nearest"][e], fh["normal"][e]), (e, fh)
            assert abs(np.linalg.norm(fh["normal"][e]) - 1) < 1e-4
            assert fh["hit"][e] == int(fh["distance"][e] <= 0)
        else:
            assert fh["gate"][e] == -1 and fh["hit"][e] == 0 and np.isnan(fh["distance"][e])
    # the course line and a localizer on it, progress through the gates
    K = draw(st.integers(2, 4), label="samples_per_gate")
    line = CourseLineUtility(s, K).line
    cnt = line.count.numpy()
    lrows = host_rows(line.center, E)
    for e in range(E):
        assert cnt[e] in (0, K * int(np.clip(s.count.numpy()[e], 0, G))), cnt
        assert np.isfinite(lrows[e, : cnt[e]]).all() and np.isnan(lrows[e, cnt[e] :]).all()
        if cnt[e]:
            assert np.isfinite(line.length.numpy()[e]) and line.length.numpy()[e] > 0
    loc = LocalizerUtility(line, warm_window=draw(st.sampled_from([None, 2])))
    tracker = ProgressUtility(CheckpointsResult.from_gates(s), valid=s.valid)
    live = (np.clip(s.count.numpy(), 0, G) > 0) & (s.valid.numpy() != 0)
    for step in range(draw(st.integers(1, 2), label="steps")):
        p = draw(pose_rows(E, 3), label=f"position {step}")
        arr = wp.array(p, dtype=wp.vec3f, device=device)
        check_frame(loc.locate(arr), line_usable(line, line.N_max) & np.isfinite(p).all(1))
        check_events(tracker.update(arr), live, p)


# ------------------------------------------------------------------------------ built courses
_COURSES: dict = {}


def built_course(device, kind: str):
    key = (str(device), kind)
    if key not in _COURSES:
        if kind.startswith("track"):
            method, layout = kind.split("-")[1:]
            _COURSES[key] = Course.track(
                presets.track(num_envs=E, device=device),
                checkpoint_spacing=0.6,
                collision=BandCollision(
                    method, max_boxes=2, sdf_resolution=48, kernel_layout=layout
                ),
                extra=[Localizer(warm_window=3)],
                seeds=2,
            )
        else:
            cfg = presets.gates(num_envs=E, device=device, gate_width=0.3)
            col = 0.02 if kind == "gates-posts" else FrameCollision(0.02, 0.02, 0.0)
            _COURSES[key] = Course.gates(cfg, collision=col, localize_window=2, seeds=2)
    return _COURSES[key]


def float_outputs(res) -> dict:
    out = {}
    for entry in ("events", "contacts", "frame"):
        obj = getattr(res, entry)
        for f in dataclasses.fields(obj):
            a = getattr(obj, f.name)
            if isinstance(a, wp.array) and a.dtype not in (wp.int32, wp.int8):
                out[f"{entry}.{f.name}"] = a.numpy()
    return out


@pytest.mark.parametrize(
    "kind",
    [
        "track-segments-per_env",
        "track-sdf-per_item",
        "track-segments-per_item",
        "gates-posts",
        "gates-frames",
    ],
)
@settings(max_examples=examples(16))
@given(data=st.data())
def test_courses_answer_huge_finite_poses(device, kind, data):
    """Every per-step component of a built course (progress, collision, localizer) answers a
    valid env at any finite pose (up to the float32 maximum) with finite floats."""
    course = built_course(device, kind)
    draw = data.draw
    valid = course.result.valid.numpy() != 0
    names = {s.name: s for c in course.components.values() for s in c.INPUTS}
    bound = {}
    host = {}
    for name, spec in names.items():
        rows = E * spec.slots
        width = wp.types.type_size(spec.dtype)
        h = draw(finite_pose_rows(rows, width, quaternion=spec.dtype == wp.quatf), label=name)
        host[name] = h
        bound[name] = wp.array(h, dtype=spec.dtype, device=device)
    course.bind(**bound)
    for _ in range(draw(st.integers(1, 2), label="steps")):
        res = course.step()
        for key, a in float_outputs(res).items():
            per_env = a.reshape(E, -1)
            assert np.isfinite(per_env[valid]).all(), (key, per_env[valid])
    event(f"valid envs: {int(valid.sum())}")


# ------------------------------------------------------------------------------ pinned bugs
def ring_env(n: int, count: int | None = None, scale: float = 1.0) -> dict:
    """A hand-made env of ``n`` ring beads (rows past ``n`` NaN), count ``n`` by default."""
    rows = ring_rows(n, 1.0)
    env = {k: np.full((N, 3) if k != "arclen" else (N,), np.nan) for k in _TRACK_ROWS}
    for k in _TRACK_ROWS:
        env[k][:n] = rows[k] * (scale if k in ("center", "inner", "outer", "arclen") else 1.0)
    env.update(length=rows["length"] * scale, count=n if count is None else count, valid=1)
    return env


def unit_boxes(device, xy, yaw=0.3, quat_scale=1.0, half=(0.02, 0.01)):
    """One box per env at ``xy`` (host [E, 2]) with the yaw quaternion times ``quat_scale``."""
    pos = np.zeros((E, 3), np.float32)
    pos[:, :2] = xy
    q = np.tile(yaw_quat(np.float64(yaw)) * quat_scale, (E, 1)).astype(np.float32)
    he = np.tile(np.asarray(half, np.float32), (E, 1))
    return device_boxes(device, pos, q, he)


def contact_host(c) -> dict:
    return {
        f.name: getattr(c, f.name).numpy().copy()
        for f in dataclasses.fields(c)
        if getattr(c, f.name) is not None
    }


@pytest.mark.parametrize("method", ["segments", "sdf"])
@pytest.mark.parametrize("layout", ["per_env", "per_item"])
def test_a_count_beyond_n_max_is_clamped(device, method, layout):
    """Regression: a count above the row stride crashed (SIGSEGV) the band collider and the
    height-field baker. It is clamped to N_max: NaN padding then makes the env unusable, a
    full stride of real beads is used whole."""
    t = make_track(device, [ring_env(5, count=10**6), ring_env(N, count=N + 3), ring_env(7)])
    col = BandCollisionUtility(t, method=method, sdf_resolution=16, kernel_layout=layout)
    np.testing.assert_array_equal(col.beads.numpy(), [0, N, 7])
    c = contact_host(col.query(*unit_boxes(device, np.array([[1.0, 0.0]] * E))))
    assert c["oob"][0] == 1 and np.isnan(c["distance"][0])
    assert np.isfinite(c["distance"][1:]).all() and np.isfinite(c["normal"][1:]).all()
    f = HeightFieldUtility(t, resolution=16).field
    frame = f.frame.numpy()
    assert np.isnan(frame[0]).all() and np.isfinite(frame[1:]).all()


def test_an_agent_inside_a_frame_member_gets_a_signed_distance_and_a_normal(device):
    """Regression: inside a member the frame collider answered distance 0 and a NaN normal
    (with agent_radius=0), also for FrameCollision(1e6, 1e6, 1e6). Inside now reads minus
    the depth to the member's nearest face, and that face's outward normal."""
    env = gate_envs_fixed()
    s = make_gates(device, [env] * E)
    h, th, dp = 0.1, 0.02, 0.03
    fc = FrameCollisionUtility(s, th, dp, 0.0)
    c0 = env["position"][0]
    left = env["left"][0] - c0
    left /= np.linalg.norm(left)
    # gate 0's left member: its centre line at h + th/2 along the gate's left axis, 0.004 in
    p = np.tile(c0 + (h + th / 2 + 0.006) * left, (E, 1)).astype(np.float32)
    got = contact_host(fc.query(wp.array(p, dtype=wp.vec3f, device=device)))
    assert (got["gate"] == 0).all() and (got["member"] == 0).all()
    np.testing.assert_allclose(got["distance"], -(th / 2 - 0.006), atol=1e-6)
    np.testing.assert_allclose(got["normal"], np.tile(left, (E, 1)), atol=1e-5)
    np.testing.assert_allclose(got["nearest"], np.tile(c0 + (h + th) * left, (E, 1)), atol=1e-6)
    assert (got["hit"] == 1).all()
    big = FrameCollisionUtility(s, 1e6, 1e6, 1e6)
    got = contact_host(
        big.query(wp.array(np.tile(c0, (E, 1)).astype(np.float32), dtype=wp.vec3f, device=device))
    )
    assert np.isfinite(got["normal"]).all() and np.isfinite(got["distance"]).all()
    assert (got["distance"] < -1e6).all() and (got["hit"] == 1).all()


def gate_envs_fixed() -> dict:
    """Five level gates on the unit circle, half size 0.1, each facing along the circle."""
    a = 2 * np.pi * np.arange(G) / G
    pos = np.stack([np.cos(a), np.sin(a), np.zeros(G)], -1)
    tan = np.stack([-np.sin(a), np.cos(a), np.zeros(G)], -1)
    la = np.stack([-tan[:, 1], tan[:, 0], np.zeros(G)], -1)
    return {
        "position": pos,
        "tangent": tan,
        "forward": tan,
        "orientation": yaw_quat(a + np.pi / 2),
        "half_size": np.full(G, 0.1),
        "left": pos + 0.1 * la,
        "right": pos - 0.1 * la,
        "count": G,
        "valid": 1,
    }


@pytest.mark.parametrize("scale", [1e19, 1e20, 1e30, 3e38 / 2, 1e-20, 1e-30])
def test_huge_and_tiny_quaternions_give_the_unit_yaw(device, scale):
    """Regression: quaternion components of 1e19 and more gave a NaN distance with oob 0
    (segments, sdf, posts); tiny ones lost the yaw. A quaternion is scaled by its largest
    component first: the answer is the unit quaternion's."""
    t = make_track(device, [ring_env(N)] * E)
    xy = np.array([[1.0, 0.0], [0.0, 1.02], [-0.93, 0.0]])
    for method in ("segments", "sdf"):
        col = BandCollisionUtility(t, method=method, sdf_resolution=32)
        want = contact_host(col.query(*unit_boxes(device, xy)))
        got = contact_host(col.query(*unit_boxes(device, xy, quat_scale=scale)))
        for k in ("oob", "distance", "nearest", "normal", "boundary"):
            np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=(method, k))
    s = make_gates(device, [gate_envs_fixed()] * E)
    disc = DiscCollisionUtility(s, 0.02)
    want = contact_host(disc.query(*unit_boxes(device, xy)))
    got = contact_host(disc.query(*unit_boxes(device, xy, quat_scale=scale)))
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("far", [1e19, -3e19, 1e30, F32_MAX, -F32_MAX])
def test_far_finite_poses_get_finite_answers(device, far):
    """Regression: positions of 1e19 and more gave dist_to_next = inf (every course type)
    and NaN or inf collision and localizer answers. A finite position is clamped to
    COORD_LIMIT: off the road / clear of the gates, with finite distances."""
    t = make_track(device, [ring_env(N)] * E)
    pos = np.array([[far, 0.3 * far, 0.0]] * E, np.float32)
    parr = wp.array(pos, dtype=wp.vec3f, device=device)
    boxes = unit_boxes(device, pos[:, :2].astype(np.float64))
    for method in ("segments", "sdf"):
        c = contact_host(BandCollisionUtility(t, method=method, sdf_resolution=16).query(*boxes))
        assert (c["oob"] == 1).all() and np.isfinite(c["distance"]).all(), (method, c)
        assert (c["distance"] < -1e17).all() and np.isfinite(c["normal"]).all()
    f = contact_host(LocalizerUtility(t).locate(parr))
    assert (f["segment"] >= 0).all() and all(np.isfinite(v).all() for v in f.values())
    cs = CheckpointsUtility(t, 0.5, max_checkpoints=16).checkpoints
    tracker = ProgressUtility(cs, valid=t.valid)
    for _ in range(2):
        d = tracker.update(parr).dist_to_next.numpy()
        assert np.isfinite(d).all() and (d > 1e17).all(), d
    s = make_gates(device, [gate_envs_fixed()] * E)
    tracker = ProgressUtility(CheckpointsResult.from_gates(s), valid=s.valid)
    d = tracker.update(parr).dist_to_next.numpy()
    assert np.isfinite(d).all() and (d > 1e17).all(), d
    c = contact_host(DiscCollisionUtility(s, 0.02).query(*boxes))
    assert (c["post"] >= 0).all() and np.isfinite(c["distance"]).all() and (c["hit"] == 0).all()
    c = contact_host(FrameCollisionUtility(s, 0.01, 0.01, 0.0).query(parr))
    assert (c["gate"] >= 0).all() and all(np.isfinite(c[k]).all() for k in ("distance", "normal"))


@pytest.mark.parametrize("half", [3e38, 1e19, F32_MAX])
def test_huge_half_extents_give_a_finite_sdf_distance(device, half):
    """Regression: half extents of 3e38 gave an inf SDF distance. They are clamped to
    COORD_LIMIT: the box covers the road, oob 1, a finite distance (both methods)."""
    t = make_track(device, [ring_env(N)] * E)
    boxes = unit_boxes(device, np.array([[1.0, 0.0]] * E), half=(half, half))
    for method in ("sdf", "segments"):
        c = contact_host(BandCollisionUtility(t, method=method, sdf_resolution=16).query(*boxes))
        assert (c["oob"] == 1).all() and np.isfinite(c["distance"]).all(), (method, c["distance"])
        assert np.isfinite(c["normal"]).all() and np.isfinite(c["nearest"]).all()


def test_checkpoint_set_allocate_checks_its_arguments(device):
    """Regression: CheckpointsResult.allocate(0, 8) and (2, 2) were accepted (the
    capacity must be >= 3), and an absent CUDA device raised a raw Warp error."""
    for args, err, word in (
        ((0, 8, device), ValueError, "num_envs"),
        ((2, 2, device), ValueError, "max_checkpoints"),
        ((2, 65537, device), ValueError, "max_checkpoints"),
        ((2.0, 8, device), TypeError, "num_envs"),
        ((2, None, device), TypeError, "max_checkpoints"),
        ((2, 8, 3), TypeError, "device"),
        ((2, 8, "cuda:99"), ValueError, "device"),
        ((2, 8, "tpu"), ValueError, "device"),
    ):
        with pytest.raises(err, match=word):
            CheckpointsResult.allocate(*args)
    if wp.get_cuda_device_count() == 0:
        with pytest.raises(ValueError, match="device = 'cuda:0' is not available"):
            CheckpointsResult.allocate(2, 8, "cuda:0")
    cs = CheckpointsResult.allocate(2, 3, device)
    assert cs.max_checkpoints == 3 and cs.num_envs == 2


def test_nan_posts_never_win(device):
    """Found by this suite: a NaN post (a gate out of range) won every query with distance
    -radius (``wp.max`` reads a NaN as "missing"). It is skipped; an env of NaN posts
    only answers "no course"."""
    far = gate_envs_fixed()
    for k in ("position", "left", "right"):
        far[k] = far[k] * 1e30
    s = make_gates(device, [gate_envs_fixed(), far, gate_envs_fixed()])
    c = contact_host(DiscCollisionUtility(s, 0.02).query(*unit_boxes(device, np.zeros((E, 2)))))
    assert c["post"][1] == -1 and np.isnan(c["distance"][1]) and c["hit"][1] == 0
    assert (c["post"][[0, 2]] >= 0).all() and np.isfinite(c["distance"][[0, 2]]).all()


def test_a_course_line_of_vanishing_length_is_no_line(device):
    """Found by this suite: gates 1e-30 apart gave a line of count > 0 and length 0 (every
    chord rounds to 0). That is no line: count 0."""
    tiny = gate_envs_fixed()
    for k in ("position", "left", "right"):
        tiny[k] = tiny[k] * 1e-30
    line = CourseLineUtility(
        make_gates(device, [gate_envs_fixed(), tiny, gate_envs_fixed()]), 4
    ).line
    assert line.count.numpy().tolist() == [4 * G, 0, 4 * G]
    assert line.length.numpy()[1] == 0 and np.isnan(host_rows(line.center, E)[1]).all()


@functools.cache
def _racing_line_planner() -> RacingLineUtility:
    gen = TrackGenerator(presets.track(num_envs=4, device="cpu"), seeds=2)
    gen.generate()
    return RacingLineUtility(gen.result, 0.04, a_lat=8.0, a_lon=4.0, v_max=6.0)


@settings(max_examples=examples(24))
@given(
    st.lists(
        st.one_of(
            st.floats(width=32, allow_nan=True, allow_infinity=True),
            st.sampled_from([0.0, -0.0, 3.4e38, -3.4e38, 1e-45, float("nan")]),
        ),
        min_size=4,
        max_size=4,
    )
)
def test_racing_line_sample_answers_any_float_arc_in_range_or_nan(values):
    """Any float32 arc, however absurd: each answer is NaN (non-finite s) or lies between the
    env's smallest and largest bead value."""
    planner = _racing_line_planner()
    s = wp.array(np.array(values, np.float32), dtype=wp.float32, device="cpu")
    off = wp.zeros(4, dtype=wp.float32, device="cpu")
    spd = wp.zeros(4, dtype=wp.float32, device="cpu")
    planner.sample(s, off, spd)
    for e, v in enumerate(np.array(values, np.float32)):
        n = int(planner.track.count.numpy()[e])
        for got, name in ((off.numpy()[e], "offset"), (spd.numpy()[e], "speed")):
            if not np.isfinite(v) or not planner.track.valid.numpy()[e]:
                assert np.isnan(got)
                continue
            row = planner.line.host(name)[e, :n]
            assert row.min() - 1e-5 <= got <= row.max() + 1e-5, (v, got)
