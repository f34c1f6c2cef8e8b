"""Real circuits at their own widths: io.tracks_spec -> the real_track sampler, per-bead widths
through resample, inflate, validate, and what the course tools answer at those widths.

Oracles are NumPy on the source polyline (float64): closed length, widths interpolated at
the nearest source point, point-in-band from the source's own borders."""

from __future__ import annotations

import types

import numpy as np
import pytest
import warp as wp

from track_gen import FailBit, TrackGenerator
from track_gen.course import Course
from track_gen.io.spec import tracks_spec
from track_gen.tools import BandCollisionUtility

from ..oracles.widths import env_rows, local_widths, thickness_ratio

E = 4


def circuit(xy, wl, wr, name="c"):
    return types.SimpleNamespace(name=name, xy=xy, width_left=wl, width_right=wr)


def oval(n=400):
    th = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    xy = np.stack([200.0 * np.cos(th), 100.0 * np.sin(th)], 1)
    return circuit(xy, 6.0 + 2.0 * np.sin(3.0 * th), 5.0 + 1.5 * np.cos(2.0 * th), "oval")


def stadium(gap, straight=120.0, w=6.0, step=2.0):
    """Two straights ``gap`` apart joined by semicircles of radius gap/2 (hairpins), ccw."""
    r = 0.5 * gap
    pts = []
    for x in np.arange(0.0, straight, step):
        pts.append((x, -r))
    for a in np.arange(-0.5 * np.pi, 0.5 * np.pi, step / r):
        pts.append((straight + r * np.cos(a), r * np.sin(a)))
    for x in np.arange(straight, 0.0, -step):
        pts.append((x, r))
    for a in np.arange(0.5 * np.pi, 1.5 * np.pi, step / r):
        pts.append((r * np.cos(a), r * np.sin(a)))
    xy = np.array(pts)
    return circuit(xy, np.full(len(xy), w), np.full(len(xy), w), f"stadium{gap:g}")


def polyline_length(xy):
    return float(np.hypot(*(np.roll(xy, -1, 0) - xy).T).sum())


def source_widths_at(src, pts):
    """(left, right) source widths at the source point nearest each of ``pts``, interpolated
    along the nearest source segment."""
    a = src.xy
    b = np.roll(a, -1, 0)
    ab = b - a
    t = np.clip(((pts[:, None] - a[None]) * ab[None]).sum(-1) / (ab * ab).sum(-1)[None], 0, 1)
    q = a[None] + t[..., None] * ab[None]
    k = np.argmin(((q - pts[:, None]) ** 2).sum(-1), axis=1)
    tk = t[np.arange(len(pts)), k]
    wl, wr = src.width_left, src.width_right
    k1 = (k + 1) % len(a)
    return wl[k] + tk * (wl[k1] - wl[k]), wr[k] + tk * (wr[k1] - wr[k])


def test_oval_length_and_widths(device):
    src = oval()
    gen = TrackGenerator(tracks_spec([src], num_envs=E, device=device))
    tr = gen.generate()
    assert tr.valid.numpy().all()
    ref = polyline_length(src.xy)
    assert abs(tr.length.numpy()[0] - ref) / ref < 0.005
    left, right = local_widths(tr, 0)
    want_l, want_r = source_widths_at(src, env_rows(tr, 0, "center").astype(np.float64))
    np.testing.assert_array_less(np.abs(left - want_l) / want_l, 0.01)
    np.testing.assert_array_less(np.abs(right - want_r) / want_r, 0.01)


