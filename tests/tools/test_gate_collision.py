"""DiscCollisionUtility / FrameCollisionUtility against an independent NumPy oracle of the gate
geometry.

The courses are real gate courses (``presets.gates``, gate width 0.1; one level, one with
altitudes and tilted gates). The oracle is written from the documented definitions in
float64: posts are discs at the bar ends, a box is the plan-view rectangle whose local x axis
is the quaternion's rotated x axis (rectangle-to-point distance); a frame is four boxes in the
gate frame built from the quaternion's rotation matrix (point-to-OBB distance).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import warp as wp

from track_gen import CaptureError, GateGenerator, TrackGenerator
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools.gate_collision import (
    AGENT_RADIUS,
    FRAME_DEPTH,
    FRAME_THICKNESS,
    POST_RADIUS,
    DiscCollision,
    DiscCollisionUtility,
    DiscContact,
    FrameCollision,
    FrameCollisionUtility,
    FrameContact,
)

E = 4
R = 0.02  # post radius
TH, DP, AR = 0.02, 0.03, 0.005  # frame thickness, depth, agent radius
TILTED = dict(z_profile="uniform", z_min=-0.3, z_max=0.3, gate_align="full_tangent")


def make_gen(device, seeds=7, **kw) -> GateGenerator:
    gen = GateGenerator(presets.gates(num_envs=E, device=device, gate_width=0.1, **kw), seeds=seeds)
    gen.generate()
    return gen


@functools.cache
def shared_gen(device, tilted=False) -> GateGenerator:
    """A built course shared by the read-only tests (never regenerated or edited)."""
    return make_gen(device, **(TILTED if tilted else {}))


def disc_host(c: DiscContact) -> dict:
    return {k: getattr(c, k).numpy().copy() for k in ("hit", "post", "distance", "nearest")}


def frame_host(c: FrameContact) -> dict:
    keys = ("hit", "gate", "member", "distance", "nearest", "normal")
    return {k: getattr(c, k).numpy().copy() for k in keys}


def poison(arr):
    """Fill an output with 7s, so a stale buffer cannot pass for a fresh answer."""
    arr.assign(np.full_like(arr.numpy(), 7))


def f32(x):
    return np.asarray(x, np.float32).astype(np.float64)


def warp_boxes(device, pos, quat, he):
    return (
        wp.array(np.asarray(pos, np.float32), dtype=wp.vec3f, device=device),
        wp.array(np.asarray(quat, np.float32), dtype=wp.quatf, device=device),
        wp.array(np.asarray(he, np.float32), dtype=wp.vec2f, device=device),
    )


def yaw_quat(yaw):
    yaw = np.asarray(yaw, np.float64)
    z = np.zeros_like(yaw)
    return np.stack([z, z, np.sin(yaw / 2), np.cos(yaw / 2)], -1)


# ----------------------------------------------------------------------------- oracle


def quat_matrix(q):
    """Rotation matrix (columns: the rotated local axes) of the unit quaternion (x, y, z, w)."""
    q = np.asarray(q, np.float64)
    x, y, z, w = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def gate_data(gen):
    """Host float64 views of the gate arrays, per env."""
    r, G = gen.result, gen.result.max_gates
    out = {
        "count": r.count.numpy().copy(),
        "valid": r.valid.numpy().copy(),
        "half_size": f32(r.half_size.numpy()).reshape(E, G),
    }
    for k in ("position", "left", "right", "forward"):
        out[k] = f32(getattr(r, k).numpy()).reshape(E, G, 3)
    out["orientation"] = f32(r.orientation.numpy()).reshape(E, G, 4)
    return out


def env_posts(gd, e):
    n = int(gd["count"][e]) if gd["valid"][e] else 0
    posts = np.zeros((2 * n, 2))
    posts[0::2] = gd["left"][e, :n, :2]
    posts[1::2] = gd["right"][e, :n, :2]
    return posts


def box_axes(q):
    """Unit plan-view local x and y of a box: the quaternion's rotated x axis, projected."""
    x = quat_matrix(q)[:2, 0]
    ax = x / np.linalg.norm(x)
    return ax, np.array([-ax[1], ax[0]])


def disc_oracle(posts, p, q, he, radius):
    """[n] distance from each post centre to the solid rectangle, minus the radius."""
    ax, ay = box_axes(q)
    rel = posts - np.asarray(p, np.float64)[:2]
    loc = np.stack([rel @ ax, rel @ ay], -1)
    out = np.maximum(np.abs(loc) - np.abs(np.asarray(he, np.float64)), 0.0)
    return np.linalg.norm(out, axis=-1) - radius


