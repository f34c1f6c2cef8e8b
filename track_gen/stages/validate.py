"""Validity: ``valid[e]`` and named ``fail_mask[e]`` bits for each rebuilt env.

Checks on the final centerline (one thread per env):

* NONFINITE: any real bead is NaN/inf.
* TURNING: ``| |sum of wrapped heading changes| - 2*pi | > turning_tol``.
* THICKNESS: the smallest Menger radius, or half the smallest distance between beads
  farther apart in index than the band, is below ``(1 - thickness_tol) * hw``.

With overpass levels (``ws.bead_level``: a real circuit that crosses itself on a bridge)
two beads on the two decks of one crossing are never too close, and a loop with ``k`` such
crossings may turn by ``2 pi m`` with ``m = k + 1`` mod 2 (a figure eight by 0).

With per-bead widths (``ws.bead_width``: real circuits, width_variation) the widths must be
finite too, and THICKNESS is raised when a bead's curvature radius is below ``(1 - tol)``
times its width on the inside of the bend, or when two beads farther apart in index than the
band (``band_for`` of the env's widest half width) are closer than ``(1 - tol)`` times the
sum of the widths they turn towards each other (each bead's side: the sign of the other's
offset along its normal). One kernel serves both (a per-launch ``widths`` switch).

Bits raised by earlier stages (TRUNCATED, DEGENERATE, NONFINITE) are kept.

The turning sum, the curvature radii and the bounding boxes of chunks of CHUNK beads come
from one pass over the beads; the separation scan then skips every chunk pair (and every
bead-chunk pair) whose boxes are provably ``2 * floor`` apart on one axis, so it raises
THICKNESS exactly when the exhaustive pair scan would.
"""

from __future__ import annotations

import warp as wp

from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import TWO_PI, cross2, wrap_angle
from ..results import FailBit
from .inflate import HALF_WIDTH
from .relax import BAND, band_for

wp.set_module_options({"enable_backward": False})

_TURNING = wp.constant(int(FailBit.TURNING))
_THICKNESS = wp.constant(int(FailBit.THICKNESS))
_NONFINITE = wp.constant(int(FailBit.NONFINITE))
_DEGENERATE = wp.constant(int(FailBit.DEGENERATE))


#: Beads per chunk of the thickness check's bounding boxes.
CHUNK = wp.constant(8)


@wp.func
def _menger(ab: wp.vec2f, la: float, lb: float, ac: wp.vec2f) -> float:
    """``geometry.menger_curvature(a, b, c)`` from ``ab = b - a``, ``la = |b - a|``,
    ``lb = |c - b|`` and ``ac = c - a`` (the same operations, so the same bits)."""
    den = la * lb * wp.length(ac)
    if den <= 1.0e-20:
        return 0.0
    return 2.0 * wp.abs(cross2(ab, ac)) / den


@wp.func
def _far_from_box(box: wp.vec4f, x: wp.vec2f, dmin: float) -> bool:
    """True when every point ``p`` inside ``box`` (lo.x, lo.y, hi.x, hi.y) has
    ``|p.x - x.x| >= dmin`` or ``|p.y - x.y| >= dmin`` as float32 differences: float
    subtraction is monotone, so ``lo - x >= dmin`` bounds ``p - x`` for every ``p >= lo``
    (and likewise for ``hi``). Such a chunk holds no bead the pair test would accept."""
    return (
        box[0] - x[0] >= dmin
        or box[2] - x[0] <= -dmin
        or box[1] - x[1] >= dmin
        or box[3] - x[1] <= -dmin
    )


@wp.func
def _boxes_apart(a: wp.vec4f, b: wp.vec4f, dmin: float) -> bool:
    """True when every ``p`` in box ``b`` and ``q`` in box ``a`` have ``|p.x - q.x| >= dmin``
    or ``|p.y - q.y| >= dmin`` as float32 differences (float subtraction is monotone in both
    operands, so ``b.lo - a.hi`` bounds ``p - q`` from below and ``b.hi - a.lo`` from above)."""
    return (
        b[0] - a[2] >= dmin or b[2] - a[0] <= -dmin or b[1] - a[3] >= dmin or b[3] - a[1] <= -dmin
    )


@wp.func
def _facing_width(w: wp.vec2f, nrm: wp.vec3f, d: wp.vec2f) -> float:
    """The width of the side of the bead (normal ``nrm``) that the offset ``d`` points to."""
    if d[0] * nrm[0] + d[1] * nrm[1] > 0.0:
        return w[0]
    return w[1]


@wp.func
def _other_deck(level: wp.array(dtype=wp.vec2f), i: int, j: int) -> bool:
    """Beads ``i`` and ``j`` lie on the two decks of one overpass (levels ``+c`` and ``-c``)."""
    a = level[i][0]
    b = level[j][0]
    return a * b < 0.0 and wp.abs(wp.round(wp.abs(a)) - wp.round(wp.abs(b))) < 0.5


