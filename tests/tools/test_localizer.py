"""LocalizerUtility and the Localizer component against a float64 NumPy brute-force projection.

Lines: Tracks built by the "centerline" sampler over crafted loops, hand-made lines (a plain
object with the five arrays a line needs: exact circles, a 3D loop, a hairpin, broken envs)
and the CourseLineResult of a real gate course.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pytest
import warp as wp

from track_gen import CaptureError, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools.localizer import WARM_WINDOW, Localizer, LocalizerUtility, TrackFrame

E, P = 3, 128
FIELDS = ("s", "n", "n_up", "distance", "segment", "closest", "tangent")
TOL = 3e-5  # float32 kernel vs float64 oracle, coordinates of order 1


# ----------------------------------------------------------------------------- lines


@dataclass
class Line:
    """The least a LocalizerUtility reads (a CourseLineResult-like object)."""

    center: wp.array
    arclen: wp.array
    length: wp.array
    count: wp.array
    valid: wp.array


def make_line(device, loops, n_max, valid=None, count=None) -> Line:
    """A Line from per-env bead arrays ([n, 3] or [n, 2]); arclen / length from the float32
    chords; rows past count NaN."""
    env = len(loops)
    center = np.full((env, n_max, 3), np.nan, np.float32)
    arclen = np.full((env, n_max), np.nan, np.float32)
    length = np.zeros(env, np.float32)
    cnt = np.zeros(env, np.int32)
    for e, pts in enumerate(loops):
        pts = np.asarray(pts, np.float64)
        if pts.shape[1] == 2:
            pts = np.concatenate([pts, np.zeros((len(pts), 1))], 1)
        n = len(pts)
        c32 = pts.astype(np.float32)
        center[e, :n] = c32
        chord = np.linalg.norm(np.roll(c32, -1, 0).astype(np.float64) - c32, axis=1)
        arclen[e, :n] = np.concatenate([[0.0], np.cumsum(chord)[:-1]])
        length[e] = chord.sum()
        cnt[e] = n
    if count is not None:
        cnt = np.asarray(count, np.int32)
    valid = np.ones(env, np.int32) if valid is None else np.asarray(valid, np.int32)
    return Line(
        wp.array(center.reshape(-1, 3), dtype=wp.vec3f, device=device),
        wp.array(arclen.reshape(-1), dtype=wp.float32, device=device),
        wp.array(length, dtype=wp.float32, device=device),
        wp.array(cnt, dtype=wp.int32, device=device),
        wp.array(valid, dtype=wp.int32, device=device),
    )


def circle(r, n, clockwise=False, z=None):
    t = 2 * np.pi * np.arange(n) / n * (-1 if clockwise else 1)
    zz = np.zeros(n) if z is None else z(t)
    return np.stack([r * np.cos(t), r * np.sin(t), zz], -1)


def hairpin(g=0.1, half=2.0, h=0.05):
    """A thin stadium: straights at y = -g (going +x) and y = +g (going -x), x in
    [-half, half], joined by half circles of radius g; bead spacing about h."""
    ns = int(round(2 * half / h))
    nc = int(np.ceil(np.pi * g / h))
    xs = np.linspace(-half, half, ns, endpoint=False)
    ts = np.linspace(-np.pi / 2, np.pi / 2, nc, endpoint=False)
    bottom = np.stack([xs, np.full(ns, -g)], -1)
    right = np.stack([half + g * np.cos(ts), g * np.sin(ts)], -1)
    top = np.stack([-xs, np.full(ns, g)], -1)
    left = np.stack([-half - g * np.cos(ts), -g * np.sin(ts)], -1)
    return np.concatenate([bottom, right, top, left])


def loops() -> np.ndarray:
    """Track inputs: a circle (r = 1), an ellipse (1.2 x 0.5), counter-clockwise, and a
    circle too tight for the road band (invalid), float32 [E*P, 2]."""
    t = 2 * np.pi * np.arange(P) / P
    shapes = [(1.0, 1.0), (1.2, 0.5), (0.05, 0.05)]
    return np.concatenate([np.stack([a * np.cos(t), b * np.sin(t)], -1) for a, b in shapes]).astype(
        np.float32
    )


@functools.cache
def track(device):
    """A read-only Track per device: tests build their own localizers."""
    gen = TrackGenerator(
        TrackGenConfig(
            generator="centerline", num_envs=E, num_points=P, device=device, relax_enable=False
        )
    )
    gen.inputs["centerline.xy"].assign(loops())
    tr = gen.generate()
    assert tr.valid.numpy().tolist() == [1, 1, 0]
    return tr


@functools.cache
def shapes(device) -> Line:
    """Hand-made: exact CCW circle r = 2, CW 3D circle r = 1.5 (z waves), an ellipse with a
    tilt, the hairpin; read-only."""
    th = np.linspace(0, 2 * np.pi, 90, endpoint=False)
    ellipse = np.stack([1.5 * np.cos(th), 0.6 * np.sin(th), 0.45 * np.cos(th)], -1)
    return make_line(
        device,
        [
            circle(2.0, 64),
            circle(1.5, 48, clockwise=True, z=lambda t: 0.2 * np.sin(2 * t)),
            ellipse,
            hairpin(),
        ],
        n_max=192,
    )


def vec3(device, pts) -> wp.array:
    return wp.array(np.asarray(pts, np.float32).reshape(-1, 3), dtype=wp.vec3f, device=device)


def host(frame: TrackFrame) -> dict:
    return {k: getattr(frame, k).numpy().copy() for k in FIELDS}


# ----------------------------------------------------------------------------- oracle


def line_host(line):
    env = line.count.shape[0]
    n_max = line.center.shape[0] // env
    return (
        line.center.numpy().reshape(env, n_max, 3).astype(np.float64),
        line.arclen.numpy().reshape(env, n_max).astype(np.float64),
        line.length.numpy().astype(np.float64),
        line.count.numpy(),
        line.valid.numpy(),
    )


def oracle(line, pos) -> dict:
    """Brute-force projection in float64 per the documented definition. Besides the answer
    (``s``, ``n``, ... of the closest segment) it keeps, per env, every segment's values
    (``all``: a dict of [count] arrays) and the segments whose distance is within 1e-4 of the
    best (``ties``): where the closest segment is that ambiguous the kernel may pick any of
    them."""
    center, arclen, length, count, valid = line_host(line)
    env = len(count)
    pos = np.asarray(pos, np.float64).reshape(env, 3)
    out = {k: np.full(env, np.nan) for k in ("s", "n", "n_up", "distance")}
    out["segment"] = np.full(env, -1)
    out["closest"] = np.full((env, 3), np.nan)
    out["tangent"] = np.full((env, 3), np.nan)
    out["ties"] = [()] * env
    out["all"] = [None] * env
    out["length"], out["count"] = length, count
    for e in range(env):
        n = int(count[e])
        p = pos[e]
        if valid[e] == 0 or n < 2 or not np.isfinite(p).all():
            continue
        a = center[e, :n]
        d = np.roll(a, -1, 0) - a
        dd = (d * d).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            u = np.clip(((p - a) * d).sum(1) / dd, 0.0, 1.0)
            t = d / np.sqrt(dd)[:, None]
        q = a + u[:, None] * d
        dist = np.linalg.norm(p - q, axis=1)
        dist[~(dd > 0) | ~np.isfinite(dist)] = np.inf
        if not np.isfinite(dist).any():
            continue
        h = np.stack([-t[:, 1], t[:, 0], np.zeros(n)], -1)
        hl = np.linalg.norm(h, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            left = np.where((hl > 1e-6)[:, None], h / hl[:, None], [0.0, 1.0, 0.0])
            up = np.cross(t, left)
            up /= np.linalg.norm(up, axis=1)[:, None]
        end = np.append(arclen[e, 1:n], length[e])
        rel = p - q
        seg = {
            "s": np.mod(arclen[e, :n] + u * (end - arclen[e, :n]), length[e]),
            "n": (rel * left).sum(1),
            "n_up": (rel * up).sum(1),
            "distance": dist,
            "closest": q,
            "tangent": t,
        }
        i = int(np.argmin(dist))
        for k, v in seg.items():
            out[k][e] = v[i]
        out["segment"][e] = i
        out["ties"][e] = tuple(np.flatnonzero(dist - dist[i] < 1e-4))
        out["all"][e] = seg
    return out


def assert_matches(got: dict, want: dict, where=""):
    """The kernel's answer is the oracle's closest segment (or one within 1e-4 of it) and
    every field equals the oracle's value on that segment."""
    np.testing.assert_array_equal(got["segment"] < 0, want["segment"] < 0, err_msg=where)
    np.testing.assert_allclose(got["distance"], want["distance"], atol=TOL, err_msg=where)
    for e in np.flatnonzero(want["segment"] >= 0):
        j, msg = int(got["segment"][e]), f"env {e} {where}"
        assert j in want["ties"][e], f"segment {j}, oracle {want['segment'][e]} {msg}"
        seg, length = want["all"][e], want["length"][e]
        assert 0.0 <= got["s"][e] < length, msg
        ds = abs(got["s"][e] - seg["s"][j])
        assert min(ds, length - ds) < 1e-4, f"s {got['s'][e]} vs {seg['s'][j]} {msg}"
        for k in ("n", "n_up", "distance", "closest", "tangent"):
            np.testing.assert_allclose(got[k][e], seg[k][j], atol=TOL, err_msg=f"{k} {msg}")


