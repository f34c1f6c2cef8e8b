"""Inflation: re-uniformize the relaxed chain, compute frames and offset the road borders.

Per env: the beads are re-spaced to ``count`` arc-uniform points (removing the short closing
gap of constant-spacing resampling), then for each bead the unit central-difference tangent,
the left normal ``(-t.y, t.x)``, the arc length before it, the closed length and the winding
(shoelace sign). The two candidate borders ``c +- hw*n`` are compared by absolute shoelace
area, summed in bead order in float64 (deterministic, no atomics): the larger is ``outer``.
Rows past ``count`` are NaN; z is 0 (flat tracks).

Two thread layouts (``Layout.kernel_layout``), bitwise equal: ``per_env`` runs one thread per
env; ``per_item`` tabulates the arc and sums the per-bead terms in one thread per env (in
bead order, as ``per_env`` does) and does everything per bead in one thread per bead. The
per-bead arithmetic is shared through the ``@wp.func`` helpers below.

The staging rows past an env's count stay NaN between calls (NaN from allocation, and each
call pads the rows between the new count and the previous one), so a call writes only the
rows that changed.
"""

from __future__ import annotations

import warp as wp

from ..core.layout import PER_ITEM
from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import NAN, cross2, safe_normalize
from ..geometry.polylines import lerp_on_edge
from .resample_kernels import locate, tabulate_arc
from .widths import launch_width_borders

# fuse_fp off: no multiply-add contraction, so the per_env and per_item kernels round alike
# on every device (CUDA would otherwise contract them differently).
wp.set_module_options({"enable_backward": False, "fuse_fp": False})


@wp.func
def _lift(p: wp.vec2f) -> wp.vec3f:
    return wp.vec3f(p[0], p[1], 0.0)


@wp.func
def _tangent(before: wp.vec2f, after: wp.vec2f) -> wp.vec2f:
    """Unit central-difference tangent of the bead between ``before`` and ``after``."""
    return safe_normalize(after - before)


@wp.func
def _wrap(i: int, n: int) -> int:
    """``i`` in ``[-n, 2n)`` as an index of a closed loop of ``n`` points."""
    j = i
    if j >= n:
        j -= n
    elif j < 0:
        j += n
    return j


@wp.func
def _left(t: wp.vec2f) -> wp.vec2f:
    return wp.vec2f(-t[1], t[0])


@wp.func
def _edge_terms(c: wp.vec2f, cp: wp.vec2f, t: wp.vec2f, tp: wp.vec2f, hw: float) -> wp.vec4d:
    """Edge ``c -> cp`` (tangents ``t``, ``tp`` at its ends): the shoelace terms of the
    centerline and of both offset loops ``c +- hw * n``, and the edge length (float64)."""
    nrm = _left(t)
    np_ = _left(tp)
    return wp.vec4d(
        wp.float64(cross2(c, cp)),
        wp.float64(cross2(c + hw * nrm, cp + hw * np_)),
        wp.float64(cross2(c - hw * nrm, cp - hw * np_)),
        wp.float64(wp.length(cp - c)),
    )


@wp.func
def _outer_sign(area_p: wp.float64, area_m: wp.float64) -> float:
    """+1 when ``c + hw * n`` is the larger offset loop, else -1."""
    sign = float(1.0)
    if wp.abs(area_m) > wp.abs(area_p):
        sign = -1.0
    return sign


@wp.func
def _winding(area_c: wp.float64) -> float:
    w = float(0.0)
    if area_c > wp.float64(0.0):
        w = 1.0
    elif area_c < wp.float64(0.0):
        w = -1.0
    return w


@wp.func
def _border_offset(n3: wp.vec3f, hw: float, sign: float) -> wp.vec2f:
    return (hw * sign) * wp.vec2f(n3[0], n3[1])


@wp.func
def _inflated_count(
    active: wp.array(dtype=wp.int32), count: wp.array(dtype=wp.int32), e: int
) -> int:
    """The env's bead count: -1 when it is inactive (nothing is written), 0 when it has fewer
    than 4 beads (nothing is inflated)."""
    if active[e] == 0:
        return -1
    n = count[e]
    if n < 4:
        return 0
    return n


