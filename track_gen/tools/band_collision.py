"""Oriented boxes against the road band of a :class:`~track_gen.results.Track`.

The band of a valid env is the road between its index-aligned borders: the union of the quads
``(inner[i], outer[i], outer[i+1], inner[i+1])`` for ``i < count`` (the closing quad
``count-1 -> 0`` included), in plan view (x, y; z is ignored). A quad contains a point by the
even-odd rule over its four edges; the radial edge two neighbouring quads share is evaluated
the same way for both, so a point on it (a box spawned on a bead) lies in exactly one.
:class:`BandCollider` answers, per box, whether some part of it is off the road, its signed
clearance, the closest border point and the border normal there, with one of two methods:

``"segments"`` (exact)
    One thread per box. :meth:`BandCollider.refresh` packs each env's borders into one
    ``(inner.xy, outer.xy)`` row per bead and stores the bounding box of every chunk of
    :data:`CHUNK_QUADS` consecutive quads. A query starts at the bead nearest to the box in
    the nearest chunk (a tight first bound), then visits the other chunks, skipping every chunk
    and every border segment whose bounding box is farther than the best distance so far, so
    only the few segments around the box are tested exactly. A box is off the road
    (``oob = 1``) iff one of its corners is outside the band or a border segment meets the
    (solid) box:

    * no border segment meets the box and its four corners are inside the band: ``oob = 0``,
      ``distance`` = distance between the solid box and the nearest border segment (> 0);
    * some corner is outside the band: ``distance = -max`` over the outside corners of their
      distance to the nearest border (the deepest penetration);
    * a border segment meets the box but every corner is inside: ``distance = 0``.

    About 0.4 ms per query for E=1024 single boxes on one CPU core (``benchmarks/collision.py``).

``"sdf"`` (approximate, cheaper queries)
    Per env a ``res x res`` grid of signed distances ``phi`` (positive inside the band) over a
    square around the borders' bounding box, padded by ``sdf_padding`` (default 10% of the
    larger extent); texel ``(i, j)`` holds ``phi`` at the texel centre
    ``(x0 + (i + 0.5) * cell, y0 + (j + 0.5) * cell)``. The bake (:meth:`BandCollider.refresh`,
    one thread per env) is a narrow band: every quad, extended across the road by
    :data:`SDF_BAND_CELLS` cells beyond both borders, is rasterized (its convex hull, row by
    row) and its texels take the distance to the quad's two border segments (the minimum over
    every quad that reaches them) and the quad's inside flag (the union over quads). Every
    texel inside the band is inside some quad, so the sign is exact at every texel centre;
    texels no extended quad reaches are outside and hold the clamp ``-SDF_BAND_CELLS * cell``.
    The work is proportional to the road's area in texels, not to ``res^2 * count``
    (about 0.13 s for E=1024, res 128 on one CPU core).

    A query samples ``phi`` bilinearly (grid coordinates clamped to the edge texels; outside
    the borders' bounding box ``phi`` is also capped by minus the distance to that box) at the
    box centre and its four corners: the smallest sample is the ``distance``,
    ``oob = distance <= 0``, the normal is the normalized central difference (step one cell,
    doubled while ``phi`` is flat there) at that sample and ``nearest = sample - phi * normal``;
    ``boundary`` is the border nearest to the texel under ``nearest``.

    Approximation: inside the band and up to ``SDF_BAND_CELLS - 1`` cells outside it, ``phi``
    is the exact signed distance at texel centres; bilinear sampling errs by a fraction of a
    cell near the border (more near sharp corners and across the ridge of ``phi`` on the
    road's medial axis, where normals are noisy); a box edge cutting a border between the
    sampled points goes unnoticed. ``oob`` flags and distances therefore agree with
    ``"segments"`` except within about one cell of zero clearance. A sample farther outside
    reads about ``-SDF_BAND_CELLS * cell`` (clamped), with a rough normal, ``nearest`` not on a
    border and ``boundary`` possibly -1. Use it when a batch serves many queries between
    regenerations and flags or approximate clearances suffice.

Both methods answer from the data :meth:`BandCollider.refresh` derived from the Track (bead
counts and validity included): call ``refresh(mask)`` after every regeneration (same mask)
before the next query; an env keeps its previous answers until it is refreshed. Queries and
refreshes allocate nothing, never synchronize and can be recorded into a graph (CUDA, or a
Warp CPU capture).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

import warp as wp

from ..exec import require_not_capturing
from ..results import Track
from .component import Component, InputSpec

wp.set_module_options({"enable_backward": False})

__all__ = [
    "CHUNK_QUADS",
    "METHODS",
    "SDF_BAND_CELLS",
    "BandCollider",
    "BandCollision",
    "BandContact",
]

#: Quads per chunk of the "segments" method's pruning boxes.
CHUNK_QUADS = 8
#: Width, in cells, of the SDF narrow band beyond each border (and the far-field clamp).
SDF_BAND_CELLS = 4
#: Collision methods accepted by :class:`BandCollider`.
METHODS = ("segments", "sdf")

_CHUNK = wp.constant(CHUNK_QUADS)
_BAND = wp.constant(float(SDF_BAND_CELLS))
_NAN = wp.constant(float("nan"))
_BIG = wp.constant(3.0e38)


# ----------------------------------------------------------------------------- results


@dataclass
class BandContact:
    """Per-box answers of :meth:`BandCollider.query` (box ``b`` of env ``e`` at row
    ``e*B + b``, ``B = max_boxes``). The collider returns the same instance on every query and
    overwrites it; :meth:`clone` takes a snapshot. Distances are in track units.

    Attributes:
        oob: int32 ``[E*B]``: 1 when some part of the box is off the road (a corner outside
            the band, or a border crossing the box), else 0. 1 for every box of an invalid
            env, 0 for an inactive slot.
        distance: float32 ``[E*B]``: signed clearance, track units. Positive: the box is
            inside the band, this far from the nearest border; negative: the deepest
            penetration of a box corner beyond a border; 0: a border crosses the box with
            every corner inside. NaN for an inactive slot or an invalid env. (``"sdf"``:
            approximate, and about ``-SDF_BAND_CELLS`` cells at most deep.)
        nearest: vec2f ``[E*B]``: the border point closest to the box (to its deepest outside
            corner when a corner is out), plan view, track units. NaN when inactive/invalid.
        normal: vec2f ``[E*B]``: unit border normal at ``nearest``, pointing into the band.
            NaN when inactive/invalid.
        boundary: int32 ``[E*B]``: the border ``nearest`` lies on: 0 inner, 1 outer, -1 none
            (inactive slot, invalid env, or an SDF sample deeper than its narrow band).
    """

    oob: wp.array
    distance: wp.array
    nearest: wp.array
    normal: wp.array
    boundary: wp.array

    @classmethod
    def allocate(cls, rows: int, device) -> BandContact:
        """Buffers for ``rows`` boxes: oob 0, NaN geometry, boundary -1."""
        nan = float("nan")
        return cls(
            oob=wp.zeros(rows, dtype=wp.int32, device=device),
            distance=wp.full(rows, nan, dtype=wp.float32, device=device),
            nearest=wp.full(rows, wp.vec2f(nan, nan), dtype=wp.vec2f, device=device),
            normal=wp.full(rows, wp.vec2f(nan, nan), dtype=wp.vec2f, device=device),
            boundary=wp.full(rows, -1, dtype=wp.int32, device=device),
        )

    def clone(self) -> BandContact:
        """A detached deep copy (allocates: call it outside your graph)."""
        return BandContact(
            **{f.name: wp.clone(getattr(self, f.name)) for f in dataclasses.fields(self)}
        )


# ----------------------------------------------------------------------------- shared funcs


@wp.struct
class _Box:
    p: wp.vec2f  # centre
    ax: wp.vec2f  # unit local x (yaw)
    ay: wp.vec2f  # unit local y
    h: wp.vec2f  # half extents (>= 0)
    ext: wp.vec2f  # half extents of the world-axis bounding box
    ok: int  # 0: inactive slot (non-finite input)


@wp.struct
class _Hit:
    d2: float  # squared distance of the pair
    q: wp.vec2f  # border point
    b: wp.vec2f  # box point (or query point)
    border: int  # 0 inner, 1 outer, -1 none
    seg: int  # border segment index i (i -> i+1)


@wp.func
def _xy(v: wp.vec3f) -> wp.vec2f:
    return wp.vec2f(v[0], v[1])


@wp.func
def _inner(s: wp.vec4f) -> wp.vec2f:
    return wp.vec2f(s[0], s[1])


@wp.func
def _outer(s: wp.vec4f) -> wp.vec2f:
    return wp.vec2f(s[2], s[3])


@wp.func
def _finite2(v: wp.vec2f) -> bool:
    return wp.isfinite(v[0]) and wp.isfinite(v[1])


@wp.func
def _make_box(pos: wp.vec3f, rot: wp.quatf, he: wp.vec2f) -> _Box:
    """Plan-view box: centre, yaw axes from the quaternion's rotated local x, half extents."""
    b = _Box()
    # rotated local x: (w^2 + x^2 - y^2 - z^2, 2 (x y + w z)); valid for non-unit quaternions
    c = rot[3] * rot[3] + rot[0] * rot[0] - rot[1] * rot[1] - rot[2] * rot[2]
    s = 2.0 * (rot[0] * rot[1] + rot[3] * rot[2])
    ln = wp.sqrt(c * c + s * s)
    ax = wp.vec2f(1.0, 0.0)
    if ln > 1.0e-30:
        ax = wp.vec2f(c / ln, s / ln)
    h = wp.vec2f(wp.abs(he[0]), wp.abs(he[1]))
    b.p = _xy(pos)
    b.ax = ax
    b.ay = wp.vec2f(-ax[1], ax[0])
    b.h = h
    b.ext = wp.vec2f(
        wp.abs(ax[0]) * h[0] + wp.abs(ax[1]) * h[1], wp.abs(ax[1]) * h[0] + wp.abs(ax[0]) * h[1]
    )
    b.ok = 0
    if _finite2(b.p) and wp.isfinite(pos[2]) and wp.isfinite(c) and wp.isfinite(s) and _finite2(h):
        b.ok = 1
    return b


