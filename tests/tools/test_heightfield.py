"""HeightFieldUtility / HeightFieldBake against an independent float64 NumPy oracle.

The tracks get a z written per bead (inner, centre and outer alike: a level road), the shape
an elevated generator's result has. The oracle is written from the documented surface: a
texel centre is on the road when it lies in some quad (inner_i, outer_i, outer_i+1,
inner_i+1) by the even-odd rule; its bilinear coordinates (u, v) in that quad come from
Newton's method on the bilinear map (not the kernel's closed form) and its height is the
bilinear blend of the quad's four corner heights, the highest over overlapping quads.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import warp as wp

from track_gen import GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import BandCollision, BandCollisionUtility, check_component
from track_gen.tools.heightfield import (
    GridResolutionWarning,
    HeightFieldBake,
    HeightFieldResult,
    HeightFieldUtility,
    check_grid_resolution,
)

HW = 0.1
RES = 64
# Height tolerance against the oracle: 1e-5 * max|z| + 1e-6 (float32 coordinates and heights,
# ~1e-7 relative, times the local grade; measured errors are below 2e-7 with max|z| <= 0.81).
REL_TOL, ABS_TOL = 1e-5, 1e-6
# Texel centres closer than this to a quad edge may fall on either side in float32.
EDGE_EPS = 1e-5


# ----------------------------------------------------------------------------- tracks


def set_level_z(track, fn):
    """Write z = fn(arclen, length) per bead into center/inner/outer (NaN rows kept)."""
    E, N = track.num_envs, track.N_max
    s = track.arclen.numpy().reshape(E, N).astype(np.float64)
    length = track.length.numpy().astype(np.float64)[:, None]
    z = fn(np.nan_to_num(s), length)
    for name in ("center", "inner", "outer"):
        a = getattr(track, name).numpy().reshape(E, N, 3)
        a[..., 2] = np.where(np.isnan(a[..., 0]), np.nan, z)
        getattr(track, name).assign(a.reshape(-1, 3))


def sine_z(amp=0.3, phase=0.0):
    return lambda s, length: amp * np.sin(2 * np.pi * s / length + phase)


def generated_track(device, num_envs=4, seed=3, **kw):
    gen = TrackGenerator(presets.track(num_envs=num_envs, device=device, **kw), seeds=seed)
    gen.generate()
    assert gen.result.valid.numpy().all()
    set_level_z(gen.result, sine_z())
    return gen.result


def belt(r1, r2, dist, n):
    """Closed CCW loop hugging a circle of radius r1 at the origin and one of radius r2 at
    (dist, 0) (their outer tangents): a cone whose tip turns on the small circle."""
    al = math.asin((r2 - r1) / dist)
    th = math.pi / 2 + al

    def u(a):
        return np.array([math.cos(a), math.sin(a)])

    c1, c2 = np.zeros(2), np.array([dist, 0.0])
    segs = [
        ("arc", c2, r2, -th, th),
        ("line", c2 + r2 * u(th), c1 + r1 * u(th)),
        ("arc", c1, r1, th, 2 * math.pi - th),
        ("line", c1 + r1 * u(-th), c2 + r2 * u(-th)),
    ]
    lens = [s[2] * (s[4] - s[3]) if s[0] == "arc" else np.linalg.norm(s[2] - s[1]) for s in segs]
    total, out = sum(lens), []
    for k in range(n):
        x = total * k / n
        for s, seg_len in zip(segs, lens, strict=True):
            if x < seg_len or s is segs[-1]:
                f = x / seg_len
                if s[0] == "arc":
                    out.append(s[1] + s[2] * u(s[3] + f * (s[4] - s[3])))
                else:
                    out.append(s[1] + f * (s[2] - s[1]))
                break
            x -= seg_len
    return np.array(out)


def hairpin_track(device):
    """One env: a cone whose tip is a 100-degree bend of centerline radius half_width, so its
    inner border collapses to one point P = (0, 0) over the bend (the tightest bend the
    validator accepts), with a steep climb (grade 1) through the tip."""
    P = 1024
    gen = TrackGenerator(
        TrackGenConfig(
            generator="centerline",
            num_envs=1,
            num_points=P,
            device=device,
            relax_enable=False,
            half_width=HW,
            spacing=0.03,
        )
    )
    gen.inputs["centerline.xy"].assign(belt(HW, 0.74, 1.0, P).astype(np.float32))
    track = gen.generate()
    assert track.valid.numpy().tolist() == [1]
    n = int(track.count.numpy()[0])
    inner = track.inner.numpy()[:n, :2]
    assert (np.linalg.norm(inner, axis=1) < 2e-4).sum() >= 4  # a collapsed inner border
    c = track.center.numpy()[:n, :2].astype(np.float64)
    s_tip = track.arclen.numpy()[int(np.argmin(c[:, 0]))]  # the bead at the tip
    length = float(track.length.numpy()[0])
    amp = length / (2 * np.pi)  # grade 1 at the tip
    set_level_z(track, lambda s, L: amp * np.sin(2 * np.pi * (s - s_tip) / L))
    return track


# ----------------------------------------------------------------------------- oracle


class Oracle:
    """The documented surface of env e of a Track, float64."""

    def __init__(self, track, e):
        N = track.N_max
        n = int(track.count.numpy()[e])
        inner = track.inner.numpy().reshape(-1, N, 3)[e, :n].astype(np.float64)
        outer = track.outer.numpy().reshape(-1, N, 3)[e, :n].astype(np.float64)
        nxt = np.roll(np.arange(n), -1)
        q = np.stack([inner, outer, outer[nxt], inner[nxt]], 1)  # [n, 4, 3]: a, b, c, d
        self.xy, self.z = q[..., :2], q[..., 2]
        self.inner, self.outer = inner, outer

    def inside(self, pts):
        """[M, n] bool: point m lies in quad i (even-odd over the quad's four edges)."""
        u = self.xy[None]
        v = np.roll(self.xy, -1, axis=1)[None]
        with np.errstate(divide="ignore", invalid="ignore"):
            k = (v[..., 0] - u[..., 0]) / (v[..., 1] - u[..., 1])
        out = np.zeros((len(pts), len(self.xy)), bool)
        for s in range(0, len(pts), 4096):
            px, py = pts[s : s + 4096, None, None, 0], pts[s : s + 4096, None, None, 1]
            straddle = (u[..., 1] > py) != (v[..., 1] > py)
            x = u[..., 0] + (py - u[..., 1]) * k
            out[s : s + 4096] = (straddle & (px < x)).sum(-1) % 2 == 1
        return out

    def edge_distance(self, pts):
        """[M]: distance from each point to the nearest quad edge (rungs and borders)."""
        a = self.xy.reshape(-1, 2)
        b = np.roll(self.xy, -1, axis=1).reshape(-1, 2)
        ab = b - a
        den = np.maximum((ab * ab).sum(-1), 1e-300)
        best = np.full(len(pts), np.inf)
        for k in range(0, len(pts), 4096):
            p = pts[k : k + 4096, None]
            t = np.clip(((p - a) * ab).sum(-1) / den, 0.0, 1.0)
            d = np.linalg.norm(p - (a + t[..., None] * ab), axis=-1)
            best[k : k + 4096] = d.min(-1)
        return best

    def coords(self, pts, quad):
        """(u, v) of each point in its quad, by Newton's method on the bilinear map."""
        a, b, c, d = (self.xy[quad, k] for k in range(4))
        u = np.full(len(pts), 0.5)
        v = np.full(len(pts), 0.5)
        for _ in range(60):
            r0, r1 = a + v[:, None] * (d - a), b + v[:, None] * (c - b)
            f = r0 + u[:, None] * (r1 - r0) - pts
            ju = r1 - r0  # d/du
            jv = (d - a) + u[:, None] * ((c - b) - (d - a))  # d/dv
            det = ju[:, 0] * jv[:, 1] - ju[:, 1] * jv[:, 0]
            det = np.where(np.abs(det) < 1e-300, 1e-300, det)
            du = (f[:, 0] * jv[:, 1] - f[:, 1] * jv[:, 0]) / det
            dv = (ju[:, 0] * f[:, 1] - ju[:, 1] * f[:, 0]) / det
            u = np.clip(u - du, -0.5, 1.5)
            v = np.clip(v - dv, -0.5, 1.5)
        return np.clip(u, 0, 1), np.clip(v, 0, 1), ju, jv

    def height_and_grade(self, pts):
        """([M] height, [M] |grad height|), the highest of the covering quads; NaN off road."""
        ins = self.inside(pts)
        h = np.full(len(pts), -np.inf)
        g = np.full(len(pts), np.nan)
        mi, qi = np.nonzero(ins)
        if len(mi):
            u, v, ju, jv = self.coords(pts[mi], qi)
            za, zb, zc, zd = (self.z[qi, k] for k in range(4))
            zl, zr = za + v * (zd - za), zb + v * (zc - zb)
            hq = zl + u * (zr - zl)
            dh_du, dh_dv = zr - zl, (1 - u) * (zd - za) + u * (zc - zb)
            det = ju[:, 0] * jv[:, 1] - ju[:, 1] * jv[:, 0]
            with np.errstate(divide="ignore", invalid="ignore"):
                gx = (jv[:, 1] * dh_du - ju[:, 1] * dh_dv) / det
                gy = (-jv[:, 0] * dh_du + ju[:, 0] * dh_dv) / det
            gq = np.hypot(gx, gy)
            order = np.argsort(hq, kind="stable")  # the highest quad last: it wins
            h[mi[order]] = hq[order]
            g[mi[order]] = gq[order]
        h[~ins.any(1)] = np.nan
        return h, g


def texel_centres(frame, res):
    x0, y0, cell = (float(v) for v in frame[:3])
    i = np.arange(res)
    xs = x0 + (i + 0.5) * cell
    gx, gy = np.meshgrid(xs, y0 + (i + 0.5) * cell)  # [j, i]
    return np.stack([gx.ravel(), gy.ravel()], -1)


def env_grid(field: HeightFieldResult, e: int):
    res = field.resolution
    h = field.height.numpy().reshape(-1, res, res)[e]
    road = field.on_road.numpy().reshape(-1, res, res)[e]
    return h, road, field.frame.numpy()[e]


def neighbour_jumps(h, road):
    """(pairs, jumps): every pair of 4-neighbour texels both on the road (flat texel indices
    within the env) and |h(p) - h(q)| for each."""
    res = h.shape[0]
    idx = np.arange(res * res).reshape(res, res)
    pairs = np.concatenate(
        [
            np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], -1),
            np.stack([idx[:-1, :].ravel(), idx[1:, :].ravel()], -1),
        ]
    )
    r = road.ravel()
    pairs = pairs[(r[pairs[:, 0]] == 1) & (r[pairs[:, 1]] == 1)]
    hf = h.ravel().astype(np.float64)
    return pairs, np.abs(hf[pairs[:, 0]] - hf[pairs[:, 1]])


