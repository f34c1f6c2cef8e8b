"""Per-bead road widths: the width path of real circuits through resample, inflate, validate.

A sampler that has widths (``real_track``) writes ``ws.line_width`` (vec2f
``[E*num_points]``: left and right width of each loop point, track units, left = the side
of the plan-view left normal). Then, and only then, the stages launch these kernels after
their own (a pipeline without widths runs exactly the kernels it always ran, so generated
tracks keep their bytes):

* ``resample``: :func:`launch_bead_widths` interpolates the widths at every bead's arc
  position on the loop (the same arc table and fraction the bead itself was placed with)
  into ``ws.bead_width`` (vec2f ``[E*N_max]``, NaN past ``count``);
* ``inflate``: :func:`launch_width_borders` rewrites the borders as ``c + w_left * n`` and
  ``c - w_right * n`` (``n`` the left normal); the one with the larger absolute shoelace
  area (float64, bead order) is ``outer``, ties to the left one as with a constant width;
* ``validate``: :func:`launch_validate_widths` replaces the constant-width check: NONFINITE
  and TURNING as there; THICKNESS when a bead's curvature radius is below ``(1 - tol)``
  times its width on the inside of the bend, or when two beads farther apart in index than
  the band (``band_for`` of the env's widest half width) are closer than ``(1 - tol)`` times
  the sum of the widths they turn towards each other (each bead's side is the sign of the
  other bead's offset along its normal).

Every kernel is one thread per env (``resample``'s per bead), reads only active envs and
allocates nothing.
"""

from __future__ import annotations

import warp as wp

from ...geometry import NAN, cross2, wrap_angle
from ...results import FailBit
from .relax_bead import band_for
from .resample_kernels import arc_target, search_arc

wp.set_module_options({"enable_backward": False, "fuse_fp": False})

_TURNING = wp.constant(int(FailBit.TURNING))
_THICKNESS = wp.constant(int(FailBit.THICKNESS))
_NONFINITE = wp.constant(int(FailBit.NONFINITE))
_DEGENERATE = wp.constant(int(FailBit.DEGENERATE))
#: Beads per chunk of the width thickness check's bounding boxes.
WIDTH_CHUNK = wp.constant(8)


# --------------------------------------------------------------------------- resample
@wp.kernel
def _bead_widths_kernel(
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    arc: wp.array(dtype=wp.float64),
    edge: wp.array(dtype=wp.float32),
    line_width: wp.array(dtype=wp.vec2f),
    num_points: int,
    n_max: int,
    bead_width_out: wp.array(dtype=wp.vec2f),
):
    e, k = wp.tid()
    if active[e] == 0:
        return
    n = count[e]
    row = e * n_max + k
    if k >= n:
        bead_width_out[row] = wp.vec2f(NAN, NAN)
        return
    lb = e * num_points
    ab = e * (num_points + 1)
    target = arc_target(k, arc[ab + num_points], wp.float64(n))
    j = search_arc(arc, ab, num_points, target)
    jn = j + 1
    if jn == num_points:
        jn = 0
    seg = wp.float64(edge[lb + j])
    t = float((target - arc[ab + j]) / wp.max(seg, wp.float64(1.0e-12)))
    t = wp.clamp(t, 0.0, 1.0)
    w0 = line_width[lb + j]
    bead_width_out[row] = w0 + t * (line_width[lb + jn] - w0)


def launch_bead_widths(ws, arc: wp.array, edge: wp.array) -> None:
    """``ws.bead_width`` from ``ws.line_width`` with the resample stage's arc table
    (``arc`` float64 ``[E*(num_points+1)]``, ``edge`` float32 ``[E*num_points]``), after
    the resample kernels have written ``ws.count``."""
    lay = ws.layout
    wp.launch(
        _bead_widths_kernel,
        (lay.num_envs, lay.N_max),
        inputs=[ws.active, ws.count, arc, edge, ws.line_width, lay.num_points, lay.N_max],
        outputs=[ws.bead_width],
        device=lay.device,
    )


# --------------------------------------------------------------------------- inflate
@wp.func
def _side_point(c: wp.vec3f, nrm: wp.vec3f, w: float) -> wp.vec2f:
    return wp.vec2f(c[0] + w * nrm[0], c[1] + w * nrm[1])


