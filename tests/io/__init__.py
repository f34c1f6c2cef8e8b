"""Tests of track_gen.io; the helpers below write circuits in the TUM racetrack-database layout
(the tests' own circuits: an oval, a loop with a hairpin, variable widths)."""

from __future__ import annotations

import numpy as np

HEADER = "# x_m,y_m,w_tr_right_m,w_tr_left_m"


def oval(n: int = 120) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A stadium (two 200 m straights, two 60 m-radius ends), counter-clockwise, widths
    5 m right / 6 m left: (xy [n, 2], w_right [n], w_left [n])."""
    r, half = 60.0, 100.0
    perim = 4 * half + 2 * np.pi * r
    s = np.arange(n) * perim / n
    xy = np.empty((n, 2))
    for k, d in enumerate(s):
        if d < 2 * half:  # bottom straight, left to right
            xy[k] = (-half + d, -r)
        elif d < 2 * half + np.pi * r:  # right end
            a = -np.pi / 2 + (d - 2 * half) / r
            xy[k] = (half + r * np.cos(a), r * np.sin(a))
        elif d < 4 * half + np.pi * r:  # top straight, right to left
            xy[k] = (half - (d - 2 * half - np.pi * r), r)
        else:  # left end
            a = np.pi / 2 + (d - 4 * half - np.pi * r) / r
            xy[k] = (-half + r * np.cos(a), r * np.sin(a))
    return xy, np.full(n, 5.0), np.full(n, 6.0)


def hairpin(n: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An ellipse with a deep hairpin pushed in from the top (a narrow U the road runs down
    and back up), clockwise, widths 3 m / 3.5 m."""
    t = -np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    dent = 170.0 * np.exp(-(((t + 3 * np.pi / 2) / 0.12) ** 2))
    x = 200.0 * np.cos(t)
    y = 120.0 * np.sin(t) - dent
    return np.stack([x, y], axis=1), np.full(n, 3.0), np.full(n, 3.5)


def variable(n: int = 90) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A wobbly circle (radius 150 m) with widths that vary along the loop."""
    t = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    r = 150.0 + 20.0 * np.sin(3 * t)
    xy = np.stack([r * np.cos(t), r * np.sin(t)], axis=1)
    return xy, 4.0 + 2.0 * np.sin(3 * t + 0.4), 5.0 + 1.5 * np.cos(2 * t)


def sample(n: int = 300) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A real-looking circuit: a smooth random loop (a few Fourier modes, ~4 km) at the
    database's precision (millimetres), widths between ~5 and ~8 m varying on their own."""
    rng = np.random.default_rng(13)
    t = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    r = 600.0 + sum(
        a * np.cos(k * t + p)
        for k, a, p in zip(range(2, 6), rng.uniform(20, 70, 4), rng.uniform(0, 6, 4), strict=True)
    )
    xy = np.round(np.stack([1.3 * r * np.cos(t), r * np.sin(t)], axis=1), 3)
    wr = np.round(6.5 + 1.5 * np.sin(2 * t + 1.0), 3)
    wl = np.round(6.0 + 1.2 * np.cos(5 * t), 3)
    return xy, wr, wl


CIRCUITS = {"oval": oval, "hairpin": hairpin, "variable": variable, "sample": sample}


def write_csv(path, xy, wr, wl, *, header: bool = True, close: bool = False, fmt="{:.6f}"):
    """Write a circuit in the database layout (optionally with the closing duplicate row)."""
    rows = [HEADER] if header else []
    pts = list(zip(xy, wr, wl, strict=True))
    if close:
        pts.append(pts[0])
    for (x, y), a, b in pts:
        rows.append(",".join(fmt.format(v) for v in (x, y, a, b)))
    path.write_text("\n".join(rows) + "\n")
    return path


def polyline_length(xy: np.ndarray) -> float:
    """Closed polyline length (the NumPy oracle)."""
    d = np.roll(xy, -1, axis=0) - xy
    return float(np.hypot(d[:, 0], d[:, 1]).sum())
