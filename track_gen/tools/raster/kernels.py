"""Kernels of :mod:`track_gen.tools.raster` (private: use :class:`EgoRasterUtility`).

The grid kernel runs one thread per env, the cell kernel one per (env, row), the
cone kernel one per env (it ORs its bit into the cells the cell kernel wrote). Every loop
bound is clamped to the capacities, and every float turned into an index is range-checked
(or clamped) first, so no input can index out of bounds.
"""

from __future__ import annotations

import enum

import warp as wp

from ...core.extents import clamp3, in_range3
from ...geometry import bucket_clear, bucket_count, bucket_fill, bucket_scan, heading_of
from ...geometry import finite3 as _finite3
from ..shared import band_beads as _band_beads
from ..shared import border_box as _border_box
from ..shared import crosses_right_of as _crosses_right_of
from ..shared import next_bead as _next
from ..shared import quad_row_crosses as _quad_row_crosses
from ..shared import slope as _slope
from ..shared import xy as _xy

wp.set_module_options({"enable_backward": False})


class RasterCell(enum.IntFlag):
    """The bits of a raster cell (``EgoRasterResult.cells``, uint8).

    ROAD: the cell centre lies on the road band (some quad of the band contains it by the
        even-odd rule of the band collider).
    BORDER: an inner or outer border segment meets the cell's square (closed).
    CONE: the base disc of a cone (a ``Props`` cone: diameter ``scale.x``) meets the square.
    UNKNOWN: no answer (an invalid env, a non-finite agent pose): set alone, on every cell.
    """

    ROAD = 1
    BORDER = 2
    CONE = 4
    UNKNOWN = 128


_ROAD = wp.constant(int(RasterCell.ROAD))
_BORDER = wp.constant(int(RasterCell.BORDER))
_CONE = wp.constant(wp.uint8(int(RasterCell.CONE)))
_UNKNOWN = wp.constant(wp.uint8(int(RasterCell.UNKNOWN)))
_NAN = wp.constant(float("nan"))
#: Relative slack of the bucket padding and the quad skip: many float32 ulps (1.2e-7).
_ROUNDING = wp.constant(1.0e-6)


@wp.func
def _bucket(v: float, lo: float, hi: float, g: int) -> int:
    """The bucket of ``v`` (in ``[lo, hi]``) among ``g`` equal buckets of ``[lo, hi]``;
    monotone in ``v``, so a box's buckets are those of its ends."""
    w = (hi - lo) / float(g)
    if not (w > 0.0):
        return 0
    t = wp.min((v - lo) / w, float(g))
    return wp.clamp(int(wp.floor(t)), 0, g - 1)


@wp.func
def _buckets(lo: float, hi: float, x0: float, x1: float, g: int) -> wp.vec2i:
    """The buckets ``[first, last]`` of ``g`` along ``[x0, x1]`` that ``[lo, hi]`` covers."""
    return wp.vec2i(_bucket(lo, x0, x1, g), _bucket(hi, x0, x1, g))


