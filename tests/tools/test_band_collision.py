"""BandCollisionUtility against an independent NumPy oracle of the road band.

The tracks are hand-made loops (circle, ellipse, stadium, clockwise circle) written into the
"centerline" sampler's input; the band of each is the union of the quads between its
index-aligned borders. The oracle below is written from the documented definition in float64:
even-odd point-in-quad, distances to the border polylines, the closest pair between a border
segment and a solid box.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from track_gen import CaptureError, TrackGenConfig, TrackGenerator
from track_gen.tools import BandCollision, BandCollisionResult, BandCollisionUtility

E, P, HW = 4, 128, 0.1
TOL = 2e-5  # float32 kernels vs float64 oracle, coordinates of order 1


# ----------------------------------------------------------------------------- loops


def _circle(r, c=(0.0, 0.0), clockwise=False):
    t = 2 * np.pi * np.arange(P) / P
    if clockwise:
        t = -t
    return np.stack([c[0] + r * np.cos(t), c[1] + r * np.sin(t)], -1)


def _ellipse(a, b):
    t = 2 * np.pi * np.arange(P) / P
    return np.stack([a * np.cos(t), b * np.sin(t)], -1)


def _stadium(r, half_straight):
    """Two half circles of radius r joined by straights of length 2*half_straight."""
    L = 4 * half_straight + 2 * np.pi * r
    s = L * np.arange(P) / P
    out = np.zeros((P, 2))
    a = 2 * half_straight
    for k, x in enumerate(s):
        if x < a:  # bottom straight, left to right
            out[k] = (-half_straight + x, -r)
        elif x < a + np.pi * r:  # right half circle
            t = -np.pi / 2 + (x - a) / r
            out[k] = (half_straight + r * np.cos(t), r * np.sin(t))
        elif x < 2 * a + np.pi * r:  # top straight, right to left
            out[k] = (half_straight - (x - a - np.pi * r), r)
        else:  # left half circle
            t = np.pi / 2 + (x - 2 * a - np.pi * r) / r
            out[k] = (-half_straight + r * np.cos(t), r * np.sin(t))
    return out


def default_loops():
    return np.stack(
        [
            _circle(0.6, c=(0.3, -0.2)),
            _ellipse(0.9, 0.5),
            _stadium(0.45, 0.5),
            _circle(1.0, clockwise=True),
        ]
    )


def make_track(device, loops=None):
    loops = default_loops() if loops is None else loops
    gen = TrackGenerator(
        TrackGenConfig(
            generator="centerline",
            num_envs=len(loops),
            num_points=P,
            device=device,
            relax_enable=False,
            half_width=HW,
        )
    )
    gen.inputs["centerline.xy"].assign(loops.reshape(-1, 2).astype(np.float32))
    gen.generate()
    return gen, gen.result


# ----------------------------------------------------------------------------- oracle


def env_borders(track, e):
    n, N = int(track.count.numpy()[e]), track.N_max
    inner = track.inner.numpy().reshape(-1, N, 3)[e, :n, :2].astype(np.float64)
    outer = track.outer.numpy().reshape(-1, N, 3)[e, :n, :2].astype(np.float64)
    return inner, outer


def in_band(pts, inner, outer):
    """[M] bool: the point lies in some quad (inner_i, outer_i, outer_i+1, inner_i+1)
    by the even-odd rule (a ray towards +x crossing the quad's edges an odd number of times)."""
    pts = np.atleast_2d(np.asarray(pts, np.float64))
    nxt = np.roll(np.arange(len(inner)), -1)
    quads = np.stack([inner, outer, outer[nxt], inner[nxt]], 1)[None]  # [1, n, 4, 2]
    u, v = quads, np.roll(quads, -1, axis=2)
    px, py = pts[:, None, None, 0], pts[:, None, None, 1]
    straddle = (u[..., 1] > py) != (v[..., 1] > py)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = u[..., 0] + (py - u[..., 1]) * (v[..., 0] - u[..., 0]) / (v[..., 1] - u[..., 1])
    return ((straddle & (px < x)).sum(-1) % 2 == 1).any(-1)


def border_segments(inner, outer):
    nxt = np.roll(np.arange(len(inner)), -1)
    a = np.concatenate([inner, outer])
    b = np.concatenate([inner[nxt], outer[nxt]])
    return a, b, np.repeat([0, 1], len(inner))


def closest_on_segments(p, a, b):
    ab = b - a
    den = (ab * ab).sum(-1)
    t = np.clip(((p - a) * ab).sum(-1) / np.where(den > 0, den, 1.0), 0.0, 1.0)
    return a + t[:, None] * ab


def nearest_border_point(p, inner, outer):
    """(distance, point, border) of the border point closest to p."""
    a, b, border = border_segments(inner, outer)
    q = closest_on_segments(np.asarray(p, np.float64), a, b)
    d = np.linalg.norm(q - p, axis=-1)
    k = int(np.argmin(d))
    return d[k], q[k], int(border[k])


def distance_to_polyline(p, loop):
    nxt = np.roll(np.arange(len(loop)), -1)
    q = closest_on_segments(np.asarray(p, np.float64), loop, loop[nxt])
    return float(np.linalg.norm(q - p, axis=-1).min())


def segment_box_distance(a, b, h):
    """[S] distance between segments a-b and the solid box [-h, h] (box frame)."""
    d = b - a
    t0, t1 = np.zeros(len(a)), np.ones(len(a))
    meet = np.ones(len(a), bool)
    for k in range(2):
        flat = d[:, k] == 0
        meet &= ~(flat & ((a[:, k] < -h[k]) | (a[:, k] > h[k])))
        with np.errstate(divide="ignore", invalid="ignore"):
            ta, tb = (-h[k] - a[:, k]) / d[:, k], (h[k] - a[:, k]) / d[:, k]
        t0 = np.where(flat, t0, np.maximum(t0, np.minimum(ta, tb)))
        t1 = np.where(flat, t1, np.minimum(t1, np.maximum(ta, tb)))
    meet &= t0 <= t1
    # disjoint: the closest pair has an end point of the segment or a corner of the box
    cands = [np.linalg.norm(a - np.clip(a, -h, h), axis=-1)]
    cands.append(np.linalg.norm(b - np.clip(b, -h, h), axis=-1))
    for sx in (-1, 1):
        for sy in (-1, 1):
            c = np.array([sx * h[0], sy * h[1]])
            cands.append(np.linalg.norm(closest_on_segments(c, a, b) - c, axis=-1))
    return np.where(meet, 0.0, np.min(cands, 0))


def box_frame(p, yaw, h):
    ax = np.array([math.cos(yaw), math.sin(yaw)])
    ay = np.array([-ax[1], ax[0]])
    h = np.abs(np.asarray(h, np.float64))
    corners = np.array([p + sx * h[0] * ax + sy * h[1] * ay for sy in (-1, 1) for sx in (-1, 1)])
    return ax, ay, h, corners


def closest_box_point(q, p, yaw, h):
    ax, ay, h, _ = box_frame(p, yaw, h)
    loc = np.clip([np.dot(q - p, ax), np.dot(q - p, ay)], -h, h)
    return p + loc[0] * ax + loc[1] * ay


def oracle_distance(inner, outer, p, yaw, h):
    """(oob, signed clearance, deepest outside corner or None) of one box."""
    ax, ay, h, corners = box_frame(p, yaw, h)
    a, b, _ = border_segments(inner, outer)
    rot = np.stack([ax, ay])
    solid = segment_box_distance((a - p) @ rot.T, (b - p) @ rot.T, h).min()
    inside = in_band(corners, inner, outer)
    if not inside.all():
        outs = [c for c, i in zip(corners, inside, strict=True) if not i]
        d, c = max(
            ((nearest_border_point(c, inner, outer)[0], c) for c in outs), key=lambda t: t[0]
        )
        return 1, -d, c
    return int(solid == 0.0), solid, None


# ----------------------------------------------------------------------------- boxes


def random_boxes(track, per_env, seed):
    """[E*B] boxes around the centerline: offsets across the road up to 2 half widths,
    random yaw, small/medium/large half extents, a few far away; never on a radial edge."""
    rng = np.random.default_rng(seed)
    n_max, Ee = track.N_max, track.num_envs
    center = track.center.numpy().reshape(Ee, n_max, 3)[..., :2].astype(np.float64)
    normal = track.normal.numpy().reshape(Ee, n_max, 3)[..., :2].astype(np.float64)
    count = track.count.numpy()
    pos = np.zeros((Ee, per_env, 3))
    yaw = rng.uniform(-np.pi, np.pi, (Ee, per_env))
    he = np.zeros((Ee, per_env, 2))
    for e in range(Ee):
        n = max(int(count[e]), 1)
        for k in range(per_env):
            i = int(rng.integers(n))
            j = (i + 1) % n
            u = rng.uniform(0.05, 0.95)
            c = (1 - u) * center[e, i] + u * center[e, j]
            nr = (1 - u) * normal[e, i] + u * normal[e, j]
            kind = k % 8
            reach = 1.2 if kind < 4 else 2.0
            pos[e, k, :2] = c + rng.uniform(-reach, reach) * HW * nr
            if kind < 5:
                he[e, k] = rng.uniform([0.002, 0.002], [0.04, 0.025])
            elif kind == 5:
                he[e, k] = rng.uniform([0.05, 0.02], [0.12, 0.06])
            elif kind == 6:
                he[e, k] = rng.uniform([0.1, 0.1], [0.25, 0.2])  # wider than the road
            else:
                pos[e, k, :2] = rng.uniform(-0.15, 0.15, 2)  # in the hole (or far out)
                he[e, k] = rng.uniform([0.0, 0.0], [0.03, 0.03])
    return pos.reshape(-1, 3), yaw.reshape(-1), he.reshape(-1, 2)


def as_warp(device, pos, yaw, he):
    q = np.stack([np.zeros_like(yaw), np.zeros_like(yaw), np.sin(yaw / 2), np.cos(yaw / 2)], -1)
    return (
        wp.array(pos.astype(np.float32), dtype=wp.vec3f, device=device),
        wp.array(q.astype(np.float32), dtype=wp.quatf, device=device),
        wp.array(he.astype(np.float32), dtype=wp.vec2f, device=device),
    )


def f32(x):
    """Round to float32 like the kernel's inputs."""
    return np.asarray(x, np.float32).astype(np.float64)


def yaw_of(q):
    return math.atan2(
        2 * (q[3] * q[2] + q[0] * q[1]), q[3] ** 2 + q[0] ** 2 - q[1] ** 2 - q[2] ** 2
    )


def host(contact: BandCollisionResult):
    return {
        "oob": contact.oob.numpy().copy(),
        "distance": contact.distance.numpy().copy(),
        "nearest": contact.nearest.numpy().copy(),
        "normal": contact.normal.numpy().copy(),
        "boundary": contact.boundary.numpy().copy(),
    }


# ----------------------------------------------------------------------------- segments


def check_exact(track, B, pos, quat, he, got):
    """Every box of every valid env against the oracle (exact up to float32 rounding)."""
    counts = {"inside": 0, "corner_out": 0, "crossing": 0}
    for row in range(len(pos)):
        e = row // B
        inner, outer = env_borders(track, e)
        p, yaw, h = f32(pos[row, :2]), yaw_of(f32(quat[row])), f32(he[row])
        oob, dist, deep = oracle_distance(inner, outer, p, yaw, h)
        d, q, nrm = got["distance"][row], got["nearest"][row], got["normal"][row]
        bnd = got["boundary"][row]
        assert abs(d - dist) < TOL, (row, d, dist)
        if abs(dist) > TOL:
            assert got["oob"][row] == oob, (row, dist)
        assert bnd in (0, 1)
        # nearest lies on the reported border ...
        assert distance_to_polyline(q, outer if bnd == 1 else inner) < TOL, row
        assert abs(np.linalg.norm(nrm) - 1.0) < 1e-5, row
        # ... at the reported clearance, and the normal points into the band there
        if dist > 0:
            b = closest_box_point(q, p, yaw, h)
            assert abs(np.linalg.norm(b - q) - dist) < TOL, row
            if dist > 1e-3:
                np.testing.assert_allclose(nrm, (b - q) / np.linalg.norm(b - q), atol=1e-4)
            counts["inside" if oob == 0 else "crossing"] += 1
        elif deep is not None:
            assert abs(np.linalg.norm(q - deep) - (-dist)) < TOL, row
            if -dist > 1e-3:
                np.testing.assert_allclose(nrm, (q - deep) / np.linalg.norm(q - deep), atol=1e-4)
            counts["corner_out"] += 1
        else:
            counts["crossing"] += 1
            assert np.linalg.norm(closest_box_point(q, p, yaw, h) - q) < TOL, row
        eps = 2e-3
        assert in_band([q + eps * nrm], inner, outer)[0], row
        assert not in_band([q - eps * nrm], inner, outer)[0], row
    return counts


def test_segments_matches_oracle(device):
    _, track = make_track(device)
    B = 64
    pos, yaw, he = random_boxes(track, B, seed=1)
    P_, Q_, H_ = as_warp(device, pos, yaw, he)
    col = BandCollisionUtility(track, method="segments", max_boxes=B)
    got = host(col.query(P_, Q_, H_))
    counts = check_exact(track, B, pos, Q_.numpy(), he, got)
    # both main branches of the definition are exercised (crossings: the next test)
    assert counts["inside"] > 50 and counts["corner_out"] > 50, counts


def test_segments_crossing_with_every_corner_inside(device):
    """A long box tangent to the inner circle: its inner edge dips below the inner border
    between two corners that are on the road."""
    _, track = make_track(device)
    r_in = 0.6 - HW  # env 0: circle of radius 0.6 centred at (0.3, -0.2)
    angles = np.linspace(0.1, 6.0, 8)
    pos = np.zeros((E, 8, 3))
    yaw = np.zeros((E, 8))
    he = np.tile([0.1, 0.02], (E, 8, 1))
    for k, a in enumerate(angles):
        pos[0, k, :2] = (0.3 + (r_in + 0.015) * math.cos(a), -0.2 + (r_in + 0.015) * math.sin(a))
        yaw[0, k] = a + np.pi / 2
    P_, Q_, H_ = as_warp(device, pos.reshape(-1, 3), yaw.reshape(-1), he.reshape(-1, 2))
    col = BandCollisionUtility(track, max_boxes=8)
    got = host(col.query(P_, Q_, H_))
    np.testing.assert_array_equal(got["oob"][:8], 1)
    np.testing.assert_array_equal(got["distance"][:8], 0.0)
    np.testing.assert_array_equal(got["boundary"][:8], 0)
    inner, outer = env_borders(track, 0)
    for k in range(8):
        p, h = f32(pos[0, k, :2]), f32(he[0, k])
        _, _, _, corners = box_frame(p, yaw[0, k], h)
        assert in_band(corners, inner, outer).all()
        assert oracle_distance(inner, outer, p, yaw[0, k], h)[:2] == (1, 0.0)
        assert distance_to_polyline(got["nearest"][k], inner) < TOL


def test_boxes_on_radial_edges_are_inside(device):
    """A box centred on a bead (the radial edge two quads share, e.g. a spawn at a
    checkpoint) belongs to the band: points and small boxes there are never off the road."""
    _, track = make_track(device)
    n_max = track.N_max
    count = track.count.numpy()
    center = track.center.numpy().reshape(E, n_max, 3)
    tangent = track.tangent.numpy().reshape(E, n_max, 3)
    B = int(count.min())
    pos = np.concatenate([center[e, :B] for e in range(E)])
    yaw = np.concatenate([np.arctan2(tangent[e, :B, 1], tangent[e, :B, 0]) for e in range(E)])
    for size in (0.0, 0.02):
        he = np.full((E * B, 2), size)
        for method in ("segments", "sdf"):
            col = BandCollisionUtility(track, method=method, max_boxes=B)
            got = host(col.query(*as_warp(device, pos, yaw, he)))
            np.testing.assert_array_equal(got["oob"], 0, err_msg=f"{method} {size}")
            # chords of the borders, box corners against the curved borders (ellipse ends)
            atol = 4e-3
            if method == "sdf":  # bilinear across the ridge of phi on the centerline
                atol = float(col.sdf_frame.numpy()[:, 2].max())
            np.testing.assert_allclose(got["distance"], HW - size, atol=atol)


# ----------------------------------------------------------------------------- sdf


def test_sdf_texels_are_exact_in_the_narrow_band(device):
    _, track = make_track(device)
    res = 64
    col = BandCollisionUtility(track, method="sdf", sdf_resolution=res)
    phi = col.sdf.numpy().reshape(E, res, res)
    frame = col.sdf_frame.numpy()
    for e in range(E):
        inner, outer = env_borders(track, e)
        x0, y0, cell, far = frame[e]
        assert far == pytest.approx(4 * cell)
        ii, jj = np.meshgrid(np.arange(res), np.arange(res))  # jj: row (y)
        pts = np.stack([x0 + (ii + 0.5) * cell, y0 + (jj + 0.5) * cell], -1).reshape(-1, 2)
        inside = in_band(pts, inner, outer)
        a, b, _ = border_segments(inner, outer)
        dist = np.array(
            [np.linalg.norm(closest_on_segments(p, a, b) - p, axis=-1).min() for p in pts]
        )
        exact = np.where(inside, dist, -dist)
        got = phi[e].reshape(-1)
        # the sign is exact everywhere (the union of quads at texel centres)
        assert np.all((got > 0) == inside)
        # inside the band and within 3 cells outside: the exact distance
        near = inside | (dist < 3 * cell)
        np.testing.assert_allclose(got[near], exact[near], atol=1e-5)
        # beyond: clamped, never nearer than the band
        assert np.all(got[~near] <= -3 * cell + 1e-6)


def test_sdf_approximates_segments(device):
    _, track = make_track(device)
    B = 64
    pos, yaw, he = random_boxes(track, B, seed=2)
    he = np.minimum(he, 0.06)  # sagitta of an edge against the borders' curvature < 1 cell
    P_, Q_, H_ = as_warp(device, pos, yaw, he)
    exact = host(BandCollisionUtility(track, method="segments", max_boxes=B).query(P_, Q_, H_))
    col = BandCollisionUtility(track, method="sdf", max_boxes=B, sdf_resolution=128)
    got = host(col.query(P_, Q_, H_))
    cell = np.repeat(col.sdf_frame.numpy()[:, 2], B)
    far = exact["distance"] < -3 * cell  # clamped far field
    near = np.abs(exact["distance"]) < cell
    err = np.abs(got["distance"] - exact["distance"])
    assert np.all(err[~far] < cell[~far]), err[~far].max() / cell[0]
    assert np.all(got["distance"][far] < -2 * cell[far])
    np.testing.assert_array_equal(got["oob"][~near], exact["oob"][~near])
    assert np.median(err[~far] / cell[~far]) < 0.05
    # normals: unit, into the band; nearest about |distance| from the sample
    np.testing.assert_allclose(np.linalg.norm(got["normal"], axis=-1), 1.0, atol=1e-5)
    ok = ~far & ~near
    agree = (got["normal"][ok] * exact["normal"][ok]).sum(-1)
    assert np.median(agree) > 0.99
    assert np.all(np.isin(got["boundary"][~far], [0, 1]))  # -1: beyond the narrow band


def test_sdf_padding_and_resolution(device):
    _, track = make_track(device)
    col = BandCollisionUtility(track, method="sdf", sdf_resolution=16, sdf_padding=0.0)
    frame, aabb = col.sdf_frame.numpy(), col.sdf_aabb.numpy()
    for e in range(E):
        ext = max(aabb[e, 2] - aabb[e, 0], aabb[e, 3] - aabb[e, 1])
        assert frame[e, 2] == pytest.approx(ext / 16, rel=1e-5)
    auto = BandCollisionUtility(track, method="sdf", sdf_resolution=16).sdf_frame.numpy()
    np.testing.assert_allclose(auto[:, 2], frame[:, 2] * 1.2, rtol=1e-5)
    # a box far outside the grid is still off the road (the grid clamps, the AABB caps)
    pos = np.tile([50.0, 50.0, 0.0], (E, 1))
    got = host(col.query(*as_warp(device, pos, np.zeros(E), np.full((E, 2), 0.01))))
    np.testing.assert_array_equal(got["oob"], 1)
    assert np.all(got["distance"] < -40)


# ----------------------------------------------------------------------------- rules


@pytest.mark.parametrize("method", ["segments", "sdf"])
def test_invalid_envs_and_inactive_slots(device, method):
    loops = default_loops()
    loops[1] = _circle(0.05)  # radius < half_width: THICKNESS
    loops[2, 7] = np.nan  # NONFINITE
    _, track = make_track(device, loops)
    np.testing.assert_array_equal(track.valid.numpy(), [1, 0, 0, 1])
    B = 3
    pos, yaw, he = random_boxes(track, B, seed=3)
    pos[0 * B + 1] = np.nan  # inactive slot of a valid env
    pos[1 * B + 2] = np.nan  # inactive slot of an invalid env: the env rule wins
    pos[3 * B + 0, 2] = np.inf  # any non-finite coordinate
    col = BandCollisionUtility(track, method=method, max_boxes=B)
    got = host(col.query(*as_warp(device, pos, yaw, he)))
    bad = np.zeros(E * B, bool)
    bad[B : 3 * B] = True
    inactive = np.zeros(E * B, bool)
    inactive[[1, 3 * B]] = True
    np.testing.assert_array_equal(got["oob"][bad], 1)
    np.testing.assert_array_equal(got["oob"][inactive], 0)
    none = bad | inactive
    assert np.all(np.isnan(got["distance"][none]))
    assert np.all(np.isnan(got["nearest"][none])) and np.all(np.isnan(got["normal"][none]))
    np.testing.assert_array_equal(got["boundary"][none], -1)
    assert np.all(np.isfinite(got["distance"][~none]))
    assert np.all(np.isin(got["boundary"][~none], [0, 1]))


def test_max_boxes_rows_are_independent(device):
    _, track = make_track(device)
    B = 5
    pos, yaw, he = random_boxes(track, B, seed=4)
    many = host(BandCollisionUtility(track, max_boxes=B).query(*as_warp(device, pos, yaw, he)))
    one = BandCollisionUtility(track, max_boxes=1)
    for b in range(B):
        rows = np.arange(E) * B + b
        got = host(one.query(*as_warp(device, pos[rows], yaw[rows], he[rows])))
        for k in got:
            np.testing.assert_array_equal(got[k], many[k][rows], err_msg=k)


@pytest.mark.parametrize("method", ["segments", "sdf"])
def test_same_instance_and_clone(device, method):
    _, track = make_track(device)
    pos, yaw, he = random_boxes(track, 2, seed=5)
    col = BandCollisionUtility(track, method=method, max_boxes=2)
    P_, Q_, H_ = as_warp(device, pos, yaw, he)
    first = col.query(P_, Q_, H_)
    assert first is col.contact
    snap = first.clone()
    assert snap.oob.ptr != first.oob.ptr
    before = host(snap)
    pos2 = pos.copy()
    pos2[:, :2] += 0.03
    P_.assign(pos2.astype(np.float32))
    second = col.query(P_, Q_, H_)
    assert second is first
    after = host(snap)
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])
    assert not np.array_equal(host(second)["distance"], before["distance"])