def members(h, th, dp):
    """[4] (centre, half extents) of the members in the gate frame, per the design table."""
    o = h + th / 2
    side = np.array([dp / 2, th / 2, h + th])
    bar = np.array([dp / 2, h + th, th / 2])
    return [
        (np.array([0.0, o, 0.0]), side),
        (np.array([0.0, -o, 0.0]), side),
        (np.array([0.0, 0.0, o]), bar),
        (np.array([0.0, 0.0, -o]), bar),
    ]


def box_signed(d, hm):
    """(signed distance, closest surface point, outward unit normal) of the point d to the box
    [-hm, hm], as documented: outside the Euclidean distance to the clamped point; inside
    minus the depth to the nearest face (ties x, y, z), its face point and outward axis."""
    cl = np.clip(d, -hm, hm)
    dist = np.linalg.norm(d - cl)
    if dist > 0:
        return dist, cl, (d - cl) / dist
    gap = np.abs(d) - hm
    axis = int(np.argmax(gap))  # the first of equals
    sgn = -1.0 if d[axis] < 0 else 1.0
    near = d.copy()
    near[axis] = sgn * hm[axis]
    nrm = np.zeros(3)
    nrm[axis] = sgn
    return gap[axis], near, nrm


def frame_oracle(gd, e, p, th, dp, normals=False):
    """[count, 4] (signed distance, closest surface point in world) of every member box to
    point p (and, with ``normals``, the outward unit normals there in world)."""
    n = int(gd["count"][e]) if gd["valid"][e] else 0
    dist = np.full((n, 4), np.inf)
    near = np.zeros((n, 4, 3))
    nrm = np.zeros((n, 4, 3))
    for g in range(n):
        rot = quat_matrix(gd["orientation"][e, g])
        c = gd["position"][e, g]
        loc = rot.T @ (np.asarray(p, np.float64) - c)
        for m, (mc, mh) in enumerate(members(gd["half_size"][e, g], th, dp)):
            sd, cl, nm = box_signed(loc - mc, mh)
            dist[g, m] = sd
            near[g, m] = c + rot @ (cl + mc)
            nrm[g, m] = rot @ nm
    return (dist, near, nrm) if normals else (dist, near)


def tol(x):
    return 1e-5 + 1e-4 * abs(x)


def check_disc(gd, B, pos, quat, he, got, radius=R):
    """Every active box of every valid env against the oracle."""
    hits = 0
    for row in range(len(pos)):
        e = row // B
        posts = env_posts(gd, e)
        d = disc_oracle(posts, f32(pos[row]), f32(quat[row]), f32(he[row]), radius)
        k = int(got["post"][row])
        best = d.min()
        assert abs(got["distance"][row] - best) < tol(best), (row, got["distance"][row], best)
        assert abs(d[k] - best) < tol(best), row  # the named post is (one of) the nearest
        second = np.partition(d, 1)[1] if len(d) > 1 else np.inf
        if second - best > tol(best):
            assert k == int(np.argmin(d)), row
        np.testing.assert_allclose(got["nearest"][row], posts[k], atol=1e-6)
        if abs(best) > tol(best):
            assert got["hit"][row] == int(best <= 0), row
        hits += int(got["hit"][row])
    return hits


def check_frame(gd, pos, got, th=TH, dp=DP, ar=AR):
    counts = {"hit": 0, "inside": 0}
    for e in range(E):
        dist, near, nrm = frame_oracle(gd, e, f32(pos[e]), th, dp, normals=True)
        g, m = int(got["gate"][e]), int(got["member"][e])
        best = dist.min()
        assert abs(got["distance"][e] - (best - ar)) < tol(best), (e, got["distance"][e], best)
        assert abs(dist[g, m] - best) < tol(best), e
        flat = np.sort(dist.ravel())
        if flat[1] - best > tol(best):
            assert (g, m) == np.unravel_index(np.argmin(dist), dist.shape), e
        np.testing.assert_allclose(got["nearest"][e], near[g, m], atol=2e-5)
        if abs(best - ar) > tol(best):
            assert got["hit"][e] == int(best <= ar), e
        counts["hit"] += int(got["hit"][e])
        assert np.isfinite(got["normal"][e]).all() and np.isfinite(got["nearest"][e]).all()
        if best <= 0.0:  # inside a member: the outward axis of its nearest face
            counts["inside"] += 1
            if flat[1] - best > tol(best):
                np.testing.assert_allclose(got["normal"][e], nrm[g, m], atol=1e-4)
        elif best > 1e-3:
            want = (f32(pos[e]) - near[g, m]) / best
            np.testing.assert_allclose(got["normal"][e], want, atol=1e-4)
    return counts


# ----------------------------------------------------------------------------- inputs


