"""NumPy oracles for the gate stages (``gate_anchors``, ``gate_frames``, ``gate_validate``).

Plain float64 implementations of the behaviour the stage docstrings document, written from
those docstrings (not from the kernels), plus hand-made loops for the ``"centerline"``
sampler and host views of a :class:`~track_gen.GateSequence`.
"""

from __future__ import annotations

import numpy as np

from track_gen import GateSequence

UP = np.array([0.0, 0.0, 1.0])

# ----------------------------------------------------------------------------- host views

VEC_FIELDS = ("position", "tangent", "forward", "left", "right")


def snapshot(seq: GateSequence) -> dict[str, np.ndarray]:
    """Raw host copies of every field (flat, as stored), for bitwise comparisons."""
    return {k: getattr(seq, k).numpy().copy() for k in seq.__dataclass_fields__}


def env_rows(snap: dict, env: int, max_gates: int) -> dict[str, np.ndarray]:
    """The rows of ``env`` in every field of a :func:`snapshot` (per-env fields: one row)."""
    n_env = snap["count"].shape[0]
    out = {}
    for k, v in snap.items():
        if v.shape[0] == n_env:
            out[k] = v[env : env + 1]
        else:
            out[k] = v[env * max_gates : (env + 1) * max_gates]
    return out


def per_env(seq: GateSequence) -> dict[str, np.ndarray]:
    """float64 views ``[E, max_gates, ...]`` of the per-gate fields, ``[E]`` of the others."""
    out = {k: seq.host(k).astype(np.float64) for k in (*VEC_FIELDS, "orientation", "half_size")}
    for k in ("count", "valid", "fail_mask", "generation"):
        out[k] = getattr(seq, k).numpy().copy()
    return out


# ----------------------------------------------------------------------------- loops


def ellipse(a: float, b: float, n: int) -> np.ndarray:
    """Counter-clockwise ellipse ``[n, 2]`` starting at ``(a, 0)``, uniform in the angle."""
    t = 2.0 * np.pi * np.arange(n) / n
    return np.stack([a * np.cos(t), b * np.sin(t)], -1)


def circle(r: float, n: int) -> np.ndarray:
    return ellipse(r, r, n)


# ----------------------------------------------------------------------------- anchors


