"""Inflation: re-uniformize the relaxed chain, compute frames and offset the road borders.

Per env (one thread): the beads are re-spaced to ``count`` arc-uniform points (removing the
short closing gap of constant-spacing resampling), then for each bead the unit
central-difference tangent, the left normal ``(-t.y, t.x)``, the arc length before it, the
closed length and the winding (shoelace sign). The two candidate borders ``c +- hw*n`` are
compared by absolute shoelace area in one thread (deterministic, no atomics): the larger is
``outer``. Rows past ``count`` are NaN; z is 0 (flat tracks).
"""

from __future__ import annotations

import warp as wp

from ...geometry import NAN, cross2, resample_closed, safe_normalize
from ...tunable import Tunable
from ..stage import Stage, Workspace

wp.set_module_options({"enable_backward": False})


@wp.func
def _lift(p: wp.vec2f) -> wp.vec3f:
    return wp.vec3f(p[0], p[1], 0.0)


@wp.kernel
def _inflate_kernel(
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    hw: float,
    n_max: int,
    beads: wp.array(dtype=wp.vec2f),
    scratch: wp.array(dtype=wp.vec2f),
    outer_out: wp.array(dtype=wp.vec3f),
    center_out: wp.array(dtype=wp.vec3f),
    inner_out: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
    normal_out: wp.array(dtype=wp.vec3f),
    arclen_out: wp.array(dtype=wp.float32),
    length_out: wp.array(dtype=wp.float32),
    count_out: wp.array(dtype=wp.int32),
    winding_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    n = count[e]
    base = e * n_max
    nan3 = wp.vec3f(NAN, NAN, NAN)
    if n >= 4:
        resample_closed(beads, base, n, scratch, base, n)
        for i in range(n):
            beads[base + i] = scratch[base + i]
    else:
        n = 0
    area_c = wp.float64(0.0)
    area_p = wp.float64(0.0)
    area_m = wp.float64(0.0)
    run = wp.float64(0.0)
    for i in range(n):
        c = beads[base + i]
        cm = beads[base + (i + n - 1) % n]
        cp = beads[base + (i + 1) % n]
        t = safe_normalize(cp - cm)
        nrm = wp.vec2f(-t[1], t[0])
        tp = safe_normalize(beads[base + (i + 2) % n] - c)  # tangent of bead i+1
        np_ = wp.vec2f(-tp[1], tp[0])
        # shoelace terms of the centerline and both offset loops (edge i -> i+1)
        area_c += wp.float64(cross2(c, cp))
        area_p += wp.float64(cross2(c + hw * nrm, cp + hw * np_))
        area_m += wp.float64(cross2(c - hw * nrm, cp - hw * np_))
        center_out[base + i] = _lift(c)
        tangent_out[base + i] = _lift(t)
        normal_out[base + i] = _lift(nrm)
        arclen_out[base + i] = float(run)
        run += wp.float64(wp.length(cp - c))
    sign = float(1.0)
    if wp.abs(area_m) > wp.abs(area_p):
        sign = -1.0
    for i in range(n):
        c = beads[base + i]
        n3 = normal_out[base + i]
        off = (hw * sign) * wp.vec2f(n3[0], n3[1])
        outer_out[base + i] = _lift(c + off)
        inner_out[base + i] = _lift(c - off)
    for i in range(n, n_max):
        outer_out[base + i] = nan3
        center_out[base + i] = nan3
        inner_out[base + i] = nan3
        tangent_out[base + i] = nan3
        normal_out[base + i] = nan3
        arclen_out[base + i] = NAN
    length_out[e] = float(run)
    count_out[e] = n
    w = float(0.0)
    if area_c > wp.float64(0.0):
        w = 1.0
    elif area_c < wp.float64(0.0):
        w = -1.0
    winding_out[e] = w


HALF_WIDTH = Tunable(
    "half_width",
    0.1,
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units",
    doc="half the road width: the borders are the centerline offset by it.",
)


class Inflate(Stage):
    """Frames and borders (``"inflate"``): ``beads`` -> ``Track`` geometry."""

    FIELDS = (HALF_WIDTH,)

    def allocate(self, ws: Workspace) -> None:
        lay = ws.layout
        self.scratch = ws.zeros(lay.num_envs * lay.N_max, wp.vec2f, f"{self.name} scratch")

    def enqueue(self, ws: Workspace, params: dict) -> None:
        lay, r = ws.layout, ws.result
        wp.launch(
            _inflate_kernel,
            lay.num_envs,
            inputs=[ws.active, ws.count, float(self.values.half_width), lay.N_max],
            outputs=[
                ws.beads,
                self.scratch,
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