def random_boxes(gd, B, seed):
    """[E*B] boxes around the posts: within 0.12 of a post, random yaw (a few with pitch and
    roll too), half extents up to 0.05 (some zero: a point), a few far away."""
    rng = np.random.default_rng(seed)
    pos = np.zeros((E, B, 3))
    quat = np.zeros((E, B, 4))
    he = rng.uniform(0.0, 0.05, (E, B, 2))
    for e in range(E):
        posts = env_posts(gd, e)
        for b in range(B):
            k = int(rng.integers(len(posts)))
            pos[e, b, :2] = posts[k] + rng.uniform(-0.12, 0.12, 2)
            pos[e, b, 2] = rng.uniform(-1, 1)
            quat[e, b] = yaw_quat(rng.uniform(-np.pi, np.pi))
            if b % 5 == 0:
                quat[e, b] = rng.normal(size=4)  # any rotation: its x axis's yaw is used
            if b % 7 == 0:
                he[e, b] = 0.0
            if b % 11 == 0:
                pos[e, b, :2] = rng.uniform(-3, 3, 2)
            if b % 13 == 0:
                he[e, b] *= -1  # absolute values are used
    return pos.reshape(-1, 3), quat.reshape(-1, 4), he.reshape(-1, 2)


def random_agents(gd, seed):
    """[E] agent centres near a random gate's frame (gate frame offsets up to the frame's
    outer reach plus 0.02), some in the opening, one far away."""
    rng = np.random.default_rng(seed)
    pos = np.zeros((E, 3))
    for e in range(E):
        g = int(rng.integers(gd["count"][e]))
        h = gd["half_size"][e, g]
        reach = h + TH + 0.02
        loc = rng.uniform([-0.04, -reach, -reach], [0.04, reach, reach])
        pos[e] = gd["position"][e, g] + quat_matrix(gd["orientation"][e, g]) @ loc
    return pos


def isolated_gate(gd, e):
    """The gate of env e farthest from every other gate (crafted cases sit near it)."""
    n = int(gd["count"][e])
    c = gd["position"][e, :n]
    d = np.linalg.norm(c[:, None] - c[None], axis=-1) + np.eye(n) * 1e9
    return int(np.argmax(d.min(1)))


# ----------------------------------------------------------------------------- posts


@pytest.mark.parametrize("tilted", [False, True])
def test_disc_matches_oracle(device, tilted):
    gen = shared_gen(device, tilted)
    gd = gate_data(gen)
    assert gd["valid"].all()
    B = 48
    pos, quat, he = random_boxes(gd, B, seed=1 + tilted)
    col = DiscCollisionUtility(gen.result, R, max_boxes=B)
    got = disc_host(col.query(*warp_boxes(device, pos, quat, he)))
    hits = check_disc(gd, B, pos, quat, he, got)
    assert 10 < hits < E * B - 10, hits  # both answers exercised


def test_disc_posts_are_the_bar_ends(device):
    gen = shared_gen(device)
    gd = gate_data(gen)
    col = DiscCollisionUtility(gen.result, R)
    G = gen.result.max_gates
    posts, num = col.posts.numpy().reshape(E, 2 * G, 2), col.num_posts.numpy()
    np.testing.assert_array_equal(num, 2 * gd["count"])
    for e in range(E):
        n = int(gd["count"][e])
        np.testing.assert_array_equal(posts[e, : 2 * n], env_posts(gd, e).astype(np.float32))
        assert np.all(np.isnan(posts[e, 2 * n :]))
        # the bar ends are the gate centre +- half_size along the orientation's local y
        for g in range(n):
            y = quat_matrix(gd["orientation"][e, g])[:, 1]
            want = gd["position"][e, g] + gd["half_size"][e, g] * y
            np.testing.assert_allclose(gd["left"][e, g], want, atol=1e-6)


