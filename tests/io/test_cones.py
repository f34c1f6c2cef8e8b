"""write_cones: the FSDS cone-map layout, parsed back and checked against the course."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.io import CONE_TAGS, write_cones

SPACING = 0.15


@pytest.fixture(scope="module")
def batch():
    gen = TrackGenerator(TrackGenConfig(generator="bezier", num_envs=3, device="cpu"), seeds=11)
    gen.generate()
    return gen.result


def _course(track, e):
    n_max, n = track.N_max, int(track.count.numpy()[e])
    rows = slice(e * n_max, e * n_max + n)
    return tuple(
        getattr(track, k).numpy()[rows].astype(np.float64)[:, :2]
        for k in ("center", "normal", "outer", "inner")
    )


def _parse(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert all(len(r) == 7 for r in rows)  # tag,x,y,direction,x_var,y_var,xy_cov; no header
    tags = [r[0] for r in rows]
    vals = np.array([[float(v) for v in r[1:]] for r in rows])
    return tags, vals


def _side(center, normal, pts):
    """Signed side of each point: dot(p - nearest bead, left normal of that bead)."""
    d = np.linalg.norm(pts[:, None, :] - center[None, :, :], axis=2)
    k = np.argmin(d, axis=1)
    return np.sum((pts - center[k]) * normal[k], axis=1)


@pytest.mark.parametrize("env", [0, 1, 2])
def test_cones_blue_left_yellow_right_orange_at_start(tmp_path, batch, env):
    path = tmp_path / "cones.csv"
    write_cones(batch, env, path, spacing=SPACING)
    tags, vals = _parse(path)
    assert set(tags) <= set(CONE_TAGS)
    assert tags[:2] == ["big_orange", "big_orange"] and tags.count("big_orange") == 2
    assert np.all(vals[:, 3:] == 0.0)
    center, normal, outer, inner = _course(batch, env)
    xy = vals[:, :2]
    tags = np.array(tags)
    side = _side(center, normal, xy)
    assert np.all(side[tags == "blue"] > 0) and np.all(side[tags == "yellow"] < 0)
    # every cone stands on a border: at half_width (0.1) from the centerline
    d = np.min(np.linalg.norm(xy[:, None] - center[None], axis=2), axis=1)
    np.testing.assert_allclose(d, 0.1, rtol=0.05)
    # the start line: the two border points of bead 0, right one first
    start = xy[tags == "big_orange"]
    np.testing.assert_allclose(np.linalg.norm(start - center[0], axis=1), 0.1, rtol=1e-5)
    assert side[0] < 0 < side[1]
    # per border: ceil(length / spacing) cones, consecutive ones <= spacing apart
    for tag, k in (("blue", 1), ("yellow", 0)):
        border = (
            outer if np.sum((outer - center) * normal) * (1 if tag == "blue" else -1) > 0 else inner
        )
        seg = np.roll(border, -1, axis=0) - border
        length = float(np.hypot(seg[:, 0], seg[:, 1]).sum())
        pts = np.concatenate([start[k : k + 1], xy[tags == tag]])
        assert len(pts) == math.ceil(length / SPACING)
        gaps = np.linalg.norm(np.diff(np.concatenate([pts, pts[:1]]), axis=0), axis=1)
        assert gaps.max() <= SPACING * (1 + 1e-9)
        assert length * 0.95 < gaps.sum() <= length * (1 + 1e-9)  # chords of the border
    # heading: the direction of travel along the border (cos with the tangent > 0)
    heading = vals[:, 2]
    k = np.argmin(np.linalg.norm(xy[:, None] - center[None], axis=2), axis=1)
    t = np.stack([normal[k, 1], -normal[k, 0]], axis=1)  # tangent = normal rotated by -90 deg
    assert np.mean(np.cos(heading) * t[:, 0] + np.sin(heading) * t[:, 1] > 0) > 0.95


def test_cone_refusals(tmp_path, batch):
    path = tmp_path / "c.csv"
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="spacing"):
            write_cones(batch, 0, path, spacing=bad)
    with pytest.raises(TypeError, match="spacing"):
        write_cones(batch, 0, path, spacing="1")
    with pytest.raises(ValueError, match="at most"):
        write_cones(batch, 0, path, spacing=1e-9)
    with pytest.raises(ValueError, match="at least 4 cones"):
        write_cones(batch, 0, path, spacing=3.0)  # the default: far too coarse at scale 1
    with pytest.raises(ValueError, match="out of range"):
        write_cones(batch, 3, path)
    bad_gen = TrackGenerator(
        TrackGenConfig(generator="polar", num_envs=1, device="cpu", N_max=64), seeds=0
    )
    bad_gen.generate()
    with pytest.raises(ValueError, match="env 0 is invalid"):
        write_cones(bad_gen.result, 0, path, spacing=SPACING)
    assert list(tmp_path.iterdir()) == []


def test_metre_scale_course_with_default_spacing(tmp_path):
    gen = TrackGenerator(
        TrackGenConfig(
            generator="polar", num_envs=1, device="cpu", scale=150.0, half_width=2.5, N_max=1024
        ),
        seeds=2,
    )
    gen.generate()
    assert gen.result.valid.numpy()[0] == 1
    write_cones(gen.result, 0, tmp_path / "m.csv")  # spacing 3.0 m
    tags, vals = _parse(tmp_path / "m.csv")
    assert tags.count("blue") > 20 and tags.count("yellow") > 20
