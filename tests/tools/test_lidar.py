"""tools.Lidar / LidarUtility against a float64 NumPy ray-cast oracle on generated tracks
(with cone and wall props) and gate courses (posts and frames); invalid envs, the noise
stream, masked regeneration, capture, CPU thread counts, memory and refusals."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import Lidar, LidarResult, LidarUtility, Props, check_component
from track_gen.tools.lidar import ScanStatus, beam_angles

TOL = 1.0e-4  # track units


# ----------------------------------------------------------------------------- the oracle
def headings(quat: np.ndarray) -> np.ndarray:
    """float64 [E, 2]: the plan direction of each quaternion's rotated local x (x, y, z, w)."""
    x, y, z, w = (quat[:, i].astype(np.float64) for i in range(4))
    c = w * w + x * x - y * y - z * z
    s = 2.0 * (x * y + w * z)
    n = np.hypot(c, s)
    out = np.tile([1.0, 0.0], (len(quat), 1))
    ok = n > 1e-30
    out[ok] = np.stack([c[ok] / n[ok], s[ok] / n[ok]], -1)
    return out


def ray_dirs(quat_row: np.ndarray, num_beams: int, fov: float) -> np.ndarray:
    """float64 [B, 2]: world directions of one agent's beams."""
    h = headings(quat_row[None])[0]
    a = np.arctan2(h[1], h[0]) + beam_angles(num_beams, fov)
    return np.stack([np.cos(a), np.sin(a)], -1)


def cross(a, b):
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def hit_segments(o, d, a, b) -> np.ndarray:
    """[B]: first t >= 0 of rays o + t d[B] on segments a[M] -> b[M] (inf: none)."""
    s = (b - a)[None]
    w = (a - o)[None]
    dd = d[:, None]
    den = cross(dd, s)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = cross(w, s) / den
        u = cross(w, dd) / den
    ok = (den != 0) & (t >= 0) & (u >= 0) & (u <= 1)
    return np.where(ok, t, np.inf).min(1, initial=np.inf)


def hit_discs(o, d, c, r) -> np.ndarray:
    """[B]: first t >= 0 of the rays entering discs c[M] of radii r[M] (0 inside one)."""
    w = (c - o)[None]  # [1, M, 2]
    m = (w * d[:, None]).sum(-1)
    h2 = r[None] ** 2 - ((w**2).sum(-1) - m**2)
    with np.errstate(invalid="ignore"):
        t = m - np.sqrt(h2)
    inside = ((c - o) ** 2).sum(-1) <= r**2
    t = np.where(inside[None], 0.0, t)
    ok = (h2 >= 0) & (t >= 0)
    return np.where(ok, t, np.inf).min(1, initial=np.inf)


def slab_hits(o_loc, d_loc, h) -> np.ndarray:
    """[B, M]: entry t of rays (local origins o_loc [B, M, k], directions d_loc [B, M, k])
    into boxes |x| <= h [M, k] (0 inside, inf: missed)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = (-h[None] - o_loc) / d_loc
        t2 = (h[None] - o_loc) / d_loc
    par = d_loc == 0
    lo = np.where(par, np.where(np.abs(o_loc) <= h[None], -np.inf, np.inf), np.minimum(t1, t2))
    hi = np.where(par, np.where(np.abs(o_loc) <= h[None], np.inf, -np.inf), np.maximum(t1, t2))
    tn = np.maximum(lo.max(-1), 0.0)
    tf = hi.min(-1)
    return np.where(tn <= tf, tn, np.inf)


def hit_rects(o, d, c, u, h) -> np.ndarray:
    """[B]: rays against rectangles (centres c[M], unit axes u[M], half extents h[M, 2])."""
    v = np.stack([-u[:, 1], u[:, 0]], -1)
    w = o - c  # [M, 2]
    o_loc = np.stack([(w * u).sum(-1), (w * v).sum(-1)], -1)[None].repeat(len(d), 0)
    d_loc = np.stack([d @ u.T, d @ v.T], -1)
    return slab_hits(o_loc, d_loc, h).min(1, initial=np.inf)


def quat_matrix(q: np.ndarray) -> np.ndarray:
    """[M, 3, 3] rotation (local -> world) of normalized quaternions (x, y, z, w)."""
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    x, y, z, w = q.T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def hit_frames(o3, d, pos, quat, hs, th, dp) -> np.ndarray:
    """[B]: horizontal rays from o3 against every gate's four member boxes."""
    R = quat_matrix(quat)  # [G, 3, 3]
    d3 = np.concatenate([d, np.zeros((len(d), 1))], -1)
    best = np.full(len(d), np.inf)
    for sign, axis in ((1, 1), (-1, 1), (1, 2), (-1, 2)):
        centre = np.zeros((len(pos), 3))
        centre[:, axis] = sign * (hs + th / 2)
        half = np.empty((len(pos), 3))
        half[:, 0] = dp / 2
        half[:, axis] = th / 2
        half[:, 3 - axis] = hs + th
        w = o3 - pos  # [G, 3]
        o_loc = np.einsum("gji,gj->gi", R, w) - centre
        d_loc = np.einsum("gji,bj->bgi", R, d3)
        best = np.minimum(best, slab_hits(o_loc[None].repeat(len(d), 0), d_loc, half).min(1))
    return best