def local_bound(oracle, centres, pairs, cell, samples=9, slack=1.25):
    """Per pair, ``slack * cell * max |grad|`` of the oracle surface over ``samples`` points
    of the segment between the two texel centres, and a flag: every sample is on the road
    (the segment stays on the band). Between samples the grade changes by less than the slack
    away from a collapsed inner border point."""
    p, q = centres[pairs[:, 0]], centres[pairs[:, 1]]
    t = np.linspace(0.0, 1.0, samples)
    pts = (p[:, None] + t[None, :, None] * (q - p)[:, None]).reshape(-1, 2)
    _, g = oracle.height_and_grade(pts)
    g = g.reshape(len(pairs), samples)
    on = np.isfinite(g).all(1)
    return slack * cell * np.where(on[:, None], g, 0).max(1), on


def check_against_oracle(track, field, e):
    """The field of env e equals the oracle at every texel centre, but where the centre lies
    within EDGE_EPS of a quad edge (float32 may put it on either side); returns (oracle,
    centres, heights, on_road)."""
    h, road, frame = env_grid(field, e)
    oracle = Oracle(track, e)
    centres = texel_centres(frame, field.resolution)
    want_h, _ = oracle.height_and_grade(centres)
    want_road, got_road = np.isfinite(want_h), road.ravel() == 1
    differ = got_road != want_road
    assert differ.sum() <= 4 and (oracle.edge_distance(centres[differ]) < EDGE_EPS).all()
    both = want_road & got_road
    tol = REL_TOL * np.nanmax(np.abs(oracle.z)) + ABS_TOL
    err = np.abs(h.ravel()[both].astype(np.float64) - want_h[both])
    bad = err > tol
    assert (oracle.edge_distance(centres[both][bad]) < EDGE_EPS).all(), (e, err.max(), tol)
    return oracle, centres, h, road


