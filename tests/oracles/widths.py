"""NumPy oracles of a track's per-bead widths (float64, from its own beads, borders and
normals): the local widths on each side and the width thickness rule."""

from __future__ import annotations

import numpy as np


def env_rows(track, e, name):
    n_max = track.center.shape[0] // track.num_envs
    c = int(track.count.numpy()[e])
    return getattr(track, name).numpy().reshape(track.num_envs, n_max, 3)[e, :c, :2]


def local_widths(track, e):
    """(left, right) distance of the borders to the centerline per bead, the left border
    being the one on the side of the normal."""
    c, o, i, n = (env_rows(track, e, k) for k in ("center", "outer", "inner", "normal"))
    o_left = ((o - c) * n).sum(1) > 0
    wo, wi = np.hypot(*(o - c).T), np.hypot(*(i - c).T)
    return np.where(o_left, wo, wi), np.where(o_left, wi, wo)


def thickness_ratio(track, e, tol=0.02):
    """NumPy oracle of the width thickness rule on the env's own beads, normals and local
    widths (float64): the smallest ratio of a distance to its limit; THICKNESS iff < 1."""
    c = env_rows(track, e, "center").astype(np.float64)
    nrm = env_rows(track, e, "normal").astype(np.float64)
    wl, wr = (w.astype(np.float64) for w in local_widths(track, e))
    n, keep = len(c), 1.0 - tol
    prev, nxt = np.roll(c, 1, 0), np.roll(c, -1, 0)
    a, b, ac = np.hypot(*(c - prev).T), np.hypot(*(nxt - c).T), np.hypot(*(nxt - prev).T)
    cr = (c - prev)[:, 0] * (nxt - prev)[:, 1] - (c - prev)[:, 1] * (nxt - prev)[:, 0]
    kappa = 2.0 * np.abs(cr) / (a * b * ac)
    inside = np.where(cr > 0, wl, wr)
    ratios = [(1.0 / np.maximum(kappa, 1e-30) / (keep * inside)).min()]
    length = float(track.length.numpy()[e])
    band = max(min(max(int(round(2.0 * max(wl.max(), wr.max()) / (length / n))), 1), n // 4), 1)
    i, j = np.triu_indices(n, 1)
    far = (j - i > band) & (j - i < n - band)
    i, j = i[far], j[far]
    d = c[j] - c[i]
    wi = np.where((d * nrm[i]).sum(1) > 0, wl[i], wr[i])
    wj = np.where((-d * nrm[j]).sum(1) > 0, wl[j], wr[j])
    ratios.append((np.hypot(*d.T) / (keep * (wi + wj))).min())
    return min(ratios)