@pytest.mark.parametrize("method", ["segments", "sdf"])
def test_refresh_mask_leaves_unmasked_envs_bitwise(device, method):
    gen, track = make_track(device)
    col = BandCollisionUtility(track, method=method)

    def derived(c):
        if method == "sdf":
            return (c.beads, c.sdf, c.sdf_border, c.sdf_frame, c.sdf_aabb)
        return (c.beads, c.strip, c.chunk_box)

    before = [a.numpy().copy().reshape(E, -1) for a in derived(col)]
    boxes = as_warp(device, *random_boxes(track, 1, seed=8))
    answers = host(col.query(*boxes))
    loops = default_loops()
    loops[2] = _circle(0.7, c=(0.1, 0.1))  # env 2 gets a new course
    gen.inputs["centerline.xy"].assign(loops.reshape(-1, 2).astype(np.float32))
    mask = gen.inputs["regen_mask"]
    mask.assign(np.array([0, 0, 1, 0], np.int32))
    gen.generate(mask=mask)
    # until it is refreshed, the env answers for its previous course
    stale = host(col.query(*boxes))
    for k in stale:
        assert stale[k].tobytes() == answers[k].tobytes()
    col.refresh(mask)
    after = [a.numpy().reshape(E, -1) for a in derived(col)]
    fresh = BandCollisionUtility(track, method=method)
    for b, a, f in zip(before, after, derived(fresh), strict=True):
        for e in (0, 1, 3):
            assert a[e].tobytes() == b[e].tobytes()
        assert a[2].tobytes() != b[2].tobytes()
        assert a[2].tobytes() == f.numpy().reshape(E, -1)[2].tobytes()
    # an all-zero mask is a no-op
    mask.zero_()
    snap = [a.numpy().copy() for a in derived(col)]
    col.refresh(mask)
    for s, a in zip(snap, derived(col), strict=True):
        assert s.tobytes() == a.numpy().tobytes()