@pytest.mark.parametrize("gap, valid", [(40.0, 1), (10.0, 0)])
def test_valid_where_the_source_is(device, gap, valid):
    # hairpins of radius gap/2 with 6 m each side: a 5 m radius cannot hold a 6 m half width
    # as it is (narrow=False), so the import narrows the inner widths there (the default)
    gen = TrackGenerator(tracks_spec([stadium(gap)], num_envs=2, device=device, narrow=False))
    tr = gen.generate()
    assert tr.valid.numpy().tolist() == [valid, valid]
    if not valid:
        assert tr.fail_mask.numpy()[0] & int(FailBit.THICKNESS)
    fixed = TrackGenerator(tracks_spec([stadium(gap)], num_envs=2, device=device))
    assert fixed.generate().valid.numpy().tolist() == [1, 1]
    narrowed = fixed.diagnostics["real_track.narrowed"].numpy()
    assert (narrowed == 0).all() if valid else (narrowed > 0).all()
    if valid:  # a circuit valid as it is keeps every byte
        assert fixed.result.center.numpy().tobytes() == tr.center.numpy().tobytes()
        assert fixed.result.outer.numpy().tobytes() == tr.outer.numpy().tobytes()


def test_layouts_bitwise_equal():
    spec = tracks_spec([oval(), stadium(40.0)], num_envs=E, device="cpu")
    out = []
    for layout in ("per_env", "per_item"):
        tr = TrackGenerator(spec.replace_config(kernel_layout=layout)).generate()
        out.append([tr.outer.numpy().tobytes(), tr.inner.numpy().tobytes(), tr.valid.numpy()])
    assert out[0][0] == out[1][0] and out[0][1] == out[1][1]


def test_assign_env_and_draw(device):
    circuits = [oval(), stadium(40.0), stadium(60.0)]
    gen = TrackGenerator(tracks_spec(circuits, num_envs=6, device=device), seeds=3)
    lengths = [polyline_length(c.xy) for c in circuits]
    tr = gen.generate()
    got = tr.length.numpy().copy()
    for e in range(6):
        assert abs(got[e] - lengths[e % 3]) / lengths[e % 3] < 0.005
    gen.generate(advance=True)  # "env": the same circuit per env
    np.testing.assert_array_equal(tr.length.numpy(), got)
    spec = tracks_spec(circuits, num_envs=64, device=device, assign="draw")
    gen = TrackGenerator(spec, seeds=3)
    first = gen.generate().length.numpy().copy()
    second = gen.generate(advance=True).length.numpy()
    assert (first != second).any()  # advance drew other circuits for some envs
    again = TrackGenerator(spec, seeds=3).generate().length.numpy()
    np.testing.assert_array_equal(again, first)  # a pure function of (seed, epoch)


def point_in_polygon(pts, poly):
    x, y = pts[:, 0:1], pts[:, 1:2]
    a, b = poly, np.roll(poly, -1, 0)
    cond = (a[:, 1] > y) != (b[:, 1] > y)
    xint = a[:, 0] + (y - a[:, 1]) * (b[:, 0] - a[:, 0]) / np.where(
        b[:, 1] != a[:, 1], b[:, 1] - a[:, 1], 1.0
    )
    return ((cond & (x < xint)).sum(1) % 2) == 1


def dist_to_polyline(pts, poly):
    a, b = poly, np.roll(poly, -1, 0)
    ab = b - a
    t = np.clip(((pts[:, None] - a[None]) * ab[None]).sum(-1) / (ab * ab).sum(-1)[None], 0, 1)
    q = a[None] + t[..., None] * ab[None]
    return np.sqrt(((q - pts[:, None]) ** 2).sum(-1)).min(1)


def source_borders(src):
    xy = src.xy
    tng = np.roll(xy, -1, 0) - np.roll(xy, 1, 0)
    tng /= np.linalg.norm(tng, axis=1)[:, None]
    nrm = np.stack([-tng[:, 1], tng[:, 0]], 1)
    return xy + src.width_left[:, None] * nrm, xy - src.width_right[:, None] * nrm