def check(line, frame: TrackFrame, pos, where=""):
    assert_matches(host(frame), oracle(line, pos), where)


def along(line, e, s):
    """Point at arc s (wrapped) along env e's polyline, and the unit chord there (float64)."""
    center, arclen, length, count, _ = line_host(line)
    n = int(count[e])
    s = s % length[e]
    i = int(np.searchsorted(arclen[e, :n], s, side="right") - 1)
    j = (i + 1) % n
    end = arclen[e, j] if j else length[e]
    d = center[e, j] - center[e, i]
    return center[e, i] + (s - arclen[e, i]) / (end - arclen[e, i]) * d, d / np.linalg.norm(d)


def random_points(line, seed, near=24, far=16):
    """[K, env, 3]: points near the line (offsets ~0.15 laterally and vertically, some 0.3 to
    1 above it) and far ones (uniform in a box)."""
    rng = np.random.default_rng(seed)
    _, _, length, count, _ = line_host(line)
    env = len(count)
    out = np.zeros((near + far, env, 3))
    for k in range(near):
        for e in range(env):
            if count[e] < 2 or not length[e] > 0:
                continue
            p, t = along(line, e, rng.uniform(0, length[e]))
            left = np.array([-t[1], t[0], 0.0])
            left /= max(np.linalg.norm(left), 1e-12)
            lift = rng.uniform(0.3, 1.0) if k % 4 == 0 else rng.normal(0, 0.1)
            out[k, e] = p + rng.normal(0, 0.15) * left + [0, 0, lift]
    out[near:] = rng.uniform(-3.0, 3.0, (far, env, 3)) * [1.0, 1.0, 0.3]
    return out