@pytest.mark.parametrize("method", ["segments", "sdf"])
def test_recorded_query_replays_like_eager(device, method):
    _, track = make_track(device)
    B = 4
    pos, yaw, he = random_boxes(track, B, seed=6)
    P_, Q_, H_ = as_warp(device, pos, yaw, he)
    col = BandCollisionUtility(track, method=method, max_boxes=B)
    col.query(P_, Q_, H_)  # load the module before recording
    mask = wp.ones(E, dtype=wp.int32, device=device)
    with wp.ScopedCapture(device=device) as cap:
        col.refresh(mask)
        col.query(P_, Q_, H_)
    for shift in (0.0, 0.05):
        moved = pos.copy()
        moved[:, 0] += shift
        P_.assign(moved.astype(np.float32))
        eager = host(BandCollisionUtility(track, method=method, max_boxes=B).query(P_, Q_, H_))
        c = col.contact
        c.oob.fill_(7)
        c.distance.fill_(7.0)
        c.nearest.fill_(wp.vec2f(7.0, 7.0))
        c.normal.fill_(wp.vec2f(7.0, 7.0))
        c.boundary.fill_(7)
        wp.capture_launch(cap.graph)
        got = host(c)
        for k in got:
            assert got[k].tobytes() == eager[k].tobytes(), k