def test_disc_crafted_cases(device):
    gen = shared_gen(device)
    gd = gate_data(gen)
    e = 0
    g = isolated_gate(gd, e)
    L, Rt = gd["left"][e, g, :2], gd["right"][e, g, :2]
    h = gd["half_size"][e, g]
    u = (L - Rt) / np.linalg.norm(L - Rt)  # the gate's left direction
    yaw_u = math.atan2(u[1], u[0])
    hx, hy = 0.03, 0.01
    eps = 0.004
    diag = math.hypot(hx, hy)
    cases = [  # (centre xy, yaw, half extents, expected distance, expected post)
        (L, 0.3, (0.01, 0.01), -R, 2 * g),  # on the left post
        (Rt, 1.0, (0.0, 0.0), -R, 2 * g + 1),  # a point on the right post
        (L + u * (hx + R + eps), yaw_u, (hx, hy), eps, 2 * g),  # just outside
        (L + u * (hx + R - eps), yaw_u, (hx, hy), -eps, 2 * g),  # just overlapping
        (L + u * (hx + R + eps), yaw_u + np.pi / 2, (hy, hx), eps, 2 * g),  # turned, same
        (0.5 * (L + Rt), yaw_u, (0.01, 0.02), h - 0.01 - R, 2 * g),  # in the opening (tie)
        # a corner pointing at the post: the corner, not the side, sets the clearance
        (L + u * (diag + R + eps), yaw_u - math.atan2(hy, hx), (hx, hy), eps, 2 * g),
        (L + u * (diag + R - eps), yaw_u - math.atan2(hy, hx), (hx, hy), -eps, 2 * g),
    ]
    n = len(cases)
    pos = np.zeros((E, n, 3))
    yaw = np.zeros((E, n))
    he = np.full((E, n, 2), 0.01)
    for k, (c, a, hh, _, _) in enumerate(cases):
        pos[e, k, :2], yaw[e, k], he[e, k] = c, a, hh
    pos[1:] = pos[e]  # other envs: the same boxes, on their own courses
    pos, quat, he = pos.reshape(-1, 3), yaw_quat(yaw.reshape(-1)), he.reshape(-1, 2)
    got = disc_host(
        DiscCollisionUtility(gen.result, R, max_boxes=n).query(*warp_boxes(device, pos, quat, he))
    )
    for k, (_, _, _, d, post) in enumerate(cases):
        assert got["post"][k] == post, k
        assert abs(got["distance"][k] - d) < 2e-5, (k, got["distance"][k], d)
        assert got["hit"][k] == int(d <= 0), k
        np.testing.assert_allclose(got["nearest"][k], [L, Rt][post % 2], atol=1e-6)
    check_disc(gd, n, pos, quat, he, got)


# ----------------------------------------------------------------------------- frames


@pytest.mark.parametrize("tilted", [False, True])
def test_frame_matches_oracle(device, tilted):
    gen = shared_gen(device, tilted)
    gd = gate_data(gen)
    col = FrameCollisionUtility(gen.result, TH, DP, AR)
    counts = {"hit": 0, "inside": 0}
    P_ = wp.zeros(E, dtype=wp.vec3f, device=device)
    for seed in range(40):
        pos = random_agents(gd, seed=100 * tilted + seed)
        P_.assign(pos.astype(np.float32))
        c = check_frame(gd, pos, frame_host(col.query(P_)))
        for k in counts:
            counts[k] += c[k]
    assert counts["hit"] > 10 and counts["inside"] > 5, counts
    assert counts["hit"] < 40 * E - 10, counts


def test_frame_rotation_is_world_to_gate(device):
    gen = shared_gen(device, True)
    gd = gate_data(gen)
    col = FrameCollisionUtility(gen.result, TH, DP, AR)
    G = gen.result.max_gates
    rot = col.rotation.numpy().reshape(E, G, 3, 3)
    frame = col.frame.numpy().reshape(E, G, 4)
    np.testing.assert_array_equal(col.num_gates.numpy(), gd["count"])
    for e in range(E):
        n = int(gd["count"][e])
        for g in range(n):
            np.testing.assert_allclose(rot[e, g], quat_matrix(gd["orientation"][e, g]).T, atol=1e-6)
            # row 0 is the gate's forward (the direction of passage)
            np.testing.assert_allclose(rot[e, g, 0], gd["forward"][e, g], atol=1e-5)
        np.testing.assert_array_equal(frame[e, :n, :3], gd["position"][e, :n].astype(np.float32))
        np.testing.assert_array_equal(frame[e, :n, 3], gd["half_size"][e, :n].astype(np.float32))
        assert np.all(np.isnan(frame[e, n:])) and np.all(np.isnan(rot[e, n:]))