# ----------------------------------------------------------------------------- projection


@pytest.mark.parametrize("which", ["track", "shapes"])
def test_full_search_matches_brute_force(device, which):
    line = track(device) if which == "track" else shapes(device)
    loc = LocalizerUtility(line)
    pos_w = wp.zeros(line.count.shape[0], dtype=wp.vec3f, device=device)
    for k, pts in enumerate(random_points(line, seed=1)):
        pos_w.assign(pts.astype(np.float32))
        frame = loc.locate(pos_w)
        assert frame is loc.frame
        check(line, frame, pts.astype(np.float32), f"point set {k}")


def test_n_up_is_height_above_a_level_line(device):
    tr = track(device)
    loc = LocalizerUtility(tr)
    pts = np.array([[0.9, 0.1, 0.5], [0.1, 0.55, 1.25], [0.0, 0.0, 0.3]], np.float32)
    f = host(loc.locate(vec3(device, pts)))
    np.testing.assert_allclose(f["n_up"][:2], pts[:2, 2], atol=1e-6)
    assert f["n"][0] > 0 > f["n"][1]  # CCW loops: left is inward; env 1's point is outside
    np.testing.assert_array_equal(f["segment"][2], -1)


def test_gate_course_line(device):
    from track_gen.tools.course_line import CenterlineFromGates

    gen = GateGenerator(presets.gates(num_envs=4, device=device, gate_width=0.1), seeds=3)
    course = Course(gen, [CenterlineFromGates(), Localizer(warm_window=4, source="centerline")])
    line = course.course_line.line
    assert course.localizer.line is line
    assert (line.count.numpy() > 0).sum() >= 2  # real lines to test against
    pos_w = wp.zeros(4, dtype=wp.vec3f, device=device)
    course.bind(position=pos_w)
    for k, pts in enumerate(random_points(line, seed=2, near=12, far=6)):
        pos_w.assign(pts.astype(np.float32))
        course.reset()  # a jump: forget the warm memory (a full search)
        res = course.step()
        assert res["localizer"] is res.frame is course.localizer.frame
        check(line, res.frame, pts.astype(np.float32), f"point set {k}")
    # an agent flying along the line: warm answers equal the full search's
    full = LocalizerUtility(line)
    course.reset()
    for k, pts in enumerate(trajectory(line, 120, 0.05, 0.03)):
        pos_w.assign(pts.astype(np.float32))
        w, f = host(course.step().frame), host(full.locate(pos_w))
        for key in FIELDS:
            np.testing.assert_array_equal(w[key], f[key], err_msg=f"{key} step {k}")


# ----------------------------------------------------------------------------- warm window


def trajectory(line, steps, ds, wobble, seed=0):
    """[steps, env, 3]: an agent moving ds per step along each env's line with lateral and
    vertical wobble of amplitude ``wobble``."""
    _, _, length, count, _ = line_host(line)
    env = len(count)
    out = np.zeros((steps, env, 3))
    phase = np.random.default_rng(seed).uniform(0, 6, env)
    for k in range(steps):
        for e in range(env):
            if count[e] < 2:
                continue
            p, t = along(line, e, 0.3 + ds * k)
            left = np.array([-t[1], t[0], 0.0]) / max(np.hypot(t[0], t[1]), 1e-12)
            lat = wobble * np.sin(0.13 * k + phase[e])
            out[k, e] = p + lat * left + [0, 0, 0.5 * wobble * np.cos(0.07 * k)]
    return out