@wp.func
def _has_close_pair(
    beads: wp.array(dtype=wp.vec2f),
    normal: wp.array(dtype=wp.vec3f),
    bead_width: wp.array(dtype=wp.vec2f),
    widths: int,
    bead_level: wp.array(dtype=wp.vec2f),
    levels: int,
    base: int,
    n: int,
    band: int,
    keep: float,
    dmin: float,
    boxes: wp.array(dtype=wp.vec4f),
    sb: int,
) -> bool:
    """True when two beads more than ``band`` apart in (cyclic) index are too close: closer
    than ``dmin`` (``|dx| < dmin and |dy| < dmin and dx^2 + dy^2 < dmin^2``), or with
    ``widths`` closer than ``keep * (w_i + w_j)`` (the widths they turn towards each other;
    ``dmin`` then bounds every pair's limit). With ``levels``, a pair on the two decks of one
    overpass (``bead_level``) is never too close.

    Beads ``i < j`` are paired when ``band < j - i < n - band``. Pairs of chunks (CHUNK
    beads each, bounding boxes in ``boxes[sb + c]``) whose boxes are at least ``dmin`` apart
    on one axis are skipped, then single beads against a chunk's box: a skipped pair could
    not pass the test, so the answer is the one of the exhaustive scan."""
    d2min = dmin * dmin
    nch = (n + CHUNK - 1) // CHUNK
    for ci in range(nch):
        box_i = boxes[sb + ci]
        i0 = ci * CHUNK
        i1 = wp.min(i0 + CHUNK, n)
        for cj in range(ci, nch):
            j0 = cj * CHUNK
            # the first pair of the chunks needs j - i > band, the last j - i < n - band
            if j0 + CHUNK - 1 - i0 <= band:
                continue
            if j0 - (i1 - 1) >= n - band:
                break
            box_j = boxes[sb + cj]
            if _boxes_apart(box_i, box_j, dmin):
                continue
            j1 = wp.min(j0 + CHUNK, n)
            for i in range(i0, i1):
                xi = beads[base + i]
                if _far_from_box(box_j, xi, dmin):
                    continue
                j_lo = wp.max(j0, i + band + 1)
                j_hi = wp.min(j1, i + n - band)
                for j in range(j_lo, j_hi):
                    d = beads[base + j] - xi
                    if wp.abs(d[0]) < dmin and wp.abs(d[1]) < dmin:
                        lim2 = d2min
                        if widths != 0:
                            wi = _facing_width(bead_width[base + i], normal[base + i], d)
                            wj = _facing_width(bead_width[base + j], normal[base + j], -d)
                            lim = keep * (wi + wj)
                            lim2 = lim * lim
                        if wp.dot(d, d) < lim2:
                            if levels == 0:
                                return True
                            if not _other_deck(bead_level, base + i, base + j):
                                return True
    return False


@wp.func
def _turning_with_overpasses(turn: float, crossings: float, tol: float) -> bool:
    """The turning of a loop that crosses itself ``crossings`` times on bridges is
    ``2 pi m`` within ``tol``, with ``m = crossings + 1`` mod 2 and ``|m| <= crossings + 1``
    (a figure eight turns by 0)."""
    k = int(wp.round(crossings))
    m = int(wp.round(turn / TWO_PI))
    ok = wp.abs(turn - TWO_PI * float(m)) <= tol
    return ok and wp.abs(m) <= k + 1 and (m + k + 1) % 2 == 0