def oracle(scanner: LidarUtility, course, props, position, orientation) -> np.ndarray:
    """float64 [E, B]: the exact first-hit distance of every beam (inf: nothing), NaN for an
    env without a course or a non-finite pose."""
    E, B = scanner.num_envs, scanner.num_beams
    out = np.full((E, B), np.nan)
    valid = course.valid.numpy()
    count = course.count.numpy()
    for e in range(E):
        p, q = position[e].astype(np.float64), orientation[e].astype(np.float64)
        if not (np.isfinite(p).all() and np.isfinite(q).all()) or valid[e] == 0:
            continue
        d = ray_dirs(q, B, scanner.fov)
        o = p[:2]
        if scanner.gates:
            n = int(count[e])
            if n == 0:
                continue
            rows = slice(e * scanner.n_max, e * scanner.n_max + n)
            if scanner.gate_model == "posts":
                posts = np.concatenate(
                    [course.left.numpy()[rows, :2], course.right.numpy()[rows, :2]]
                ).astype(np.float64)
                r = np.full(len(posts), scanner.post_radius)
                out[e] = hit_discs(o, d, posts, r)
            else:
                out[e] = hit_frames(
                    p,
                    d,
                    course.position.numpy()[rows].astype(np.float64),
                    course.orientation.numpy()[rows].astype(np.float64),
                    course.half_size.numpy()[rows].astype(np.float64),
                    scanner.frame_thickness,
                    scanner.frame_depth,
                )
            continue
        n = int(count[e])
        rows = slice(e * scanner.n_max, e * scanner.n_max + n)
        best = np.full(B, np.inf)
        for border in (course.inner, course.outer):
            pts = border.numpy()[rows, :2].astype(np.float64)
            best = np.minimum(best, hit_segments(o, d, pts, np.roll(pts, -1, 0)))
        if props is not None:
            m, M = int(props.count.numpy()[e]), props.max_props
            k = slice(e * M, e * M + m)
            c = props.position.numpy()[k, :2].astype(np.float64)
            sc = props.scale.numpy()[k].astype(np.float64)
            if props.kind == "cone":
                best = np.minimum(best, hit_discs(o, d, c, sc[:, 0] / 2))
            else:
                qq = props.orientation.numpy()[k].astype(np.float64)
                ax = quat_matrix(qq)[:, :2, 0]  # plan part of the local x axis
                ln = np.linalg.norm(ax, axis=1)
                h = np.stack([sc[:, 0] * ln / 2, sc[:, 1] / 2], -1)
                best = np.minimum(best, hit_rects(o, d, c, ax / ln[:, None], h))
        out[e] = best
    return out


