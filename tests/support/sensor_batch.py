"""A hand-made track batch for the sensors' fuzz cases (``test_lookahead_inputs.py``,
``test_cones_inputs.py``): env 0 a circle, env 1 an ellipse, env 2 invalid, with its
localizer, cones and seeds (cpu), and poses on it."""

from __future__ import annotations

import functools

import numpy as np
import warp as wp

from track_gen import tools
from track_gen.results import Track

E = 3  # env 0 a circle, env 1 an ellipse, env 2 invalid
N = 64  # beads per env


@functools.cache
def batch():
    """A hand-made track batch, its localizer and its cones (cpu)."""
    n_max = N + 3
    track = Track.allocate(E, n_max, "cpu")
    a = 2 * np.pi * np.arange(N) / N
    rows = {k: np.full((E, n_max, 3), np.nan, np.float32) for k in ("center", "normal")}
    rows |= {k: np.full((E, n_max, 3), np.nan, np.float32) for k in ("inner", "outer")}
    arclen = np.full((E, n_max), np.nan, np.float32)
    length = np.zeros(E, np.float32)
    for e, (rx, ry) in enumerate(((1.0, 1.0), (1.6, 0.8), (1.0, 1.0))):
        c = np.c_[rx * np.cos(a), ry * np.sin(a), np.zeros(N)]
        d = np.roll(c, -1, 0) - np.roll(c, 1, 0)
        t = d / np.linalg.norm(d, axis=1)[:, None]
        nrm = np.c_[-t[:, 1], t[:, 0], np.zeros(N)]
        rows["center"][e, :N], rows["normal"][e, :N] = c, nrm
        rows["inner"][e, :N], rows["outer"][e, :N] = c + 0.1 * nrm, c - 0.1 * nrm
        chord = np.linalg.norm(np.roll(c, -1, 0) - c, axis=1)
        arclen[e, :N] = np.r_[0.0, np.cumsum(chord)[:-1]]
        length[e] = chord.sum()
    for k, v in rows.items():
        getattr(track, k).assign(v.reshape(-1, 3))
    track.arclen.assign(arclen.reshape(-1))
    track.length.assign(length)
    track.count.assign(np.full(E, N, np.int32))
    track.valid.assign(np.array([1, 1, 0], np.int32))
    loc = tools.LocalizerUtility(track)
    props = tools.PropsUtility(track, "cone", 0.15, max_props=128).props
    seeds = wp.array(np.array([3, 4, 5], np.int32), dtype=wp.int32)
    return track, loc, props, seeds


def arrays(pos, quat):
    """Host rows as cpu ``(vec3f [E], quatf [E])`` arrays."""
    return (
        wp.array(np.asarray(pos, np.float32), dtype=wp.vec3f),
        wp.array(np.asarray(quat, np.float32), dtype=wp.quatf),
    )


#: a pose on each loop (env 2's loop is invalid) and a heading of 90 degrees about z
ON_THE_LOOP = np.array([[1.0, 0.02, 0.0], [0.0, 0.8, 0.01], [1.0, 0.0, 0.0]], np.float32)
HEADING = np.array([[0.0, 0.0, 0.7071, 0.7071]] * E, np.float32)


def usable_pose(pos, quat) -> np.ndarray:
    """Per env: the pose is finite (a usable env answers finite values for it)."""
    return np.isfinite(pos).all(axis=1) & np.isfinite(quat).all(axis=1)