@wp.kernel
def _validate_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    length: wp.array(dtype=wp.float32),
    beads: wp.array(dtype=wp.vec2f),
    normal: wp.array(dtype=wp.vec3f),
    bead_width: wp.array(dtype=wp.vec2f),
    bead_level: wp.array(dtype=wp.vec2f),
    fail: wp.array(dtype=wp.int32),
    # parameters
    turning_tol: wp.array(dtype=wp.float32),
    thickness_tol: wp.array(dtype=wp.float32),
    # static
    widths: int,
    levels: int,
    hw: float,
    fixed_band: int,
    n_max: int,
    n_chunks: int,
    # scratch
    boxes: wp.array(dtype=wp.vec4f),
    # outputs
    fail_mask_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
):
    """One pass over the beads: finiteness, turning number, curvature radius (skipped once
    thin) and chunk boxes; the Menger curvature is geometry.menger_curvature(p_prev, p_cur,
    p_next), with the length of edge p_prev -> p_cur carried over from the last bead. With
    ``widths`` the radius is held against the bead's width on the inside of the bend (and
    the widths must be finite), else against ``hw``; then the non-neighbour separation."""
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
        floor_r = keep * hw
        thin = int(0)
        if not wp.isfinite(floor_r) or not wp.isfinite(keep):
            thin = 1
        probe = float(0.0)  # 0 * x is NaN exactly when x is NaN or infinite
        turn = float(0.0)
        wmax = float(0.0)
        p_prev = beads[base + n - 1]
        p_cur = beads[base]
        d_prev = p_cur - p_prev
        l_prev = wp.length(d_prev)
        a_prev = wp.atan2(d_prev[1], d_prev[0])
        lo = p_cur
        hi = p_cur
        for i in range(n):
            i1 = i + 1
            if i1 == n:
                i1 = 0
            p_next = beads[base + i1]
            w = wp.vec2f(0.0, 0.0)  # without widths: finite, and wmax stays 0 (unused)
            if widths != 0:
                w = bead_width[base + i]
            probe += p_cur[0] * 0.0 + p_cur[1] * 0.0 + w[0] * 0.0 + w[1] * 0.0
            wmax = wp.max(wmax, wp.max(w[0], w[1]))
            d = p_next - p_cur
            a = wp.atan2(d[1], d[0])
            turn += wrap_angle(a - a_prev)
            a_prev = a
            l_next = wp.length(d)
            if thin == 0:
                ac = p_next - p_prev
                kappa = _menger(d_prev, l_prev, l_next, ac)
                if widths != 0:
                    inside = w[1]
                    if cross2(d_prev, ac) > 0.0:
                        inside = w[0]
                    if kappa * keep * inside > 1.0:
                        thin = 1
                elif kappa * floor_r > 1.0:
                    thin = 1
            lo = wp.min(lo, p_cur)
            hi = wp.max(hi, p_cur)
            if i % CHUNK == CHUNK - 1 or i == n - 1:
                boxes[sb + i // CHUNK] = wp.vec4f(lo[0], lo[1], hi[0], hi[1])
                lo = p_next
                hi = p_next
            p_prev = p_cur
            p_cur = p_next
            d_prev = d
            l_prev = l_next
        if not wp.isfinite(probe):
            bits = bits | _NONFINITE  # a non-finite bead: no turning or thickness bits
        else:
            # written so that a NaN tolerance fails the check instead of passing it
            if levels == 0:
                if not (wp.abs(wp.abs(turn) - TWO_PI) <= turning_tol[e]):
                    bits = bits | _TURNING
            elif not _turning_with_overpasses(turn, bead_level[base][1], turning_tol[e]):
                bits = bits | _TURNING
            # thickness: non-neighbour separation
            if thin == 0:
                band_hw = hw
                dmin = 2.0 * floor_r
                if widths != 0:
                    band_hw = wmax
                    dmin = 2.0 * keep * wmax
                band = band_for(band_hw, length[e] / float(n), fixed_band, n)
                if _has_close_pair(
                    beads, normal, bead_width, widths, bead_level, levels, base, n, band, keep,
                    dmin, boxes, sb,
                ):  # fmt: skip
                    thin = 1
            if thin != 0:
                bits = bits | _THICKNESS
    fail_mask_out[e] = bits
    valid = 0
    if bits == 0:
        valid = 1
    valid_out[e] = valid


TURNING_TOL = Tunable(
    "turning_tol",
    0.1,
    lo=1.0e-6,
    hi=1.0,
    dynamic=True,
    unit="rad",
    doc="allowed | |total turning| - 2 pi | of a valid loop.",
)
THICKNESS_TOL = Tunable(
    "thickness_tol",
    0.02,
    lo=0.0,
    hi=0.5,
    dynamic=True,
    renamed_from=("relax_tol",),
    unit="half widths",
    doc="thickness gate: the smallest curvature radius and half the smallest non-neighbour "
    "distance must be >= (1 - tol) * half_width.",
)


class ValidateTrack(Stage):
    """Track validity (``"validate"``): writes ``result.valid`` and ``result.fail_mask``.

    Scratch: ``boxes`` vec4f ``[E*ceil(N_max/CHUNK)]``: (lo.x, lo.y, hi.x, hi.y) of each
    chunk of CHUNK beads, track units."""

    families = ("track",)
    validates = True
    FIELDS = (HALF_WIDTH, BAND, TURNING_TOL, THICKNESS_TOL)

    def allocate(self, ws: Workspace) -> None:
        lay = ws.layout
        self.n_chunks = (lay.N_max + CHUNK - 1) // CHUNK
        self.boxes = ws.zeros(
            lay.num_envs * self.n_chunks, wp.vec4f, f"{self.name} thickness chunk boxes"
        )

    def enqueue(self, ws: Workspace, params: dict) -> None:
        lay, r, v = ws.layout, ws.result, self.values
        wp.launch(
            _validate_kernel,
            lay.num_envs,
            inputs=[
                ws.active,
                r.count,
                r.length,
                ws.beads,
                r.normal,
                ws.bead_width,
                ws.bead_level,
                ws.fail,
                params["turning_tol"],
                params["thickness_tol"],
                int(ws.bead_width is not None),
                int(ws.bead_level is not None),
                float(v.half_width),
                int(v.band or 0),
                lay.N_max,
                self.n_chunks,
                self.boxes,
            ],
            outputs=[r.fail_mask, r.valid],
            device=lay.device,
        )