def assert_matches(scan: LidarResult, expect: np.ndarray, max_range: float) -> None:
    """Every beam of ``scan`` against the oracle: NaN where it is NaN, else the first hit
    within ``max_range`` to TOL (a beam whose exact hit lies within TOL of max_range may
    read either)."""
    dist = scan.distance.numpy().reshape(expect.shape).astype(np.float64)
    hit = scan.hit.numpy().reshape(expect.shape)
    nan = np.isnan(expect)
    np.testing.assert_array_equal(np.isnan(dist), nan)
    assert (hit[nan] == 0).all()
    max_range = float(np.float32(max_range))  # the scanner's float32 value
    want = np.where(expect <= max_range, expect, max_range)
    edge = np.abs(expect - max_range) <= TOL
    ok = ~nan
    np.testing.assert_array_equal(hit[ok & ~edge], (expect[ok & ~edge] <= max_range).astype(int))
    err = np.abs(dist[ok] - want[ok])
    assert err.max(initial=0.0) <= TOL, err.max()
    assert (dist[ok] >= 0).all() and (dist[ok] <= max_range).all()


# ----------------------------------------------------------------------------- poses
def poses(course, rng, spread: float = 0.08, z_spread: float = 0.0):
    """Agents near each env's centerline (random bead, offset, yaw), float32 host arrays."""
    r = course.result
    E = r.num_envs
    pos = np.zeros((E, 3), np.float32)
    quat = np.zeros((E, 4), np.float32)
    count = np.maximum(r.count.numpy(), 1)
    rows = getattr(r, "center", None)
    rows = (rows if rows is not None else r.position).numpy().reshape(E, -1, 3)
    for e in range(E):
        p = rows[e, rng.integers(count[e])]
        p = np.nan_to_num(p) + np.r_[rng.uniform(-spread, spread, 2), rng.uniform(-1, 1) * z_spread]
        yaw = rng.uniform(-np.pi, np.pi)
        pos[e] = p
        quat[e] = [0, 0, np.sin(yaw / 2), np.cos(yaw / 2)]
    return pos, quat


def bind(course, pos, quat):
    dev = course.generator.device
    p = wp.array(pos, dtype=wp.vec3f, device=dev)
    q = wp.array(quat, dtype=wp.quatf, device=dev)
    course.bind(position=p, orientation=q)
    return p, q


def check_course(course, rng, trials: int = 3, **pose_kw):
    comp = course.components["lidar"]
    u = comp.utility
    props = u.props
    for _ in range(trials):
        pos, quat = poses(course, rng, **pose_kw)
        bind(course, pos, quat)
        scan = course.step()["lidar"]
        assert scan is comp.result
        assert_matches(scan, oracle(u, course.result, props, pos, quat), u.max_range)


def track_course(device, E=6, extra=(), seeds=3, **kw):
    return Course.track(
        presets.track(num_envs=E, device=device, **kw),
        checkpoint_spacing=0.6,
        extra=list(extra),
        seeds=seeds,
    )


def gate_course(device, E=4, extra=(), seeds=5, **kw):
    return Course.gates(
        presets.gates(num_envs=E, device=device, gate_width=0.2, **kw),
        extra=list(extra),
        seeds=seeds,
    )


# ----------------------------------------------------------------------------- geometry
def test_track_borders_match_the_oracle(device):
    course = track_course(device, extra=[Lidar(90, max_range=0.6)])
    u = course.components["lidar"].utility
    assert u.props is None
    valid = course.result.valid.numpy()
    assert valid.any()
    expect = np.where(valid != 0, int(ScanStatus.GRID), int(ScanStatus.NONE))
    np.testing.assert_array_equal(u.status.numpy(), expect)
    check_course(course, np.random.default_rng(0))
    check_course(course, np.random.default_rng(1), trials=1, spread=0.6)  # off the road too