@pytest.mark.parametrize("which", ["track", "shapes"])
def test_warm_agrees_with_full_along_a_smooth_trajectory(device, which):
    line = track(device) if which == "track" else shapes(device)
    env = line.count.shape[0]
    warm = LocalizerUtility(line, warm_window=4)
    full = LocalizerUtility(line)
    pos_w = wp.zeros(env, dtype=wp.vec3f, device=device)
    wobble = 0.1 if which == "track" else 0.03  # within the hairpin's gap
    for k, pts in enumerate(trajectory(line, 260, 0.031, wobble)):
        pos_w.assign(pts.astype(np.float32))
        w, f = host(warm.locate(pos_w)), host(full.locate(pos_w))
        np.testing.assert_array_equal(w["segment"], f["segment"], err_msg=f"step {k}")
        for key in FIELDS:
            np.testing.assert_allclose(w[key], f[key], atol=1e-6, err_msg=f"{key} step {k}")
        np.testing.assert_array_equal(warm.memory.numpy(), w["segment"])
        if k % 40 == 0:
            check(line, warm.frame, pts.astype(np.float32), f"step {k}")


def test_teleport_falls_back_to_a_full_search(device):
    tr = track(device)
    warm = LocalizerUtility(tr, warm_window=4)
    full = LocalizerUtility(tr)
    pos_w = wp.zeros(E, dtype=wp.vec3f, device=device)
    lengths = tr.length.numpy()
    for jump in (0.5, 0.37):  # the other side of the loop; about 2 windows ahead
        for k in range(3):
            pts = np.array([along(tr, e, 0.2 + 0.03 * k)[0] for e in range(2)] + [[0, 0, 0]])
            pos_w.assign(pts.astype(np.float32))
            warm.locate(pos_w)
        off = jump * lengths[:2] if jump == 0.5 else np.full(2, 0.37)
        pts = np.array([along(tr, e, 0.26 + off[e])[0] for e in range(2)] + [[0, 0, 0]])
        pts[:2] += [0.0, 0.0, 0.05]
        pos_w.assign(pts.astype(np.float32))
        w, f = host(warm.locate(pos_w)), host(full.locate(pos_w))
        for key in FIELDS:
            np.testing.assert_array_equal(w[key], f[key], err_msg=f"{key} jump {jump}")
        check(tr, warm.frame, pts.astype(np.float32), f"jump {jump}")


def hairpin_setup(device):
    """A warm localizer (W = 8) on two hairpins whose memory sits on the upper straight at
    x = 0 (env 0) / x = 0.5 (env 1), and the bound ``W * length / count``."""
    line = make_line(device, [hairpin(), hairpin()], n_max=192)
    loc = LocalizerUtility(line, warm_window=8)
    loc.locate(vec3(device, [[0.0, 0.12, 0.0], [0.5, 0.12, 0.0]]))
    bound = 8 * line.length.numpy() / line.count.numpy()
    return line, loc, bound


def upper(frame) -> np.ndarray:
    return frame.closest.numpy()[:, 1] > 0


def test_warm_answer_stays_on_the_travelled_branch_within_the_bound(device):
    line, loc, bound = hairpin_setup(device)
    full = LocalizerUtility(line)
    # below the lower straight (y = -0.1), closer to it than to the upper one (y = +0.1)
    inside = np.array([[0.0, 0.1 - 0.9 * bound[0], 0.0], [0.5, 0.1 - 0.9 * bound[1], 0.0]])
    pos = vec3(device, inside)
    np.testing.assert_array_equal(upper(full.locate(pos)), [False, False])
    np.testing.assert_array_equal(upper(loc.locate(pos)), [True, True])  # warm, in the bound
    np.testing.assert_allclose(loc.frame.distance.numpy(), 0.9 * bound, rtol=1e-5)
    # beyond the bound: full search
    loc.locate(vec3(device, [[0.0, 0.12, 0.0], [0.5, 0.12, 0.0]]))
    outside = inside.copy()
    outside[:, 1] = 0.1 - 1.1 * bound
    f = host(loc.locate(vec3(device, outside)))
    np.testing.assert_array_equal(upper(loc.frame), [False, False])
    for key in FIELDS:
        np.testing.assert_array_equal(f[key], host(full.locate(vec3(device, outside)))[key])


@pytest.mark.parametrize("how", ["reset", "refresh"])
def test_reset_and_refresh_force_a_full_search(device, how):
    line, loc, bound = hairpin_setup(device)
    full = LocalizerUtility(line)
    pos = vec3(device, [[0.0, 0.1 - 0.9 * bound[0], 0.0], [0.5, 0.1 - 0.9 * bound[1], 0.0]])
    mask = wp.array(np.array([1, 0], np.int32), device=device)
    mem = loc.memory.numpy().copy()
    frame_before = host(loc.frame)
    getattr(loc, how)(mask)
    np.testing.assert_array_equal(loc.memory.numpy(), [-1, mem[1]])  # only env 0 forgets
    for key in FIELDS:  # the frame keeps its last answer
        np.testing.assert_array_equal(host(loc.frame)[key], frame_before[key])
    np.testing.assert_array_equal(upper(loc.locate(pos)), [False, True])
    want = host(full.locate(pos))
    for key in FIELDS:
        np.testing.assert_array_equal(host(loc.frame)[key][0], want[key][0])
    getattr(loc, how)()  # every env
    np.testing.assert_array_equal(loc.memory.numpy(), [-1, -1])