@wp.kernel
def _grid_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    center: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    g: int,
    cap: int,
    cell_pad: float,
    # outputs
    beads_out: wp.array(dtype=wp.int32),
    frame_out: wp.array(dtype=wp.vec4f),
    overflow_out: wp.array(dtype=wp.int32),
    offsets_inout: wp.array(dtype=wp.int32),
    entries_out: wp.array(dtype=wp.int32),
    boxes_inout: wp.array(dtype=wp.vec4f),
    slopes_out: wp.array(dtype=wp.vec4f),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = _band_beads(count, valid, inner, outer, center, 0, e, n_max)
    beads_out[e] = n
    gg = g * g
    ob = e * (gg + 1)
    bucket_clear(offsets_inout, ob, gg)
    overflow_out[e] = 0
    if n == 0:
        frame_out[e] = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
        return
    base = e * n_max
    bb = _border_box(inner, outer, base, n)
    # the padding, plus the float32 rounding of a cell centre at this course's coordinates
    # (a cell far smaller than the coordinates' ulp still finds every quad it may meet)
    mag = wp.max(wp.max(wp.abs(bb[0]), wp.abs(bb[1])), wp.max(wp.abs(bb[2]), wp.abs(bb[3])))
    pad = cell_pad + _ROUNDING * mag
    x0 = bb[0] - pad
    y0 = bb[1] - pad
    x1 = bb[2] + pad
    y1 = bb[3] + pad
    frame_out[e] = wp.vec4f(x0, y0, x1, y1)
    # count the buckets each quad's padded box covers
    for i in range(n):
        j = _next(i, n)
        a = _xy(inner[base + i])
        b2 = _xy(outer[base + i])
        c = _xy(outer[base + j])
        d = _xy(inner[base + j])
        lo = wp.min(wp.min(a, b2), wp.min(c, d))
        hi = wp.max(wp.max(a, b2), wp.max(c, d))
        boxes_inout[base + i] = wp.vec4f(lo[0], lo[1], hi[0], hi[1])
        slopes_out[base + i] = wp.vec4f(_slope(a, b2), _slope(b2, c), _slope(d, c), _slope(d, a))
        ix = _buckets(lo[0] - pad, hi[0] + pad, x0, x1, g)
        iy = _buckets(lo[1] - pad, hi[1] + pad, y0, y1, g)
        bucket_count(offsets_inout, ob, g, ix, iy)
    total = bucket_scan(offsets_inout, ob, gg)  # geometry/buckets.py: the ends, then the total
    if total > cap:
        overflow_out[e] = 1  # the cell kernel tests every quad of this env
        return
    # fill backwards: each bucket's quads end up in ascending order, offsets become starts
    eb = e * cap
    for k in range(n):
        i = n - 1 - k
        box = boxes_inout[base + i]
        ix = _buckets(box[0] - pad, box[2] + pad, x0, x1, g)
        iy = _buckets(box[1] - pad, box[3] + pad, y0, y1, g)
        bucket_fill(offsets_inout, ob, g, ix, iy, entries_out, eb, i)


@wp.func
def _finite4(q: wp.quatf) -> bool:
    return q[0] - q[0] == 0.0 and q[1] - q[1] == 0.0 and q[2] - q[2] == 0.0 and q[3] - q[3] == 0.0