@wp.func
def _write_sums(
    e: int,
    n: int,
    area: wp.vec4d,
    length_out: wp.array(dtype=wp.float32),
    count_out: wp.array(dtype=wp.int32),
    winding_out: wp.array(dtype=wp.float32),
):
    """The env's closed length, count and winding from its sums ``area`` (centerline and
    offset shoelace sums, arc length)."""
    length_out[e] = float(area[3])
    count_out[e] = n
    winding_out[e] = _winding(area[0])


@wp.func
def _write_nan_row(
    row: int,
    center_out: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
    normal_out: wp.array(dtype=wp.vec3f),
    outer_out: wp.array(dtype=wp.vec3f),
    inner_out: wp.array(dtype=wp.vec3f),
    arclen_out: wp.array(dtype=wp.float32),
):
    """NaN into one row of the frame (centre, tangent, normal), the borders and the arc."""
    nan3 = wp.vec3f(NAN, NAN, NAN)
    center_out[row] = nan3
    tangent_out[row] = nan3
    normal_out[row] = nan3
    outer_out[row] = nan3
    inner_out[row] = nan3
    arclen_out[row] = NAN


@wp.kernel
def _inflate_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    # static
    hw: float,
    n_max: int,
    # scratch
    arc: wp.array(dtype=wp.float64),
    edge: wp.array(dtype=wp.float32),
    points: wp.array(dtype=wp.vec2f),
    # outputs
    beads_inout: wp.array(dtype=wp.vec2f),
    outer_out: wp.array(dtype=wp.vec3f),
    center_out: wp.array(dtype=wp.vec3f),
    inner_out: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
    normal_inout: wp.array(dtype=wp.vec3f),
    arclen_out: wp.array(dtype=wp.float32),
    length_out: wp.array(dtype=wp.float32),
    count_inout: wp.array(dtype=wp.int32),
    winding_out: wp.array(dtype=wp.float32),
):
    """per_env: one thread per env (``count_inout`` holds the previous count on entry)."""
    e = wp.tid()
    n = _inflated_count(active, count, e)
    if n < 0:
        return
    base = e * n_max
    ab = e * (n_max + 1)
    if n > 0:
        tabulate_arc(beads_inout, base, n, arc, ab, edge, base)
        j = int(0)
        for k in range(n):
            j, frac = locate(arc, ab, n, edge, base, k, n, j)
            points[base + k] = lerp_on_edge(beads_inout, base, n, j, frac)
    area = wp.vec4d()  # centerline, +hw and -hw shoelace sums; the arc run
    c = wp.vec2f()  # bead i, i+1 and the tangent of bead i, carried along the loop
    cp = wp.vec2f()
    t = wp.vec2f()
    if n > 0:
        c = points[base]
        cp = points[base + 1]
        t = _tangent(points[base + n - 1], cp)
    for i in range(n):
        cpp = points[base + _wrap(i + 2, n)]
        tp = _tangent(c, cpp)
        beads_inout[base + i] = c
        center_out[base + i] = _lift(c)
        tangent_out[base + i] = _lift(t)
        normal_inout[base + i] = _lift(_left(t))
        arclen_out[base + i] = float(area[3])
        area += _edge_terms(c, cp, t, tp, hw)
        c = cp
        cp = cpp
        t = tp
    sign = _outer_sign(area[1], area[2])
    for i in range(n):
        c = beads_inout[base + i]
        off = _border_offset(normal_inout[base + i], hw, sign)
        outer_out[base + i] = _lift(c + off)
        inner_out[base + i] = _lift(c - off)
    # rows past the previous count are NaN already
    for i in range(n, wp.clamp(count_inout[e], n, n_max)):
        _write_nan_row(
            base + i, center_out, tangent_out, normal_inout, outer_out, inner_out, arclen_out
        )
    _write_sums(e, n, area, length_out, count_inout, winding_out)


