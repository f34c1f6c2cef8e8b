"""tools.EgoRaster / EgoRasterUtility against an independent float64 NumPy oracle.

The oracle is written from the documented frame and cell bits: each cell centre is placed in
float64 from the agent's position and heading; ROAD is a crossing-number point-in-polygon
test of every quad (inner_i, outer_i, outer_i+1, inner_i+1), BORDER a Liang-Barsky clip of
every border segment against the cell's square, CONE the distance from the cone's centre to
the square against its radius, and the height the nearest texel of the height field.

Tolerance: float32 places a cell centre within ~1e-7 of the float64 one, so a cell may differ
from the oracle only where its answer changes within ``TOL`` track units: a centre within
``TOL`` of a border (ROAD), a border segment within ``TOL`` of the square's edge (BORDER), a
disc within ``TOL`` of the square (CONE), a centre within ``TOL`` of a texel edge (height).
Those cells are skipped, and the tests check they are few.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenerator, TrackGenerator
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import (
    EgoRaster,
    EgoRasterResult,
    EgoRasterUtility,
    HeightFieldBake,
    HeightFieldUtility,
    Props,
    PropsUtility,
    RasterCell,
    check_component,
)

TOL = 2e-5
ROAD, BORDER, CONE, UNKNOWN = (int(RasterCell[n]) for n in ("ROAD", "BORDER", "CONE", "UNKNOWN"))


# ----------------------------------------------------------------------------- fixtures
def generated_track(device, num_envs=4, seed=3, **kw):
    gen = TrackGenerator(presets.track(num_envs=num_envs, device=device, **kw), seeds=seed)
    gen.generate()
    return gen


def yaw_quat(yaw, pitch=None):
    yaw = np.asarray(yaw, np.float64)
    q = np.zeros((yaw.size, 4))
    q[:, 2], q[:, 3] = np.sin(yaw / 2), np.cos(yaw / 2)
    return q.astype(np.float32)


def poses_on_track(track, rng, spread=0.15):
    """One pose per env near a random centerline bead, a random heading."""
    E, count = track.num_envs, track.count.numpy()
    center = track.host("center")
    pos = np.zeros((E, 3), np.float32)
    for e in range(E):
        n = max(int(count[e]), 1)
        c = center[e, rng.integers(n)]
        pos[e] = np.nan_to_num(c) + rng.uniform(-spread, spread, 3) * [1, 1, 0]
    return pos, yaw_quat(rng.uniform(-np.pi, np.pi, E))


def arrays(device, pos, quat):
    return (
        wp.array(pos, dtype=wp.vec3f, device=device),
        wp.array(quat, dtype=wp.quatf, device=device),
    )


# ----------------------------------------------------------------------------- oracle
def heading64(q):
    x, y, z, w = (q[..., i].astype(np.float64) for i in range(4))
    c = w * w + x * x - y * y - z * z
    s = 2 * (x * y + w * z)
    ln = np.hypot(c, s)
    ok = ln > 1e-30
    return np.where(ok, c / np.where(ok, ln, 1), 1.0), np.where(ok, s / np.where(ok, ln, 1), 0.0)


def cell_centres(p, q, res, extent):
    """float64 world (x, y) of every cell centre [res*res, 2], the heading, the cell side."""
    cell = float(np.float32(extent / res))
    half = 0.5 * cell * res
    hx, hy = heading64(q[None])
    hx, hy = float(hx[0]), float(hy[0])
    r, c = np.meshgrid(np.arange(res), np.arange(res), indexing="ij")
    f = (half - (r + 0.5) * cell).ravel()
    l = (half - (c + 0.5) * cell).ravel()
    x = float(p[0]) + f * hx - l * hy
    y = float(p[1]) + f * hy + l * hx
    return np.stack([x, y], 1), (hx, hy), cell, f, l


def point_in_quads(pts, quads):
    """[P, Q] crossing-number test (ray towards +x) of points in each closed quad [Q, 4, 2]."""
    inside = np.zeros((len(pts), len(quads)), bool)
    px, py = pts[:, 0:1], pts[:, 1:2]
    for k in range(4):
        a, b = quads[:, k], quads[:, (k + 1) % 4]
        cond = (a[:, 1] > py) != (b[:, 1] > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            xc = a[:, 0] + (py - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
        inside ^= cond & (px < xc)
    return inside


def seg_dist(pts, a, b):
    """[P, S] distance of points to segments a -> b [S, 2]."""
    d = b - a
    dd = np.maximum((d * d).sum(1), 1e-300)
    t = np.clip(((pts[:, None, :] - a) * d).sum(2) / dd, 0, 1)
    cp = a + t[..., None] * d
    return np.linalg.norm(pts[:, None, :] - cp, axis=2)


def clip_hits(a, b, half):
    """[P, S] whether segments a -> b (in each cell's frame, [P, S, 2]) meet [-half, half]^2
    (Liang-Barsky)."""
    t0 = np.zeros(a.shape[:2])
    t1 = np.ones(a.shape[:2])
    ok = np.ones(a.shape[:2], bool)
    d = b - a
    for k in range(2):
        for pk, qk in ((-d[..., k], a[..., k] + half), (d[..., k], half - a[..., k])):
            par = pk == 0
            ok &= ~(par & (qk < 0))
            with np.errstate(divide="ignore", invalid="ignore"):
                r = qk / pk
            t0 = np.where(~par & (pk < 0), np.maximum(t0, r), t0)
            t1 = np.where(~par & (pk > 0), np.minimum(t1, r), t1)
    return ok & (t0 <= t1)


def oracle_env(track, e, p, q, res, extent, cones=None, field=None):
    """(flags, ambiguous, height, height_ambiguous) of env e: [res*res] each."""
    n = int(track.count.numpy()[e])
    inner = track.host("inner")[e, :n, :2].astype(np.float64)
    outer = track.host("outer")[e, :n, :2].astype(np.float64)
    pts, (hx, hy), cell, f, l = cell_centres(p, q, res, extent)
    j = np.roll(np.arange(n), -1)
    quads = np.stack([inner, outer, outer[j], inner[j]], 1)
    road = point_in_quads(pts, quads).any(1)
    segs_a = np.concatenate([inner, outer])
    segs_b = np.concatenate([inner[j], outer[j]])
    dist = seg_dist(pts, segs_a, segs_b).min(1)
    amb = dist < TOL
    flags = np.where(road, ROAD, 0)

    def local(v):  # [S, 2] world -> [P, S, 2] in each cell's (forward, left) frame
        d = v[None, :, :] - pts[:, None, :]
        return np.stack([d[..., 0] * hx + d[..., 1] * hy, d[..., 1] * hx - d[..., 0] * hy], 2)

    la, lb = local(segs_a), local(segs_b)
    hit = clip_hits(la, lb, cell / 2).any(1)
    grown = clip_hits(la, lb, cell / 2 + TOL).any(1)
    shrunk = clip_hits(la, lb, cell / 2 - TOL).any(1)
    flags = flags | np.where(hit, BORDER, 0)
    amb |= grown != shrunk
    if cones is not None:
        m = int(cones.count.numpy()[e])
        cp = cones.host("position")[e, :m, :2].astype(np.float64)
        rad = 0.5 * np.abs(cones.host("scale")[e, :m, 0].astype(np.float64))
        lc = local(cp)  # [P, M, 2]
        dx = np.maximum(np.abs(lc[..., 0]) - cell / 2, 0)
        dy = np.maximum(np.abs(lc[..., 1]) - cell / 2, 0)
        dd = np.hypot(dx, dy)
        flags = flags | np.where((dd <= rad).any(1), CONE, 0)
        amb |= (np.abs(dd - rad) < TOL).any(1)
    height = hamb = None
    if field is not None:
        x0, y0, hc, fill = field.frame.numpy()[e].astype(np.float64)
        hres = field.resolution
        tx, ty = (pts[:, 0] - x0) / hc, (pts[:, 1] - y0) / hc
        inside = (tx >= 0) & (ty >= 0) & (tx < hres) & (ty < hres)
        ti = np.clip(np.floor(tx), 0, hres - 1).astype(int)
        tj = np.clip(np.floor(ty), 0, hres - 1).astype(int)
        grid = field.height.numpy().reshape(-1, hres, hres)[e].astype(np.float64)
        height = np.where(inside, grid[tj, ti], fill) - float(p[2])
        near = lambda t: np.abs(t - np.round(t)) < TOL / hc  # noqa: E731
        hamb = near(tx) | near(ty)
    return flags.astype(np.uint8), amb, height, hamb


def check_image(track, image, pos, quat, res, extent, cones=None, field=None, envs=None):
    """Every unambiguous cell equals the oracle; returns the share of ambiguous cells and
    the flags of every env checked."""
    cells = image.host("cells").reshape(track.num_envs, res * res)
    heights = None if field is None else image.host("height").reshape(track.num_envs, -1)
    valid = track.valid.numpy()
    skipped, total, seen = 0, 0, []
    for e in envs if envs is not None else range(track.num_envs):
        if not valid[e]:
            assert (cells[e] == UNKNOWN).all()
            continue
        want, amb, h, hamb = oracle_env(track, e, pos[e], quat[e], res, extent, cones, field)
        bad = (cells[e] != want) & ~amb
        assert not bad.any(), (e, np.flatnonzero(bad)[:10], cells[e][bad][:10], want[bad][:10])
        if field is not None:
            ok = ~hamb
            np.testing.assert_allclose(heights[e][ok], h[ok], rtol=0, atol=1e-5)
        skipped += int(amb.sum())
        total += amb.size
        seen.append(cells[e])
    return skipped / max(total, 1), np.concatenate(seen) if seen else np.zeros(0, np.uint8)


# ----------------------------------------------------------------------------- tests
@pytest.mark.parametrize(("res", "extent"), [(64, 1.0), (32, 2.5), (17, 0.3)])
def test_cells_match_the_oracle(device, res, extent):
    gen = generated_track(device, num_envs=4, seed=5)
    track = gen.result
    props = PropsUtility(track, "cone", 0.08, max_props=256)
    raster = EgoRasterUtility(track, res, extent, props=props.props)
    rng = np.random.default_rng(res)
    for _ in range(2):
        pos, quat = poses_on_track(track, rng)
        image = raster.render(*arrays(device, pos, quat))
        assert image is raster.image and isinstance(image, EgoRasterResult)
        share, flags = check_image(track, image, pos, quat, res, extent, cones=props.props)
        assert share < 0.03
        assert (flags & ROAD).any() and (flags & BORDER).any() and (flags & CONE).any()
        assert ((flags & ROAD) == 0).any()
        assert not (flags & UNKNOWN).any()
        heading = image.host("heading")
        hx, hy = heading64(quat)
        np.testing.assert_allclose(heading[:, 0], hx, atol=1e-6)
        np.testing.assert_allclose(heading[:, 1], hy, atol=1e-6)


def test_heights_match_the_height_field(device):
    gen = generated_track(device, num_envs=3, seed=9, z_profile="noise", z_min=-0.3, z_max=0.3)
    track = gen.result
    baker = HeightFieldUtility(track, resolution=96)
    raster = EgoRasterUtility(track, 48, 1.2, height_field=baker.field)
    pos, quat = poses_on_track(track, np.random.default_rng(1))
    pos[:, 2] = [0.1, -0.2, 0.05]
    image = raster.render(*arrays(device, pos, quat))
    share, _ = check_image(track, image, pos, quat, 48, 1.2, field=baker.field)
    assert share < 0.03
    h = image.host("height")
    assert np.isfinite(h).all() and np.ptp(h) > 0.05


def test_agent_far_away_and_bad_poses(device):
    """An agent far from its course sees no road; a non-finite position, a non-finite or zero
    orientation and an invalid env answer UNKNOWN on every cell (NaN heights)."""
    gen = generated_track(device, num_envs=6, seed=2)
    track = gen.result
    baker = HeightFieldUtility(track, resolution=32)
    raster = EgoRasterUtility(track, 16, 0.5, height_field=baker.field)
    pos, quat = poses_on_track(track, np.random.default_rng(3))
    nan = np.nan
    pos[0] = [50.0, 50.0, 0.0]
    pos[1] = [3e38, -3e38, 1e30]  # clamped to COORD_LIMIT
    pos[2] = [nan, 0.0, 0.0]
    quat[3] = [0, 0, 0, 0]
    quat[4] = [nan, 0, 0, 1]
    quat[5] = [1e30, 0, 0, 1e30]  # scaled: a valid orientation
    image = raster.render(*arrays(device, pos, quat))
    cells = image.host("cells").reshape(6, -1)
    heights = image.host("height").reshape(6, -1)
    assert (cells[0] == 0).all() and (cells[1] == 0).all()
    assert np.isfinite(heights[:2]).all()
    for e in (2, 3, 4):
        assert (cells[e] == UNKNOWN).all() and np.isnan(heights[e]).all()
        assert np.isnan(image.host("heading")[e]).all()
    assert not (cells[5] & UNKNOWN).any() and np.isfinite(heights[5]).all()
    # an invalid env: UNKNOWN, whatever the pose
    track.valid.assign(np.array([1, 0, 1, 1, 1, 1], np.int32))
    raster.refresh()
    pos2, quat2 = poses_on_track(track, np.random.default_rng(4))
    image = raster.render(*arrays(device, pos2, quat2))
    cells = image.host("cells").reshape(6, -1)
    assert (cells[1] == UNKNOWN).all() and not (cells[0] & UNKNOWN).any()


def test_overflowing_grid_still_answers_exactly(device, monkeypatch):
    """An env whose bucket lists exceed the capacity tests every quad: the same cells."""
    gen = generated_track(device, num_envs=2, seed=4)
    track = gen.result
    pos, quat = poses_on_track(track, np.random.default_rng(6))
    normal = EgoRasterUtility(track, 32, 1.0)
    want = normal.render(*arrays(device, pos, quat)).host("cells").copy()
    import track_gen.tools.raster.utility as raster_utility

    monkeypatch.setattr(raster_utility, "ENTRIES_PER_BEAD", 0)
    tiny = EgoRasterUtility(track, 32, 1.0)
    assert (tiny.overflow.numpy() == 1).all()
    got = tiny.render(*arrays(device, pos, quat)).host("cells")
    assert got.tobytes() == want.tobytes()


def _course(device, E=4, seed=7, **raster):
    return Course.track(
        presets.track(num_envs=E, device=device),
        checkpoint_spacing=0.6,
        extra=[
            Props("cone", 0.1),
            HeightFieldBake(64),
            EgoRaster(32, 1.0, cones="props", height="heightfield", **raster),
        ],
        seeds=seed,
    )


def test_component_in_a_course_masked_regeneration_and_plan(device):
    E = 4
    course = _course(device, E)
    comp = course.components["raster"]
    assert isinstance(comp.utility, EgoRasterUtility) and comp.result is comp.utility.image
    assert check_component("raster", course) == []
    track = course.generator.result
    pos, quat = poses_on_track(track, np.random.default_rng(8))
    p, q = arrays(device, pos, quat)
    course.bind(position=p, orientation=q)
    res = course.step()
    image = res["raster"]
    assert image is comp.result
    check_image(
        track,
        image,
        pos,
        quat,
        32,
        1.0,
        course.components["props"].result,
        course.heightfield.field,
    )
    grid = [comp.utility.offsets.numpy().copy(), comp.utility.entries.numpy().copy()]
    mask = np.array([0, 1, 0, 1], np.int32)
    course.regenerate(mask=wp.array(mask, dtype=wp.int32, device=device), advance=True)
    fresh = EgoRasterUtility(track, 32, 1.0)  # the new courses, built afresh
    for name, old in zip(("offsets", "entries"), grid, strict=True):
        got = getattr(comp.utility, name).numpy().reshape(E, -1)
        new = getattr(fresh, name).numpy().reshape(E, -1)
        for e in range(E):
            assert got[e].tobytes() == (new[e] if mask[e] else old.reshape(E, -1)[e]).tobytes()
    # planned bytes equal what attach allocated
    layout = course.generator.layout
    want = sum(
        max(n, 1) * wp.types.type_size_in_bytes(d)
        for n, d in EgoRasterUtility.buffers(comp.settings, E, layout.N_max, height=True)
    )
    assert comp.planned_bytes(layout, None) == want
    u = comp.utility  # every array it owns, and its image's
    got = sum(a.capacity for a in vars(u).values() if isinstance(a, wp.array))
    got += sum(a.capacity for a in u.image.arrays())
    assert got == want


def test_capture_replays_like_eager(device):
    course = _course(device, 3, seed=12)
    track = course.generator.result
    pos, quat = poses_on_track(track, np.random.default_rng(2))
    p, q = arrays(device, pos, quat)
    course.bind(position=p, orientation=q)
    eager = course.step()["raster"].clone()
    image = course.components["raster"].result
    with wp.ScopedCapture(device=device) as cap:
        course.step()
    image.cells.fill_(77)  # poison: a replay that writes nothing cannot pass
    image.height.fill_(5.0)
    image.heading.fill_(wp.vec2f(9.0, 9.0))
    wp.capture_launch(cap.graph)
    for name in ("cells", "height", "heading"):
        assert getattr(image, name).numpy().tobytes() == getattr(eager, name).numpy().tobytes()


def test_cpu_threads_give_the_same_bytes():
    images = []
    for threads in (1, 3):
        course = Course.track(
            presets.track(num_envs=6, device="cpu", cpu_threads=threads),
            checkpoint_spacing=0.6,
            extra=[EgoRaster(24, 1.0)],
            seeds=21,
        )
        if threads > 1:
            assert len(course.generator.env_ranges) == 3
        track = course.generator.result
        pos, quat = poses_on_track(track, np.random.default_rng(0))
        course.bind(*arrays("cpu", pos, quat))
        u = course.components["raster"].utility
        image = course.step()["raster"]  # threads > 1: one render per env range
        images.append((image.cells.numpy().tobytes(), u.entries.numpy().tobytes()))
        with wp.ScopedCapture(device="cpu") as cap:  # a capture records one render
            course.step()
        image.cells.fill_(77)
        wp.capture_launch(cap.graph)
        assert image.cells.numpy().tobytes() == images[-1][0]
    assert images[0] == images[1]


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((64,), {}, TypeError, r"EgoRaster\.extent is required"),
        ((64, 0.0), {}, ValueError, r"EgoRaster\.extent = 0\.0"),
        ((64, float("inf")), {}, ValueError, r"EgoRaster\.extent"),
        ((7, 1.0), {}, ValueError, r"EgoRaster\.resolution = 7"),
        ((513, 1.0), {}, ValueError, r"EgoRaster\.resolution = 513"),
        ((64.0, 1.0), {}, TypeError, r"EgoRaster\.resolution"),
        ((64, "1"), {}, TypeError, r"EgoRaster\.extent"),
        ((64, 1.0), {"cones": 3}, TypeError, r"EgoRaster\.cones"),
        ((64, 1.0), {"height": ""}, TypeError, r"EgoRaster\.height"),
    ],
)
def test_bad_settings_refused(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        EgoRaster(*args, **kwargs)


def test_bad_course_and_inputs_refused(device):
    with pytest.raises(TypeError, match="track courses only"):
        Course.gates(
            presets.gates(num_envs=2, device=device, gate_width=0.1),
            extra=[EgoRaster(16, 1.0)],
            seeds=1,
        )
    with pytest.raises(ValueError, match="not a component of this course"):
        Course.track(
            presets.track(num_envs=2, device=device),
            checkpoint_spacing=0.6,
            extra=[EgoRaster(16, 1.0, cones="props")],
            seeds=1,
        )
    with pytest.raises(ValueError, match="PropsResult of cones"):
        Course.track(
            presets.track(num_envs=2, device=device),
            checkpoint_spacing=0.6,
            extra=[Props("wall", 0.1), EgoRaster(16, 1.0, cones="props")],
            seeds=1,
        )
    gen = generated_track(device, num_envs=2)
    with pytest.raises(TypeError, match="must be a Track"):
        EgoRasterUtility(GateGenerator(presets.gates(num_envs=2, device=device)).result, 16, 1.0)
    raster = EgoRasterUtility(gen.result, 16, 1.0)
    before = raster.image.cells.numpy().copy()
    p, q = arrays(device, np.zeros((2, 3), np.float32), yaw_quat([0.0, 0.0]))
    with pytest.raises(ValueError, match="position"):
        raster.render(wp.zeros(3, dtype=wp.vec3f, device=device), q)
    with pytest.raises(TypeError, match="orientation"):
        raster.render(p, wp.zeros(2, dtype=wp.vec4f, device=device))
    assert raster.image.cells.numpy().tobytes() == before.tobytes()