@pytest.mark.parametrize("kind", ["cone", "wall"])
def test_props_match_the_oracle(device, kind):
    lidar = Lidar(72, fov=4.0, max_range=0.5)
    course = track_course(device, extra=[Props(kind, spacing=0.08), lidar])
    u = lidar.utility
    assert u.props is course.components["props"].result
    check_course(course, np.random.default_rng(2), spread=0.1)
    # props=None ignores them; a named props component orders the lidar after it
    other = track_course(device, extra=[Lidar(8, props=None, name="plain")])
    assert other.components["plain"].utility.props is None
    named = Lidar(8, props="cones")
    assert "cones" in named.after
    c = track_course(device, extra=[named, Props(kind, spacing=0.2, name="cones")])
    order = list(c.components)
    assert order.index("cones") < order.index("lidar")
    assert named.utility.props is c.components["cones"].result
    with pytest.raises(ValueError, match="cones"):
        track_course(device, extra=[Lidar(8, props="cones")])


def test_a_tiny_grid_and_brute_force_agree_with_the_oracle(device):
    """One cell (every item in it), fine grids (long walks), and a capacity too small for the
    lists (brute force)."""
    cases = (({"grid_cells": 1}, ScanStatus.GRID), ({"grid_cells": 64}, None))
    cases += (({"grid_cells": 200, "cell_entries": 64}, ScanStatus.GRID),)  # long DDA walks
    for kw, status in cases:
        course = track_course(device, E=3, extra=[Props("wall", spacing=0.1), Lidar(40, **kw)])
        got = course.components["lidar"].utility.status.numpy()
        if status is not None:
            assert (got[course.result.valid.numpy() != 0] == int(status)).all()
        check_course(course, np.random.default_rng(3), trials=2)
    gen = course.generator
    scanner = LidarUtility(gen.result, 40, cell_entries=1, grid_cells=256, max_range=2.0)
    assert (scanner.status.numpy()[gen.result.valid.numpy() != 0] == int(ScanStatus.BRUTE)).all()
    pos, quat = poses(course, np.random.default_rng(4))
    p = wp.array(pos, dtype=wp.vec3f, device=device)
    q = wp.array(quat, dtype=wp.quatf, device=device)
    assert_matches(scanner.scan(p, q), oracle(scanner, gen.result, None, pos, quat), 2.0)


@pytest.mark.parametrize("model", ["posts", "frames"])
def test_gates_match_the_oracle(device, model):
    lidar = Lidar(120, max_range=1.5, gate_model=model, post_radius=0.03, frame_depth=0.02)
    course = gate_course(device, extra=[lidar])
    valid = course.result.valid.numpy() != 0
    assert (lidar.utility.status.numpy()[valid] == int(ScanStatus.GATES)).all()
    check_course(course, np.random.default_rng(5), spread=0.3, z_spread=0.15)
    hits = course.step()["lidar"].hit.numpy()
    assert hits.any() and not hits.all()


def test_a_pitched_agent_keeps_its_heading(device):
    """Only the yaw of the orientation turns the beams (a pitch and a scale do not)."""
    course = track_course(device, E=3, extra=[Lidar(16)])
    pos, quat = poses(course, np.random.default_rng(6))
    bind(course, pos, quat)
    flat = course.step()["lidar"].distance.numpy().copy()
    yaw = 2 * np.arctan2(quat[:, 2], quat[:, 3])
    pitch = 0.4
    # q = q_yaw * q_pitch (about local y), scaled by 3
    cy, sy, cp, sp = np.cos(yaw / 2), np.sin(yaw / 2), np.cos(pitch / 2), np.sin(pitch / 2)
    tilted = 3.0 * np.stack([-sy * sp, cy * sp, sy * cp, cy * cp], -1).astype(np.float32)
    bind(course, pos, tilted)
    np.testing.assert_allclose(course.step()["lidar"].distance.numpy(), flat, atol=1e-5)


# ----------------------------------------------------------------------------- invalid envs
def _loops() -> np.ndarray:
    """A circle (r = 1), an ellipse and a circle too tight for the road band (invalid)."""
    t = 2 * np.pi * np.arange(128) / 128
    xy = [
        np.stack([a * np.cos(t), b * np.sin(t)], -1) for a, b in ((1, 1), (1.2, 0.5), (0.05, 0.05))
    ]
    return np.concatenate(xy).astype(np.float32)


@functools.cache
def crafted(device):
    gen = TrackGenerator(
        TrackGenConfig(
            generator="centerline", num_envs=3, num_points=128, device=device, relax_enable=False
        )
    )
    gen.inputs["centerline.xy"].assign(_loops())
    gen.generate()
    return gen


