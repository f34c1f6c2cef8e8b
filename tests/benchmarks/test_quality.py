"""benchmarks/track_metrics.py on analytic shapes, and a smoke run of benchmarks/quality.py."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def _load_metrics():
    spec = importlib.util.spec_from_file_location(
        "track_metrics", REPO / "benchmarks" / "track_metrics.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


tm = _load_metrics()


def circle(R=1.0, n=400, phase=0.0):
    t = phase + 2 * np.pi * np.arange(n) / n
    return np.stack([R * np.cos(t), R * np.sin(t)], axis=1)


def rounded_rectangle(w=4.0, h=2.0, r=0.3, spacing=0.02):
    """Counter-clockwise rectangle of size w x h with corner radius r, beads ~spacing apart."""
    pts = []
    corners = [(w / 2 - r, h / 2 - r, 0.0), (-w / 2 + r, h / 2 - r, 0.5 * np.pi)]
    corners += [(-w / 2 + r, -h / 2 + r, np.pi), (w / 2 - r, -h / 2 + r, 1.5 * np.pi)]
    for k, (cx, cy, a0) in enumerate(corners):
        arc = np.linspace(a0, a0 + 0.5 * np.pi, max(3, int(0.5 * np.pi * r / spacing)))
        pts += [(cx + r * np.cos(a), cy + r * np.sin(a)) for a in arc[:-1]]
        # straight from the arc end to the next corner's arc start
        ex, ey = cx + r * np.cos(a0 + 0.5 * np.pi), cy + r * np.sin(a0 + 0.5 * np.pi)
        nx, ny, na = corners[(k + 1) % 4]
        sx, sy = nx + r * np.cos(na), ny + r * np.sin(na)
        m = max(2, int(np.hypot(sx - ex, sy - ey) / spacing))
        pts += [(ex + (sx - ex) * s, ey + (sy - ey) * s) for s in np.arange(m) / m]
    return np.array(pts)


def figure_eight(n=300):
    t = 2 * np.pi * np.arange(n) / n
    return np.stack([np.sin(t), np.sin(t) * np.cos(t)], axis=1)


def wavy_circle(R=1.0, amp=0.08, k=6, n=180):
    t = 2 * np.pi * np.arange(n) / n
    r = R * (1 + amp * np.sin(k * t))
    return np.stack([r * np.cos(t), r * np.sin(t)], axis=1)


# -- circle ---------------------------------------------------------------------------------


@pytest.mark.parametrize("R", [0.5, 1.0, 3.0])
def test_circle_metrics(R):
    n = 1000
    c = circle(R, n)
    P = 2 * n * R * np.sin(np.pi / n)  # inscribed polygon perimeter
    assert tm.perimeter(c) == pytest.approx(P, rel=1e-12)
    assert tm.compactness(c) == pytest.approx(1.0, abs=1e-4)
    assert tm.compactness(c, length=2 * np.pi * R) == pytest.approx(1.0, abs=1e-4)
    # Menger curvature of a regular inscribed polygon is exactly 1/R.
    np.testing.assert_allclose(tm.curvature(c), 1.0 / R, rtol=1e-9)
    assert tm.peak_curvature(c, half_width=0.1) == pytest.approx(0.1 / R, rel=1e-9)
    assert tm.chicane_count(c, min_angle=0.0) == 0
    assert tm.lap_time(c) == pytest.approx(P / np.sqrt(R), rel=1e-9)
    assert tm.lap_time(c) == pytest.approx(2 * np.pi * R / np.sqrt(R), rel=1e-5)
    assert not tm.has_self_crossing(c)
    np.testing.assert_allclose(np.sum(tm.turn_angles(c)), 2 * np.pi, rtol=1e-12)


def test_lap_time_speed_cap_and_kappa_floor():
    # R = 400: sqrt(R) = 20 > v_max = 10, so the lap is driven at 10 units/s.
    c = circle(400.0, 2000)
    assert tm.lap_time(c) == pytest.approx(tm.perimeter(c) / 10.0, rel=1e-9)
    # Collinear beads (kappa 0) are floored, then capped: still v_max.
    square = np.array([[0, 0], [1, 0], [2, 0], [2, 2], [0, 2]], dtype=float)
    assert np.isfinite(tm.lap_time(square))


def test_clockwise_and_3d_input():
    c = circle(2.0, 500)[::-1]
    assert tm.compactness(c) == pytest.approx(1.0, abs=1e-4)
    np.testing.assert_allclose(np.sum(tm.turn_angles(c)), -2 * np.pi, rtol=1e-12)
    c3 = np.concatenate([c, np.zeros((len(c), 1))], axis=1)
    assert tm.shoelace_area(c3) == pytest.approx(tm.shoelace_area(c))


# -- rounded rectangle, figure-eight, wavy circle -------------------------------------------


def test_rounded_rectangle_metrics():
    rr = rounded_rectangle()
    assert tm.chicane_count(rr) == 0
    assert tm.peak_curvature(rr, half_width=0.3) == pytest.approx(1.0, rel=0.05)
    assert tm.compactness(rr) < 0.8
    assert not tm.has_self_crossing(rr)


def test_figure_eight_crosses():
    f8 = figure_eight()
    assert tm.has_self_crossing(f8)
    # Its signed lobes cancel: the shoelace area is near 0.
    assert tm.compactness(f8) < 0.05


def test_wavy_circle_chicanes():
    k = 6
    w = tm.turn_angles(wavy_circle(k=k))
    assert w.min() < -0.05  # the inward dents turn right
    assert tm.chicane_count(wavy_circle(k=k)) == 2 * k
    assert tm.chicane_count(wavy_circle(k=k), min_angle=1.0) == 0
    assert tm.chicane_count(wavy_circle(amp=0.0)) == 0
    assert not tm.has_self_crossing(wavy_circle(k=k))


# -- crossings and distances ----------------------------------------------------------------


def test_crossing_flags_batch_with_padding():
    loops = [circle(1.0, 60), figure_eight(80), wavy_circle(n=90), figure_eight(40)]
    N = 100
    pad = np.full((len(loops), N, 3), np.nan)
    counts = np.array([len(p) for p in loops])
    for b, p in enumerate(loops):
        pad[b, : len(p), :2] = p
        pad[b, : len(p), 2] = 0.0
    expected = [False, True, False, True]
    np.testing.assert_array_equal(tm.crossing_flags(pad, counts), expected)
    # Small chunks give the same answer.
    np.testing.assert_array_equal(tm.crossing_flags(pad, counts, chunk_pairs=1), expected)
    # Degenerate loops (< 4 beads) never cross.
    assert not tm.crossing_flags(pad[:1], np.array([3]))[0]


def test_touching_adjacent_segments_do_not_count():
    # A bow-tie crosses properly; a simple square does not (its corners touch neighbours).
    bowtie = np.array([[0, 0], [1, 1], [1, 0], [0, 1]], dtype=float)
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    assert tm.has_self_crossing(bowtie)
    assert not tm.has_self_crossing(square)


def test_point_loop_distance():
    c = circle(1.0, 2000)
    pts = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 0.5], [1.0, 0.0]])
    np.testing.assert_allclose(tm.point_loop_distance(pts, c), [1.0, 1.0, 0.5, 0.0], atol=2e-6)
    # Concentric circles: every bead of the inner one is R1 - R2 from the outer polyline.
    assert tm.mean_distance_to_loop(circle(0.8, 50, phase=0.01), c) == pytest.approx(0.2, abs=1e-5)
    # A loop to itself: zero displacement.
    assert tm.mean_distance_to_loop(c, c) == 0.0


def test_loops_from_padded_copies():
    pad = np.full((2, 6, 3), np.nan)
    pad[0, :4, :2] = [[0, 0], [1, 0], [1, 1], [0, 1]]
    pad[1, :5, :2] = 1.0
    loops = tm.loops_from_padded(pad, [4, 5])
    assert [lp.shape for lp in loops] == [(4, 2), (5, 2)]
    pad[0, 0, 0] = 9.0
    assert loops[0][0, 0] == 0.0


# -- the script -----------------------------------------------------------------------------


def test_quality_script_runs(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    out_csv = tmp_path / "q.csv"
    cmd = [sys.executable, str(REPO / "benchmarks" / "quality.py")]
    cmd += ["--device", "cpu", "--E", "8", "--calls", "1", "--generators", "polar"]
    cmd += ["--csv", str(out_csv)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("generator")).split()
    for col in ("ms/call", "yield", "x_pre", "disp", "compact", "chicanes", "lap_t"):
        assert col in header
    rows = [line.split() for line in lines if line.startswith("polar")]
    assert len(rows) == 1 and rows[0][1] == "8"
    assert len(rows[0]) == len(header)
    text = out_csv.read_text().splitlines()
    assert text[0].split(",") == header and text[1].startswith("polar,8,")