@wp.func
def _corner(bx: _Box, k: int) -> wp.vec2f:
    sx = float(2 * (k % 2) - 1)
    sy = float(2 * (k // 2) - 1)
    return bx.p + (sx * bx.h[0]) * bx.ax + (sy * bx.h[1]) * bx.ay


@wp.func
def _gap2(lo: wp.vec2f, hi: wp.vec2f, bb: wp.vec4f) -> float:
    """Squared distance between the box [lo, hi] and the box (x0, y0, x1, y1) = bb."""
    gx = wp.max(wp.max(bb[0] - hi[0], lo[0] - bb[2]), 0.0)
    gy = wp.max(wp.max(bb[1] - hi[1], lo[1] - bb[3]), 0.0)
    return gx * gx + gy * gy


@wp.func
def _closest_on_seg(p: wp.vec2f, a: wp.vec2f, b: wp.vec2f) -> wp.vec2f:
    ab = b - a
    den = wp.dot(ab, ab)
    t = float(0.0)
    if den > 0.0:
        t = wp.clamp(wp.dot(p - a, ab) / den, 0.0, 1.0)
    return a + t * ab


@wp.func
def _slope(u: wp.vec2f, v: wp.vec2f) -> float:
    """dx/dy of the edge u -> v (0 for a horizontal edge)."""
    dy = v[1] - u[1]
    if dy != 0.0:
        return (v[0] - u[0]) / dy
    return 0.0


@wp.func
def _edge_flip(p: wp.vec2f, u: wp.vec2f, v: wp.vec2f) -> int:
    """1 when the ray from p towards +x crosses the edge u -> v (even-odd rule)."""
    above_u = u[1] > p[1]
    above_v = v[1] > p[1]
    if above_u != above_v:
        x = u[0] + (p[1] - u[1]) * _slope(u, v)
        if p[0] < x:
            return 1
    return 0


@wp.func
def _in_quad(p: wp.vec2f, a: wp.vec2f, b: wp.vec2f, c: wp.vec2f, d: wp.vec2f) -> int:
    """Even-odd test of the quad (a, b, c, d) = (inner_i, outer_i, outer_j, inner_j).

    Both radial edges are evaluated inner -> outer, so the edge two neighbouring quads share
    gives them bitwise the same answer: a point on it lies in exactly one of them."""
    s = _edge_flip(p, a, b) + _edge_flip(p, b, c) + _edge_flip(p, d, c) + _edge_flip(p, d, a)
    return s % 2


@wp.func
def _next(i: int, n: int) -> int:
    j = i + 1
    if j == n:
        j = 0
    return j


@wp.func
def _inward_normal(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    border: int,
    i: int,
) -> wp.vec2f:
    """Unit normal of border segment i -> i+1, pointing to the quad's other border."""
    si = strip[base + i]
    sj = strip[base + _next(i, n)]
    a = _inner(si)
    b = _inner(sj)
    oa = _outer(si)
    ob = _outer(sj)
    if border == 1:
        a = _outer(si)
        b = _outer(sj)
        oa = _inner(si)
        ob = _inner(sj)
    t = b - a
    nrm = wp.vec2f(-t[1], t[0])
    if wp.dot(nrm, (oa + ob) - (a + b)) < 0.0:
        nrm = -nrm
    return nrm / wp.max(wp.length(nrm), 1.0e-30)


@wp.func
def _unit_or(v: wp.vec2f, fallback: wp.vec2f) -> wp.vec2f:
    ln = wp.length(v)
    if ln > 1.0e-9:
        return v / ln
    return fallback


@wp.func
def _write_none(
    tid: int,
    oob: int,
    oob_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec2f),
    normal_out: wp.array(dtype=wp.vec2f),
    boundary_out: wp.array(dtype=wp.int32),
):
    nan2 = wp.vec2f(_NAN, _NAN)
    oob_out[tid] = oob
    distance_out[tid] = _NAN
    nearest_out[tid] = nan2
    normal_out[tid] = nan2
    boundary_out[tid] = -1


# ----------------------------------------------------------------------------- segments


@wp.func
def _usable_beads(count: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32), e: int) -> int:
    """count[e] for a valid env with a band (>= 3 beads), else 0."""
    n = count[e]
    if valid[e] == 0 or n < 3:
        n = 0
    return n