def test_invalid_envs_and_bad_poses_answer_nan(device):
    gen = crafted(device)
    valid = gen.result.valid.numpy()
    assert valid.tolist() == [1, 1, 0]
    scanner = LidarUtility(gen.result, 24, max_range=3.0)
    assert scanner.status.numpy().tolist() == [1, 1, 0]
    pos = np.array([[0.0, 0.0, 0.0], [np.nan, 0.0, 0.0], [0.0, 0.0, 0.0]], np.float32)
    quat = np.array([[0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 1]], np.float32)
    p = wp.array(pos, dtype=wp.vec3f, device=device)
    q = wp.array(quat, dtype=wp.quatf, device=device)
    scan = scanner.scan(p, q)
    d = scan.distance.numpy().reshape(3, -1)
    assert np.isfinite(d[0]).all() and np.isnan(d[1:]).all()
    assert (scan.hit.numpy().reshape(3, -1)[1:] == 0).all()
    # the circle's centre sees the inner border (r = 1 - half_width) on every beam
    np.testing.assert_allclose(d[0], 0.9, atol=2e-3)
    assert_matches(scan, oracle(scanner, gen.result, None, pos, quat), 3.0)
    # a non-finite orientation, a huge position, a zero quaternion
    pos[1] = [1e30, -1e30, 0]
    quat[0] = [np.inf, 0, 0, 1]
    quat[1] = 0
    p.assign(pos)
    q.assign(quat)
    d = scanner.scan(p, q).distance.numpy().reshape(3, -1)
    assert np.isnan(d[0]).all()
    np.testing.assert_array_equal(d[1], 3.0)  # beyond every border: nothing within range
    # nothing within range: max_range, hit 0
    short = LidarUtility(gen.result, 8, max_range=0.5)
    pos[0] = 0
    quat[0] = [0, 0, 0, 1]
    p.assign(pos)
    q.assign(quat)
    s = short.scan(p, q)
    np.testing.assert_array_equal(s.distance.numpy()[:8], 0.5)
    np.testing.assert_array_equal(s.hit.numpy()[:8], 0)


# ----------------------------------------------------------------------------- noise
def _noisy_course(device, seeds=3, **kw):
    return track_course(device, E=5, extra=[Lidar(64, max_range=0.8, **kw)], seeds=seeds)


def test_noise_is_a_pure_function_of_seed_epoch_and_step(device):
    rng = np.random.default_rng(7)
    a = _noisy_course(device, noise_std=0.01, dropout=0.1)
    b = _noisy_course(device, noise_std=0.01, dropout=0.1)
    clean = _noisy_course(device)
    pos, quat = poses(a, rng)
    for c in (a, b, clean):
        bind(c, pos, quat)
    first = [a.step()["lidar"].clone() for _ in range(3)]
    second = [b.step()["lidar"].clone() for _ in range(3)]
    truth = clean.step()["lidar"]
    for x, y in zip(first, second, strict=True):
        assert x.distance.numpy().tobytes() == y.distance.numpy().tobytes()
        assert x.hit.numpy().tobytes() == y.hit.numpy().tobytes()
    assert first[0].distance.numpy().tobytes() != first[1].distance.numpy().tobytes()
    np.testing.assert_array_equal(first[2].step.numpy(), 3)
    # statistics over the three steps: dropout rate and unclamped hit noise
    d0, h0 = truth.distance.numpy(), truth.hit.numpy()
    drops, errs = [], []
    for x in first:
        d, h = x.distance.numpy(), x.hit.numpy()
        drops.append((h0 == 1) & (h == 0))
        keep = (h0 == 1) & (h == 1) & (d > 0) & (d < 0.8)
        errs.append(d[keep] - d0[keep])
    rate = np.concatenate(drops).sum() / (3 * (h0 == 1).sum())
    err = np.concatenate(errs)
    assert 0.06 < rate < 0.14, rate
    assert abs(err.mean()) < 0.002 and 0.008 < err.std() < 0.012, (err.mean(), err.std())
    # reset restarts the stream: the first scan again
    a.reset()
    np.testing.assert_array_equal(a.components["lidar"].result.step.numpy(), 0)
    again = a.step()["lidar"]
    assert again.distance.numpy().tobytes() == first[0].distance.numpy().tobytes()
    # another seed draws another stream
    other = _noisy_course(device, seeds=4, noise_std=0.01, dropout=0.1)
    assert other.components["lidar"].utility.key.numpy().tolist() != (
        a.components["lidar"].utility.key.numpy().tolist()
    )