# ----------------------------------------------------------------------------- layouts

LAYOUTS = ("per_env", "per_item")


def derived(col):
    """The arrays a refresh writes, by name."""
    if col.method == "sdf":
        names = ("beads", "sdf", "sdf_border", "sdf_frame", "sdf_aabb")
    else:
        names = ("beads", "strip", "chunk_box")
    return {k: getattr(col, k) for k in names}


def assert_bitwise(a: dict, b: dict, what: str):
    for k in a:
        x = a[k].numpy() if isinstance(a[k], wp.array) else a[k]
        y = b[k].numpy() if isinstance(b[k], wp.array) else b[k]
        assert x.tobytes() == y.tobytes(), f"{what}: {k}"


def layout_track(device):
    """The default loops with an invalid env (too thin) in slot 1."""
    loops = default_loops()
    loops[1] = _circle(0.05)
    return make_track(device, loops)


def layout_boxes(device, track, B, seed):
    pos, yaw, he = random_boxes(track, B, seed)
    pos[2] = np.nan  # an inactive slot
    pos[B + 1, :2] = (30.0, -40.0)  # far outside every grid
    return as_warp(device, pos, yaw, he)


@pytest.mark.parametrize("method", ["segments", "sdf"])
def test_kernel_layouts_are_bitwise_identical(device, method):
    """per_env and per_item: the same refresh data (SDF grids, strips) and contacts, byte
    for byte, through a full refresh, a masked refresh and a recorded refresh + query."""
    gen, track = layout_track(device)
    B = 6
    boxes = layout_boxes(device, track, B, seed=11)
    cols = {
        lay: BandCollisionUtility(
            track, method=method, max_boxes=B, sdf_resolution=40, clearance=0.5, kernel_layout=lay
        )
        for lay in LAYOUTS
    }
    assert {lay: c.kernel_layout for lay, c in cols.items()} == {lay: lay for lay in LAYOUTS}
    got = {lay: (derived(c), host(c.query(*boxes))) for lay, c in cols.items()}
    assert_bitwise(got["per_env"][0], got["per_item"][0], "refresh")
    assert_bitwise(got["per_env"][1], got["per_item"][1], "query")
    assert np.any(got["per_env"][1]["oob"] == 1) and np.any(got["per_env"][1]["oob"] == 0)
    # a masked refresh after a regeneration of env 2, then a recorded refresh + query
    loops = default_loops()
    loops[1] = _circle(0.05)
    loops[2] = _ellipse(0.8, 0.45)
    gen.inputs["centerline.xy"].assign(loops.reshape(-1, 2).astype(np.float32))
    mask = gen.inputs["regen_mask"]
    mask.assign(np.array([0, 0, 1, 0], np.int32))
    gen.generate(mask=mask)
    graphs = {}
    for lay, c in cols.items():
        c.refresh(mask)
        got[lay] = (derived(c), host(c.query(*boxes)))
        with wp.ScopedCapture(device=device) as cap:
            c.refresh()
            c.query(*boxes)
        graphs[lay] = cap.graph
    assert_bitwise(got["per_env"][0], got["per_item"][0], "masked refresh")
    assert_bitwise(got["per_env"][1], got["per_item"][1], "query after a masked refresh")
    for lay, c in cols.items():
        if method == "sdf":
            c.sdf.fill_(7.0)
        else:
            c.strip.fill_(wp.vec4f(7.0, 7.0, 7.0, 7.0))
        c.contact.distance.fill_(7.0)
        c.contact.boundary.fill_(7)
        wp.capture_launch(graphs[lay])
        replay = (derived(c), host(c.contact))
        assert_bitwise(got[lay][0], replay[0], f"{lay} replayed refresh")
        assert_bitwise(got[lay][1], replay[1], f"{lay} replayed query")