@wp.kernel
def _strip_kernel(
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    n_max: int,
    nch: int,
    beads_out: wp.array(dtype=wp.int32),
    strip_out: wp.array(dtype=wp.vec4f),
    chunk_box_out: wp.array(dtype=wp.vec4f),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = _usable_beads(count, valid, e)
    base = e * n_max
    cb = e * nch
    nan4 = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
    beads_out[e] = n
    for i in range(n_max):
        v = nan4
        if i < n:
            pi = inner[base + i]
            po = outer[base + i]
            v = wp.vec4f(pi[0], pi[1], po[0], po[1])
        strip_out[base + i] = v
    nc = (n + _CHUNK - 1) // _CHUNK
    for c in range(nch):
        bb = nan4
        if c < nc:
            a0 = c * _CHUNK
            a1 = wp.min(a0 + _CHUNK, n)
            lo = _inner(strip_out[base + a0])
            hi = lo
            for k in range(a0, a1 + 1):
                sk = strip_out[base + k % n]
                lo = wp.min(lo, wp.min(_inner(sk), _outer(sk)))
                hi = wp.max(hi, wp.max(_inner(sk), _outer(sk)))
            bb = wp.vec4f(lo[0], lo[1], hi[0], hi[1])
        chunk_box_out[cb + c] = bb


@wp.func
def _seg_box_pair(la: wp.vec2f, lb: wp.vec2f, h: wp.vec2f) -> wp.vec4f:
    """Closest pair (segment point, box point) between segment la-lb and the solid box
    [-h, h] (box-local frame), as (qx, qy, bx, by); equal points when they meet."""
    d = lb - la
    nh = -h
    # bounding boxes apart: they cannot meet, skip the clipping
    if wp.min(la[0], lb[0]) <= h[0] and wp.max(la[0], lb[0]) >= nh[0]:
        if wp.min(la[1], lb[1]) <= h[1] and wp.max(la[1], lb[1]) >= nh[1]:
            t0 = float(0.0)
            t1 = float(1.0)
            if d[0] != 0.0:
                ta = (nh[0] - la[0]) / d[0]
                tb = (h[0] - la[0]) / d[0]
                t0 = wp.max(t0, wp.min(ta, tb))
                t1 = wp.min(t1, wp.max(ta, tb))
            if d[1] != 0.0:
                ta = (nh[1] - la[1]) / d[1]
                tb = (h[1] - la[1]) / d[1]
                t0 = wp.max(t0, wp.min(ta, tb))
                t1 = wp.min(t1, wp.max(ta, tb))
            if t0 <= t1:
                m = la + (0.5 * (t0 + t1)) * d
                return wp.vec4f(m[0], m[1], m[0], m[1])
    # disjoint convex sets: the closest pair has a segment end point, or the box corner
    # nearest to the segment's line (the only corner that can be closest to the segment)
    q = la
    b = wp.min(wp.max(la, nh), h)
    best = wp.length_sq(q - b)
    bb = wp.min(wp.max(lb, nh), h)
    d2 = wp.length_sq(lb - bb)
    if d2 < best:
        best = d2
        q = lb
        b = bb
    nrm = wp.vec2f(-d[1], d[0])
    if wp.dot(nrm, la) > 0.0:
        nrm = -nrm  # now pointing from the line towards the box centre (the origin)
    c = wp.vec2f(wp.where(nrm[0] > 0.0, nh[0], h[0]), wp.where(nrm[1] > 0.0, nh[1], h[1]))
    qc = _closest_on_seg(c, la, lb)
    if wp.length_sq(qc - c) < best:
        q = qc
        b = c
    return wp.vec4f(q[0], q[1], b[0], b[1])


@wp.func
def _visit_seg_box(
    hit: _Hit,
    bx: _Box,
    blo: wp.vec2f,
    bhi: wp.vec2f,
    va: wp.vec2f,
    vb: wp.vec2f,
    border: int,
    seg: int,
) -> _Hit:
    """Update the closest (segment va-vb, solid box) pair."""
    r = hit
    slo = wp.min(va, vb)
    shi = wp.max(va, vb)
    gx = wp.max(wp.max(slo[0] - bhi[0], blo[0] - shi[0]), 0.0)
    gy = wp.max(wp.max(slo[1] - bhi[1], blo[1] - shi[1]), 0.0)
    if gx * gx + gy * gy >= r.d2:
        return r
    ra = va - bx.p
    rb = vb - bx.p
    la = wp.vec2f(wp.dot(ra, bx.ax), wp.dot(ra, bx.ay))
    lb = wp.vec2f(wp.dot(rb, bx.ax), wp.dot(rb, bx.ay))
    # the same bound in the box frame (tighter for a rotated box)
    gx = wp.max(wp.max(wp.min(la[0], lb[0]) - bx.h[0], -bx.h[0] - wp.max(la[0], lb[0])), 0.0)
    gy = wp.max(wp.max(wp.min(la[1], lb[1]) - bx.h[1], -bx.h[1] - wp.max(la[1], lb[1])), 0.0)
    if gx * gx + gy * gy >= r.d2:
        return r
    pr = _seg_box_pair(la, lb, bx.h)
    dq = wp.vec2f(pr[0] - pr[2], pr[1] - pr[3])
    d2 = wp.dot(dq, dq)
    if d2 < r.d2:
        r.d2 = d2
        r.q = bx.p + pr[0] * bx.ax + pr[1] * bx.ay
        r.b = bx.p + pr[2] * bx.ax + pr[3] * bx.ay
        r.border = border
        r.seg = seg
    return r


@wp.func
def _first_chunk(
    chunk_box: wp.array(dtype=wp.vec4f), cb: int, nc: int, lo: wp.vec2f, hi: wp.vec2f
) -> int:
    """The chunk whose bounding box is nearest to the box [lo, hi] (first of ties)."""
    first = int(0)
    lb_min = float(_BIG)
    for c in range(nc):
        g = _gap2(lo, hi, chunk_box[cb + c])
        if g < lb_min:
            lb_min = g
            first = c
    return first


@wp.func
def _seed_quad(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    c: int,
    p: wp.vec2f,
) -> int:
    """The bead of chunk c whose radial edge midpoint is nearest to p (a search start)."""
    a0 = c * _CHUNK
    a1 = wp.min(a0 + _CHUNK, n)
    seed = a0
    best = float(_BIG)
    for i in range(a0, a1):
        si = strip[base + i]
        d2 = wp.length_sq(0.5 * (_inner(si) + _outer(si)) - p)
        if d2 < best:
            best = d2
            seed = i
    return seed


@wp.func
def _scan_box(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    chunk_box: wp.array(dtype=wp.vec4f),
    cb: int,
    bx: _Box,
    first: int,
    seed: int,
) -> _Hit:
    """Closest pair between the solid box and both borders (d2 = 0: a border meets the box).

    The segments around ``seed`` go first (a tight bound), then chunk ``first``, then every
    other chunk whose bounding box is nearer than the best pair so far."""
    blo = bx.p - bx.ext
    bhi = bx.p + bx.ext
    nc = (n + _CHUNK - 1) // _CHUNK
    hit = _Hit()
    hit.d2 = _BIG
    hit.border = -1
    hit.seg = -1
    for s in range(2):
        i = (seed + n - 1 + s) % n
        si = strip[base + i]
        sj = strip[base + _next(i, n)]
        hit = _visit_seg_box(hit, bx, blo, bhi, _inner(si), _inner(sj), 0, i)
        hit = _visit_seg_box(hit, bx, blo, bhi, _outer(si), _outer(sj), 1, i)
    for k in range(-1, nc):
        c = first
        if k >= 0:
            c = k
        if k >= 0 and k == first:
            continue
        if hit.d2 <= 0.0:
            break
        if _gap2(blo, bhi, chunk_box[cb + c]) >= hit.d2:
            continue
        a0 = c * _CHUNK
        a1 = wp.min(a0 + _CHUNK, n)
        sa = strip[base + a0]
        ia = _inner(sa)
        oa = _outer(sa)
        for i in range(a0, a1):
            j = _next(i, n)
            sb = strip[base + j]
            ib = _inner(sb)
            ob = _outer(sb)
            hit = _visit_seg_box(hit, bx, blo, bhi, ia, ib, 0, i)
            hit = _visit_seg_box(hit, bx, blo, bhi, oa, ob, 1, i)
            ia = ib
            oa = ob
    return hit


@wp.func
def _visit_point(hit: _Hit, p: wp.vec2f, va: wp.vec2f, vb: wp.vec2f, border: int, seg: int) -> _Hit:
    r = hit
    q = _closest_on_seg(p, va, vb)
    d2 = wp.length_sq(p - q)
    if d2 < r.d2:
        r.d2 = d2
        r.q = q
        r.border = border
        r.seg = seg
    return r


@wp.func
def _scan_point(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    chunk_box: wp.array(dtype=wp.vec4f),
    cb: int,
    p: wp.vec2f,
    seed: int,
    stop: float,
) -> _Hit:
    """Closest border point to p: the segments around ``seed`` first, then the chunks
    nearest first, pruned by their bounding boxes. Gives up (returning an upper bound) once
    the squared distance drops to ``stop`` or below."""
    nc = (n + _CHUNK - 1) // _CHUNK
    hit = _Hit()
    hit.d2 = _BIG
    hit.b = p
    hit.border = -1
    hit.seg = -1
    for s in range(3):
        i = (seed + n - 1 + s) % n
        si = strip[base + i]
        sj = strip[base + _next(i, n)]
        hit = _visit_point(hit, p, _inner(si), _inner(sj), 0, i)
        hit = _visit_point(hit, p, _outer(si), _outer(sj), 1, i)
    first = _first_chunk(chunk_box, cb, nc, p, p)
    for k in range(-1, nc):
        c = first
        if k >= 0:
            c = k
        if k >= 0 and k == first:
            continue
        if hit.d2 <= stop:
            break
        if _gap2(p, p, chunk_box[cb + c]) >= hit.d2:
            continue
        a0 = c * _CHUNK
        a1 = wp.min(a0 + _CHUNK, n)
        sa = strip[base + a0]
        ia = _inner(sa)
        oa = _outer(sa)
        for i in range(a0, a1):
            j = _next(i, n)
            sb = strip[base + j]
            ib = _inner(sb)
            ob = _outer(sb)
            hit = _visit_point(hit, p, ia, ib, 0, i)
            hit = _visit_point(hit, p, oa, ob, 1, i)
            ia = ib
            oa = ob
    return hit


@wp.func
def _quad_has(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    i: int,
    p: wp.vec2f,
) -> int:
    si = strip[base + i]
    sj = strip[base + _next(i, n)]
    return _in_quad(p, _inner(si), _outer(si), _outer(sj), _inner(sj))


@wp.func
def _in_band(
    strip: wp.array(dtype=wp.vec4f),
    base: int,
    n: int,
    chunk_box: wp.array(dtype=wp.vec4f),
    cb: int,
    p: wp.vec2f,
    seed: int,
) -> int:
    """1 when p lies in some quad of the band: the quads around ``seed`` first, then every
    quad of the chunks whose bounding box holds p."""
    for s in range(3):
        if _quad_has(strip, base, n, (seed + n - 1 + s) % n, p) == 1:
            return 1
    nc = (n + _CHUNK - 1) // _CHUNK
    for c in range(nc):
        bb = chunk_box[cb + c]
        if p[0] < bb[0] or p[0] > bb[2] or p[1] < bb[1] or p[1] > bb[3]:
            continue
        a0 = c * _CHUNK
        a1 = wp.min(a0 + _CHUNK, n)
        sa = strip[base + a0]
        ia = _inner(sa)
        oa = _outer(sa)
        for i in range(a0, a1):
            j = _next(i, n)
            sb = strip[base + j]
            ib = _inner(sb)
            ob = _outer(sb)
            if _in_quad(p, ia, oa, ob, ib) == 1:
                return 1
            ia = ib
            oa = ob
    return 0


@wp.kernel
def _segments_query_kernel(
    beads: wp.array(dtype=wp.int32),
    strip: wp.array(dtype=wp.vec4f),
    chunk_box: wp.array(dtype=wp.vec4f),
    n_max: int,
    nch: int,
    nbox: int,
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    oob_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec2f),
    normal_out: wp.array(dtype=wp.vec2f),
    boundary_out: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    e = tid // nbox
    n = beads[e]
    if n < 3:
        _write_none(tid, 1, oob_out, distance_out, nearest_out, normal_out, boundary_out)
        return
    bx = _make_box(position[tid], orientation[tid], half_extents[tid])
    if bx.ok == 0:
        _write_none(tid, 0, oob_out, distance_out, nearest_out, normal_out, boundary_out)
        return
    base = e * n_max
    cb = e * nch
    nc = (n + _CHUNK - 1) // _CHUNK
    first = _first_chunk(chunk_box, cb, nc, bx.p - bx.ext, bx.p + bx.ext)
    seed = _seed_quad(strip, base, n, first, bx.p)
    hit = _scan_box(strip, base, n, chunk_box, cb, bx, first, seed)
    inside = int(0)  # bit k: corner k is inside the band
    for k in range(4):
        inside = inside | (_in_band(strip, base, n, chunk_box, cb, _corner(bx, k), seed) << k)
    if inside == 15 and hit.d2 > 0.0:
        fallback = _inward_normal(strip, base, n, hit.border, hit.seg)
        oob_out[tid] = 0
        distance_out[tid] = wp.sqrt(hit.d2)
        nearest_out[tid] = hit.q
        normal_out[tid] = _unit_or(hit.b - hit.q, fallback)
        boundary_out[tid] = hit.border
        return
    deep = _Hit()
    deep.d2 = -1.0
    deep.border = -1
    deep.seg = -1
    for k in range(4):
        if (inside >> k) & 1 == 0:
            # a corner nearer to the border than the deepest so far cannot be the deepest
            c = _corner(bx, k)
            ch = _scan_point(strip, base, n, chunk_box, cb, c, seed, deep.d2)
            if ch.d2 > deep.d2:
                deep = ch
    oob_out[tid] = 1
    if deep.d2 >= 0.0:
        fallback = _inward_normal(strip, base, n, deep.border, deep.seg)
        distance_out[tid] = -wp.sqrt(deep.d2)
        nearest_out[tid] = deep.q
        normal_out[tid] = _unit_or(deep.q - deep.b, fallback)
        boundary_out[tid] = deep.border
    else:
        distance_out[tid] = 0.0
        nearest_out[tid] = hit.q
        normal_out[tid] = _inward_normal(strip, base, n, hit.border, hit.seg)
        boundary_out[tid] = hit.border


# ----------------------------------------------------------------------------- sdf


@wp.kernel
def _sdf_frame_kernel(
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    n_max: int,
    res: int,
    padding: float,
    beads_out: wp.array(dtype=wp.int32),
    frame_out: wp.array(dtype=wp.vec4f),
    aabb_out: wp.array(dtype=wp.vec4f),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = _usable_beads(count, valid, e)
    beads_out[e] = n
    if n == 0:
        nan4 = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
        frame_out[e] = nan4
        aabb_out[e] = nan4
        return
    base = e * n_max
    lo = _xy(outer[base])
    hi = lo
    for i in range(n):
        po = _xy(outer[base + i])
        pi = _xy(inner[base + i])
        lo = wp.min(lo, wp.min(po, pi))
        hi = wp.max(hi, wp.max(po, pi))
    ext = wp.max(hi[0] - lo[0], hi[1] - lo[1])
    pad = padding
    if pad < 0.0:
        pad = 0.1 * ext
    side = ext + 2.0 * pad
    cell = wp.max(side / float(res), 1.0e-12)
    mid = 0.5 * (lo + hi)
    half = 0.5 * cell * float(res)
    frame_out[e] = wp.vec4f(mid[0] - half, mid[1] - half, cell, _BAND * cell)
    aabb_out[e] = wp.vec4f(lo[0], lo[1], hi[0], hi[1])


@wp.kernel
def _sdf_fill_kernel(
    mask: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    res: int,
    sdf_out: wp.array(dtype=wp.float32),
    border_out: wp.array(dtype=wp.int8),
):
    e, r = wp.tid()
    if mask[e] == 0:
        return
    v = -frame[e][3]
    k0 = (e * res + r) * res
    for i in range(res):
        sdf_out[k0 + i] = v
        border_out[k0 + i] = wp.int8(-1)


@wp.func
def _chord(pa: wp.vec2f, pb: wp.vec2f, k: float, y: float, span: wp.vec2f) -> wp.vec2f:
    """Grow span (xmin, xmax) by where the row y meets the segment pa-pb (slope k)."""
    lo = span[0]
    hi = span[1]
    if (pa[1] - y) * (pb[1] - y) <= 0.0:
        if pb[1] != pa[1]:
            x = pa[0] + (y - pa[1]) * k
            lo = wp.min(lo, x)
            hi = wp.max(hi, x)
        else:
            lo = wp.min(lo, wp.min(pa[0], pb[0]))
            hi = wp.max(hi, wp.max(pa[0], pb[0]))
    return wp.vec2f(lo, hi)


@wp.func
def _row_cross(y: float, u: wp.vec2f, v: wp.vec2f, k: float) -> float:
    """x where the row y crosses the edge u -> v (slope k) by :func:`_edge_flip`'s rule,
    or -BIG (no crossing)."""
    above_u = u[1] > y
    above_v = v[1] > y
    if above_u != above_v:
        return u[0] + (y - u[1]) * k
    return -_BIG


@wp.kernel
def _sdf_raster_kernel(
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    beads: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    n_max: int,
    res: int,
    sdf_out: wp.array(dtype=wp.float32),
    border_out: wp.array(dtype=wp.int8),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = beads[e]
    if n < 3:
        return
    fr = frame[e]
    x0 = fr[0]
    y0 = fr[1]
    cell = fr[2]
    m = fr[3]
    inv = 1.0 / cell
    base = e * n_max
    gb = e * res * res
    eps = 1.0e-3
    for i in range(n):
        j = _next(i, n)
        a = _xy(inner[base + i])
        b = _xy(outer[base + i])
        c = _xy(outer[base + j])
        d = _xy(inner[base + j])
        ui = (b - a) / wp.max(wp.length(b - a), 1.0e-30)
        uj = (c - d) / wp.max(wp.length(c - d), 1.0e-30)
        # the quad extended across the road by m beyond both borders; its convex hull
        # (all six vertex pairs) holds the quad itself
        p0 = a - m * ui
        p1 = b + m * ui
        p2 = c + m * uj
        p3 = d - m * uj
        ylo = wp.min(wp.min(p0[1], p1[1]), wp.min(p2[1], p3[1]))
        yhi = wp.max(wp.max(p0[1], p1[1]), wp.max(p2[1], p3[1]))
        r0 = wp.max(int(wp.ceil((ylo - y0) * inv - 0.5 - eps)), 0)
        r1 = wp.min(int(wp.floor((yhi - y0) * inv - 0.5 + eps)), res - 1)
        ad = d - a
        bc = c - b
        inv_ad = float(0.0)
        if wp.dot(ad, ad) > 0.0:
            inv_ad = 1.0 / wp.dot(ad, ad)
        inv_bc = float(0.0)
        if wp.dot(bc, bc) > 0.0:
            inv_bc = 1.0 / wp.dot(bc, bc)
        # slopes: the hull's six vertex pairs, the quad's four edges (as _in_quad sees them)
        k01 = _slope(p0, p1)
        k12 = _slope(p1, p2)
        k23 = _slope(p2, p3)
        k30 = _slope(p3, p0)
        k02 = _slope(p0, p2)
        k13 = _slope(p1, p3)
        kab = _slope(a, b)
        kbc = _slope(b, c)
        kdc = _slope(d, c)
        kda = _slope(d, a)
        for r in range(r0, r1 + 1):
            yc = y0 + (float(r) + 0.5) * cell
            span = wp.vec2f(_BIG, -_BIG)
            span = _chord(p0, p1, k01, yc, span)
            span = _chord(p1, p2, k12, yc, span)
            span = _chord(p2, p3, k23, yc, span)
            span = _chord(p3, p0, k30, yc, span)
            span = _chord(p0, p2, k02, yc, span)
            span = _chord(p1, p3, k13, yc, span)
            if span[0] > span[1]:
                continue
            c0 = wp.max(int(wp.ceil((span[0] - x0) * inv - 0.5 - eps)), 0)
            c1 = wp.min(int(wp.floor((span[1] - x0) * inv - 0.5 + eps)), res - 1)
            # where the row meets the quad's edges, as _in_quad sees them (bitwise)
            xa = _row_cross(yc, a, b, kab)
            xb = _row_cross(yc, b, c, kbc)
            xc = _row_cross(yc, d, c, kdc)
            xd = _row_cross(yc, d, a, kda)
            row = gb + r * res
            for col in range(c0, c1 + 1):
                px = x0 + (float(col) + 0.5) * cell
                ra = wp.vec2f(px - a[0], yc - a[1])
                ri = ra - wp.clamp(wp.dot(ra, ad) * inv_ad, 0.0, 1.0) * ad
                rb = wp.vec2f(px - b[0], yc - b[1])
                ro = rb - wp.clamp(wp.dot(rb, bc) * inv_bc, 0.0, 1.0) * bc
                di = wp.dot(ri, ri)
                do = wp.dot(ro, ro)
                dd = wp.sqrt(wp.min(di, do))
                bd = int(0)
                if do < di:
                    bd = 1
                flips = int(0)
                if px < xa:
                    flips += 1
                if px < xb:
                    flips += 1
                if px < xc:
                    flips += 1
                if px < xd:
                    flips += 1
                ins = flips % 2
                k = row + col
                cur = sdf_out[k]
                cid = int(border_out[k])
                aa = float(_BIG)
                if cid >= 0:
                    aa = wp.abs(cur)
                    if cur > 0.0:
                        ins = 1
                if dd < aa:
                    aa = dd
                    cid = bd
                if ins == 0:
                    aa = -aa
                sdf_out[k] = aa
                border_out[k] = wp.int8(cid)


@wp.func
def _sdf_at(
    sdf: wp.array(dtype=wp.float32),
    gb: int,
    res: int,
    fr: wp.vec4f,
    bb: wp.vec4f,
    s: wp.vec2f,
) -> float:
    """Bilinear phi at s (clamped to the edge texels), capped outside the borders' box."""
    top = float(res - 1)
    u = wp.clamp((s[0] - fr[0]) / fr[2] - 0.5, 0.0, top)
    v = wp.clamp((s[1] - fr[1]) / fr[2] - 0.5, 0.0, top)
    i0 = wp.min(int(wp.floor(u)), res - 2)
    j0 = wp.min(int(wp.floor(v)), res - 2)
    fu = u - float(i0)
    fv = v - float(j0)
    k = gb + j0 * res + i0
    v0 = sdf[k] + fu * (sdf[k + 1] - sdf[k])
    v1 = sdf[k + res] + fu * (sdf[k + res + 1] - sdf[k + res])
    phi = v0 + fv * (v1 - v0)
    gx = wp.max(wp.max(bb[0] - s[0], s[0] - bb[2]), 0.0)
    gy = wp.max(wp.max(bb[1] - s[1], s[1] - bb[3]), 0.0)
    if gx > 0.0 or gy > 0.0:
        phi = wp.min(phi, -wp.sqrt(gx * gx + gy * gy))
    return phi


@wp.func
def _texel_border(
    border: wp.array(dtype=wp.int8), gb: int, res: int, fr: wp.vec4f, s: wp.vec2f
) -> int:
    i = wp.clamp(int(wp.floor((s[0] - fr[0]) / fr[2])), 0, res - 1)
    j = wp.clamp(int(wp.floor((s[1] - fr[1]) / fr[2])), 0, res - 1)
    return int(border[gb + j * res + i])


@wp.kernel
def _sdf_query_kernel(
    beads: wp.array(dtype=wp.int32),
    sdf: wp.array(dtype=wp.float32),
    border: wp.array(dtype=wp.int8),
    frame: wp.array(dtype=wp.vec4f),
    aabb: wp.array(dtype=wp.vec4f),
    res: int,
    nbox: int,
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    oob_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec2f),
    normal_out: wp.array(dtype=wp.vec2f),
    boundary_out: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    e = tid // nbox
    if beads[e] < 3:
        _write_none(tid, 1, oob_out, distance_out, nearest_out, normal_out, boundary_out)
        return
    bx = _make_box(position[tid], orientation[tid], half_extents[tid])
    if bx.ok == 0:
        _write_none(tid, 0, oob_out, distance_out, nearest_out, normal_out, boundary_out)
        return
    fr = frame[e]
    bb = aabb[e]
    gb = e * res * res
    s = bx.p
    best = _sdf_at(sdf, gb, res, fr, bb, s)
    for k in range(4):
        c = _corner(bx, k)
        ph = _sdf_at(sdf, gb, res, fr, bb, c)
        if ph < best:
            best = ph
            s = c
    # central difference, one cell; where phi is flat (the clamped far field) the step
    # doubles until the stencil reaches the narrow band
    step = fr[2]
    g = wp.vec2f(0.0, 0.0)
    for _it in range(32):
        hx = wp.vec2f(step, 0.0)
        hy = wp.vec2f(0.0, step)
        g = wp.vec2f(
            _sdf_at(sdf, gb, res, fr, bb, s + hx) - _sdf_at(sdf, gb, res, fr, bb, s - hx),
            _sdf_at(sdf, gb, res, fr, bb, s + hy) - _sdf_at(sdf, gb, res, fr, bb, s - hy),
        )
        if wp.length_sq(g) > 0.0 or step > float(res) * fr[2]:
            break
        step = 2.0 * step
    mid = wp.vec2f(0.5 * (bb[0] + bb[2]), 0.5 * (bb[1] + bb[3]))
    nrm = _unit_or(g, _unit_or(mid - s, wp.vec2f(1.0, 0.0)))
    q = s - best * nrm
    bid = _texel_border(border, gb, res, fr, q)
    if bid < 0:
        bid = _texel_border(border, gb, res, fr, s)
    oob = int(0)
    if best <= 0.0:
        oob = 1
    oob_out[tid] = oob
    distance_out[tid] = best
    nearest_out[tid] = q
    normal_out[tid] = nrm
    boundary_out[tid] = bid


# ----------------------------------------------------------------------------- host class


def _check_array(name: str, arr, dtype, rows: int, device, what: str) -> None:
    dname = getattr(dtype, "__name__", str(dtype))
    if not isinstance(arr, wp.array):
        raise ValueError(f"{name} must be a wp.array of {dname} [{rows}], got {type(arr).__name__}")
    if arr.dtype != dtype:
        got = getattr(arr.dtype, "__name__", str(arr.dtype))
        raise ValueError(f"{name} has dtype {got}, expected {dname}: pass a {dname} array")
    if arr.ndim != 1 or arr.shape[0] != rows:
        raise ValueError(f"{name} has shape {tuple(arr.shape)}, expected ({rows},): {what}")
    if arr.device != device:
        raise ValueError(f"{name} is on {arr.device}, expected {device}: pass an array on {device}")
    if not arr.is_contiguous:
        raise ValueError(f"{name} must be contiguous: pass a contiguous [{rows}] {dname} array")


class BandCollider:
    """Oriented boxes against the road band of a :class:`~track_gen.results.Track`
    (see the module docstring for the band, the two methods and their accuracy).

    Args:
        track: the Track to test against. The collider keeps a reference and reads it in
            :meth:`refresh`, so a generator's stable ``result`` works across regenerations
            (refresh the regenerated envs).
        method: ``"segments"`` (exact, default) or ``"sdf"`` (baked signed-distance grid).
        max_boxes: boxes per env ``B`` (int >= 1); box ``b`` of env ``e`` is row ``e*B + b``.
        sdf_resolution: texels per side of each env's SDF grid (int >= 8; ``"sdf"`` only).
        sdf_padding: margin around the borders' bounding box in track units (>= 0), or None
            for 10% of its larger extent (``"sdf"`` only).

    Construction allocates every buffer and refreshes all envs. Attributes (read-only):

    * ``contact``: the :class:`BandContact` every query overwrites.
    * ``beads``: int32 ``[E]``: beads of each env's band at its last refresh (``count`` for a
      valid env with at least 3 beads, else 0: the env answers as invalid).
    * ``strip``: vec4f ``[E*N_max]`` (``"segments"``): ``(inner.x, inner.y, outer.x,
      outer.y)`` per bead, track units (NaN past ``beads``).
    * ``chunk_box``: vec4f ``[E*ceil(N_max/CHUNK_QUADS)]`` (``"segments"``): bounding box
      ``(x0, y0, x1, y1)`` of each chunk of quads, track units (NaN past the env's chunks).
    * ``sdf``: float32 ``[E*res*res]`` (``"sdf"``): phi per texel, row-major per env
      (``e*res*res + j*res + i``, ``j`` along y), track units, positive inside the band.
    * ``sdf_border``: int8 ``[E*res*res]`` (``"sdf"``): border nearest to the texel
      (0 inner, 1 outer, -1 beyond the narrow band). With ``sdf``: ``5 * E * res^2`` bytes.
    * ``sdf_frame``: vec4f ``[E]`` (``"sdf"``): ``(x0, y0, cell, far)``: grid origin (corner of
      texel (0, 0)), cell size and the far-field clamp ``far = SDF_BAND_CELLS * cell``,
      track units; NaN for an invalid env.
    * ``sdf_aabb``: vec4f ``[E]`` (``"sdf"``): the borders' bounding box ``(x0, y0, x1, y1)``.
    """

    def __init__(
        self,
        track: Track,
        *,
        method: str = "segments",
        max_boxes: int = 1,
        sdf_resolution: int = 128,
        sdf_padding: float | None = None,
    ):
        if not isinstance(track, Track):
            raise ValueError(f"track must be a Track, got {type(track).__name__}")
        if not isinstance(method, str) or method not in METHODS:
            raise ValueError(f"method = {method!r}: must be one of {', '.join(map(repr, METHODS))}")
        if isinstance(max_boxes, bool) or not isinstance(max_boxes, numbers.Integral):
            raise ValueError(f"max_boxes = {max_boxes!r}: must be an int >= 1")
        if max_boxes < 1:
            raise ValueError(f"max_boxes = {max_boxes!r}: must be an int >= 1")
        if isinstance(sdf_resolution, bool) or not isinstance(sdf_resolution, numbers.Integral):
            raise ValueError(f"sdf_resolution = {sdf_resolution!r}: must be an int >= 8")
        if sdf_resolution < 8:
            raise ValueError(f"sdf_resolution = {sdf_resolution!r}: must be an int >= 8")
        if sdf_padding is not None:
            if (
                isinstance(sdf_padding, bool)
                or not isinstance(sdf_padding, numbers.Real)
                or not math.isfinite(sdf_padding)
                or sdf_padding < 0
            ):
                raise ValueError(
                    f"sdf_padding = {sdf_padding!r}: must be None (10% of the extent) or a "
                    "finite number >= 0"
                )
        self.track = track
        self.device = track.count.device
        require_not_capturing(self.device, "BandCollider construction")
        self.method = method
        self.num_envs = track.num_envs
        self.max_boxes = int(max_boxes)
        self.sdf_resolution = int(sdf_resolution)
        self.sdf_padding = None if sdf_padding is None else float(sdf_padding)
        E, dev = self.num_envs, self.device
        self._rows = E * self.max_boxes
        self._all = wp.ones(E, dtype=wp.int32, device=dev)
        self.contact = BandContact.allocate(self._rows, dev)
        self._nch = (track.N_max + CHUNK_QUADS - 1) // CHUNK_QUADS
        self.beads = wp.zeros(E, dtype=wp.int32, device=dev)
        self.strip = self.chunk_box = None
        self.sdf = self.sdf_border = self.sdf_frame = self.sdf_aabb = None
        if method == "segments":
            self.strip = wp.zeros(E * track.N_max, dtype=wp.vec4f, device=dev)
            self.chunk_box = wp.zeros(E * self._nch, dtype=wp.vec4f, device=dev)
        else:
            texels = E * self.sdf_resolution * self.sdf_resolution
            self.sdf = wp.zeros(texels, dtype=wp.float32, device=dev)
            self.sdf_border = wp.zeros(texels, dtype=wp.int8, device=dev)
            self.sdf_frame = wp.zeros(E, dtype=wp.vec4f, device=dev)
            self.sdf_aabb = wp.zeros(E, dtype=wp.vec4f, device=dev)
        self.refresh()

    # ------------------------------------------------------------------ refresh

    def refresh(self, mask: wp.array | None = None) -> None:
        """Recompute the data derived from the Track for the envs with ``mask[e] != 0``
        (``None``: all envs): bead counts and validity, then the packed borders and chunk
        boxes (``"segments"``) or the SDF bake (``"sdf"``: frame, fill, narrow band).

        ``mask`` is a contiguous ``[E]`` int32 array on the track's device, read by pointer
        (a recorded refresh reads its current contents). Unmasked envs' derived data stay
        bitwise unchanged. Allocation-free; call it after every regeneration."""
        if mask is None:
            mask = self._all
        else:
            _check_array("mask", mask, wp.int32, self.num_envs, self.device, "one entry per env")
        t, E, dev = self.track, self.num_envs, self.device
        n_max = t.N_max
        if self.method == "segments":
            wp.launch(
                _strip_kernel,
                E,
                inputs=[mask, t.inner, t.outer, t.count, t.valid, n_max, self._nch],
                outputs=[self.beads, self.strip, self.chunk_box],
                device=dev,
            )
            return
        res = self.sdf_resolution
        pad = -1.0 if self.sdf_padding is None else self.sdf_padding
        wp.launch(
            _sdf_frame_kernel,
            E,
            inputs=[mask, t.inner, t.outer, t.count, t.valid, n_max, res, pad],
            outputs=[self.beads, self.sdf_frame, self.sdf_aabb],
            device=dev,
        )
        wp.launch(
            _sdf_fill_kernel,
            (E, res),
            inputs=[mask, self.sdf_frame, res],
            outputs=[self.sdf, self.sdf_border],
            device=dev,
        )
        wp.launch(
            _sdf_raster_kernel,
            E,
            inputs=[mask, t.inner, t.outer, self.beads, self.sdf_frame, n_max, res],
            outputs=[self.sdf, self.sdf_border],
            device=dev,
        )

    # ------------------------------------------------------------------ query

    def query(
        self, position: wp.array, orientation: wp.array, half_extents: wp.array
    ) -> BandContact:
        """Test ``B = max_boxes`` boxes per env against the band; returns :attr:`contact`.

        Args:
            position: vec3f ``[E*B]``: box centres, track units (z ignored). A non-finite
                position (or orientation, or half extents) marks an inactive slot: oob 0,
                NaN geometry, boundary -1.
            orientation: quatf ``[E*B]`` (x, y, z, w): only the yaw about +z is used (the
                direction of the rotated local x axis in plan view).
            half_extents: vec2f ``[E*B]``: half length along the box's local x and half
                width along its local y, track units (absolute values are used).

        Every box of an invalid env (``valid == 0`` or ``count < 3`` at the env's last
        refresh) gets oob 1, NaN geometry and boundary -1, inactive slots included. Inputs are
        checked on the host before anything launches (ValueError naming the argument); one
        launch, no allocation, no host synchronization.
        """
        rows, dev = self._rows, self.device
        slot = "one row per box slot (env e, box b at row e*max_boxes + b)"
        _check_array("position", position, wp.vec3f, rows, dev, slot)
        _check_array("orientation", orientation, wp.quatf, rows, dev, slot)
        _check_array("half_extents", half_extents, wp.vec2f, rows, dev, slot)
        t, c = self.track, self.contact
        outs = [c.oob, c.distance, c.nearest, c.normal, c.boundary]
        boxes = [position, orientation, half_extents]
        if self.method == "segments":
            wp.launch(
                _segments_query_kernel,
                rows,
                inputs=[self.beads, self.strip, self.chunk_box, t.N_max, self._nch]
                + [self.max_boxes]
                + boxes,
                outputs=outs,
                device=dev,
            )
        else:
            wp.launch(
                _sdf_query_kernel,
                rows,
                inputs=[self.beads, self.sdf, self.sdf_border, self.sdf_frame]
                + [self.sdf_aabb, self.sdf_resolution, self.max_boxes]
                + boxes,
                outputs=outs,
                device=dev,
            )
        return c


class BandCollision(Component):
    """Course component ``"collision"``: oriented boxes against the road band.

    Args:
        method: ``"segments"`` (exact, reads the borders) or ``"sdf"`` (a baked grid per env,
            refreshed for the regenerated envs).
        max_boxes: boxes per env B (inputs are ``[E*B]``).
        sdf_resolution: grid side for ``"sdf"``.

    Inputs: ``box_position`` vec3f ``[E*B]`` (defaults to ``position`` when B == 1),
    ``orientation`` quatf ``[E*B]`` (yaw used), ``half_extents`` vec2f ``[E*B]``.
    ``step`` returns the :class:`BandContact` (``res.contacts``); an invalid env answers
    oob = 1 with NaN distance, nearest and normal. ``utility`` is the :class:`BandCollider`.
    """

    name = "collision"

    def __init__(self, method="segments", *, max_boxes=1, sdf_resolution=128, name=None):
        super().__init__(name=name)
        if method not in ("segments", "sdf"):
            raise ValueError(f"method = {method!r} must be 'segments' or 'sdf'")
        if isinstance(max_boxes, bool) or not isinstance(max_boxes, int) or max_boxes < 1:
            raise ValueError(f"max_boxes = {max_boxes!r} must be an int >= 1")
        self.method = method
        self.max_boxes = max_boxes
        self.sdf_resolution = sdf_resolution
        self.INPUTS = (
            InputSpec(
                "box_position",
                wp.vec3f,
                slots=max_boxes,
                default="position" if max_boxes == 1 else None,
                doc="box centres, track units",
            ),
            InputSpec("orientation", wp.quatf, slots=max_boxes, doc="box orientations (yaw)"),
            InputSpec("half_extents", wp.vec2f, slots=max_boxes, doc="box half length, width"),
        )

    def attach(self, ctx) -> None:
        self.utility = BandCollider(
            ctx.generator.result,
            method=self.method,
            max_boxes=self.max_boxes,
            sdf_resolution=self.sdf_resolution,
        )
        self.result = self.utility.contact

    def on_generate(self, ctx, mask) -> None:
        self.utility.refresh(mask)

    def step(self, ctx):
        b = self.bound
        return self.utility.query(b["box_position"], b["orientation"], b["half_extents"])