def test_frame_crafted_cases(device):
    gen = shared_gen(device, True)
    gd = gate_data(gen)
    col = FrameCollisionUtility(gen.result, TH, DP, AR)
    P_ = wp.zeros(E, dtype=wp.vec3f, device=device)
    e = 1
    g = isolated_gate(gd, e)
    h = gd["half_size"][e, g]
    rot = quat_matrix(gd["orientation"][e, g])
    c = gd["position"][e, g]
    o = h + TH  # outer reach
    m = h + TH / 2  # member centre line
    cases = [  # (gate-frame point, member(s), distance to the box, local normal)
        ((0.0, 0.01, 0.0), (0,), h - 0.01, (0, -1, 0)),  # in the opening, nearer left
        ((0.0, -0.02, 0.005), (1,), h - 0.02, (0, 1, 0)),  # nearer right
        ((0.0, 0.0, 0.03), (2,), h - 0.03, (0, 0, -1)),  # nearer top
        ((0.0, 0.0, -0.03), (3,), h - 0.03, (0, 0, 1)),  # nearer bottom
        # inside a member: minus the depth to its nearest face, that face's outward axis
        ((0.0, m, 0.0), (0,), -TH / 2, (0, 1, 0)),  # the left member's centre line (tie: +y)
        ((0.002, 0.0, -m), (3,), -TH / 2, (0, 0, 1)),  # the bottom bar's centre line
        ((0.002, m + 0.004, 0.0), (0,), -(TH / 2 - 0.004), (0, 1, 0)),  # nearer its outside
        ((DP / 2 - 0.003, -m, 0.0), (1,), -0.003, (1, 0, 0)),  # nearer its front face
        ((0.0, 0.0, o + 0.003), (2,), 0.003, (0, 0, 1)),  # above the top: hit (< AR)
        ((0.0, 0.0, o + 0.01), (2,), 0.01, (0, 0, 1)),  # higher: clear
        ((DP / 2 + 0.004, 0.0, -m), (3,), 0.004, (1, 0, 0)),  # in front of the bottom bar
        ((-DP / 2 - 0.02, -m, 0.0), (1,), 0.02, (-1, 0, 0)),  # behind the right post
        ((0.0, o + 0.006, o + 0.008), (0, 2), 0.01, (0, 0.6, 0.8)),  # outer corner
        ((0.0, h - 0.003, h - 0.004), (0,), 0.003, (0, -1, 0)),  # inner corner
    ]
    for k, (loc, mem, d, nrm) in enumerate(cases):
        pts = np.tile(c + rot @ np.asarray(loc), (E, 1))  # env e's answer is checked
        P_.assign(pts.astype(np.float32))
        got = frame_host(col.query(P_))
        assert got["gate"][e] == g, (k, got["gate"][e])
        assert got["member"][e] in mem, (k, got["member"][e])  # a tie: either
        assert abs(got["distance"][e] - (d - AR)) < 2e-5, (k, got["distance"][e], d)
        assert got["hit"][e] == int(d <= AR), k
        np.testing.assert_allclose(got["normal"][e], rot @ np.asarray(nrm), atol=1e-4)
        want = pts[e] - d * (rot @ np.asarray(nrm))
        np.testing.assert_allclose(got["nearest"][e], want, atol=2e-5)
        check_frame(gd, pts, got)


# ----------------------------------------------------------------------------- rules