def test_window_covering_the_loop_is_a_full_search(device):
    line = make_line(device, [circle(1.0, 12), hairpin()], n_max=192)
    loc = LocalizerUtility(line, warm_window=6)  # 2W+1 = 13 >= 12 beads: full for env 0
    full = LocalizerUtility(line)
    pos = vec3(device, [[1.0, 0.0, 0.0], [0.0, 0.12, 0.0]])
    loc.locate(pos)
    far = vec3(device, [[-1.0, 0.05, 0.0], [0.0, 0.12, 0.0]])
    np.testing.assert_array_equal(
        host(loc.locate(far))["segment"], host(full.locate(far))["segment"]
    )


# ----------------------------------------------------------------------------- no answer


def test_invalid_envs_and_non_finite_positions(device):
    pts = circle(1.0, 16)
    nan_beads = pts.copy()
    nan_beads[3] = np.nan
    line = make_line(
        device,
        [pts, pts, pts, pts, np.full((16, 3), 0.5), nan_beads, pts, nan_beads],
        n_max=16,
        valid=[1, 0, 1, 1, 1, 1, 1, 1],
        count=[16, 16, 1, 0, 16, 16, 16, 16],
    )
    # env 7: the NaN bead with a finite length and arc lengths (a hand-made line)
    length, arclen = line.length.numpy(), line.arclen.numpy().reshape(8, 16)
    length[7] = length[0]
    arclen[7] = arclen[0]
    line.length.assign(length)
    line.arclen.assign(arclen.reshape(-1))
    loc = LocalizerUtility(line, warm_window=2)
    inf, nan = float("inf"), float("nan")
    good = [1.0, 0.1, 0.0]
    for p6 in ([nan, 0.0, 0.0], [inf, 0.0, 0.0], [0.0, -inf, nan], good):
        pos = vec3(device, [good, good, good, good, good, [0.3, 0.0, 0.0], p6, [0.3, 0.0, 0.0]])
        f = host(loc.locate(pos))
        # invalid, count 1, count 0, every segment zero-length, a NaN length: no answer
        for e in (1, 2, 3, 4, 5):
            assert f["segment"][e] == -1
            for key in ("s", "n", "n_up", "distance", "closest", "tangent"):
                assert np.isnan(f[key][e]).all(), (key, e)
        assert f["segment"][0] >= 0
        # NaN beads: the segments through them never win; the others still answer, finite
        assert f["segment"][7] not in (2, 3)
        for key in ("s", "n", "n_up", "distance", "closest", "tangent"):
            assert np.isfinite(f[key][7]).all(), key
        if np.isfinite(p6).all():
            assert f["segment"][6] >= 0
        else:
            assert f["segment"][6] == -1 and np.isnan(f["s"][6]) and loc.memory.numpy()[6] == -1
        np.testing.assert_array_equal(loc.memory.numpy()[1:5], -1)
    k = loc.curvature.numpy()
    assert np.isnan(k[16:64]).all()  # invalid, too short
    np.testing.assert_array_equal(k[64:80], 0.0)  # every chord zero-length


# ----------------------------------------------------------------------------- curvature


def curvature_oracle(line) -> np.ndarray:
    center, _, _, count, valid = line_host(line)
    env, n_max = center.shape[:2]
    out = np.full((env, n_max), np.nan)
    for e in range(env):
        n = int(count[e])
        if valid[e] == 0 or n < 2:
            continue
        c = center[e, :n]
        a = c - np.roll(c, 1, 0)
        b = np.roll(c, -1, 0) - c
        cr = np.cross(a, b)
        ang = np.arctan2(np.linalg.norm(cr, axis=1), (a * b).sum(1))
        k = ang / (0.5 * (np.linalg.norm(a, axis=1) + np.linalg.norm(b, axis=1)))
        out[e, :n] = np.where(cr[:, 2] < 0, -k, k)
    return out.reshape(-1)


def ring(r, n) -> float:
    """The curvature of the formula at every bead of a regular n-gon on a circle of radius r:
    turning angle 2 pi / n over the chord 2 r sin(pi / n) (1/r (1 + O(1/n^2)))."""
    return (2 * np.pi / n) / (2 * r * np.sin(np.pi / n))