@wp.kernel
def _inflate_arc_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    beads: wp.array(dtype=wp.vec2f),
    # static
    n_max: int,
    # outputs
    arc_out: wp.array(dtype=wp.float64),
    edge_out: wp.array(dtype=wp.float32),
):
    """per_item, one thread per env: the arc table of the relaxed beads."""
    e = wp.tid()
    n = _inflated_count(active, count, e)
    if n > 0:
        base = e * n_max
        tabulate_arc(beads, base, n, arc_out, e * (n_max + 1), edge_out, base)


@wp.kernel
def _inflate_emit_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    beads: wp.array(dtype=wp.vec2f),
    arc: wp.array(dtype=wp.float64),
    edge: wp.array(dtype=wp.float32),
    # static
    n_max: int,
    # outputs
    points_out: wp.array(dtype=wp.vec2f),
):
    """per_item, one thread per row: the re-spaced bead k."""
    e, k = wp.tid()
    n = _inflated_count(active, count, e)
    if k < n:
        base = e * n_max
        j, frac = locate(arc, e * (n_max + 1), n, edge, base, k, n, -1)
        points_out[base + k] = lerp_on_edge(beads, base, n, j, frac)


@wp.kernel
def _inflate_frame_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    points: wp.array(dtype=wp.vec2f),
    prev_count: wp.array(dtype=wp.int32),
    # static
    hw: float,
    n_max: int,
    # outputs
    beads_out: wp.array(dtype=wp.vec2f),
    center_out: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
    normal_out: wp.array(dtype=wp.vec3f),
    terms_out: wp.array(dtype=wp.vec4d),
    outer_out: wp.array(dtype=wp.vec3f),
    inner_out: wp.array(dtype=wp.vec3f),
    arclen_out: wp.array(dtype=wp.float32),
):
    """per_item, one thread per row: frame of bead i and the terms of edge i -> i+1, or a
    NaN row between the new and the previous count (``prev_count``: the staged count,
    rewritten later)."""
    e, i = wp.tid()
    n = _inflated_count(active, count, e)
    if n < 0:
        return
    base = e * n_max
    if i >= n:
        # rows past the previous count are NaN already
        if i < prev_count[e]:
            _write_nan_row(
                base + i, center_out, tangent_out, normal_out, outer_out, inner_out, arclen_out
            )
        return
    c = points[base + i]
    cp = points[base + _wrap(i + 1, n)]
    t = _tangent(points[base + _wrap(i - 1, n)], cp)
    tp = _tangent(c, points[base + _wrap(i + 2, n)])
    beads_out[base + i] = c
    center_out[base + i] = _lift(c)
    tangent_out[base + i] = _lift(t)
    normal_out[base + i] = _lift(_left(t))
    terms_out[base + i] = _edge_terms(c, cp, t, tp, hw)


@wp.kernel
def _inflate_sum_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    terms: wp.array(dtype=wp.vec4d),
    # static
    n_max: int,
    # outputs
    arclen_out: wp.array(dtype=wp.float32),
    length_out: wp.array(dtype=wp.float32),
    count_out: wp.array(dtype=wp.int32),
    winding_out: wp.array(dtype=wp.float32),
    sign_out: wp.array(dtype=wp.float32),
):
    """per_item, one thread per env: the float64 sums in bead order (as per_env)."""
    e = wp.tid()
    n = _inflated_count(active, count, e)
    if n < 0:
        return
    base = e * n_max
    area = wp.vec4d()
    for i in range(n):
        arclen_out[base + i] = float(area[3])
        area += terms[base + i]
    sign_out[e] = _outer_sign(area[1], area[2])
    _write_sums(e, n, area, length_out, count_out, winding_out)


@wp.kernel
def _inflate_border_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    beads: wp.array(dtype=wp.vec2f),
    normal: wp.array(dtype=wp.vec3f),
    sign: wp.array(dtype=wp.float32),
    # static
    hw: float,
    n_max: int,
    # outputs
    outer_out: wp.array(dtype=wp.vec3f),
    inner_out: wp.array(dtype=wp.vec3f),
):
    """per_item, one thread per bead: both borders."""
    e, i = wp.tid()
    if active[e] == 0:
        return
    if i >= count[e]:
        return
    row = e * n_max + i
    c = beads[row]
    off = _border_offset(normal[row], hw, sign[e])
    outer_out[row] = _lift(c + off)
    inner_out[row] = _lift(c - off)


