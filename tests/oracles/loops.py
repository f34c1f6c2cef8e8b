"""Test helpers for the track pipeline: a plugin sampler, hand-made loops and NumPy oracles.

* :class:`SamplerUserLoop` is a sampler stage (registered as ``"test.userloop"``) that copies
  user-written loops from its generator input ``"test.userloop.xy"`` into ``ws.line``, so the
  built-in stages (resample -> relax -> inflate -> validate) run on geometry we control.
* The loop factories return float64 ``[n, 2]`` closed polylines (last point != first).
* The oracles are plain float64 NumPy implementations of the documented behaviour of the
  stages; they are written from the docstrings, not from the kernels.
* The generator-result helpers (host copies of a track, an env's rows, bitwise comparison,
  centerlines, compactness, a brute-force crossing count, stage probes, a host-only sampler)
  serve the sampler tests (test_samplers.py and test_<sampler>.py) and test_generators.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from track_gen import FailBit, NotCapturableError, TrackGenConfig, TrackGenerator
from track_gen.pipeline import Registry, Stage

from ..support.strategies import sampler_config

wp.set_module_options({"enable_backward": False})

STAGE_NAME = "test.userloop"
INPUT_NAME = f"{STAGE_NAME}.xy"

# ----------------------------------------------------------------------------- plugin stage


@wp.kernel
def _copy_loop_kernel(
    src: wp.array(dtype=wp.vec2f),
    active: wp.array(dtype=wp.int32),
    num_points: int,
    line_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    base = e * num_points
    for i in range(num_points):
        line_out[base + i] = src[base + i]


class SamplerUserLoop(Stage):
    """Sampler that hands the user's loops (``inputs["<name>.xy"]``) to the pipeline."""

    role = "sampler"

    def allocate(self, ws) -> None:
        lay = ws.layout
        self.xy = wp.zeros(lay.num_envs * lay.num_points, dtype=wp.vec2f, device=lay.device)
        ws.add_input(
            f"{self.name}.xy",
            self.xy,
            "vec2f [E*num_points]: closed centerline of each env (env e owns rows "
            "e*num_points .. e*num_points + num_points - 1)",
        )

    def enqueue(self, ws, params) -> None:
        lay = ws.layout
        wp.launch(
            _copy_loop_kernel,
            lay.num_envs,
            inputs=[self.xy, ws.active, lay.num_points],
            outputs=[ws.line],
            device=lay.device,
        )


def make_registry() -> Registry:
    reg = Registry()
    reg.register(STAGE_NAME, SamplerUserLoop)
    return reg


def write_loops(gen: TrackGenerator, loops_xy) -> None:
    """Write ``[E, num_points, 2]`` loops into the generator's input array, in place."""
    loops = np.asarray(loops_xy, dtype=np.float64)
    E, P = gen.num_envs, gen.config.num_points
    if loops.shape != (E, P, 2):
        raise ValueError(f"loops must have shape {(E, P, 2)}, got {loops.shape}")
    arr = gen.inputs[INPUT_NAME]
    ptr = arr.ptr
    arr.assign(loops.reshape(E * P, 2).astype(np.float32))
    assert arr.ptr == ptr  # written in place: the program keeps reading the same buffer


def make_generator(loops_xy, device, **config_fields) -> TrackGenerator:
    """A :class:`TrackGenerator` whose sampler is :class:`SamplerUserLoop`, fed ``loops_xy``
    (``[E, num_points, 2]``)."""
    loops = np.asarray(loops_xy, dtype=np.float64)
    if loops.ndim != 3 or loops.shape[2] != 2:
        raise ValueError(f"loops must have shape [E, num_points, 2], got {loops.shape}")
    E, P = loops.shape[:2]
    cfg = TrackGenConfig(
        generator=STAGE_NAME, num_envs=E, num_points=P, device=device, **config_fields
    )
    gen = TrackGenerator(cfg, registry=make_registry())
    write_loops(gen, loops)
    return gen


def snapshot(gen: TrackGenerator) -> dict:
    """Host copy of the generator's result, per-bead arrays reshaped to ``[E, N_max, ...]``.

    Also checks the invariant ``valid == (fail_mask == 0)`` for every built env."""
    r = gen.result
    out = {}
    for name in ("outer", "center", "inner", "tangent", "normal", "arclen"):
        out[name] = r.host(name).astype(np.float64)
    for name in ("length", "winding"):
        out[name] = getattr(r, name).numpy().astype(np.float64)
    for name in ("count", "valid", "fail_mask", "generation"):
        out[name] = getattr(r, name).numpy().copy()
    built = out["generation"] >= 0
    np.testing.assert_array_equal(
        out["valid"][built], (out["fail_mask"][built] == 0).astype(out["valid"].dtype)
    )
    return out