# ----------------------------------------------------------------------------- tests


def test_heights_match_the_oracle(device):
    track = generated_track(device)
    field = HeightFieldUtility(track, resolution=RES).field
    for e in range(track.num_envs):
        oracle, _, h, road = check_against_oracle(track, field, e)
        frame = field.frame.numpy()[e]
        # frame: the borders' box padded by 10% of its larger side, centred
        pts = np.concatenate([oracle.inner[:, :2], oracle.outer[:, :2]])
        lo, hi = pts.min(0), pts.max(0)
        ext = (hi - lo).max()
        np.testing.assert_allclose(frame[2], 1.2 * ext / RES, rtol=1e-5)
        np.testing.assert_allclose(frame[:2], (lo + hi) / 2 - 0.6 * ext, atol=1e-5)
        # off the road: the env's lowest road height
        assert frame[3] == np.float32(oracle.z.min())
        assert (h[road == 0] == frame[3]).all()
        assert road.sum() > 200


def test_field_is_continuous_on_the_road(device):
    """Neighbouring on-road texels differ by at most grade * cell, with the local grade of the
    surface (the centerline grade on the centerline, more inside a bend); globally by at most
    the largest grade times the cell."""
    track = generated_track(device)
    field = HeightFieldUtility(track, resolution=RES).field
    for e in range(track.num_envs):
        h, road, frame = env_grid(field, e)
        oracle = Oracle(track, e)
        centres = texel_centres(frame, RES)
        pairs, jump = neighbour_jumps(h, road)
        bound, on = local_bound(oracle, centres, pairs, float(frame[2]))
        tol = REL_TOL * np.abs(oracle.z).max() + ABS_TOL
        assert on.mean() > 0.99
        assert (jump[on] <= bound[on] + tol).all(), (e, (jump - bound)[on].max())
        _, g = oracle.height_and_grade(centres)
        assert jump.max() <= 1.25 * np.nanmax(g) * frame[2] + tol


