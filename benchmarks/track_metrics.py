"""NumPy shape metrics for closed centerline loops (used by ``benchmarks/quality.py``).

Every function takes plain NumPy data and no Warp object. A *loop* is an ``[n, 2]`` (or
``[n, 3]``, only x and y are used) array of beads of a closed polyline: the closing segment
``loop[n-1] -> loop[0]`` is implied, the first bead is not repeated. Batched helpers take a
NaN-padded ``[B, N, 2]`` array with per-loop ``counts[B]`` (beads past ``counts[b]`` are
ignored), the layout of ``Track.center`` reshaped to ``[E, N_max, 3]``.

Curvatures are Menger curvatures: the inverse radius of the circle through a bead and its two
neighbours, ``4 * area(triangle) / (product of its side lengths)``, so a regular polygon
inscribed in a circle of radius R has curvature exactly 1/R at every bead.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "chicane_count",
    "compactness",
    "crossing_flags",
    "curvature",
    "has_self_crossing",
    "lap_time",
    "loops_from_padded",
    "mean_distance_to_loop",
    "peak_curvature",
    "perimeter",
    "point_loop_distance",
    "segment_lengths",
    "shoelace_area",
    "turn_angles",
]


def _xy(loop) -> np.ndarray:
    a = np.asarray(loop, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] < 2:
        raise ValueError(f"expected an [n, 2] or [n, 3] loop, got shape {a.shape}")
    return a[:, :2]


def loops_from_padded(center, counts) -> list[np.ndarray]:
    """Split a padded ``[B, N, >=2]`` batch into ``B`` float64 ``[counts[b], 2]`` loops (copies)."""
    c = np.asarray(center)
    return [np.array(c[b, : int(n), :2], dtype=np.float64) for b, n in enumerate(counts)]


def segment_lengths(loop) -> np.ndarray:
    """Length of each closed-loop segment ``i -> i+1`` (the last one closes the loop)."""
    p = _xy(loop)
    return np.linalg.norm(np.roll(p, -1, axis=0) - p, axis=1)


def perimeter(loop) -> float:
    """Closed polyline length: the sum of :func:`segment_lengths`."""
    return float(segment_lengths(loop).sum())


def shoelace_area(loop) -> float:
    """Unsigned enclosed area ``|sum(x_i * y_{i+1} - x_{i+1} * y_i)| / 2`` (shoelace formula).

    For a self-crossing loop this is the net signed area, not the covered area.
    """
    p = _xy(loop)
    q = np.roll(p, -1, axis=0)
    return float(abs(np.sum(p[:, 0] * q[:, 1] - q[:, 0] * p[:, 1])) * 0.5)


def compactness(loop, length: float | None = None) -> float:
    """Isoperimetric quotient ``4 * pi * A / P**2``: 1 for a circle, towards 0 for thin shapes.

    ``A`` is :func:`shoelace_area`; ``P`` is ``length`` when given (``Track.length``), else
    the closed polyline :func:`perimeter`. A zero perimeter gives NaN.
    """
    P = perimeter(loop) if length is None else float(length)
    if not P > 0.0:
        return float("nan")
    return 4.0 * np.pi * shoelace_area(loop) / (P * P)


def curvature(loop) -> np.ndarray:
    """Unsigned Menger curvature at every bead, from the bead and its two loop neighbours.

    ``kappa_i = 2 * |cross(b - a, c - a)| / (|b - a| * |c - b| * |c - a|)`` with
    ``a, b, c = bead i-1, i, i+1``: the inverse radius of the circle through the three beads
    (0 for collinear beads; coincident beads give 0 as well).
    """
    p = _xy(loop)
    a = np.roll(p, 1, axis=0)
    c = np.roll(p, -1, axis=0)
    ab = p - a
    bc = c - p
    ac = c - a
    cross = ab[:, 0] * ac[:, 1] - ab[:, 1] * ac[:, 0]
    denom = np.linalg.norm(ab, axis=1) * np.linalg.norm(bc, axis=1) * np.linalg.norm(ac, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(denom > 0.0, 2.0 * np.abs(cross) / np.where(denom > 0.0, denom, 1.0), 0.0)
    return k


def peak_curvature(loop, half_width: float = 1.0) -> float:
    """Largest bead :func:`curvature` times ``half_width`` (unitless).

    1 means the tightest turn has a radius equal to half the road width (the inner border
    pinches to a point); the validator flags radii below about ``half_width`` as THICKNESS.
    """
    return float(curvature(loop).max() * half_width)


def turn_angles(loop) -> np.ndarray:
    """Signed exterior angle at every bead, in ``(-pi, pi]``: the angle from the incoming
    segment ``i-1 -> i`` to the outgoing one ``i -> i+1`` (positive = left turn). The angles
    of a simple counter-clockwise loop sum to ``2 * pi``."""
    p = _xy(loop)
    d_in = p - np.roll(p, 1, axis=0)
    d_out = np.roll(p, -1, axis=0) - p
    cross = d_in[:, 0] * d_out[:, 1] - d_in[:, 1] * d_out[:, 0]
    dot = np.sum(d_in * d_out, axis=1)
    return np.arctan2(cross, dot)


def chicane_count(loop, min_angle: float = 0.05) -> int:
    """Number of sign changes of the turn direction around the loop.

    Only beads with ``|turn angle| >= min_angle`` radians (:func:`turn_angles`) take part;
    the sign changes are counted between consecutive such beads, cyclically (the loop has no
    start), so the result is even: a left-right-left S counts 2 on its way in and out. A
    circle (all turns one way) counts 0. The count depends on the bead spacing through
    ``min_angle``.
    """
    t = turn_angles(loop)
    s = np.sign(t[np.abs(t) >= min_angle])
    if s.size < 2:
        return 0
    return int(np.count_nonzero(s != np.roll(s, -1)))


def lap_time(loop, a_lat: float = 1.0, kappa_floor: float = 1e-3, v_max: float = 10.0) -> float:
    """Lap-time proxy: ``sum over segments of ds / v`` with the cornering-limited speed
    ``v = min(v_max, sqrt(a_lat / kappa))``.

    ``ds`` is the segment length and ``kappa`` the mean of the :func:`curvature` of its two
    end beads, floored at ``kappa_floor``. No braking or acceleration limit: it measures how
    much of the loop is driven slowly, e.g. ``2 * pi * R / sqrt(R)`` for a circle of radius
    R (when ``sqrt(R) <= v_max``) in track units and seconds with ``a_lat = 1``.
    """
    k = curvature(loop)
    k_seg = np.maximum(0.5 * (k + np.roll(k, -1)), kappa_floor)
    v = np.minimum(np.sqrt(a_lat / k_seg), v_max)
    return float(np.sum(segment_lengths(loop) / v))


def _padded_segments(points, counts):
    """Start and end points ``[B, N, 2]`` of every closed-loop segment, and its validity."""
    p = np.asarray(points, dtype=np.float64)[:, :, :2]
    B, N = p.shape[:2]
    n = np.asarray(counts, dtype=np.int64).reshape(B, 1)
    i = np.arange(N).reshape(1, N)
    nxt = np.where(i + 1 < n, i + 1, 0)
    q = np.take_along_axis(p, nxt[:, :, None].repeat(2, axis=2), axis=1)
    return p, q, i < n


def crossing_flags(points, counts, chunk_pairs: int = 1_000_000) -> np.ndarray:
    """For each padded loop ``points[b, :counts[b]]``, True when two non-adjacent segments
    cross properly.

    A proper crossing: the end points of each segment lie strictly on opposite sides of the
    other segment's line (orientation products both < 0). Segments sharing a bead (i, i+1,
    and the closing pair) are never compared; touching or collinear overlaps do not count.
    Works on ``[B, N, 2]`` batches in chunks of about ``chunk_pairs`` segment pairs; loops
    with fewer than 4 beads or non-finite coordinates give False.
    """
    p_all = np.asarray(points, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    B = p_all.shape[0]
    out = np.zeros(B, dtype=bool)
    if B == 0:
        return out
    N = int(max(int(counts.max()), 0))
    if N < 4:
        return out
    p_all = p_all[:, :N, :2]
    step = max(1, chunk_pairs // (N * N))
    ii, jj = np.triu_indices(N, k=2)  # i < j - 1: skips self and the i+1 neighbour
    for b0 in range(0, B, step):
        sl = slice(b0, min(B, b0 + step))
        n = counts[sl].reshape(-1, 1)
        a, b, ok = _padded_segments(p_all[sl], counts[sl])
        # Pairs inside each loop, minus the closing neighbour pair (0, n-1).
        pair_ok = ok[:, ii] & ok[:, jj] & ~((ii[None, :] == 0) & (jj[None, :] == n - 1))
        A, Bp = a[:, ii], b[:, ii]
        C, D = a[:, jj], b[:, jj]

        def orient(o, u, w):
            return (u[..., 0] - o[..., 0]) * (w[..., 1] - o[..., 1]) - (u[..., 1] - o[..., 1]) * (
                w[..., 0] - o[..., 0]
            )

        with np.errstate(invalid="ignore"):
            d1 = orient(A, Bp, C)
            d2 = orient(A, Bp, D)
            d3 = orient(C, D, A)
            d4 = orient(C, D, Bp)
            hit = (d1 * d2 < 0.0) & (d3 * d4 < 0.0) & pair_ok
        finite = np.all(np.isfinite(np.where(ok[:, :, None], a, 0.0)), axis=(1, 2))
        out[sl] = hit.any(axis=1) & finite & (counts[sl] >= 4)
    return out


def has_self_crossing(loop) -> bool:
    """True when the closed loop has a proper crossing of two non-adjacent segments
    (:func:`crossing_flags` for one loop)."""
    p = _xy(loop)
    return bool(crossing_flags(p[None], np.array([p.shape[0]]))[0])


def point_loop_distance(points, loop) -> np.ndarray:
    """Distance from each point ``[m, 2]`` to the nearest point of the closed polyline
    ``loop`` (point-to-segment distances, minimum over every segment)."""
    x = _xy(points)
    a = _xy(loop)
    b = np.roll(a, -1, axis=0)
    ab = b - a  # [s, 2]
    len2 = np.sum(ab * ab, axis=1)
    ap = x[:, None, :] - a[None, :, :]  # [m, s, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(len2 > 0.0, np.sum(ap * ab[None], axis=2) / np.where(len2 > 0, len2, 1), 0.0)
    t = np.clip(t, 0.0, 1.0)
    d = ap - t[:, :, None] * ab[None]
    return np.sqrt(np.min(np.sum(d * d, axis=2), axis=1))


def mean_distance_to_loop(points, loop) -> float:
    """Mean of :func:`point_loop_distance`: with ``points`` the relaxed beads and ``loop``
    the unrelaxed centerline of the same env, the mean relaxation displacement."""
    return float(point_loop_distance(points, loop).mean())