HALF_WIDTH = Tunable(
    "half_width",
    0.1,
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units",
    doc="half the road width: the borders are the centerline offset by it.",
)


class Inflate(Stage):
    """Frames and borders (``"inflate"``): ``beads`` -> ``Track`` geometry.

    Scratch: ``arc`` float64 ``[E*(N_max+1)]`` and ``edge`` float32 ``[E*N_max]`` (the
    relaxed chain's arc table, track units), ``points`` vec2f ``[E*N_max]`` (the re-spaced
    beads); per_item also ``terms`` vec4d ``[E*N_max]`` (per-edge shoelace terms and edge
    length) and ``sign`` float32 ``[E]`` (+1 / -1: which offset is outer)."""

    families = ("track",)
    FIELDS = (HALF_WIDTH,)

    def allocate(self, ws: Workspace) -> None:
        lay = ws.layout
        E, n_max = lay.num_envs, lay.N_max
        self.arc = ws.zeros(E * (n_max + 1), wp.float64, f"{self.name} arc")
        self.edge = ws.zeros(E * n_max, wp.float32, f"{self.name} edges")
        self.points = ws.zeros(E * n_max, wp.vec2f, f"{self.name} re-spaced beads")
        if lay.kernel_layout == PER_ITEM:
            self.terms = ws.zeros(E * n_max, wp.vec4d, f"{self.name} edge terms")
            self.sign = ws.zeros(E, wp.float32, f"{self.name} outer sign")

    def enqueue(self, ws: Workspace, params: dict) -> None:
        lay, r = ws.layout, ws.result
        hw = float(self.values.half_width)
        E, n_max = lay.num_envs, lay.N_max
        if lay.kernel_layout != PER_ITEM:
            wp.launch(
                _inflate_kernel,
                E,
                inputs=[ws.active, ws.count, hw, n_max, self.arc, self.edge, self.points],
                outputs=[
                    ws.beads,
                    r.outer,
                    r.center,
                    r.inner,
                    r.tangent,
                    r.normal,
                    r.arclen,
                    r.length,
                    r.count,
                    r.winding,
                ],
                device=lay.device,
            )
        else:
            self._enqueue_items(ws, hw)
        if ws.bead_width is not None:
            launch_width_borders(ws)

    def _enqueue_items(self, ws: Workspace, hw: float) -> None:
        """The per_item launches (one thread per bead where the work allows)."""
        lay, r = ws.layout, ws.result
        E, n_max = lay.num_envs, lay.N_max
        dev = lay.device
        wp.launch(
            _inflate_arc_kernel,
            E,
            inputs=[ws.active, ws.count, ws.beads, n_max],
            outputs=[self.arc, self.edge],
            device=dev,
        )
        wp.launch(
            _inflate_emit_kernel,
            (E, n_max),
            inputs=[ws.active, ws.count, ws.beads, self.arc, self.edge, n_max],
            outputs=[self.points],
            device=dev,
        )
        wp.launch(
            _inflate_frame_kernel,
            (E, n_max),
            inputs=[ws.active, ws.count, self.points, r.count, hw, n_max],
            outputs=[
                ws.beads,
                r.center,
                r.tangent,
                r.normal,
                self.terms,
                r.outer,
                r.inner,
                r.arclen,
            ],
            device=dev,
        )
        wp.launch(
            _inflate_sum_kernel,
            E,
            inputs=[ws.active, ws.count, self.terms, n_max],
            outputs=[r.arclen, r.length, r.count, r.winding, self.sign],
            device=dev,
        )
        wp.launch(
            _inflate_border_kernel,
            (E, n_max),
            inputs=[ws.active, r.count, ws.beads, r.normal, self.sign, hw, n_max],
            outputs=[r.outer, r.inner],
            device=dev,
        )