def test_no_cliff_at_the_medial_axis(device):
    """A hairpin whose inner border collapses to one point P: the road near P is a fan of
    rungs carrying every height of the bend. The baked field follows the oracle there and no
    neighbour pair jumps more than the local grade allows, anywhere on the road.

    The test has teeth: the same check fails for the field a nearest-border rule would bake
    (each texel takes the height of the nearest border point). Across the bend, the nearest
    inner-border point of every texel within half_width of P is P itself, whose height is
    that of whichever of the bend's beads is picked, while beyond the medial circle (the
    centerline, half_width from P) the nearest point is on the outer border at the texel's
    own angle: a cliff of up to the bend's whole climb along the centerline. A split of the
    quads into linear triangles fails it too (a sawtooth along the fan's rungs)."""
    res = 160
    track = hairpin_track(device)
    field = HeightFieldUtility(track, resolution=res).field
    oracle, centres, h, road = check_against_oracle(track, field, 0)
    cell = float(field.frame.numpy()[0][2])
    pairs, jump = neighbour_jumps(h, road)
    bound, on = local_bound(oracle, centres, pairs, cell)
    tol = REL_TOL * np.abs(oracle.z).max() + ABS_TOL
    # the fan's pairs (within 2 half widths of P) are many and checked like the others
    near = np.linalg.norm(centres[pairs[:, 0]], axis=1) < 2 * HW
    assert (near & on).sum() > 100
    assert (jump[on] <= bound[on] + tol).all(), (jump - bound)[on].max()

    # a nearest-border field on the same texels breaks the bound at the medial circle
    naive = h.astype(np.float64)
    naive.ravel()[road.ravel() == 1] = nearest_border_heights(oracle, centres[road.ravel() == 1])
    excess = (neighbour_jumps(naive, road)[1] - bound)[on]
    assert excess.max() > 5 * cell  # a cliff: several cells' worth of grade-1 climb
    # so does a split of each quad into two linear triangles (a, b, c) + (a, c, d): where
    # a == d, no linear triangle is level along both rungs, a sawtooth along every rung
    split = h.astype(np.float64)
    split.ravel()[road.ravel() == 1] = triangle_split_heights(oracle, centres[road.ravel() == 1])
    excess = (neighbour_jumps(split, road)[1] - bound)[on]
    assert excess.max() > 0.3 * cell


