"""PropsResult / PropsUtility / Props against a float64 NumPy oracle on crafted and elevated
loops."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import warp as wp

from track_gen import FailBit, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import check_component
from track_gen.tools.props import (
    CONE_DIAMETER,
    CONE_HEIGHT,
    WALL_HEIGHT,
    WALL_THICKNESS,
    Props,
    PropsResult,
    PropsUtility,
    border_length_bound,
)

E, P = 3, 128
HALF_WIDTH = 0.1  # TrackGenConfig default
FIELDS = ("position", "orientation", "scale", "side", "count", "truncated")


def loops(scale: float = 1.0) -> np.ndarray:
    """A circle (r = 1), an ellipse (1.2 x 0.5) and a circle too tight for the road band
    (r = 0.05 < half_width: THICKNESS), counter-clockwise, float32 [E*P, 2]."""
    t = 2 * np.pi * np.arange(P) / P
    shapes = [(1.0, 1.0), (1.2, 0.5), (0.05, 0.05)]
    xy = [np.stack([a * np.cos(t), b * np.sin(t)], -1) for a, b in shapes]
    return (scale * np.concatenate(xy)).astype(np.float32)


def make_generator(device, xy: np.ndarray) -> TrackGenerator:
    gen = TrackGenerator(
        TrackGenConfig(
            generator="centerline", num_envs=E, num_points=P, device=device, relax_enable=False
        )
    )
    gen.inputs["centerline.xy"].assign(xy)
    gen.generate()
    return gen


@functools.cache
def shared_track(device):
    """A read-only generated batch per device (tests must not regenerate or edit it)."""
    return make_generator(device, loops()).result


def elevate(track, amp: float = 0.25, waves: int = 3) -> None:
    """Give every bead of ``track`` a z (level across the road: inner, centre and outer share
    it): ``amp * sin(waves * 2*pi * i / count)``, written through NumPy + assign."""
    n_max = track.N_max
    count = track.count.numpy()
    for name in ("inner", "center", "outer"):
        arr = getattr(track, name)
        pts = arr.numpy().reshape(-1, n_max, 3)
        for e in range(track.num_envs):
            n = count[e]
            pts[e, :n, 2] = amp * np.sin(waves * 2 * np.pi * np.arange(n) / n)
        arr.assign(pts.reshape(-1, 3))


# ----------------------------------------------------------------------------- the oracle
def rotate(q: np.ndarray, v) -> np.ndarray:
    """Quaternions ``q`` [..., 4] (x, y, z, w) applied to the vector ``v``, float64."""
    q = q.astype(np.float64)
    u, w = q[..., :3], q[..., 3:]
    v = np.broadcast_to(np.asarray(v, np.float64), u.shape)
    c = np.cross(u, v)
    return v + 2.0 * w * c + 2.0 * np.cross(u, c)


def border_props(pts: np.ndarray, n: int):
    """Props ``k = 0 .. n-1`` of one closed border ``pts`` [nb, 3] (float64) at arcs
    ``k * L / n``: (points [n, 3], candidate segment directions per prop: the segment holding
    the arc, and the previous one too when the arc sits on a bead), and L."""
    seg = np.roll(pts, -1, axis=0) - pts
    seg_len = np.linalg.norm(seg, axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg_len)])
    total = cum[-1]
    points, dirs = [], []
    for k in range(n):
        s = k * total / n
        i = min(int(np.searchsorted(cum, s, side="right")) - 1, len(pts) - 1)
        t = (s - cum[i]) / seg_len[i] if seg_len[i] > 0 else 0.0
        points.append(pts[i] + t * seg[i])
        cand = [seg[i]]
        if abs(s - cum[i]) < 1e-6 * total:  # on a bead: either neighbouring segment
            cand.append(seg[i - 1])
        dirs.append(cand)
    return np.array(points).reshape(n, 3), dirs, total


def oracle(track, kind: str, spacing: float, side: str, cap: int):
    """Per env: (count, truncated, [(side_id, points, dirs, L), ...] in row order)."""
    n_max = track.N_max
    borders = {
        0: track.inner.numpy().reshape(-1, n_max, 3).astype(np.float64),
        1: track.outer.numpy().reshape(-1, n_max, 3).astype(np.float64),
    }
    used = {"inner": (0,), "outer": (1,), "both": (0, 1)}[side]
    beads, valid = track.count.numpy(), track.valid.numpy()
    out = []
    for e in range(track.num_envs):
        nb = int(beads[e])
        if valid[e] == 0 or nb < 3:
            out.append((0, 0, []))
            continue
        lengths = {}
        for b in used:
            p = borders[b][e, :nb]
            lengths[b] = np.linalg.norm(np.roll(p, -1, axis=0) - p, axis=1).sum()
        if not all(np.isfinite(v) and v > 0 for v in lengths.values()):
            out.append((0, 0, []))
            continue
        want = {b: max(1, math.floor(lengths[b] / spacing + 0.5)) for b in used}
        total = sum(want.values())
        truncated = int(total > cap)
        if truncated:
            if len(used) == 2:
                n_in = math.floor(cap * want[0] / total)
                want = {0: n_in, 1: cap - n_in}
            else:
                want = {used[0]: cap}
        rows = []
        for b in used:
            if want[b] > 0:
                pts, dirs, length = border_props(borders[b][e, :nb], want[b])
                rows.append((b, pts, dirs, length))
        out.append((sum(want.values()), truncated, rows))
    return out


def host(ps: PropsResult) -> dict:
    """Host copies (on the CPU, ``numpy()`` is a view of the live buffer)."""
    return {f: getattr(ps, f).numpy().copy() for f in FIELDS}


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def assert_matches_oracle(placer: PropsUtility, envs=None, sizes=None):
    """Positions, orientations, scales, sides, counts and NaN padding of ``envs``."""
    ps, cap = placer.props, placer.max_props
    E_ = placer.num_envs
    want = oracle(placer.track, placer.kind, placer.spacing, placer.side, cap)
    got = host(ps)
    pos = got["position"].reshape(E_, cap, 3)
    quat = got["orientation"].reshape(E_, cap, 4)
    scale = got["scale"].reshape(E_, cap, 3)
    side = got["side"].reshape(E_, cap)
    d, h, th, wh = sizes or (
        CONE_DIAMETER.default,
        CONE_HEIGHT.default,
        WALL_THICKNESS.default,
        WALL_HEIGHT.default,
    )
    for e in range(E_) if envs is None else envs:
        count, truncated, rows = want[e]
        assert got["count"][e] == count, e
        assert got["truncated"][e] == truncated, e
        r = 0
        for b, pts, dirs, _ in rows:
            n = len(pts)
            rs = slice(r, r + n)
            np.testing.assert_array_equal(side[e, rs], b)
            q = quat[e, rs]
            np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)
            ex, ey, ez = (rotate(q, a) for a in np.eye(3))
            if placer.kind == "cone":
                np.testing.assert_allclose(pos[e, rs], pts, atol=2e-5)
                # upright, local x along the plan-view direction of the border segment
                np.testing.assert_allclose(ez, np.broadcast_to([0, 0, 1], ez.shape), atol=1e-5)
                for k in range(n):
                    errs = [
                        np.abs(ex[k] - unit(np.array([c[0], c[1], 0.0]))).max() for c in dirs[k]
                    ]
                    assert min(errs) < 1e-4, (e, b, k, errs)
                np.testing.assert_allclose(scale[e, rs], np.broadcast_to([d, d, h], (n, 3)))
            else:
                nxt = np.roll(pts, -1, axis=0)
                chord = nxt - pts
                clen = np.linalg.norm(chord, axis=1)
                np.testing.assert_allclose(pos[e, rs], 0.5 * (pts + nxt), atol=2e-5)
                np.testing.assert_allclose(scale[e, rs, 0], clen, atol=2e-5)
                np.testing.assert_allclose(scale[e, rs, 1:], np.broadcast_to([th, wh], (n, 2)))
                live = clen > 1e-6
                # local x along the 3D chord (pitched with the slope), local y horizontal
                np.testing.assert_allclose(ex[live], unit(chord[live]), atol=1e-4)
                np.testing.assert_allclose(ey[:, 2], 0.0, atol=1e-5)
                assert (ez[:, 2] > 0).all()
            r += n
        assert r == count
        assert np.isnan(pos[e, count:]).all() and np.isnan(quat[e, count:]).all()
        assert np.isnan(scale[e, count:]).all() and (side[e, count:] == -1).all()


# ----------------------------------------------------------------------------- placement
def test_crafted_batch_is_as_expected(device):
    track = shared_track(device)
    np.testing.assert_array_equal(track.valid.numpy(), [1, 1, 0])
    assert track.fail_mask.numpy()[2] & FailBit.THICKNESS


@pytest.mark.parametrize("kind", ["cone", "wall"])
def test_placement_matches_oracle(device, kind):
    track = shared_track(device)
    placer = PropsUtility(track, kind, 0.2, max_loop_length=10.0)
    assert placer.max_props == 2 * math.ceil(10.0 / 0.2)
    ps = placer.props
    assert isinstance(ps, PropsResult) and ps.kind == kind and ps.max_props == placer.max_props
    assert_matches_oracle(placer)
    # circle: inner 2*pi*0.9 / 0.2 -> 28, outer 2*pi*1.1 / 0.2 -> 35; the invalid env has none
    count = ps.count.numpy()
    assert count[0] == 28 + 35 and count[1] > 0 and count[2] == 0
    np.testing.assert_array_equal(ps.truncated.numpy(), 0)


def arcs_along(points: np.ndarray, border: np.ndarray) -> np.ndarray:
    """Arc of each of ``points`` along the closed polyline ``border`` (its nearest segment)."""
    seg = np.roll(border, -1, axis=0) - border
    seg_len = np.linalg.norm(seg, axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg_len)])
    out = []
    for p in points:
        t = np.clip(np.einsum("ij,ij->i", p - border, seg) / seg_len**2, 0.0, 1.0)
        dist = np.linalg.norm(border + t[:, None] * seg - p, axis=1)
        i = int(np.argmin(dist))
        assert dist[i] < 1e-5
        out.append(cum[i] + t[i] * seg_len[i])
    return np.array(out)


def test_spacing_is_even_and_seam_free(device):
    """Prop 0 is bead 0 of each border (bitwise); the placed points sit on their border at
    arcs k * L / n, so every step, the closing one (last prop -> prop 0) included, is L / n."""
    track = shared_track(device)
    placer = PropsUtility(track, "cone", 0.2, max_loop_length=10.0)
    pos = placer.props.position.numpy().reshape(E, -1, 3).astype(np.float64)
    n_max = track.N_max
    borders = (
        track.inner.numpy().reshape(E, n_max, 3).astype(np.float64),
        track.outer.numpy().reshape(E, n_max, 3).astype(np.float64),
    )
    count = track.count.numpy()
    want = oracle(track, "cone", 0.2, "both", placer.max_props)
    for e in range(2):
        row = 0
        for b, pts, _, length in want[e][2]:
            n = len(pts)
            got = pos[e, row : row + n]
            border = borders[b][e, : count[e]]
            np.testing.assert_array_equal(got[0], border[0])
            arcs = arcs_along(got, border)
            np.testing.assert_allclose(arcs, np.arange(n) * length / n, atol=2e-5)
            steps = np.diff(np.append(arcs, length))  # the last one is the seam step
            np.testing.assert_allclose(steps, length / n, atol=4e-5)
            assert abs(length / n - 0.2) <= 0.5 * 0.2 / n  # n = round(L / spacing)
            row += n


@pytest.mark.parametrize("side", ["inner", "outer"])
def test_one_side(device, side):
    track = shared_track(device)
    placer = PropsUtility(track, "wall", 0.3, side, max_loop_length=10.0)
    assert placer.max_props == math.ceil(10.0 / 0.3)
    assert_matches_oracle(placer)
    want = {"inner": 0, "outer": 1}[side]
    s = placer.props.side.numpy().reshape(E, -1)
    assert set(np.unique(s[:2])) == {want, -1}


def test_elevated_borders(device):
    """3D arcs decide the count and positions; cones stay upright, walls pitch with the
    slope."""
    gen = make_generator(device, loops())
    track = gen.result
    flat = {k: PropsUtility(track, k, 0.15, max_loop_length=20.0) for k in ("cone", "wall")}
    flat_count = flat["cone"].props.count.numpy().copy()
    elevate(track, amp=0.25, waves=3)
    for placer in flat.values():
        placer.place()
        assert_matches_oracle(placer)
        assert (placer.props.count.numpy()[:2] > flat_count[:2]).all()  # longer in 3D
    pos = flat["cone"].props.position.numpy().reshape(E, -1, 3)
    assert np.ptp(pos[0, :20, 2]) > 0.3  # the props follow the border's z
    q = flat["wall"].props.orientation.numpy().reshape(E, -1, 4)[0, : flat_count[0]]
    pitch = np.arcsin(np.clip(rotate(q, [1, 0, 0])[:, 2], -1, 1))
    assert np.abs(pitch).max() > 0.3  # sin(3 theta) * 0.25 on a unit circle: up to ~0.64 rad
    cone_q = flat["cone"].props.orientation.numpy().reshape(E, -1, 4)[0, : flat_count[0]]
    np.testing.assert_allclose(rotate(cone_q, [1, 0, 0])[:, 2], 0.0, atol=1e-6)


def test_sizes_and_single_prop_borders(device):
    """Custom sizes; a spacing longer than a border gives one prop per border (a wall then
    has length 0 and lies along the border at bead 0)."""
    track = shared_track(device)
    sizes = (0.1, 0.2, 0.03, 0.4)
    keys = ("cone_diameter", "cone_height", "wall_thickness", "wall_height")
    for kind in ("cone", "wall"):
        placer = PropsUtility(
            track, kind, 100.0, max_props=4, **dict(zip(keys, sizes, strict=True))
        )
        assert_matches_oracle(placer, sizes=sizes)
        np.testing.assert_array_equal(placer.props.count.numpy(), [2, 2, 0])
    scale = placer.props.scale.numpy().reshape(E, 4, 3)
    np.testing.assert_array_equal(scale[:2, :2, 0], 0.0)
    q = placer.props.orientation.numpy().reshape(E, 4, 4)[0, :2]
    inner = track.inner.numpy().reshape(E, -1, 3)[0]
    first = unit(inner[1] - inner[0])
    np.testing.assert_allclose(rotate(q[0], [1, 0, 0]), first, atol=1e-5)


def test_truncation_spreads_the_capacity(device):
    """Fewer rows than needed: count == M, truncated 1; the borders share M in proportion
    to their demands (inner: floor(M * n_in / (n_in + n_out))), each spread evenly."""
    track = shared_track(device)
    placer = PropsUtility(track, "cone", 0.2, max_props=20)
    assert_matches_oracle(placer)
    np.testing.assert_array_equal(placer.props.count.numpy(), [20, 20, 0])
    np.testing.assert_array_equal(placer.props.truncated.numpy(), [1, 1, 0])
    side = placer.props.side.numpy().reshape(E, 20)[0]
    n_in = 20 * 28 // (28 + 35)  # 8
    np.testing.assert_array_equal(side, [0] * n_in + [1] * (20 - n_in))
    pos = placer.props.position.numpy().reshape(E, 20, 3)[0]
    ang = np.unwrap(np.arctan2(pos[n_in:, 1], pos[n_in:, 0]))
    np.testing.assert_allclose(np.diff(ang), 2 * np.pi / (20 - n_in), rtol=1e-4)
    # one side, and a capacity of 1 for two borders (the inner border gets none)
    for kw, rows in ((dict(side="outer", max_props=5), [1] * 5), (dict(max_props=1), [1])):
        p = PropsUtility(track, "wall", 0.2, **kw)
        assert_matches_oracle(p)
        np.testing.assert_array_equal(p.props.truncated.numpy(), [1, 1, 0])
        np.testing.assert_array_equal(p.props.side.numpy().reshape(E, -1)[0], rows)


def test_invalid_and_short_envs_are_empty(device):
    gen = make_generator(device, loops())
    track = gen.result
    placer = PropsUtility(track, "wall", 0.2, max_loop_length=10.0)
    assert placer.props.count.numpy()[2] == 0  # THICKNESS
    count = track.count.numpy()
    count[1] = 2  # a valid env of 2 beads
    track.count.assign(count)
    placer.place()
    np.testing.assert_array_equal(placer.props.count.numpy()[1:], 0)
    assert_matches_oracle(placer)
    # NaN borders (a non-finite length) give no props either
    inner = track.inner.numpy()
    inner[3] = np.nan
    track.inner.assign(inner)
    placer.place()
    np.testing.assert_array_equal(placer.props.count.numpy(), 0)
    assert np.isnan(placer.props.position.numpy()).all()


def test_masked_place_changes_only_masked_envs(device):
    gen = make_generator(device, loops())
    placer = PropsUtility(gen.result, "cone", 0.2, max_loop_length=20.0)
    ps = placer.props
    before = host(ps)
    gen.inputs["centerline.xy"].assign(loops(1.5))
    gen.generate()
    mask = wp.array(np.array([0, 1, 0], np.int32), device=device)
    assert placer.place(mask) is ps
    after = host(ps)
    for k in FIELDS:
        a, b = before[k].reshape(E, -1), after[k].reshape(E, -1)
        for e in (0, 2):
            assert a[e].tobytes() == b[e].tobytes(), k
        if k == "count":
            assert a[1].tobytes() != b[1].tobytes()
    assert_matches_oracle(placer, envs=[1])
    # an all-zero mask is a no-op; None places every env
    mask.zero_()
    snap = host(ps)
    placer.place(mask)
    for k, v in host(ps).items():
        assert v.tobytes() == snap[k].tobytes(), k
    placer.place()
    assert_matches_oracle(placer)


def test_place_is_deterministic_and_clone_detaches(device):
    track = shared_track(device)
    a = PropsUtility(track, "wall", 0.25, max_loop_length=10.0)
    b = PropsUtility(track, "wall", 0.25, max_loop_length=10.0)
    snap = a.props.clone()
    assert snap.kind == "wall"
    a.place()
    for name in FIELDS:
        x = getattr(a.props, name).numpy().tobytes()
        assert x == getattr(b.props, name).numpy().tobytes(), name
        assert x == getattr(snap, name).numpy().tobytes(), name
        assert getattr(snap, name).ptr != getattr(a.props, name).ptr


def test_place_replays_in_a_graph(device):
    gen = make_generator(device, loops())
    placer = PropsUtility(gen.result, "wall", 0.2, max_loop_length=20.0)
    mask = wp.array(np.array([1, 1, 1], np.int32), device=device)
    with wp.ScopedCapture(device=device) as cap:
        placer.place(mask)
    gen.inputs["centerline.xy"].assign(loops(1.5))
    gen.generate()
    ps = placer.props
    ps.position.fill_(wp.vec3f(7.0, 7.0, 7.0))
    ps.scale.fill_(wp.vec3f(7.0, 7.0, 7.0))
    ps.orientation.fill_(wp.quatf(7.0, 7.0, 7.0, 7.0))
    for a in (ps.side, ps.count, ps.truncated):
        a.fill_(7)
    wp.capture_launch(cap.graph)
    assert_matches_oracle(placer)


# ----------------------------------------------------------------------------- component
def make_course(device, **props):
    return Course.track(
        presets.track(num_envs=4, device=device),
        checkpoint_spacing=0.6,
        extra=[Props("cone", spacing=0.2, **props)],
        seeds=11,
    )


def test_component_places_and_refreshes_masked_envs(device):
    course = make_course(device)
    comp = course.components["props"]
    assert isinstance(comp.result, PropsResult) and isinstance(comp.utility, PropsUtility)
    assert comp.result is comp.utility.props
    cfg = course.generator.config
    bound = border_length_bound((course.result.N_max + 1) * cfg.resolved_spacing, cfg.half_width)
    assert comp.utility.max_props == 2 * math.ceil(bound / 0.2)
    assert_matches_oracle(comp.utility)
    np.testing.assert_array_equal(comp.result.truncated.numpy(), 0)
    assert (comp.result.count.numpy()[course.result.valid.numpy() == 1] > 0).all()
    assert check_component(comp, course) == []
    # poison the rows of the envs left out (a re-placement would rewrite them)
    ps, cap = comp.result, comp.utility.max_props
    pos = ps.position.numpy().copy()
    pos[:cap] = 7.0
    pos[2 * cap : 3 * cap] = 7.0
    ps.position.assign(pos)
    before = host(ps)
    mask = wp.array(np.array([0, 1, 0, 1], np.int32), device=device)
    course.regenerate(mask=mask, advance=True)
    after = host(ps)
    for k in FIELDS:
        a, b = before[k].reshape(4, -1), after[k].reshape(4, -1)
        for e in (0, 2):
            assert a[e].tobytes() == b[e].tobytes(), k
    for e in (1, 3):  # a new course: new props
        assert before["position"][e * cap : (e + 1) * cap].tobytes() != (
            after["position"][e * cap : (e + 1) * cap].tobytes()
        )
    assert_matches_oracle(comp.utility, envs=[1, 3])
    # an all-zero mask keeps every prop
    mask.zero_()
    course.regenerate(mask=mask, advance=True)
    for k, v in host(comp.result).items():
        assert v.tobytes() == after[k].tobytes(), k


def test_component_explicit_capacity_and_name(device):
    course = make_course(device, side="outer", max_props=7, name="cones")
    comp = course.components["cones"]
    assert comp.utility.max_props == 7 and comp.utility.side == "outer"
    np.testing.assert_array_equal(comp.result.count.numpy()[course.result.valid.numpy() == 1], 7)
    assert_matches_oracle(comp.utility)


def test_gate_course_is_refused(device):
    with pytest.raises(TypeError, match="track"):
        Course.gates(
            presets.gates(num_envs=2, device=device, gate_width=0.1),
            extra=[Props("cone", spacing=0.2)],
            seeds=1,
        )
    gen = GateGenerator(presets.gates(num_envs=2, device=device, gate_width=0.1), seeds=1)
    with pytest.raises(TypeError, match="Track"):
        Course(gen, [Props("wall", spacing=0.2)])


# ----------------------------------------------------------------------------- arguments
def test_argument_validation(device):
    track = shared_track(device)
    # a wrong kind is a TypeError, a wrong value a ValueError, each naming the argument
    for bad in (0, -1.0, float("nan"), float("inf"), 1e-9, 1e9):
        with pytest.raises(ValueError, match="spacing"):
            PropsUtility(track, "cone", bad, max_props=10)
    for bad in (True, "0.2", None):
        with pytest.raises(TypeError, match="spacing"):
            PropsUtility(track, "cone", bad, max_props=10)
    with pytest.raises(ValueError, match="kind"):
        PropsUtility(track, "post", 0.2, max_props=10)
    with pytest.raises(TypeError, match="kind"):
        PropsUtility(track, 0, 0.2, max_props=10)
    with pytest.raises(ValueError, match="side"):
        PropsUtility(track, "cone", 0.2, "left", max_props=10)
    with pytest.raises(TypeError, match="side"):
        PropsUtility(track, "cone", 0.2, None, max_props=10)
    for bad in (0, -3, 65537):
        with pytest.raises(ValueError, match="max_props"):
            PropsUtility(track, "cone", 0.2, max_props=bad)
    for bad in (3.0, True, "10"):
        with pytest.raises(TypeError, match="max_props"):
            PropsUtility(track, "cone", 0.2, max_props=bad)
    for bad in (0.0, -2.0, float("nan")):
        with pytest.raises(ValueError, match="max_loop_length"):
            PropsUtility(track, "cone", 0.2, max_loop_length=bad)
    with pytest.raises(TypeError, match="max_loop_length"):
        PropsUtility(track, "cone", 0.2, max_loop_length=False)
    with pytest.raises(ValueError, match="65536"):
        PropsUtility(track, "cone", 1e-5, max_loop_length=100.0)
    with pytest.raises(ValueError, match="max_props.*max_loop_length"):
        PropsUtility(track, "cone", 0.2)
    with pytest.raises(TypeError, match="Track"):
        PropsUtility(object(), "cone", 0.2, max_props=10)
    for key in ("cone_diameter", "cone_height", "wall_thickness", "wall_height"):
        with pytest.raises(ValueError, match=key):
            PropsUtility(track, "cone", 0.2, max_props=10, **{key: -0.1})
        with pytest.raises(TypeError, match=key):
            PropsUtility(track, "cone", 0.2, max_props=10, **{key: "big"})
    placer = PropsUtility(track, "cone", 0.2, max_props=10)
    before = placer.props.position.numpy().tobytes()
    with pytest.raises(TypeError, match="mask"):
        placer.place(np.ones(E, np.int32))
    with pytest.raises(TypeError, match="mask"):
        placer.place(wp.ones(E, dtype=wp.float32, device=device))
    for bad in (
        wp.ones(E + 1, dtype=wp.int32, device=device),
        wp.ones((E, 1), dtype=wp.int32, device=device),
    ):
        with pytest.raises(ValueError, match="mask"):
            placer.place(bad)
    assert placer.props.position.numpy().tobytes() == before


def test_component_argument_validation():
    with pytest.raises(TypeError, match="spacing"):
        Props("cone")
    with pytest.raises(ValueError, match="spacing"):
        Props("cone", spacing=0.0)
    with pytest.raises(ValueError, match="kind"):
        Props("barrel", spacing=0.2)
    with pytest.raises(ValueError, match="side"):
        Props("cone", spacing=0.2, side="middle")
    with pytest.raises(TypeError, match="max_props"):
        Props("cone", spacing=0.2, max_props="many")
    with pytest.raises(ValueError, match="max_props"):
        Props("cone", spacing=0.2, max_props=0)
    with pytest.raises(ValueError, match="wall_height"):
        Props("wall", spacing=0.2, wall_height=0.0)
    with pytest.raises(TypeError, match="name"):
        Props("cone", spacing=0.2, name="")
    assert Props("cone", spacing=0.2).name == "props"
    assert Props("cone", spacing=0.2, max_props="auto").max_props is None


def test_component_auto_capacity_too_large(device):
    with pytest.raises(ValueError, match="max_props"):
        Course.track(
            presets.track(num_envs=2, device=device),
            checkpoint_spacing=0.6,
            extra=[Props("cone", spacing=1e-5)],
            seeds=1,
        )