def test_masked_regeneration_keeps_the_unmasked_streams(device):
    rng = np.random.default_rng(8)
    a = _noisy_course(device, noise_std=0.02, dropout=0.2)
    b = _noisy_course(device, noise_std=0.02, dropout=0.2)
    pos, quat = poses(a, rng)
    for c in (a, b):
        bind(c, pos, quat)
        c.step()
    mask = a.generator.inputs["regen_mask"]
    mask.assign(np.array([0, 1, 0, 1, 0], np.int32))
    ua = a.components["lidar"].utility
    key0 = ua.key.numpy().copy()
    a.regenerate(mask=mask, advance=True)
    key1 = ua.key.numpy()
    keep = np.array([0, 2, 4])
    np.testing.assert_array_equal(key1[keep], key0[keep])
    assert (key1[[1, 3]] != key0[[1, 3]]).all()
    np.testing.assert_array_equal(ua.scan_result.step.numpy(), [1, 0, 1, 0, 1])
    sa, sb = a.step()["lidar"], b.step()["lidar"]
    da, db = sa.distance.numpy().reshape(5, -1), sb.distance.numpy().reshape(5, -1)
    assert da[keep].tobytes() == db[keep].tobytes()
    # an all-zero mask changes no key, no grid, no counter
    before = {k: getattr(ua, k).numpy().copy() for k in ("key", "status", "grid", "cell_start")}
    steps = ua.scan_result.step.numpy().copy()
    mask.zero_()
    a.regenerate(mask=mask, advance=True)
    for k, v in before.items():
        assert getattr(ua, k).numpy().tobytes() == v.tobytes(), k
    np.testing.assert_array_equal(ua.scan_result.step.numpy(), steps)


# ----------------------------------------------------------------------------- contract
def test_capture_equals_eager(device):
    rng = np.random.default_rng(9)
    for make in (
        lambda: track_course(
            device, E=4, extra=[Props("cone", spacing=0.2), Lidar(32, noise_std=0.01)]
        ),
        lambda: gate_course(device, E=3, extra=[Lidar(32, gate_model="frames", dropout=0.3)]),
    ):
        eager, graph = make(), make()
        pos, quat = poses(eager, rng)
        bind(eager, pos, quat)
        bind(graph, pos, quat)
        comp = graph.components["lidar"]
        assert check_component(comp, graph) == []
        with wp.ScopedCapture(device=device) as cap:
            graph.step()
        expect = [eager.step()["lidar"].clone() for _ in range(2)]
        r = comp.result
        for want in expect:
            r.distance.fill_(7.0)
            r.hit.fill_(7)
            wp.capture_launch(cap.graph)
            assert r.distance.numpy().tobytes() == want.distance.numpy().tobytes()
            assert r.hit.numpy().tobytes() == want.hit.numpy().tobytes()
            assert r.step.numpy().tobytes() == want.step.numpy().tobytes()


def test_bitwise_identical_for_every_cpu_thread_count():
    runs = []
    rng = np.random.default_rng(10)
    pos = quat = None
    for t in (1, 2, 3):
        course = track_course(
            "cpu",
            E=11,
            extra=[Props("wall", spacing=0.2), Lidar(48, noise_std=0.01, dropout=0.1)],
            cpu_threads=t,
        )
        if pos is None:
            pos, quat = poses(course, rng)
        bind(course, pos, quat)
        u = course.components["lidar"].utility
        got = [course.step()["lidar"].clone()]
        mask = course.generator.inputs["regen_mask"]
        mask.assign((np.arange(11) % 3 == 1).astype(np.int32))
        course.regenerate(mask=mask, advance=True)
        course.regenerate(advance=True)
        got.append(course.step()["lidar"].clone())
        runs.append(
            [(s.distance.numpy().tobytes(), s.hit.numpy().tobytes()) for s in got]
            + [
                u.cell_item.numpy().tobytes(),
                u.cell_start.numpy().tobytes(),
                u.key.numpy().tobytes(),
            ]
        )
    assert runs[0] == runs[1] == runs[2]