@wp.kernel
def _pose_kernel(
    # inputs
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    beads: wp.array(dtype=wp.int32),
    # outputs
    heading_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    q = orientation[e]
    zero = q[0] == 0.0 and q[1] == 0.0 and q[2] == 0.0 and q[3] == 0.0
    if beads[e] == 0 or not _finite3(position[e]) or not _finite4(q) or zero:
        heading_out[e] = wp.vec2f(_NAN, _NAN)
        return
    heading_out[e] = heading_of(q)  # geometry/frames.py (a vertical body x: heading +x)


@wp.func
def _segment_meets_square(a: wp.vec2f, b: wp.vec2f, hc: float) -> bool:
    """Whether the segment ``a -> b`` meets the closed square ``[-hc, hc]^2`` (separating
    axes: the square's two and the segment's normal)."""
    if wp.max(a[0], b[0]) < -hc or wp.min(a[0], b[0]) > hc:
        return False
    if wp.max(a[1], b[1]) < -hc or wp.min(a[1], b[1]) > hc:
        return False
    nx = a[1] - b[1]
    ny = b[0] - a[0]
    return wp.abs(nx * a[0] + ny * a[1]) <= hc * (wp.abs(nx) + wp.abs(ny))


@wp.func
def _local(p: wp.vec2f, w: wp.vec2f, h: wp.vec2f) -> wp.vec2f:
    """``p`` in the frame of a cell centred at ``w`` (forward ``h``, left ``perp(h)``)."""
    d = p - w
    return wp.vec2f(d[0] * h[0] + d[1] * h[1], d[1] * h[0] - d[0] * h[1])


@wp.func
def _quad_flags(
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    boxes: wp.array(dtype=wp.vec4f),
    slopes: wp.array(dtype=wp.vec4f),
    base: int,
    i: int,
    n: int,
    w: wp.vec2f,
    h: wp.vec2f,
    hc: float,
    flags: int,
) -> int:
    """``flags`` with ROAD set when quad ``i`` contains ``w`` and BORDER when one of its two
    border segments meets the cell square (half side ``hc``, axes from ``h``)."""
    box = boxes[base + i]
    # above half the square's diagonal (and the rounding of w): a farther box meets neither
    reach = 1.5 * hc + _ROUNDING * (wp.abs(w[0]) + wp.abs(w[1]))
    if w[0] < box[0] - reach or w[0] > box[2] + reach:
        return flags
    if w[1] < box[1] - reach or w[1] > box[3] + reach:
        return flags
    j = _next(i, n)
    a = _xy(inner[base + i])
    b = _xy(outer[base + i])
    c = _xy(outer[base + j])
    d = _xy(inner[base + j])
    out = flags
    if (out & _ROAD) == 0:
        if w[0] >= box[0] and w[0] <= box[2] and w[1] >= box[1] and w[1] <= box[3]:
            k = slopes[base + i]  # the quad's edge slopes, as _slope gives them
            xs = _quad_row_crosses(w[1], a, b, c, d, k[0], k[1], k[2], k[3])
            if _crosses_right_of(w[0], xs) % 2 == 1:
                out = out | _ROAD
    if (out & _BORDER) == 0:
        inside = _segment_meets_square(_local(a, w, h), _local(d, w, h), hc)
        if inside or _segment_meets_square(_local(b, w, h), _local(c, w, h), hc):
            out = out | _BORDER
    return out


@wp.kernel
def _cells_kernel(
    # inputs
    position: wp.array(dtype=wp.vec3f),
    heading: wp.array(dtype=wp.vec2f),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    boxes: wp.array(dtype=wp.vec4f),
    slopes: wp.array(dtype=wp.vec4f),
    beads: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    overflow: wp.array(dtype=wp.int32),
    offsets: wp.array(dtype=wp.int32),
    entries: wp.array(dtype=wp.int32),
    hf_height: wp.array(dtype=wp.float32),
    hf_frame: wp.array(dtype=wp.vec4f),
    # static
    n_max: int,
    g: int,
    cap: int,
    res: int,
    cell: float,
    use_height: int,
    hf_res: int,
    # outputs
    cells_out: wp.array(dtype=wp.uint8),
    height_out: wp.array(dtype=wp.float32),
):
    e, r = wp.tid()
    k0 = (e * res + r) * res
    h = heading[e]
    if not (h[0] - h[0] == 0.0):
        for col in range(res):
            cells_out[k0 + col] = _UNKNOWN
            if use_height != 0:
                height_out[k0 + col] = _NAN
        return
    p = clamp3(position[e])  # core/extents.py: a finite position beyond COORD_LIMIT
    half = 0.5 * cell * float(res)
    f = half - (float(r) + 0.5) * cell
    hc = 0.5 * cell
    fr = frame[e]
    n = wp.clamp(beads[e], 0, n_max)
    base = e * n_max
    over = overflow[e]
    gb = e * (g * g + 1)
    hf = wp.vec4f(_NAN, _NAN, _NAN, _NAN)
    if use_height != 0:
        hf = hf_frame[e]
    for col in range(res):
        lft = half - (float(col) + 0.5) * cell
        w = wp.vec2f(p[0] + f * h[0] - lft * h[1], p[1] + f * h[1] + lft * h[0])
        flags = int(0)
        if w[0] >= fr[0] and w[0] <= fr[2] and w[1] >= fr[1] and w[1] <= fr[3]:
            if over != 0:
                for i in range(n):
                    flags = _quad_flags(inner, outer, boxes, slopes, base, i, n, w, h, hc, flags)
                    if flags == (_ROAD | _BORDER):
                        break
            else:
                bx = _bucket(w[0], fr[0], fr[2], g)
                by = _bucket(w[1], fr[1], fr[3], g)
                ob = gb + by * g + bx
                t0 = wp.clamp(offsets[ob], 0, cap)
                t1 = wp.clamp(offsets[ob + 1], t0, cap)
                for t in range(t0, t1):
                    i = wp.clamp(entries[e * cap + t], 0, wp.max(n - 1, 0))
                    flags = _quad_flags(inner, outer, boxes, slopes, base, i, n, w, h, hc, flags)
                    if flags == (_ROAD | _BORDER):
                        break
        cells_out[k0 + col] = wp.uint8(flags)
        if use_height != 0:
            z = float(_NAN)
            if hf[2] > 0.0 and wp.isfinite(hf[2]):
                z = hf[3]  # off the height field's grid: its fill value
                tx = (w[0] - hf[0]) / hf[2]
                ty = (w[1] - hf[1]) / hf[2]
                if tx >= 0.0 and ty >= 0.0 and tx < float(hf_res) and ty < float(hf_res):
                    ti = wp.min(int(tx), hf_res - 1)
                    tj = wp.min(int(ty), hf_res - 1)
                    z = hf_height[(e * hf_res + tj) * hf_res + ti]
            height_out[k0 + col] = z - p[2]


@wp.func
def _cell_range(t: float, rad: float, half: float, cell: float, res: int) -> wp.vec2i:
    """The rows (or columns) ``[lo, hi]`` whose band may meet ``[t - rad, t + rad]`` (a band
    one cell wider on each side, clamped to the grid before any int conversion)."""
    a = wp.clamp((half - t - rad) / cell, -2.0, float(res) + 2.0)
    b = wp.clamp((half - t + rad) / cell, -2.0, float(res) + 2.0)
    lo = wp.max(int(wp.floor(a)) - 1, 0)
    hi = wp.min(int(wp.floor(b)) + 1, res - 1)
    return wp.vec2i(lo, hi)


@wp.kernel
def _cones_kernel(
    # inputs
    position: wp.array(dtype=wp.vec3f),
    heading: wp.array(dtype=wp.vec2f),
    prop_position: wp.array(dtype=wp.vec3f),
    prop_scale: wp.array(dtype=wp.vec3f),
    prop_count: wp.array(dtype=wp.int32),
    # static
    max_props: int,
    res: int,
    cell: float,
    # outputs
    cells_inout: wp.array(dtype=wp.uint8),
):
    e = wp.tid()
    h = heading[e]
    if not (h[0] - h[0] == 0.0):
        return
    p = clamp3(position[e])
    half = 0.5 * cell * float(res)
    hc = 0.5 * cell
    m = wp.clamp(prop_count[e], 0, max_props)
    for j in range(m):
        cp = prop_position[e * max_props + j]
        rad = 0.5 * wp.abs(prop_scale[e * max_props + j][0])
        if not (in_range3(cp) and rad - rad == 0.0):
            continue
        loc = _local(_xy(cp), wp.vec2f(p[0], p[1]), h)  # (forward, left) of the cone
        reach = half + rad + cell
        if wp.abs(loc[0]) > reach or wp.abs(loc[1]) > reach:
            continue
        rows = _cell_range(loc[0], rad, half, cell, res)
        cols = _cell_range(loc[1], rad, half, cell, res)
        for r in range(rows[0], rows[1] + 1):
            fr = half - (float(r) + 0.5) * cell
            dy = wp.max(wp.abs(loc[0] - fr) - hc, 0.0)
            for c in range(cols[0], cols[1] + 1):
                lc = half - (float(c) + 0.5) * cell
                dx = wp.max(wp.abs(loc[1] - lc) - hc, 0.0)
                if dx * dx + dy * dy <= rad * rad:
                    k = (e * res + r) * res + c
                    cells_inout[k] = cells_inout[k] | _CONE