def point_at_arc(loop: np.ndarray, s: float) -> np.ndarray:
    """The point at arc length ``s`` along the closed polyline ``loop`` (``[n, 2]``)."""
    nxt = np.roll(loop, -1, axis=0)
    seg = np.linalg.norm(nxt - loop, axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    i = int(np.clip(np.searchsorted(cum, s, side="left") - 1, 0, len(loop) - 1))
    t = np.clip((s - cum[i]) / max(seg[i], 1e-300), 0.0, 1.0)
    return loop[i] + t * (nxt[i] - loop[i])


def closed_length(loop: np.ndarray) -> float:
    return float(np.linalg.norm(np.roll(loop, -1, axis=0) - loop, axis=1).sum())


def anchors_no_jitter(loop: np.ndarray, k_gates: int) -> np.ndarray:
    """Plan-view gate centres ``[K, 2]`` with ``gate_jitter = 0``: gate k at arc
    ``(k + 0.5) * L / K`` (before any separation)."""
    loop = np.asarray(loop, dtype=np.float64)
    total = closed_length(loop)
    return np.stack([point_at_arc(loop, (k + 0.5) * total / k_gates) for k in range(k_gates)])


def min_plan_distance(pos: np.ndarray) -> float:
    """Smallest plan-view (x, y) distance between two of the gate centres ``pos[:, :2]``."""
    xy = np.asarray(pos, dtype=np.float64)[:, :2]
    d = np.linalg.norm(xy[:, None, :] - xy[None, :, :], axis=-1)
    d[np.diag_indices(len(xy))] = np.inf
    return float(d.min())


# ----------------------------------------------------------------------------- frames


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices ``[..., 3, 3]`` of (x, y, z, w) quaternions (normalized first)."""
    q = np.asarray(q, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    m = np.empty(q.shape[:-1] + (3, 3))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - z * w)
    m[..., 0, 2] = 2 * (x * z + y * w)
    m[..., 1, 0] = 2 * (x * y + z * w)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - x * w)
    m[..., 2, 0] = 2 * (x * z - y * w)
    m[..., 2, 1] = 2 * (y * z + x * w)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def central_tangents(pos: np.ndarray) -> np.ndarray:
    """Unit central difference of the neighbouring gates (closed course; the chord for two
    gates, reversed at the second one)."""
    pos = np.asarray(pos, dtype=np.float64)
    n = len(pos)
    if n == 2:
        t = np.stack([pos[1] - pos[0], pos[0] - pos[1]])
    else:
        t = np.roll(pos, -1, axis=0) - np.roll(pos, 1, axis=0)
    return unit(t)


def frames(pos: np.ndarray, width: float, align: str) -> dict[str, np.ndarray]:
    """Documented gate frames for gate centres ``pos`` (``[n, 3]``, n >= 2), assuming no
    near-vertical or vanishing tangent: tangent, forward, the (forward, left, up) axes and
    the bar end points ``position +- width / 2 * left_axis``."""
    pos = np.asarray(pos, dtype=np.float64)
    t = central_tangents(pos)
    flat = unit(t * np.array([1.0, 1.0, 0.0]))
    fwd = flat if align == "yaw_only" else t
    left_axis = unit(np.cross(UP, fwd))
    up = np.cross(fwd, left_axis)
    hs = 0.5 * width
    return {
        "tangent": t,
        "forward": fwd,
        "left_axis": left_axis,
        "up": up,
        "left": pos + hs * left_axis,
        "right": pos - hs * left_axis,
    }


# ----------------------------------------------------------------------------- validity


def _orient(a, b, c) -> float:
    """z of ``(b - a) x (c - a)``."""
    return float((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))


def segments_cross(a, b, c, d, eps: float = 1e-5) -> tuple[bool, bool]:
    """Strict (proper) crossing of plan-view segments ab and cd.

    Returns ``(cross, ambiguous)``: ``ambiguous`` when the answer would change if the
    orientation tests were moved by ``eps`` relative to the segment lengths (touching,
    collinear or nearly so: float32 rounding may decide either way there)."""
    la = np.hypot(b[0] - a[0], b[1] - a[1])
    lc = np.hypot(d[0] - c[0], d[1] - c[1])
    tol = eps * max(la * lc, 1e-300)
    o1, o2 = _orient(a, b, c), _orient(a, b, d)
    o3, o4 = _orient(c, d, a), _orient(c, d, b)

    def split(p, q, m):  # p and q on opposite sides with margin m
        return (p > m and q < -m) or (p < -m and q > m)

    strict = split(o1, o2, tol) and split(o3, o4, tol)
    loose = split(o1, o2, -tol) and split(o3, o4, -tol)
    plain = split(o1, o2, 0.0) and split(o3, o4, 0.0)
    return plain, strict != loose


def bars_cross(left: np.ndarray, right: np.ndarray) -> tuple[bool, bool]:
    """Whether the plan-view bars ``left[i] -- right[i]`` of any two gates properly cross,
    and whether any pair is ambiguous (see :func:`segments_cross`)."""
    n = len(left)
    hit = amb = False
    for i in range(n):
        for j in range(i + 1, n):
            c, a = segments_cross(left[i][:2], right[i][:2], left[j][:2], right[j][:2])
            hit |= c
            amb |= a
    return hit, amb


def grade_violated(pos: np.ndarray, grade: float, rel: float = 1e-4) -> tuple[bool, bool]:
    """Whether consecutive gates (the closing pair included) climb more than ``grade``
    (``|dz| > grade * plan distance``), and whether a pair sits within ``rel`` of the limit."""
    pos = np.asarray(pos, dtype=np.float64)
    nxt = np.roll(pos, -1, axis=0)
    dz = np.abs(nxt[:, 2] - pos[:, 2])
    lim = grade * np.maximum(np.linalg.norm(nxt[:, :2] - pos[:, :2], axis=1), 1e-9)
    return bool(np.any(dz > lim)), bool(np.any(np.abs(dz - lim) <= rel * np.maximum(lim, 1e-9)))