def _arrays(obj, seen: dict) -> None:
    """Every wp.array reachable through the attributes of ``obj`` (by id)."""
    if isinstance(obj, wp.array):
        seen[id(obj)] = obj
        return
    if isinstance(obj, (list, tuple)):
        for v in obj:
            _arrays(v, seen)
        return
    if hasattr(obj, "__dict__") and not isinstance(obj, (type, wp.Device)):
        if id(obj) in seen:
            return
        seen[id(obj)] = None
        for v in vars(obj).values():
            _arrays(v, seen)


@pytest.mark.parametrize("family", ["track", "gates"])
def test_planned_bytes_are_exact(device, family):
    if family == "track":
        course = track_course(device, E=3, extra=[Props("cone", spacing=0.2), Lidar(20)])
    else:
        course = gate_course(device, E=3, extra=[Lidar(20)])
    comp = course.components["lidar"]
    mine, theirs = {}, {}
    _arrays(comp.utility, mine)
    _arrays(course.generator, theirs)
    for name, other in course.components.items():
        if name != "lidar":
            _arrays(other.utility, theirs)
            _arrays(other.result, theirs)
    own = [a for k, a in mine.items() if a is not None and k not in theirs]
    own = {id(a.ptr if a.ptr else a): a for a in own}  # a view shares its parent's memory
    allocated = sum(a.capacity for a in own.values())
    assert comp.planned_bytes(course.generator.layout, course.generator.config) == allocated


# ----------------------------------------------------------------------------- refusals
def test_arguments_are_checked_before_anything_is_built():
    for kw, err in (
        ({"num_beams": 0}, ValueError),
        ({"num_beams": 5000}, ValueError),
        ({"num_beams": 2.5}, TypeError),
        ({"fov": 0.0}, ValueError),
        ({"fov": 7.0}, ValueError),
        ({"max_range": 0.0}, ValueError),
        ({"max_range": float("nan")}, ValueError),
        ({"noise_std": -1.0}, ValueError),
        ({"dropout": 1.5}, ValueError),
        ({"gate_model": "rings"}, ValueError),
        ({"grid_cells": 0}, ValueError),
        ({"props": 3}, TypeError),
    ):
        args = {"num_beams": 8, **kw}
        name = next(iter(kw))
        with pytest.raises(err, match=name if name != "props" else "props"):
            Lidar(args.pop("num_beams"), **args)


def test_bad_bindings_are_refused_and_change_nothing(device):
    course = track_course(device, E=3, extra=[Lidar(8)])
    pos, quat = poses(course, np.random.default_rng(11))
    p, q = bind(course, pos, quat)
    comp = course.components["lidar"]
    with pytest.raises(TypeError, match="orientation"):
        course.bind(position=p, orientation=wp.zeros(3, dtype=wp.vec4f, device=device))
    with pytest.raises(ValueError, match="position"):
        course.bind(position=wp.zeros(4, dtype=wp.vec3f, device=device), orientation=q)
    assert comp.bound["position"] is p and comp.bound["orientation"] is q
    u = comp.utility
    before = u.scan_result.distance.numpy().copy()
    with pytest.raises(TypeError, match="position"):
        u.scan(wp.zeros(3, dtype=wp.vec2f, device=device), q)
    with pytest.raises(ValueError, match="orientation"):
        u.scan(p, wp.zeros(2, dtype=wp.quatf, device=device))
    assert u.scan_result.distance.numpy().tobytes() == before.tobytes()
    with pytest.raises(TypeError, match="Track or a GateSequence"):
        LidarUtility(object(), 8)