def test_invalid_envs_and_inactive_inputs(device):
    gen = make_gen(device)
    r = gen.result
    valid, count = r.valid.numpy(), r.count.numpy()
    valid[1] = 0  # an invalid env
    count[2] = 0  # a "valid" env without gates
    r.valid.assign(valid)
    r.count.assign(count)
    gd = gate_data(gen)
    B = 4
    pos, quat, he = random_boxes(gate_data(shared_gen(device)), B, seed=3)
    pos[0 * B + 1] = np.nan  # inactive slot of a valid env
    quat[0 * B + 2, 3] = np.inf
    he[3 * B + 0, 1] = -np.inf
    pos[3 * B + 1, 2] = np.nan  # a NaN z marks an inactive slot too (z plays no other part)
    pos[3 * B + 2] = 1e30  # huge but finite: no crash
    disc = DiscCollisionUtility(r, R, max_boxes=B)
    np.testing.assert_array_equal(disc.num_posts.numpy(), [2 * count[0], 0, 0, 2 * count[3]])
    got = disc_host(disc.query(*warp_boxes(device, pos, quat, he)))
    none = np.zeros(E * B, bool)
    none[B : 3 * B] = True  # invalid envs: every slot
    none[[1, 2, 3 * B, 3 * B + 1]] = True
    np.testing.assert_array_equal(got["hit"][none], 0)
    np.testing.assert_array_equal(got["post"][none], -1)
    assert np.all(np.isnan(got["distance"][none])) and np.all(np.isnan(got["nearest"][none]))
    assert got["hit"][3 * B + 2] == 0 and got["post"][3 * B + 2] >= 0
    ok = ~none
    ok[3 * B + 2] = False
    assert np.all(got["post"][ok] >= 0) and np.all(np.isfinite(got["distance"][ok]))
    for row in np.flatnonzero(ok):  # the active slots still answer exactly
        d = disc_oracle(env_posts(gd, row // B), f32(pos[row]), f32(quat[row]), f32(he[row]), R)
        assert abs(got["distance"][row] - d.min()) < tol(d.min()), row

    frame = FrameCollisionUtility(r, TH, DP, AR)
    np.testing.assert_array_equal(frame.num_gates.numpy(), [count[0], 0, 0, count[3]])
    agents = random_agents(gate_data(shared_gen(device)), seed=4)
    agents[3] = (np.inf, 0.0, 0.0)
    got = frame_host(
        frame.query(wp.array(agents.astype(np.float32), dtype=wp.vec3f, device=device))
    )
    bad = np.array([False, True, True, True])
    np.testing.assert_array_equal(got["hit"][bad], 0)
    np.testing.assert_array_equal(got["gate"][bad], -1)
    np.testing.assert_array_equal(got["member"][bad], -1)
    for k in ("distance", "nearest", "normal"):
        assert np.all(np.isnan(got[k][bad])), k
    assert got["gate"][0] >= 0 and np.isfinite(got["distance"][0])


def test_max_boxes_rows_are_independent(device):
    gen = shared_gen(device)
    gd = gate_data(gen)
    B = 3
    pos, quat, he = random_boxes(gd, B, seed=5)
    many = disc_host(
        DiscCollisionUtility(gen.result, R, max_boxes=B).query(*warp_boxes(device, pos, quat, he))
    )
    one = DiscCollisionUtility(gen.result, R)
    for b in range(B):
        rows = np.arange(E) * B + b
        got = disc_host(one.query(*warp_boxes(device, pos[rows], quat[rows], he[rows])))
        for k in got:
            assert got[k].tobytes() == many[k][rows].tobytes(), k


def test_same_instance_clone_and_determinism(device):
    gen = shared_gen(device)
    gd = gate_data(gen)
    boxes = warp_boxes(device, *random_boxes(gd, 2, seed=6))
    disc = DiscCollisionUtility(gen.result, R, max_boxes=2)
    first = disc.query(*boxes)
    assert first is disc.contact
    snap = first.clone()
    assert snap.hit.ptr != first.hit.ptr
    again = DiscCollisionUtility(gen.result, R, max_boxes=2).query(*boxes)
    for k, v in disc_host(snap).items():
        assert v.tobytes() == disc_host(again)[k].tobytes(), k
    P_ = wp.array(random_agents(gd, 7).astype(np.float32), dtype=wp.vec3f, device=device)
    frame = FrameCollisionUtility(gen.result, TH, DP, AR)
    a = frame.query(P_)
    assert a is frame.contact
    fsnap = frame_host(a.clone())
    b = frame_host(FrameCollisionUtility(gen.result, TH, DP, AR).query(P_))
    for k in fsnap:
        assert fsnap[k].tobytes() == b[k].tobytes(), k


def test_refresh_mask(device):
    gen = make_gen(device, seeds=11)
    disc = DiscCollisionUtility(gen.result, R)
    frame = FrameCollisionUtility(gen.result, TH, DP, AR)

    def derived():
        arrays = (disc.posts, disc.num_posts, frame.frame, frame.rotation, frame.num_gates)
        return [a.numpy().copy().reshape(E, -1) for a in arrays]

    before = derived()
    gd = gate_data(gen)
    boxes = warp_boxes(device, *random_boxes(gd, 1, seed=8))
    agents = wp.array(random_agents(gd, 8).astype(np.float32), dtype=wp.vec3f, device=device)
    answers = disc_host(disc.query(*boxes)), frame_host(frame.query(agents))
    regen = wp.array(np.array([0, 0, 1, 1], np.int32), dtype=wp.int32, device=device)
    gen.generate(advance=True, mask=regen)  # envs 2 and 3 get new courses
    # until refreshed, an env answers for its previous course
    stale = disc_host(disc.query(*boxes)), frame_host(frame.query(agents))
    for old, new in zip(answers, stale, strict=True):
        for k in old:
            assert old[k].tobytes() == new[k].tobytes(), k
    mask = wp.array(np.array([0, 0, 1, 0], np.int32), dtype=wp.int32, device=device)
    disc.refresh(mask)  # env 3 is left stale on purpose: the mask, not the data, decides
    frame.refresh(mask)
    after = derived()

    def fresh():
        d, f = DiscCollisionUtility(gen.result, R), FrameCollisionUtility(gen.result, TH, DP, AR)
        arrays = (d.posts, d.num_posts, f.frame, f.rotation, f.num_gates)
        return [a.numpy().reshape(E, -1) for a in arrays]

    now = fresh()
    for b, a, f in zip(before, after, now, strict=True):
        for e in (0, 1, 3):
            assert a[e].tobytes() == b[e].tobytes()
        assert a[2].tobytes() == f[2].tobytes()
    for e in (2, 3):  # new courses
        assert now[0][e].tobytes() != before[0][e].tobytes()
        assert now[2][e].tobytes() != before[2][e].tobytes()
    disc.refresh(regen)
    frame.refresh(regen)
    for a, f in zip(derived(), now, strict=True):
        assert a.tobytes() == f.tobytes()
    # the refreshed envs answer for their new courses
    gd = gate_data(gen)
    pos, quat, he = random_boxes(gd, 1, seed=9)
    got = disc_host(disc.query(*warp_boxes(device, pos, quat, he)))
    check_disc(gd, 1, pos, quat, he, got)
    pts = random_agents(gd, 9)
    agents.assign(pts.astype(np.float32))
    check_frame(gd, pts, frame_host(frame.query(agents)))
    # an all-zero mask is an exact no-op
    mask.zero_()
    snap = derived()
    disc.refresh(mask)
    frame.refresh(mask)
    for s, a in zip(snap, derived(), strict=True):
        assert s.tobytes() == a.tobytes()


def test_recorded_query_replays_like_eager(device):
    gen = shared_gen(device)
    gd = gate_data(gen)
    B = 2
    pos, quat, he = random_boxes(gd, B, seed=10)
    P_, Q_, H_ = warp_boxes(device, pos, quat, he)
    A_ = wp.array(random_agents(gd, 10).astype(np.float32), dtype=wp.vec3f, device=device)
    disc = DiscCollisionUtility(gen.result, R, max_boxes=B)
    frame = FrameCollisionUtility(gen.result, TH, DP, AR)
    disc.query(P_, Q_, H_)
    frame.query(A_)  # load the modules before recording
    mask = wp.ones(E, dtype=wp.int32, device=device)
    with wp.ScopedCapture(device=device) as cap:
        disc.refresh(mask)
        frame.refresh(mask)
        disc.query(P_, Q_, H_)
        frame.query(A_)
    moved = pos.copy()
    moved[:, 0] += 0.02
    P_.assign(moved.astype(np.float32))
    A_.assign((random_agents(gd, 11)).astype(np.float32))
    eager_d = disc_host(DiscCollisionUtility(gen.result, R, max_boxes=B).query(P_, Q_, H_))
    eager_f = frame_host(FrameCollisionUtility(gen.result, TH, DP, AR).query(A_))
    for c in (disc.contact, frame.contact):
        for f in c.__dataclass_fields__:
            poison(getattr(c, f))
    wp.capture_launch(cap.graph)
    for got, eager in ((disc_host(disc.contact), eager_d), (frame_host(frame.contact), eager_f)):
        for k in got:
            assert got[k].tobytes() == eager[k].tobytes(), k


def test_construction_inside_capture_raises(device):
    gen = shared_gen(device)
    DiscCollisionUtility(gen.result, R)
    with wp.ScopedCapture(device=device):
        with pytest.raises(CaptureError, match="capture"):
            DiscCollisionUtility(gen.result, R)
        with pytest.raises(CaptureError, match="capture"):
            FrameCollisionUtility(gen.result, TH, DP, AR)


def test_argument_validation(device):
    gen = shared_gen(device)
    gates = gen.result
    for bad, err in (
        (0.0, ValueError),
        (-0.1, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (2e6, ValueError),
        ("0.1", TypeError),
        (True, TypeError),
        (None, TypeError),
    ):
        with pytest.raises(err, match="radius"):
            DiscCollisionUtility(gates, bad)
        with pytest.raises(err, match="radius"):
            DiscCollision(bad)
    for bad, err in ((0, ValueError), (1025, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(err, match="max_boxes"):
            DiscCollisionUtility(gates, R, max_boxes=bad)
        with pytest.raises(err, match="max_boxes"):
            DiscCollision(R, max_boxes=bad)
    good = dict(thickness=TH, depth=DP, agent_radius=AR)
    bads = {
        "thickness": ((0.0, ValueError), (-1, ValueError), (False, TypeError), ("x", TypeError)),
        "depth": ((-0.01, ValueError), (float("nan"), ValueError), (True, TypeError)),
        "agent_radius": ((-1e-3, ValueError), (float("inf"), ValueError), (None, TypeError)),
    }
    for arg, cases in bads.items():
        for bad, err in cases:
            kw = {**good, arg: bad}
            with pytest.raises(err, match=arg):
                FrameCollisionUtility(gates, **kw)
            with pytest.raises(err, match=arg):
                FrameCollision(**kw)
    FrameCollisionUtility(gates, TH, 0.0, 0.0)  # flat members, a point agent: fine
    assert POST_RADIUS.default is None and FRAME_DEPTH.lo == 0.0
    assert FRAME_THICKNESS.lo == 1e-6 and not FRAME_THICKNESS.lo_open and AGENT_RADIUS.lo == 0.0
    for cls, args in ((DiscCollisionUtility, (R,)), (FrameCollisionUtility, (TH, DP, AR))):
        with pytest.raises(TypeError, match="gates.*GateSequence"):
            cls(gates.position, *args)

    B = 2
    disc = DiscCollisionUtility(gates, R, max_boxes=B)
    P_, Q_, H_ = warp_boxes(device, *random_boxes(gate_data(gen), B, seed=12))
    disc.query(P_, Q_, H_)
    frame = FrameCollisionUtility(gates, TH, DP, AR)
    A_ = wp.zeros(E, dtype=wp.vec3f, device=device)
    frame.query(A_)
    before = disc_host(disc.contact), frame_host(frame.contact)
    with pytest.raises(ValueError, match="position.*shape"):
        disc.query(wp.zeros(E, dtype=wp.vec3f, device=device), Q_, H_)
    with pytest.raises(TypeError, match="orientation.*dtype"):
        disc.query(P_, wp.zeros(B * E, dtype=wp.vec4f, device=device), H_)
    with pytest.raises(TypeError, match="half_extents"):
        disc.query(P_, Q_, H_.numpy())
    with pytest.raises(ValueError, match="position.*contiguous"):
        disc.query(wp.zeros(2 * B * E, dtype=wp.vec3f, device=device)[::2], Q_, H_)
    with pytest.raises(TypeError, match="position.*dtype"):
        frame.query(wp.zeros(E, dtype=wp.vec4f, device=device))
    with pytest.raises(ValueError, match="position.*shape"):
        frame.query(P_)
    for col in (disc, frame):
        with pytest.raises(TypeError, match="mask"):
            col.refresh(wp.zeros(E, dtype=wp.float32, device=device))
        with pytest.raises(ValueError, match="mask.*shape"):
            col.refresh(wp.zeros(E + 1, dtype=wp.int32, device=device))
    other = "cuda:0" if wp.get_device(device).is_cpu else "cpu"
    if other == "cpu" or wp.get_cuda_device_count() > 0:
        with pytest.raises(ValueError, match="position.*on"):
            frame.query(wp.zeros(E, dtype=wp.vec3f, device=other))
    after = disc_host(disc.contact), frame_host(frame.contact)
    for b, a in zip(before, after, strict=True):
        for k in b:
            assert b[k].tobytes() == a[k].tobytes(), k


# ----------------------------------------------------------------------------- components


def test_disc_collision_through_a_course(device):
    gen = make_gen(device, seeds=21)
    course = Course(gen, [DiscCollision(R)])
    col = course.components["collision"]
    assert col.name == "collision" and isinstance(col.utility, DiscCollisionUtility)
    gd = gate_data(gen)
    pos, quat, he = random_boxes(gd, 1, seed=13)
    P_, Q_, H_ = warp_boxes(device, pos, quat, he)
    course.bind(position=P_, orientation=Q_, half_extents=H_)
    res = course.step()
    assert res.contacts is col.result and isinstance(res.contacts, DiscContact)
    check_disc(gd, 1, pos, quat, he, disc_host(res.contacts))
    # a masked regeneration refreshes the regenerated env
    mask = wp.array(np.array([0, 1, 0, 0], np.int32), dtype=wp.int32, device=device)
    course.regenerate(mask, advance=True)
    gd = gate_data(gen)
    check_disc(gd, 1, pos, quat, he, disc_host(course.step().contacts))
    # several boxes per env: box_position has no default
    gen2 = make_gen(device, seeds=22)
    course2 = Course(gen2, [DiscCollision(R, max_boxes=3)])
    pos, quat, he = random_boxes(gate_data(gen2), 3, seed=14)
    P_, Q_, H_ = warp_boxes(device, pos, quat, he)
    course2.bind(box_position=P_, orientation=Q_, half_extents=H_)
    check_disc(gate_data(gen2), 3, pos, quat, he, disc_host(course2.step().contacts))


def test_frame_collision_through_a_course(device):
    gen = make_gen(device, seeds=23, **TILTED)
    course = Course(gen, [FrameCollision(0.02, 0.02, 0.05)])
    col = course.components["collision"]
    assert isinstance(col.utility, FrameCollisionUtility)
    gd = gate_data(gen)
    pts = random_agents(gd, 15)
    course.bind(position=wp.array(pts.astype(np.float32), dtype=wp.vec3f, device=device))
    res = course.step()
    assert res.contacts is col.result and isinstance(res.contacts, FrameContact)
    check_frame(gd, pts, frame_host(res.contacts), th=0.02, dp=0.02, ar=0.05)


def test_components_need_a_gate_generator(device):
    tgen = TrackGenerator(presets.track(num_envs=2, device=device))
    for comp in (DiscCollision(R), FrameCollision(TH, DP, AR)):
        with pytest.raises(TypeError, match="gate generator.*GateSequence.*Track"):
            Course(tgen, [comp])