def stack(*loops) -> np.ndarray:
    """Stack equally sized loops into ``[E, num_points, 2]``."""
    return np.stack([np.asarray(lp, dtype=np.float64) for lp in loops])


def float32_spacing(cfg: TrackGenConfig) -> float:
    """The spacing as the kernels see it (a Python float passed as a float32 argument)."""
    return float(np.float32(cfg.resolved_spacing))


# ----------------------------------------------------------------------------- loop factories


def _orient(xy: np.ndarray, ccw: bool) -> np.ndarray:
    """Make the loop counter-clockwise (ccw) or clockwise, keeping point 0 first."""
    is_ccw = shoelace_area(xy) > 0.0
    if is_ccw != ccw:
        xy = np.concatenate([xy[:1], xy[1:][::-1]])
    return xy


def circle(radius: float, n: int, ccw: bool = True, center=(0.0, 0.0), phase: float = 0.0):
    t = phase + 2.0 * np.pi * np.arange(n) / n
    xy = np.stack([radius * np.cos(t), radius * np.sin(t)], axis=1) + np.asarray(center)
    return _orient(xy, ccw)


def ellipse(a: float, b: float, n: int, ccw: bool = True, center=(0.0, 0.0)):
    """Ellipse with semi-axes a (x) and b (y), sampled uniformly in arc length."""
    return sample_pieces([("ellipse", tuple(center), a, b)], n, ccw)


def rounded_rectangle(width: float, height: float, r: float, n: int, ccw: bool = True):
    """Rectangle ``width x height`` centred on the origin with corner radius r."""
    hx, hy = 0.5 * width - r, 0.5 * height - r
    if hx < 0 or hy < 0:
        raise ValueError("corner radius larger than half a side")
    pieces = [
        ("line", (hx + r, -hy), (hx + r, hy)),
        ("arc", (hx, hy), r, 0.0, 0.5 * np.pi),
        ("line", (hx, hy + r), (-hx, hy + r)),
        ("arc", (-hx, hy), r, 0.5 * np.pi, np.pi),
        ("line", (-hx - r, hy), (-hx - r, -hy)),
        ("arc", (-hx, -hy), r, np.pi, 1.5 * np.pi),
        ("line", (-hx, -hy - r), (hx, -hy - r)),
        ("arc", (hx, -hy), r, 1.5 * np.pi, 2.0 * np.pi),
    ]
    return sample_pieces(pieces, n, ccw)


def stadium(straight: float, r: float, n: int, ccw: bool = True):
    """Two semicircles of radius r joined by straights of length ``straight``."""
    return rounded_rectangle(straight + 2.0 * r, 2.0 * r, r, n, ccw)


def figure_eight(a: float, b: float, n: int):
    """Lemniscate of Gerono ``(a cos t, b sin t cos t)``: crosses itself at the origin,
    total turning 0."""
    t = 2.0 * np.pi * np.arange(n) / n
    return np.stack([a * np.cos(t), b * np.sin(t) * np.cos(t)], axis=1)


def regular_polygon(k: int, side: float, per_side: int, ccw: bool = True):
    """Regular k-gon (sharp corners) with ``per_side`` evenly spaced points on each side."""
    ang = 2.0 * np.pi * np.arange(k) / k
    v = side / (2.0 * np.sin(np.pi / k)) * np.stack([np.cos(ang), np.sin(ang)], axis=1)
    f = np.arange(per_side)[:, None] / per_side
    xy = np.concatenate([v[i] + (v[(i + 1) % k] - v[i]) * f for i in range(k)])
    return _orient(xy, ccw)