def test_curvature_of_circles_and_the_formula(device):
    line = shapes(device)
    loc = LocalizerUtility(line)
    k = loc.curvature.numpy()
    np.testing.assert_allclose(k, curvature_oracle(line), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(k[:64], ring(2.0, 64), rtol=1e-4)  # CCW circle: about +1/R
    assert abs(ring(2.0, 64) - 0.5) < 3e-4
    assert (k[192 : 192 + 48] < 0).all()  # clockwise (3D) circle: negative
    flat = make_line(device, [circle(1.5, 48, clockwise=True), circle(0.5, 40)], n_max=48)
    kf = LocalizerUtility(flat).curvature.numpy()
    np.testing.assert_allclose(kf[:48], -ring(1.5, 48), rtol=1e-4)  # clockwise: about -1/R
    np.testing.assert_allclose(kf[48:88], ring(0.5, 40), rtol=1e-4)
    assert np.isnan(kf[88:]).all()  # past count
    # the Track's resampled unit circle: about +1/R
    kt = LocalizerUtility(track(device)).curvature.numpy()
    n0 = int(track(device).count.numpy()[0])
    assert abs(np.median(kt[:n0]) - 1.0) < 0.05
    assert np.isnan(kt[2 * 384 :]).all()  # the invalid env


def test_curvature_at_interpolates_and_wraps(device):
    line = shapes(device)
    loc = LocalizerUtility(line)
    env, n_max = 4, 192
    _, arclen, length, count, _ = line_host(line)
    kk = loc.curvature.numpy().reshape(env, n_max)
    K = 9
    rng = np.random.default_rng(4)
    s = np.zeros((env, K))
    for e in range(env):
        n = int(count[e])
        s[e] = [
            arclen[e, 5],  # a bead
            0.5 * (arclen[e, 7] + arclen[e, 8]),  # a midpoint
            0.5 * (arclen[e, n - 1] + length[e]),  # the closing segment: bead n-1 -> 0
            arclen[e, 5] + length[e],  # wrapped
            arclen[e, 5] - 2 * length[e],
            rng.uniform(0, length[e]),
            rng.uniform(-length[e], 3 * length[e]),
            0.0,
            np.nan,
        ]
    s32 = s.astype(np.float32)
    out = wp.zeros(env * K, dtype=wp.float32, device=device)
    got = loc.curvature_at(wp.array(s32.reshape(-1), dtype=wp.float32, device=device), out)
    assert got is out
    got = got.numpy().reshape(env, K)
    for e in range(env):
        n = int(count[e])
        xp = np.concatenate([arclen[e, :n], [length[e]]])
        fp = np.concatenate([kk[e, :n], kk[e, :1]]).astype(np.float64)
        want = np.interp(np.mod(s32[e, :-1].astype(np.float64), length[e]), xp, fp)
        np.testing.assert_allclose(got[e, :-1], want, rtol=1e-4, atol=1e-4, err_msg=f"env {e}")
        assert np.isnan(got[e, -1])
        np.testing.assert_allclose(got[e, 0], kk[e, 5], rtol=1e-5)
        np.testing.assert_allclose(got[e, 1], 0.5 * (kk[e, 7] + kk[e, 8]), rtol=1e-4)
        np.testing.assert_allclose(got[e, 2], 0.5 * (kk[e, n - 1] + kk[e, 0]), rtol=1e-4)
    # invalid env: NaN
    bad = make_line(device, [circle(1.0, 8), circle(1.0, 8)], n_max=8, valid=[1, 0])
    b = LocalizerUtility(bad).curvature_at(
        wp.array(np.ones(4, np.float32), device=device),
        wp.zeros(4, dtype=wp.float32, device=device),
    )
    got = b.numpy()
    assert np.isfinite(got[:2]).all() and np.isnan(got[2:]).all()


def test_speed_profile(device):
    square = [(x, 0) for x in range(4)] + [(4, y) for y in range(4)]
    square += [(4 - x, 4) for x in range(4)] + [(0, 4 - y) for y in range(4)]
    line = make_line(device, [square, circle(0.5, 40), circle(1.0, 8)], n_max=40, valid=[1, 1, 0])
    loc = LocalizerUtility(line)
    out = wp.zeros(3 * 40, dtype=wp.float32, device=device)
    assert loc.speed_profile(2.0, 1.5, out) is out
    got = out.numpy()
    k = loc.curvature.numpy().astype(np.float64)
    assert (k[:16][[1, 2, 3]] == 0).all()  # straight beads of the square: curvature 0
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(k == 0, 1.5, np.minimum(1.5, np.sqrt(2.0 / np.abs(k))))
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
    assert np.isnan(got[16:40]).all() and np.isnan(got[80:]).all()  # past count, invalid
    np.testing.assert_allclose(got[40:80], 1.0, rtol=2e-3)  # sqrt(2 / 2)
    np.testing.assert_allclose(got[[1, 2, 3]], 1.5)
    np.testing.assert_allclose(got[0], np.sqrt(2.0 / k[0]), rtol=1e-6)  # a corner


# ----------------------------------------------------------------------------- masks


def test_masked_refresh_leaves_unmasked_envs_bitwise(device):
    line = make_line(device, [circle(1.0, 32), circle(2.0, 40), hairpin()], n_max=192)
    loc = LocalizerUtility(line, warm_window=3)
    loc.locate(vec3(device, [[1.0, 0.1, 0.0], [2.0, 0.1, 0.0], [0.0, 0.12, 0.0]]))
    before_k, before_m = loc.curvature.numpy().copy(), loc.memory.numpy().copy()
    assert (before_m >= 0).all()
    # change every env's geometry, refresh env 1 only
    grown = make_line(device, [circle(1.5, 32), circle(3.0, 40), hairpin(g=0.2)], n_max=192)
    wp.copy(line.center, grown.center)
    zero = wp.zeros(3, dtype=wp.int32, device=device)
    loc.refresh(zero)  # exact no-op
    assert loc.curvature.numpy().tobytes() == before_k.tobytes()
    assert loc.memory.numpy().tobytes() == before_m.tobytes()
    loc.refresh(wp.array(np.array([0, 1, 0], np.int32), device=device))
    k, m = loc.curvature.numpy(), loc.memory.numpy()
    for e in (0, 2):
        assert k[e * 192 : (e + 1) * 192].tobytes() == before_k[e * 192 : (e + 1) * 192].tobytes()
    np.testing.assert_array_equal(m, [before_m[0], -1, before_m[2]])
    np.testing.assert_allclose(k[192 : 192 + 40], ring(3.0, 40), rtol=1e-4)


# ----------------------------------------------------------------------------- component


@functools.cache
def track_course(device):
    course = Course.track(
        presets.track(num_envs=4, device=device),
        checkpoint_spacing=0.6,
        extra=[Localizer(warm_window=4)],
        seeds=42,
    )
    pos = wp.zeros(4, dtype=wp.vec3f, device=device)
    course.bind(position=pos)
    return course, pos


def test_component_steps_the_frame(device):
    course, pos = track_course(device)
    assert course.components["localizer"].utility is course.localizer
    tr = course.result
    for k, pts in enumerate(trajectory(tr, 30, 0.05, 0.08, seed=5)):
        pos.assign(pts.astype(np.float32))
        res = course.step()
        assert res["localizer"] is res.frame is course.localizer.frame
        if k % 10 == 0:
            check(tr, res.frame, pts.astype(np.float32), f"step {k}")


def test_component_masked_regenerate(device):
    course, pos = track_course(device)
    loc = course.localizer
    tr = course.result
    for pts in trajectory(tr, 6, 0.05, 0.05):
        pos.assign(pts.astype(np.float32))
        course.step()
    frame0, mem0, k0 = host(loc.frame), loc.memory.numpy().copy(), loc.curvature.numpy().copy()
    assert (mem0 >= 0).all()
    mask = wp.array(np.array([1, 0, 1, 0], np.int32), device=device)
    course.regenerate(mask=mask, advance=True)
    # the frame is untouched; unmasked envs keep curvature and memory bitwise
    for key in FIELDS:
        assert host(loc.frame)[key].tobytes() == frame0[key].tobytes()
    mem = loc.memory.numpy()
    np.testing.assert_array_equal(mem, [-1, mem0[1], -1, mem0[3]])
    n_max = tr.N_max
    k = loc.curvature.numpy()
    for e in (1, 3):
        rows = slice(e * n_max, (e + 1) * n_max)
        assert k[rows].tobytes() == k0[rows].tobytes()
    # masked envs: a full search on the new course
    res = course.step()
    want = host(LocalizerUtility(tr).locate(pos))
    for key in FIELDS:
        np.testing.assert_array_equal(host(res.frame)[key][[0, 2]], want[key][[0, 2]])
    check(tr, res.frame, pos.numpy(), "after regenerate")
    course.reset(wp.array(np.array([0, 0, 0, 1], np.int32), device=device))
    np.testing.assert_array_equal(loc.memory.numpy()[3], -1)


def test_gate_course_without_source_raises(device):
    gen = GateGenerator(presets.gates(num_envs=2, device=device, gate_width=0.1), seeds=1)
    with pytest.raises(ValueError, match="CenterlineFromGates.*source='centerline'"):
        Course(gen, [Localizer()])
    with pytest.raises(TypeError, match="CenterlineFromGates"):
        LocalizerUtility(gen.result)


# ----------------------------------------------------------------------------- arguments


def test_argument_checks(device):
    tr = track(device)
    for bad, err in ((0, ValueError), (16385, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(err, match="warm_window"):
            LocalizerUtility(tr, warm_window=bad)
        with pytest.raises(err, match="warm_window"):
            Localizer(warm_window=bad)
    with pytest.raises(TypeError, match="warm_window"):
        LocalizerUtility(tr, warm_window="8")
    assert WARM_WINDOW.check(None, "w") is None and WARM_WINDOW.check(16384, "w") == 16384
    with pytest.raises(TypeError, match="source"):
        Localizer(source=3)
    with pytest.raises(TypeError, match="line"):
        LocalizerUtility(tr.center)
    bad_line = Line(
        tr.center, wp.zeros(tr.center.shape[0], dtype=wp.float64, device=device), *[None] * 3
    )
    with pytest.raises(TypeError, match="'length'"):
        LocalizerUtility(bad_line)
    bad_line = Line(
        tr.center,
        wp.zeros(tr.center.shape[0], dtype=wp.float64, device=device),
        tr.length,
        tr.count,
        tr.valid,
    )
    with pytest.raises(TypeError, match="line.arclen"):
        LocalizerUtility(bad_line)
    short = Line(tr.center, tr.arclen[:10], tr.length, tr.count, tr.valid)
    with pytest.raises(ValueError, match="line.arclen"):
        LocalizerUtility(short)

    loc = LocalizerUtility(tr, warm_window=2)
    with pytest.raises(TypeError, match="position"):
        loc.locate(wp.zeros(E, dtype=wp.vec3d, device=device))
    with pytest.raises(ValueError, match="position"):
        loc.locate(wp.zeros(E + 1, dtype=wp.vec3f, device=device))
    with pytest.raises(TypeError, match="position"):
        loc.locate(np.zeros((E, 3), np.float32))
    for method in ("refresh", "reset"):
        with pytest.raises(TypeError, match="mask"):
            getattr(loc, method)(wp.zeros(E, dtype=wp.float32, device=device))
        with pytest.raises(ValueError, match="mask"):
            getattr(loc, method)(wp.zeros(E + 2, dtype=wp.int32, device=device))
    if wp.get_cuda_device_count() > 0:  # an array on the other device
        other = "cuda:0" if device == "cpu" else "cpu"
        with pytest.raises(ValueError, match="position is on"):
            loc.locate(wp.zeros(E, dtype=wp.vec3f, device=other))

    f32 = functools.partial(wp.zeros, dtype=wp.float32, device=device)
    with pytest.raises(TypeError, match="s "):
        loc.curvature_at(wp.zeros(E, dtype=wp.float64, device=device), f32(E))
    with pytest.raises(ValueError, match="s has shape"):
        loc.curvature_at(f32(E + 1), f32(E + 1))
    with pytest.raises(ValueError, match="out"):
        loc.curvature_at(f32(2 * E), f32(E))
    with pytest.raises(TypeError, match="out"):
        loc.curvature_at(f32(E), wp.zeros(E, dtype=wp.int32, device=device))

    out = f32(E * tr.N_max)
    for bad, err in (
        (0.0, ValueError),
        (-1.0, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        ("1", TypeError),
        (True, TypeError),
    ):
        with pytest.raises(err, match="max_lateral_accel"):
            loc.speed_profile(bad, 1.0, out)
        with pytest.raises(err, match="max_speed"):
            loc.speed_profile(1.0, bad, out)
    with pytest.raises(ValueError, match="out"):
        loc.speed_profile(1.0, 1.0, f32(E))


def test_clone_is_a_snapshot(device):
    tr = track(device)
    loc = LocalizerUtility(tr, warm_window=2)
    pos = vec3(device, [[1.1, 0.0, 0.0], [0.0, 0.4, 0.2], [0.0, 0.0, 0.0]])
    snap = loc.locate(pos).clone()
    assert isinstance(snap, TrackFrame)
    loc.locate(vec3(device, [[-1.1, 0.0, 0.0], [0.0, -0.4, 0.2], [0.0, 0.0, 0.0]]))
    assert snap.segment.numpy()[0] != loc.frame.segment.numpy()[0]
    fresh = TrackFrame.allocate(2, device)
    assert fresh.segment.numpy().tolist() == [-1, -1] and np.isnan(fresh.s.numpy()).all()


def test_recorded_locate_replays_like_eager(device):
    line = shapes(device)
    loc = LocalizerUtility(line, warm_window=4)
    pts = trajectory(line, 3, 0.05, 0.02)
    pos = vec3(device, pts[0])
    loc.locate(pos)  # load the module before recording
    mask = wp.ones(4, dtype=wp.int32, device=device)
    with wp.ScopedCapture(device=device) as cap:
        loc.refresh(mask)
        loc.locate(pos)
    for p in pts[1:]:
        pos.assign(p.astype(np.float32))
        want = host(LocalizerUtility(line).locate(pos))
        for key in ("s", "n", "n_up", "distance", "closest", "tangent"):
            getattr(loc.frame, key).fill_(7)
        loc.frame.segment.fill_(7)
        wp.capture_launch(cap.graph)
        got = host(loc.frame)
        for key in FIELDS:
            assert got[key].tobytes() == want[key].tobytes(), key
    with wp.ScopedCapture(device=device):
        with pytest.raises(CaptureError, match="capture"):
            LocalizerUtility(line)
