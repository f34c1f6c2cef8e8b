"""tools.NextGates / NextGatesUtility against an independent float64 NumPy oracle.

The oracle rotates each answered gate into the agent's body frame with rotation matrices
built in float64 from the quaternions (``R_body^T (g - p)`` and ``R_body^T R_gate``), picks
the gates from the progress target the course reports, and keeps its own revealed flags
(a gate is revealed once the agent's float64 distance to its true centre is within range;
poses within 1e-4 of the range are avoided). The nominal poses are checked by their
documented properties (bounded offsets, a pure turn about +z, bitwise reproducible from the
effective seed) and used as the oracle's input for unrevealed gates.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenerator, SeedState, effective_seed
from track_gen.core.extents import COORD_LIMIT
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import NextGates, NextGatesResult, NextGatesUtility, check_component

ATOL = 2e-5


def gates_config(num_envs, device="cpu", **kw):
    base = dict(
        num_envs=num_envs,
        device=device,
        gate_width=0.1,
        z_profile="uniform",
        z_min=0.2,
        z_max=0.8,
        gate_align="full_tangent",
    )
    return presets.gates(**{**base, **kw})


def course(device, E=4, seeds=3, **kw):
    return Course.gates(gates_config(E, device), extra=[NextGates(**kw)], seeds=seeds)


# ----------------------------------------------------------------------------- oracle
def rotmat(q):
    """[..., 3, 3] rotation matrices of quaternions (x, y, z, w), normalized in float64."""
    q = np.asarray(q, np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = (q[..., i] for i in range(4))
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def random_quats(rng, n):
    q = rng.normal(size=(n, 4))
    return (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


def oracle(seq, next_index, pos, quat, K, seen=None, nominal=None):
    """(position [E, K, 3], rotation [E, K, 3, 3], index [E, K], revealed [E, K])."""
    E = seq.num_envs
    gp = seq.host("position").astype(np.float64)
    gq = seq.host("orientation")
    count, valid = seq.count.numpy(), seq.valid.numpy()
    out_p = np.full((E, K, 3), np.nan)
    out_r = np.full((E, K, 3, 3), np.nan)
    out_i = np.full((E, K), -1)
    out_v = np.zeros((E, K), int)
    for e in range(E):
        n = int(count[e])
        if not valid[e] or n == 0 or not np.isfinite(pos[e]).all():
            continue
        if not np.isfinite(quat[e]).all() or not np.any(quat[e]):
            continue
        rb = rotmat(quat[e])
        g0 = int(next_index[e]) if 0 <= next_index[e] < n else 0
        for k in range(min(K, n)):
            g = (g0 + k) % n
            true = seen is None or seen[e, g]
            if not true:
                p = nominal[0][e, g].astype(np.float64)
                q = nominal[1][e, g]
            else:
                p, q = gp[e, g], gq[e, g]
            agent = np.clip(pos[e].astype(np.float64), -COORD_LIMIT, COORD_LIMIT)  # documented
            out_p[e, k] = rb.T @ (p - agent)
            out_r[e, k] = rb.T @ rotmat(q)
            out_i[e, k] = g
            out_v[e, k] = int(true)
    return out_p, out_r, out_i, out_v


def check(poses, want):
    wp_, wr, wi, wv = want
    got_p = poses.host("position")
    got_r = rotmat(poses.host("orientation"))
    np.testing.assert_array_equal(poses.host("index"), wi)
    np.testing.assert_array_equal(poses.host("revealed"), wv)
    live = wi >= 0
    np.testing.assert_allclose(got_p[live], wp_[live], rtol=1e-5, atol=ATOL)
    np.testing.assert_allclose(got_r[live], wr[live], atol=ATOL)
    assert np.isnan(got_p[~live]).all() and np.isnan(poses.host("orientation")[~live]).all()
    assert np.isfinite(got_p[live]).all()


# ----------------------------------------------------------------------------- tests
def test_poses_match_the_oracle_without_reveal(device):
    E, K = 5, 3
    c = course(device, E, num_gates=K)
    seq = c.result
    rng = np.random.default_rng(0)
    gp = seq.host("position")
    pos = np.stack([gp[e, 0] for e in range(E)]) + rng.normal(0, 0.3, (E, 3))
    quat = random_quats(rng, E)
    p = wp.array(pos.astype(np.float32), dtype=wp.vec3f, device=device)
    q = wp.array(quat, dtype=wp.quatf, device=device)
    c.bind(position=p, orientation=q)
    for _ in range(3):
        res = c.step()
        poses = res["next_gates"]
        assert isinstance(poses, NextGatesResult) and poses.num_gates == K
        nxt = res["progress"].next_index.numpy()
        check(poses, oracle(seq, nxt, pos.astype(np.float32), quat, K))
        assert (poses.host("revealed") == 1).all()
        pos = pos + rng.normal(0, 0.05, (E, 3))
        p.assign(pos.astype(np.float32))


def test_slot_zero_follows_the_progress_target(device):
    c = course(device, 2, num_gates=2)
    seq = c.result
    gp, fwd = seq.host("position"), seq.host("forward")
    p = wp.zeros(2, dtype=wp.vec3f, device=device)
    q = wp.array(np.tile([0, 0, 0, 1], (2, 1)).astype(np.float32), dtype=wp.quatf, device=device)
    c.bind(position=p, orientation=q)
    for g in range(3):  # fly through gates 0, 1, 2
        for side in (-0.03, 0.03):
            p.assign((gp[:, g] + side * fwd[:, g]).astype(np.float32))
            res = c.step()
        assert (res["progress"].next_index.numpy() == g + 1).all()
        idx = res["next_gates"].host("index")
        assert (idx[:, 0] == g + 1).all() and (idx[:, 1] == g + 2).all()
        # an identity orientation: the body frame is the world frame
        rel = res["next_gates"].host("position")[:, 0]
        np.testing.assert_allclose(rel, gp[:, g + 1] - (gp[:, g] + 0.03 * fwd[:, g]), atol=ATOL)


def _safe_positions(rng, gates, n, r, spread=0.4):
    """A random position near a gate, none within 1e-4 of the reveal range of any gate."""
    while True:
        pos = gates[rng.integers(n)] + rng.normal(0, spread, 3)
        d = np.linalg.norm(gates[:n] - pos, axis=1)
        if (np.abs(d - r) > 1e-4).all():
            return pos


def test_reveal_against_the_oracle(device):
    E, K, R, NOISE = 4, 4, 0.25, 0.08
    c = course(device, E, num_gates=K, reveal_range=R, nominal_noise=NOISE)
    seq, sensor = c.result, c.components["next_gates"].utility
    count = seq.count.numpy()
    gp = seq.host("position").astype(np.float64)
    rng = np.random.default_rng(4)
    p = wp.zeros(E, dtype=wp.vec3f, device=device)
    q = wp.zeros(E, dtype=wp.quatf, device=device)
    c.bind(position=p, orientation=q)
    seen = np.zeros((E, seq.max_gates), bool)
    M = seq.max_gates
    nominal = (
        sensor.nominal_position.numpy().reshape(E, M, 3),
        sensor.nominal_orientation.numpy().reshape(E, M, 4),
    )
    revealed_any = unrevealed_any = False
    for step in range(12):
        pos = np.stack([_safe_positions(rng, gp[e], count[e], R) for e in range(E)])
        pos32 = pos.astype(np.float32)
        quat = random_quats(rng, E)
        p.assign(pos32)
        q.assign(quat)
        res = c.step()
        for e in range(E):
            d = np.linalg.norm(gp[e, : count[e]] - pos32[e].astype(np.float64), axis=1)
            seen[e, : count[e]] |= d <= R
        nxt = res["progress"].next_index.numpy()
        want = oracle(seq, nxt, pos32, quat, K, seen, nominal)
        check(res["next_gates"], want)
        revealed_any |= bool((want[3] == 1).any())
        unrevealed_any |= bool((want[3] == 0).any())
        np.testing.assert_array_equal(sensor.seen.numpy().reshape(E, M) != 0, seen)
        if step == 5:  # a reset forgets the masked envs' revealed gates
            mask = np.array([1, 0, 0, 1], np.int32)
            c.reset(wp.array(mask, dtype=wp.int32, device=device))
            seen[mask == 1] = False
            np.testing.assert_array_equal(sensor.seen.numpy().reshape(E, M) != 0, seen)
    assert revealed_any and unrevealed_any
    # a regeneration clears the regenerated envs' flags and draws new nominal poses
    before = sensor.nominal_position.numpy().reshape(E, M, 3).copy()
    seen_before = sensor.seen.numpy().reshape(E, M).copy()
    mask = np.array([0, 1, 0, 0], np.int32)
    c.regenerate(mask=wp.array(mask, dtype=wp.int32, device=device), advance=True)
    after = sensor.nominal_position.numpy().reshape(E, M, 3)
    seen_after = sensor.seen.numpy().reshape(E, M)
    assert (seen_after[1] == 0).all()
    for e in (0, 2, 3):
        assert after[e].tobytes() == before[e].tobytes()
        assert seen_after[e].tobytes() == seen_before[e].tobytes()
    assert after[1].tobytes() != before[1].tobytes()


def test_nominal_poses_are_bounded_turns_about_z(device):
    E, NOISE = 6, 0.05
    c = course(device, E, num_gates=2, reveal_range=0.1, nominal_noise=NOISE)
    seq, sensor = c.result, c.components["next_gates"].utility
    M, count = seq.max_gates, seq.count.numpy()
    npos = sensor.nominal_position.numpy().reshape(E, M, 3).astype(np.float64)
    nrot = rotmat(np.nan_to_num(sensor.nominal_orientation.numpy().reshape(E, M, 4), nan=1.0))
    gp = seq.host("position").astype(np.float64)
    grot = rotmat(np.nan_to_num(seq.host("orientation"), nan=1.0))
    half = seq.host("half_size").astype(np.float64)
    offsets, yaws = [], []
    for e in range(E):
        n = count[e]
        d = npos[e, :n] - gp[e, :n]
        assert (np.abs(d) <= NOISE * (1 + 1e-5) + 1e-6).all()
        turn = nrot[e, :n] @ np.swapaxes(grot[e, :n], -1, -2)  # R_nom R_true^T: about +z
        np.testing.assert_allclose(turn[:, 2], np.tile([0, 0, 1], (n, 1)), atol=1e-5)
        yaw = np.arctan2(turn[:, 1, 0], turn[:, 0, 0])
        assert (np.abs(yaw) <= np.arctan(NOISE / half[e, :n]) + 1e-5).all()
        assert np.isnan(sensor.nominal_position.numpy().reshape(E, M, 3)[e, n:]).all()
        offsets.append(d.ravel())
        yaws.append(yaw)
    offsets = np.concatenate(offsets)
    assert np.abs(offsets).max() > 0.8 * NOISE and abs(offsets.mean()) < 0.3 * NOISE
    assert np.abs(np.concatenate(yaws)).max() > 0.1


def _nominal_bytes(c):
    s = c.components["next_gates"].utility
    return s.nominal_position.numpy().tobytes() + s.nominal_orientation.numpy().tobytes()


def test_nominal_noise_is_a_pure_function_of_the_course(device):
    kw = dict(num_gates=3, reveal_range=0.2, nominal_noise=0.06)
    a, b = course(device, 4, seeds=9, **kw), course(device, 4, seeds=9, **kw)
    assert _nominal_bytes(a) == _nominal_bytes(b)
    assert _nominal_bytes(a) != _nominal_bytes(course(device, 4, seeds=10, **kw))
    a.regenerate(advance=True)
    # epoch 1 of seed s is epoch 0 of its effective seed in a fresh course
    seeds = [effective_seed(9 + e, 1) for e in range(4)]
    fresh = course(device, 4, seeds=wp.array(seeds, dtype=wp.int32, device=device), **kw)
    assert a.result.position.numpy().tobytes() == fresh.result.position.numpy().tobytes()
    assert _nominal_bytes(a) == _nominal_bytes(fresh)
    assert _nominal_bytes(a) != _nominal_bytes(b)
    # no noise: the nominal poses are the true ones, bit for bit
    z = course(device, 4, seeds=9, num_gates=3, reveal_range=0.2)
    s = z.components["next_gates"].utility
    assert s.nominal_position.numpy().tobytes() == z.result.position.numpy().tobytes()
    assert s.nominal_orientation.numpy().tobytes() == z.result.orientation.numpy().tobytes()


def test_cpu_threads_give_the_same_bytes():
    out = []
    for threads in (1, 3):
        c = Course.gates(
            gates_config(6, cpu_threads=threads),
            extra=[NextGates(2, reveal_range=0.2, nominal_noise=0.05)],
            seeds=5,
        )
        if threads > 1:
            assert len(c.generator.env_ranges) == 3
        out.append(_nominal_bytes(c))
    assert out[0] == out[1]


def test_invalid_envs_bad_poses_and_short_courses(device):
    E, K = 5, 40  # more slots than any course has gates
    c = course(device, E, num_gates=K)
    seq = c.result
    count = seq.count.numpy()
    pos = seq.host("position")[:, 1].copy()
    quat = np.tile([0, 0, 0, 1], (E, 1)).astype(np.float32)
    pos[0] = [np.nan, 0, 0]
    quat[1] = [0, 0, 0, 0]
    quat[2] = [np.inf, 0, 0, 1]
    pos[3] = [1e30, -1e30, 1e30]  # clamped to COORD_LIMIT: finite answers
    quat[4] = [0, 0, 1e-30, 1e-30]  # scaled, then a 90-degree yaw
    c.bind(
        position=wp.array(pos, dtype=wp.vec3f, device=device),
        orientation=wp.array(quat, dtype=wp.quatf, device=device),
    )
    poses = c.step()["next_gates"]
    idx, rel = poses.host("index"), poses.host("position")
    for e in (0, 1, 2):
        assert (idx[e] == -1).all() and np.isnan(rel[e]).all()
        assert (poses.host("revealed")[e] == 0).all()
    for e in (3, 4):
        n = count[e]
        assert (idx[e, :n] >= 0).all() and (idx[e, n:] == -1).all()
        assert np.isfinite(rel[e, :n]).all() and np.isnan(rel[e, n:]).all()
    check(poses, oracle(seq, c.progress.events.next_index.numpy(), pos, quat, K))
    # an invalid env answers nothing
    seq.valid.assign(np.array([1, 1, 1, 0, 1], np.int32))
    poses = c.step()["next_gates"]
    assert (poses.host("index")[3] == -1).all()


def test_capture_replays_like_eager(device):
    c = course(device, 3, seeds=2, num_gates=3, reveal_range=0.3, nominal_noise=0.05)
    gp = c.result.host("position")
    p = wp.array(gp[:, 0].astype(np.float32), dtype=wp.vec3f, device=device)
    q = wp.array(random_quats(np.random.default_rng(1), 3), dtype=wp.quatf, device=device)
    c.bind(position=p, orientation=q)
    eager = c.step()["next_gates"].clone()
    seen = c.components["next_gates"].utility.seen.numpy().copy()
    c.reset()
    poses = c.components["next_gates"].result
    with wp.ScopedCapture(device=device) as cap:
        c.step()
    for name in ("position", "orientation", "index", "revealed"):
        getattr(poses, name).zero_()  # poison: a replay that writes nothing cannot pass
    wp.capture_launch(cap.graph)
    for name in ("position", "orientation", "index", "revealed"):
        assert getattr(poses, name).numpy().tobytes() == getattr(eager, name).numpy().tobytes()
    assert c.components["next_gates"].utility.seen.numpy().tobytes() == seen.tobytes()


def test_component_contract(device):
    E = 4
    c = course(device, E, num_gates=3, reveal_range=0.2, nominal_noise=0.05)
    comp = c.components["next_gates"]
    assert isinstance(comp.utility, NextGatesUtility) and comp.result is comp.utility.poses
    assert check_component("next_gates", c) == []
    u = comp.utility
    got = sum(a.capacity for a in (*u.poses.arrays(), u._all, u.nominal_position))
    got += u.nominal_orientation.capacity + u.seen.capacity
    assert comp.planned_bytes(c.generator.layout, None) == got
    plain = NextGates(2)
    assert plain.planned_bytes(c.generator.layout, None) == sum(
        max(n, 1) * wp.types.type_size_in_bytes(d)
        for n, d in NextGatesUtility.buffers(plain.settings, E, c.result.max_gates)
    )
    # an all-zero mask changes nothing
    snap = _nominal_bytes(c)
    c.regenerate(mask=wp.zeros(E, dtype=wp.int32, device=device), advance=True)
    assert _nominal_bytes(c) == snap


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((None,), {}, TypeError, r"NextGates\.num_gates is required"),
        ((0,), {}, ValueError, r"NextGates\.num_gates = 0"),
        ((257,), {}, ValueError, r"NextGates\.num_gates = 257"),
        ((2.5,), {}, TypeError, r"NextGates\.num_gates"),
        ((2,), {"reveal_range": -1.0}, ValueError, r"NextGates\.reveal_range = -1\.0"),
        ((2,), {"reveal_range": float("nan")}, ValueError, r"NextGates\.reveal_range"),
        ((2,), {"reveal_range": 0.1, "nominal_noise": -0.1}, ValueError, "nominal_noise"),
        ((2,), {"nominal_noise": 0.1}, ValueError, r"nominal_noise = 0\.1 needs reveal_range"),
        ((2,), {"reveal_range": "1"}, TypeError, r"NextGates\.reveal_range"),
    ],
)
def test_bad_settings_refused(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        NextGates(*args, **kwargs)


def test_track_course_and_bad_inputs_refused(device):
    with pytest.raises(TypeError, match="gates courses only"):
        Course.track(
            presets.track(num_envs=2, device=device),
            checkpoint_spacing=0.6,
            extra=[NextGates(2)],
            seeds=1,
        )
    gen = GateGenerator(gates_config(2, device), seeds=SeedState.create(1, 2, device))
    gen.generate()
    nxt = wp.zeros(2, dtype=wp.int32, device=device)
    with pytest.raises(TypeError, match="reveal_range needs the generator's seeds"):
        NextGatesUtility(gen.result, nxt, 2, reveal_range=0.1)
    with pytest.raises(ValueError, match="next_index"):
        NextGatesUtility(gen.result, wp.zeros(3, dtype=wp.int32, device=device), 2)
    sensor = NextGatesUtility(gen.result, nxt, 2)
    before = sensor.poses.position.numpy().tobytes()
    q = wp.zeros(2, dtype=wp.quatf, device=device)
    with pytest.raises(ValueError, match="position"):
        sensor.sense(wp.zeros(5, dtype=wp.vec3f, device=device), q)
    with pytest.raises(TypeError, match="orientation"):
        sensor.sense(wp.zeros(2, dtype=wp.vec3f, device=device), wp.zeros(2, dtype=wp.vec4f))
    assert sensor.poses.position.numpy().tobytes() == before