def pinched(lobe_r: float, neck_r: float, gap: float, n: int, ccw: bool = True):
    """A smooth peanut: two lobes (circles of radius ``lobe_r``) joined by two concave neck
    arcs (radius ``neck_r``) whose closest points, at x = 0, are ``gap`` apart.

    Every piece is a circular arc, tangent to its neighbours, so the curvature radius is
    never below ``min(lobe_r, neck_r)``; the two neck arcs are half a loop apart in index.
    """
    h = 0.5 * gap + neck_r
    c = math.sqrt((lobe_r + neck_r) ** 2 - h * h)
    phi = math.atan2(h, -c)  # right lobe centre -> top neck centre, in (pi/2, pi)
    psi = math.atan2(-h, c)  # top neck centre -> right lobe centre, in (-pi/2, 0)
    pieces = [
        ("arc", (c, 0.0), lobe_r, -phi, phi),  # right lobe (convex)
        ("arc", (0.0, h), neck_r, psi, -np.pi - psi),  # top neck (concave)
        ("arc", (-c, 0.0), lobe_r, np.pi - phi, np.pi + phi),  # left lobe
        ("arc", (0.0, -h), neck_r, phi, -psi),  # bottom neck
    ]
    return sample_pieces(pieces, n, ccw)


def too_long_loop(n_max: int, spacing: float, n: int, extra: float = 0.5) -> np.ndarray:
    """A circle needing ``n_max + extra`` spacings of perimeter: more beads than ``n_max``
    for ``extra > 0``, exactly ``n_max`` beads for ``-1 < extra < 0``."""
    return scale_to_perimeter(circle(1.0, n), (n_max + extra) * spacing)


def tiny_loop(spacing: float, n: int, beads: float = 2.5) -> np.ndarray:
    """A circle of perimeter ``beads * spacing`` (< 3 spacings: fewer than 4 beads)."""
    return circle(beads * spacing / (2.0 * np.pi), n)


def with_nan(xy: np.ndarray, index: int = 3) -> np.ndarray:
    out = np.array(xy, dtype=np.float64)
    out[index] = np.nan
    return out


def scale_to_perimeter(xy: np.ndarray, perimeter: float) -> np.ndarray:
    """Scale a loop about its centroid so that its float32 polygon perimeter is ``perimeter``."""
    xy = np.asarray(xy, dtype=np.float64)
    c = xy.mean(axis=0)
    out = c + (xy - c) * (perimeter / closed_length(xy))
    # one correction step for the float32 rounding of the coordinates
    out32 = out.astype(np.float32).astype(np.float64)
    return c + (out - c) * (perimeter / closed_length(out32))


def _piece_length(p) -> float:
    if p[0] == "line":
        return float(np.hypot(p[2][0] - p[1][0], p[2][1] - p[1][1]))
    if p[0] == "arc":
        return abs(p[4] - p[3]) * p[2]
    raise ValueError(p[0])


def _piece_point(p, s: float) -> np.ndarray:
    if p[0] == "line":
        a, b = np.asarray(p[1]), np.asarray(p[2])
        return a + (b - a) * (s / _piece_length(p))
    _, c, r, a0, a1 = p
    a = a0 + math.copysign(s / r, a1 - a0)
    return np.array([c[0] + r * math.cos(a), c[1] + r * math.sin(a)])


def sample_pieces(pieces, n: int, ccw: bool = True) -> np.ndarray:
    """Sample a closed curve made of lines, arcs or one ellipse at n arc-uniform points."""
    if pieces[0][0] == "ellipse":
        _, c, a, b = pieces[0]
        t = np.linspace(0.0, 2.0 * np.pi, 20001)
        dense = np.stack([c[0] + a * np.cos(t), c[1] + b * np.sin(t)], axis=1)
        return _orient(resample_closed_uniform(dense[:-1], n), ccw)
    lengths = [_piece_length(p) for p in pieces]
    total = sum(lengths)
    out = np.empty((n, 2))
    starts = np.concatenate([[0.0], np.cumsum(lengths)])
    for k in range(n):
        s = total * k / n
        i = min(int(np.searchsorted(starts, s, side="right")) - 1, len(pieces) - 1)
        out[k] = _piece_point(pieces[i], s - starts[i])
    return _orient(out, ccw)


# ----------------------------------------------------------------------------- oracles


def closed_length(xy: np.ndarray) -> float:
    xy = np.asarray(xy, dtype=np.float64)
    return float(np.linalg.norm(np.roll(xy, -1, axis=0) - xy, axis=1).sum())