@wp.kernel
def _width_borders_kernel(
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    center: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    bead_width: wp.array(dtype=wp.vec2f),
    n_max: int,
    outer_out: wp.array(dtype=wp.vec3f),
    inner_out: wp.array(dtype=wp.vec3f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    n = count[e]
    if n < 4:
        return
    base = e * n_max
    area_l = wp.float64(0.0)
    area_r = wp.float64(0.0)
    l0 = _side_point(center[base], normal[base], bead_width[base][0])
    r0 = _side_point(center[base], normal[base], -bead_width[base][1])
    lp = l0
    rp = r0
    for i in range(1, n + 1):
        li = l0
        ri = r0
        if i < n:
            w = bead_width[base + i]
            li = _side_point(center[base + i], normal[base + i], w[0])
            ri = _side_point(center[base + i], normal[base + i], -w[1])
        area_l += wp.float64(cross2(lp, li))
        area_r += wp.float64(cross2(rp, ri))
        lp = li
        rp = ri
    left_outer = not (wp.abs(area_r) > wp.abs(area_l))
    for i in range(n):
        c = center[base + i]
        w = bead_width[base + i]
        lft = _side_point(c, normal[base + i], w[0])
        rgt = _side_point(c, normal[base + i], -w[1])
        if left_outer:
            outer_out[base + i] = wp.vec3f(lft[0], lft[1], c[2])
            inner_out[base + i] = wp.vec3f(rgt[0], rgt[1], c[2])
        else:
            outer_out[base + i] = wp.vec3f(rgt[0], rgt[1], c[2])
            inner_out[base + i] = wp.vec3f(lft[0], lft[1], c[2])


def launch_width_borders(ws) -> None:
    """Rewrite ``ws.result.outer`` / ``inner`` of the active envs from ``ws.bead_width``
    (after the inflate kernels: centerline and normals are final)."""
    lay, r = ws.layout, ws.result
    wp.launch(
        _width_borders_kernel,
        lay.num_envs,
        inputs=[ws.active, r.count, r.center, r.normal, ws.bead_width, lay.N_max],
        outputs=[r.outer, r.inner],
        device=lay.device,
    )


# --------------------------------------------------------------------------- validate
@wp.func
def _facing_width(w: wp.vec2f, nrm: wp.vec3f, d: wp.vec2f) -> float:
    """The width of the side of the bead (normal ``nrm``) that the offset ``d`` points to."""
    if d[0] * nrm[0] + d[1] * nrm[1] > 0.0:
        return w[0]
    return w[1]


@wp.func
def _apart(a: wp.vec4f, b: wp.vec4f, dmin: float) -> bool:
    return (
        b[0] - a[2] >= dmin or b[2] - a[0] <= -dmin or b[1] - a[3] >= dmin or b[3] - a[1] <= -dmin
    )


@wp.func
def _too_close_widths(
    beads: wp.array(dtype=wp.vec2f),
    normal: wp.array(dtype=wp.vec3f),
    bead_width: wp.array(dtype=wp.vec2f),
    base: int,
    n: int,
    band: int,
    keep: float,
    dmax: float,
    boxes: wp.array(dtype=wp.vec4f),
    sb: int,
) -> bool:
    """True when two beads more than ``band`` apart in cyclic index are closer than
    ``keep * (w_i + w_j)`` (the widths they turn towards each other). Chunk pairs whose
    boxes are ``dmax`` (an upper bound of every pair's limit) apart on one axis are
    skipped."""
    nch = (n + WIDTH_CHUNK - 1) // WIDTH_CHUNK
    for ci in range(nch):
        i0 = ci * WIDTH_CHUNK
        i1 = wp.min(i0 + WIDTH_CHUNK, n)
        for cj in range(ci, nch):
            if _apart(boxes[sb + ci], boxes[sb + cj], dmax):
                continue
            j0 = cj * WIDTH_CHUNK
            j1 = wp.min(j0 + WIDTH_CHUNK, n)
            for i in range(i0, i1):
                xi = beads[base + i]
                for j in range(wp.max(j0, i + band + 1), wp.min(j1, i + n - band)):
                    d = beads[base + j] - xi
                    if wp.abs(d[0]) < dmax and wp.abs(d[1]) < dmax:
                        wi = _facing_width(bead_width[base + i], normal[base + i], d)
                        wj = _facing_width(bead_width[base + j], normal[base + j], -d)
                        lim = keep * (wi + wj)
                        if wp.dot(d, d) < lim * lim:
                            return True
    return False


@wp.kernel
def _validate_widths_kernel(
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    length: wp.array(dtype=wp.float32),
    beads: wp.array(dtype=wp.vec2f),
    normal: wp.array(dtype=wp.vec3f),
    bead_width: wp.array(dtype=wp.vec2f),
    fail: wp.array(dtype=wp.int32),
    turning_tol: wp.array(dtype=wp.float32),
    thickness_tol: wp.array(dtype=wp.float32),
    fixed_band: int,
    n_max: int,
    n_chunks: int,
    boxes: wp.array(dtype=wp.vec4f),
    fail_mask_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    bits = fail[e]
    n = count[e]
    base = e * n_max
    sb = e * n_chunks
    if n < 4:
        bits = bits | _DEGENERATE
    else:
        keep = 1.0 - thickness_tol[e]
        thin = int(0)
        if not wp.isfinite(keep):
            thin = 1
        probe = float(0.0)  # 0 * x is NaN exactly when x is NaN or infinite
        turn = float(0.0)
        wmax = float(0.0)
        p_prev = beads[base + n - 1]
        p_cur = beads[base]
        d_prev = p_cur - p_prev
        a_prev = wp.atan2(d_prev[1], d_prev[0])
        lo = p_cur
        hi = p_cur
        for i in range(n):
            i1 = i + 1
            if i1 == n:
                i1 = 0
            p_next = beads[base + i1]
            w = bead_width[base + i]
            probe += p_cur[0] * 0.0 + p_cur[1] * 0.0 + w[0] * 0.0 + w[1] * 0.0
            wmax = wp.max(wmax, wp.max(w[0], w[1]))
            d = p_next - p_cur
            a = wp.atan2(d[1], d[0])
            turn += wrap_angle(a - a_prev)
            a_prev = a
            if thin == 0:
                # Menger curvature of (p_prev, p_cur, p_next) against the inside width
                la = wp.length(d_prev)
                lb = wp.length(d)
                ac = p_next - p_prev
                den = la * lb * wp.length(ac)
                cr = cross2(d_prev, ac)
                if den > 1.0e-20:
                    kappa = 2.0 * wp.abs(cr) / den
                    inside = w[1]
                    if cr > 0.0:
                        inside = w[0]
                    if kappa * keep * inside > 1.0:
                        thin = 1
            lo = wp.min(lo, p_cur)
            hi = wp.max(hi, p_cur)
            if i % WIDTH_CHUNK == WIDTH_CHUNK - 1 or i == n - 1:
                boxes[sb + i // WIDTH_CHUNK] = wp.vec4f(lo[0], lo[1], hi[0], hi[1])
                lo = p_next
                hi = p_next
            p_prev = p_cur
            p_cur = p_next
            d_prev = d
        if not wp.isfinite(probe):
            bits = bits | _NONFINITE
        else:
            if not (wp.abs(wp.abs(turn) - 6.28318530717959) <= turning_tol[e]):
                bits = bits | _TURNING
            if thin == 0:
                band = band_for(wmax, length[e] / float(n), fixed_band, n)
                dmax = 2.0 * keep * wmax
                if _too_close_widths(
                    beads, normal, bead_width, base, n, band, keep, dmax, boxes, sb
                ):
                    thin = 1
            if thin != 0:
                bits = bits | _THICKNESS
    fail_mask_out[e] = bits
    valid = 0
    if bits == 0:
        valid = 1
    valid_out[e] = valid


def launch_validate_widths(ws, params: dict, fixed_band: int, n_chunks: int, boxes) -> None:
    """The validate stage's check with ``ws.bead_width`` (``boxes``: the stage's vec4f
    ``[E*n_chunks]`` chunk-box scratch, ``n_chunks = ceil(N_max / 8)``)."""
    lay, r = ws.layout, ws.result
    wp.launch(
        _validate_widths_kernel,
        lay.num_envs,
        inputs=[
            ws.active,
            r.count,
            r.length,
            ws.beads,
            r.normal,
            ws.bead_width,
            ws.fail,
            params["turning_tol"],
            params["thickness_tol"],
            int(fixed_band),
            lay.N_max,
            n_chunks,
            boxes,
        ],
        outputs=[r.fail_mask, r.valid],
        device=lay.device,
    )


__all__ = ["launch_bead_widths", "launch_validate_widths", "launch_width_borders"]