def nearest_border_heights(oracle, pts):
    """The height of the nearest border point (z interpolated along the border segment)."""
    a = np.concatenate([oracle.xy[:, 0], oracle.xy[:, 1]])  # inner i, outer i
    b = np.concatenate([oracle.xy[:, 3], oracle.xy[:, 2]])  # inner i+1, outer i+1
    za = np.concatenate([oracle.z[:, 0], oracle.z[:, 1]])
    zb = np.concatenate([oracle.z[:, 3], oracle.z[:, 2]])
    ab = b - a
    t = np.clip(((pts[:, None] - a) * ab).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-300), 0, 1)
    d = np.linalg.norm(pts[:, None] - (a + t[..., None] * ab), axis=-1)
    k = np.argmin(d, axis=1)
    return za[k] + t[np.arange(len(k)), k] * (zb[k] - za[k])


def triangle_split_heights(oracle, pts):
    """Barycentric heights over the triangles (a, b, c) and (a, c, d) of each quad (the last
    triangle holding a point wins); NaN where none holds it."""
    out = np.full(len(pts), np.nan)
    for tri in ((0, 1, 2), (0, 2, 3)):
        A, B, C = (oracle.xy[:, k] for k in tri)
        zA, zB, zC = (oracle.z[:, k] for k in tri)
        v0, v1, v2 = B - A, C - A, pts[:, None] - A
        den = v0[:, 0] * v1[:, 1] - v0[:, 1] * v1[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            l1 = (v2[..., 0] * v1[:, 1] - v2[..., 1] * v1[:, 0]) / den
            l2 = (v0[:, 0] * v2[..., 1] - v0[:, 1] * v2[..., 0]) / den
        ins = (l1 >= -1e-9) & (l2 >= -1e-9) & (l1 + l2 <= 1 + 1e-9)
        m, q = np.nonzero(ins)
        out[m] = zA[q] + l1[m, q] * (zB[q] - zA[q]) + l2[m, q] * (zC[q] - zA[q])
    return out


def test_on_road_is_the_band_colliders_inside(device):
    """``on_road`` is the SDF collider's inside test at the same texel centres (same frame)."""
    track = generated_track(device, num_envs=3)
    field = HeightFieldUtility(track, resolution=RES).field
    sdf = BandCollisionUtility(track, method="sdf", sdf_resolution=RES)
    assert np.array_equal(field.frame.numpy()[:, :3], sdf.sdf_frame.numpy()[:, :3])
    np.testing.assert_array_equal(field.on_road.numpy() == 1, sdf.sdf.numpy() > 0)


def test_fill_margin_and_invalid_envs(device):
    track = generated_track(device, num_envs=3)
    field = HeightFieldUtility(track, resolution=32, margin=0.5, fill=-7.0).field
    auto = HeightFieldUtility(track, resolution=32).field
    h = field.height.numpy().reshape(3, 32, 32)
    road = field.on_road.numpy().reshape(3, 32, 32)
    frame, auto_frame = field.frame.numpy(), auto.frame.numpy()
    assert (frame[:, 3] == -7.0).all() and (h[road == 0] == -7.0).all()
    ext = auto_frame[:, 2] * 32 / 1.2
    np.testing.assert_allclose(frame[:, 2], (ext + 1.0) / 32, rtol=1e-5)
    # an invalid env: NaN frame and heights, nothing on the road; the others unchanged
    valid = track.valid.numpy()
    track.valid.assign(np.array([1, 0, 1], np.int32))
    baker = HeightFieldUtility(track, resolution=32)
    track.valid.assign(valid)
    h, road, frame = env_grid(baker.field, 1)
    assert np.isnan(frame).all() and np.isnan(h).all() and not road.any()
    for e in (0, 2):
        np.testing.assert_array_equal(env_grid(baker.field, e)[0], env_grid(auto, e)[0])


def test_masked_bake_leaves_unmasked_envs_bitwise(device):
    track = generated_track(device)
    baker = HeightFieldUtility(track, resolution=32)
    before = baker.field.clone()
    set_level_z(track, sine_z(amp=0.5, phase=1.0))  # every env's course changes
    baker.bake(wp.zeros(4, dtype=wp.int32, device=device))  # an all-zero mask: a no-op
    for name in ("height", "on_road", "frame"):
        assert (
            getattr(baker.field, name).numpy().tobytes() == getattr(before, name).numpy().tobytes()
        )
    baker.bake(wp.array([0, 1, 0, 1], dtype=wp.int32, device=device))
    fresh = HeightFieldUtility(track, resolution=32).field
    for name in ("height", "on_road", "frame"):
        got = getattr(baker.field, name).numpy()
        old, new = getattr(before, name).numpy(), getattr(fresh, name).numpy()
        rows = len(got) // 4
        for e in range(4):
            want = new if e in (1, 3) else old
            sl = slice(e * rows, (e + 1) * rows)
            assert got[sl].tobytes() == want[sl].tobytes(), (name, e)
    assert not np.array_equal(fresh.height.numpy(), before.height.numpy())


def test_bake_replays_in_a_graph_like_eager(device):
    track = generated_track(device, num_envs=2)
    baker = HeightFieldUtility(track, resolution=32)
    eager = baker.field.clone()
    mask = wp.array([1, 1], dtype=wp.int32, device=device)
    with wp.ScopedCapture(device=device) as cap:
        baker.bake(mask)
    baker.field.height.fill_(123.0)  # poison: a replay that writes nothing cannot pass
    baker.field.on_road.fill_(7)
    baker.field.frame.fill_(wp.vec4f(1.0, 2.0, 3.0, 4.0))
    wp.capture_launch(cap.graph)
    for name in ("height", "on_road", "frame"):
        assert (
            getattr(baker.field, name).numpy().tobytes() == getattr(eager, name).numpy().tobytes()
        )


def test_component_in_a_course_and_masked_regenerate(device):
    """An elevated course (stage elevate, noise profile): the component bakes every env, a
    masked regeneration rebakes the regenerated envs and leaves the others bitwise."""
    E = 4
    course = Course.track(
        presets.track(num_envs=E, device=device, z_profile="noise", z_min=-0.3, z_max=0.3),
        checkpoint_spacing=0.6,
        extra=[HeightFieldBake(RES)],
        seeds=11,
    )
    baker = course.heightfield
    assert isinstance(baker, HeightFieldUtility) and baker.resolution == RES
    assert course.components["heightfield"].result is baker.field
    assert check_component("heightfield", course) == []  # a regeneration body can hold it
    track = course.generator.result
    fresh = HeightFieldUtility(track, resolution=RES).field
    assert baker.field.height.numpy().tobytes() == fresh.height.numpy().tobytes()
    before = baker.field.clone()
    m = np.array([0, 1, 1, 0], np.int32)
    course.regenerate(mask=wp.array(m, dtype=wp.int32, device=device), advance=True)
    after = HeightFieldUtility(track, resolution=RES).field  # the new courses, baked afresh
    for name in ("height", "on_road", "frame"):
        got = getattr(baker.field, name).numpy()
        old, new = getattr(before, name).numpy(), getattr(after, name).numpy()
        rows = len(got) // E
        for e in range(E):
            sl = slice(e * rows, (e + 1) * rows)
            assert got[sl].tobytes() == (new if m[e] else old)[sl].tobytes(), (name, e)
    frames = baker.field.frame.numpy()
    assert not np.array_equal(frames[1:3], before.frame.numpy()[1:3])  # new courses
    for e in np.flatnonzero(track.valid.numpy()):  # the generator's own heights, too
        _, _, h, road = check_against_oracle(track, baker.field, e)
        assert np.ptp(h[road == 1]) > 0.1


def _warns(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    hits = [w for w in caught if issubclass(w.category, GridResolutionWarning)]
    return out, [str(w.message) for w in hits]


def test_resolution_warning_fires_exactly_at_the_rule(device):
    """cell = (1.44 * scale + 2 * hw) * 1.2 / res; warn when cell > hw / 2 (fewer than 4
    texels across the road). scale 3, hw 0.1: side 5.424, the threshold resolution 109."""
    gen = TrackGenerator(presets.track(num_envs=2, device=device, scale=3.0))
    side = (1.44 * 3.0 + 0.2) * 1.2
    need = math.ceil(4 * side / 0.2)
    assert need == 109
    cell, msgs = _warns(lambda: check_grid_resolution("owner", gen, need - 1))
    assert cell == pytest.approx(side / (need - 1)) and len(msgs) == 1
    msg = msgs[0]
    for part in ("owner", f"{need - 1}x{need - 1}", "scale 3", "construction scale", f">= {need}"):
        assert part in msg, (part, msg)
    _, msgs = _warns(lambda: check_grid_resolution("owner", gen, need))
    assert msgs == []
    # an explicit margin: side 1.44 * 3 + 0.2 + 2 * 0.05 = 4.62: 93 texels are enough
    assert _warns(lambda: check_grid_resolution("o", gen, 92, margin=0.05))[1]
    assert not _warns(lambda: check_grid_resolution("o", gen, 93, margin=0.05))[1]


def test_resolution_warning_reads_size_hi_and_randomizers(device):
    small = TrackGenerator(presets.track(num_envs=2, device=device))  # scale 1
    assert not _warns(lambda: check_grid_resolution("o", small, 64))[1]
    _, msgs = _warns(lambda: check_grid_resolution("o", small, 64, size_hi=3.0))
    assert len(msgs) == 1 and "size_hi" in msgs[0]
    spec = presets.track(num_envs=2, device=device).with_randomize({"bezier.scale": (1.0, 3.0)})
    rnd = TrackGenerator(spec)
    _, msgs = _warns(lambda: check_grid_resolution("o", rnd, 64))
    assert len(msgs) == 1 and "'bezier.scale' randomizer's hi" in msgs[0]
    assert not _warns(lambda: check_grid_resolution("o", rnd, 128))[1]
    # size_hi wins over the randomizer (a curriculum that stays small)
    assert not _warns(lambda: check_grid_resolution("o", rnd, 64, size_hi=1.0))[1]
    # a user loop's size cannot be told: no check
    user = TrackGenerator(TrackGenConfig(generator="centerline", num_envs=2, device=device))
    assert _warns(lambda: check_grid_resolution("o", user, 8)) == (None, [])


def test_components_warn_by_the_same_rule(device):
    spec = presets.track(num_envs=2, device=device).with_randomize({"bezier.scale": (1.0, 3.0)})

    def build(*extra, collision=None):
        return Course.track(
            spec, checkpoint_spacing=0.6, collision=collision, extra=list(extra), seeds=1
        )

    _, msgs = _warns(lambda: build(HeightFieldBake(64)))
    assert len(msgs) == 1 and "HeightFieldBake(resolution=64)" in msgs[0]
    assert not _warns(lambda: build(HeightFieldBake(128)))[1]
    assert not _warns(lambda: build(HeightFieldBake(64, size_hi=1.5)))[1]
    _, msgs = _warns(lambda: build(collision=BandCollision("sdf", sdf_resolution=64)))
    assert len(msgs) == 1 and "BandCollision" in msgs[0]
    assert not _warns(lambda: build(collision=BandCollision("sdf", sdf_resolution=128)))[1]
    assert not _warns(lambda: build(collision="segments"))[1]


def test_argument_checks(device):
    track = generated_track(device, num_envs=2)
    with pytest.raises(TypeError, match="track must be a Track"):
        HeightFieldUtility("track")
    with pytest.raises(ValueError, match="resolution"):
        HeightFieldUtility(track, resolution=7)
    with pytest.raises(TypeError, match="resolution"):
        HeightFieldUtility(track, resolution=64.0)
    with pytest.raises(ValueError, match="margin"):
        HeightFieldUtility(track, margin=-1.0)
    with pytest.raises(ValueError, match="fill"):
        HeightFieldUtility(track, fill=float("nan"))
    with pytest.raises(ValueError, match="size_hi"):
        HeightFieldBake(64, size_hi=0.0)
    with pytest.raises(ValueError, match="resolution"):
        HeightFieldBake(5000)
    baker = HeightFieldUtility(track, resolution=16)
    with pytest.raises(ValueError, match="mask"):
        baker.bake(wp.zeros(3, dtype=wp.int32, device=device))
    with pytest.raises(TypeError, match="mask"):
        baker.bake(wp.zeros(2, dtype=wp.float32, device=device))
    gates = presets.gates(num_envs=2, device=device, gate_width=0.1)
    with pytest.raises(TypeError, match="track courses only"):
        Course.gates(gates, extra=[HeightFieldBake(32)], seeds=1)
    with pytest.raises(TypeError, match="gate course has no road"):
        Course(GateGenerator(gates, seeds=1), [HeightFieldBake(32)])


def test_overlapping_quads_take_the_highest_height(device):
    """A figure eight (forced valid) crosses itself at different heights, like a bridge: where
    the two road sections overlap, the texel holds the higher one."""
    P = 256
    gen = TrackGenerator(
        TrackGenConfig(
            generator="centerline", num_envs=1, num_points=P, device=device, relax_enable=False
        )
    )
    t = 2 * np.pi * np.arange(P) / P
    gen.inputs["centerline.xy"].assign(np.stack([np.sin(t), 0.5 * np.sin(2 * t)], -1))
    track = gen.generate()
    assert track.valid.numpy().tolist() == [0]  # TURNING: the loop crosses itself
    track.valid.assign(np.array([1], np.int32))
    set_level_z(track, sine_z(amp=0.3, phase=np.pi / 2))  # passes of (0, 0): z = +-0.3
    field = HeightFieldUtility(track, resolution=RES).field
    oracle, centres, h, road = check_against_oracle(track, field, 0)
    crossing = (road.ravel() == 1) & (oracle.inside(centres).sum(1) >= 2)
    near = np.linalg.norm(centres, axis=1) < 0.05
    assert (crossing & near).sum() >= 4
    assert (h.ravel()[crossing & near] > 0.25).all()  # the upper pass, not the lower (-0.3)