def shoelace_area(xy: np.ndarray) -> float:
    """Signed area (> 0 counter-clockwise)."""
    x, y = xy[:, 0], xy[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def _interp_closed(xy: np.ndarray, arcs: np.ndarray) -> np.ndarray:
    """Points at arc positions ``arcs`` (in [0, perimeter]) along the closed polyline."""
    closed = np.concatenate([xy, xy[:1]])
    seg = np.linalg.norm(np.diff(closed, axis=0), axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    return np.stack([np.interp(arcs, cum, closed[:, 0]), np.interp(arcs, cum, closed[:, 1])], 1)


def resample_closed_uniform(xy: np.ndarray, n: int) -> np.ndarray:
    """n points arc-uniform along the closed polyline: point k at arc ``k * L / n``."""
    xy = np.asarray(xy, dtype=np.float64)
    return _interp_closed(xy, closed_length(xy) * np.arange(n) / n)


def resample_oracle(line: np.ndarray, spacing: float, n_max: int) -> dict:
    """Constant-spacing resample as documented in ``stages/resample.py``.

    ``count = floor(T/spacing) + 1`` reduced while ``(count-1)*spacing >= T``; bead k at
    arc ``k*T/count`` (no short closing gap); NaN past count; more than ``n_max`` beads ->
    keep ``n_max`` and TRUNCATED; non-finite -> NONFINITE (count 0); fewer than 4 beads ->
    DEGENERATE.

    Returns beads ``[n_max, 2]``, count, fail bits, the perimeter and ``margin``: the
    distance of ``T/spacing`` from the nearest integer (small margins make ``count``
    sensitive to float32 rounding, so tests pick loops with a comfortable margin).
    """
    line = np.asarray(line, dtype=np.float64)
    beads = np.full((n_max, 2), np.nan)
    bits = 0
    if not np.all(np.isfinite(line)):
        return dict(
            beads=beads,
            count=0,
            fail=int(FailBit.NONFINITE | FailBit.DEGENERATE),
            perimeter=float("nan"),
            margin=float("nan"),
        )
    T = closed_length(line)
    n = 0
    if T > 0.0:
        n = int(math.floor(T / spacing)) + 1
        while n > 1 and (n - 1) * spacing >= T:
            n -= 1
        if n > n_max:
            bits |= int(FailBit.TRUNCATED)
            n = n_max
    if n < 4:
        bits |= int(FailBit.DEGENERATE)
    beads[:n] = _interp_closed(line, T * np.arange(n) / max(n, 1))
    ratio = T / spacing
    return dict(beads=beads, count=n, fail=bits, perimeter=T, margin=abs(ratio - round(ratio)))


def centerline_oracle(line: np.ndarray, spacing: float, n_max: int) -> dict:
    """resample -> (no relax) -> inflate's closed arc-uniform re-resample to ``count``."""
    r = resample_oracle(line, spacing, n_max)
    n = r["count"]
    center = np.full((n_max, 2), np.nan)
    if n >= 4:
        center[:n] = resample_closed_uniform(r["beads"][:n], n)
    r["center"] = center
    return r


def frames_oracle(center: np.ndarray, hw: float) -> dict:
    """Frames and borders of a closed centerline ``[n, 2]`` as documented in inflate.py."""
    c = np.asarray(center, dtype=np.float64)
    d = np.roll(c, -1, axis=0) - np.roll(c, 1, axis=0)
    t = d / np.linalg.norm(d, axis=1, keepdims=True)
    nrm = np.stack([-t[:, 1], t[:, 0]], axis=1)
    seg = np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)
    arclen = np.concatenate([[0.0], np.cumsum(seg)[:-1]])
    plus, minus = c + hw * nrm, c - hw * nrm
    if abs(shoelace_area(plus)) >= abs(shoelace_area(minus)):
        outer, inner = plus, minus
    else:
        outer, inner = minus, plus
    return dict(
        tangent=t,
        normal=nrm,
        arclen=arclen,
        length=float(seg.sum()),
        winding=float(np.sign(shoelace_area(c))),
        outer=outer,
        inner=inner,
    )


def turning_total(xy: np.ndarray) -> float:
    """Sum of the wrapped heading changes of the closed polyline (radians)."""
    d = np.roll(xy, -1, axis=0) - xy
    a = np.arctan2(d[:, 1], d[:, 0])
    da = a - np.roll(a, 1)
    da = (da + np.pi) % (2.0 * np.pi) - np.pi
    return float(da.sum())


def turning_number(xy: np.ndarray) -> int:
    return int(round(turning_total(xy) / (2.0 * np.pi)))


def menger_radii(xy: np.ndarray) -> np.ndarray:
    """Radius of the circle through beads i-1, i, i+1 (inf when collinear)."""
    a, b, c = np.roll(xy, 1, axis=0), xy, np.roll(xy, -1, axis=0)
    ab, bc, ca = (np.linalg.norm(u, axis=1) for u in (b - a, c - b, a - c))
    cr = np.abs((b - a)[:, 0] * (c - a)[:, 1] - (b - a)[:, 1] * (c - a)[:, 0])
    with np.errstate(divide="ignore"):
        return np.where(cr > 0.0, ab * bc * ca / (2.0 * cr), np.inf)


def band_rule(hw: float, length: float, n: int, fixed_band: int = 0) -> int:
    """``max(round(2*hw/mean_seg), 1)`` (or the fixed band), capped at ``n // 4``, >= 1."""
    b = fixed_band
    if b <= 0:
        b = max(int(math.floor(2.0 * hw / (length / n) + 0.5)), 1)
    return max(min(b, n // 4), 1)


def min_nonneighbour_distance(xy: np.ndarray, band: int) -> float:
    """Smallest distance between beads more than ``band`` apart in (circular) index."""
    n = len(xy)
    i = np.arange(n)
    gap = np.abs(i[:, None] - i[None, :])
    gap = np.minimum(gap, n - gap)
    dist = np.linalg.norm(xy[:, None, :] - xy[None, :, :], axis=2)
    dist = np.where(gap > band, dist, np.inf)
    return float(dist.min())


def thickness_oracle(center: np.ndarray, hw: float, thickness_tol: float, fixed_band: int = 0):
    """The documented thickness gate: the smallest Menger radius and half the smallest
    non-neighbour distance must be >= ``(1 - thickness_tol) * hw``."""
    c = np.asarray(center, dtype=np.float64)
    n = len(c)
    floor_r = (1.0 - thickness_tol) * hw
    band = band_rule(hw, closed_length(c), n, fixed_band)
    r_min = float(menger_radii(c).min())
    d_min = min_nonneighbour_distance(c, band)
    return dict(
        floor=floor_r,
        band=band,
        min_radius=r_min,
        min_sep=d_min,
        thin_curvature=r_min < floor_r,
        thin_separation=d_min < 2.0 * floor_r,
        thin=r_min < floor_r or d_min < 2.0 * floor_r,
    )


def expected_bits(center: np.ndarray, hw: float, thickness_tol: float, turning_tol: float) -> int:
    """TURNING | THICKNESS bits the validate stage should raise for a finite centerline."""
    bits = 0
    if abs(abs(turning_total(center)) - 2.0 * np.pi) > turning_tol:
        bits |= int(FailBit.TURNING)
    if thickness_oracle(center, hw, thickness_tol)["thin"]:
        bits |= int(FailBit.THICKNESS)
    return bits


def real_rows(snap: dict, e: int, name: str = "center") -> np.ndarray:
    """The ``count`` real rows of env e, xy only for vec3 fields."""
    a = snap[name][e, : snap["count"][e]]
    return a[:, :2] if a.ndim == 2 else a


# ----------------------------------------------------------------------------- generator results
# Shared by the sampler tests (test_samplers.py holds the checks every sampler must pass;
# test_<sampler>.py only what is specific to one sampler) and by test_generators.py.


def sampler_generator(
    name: str, device, seeds=0, num_envs: int = 8, registry: Registry | None = None, **config
) -> TrackGenerator:
    """A :class:`TrackGenerator` of sampler ``name`` built from a flat config
    (:func:`sampler_config`)."""
    cfg = sampler_config(name, num_envs=num_envs, device=device, **config)
    return TrackGenerator(cfg, seeds=seeds, registry=registry)


def probed_generator(name: str, stage_cls: type, device, **kw) -> tuple[TrackGenerator, type]:
    """A generator of sampler ``name`` whose stage is a subclass of ``stage_cls`` that keeps
    its last instance in ``.last``, so that a test can read the stage's scratch arrays after
    a generation. Returns the generator and that subclass."""

    class Probe(stage_cls):
        last = None

        def allocate(self, ws) -> None:
            super().allocate(ws)
            type(self).last = self

    reg = Registry()
    reg.register(name, Probe, replace=True)
    return sampler_generator(name, device, registry=reg, **kw), Probe


class HostSampler(Stage):
    """A sampler whose ``enqueue`` runs host code: register it with ``capturable=False``."""

    role = "sampler"

    def enqueue(self, ws, params) -> None:
        ws.line.fill_(wp.vec2f(0.0, 0.0))


def assert_refuses_capture(gen: TrackGenerator, stage_name: str, device) -> None:
    """``gen`` has a stage that is not capturable: it runs eagerly, refuses a graph capture."""
    assert not gen.capturable
    gen.generate()  # eager works
    with wp.ScopedCapture(device=device):
        with pytest.raises(NotCapturableError, match=stage_name):
            gen.generate()


def track_arrays(track) -> dict[str, np.ndarray]:
    """Host copies of every field of a :class:`~track_gen.Track`, flat as stored."""
    return {k: getattr(track, k).numpy().copy() for k in track.__dataclass_fields__}


def env_rows(arrays: dict, env: int, n_max: int) -> dict[str, np.ndarray]:
    """Env ``env``'s rows of :func:`track_arrays`: ``n_max`` rows of a per-bead field, one
    row of a per-env field."""
    num_envs = arrays["count"].shape[0]
    return {
        k: v[env : env + 1] if v.shape[0] == num_envs else v[env * n_max : (env + 1) * n_max]
        for k, v in arrays.items()
    }


def assert_bitwise_equal(a: dict, b: dict, skip=(), where="") -> None:
    """Every field of ``a`` (but ``skip``) has the same bytes in ``b``."""
    for k in a:
        if k not in skip:
            assert a[k].tobytes() == b[k].tobytes(), f"{where} field {k} differs"


def centerlines(track) -> list[np.ndarray]:
    """Each env's real centerline beads (``count`` rows) as float64 ``[count, 2]``."""
    c = track.center.numpy().reshape(track.num_envs, track.N_max, 3)
    n = track.count.numpy()
    return [c[e, : n[e], :2].astype(np.float64) for e in range(track.num_envs)]


def compactness(track) -> np.ndarray:
    """``4 pi A / P^2`` of each env's centerline (1 for a circle), P the track's length."""
    length = track.length.numpy().astype(np.float64)
    return np.array(
        [
            4.0 * np.pi * abs(shoelace_area(p)) / length[e] ** 2
            for e, p in enumerate(centerlines(track))
        ]
    )


def proper_crossings(p: np.ndarray, rel_tol: float = 1e-6) -> int:
    """Proper crossings between non-adjacent segments of the closed polyline ``p``, brute
    force. An orientation within ``rel_tol * (longest segment)^2`` of zero counts as
    touching, not crossing; ``rel_tol=0`` counts every strict straddle."""
    n = len(p)
    a, b = p, np.roll(p, -1, axis=0)
    d = b - a
    tol = rel_tol * np.max(np.linalg.norm(d, axis=1)) ** 2

    def orient(o, u, q):  # cross(u, q - o), broadcast [n, 1] x [1, n]
        return u[..., 0] * (q[..., 1] - o[..., 1]) - u[..., 1] * (q[..., 0] - o[..., 0])

    ai, di = a[:, None], d[:, None]
    aj, bj, dj = a[None], b[None], d[None]
    o1, o2 = orient(ai, di, aj), orient(ai, di, bj)
    o3, o4 = orient(aj, dj, ai), orient(aj, dj, b[:, None])
    s1 = ((o1 > tol) & (o2 < -tol)) | ((o1 < -tol) & (o2 > tol))
    s2 = ((o3 > tol) & (o4 < -tol)) | ((o3 < -tol) & (o4 > tol))
    idx = np.arange(n)
    gap = np.abs(idx[:, None] - idx[None])
    far = (gap >= 2) & (gap <= n - 2)
    return int(np.sum(s1 & s2 & far) // 2)


def assert_sampler_loops(name: str, device, extent: float = 1.44, tol: float = 0.1, **options):
    """Relax off, so that the beads follow the sampler's loop: under ``options`` (16 envs,
    seeds 5, N_max 1024) every env's loop must be finite, longer than 8 beads, free of
    crossings, counter-clockwise, and its longest bounding-box side ``extent`` (``1.44 *
    scale``) up to about one spacing."""
    gen = sampler_generator(
        name, device, seeds=5, num_envs=16, relax_enable=False, N_max=1024, **options
    )
    for e, p in enumerate(centerlines(gen.generate())):
        assert np.isfinite(p).all() and len(p) > 8, e
        assert proper_crossings(p) == 0, e
        assert shoelace_area(p) > 0.0, e
        ext = p.max(axis=0) - p.min(axis=0)
        assert abs(ext.max() - extent) < tol, e