def test_kernel_layouts_agree_on_generated_tracks(device):
    """Generated tracks (two samplers, 16 envs) and boxes across the borders: both layouts of
    both methods answer byte for byte."""
    for sampler in ("bezier", "polar"):
        cfg = TrackGenConfig(num_envs=16, device=device, generator=sampler)
        track = TrackGenerator(cfg, seeds=5).generate()
        boxes = as_warp(device, *random_boxes(track, 3, seed=12))
        for method in ("segments", "sdf"):
            out = []
            for lay in LAYOUTS:
                col = BandCollisionUtility(
                    track, method=method, max_boxes=3, sdf_resolution=64, kernel_layout=lay
                )
                out.append((derived(col), host(col.query(*boxes))))
            assert_bitwise(out[0][0], out[1][0], f"{sampler} {method} refresh")
            assert_bitwise(out[0][1], out[1][1], f"{sampler} {method} query")


def test_kernel_layout_argument(device):
    _, track = make_track(device)
    auto = BandCollisionUtility(track, method="sdf", sdf_resolution=16)
    assert auto.kernel_layout == ("per_item" if wp.get_device(device).is_cuda else "per_env")
    for bad, err in (("gpu", ValueError), ("PER_ITEM", ValueError), (1, TypeError)):
        with pytest.raises(err, match="kernel_layout.*'auto', 'per_env', 'per_item'"):
            BandCollisionUtility(track, kernel_layout=bad)
        with pytest.raises(err, match=r"BandCollision\.kernel_layout"):
            BandCollision("sdf", kernel_layout=bad)
    assert BandCollision("segments", kernel_layout="per_item").kernel_layout == "per_item"