@pytest.mark.parametrize("method", ["segments", "sdf"])
def test_collision_at_real_widths(device, method):
    src = oval()
    tr = TrackGenerator(tracks_spec([src], num_envs=1, device=device)).generate()
    col = BandCollisionUtility(tr, method=method, max_boxes=256, sdf_resolution=256)
    col.refresh()
    rng = np.random.default_rng(0)
    pts = rng.uniform([-215.0, -115.0], [215.0, 115.0], size=(256, 2))
    left, right = source_borders(src)
    inside = point_in_polygon(pts, left) != point_in_polygon(pts, right)
    margin = 0.5 if method == "segments" else 2.5  # sdf: a few cells of a 256 grid
    far = np.minimum(dist_to_polyline(pts, left), dist_to_polyline(pts, right)) > margin
    pos = wp.array(np.c_[pts, np.zeros(256)].astype(np.float32), dtype=wp.vec3f, device=device)
    rot = wp.array(np.tile([0, 0, 0, 1.0], (256, 1)).astype(np.float32), dtype=wp.quatf)
    rot = rot.to(device)
    he = wp.array(np.full((256, 2), 1.0e-3, np.float32), dtype=wp.vec2f, device=device)
    oob = col.query(pos, rot, he).oob.numpy()
    assert far.sum() > 150 and inside[far].sum() > 10
    np.testing.assert_array_equal(oob[far], (~inside[far]).astype(np.int32))


def test_checkpoints_and_progress_at_real_widths(device):
    src = oval()
    course = Course.track(
        tracks_spec([src], num_envs=1, device=device), checkpoint_spacing=40.0, seeds=0
    )
    cps = course.checkpoints
    m = int(cps.count.numpy()[0])
    lft = cps.left.numpy()[:m, :2].astype(np.float64)
    rgt = cps.right.numpy()[:m, :2].astype(np.float64)
    mid = 0.5 * (lft + rgt)
    wl, wr = source_widths_at(src, mid)
    span = np.hypot(*(rgt - lft).T)
    np.testing.assert_array_less(np.abs(span - (wl + wr)) / (wl + wr), 0.01)
    # drive one lap along a line 80 % of the way to the left border: every checkpoint passes
    pos = wp.zeros(1, dtype=wp.vec3f, device=device)
    course.bind(position=pos)
    c = env_rows(course.result, 0, "center")
    nrm = env_rows(course.result, 0, "normal")
    left_w, _ = local_widths(course.result, 0)
    path = c + 0.8 * left_w[:, None] * nrm
    for k in range(len(path) + 3):
        pos.assign(np.c_[path[[(k - 2) % len(path)]], [0.0]].astype(np.float32))
        course.step()
    assert course.progress.events.laps.numpy()[0] >= 1


def test_thickness_matches_a_numpy_oracle():
    rng = np.random.default_rng(7)
    circuits = [stadium(g, w=w) for g, w in [(9.0, 4.0), (14.0, 6.0), (16.0, 7.5), (30.0, 6.0)]]
    for ry in (12.0, 20.0, 40.0):
        th = np.linspace(0.0, 2.0 * np.pi, 300, endpoint=False)
        xy = np.stack([150.0 * np.cos(th), ry * np.sin(th)], 1)
        w = rng.uniform(3.0, 8.0) + np.sin(2.0 * th + rng.uniform(0, 6))
        circuits.append(circuit(xy, w, w[::-1].copy()))
    # narrow=False: the circuits as they are (the import would narrow the thin ones)
    spec = tracks_spec(circuits, num_envs=len(circuits), device="cpu", narrow=False)
    tr = TrackGenerator(spec).generate()
    fail = tr.fail_mask.numpy()
    decided = 0
    for e in range(len(circuits)):
        r = thickness_ratio(tr, e)
        if abs(r - 1.0) > 0.01:
            decided += 1
            assert bool(fail[e] & int(FailBit.THICKNESS)) == (r < 1.0), (e, r, fail[e])
    assert decided >= 5 and (fail & int(FailBit.THICKNESS)).any() and (fail == 0).any()