def test_construction_inside_capture_raises(device):
    _, track = make_track(device)
    BandCollisionUtility(track)
    with wp.ScopedCapture(device=device):
        with pytest.raises(CaptureError, match="capture"):
            BandCollisionUtility(track)


def test_argument_validation(device):
    _, track = make_track(device)
    with pytest.raises(ValueError, match="method.*'segments', 'sdf'"):
        BandCollisionUtility(track, method="bvh")
    # one rule: a wrong kind is a TypeError, a wrong value a ValueError
    for bad, err in ((0, ValueError), (1025, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(err, match="max_boxes"):
            BandCollisionUtility(track, max_boxes=bad)
    for bad, err in ((4, ValueError), (8192, ValueError), (64.0, TypeError)):
        with pytest.raises(err, match="sdf_resolution"):
            BandCollisionUtility(track, sdf_resolution=bad)
    for bad, err in ((-0.1, ValueError), (float("nan"), ValueError), ("1", TypeError)):
        with pytest.raises(err, match="sdf_padding"):
            BandCollisionUtility(track, sdf_padding=bad)
    with pytest.raises(TypeError, match="track"):
        BandCollisionUtility(track.center)

    col = BandCollisionUtility(track, max_boxes=2)
    pos, yaw, he = random_boxes(track, 2, seed=7)
    P_, Q_, H_ = as_warp(device, pos, yaw, he)
    col.query(P_, Q_, H_)
    before = host(col.contact)
    short = wp.zeros(E, dtype=wp.vec3f, device=device)
    with pytest.raises(ValueError, match="position.*shape"):
        col.query(short, Q_, H_)
    with pytest.raises(TypeError, match="orientation.*dtype"):
        col.query(P_, wp.zeros(2 * E, dtype=wp.vec4f, device=device), H_)
    with pytest.raises(TypeError, match="half_extents"):
        col.query(P_, Q_, he.astype(np.float32))
    with pytest.raises(ValueError, match="position.*contiguous"):
        col.query(wp.zeros(4 * E, dtype=wp.vec3f, device=device)[::2], Q_, H_)
    with pytest.raises(TypeError, match="mask"):
        col.refresh(wp.zeros(E, dtype=wp.float32, device=device))
    with pytest.raises(ValueError, match="mask.*shape"):
        col.refresh(wp.zeros(E + 1, dtype=wp.int32, device=device))
    other = "cuda:0" if wp.get_device(device).is_cpu else "cpu"
    if other == "cpu" or wp.get_cuda_device_count() > 0:
        with pytest.raises(ValueError, match="position.*on"):
            col.query(wp.zeros(2 * E, dtype=wp.vec3f, device=other), Q_, H_)
    # a refused call changes nothing
    after = host(col.contact)
    for k in before:
        assert before[k].tobytes() == after[k].tobytes()


# ------------------------------------------------------------------ elevated tracks
def test_height_clearance_on_an_elevated_track(device):
    from track_gen.pipeline import presets

    E2 = 8
    gen = TrackGenerator(
        presets.track(num_envs=E2, device=device, z_profile="noise", z_min=0.0, z_max=0.8),
        seeds=5,
    )
    track = gen.generate()
    n_max = track.N_max
    c = track.center.numpy().reshape(E2, n_max, 3)
    count = track.count.numpy()
    valid = track.valid.numpy() != 0
    k = np.minimum(count // 3, count - 1)
    on_road = np.stack([c[e, max(k[e], 0)] for e in range(E2)]).astype(np.float32)
    lift = np.where(np.arange(E2) % 2 == 0, 0.5, 0.05).astype(np.float32)
    boxes = on_road.copy()
    boxes[:, 2] += lift
    quat = wp.full(E2, wp.quat_identity(), dtype=wp.quatf, device=device)
    he = wp.full(E2, wp.vec2f(0.01, 0.01), dtype=wp.vec2f, device=device)
    plain = BandCollisionUtility(track)
    checked = BandCollisionUtility(track, clearance=0.2)
    pos = wp.array(np.nan_to_num(boxes), dtype=wp.vec3f, device=device)
    a = plain.query(pos, quat, he)
    assert a.height is None  # no clearance: heights not checked
    oob_plain = a.oob.numpy().copy()
    b = checked.query(pos, quat, he)
    h = b.height.numpy()
    np.testing.assert_allclose(h[valid], lift[valid], atol=1e-4)  # a box over a bead
    np.testing.assert_array_equal(b.oob.numpy()[valid], (lift[valid] > 0.2).astype(np.int32))
    assert not oob_plain[valid].any()  # in plan view they are on the road
    assert np.isnan(h[~valid]).all()
    with pytest.raises(ValueError, match="clearance"):
        BandCollisionUtility(track, clearance=-1.0)
    with pytest.raises(TypeError, match="clearance"):
        BandCollisionUtility(track, clearance="high")
