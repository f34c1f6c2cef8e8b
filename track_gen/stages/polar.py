"""Polar sampler: jittered radii around a circle through a centripetal Catmull-Rom loop.

Per env: K knots at angles ``2*pi*(i + U(-aj, aj))/K`` (aj < 0.5 keeps them in angular
order) and radii ``max(1 + U(-rj, rj), 0.1)``; a closed centripetal Catmull-Rom spline
through them (no cusps or loops inside a segment), arc-resampled to ``num_points`` and
scaled so the longest bounding-box side is ``1.44 * scale``. Loops are counter-clockwise.

In a gate pipeline the kernel stops at the knots: their polygon after one corner-cutting
round (its edge midpoints, ``emit_knots``) is the loop, scaled the same way
(``num_points_per_segment`` shapes the spline only).
"""

from __future__ import annotations

import warp as wp

from ..core.extents import EXTENT
from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import TWO_PI, catmull_rom_closed, resample_scaled
from ..seeds import stage_rng
from .common import (
    SCALE,
    SEGMENT_POINTS,
    DenseLoop,
    DenseScratch,
    emit_knots,
    knot_loop,
    launch_sampler,
)

wp.set_module_options({"enable_backward": False})

SALT_POLAR = wp.constant(wp.uint32(0x907A2002))
#: Corner-cutting rounds of the gate loop (``emit_knots``).
KNOT_ROUNDS = wp.constant(1)


@wp.func
def _draw_knots(
    st: wp.uint32, rj: float, aj: float, k: int, knots: wp.array(dtype=wp.vec2f), kb: int
) -> wp.uint32:
    """The ``k`` knots at jittered angles and radii into ``knots[kb ..]``; returns the advanced
    RNG state."""
    for i in range(k):
        r = wp.max(1.0 + (2.0 * wp.randf(st) - 1.0) * rj, 0.1)
        th = TWO_PI * (float(i) + (2.0 * wp.randf(st) - 1.0) * aj) / float(k)
        knots[kb + i] = wp.vec2f(r * wp.cos(th), r * wp.sin(th))
    return st


@wp.kernel
def _polar_kernel(
    # inputs
    eff_seed: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    # parameters
    radial_jitter: wp.array(dtype=wp.float32),
    angular_jitter: wp.array(dtype=wp.float32),
    scale: wp.array(dtype=wp.float32),
    # static
    knots_k: int,
    npseg: int,
    num_points: int,
    knots_only: int,
    # scratch
    knots: wp.array(dtype=wp.vec2f),
    loop: DenseScratch,
    # outputs
    line_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    st = stage_rng(eff_seed[e], SALT_POLAR)
    # ranges: RADIAL_JITTER, ANGULAR_JITTER (an out-of-range value is flagged PARAM_RANGE)
    rj = radial_jitter[e]
    aj = angular_jitter[e]
    kb = e * knots_k
    st = _draw_knots(st, rj, aj, knots_k, knots, kb)
    db = e * knots_k * npseg
    if knots_only != 0:  # a gate loop: the knot polygon
        emit_knots(knots, kb, knots_k, KNOT_ROUNDS, loop.dense_len, db, line_out, e * num_points,
                   num_points, EXTENT * scale[e])  # fmt: skip
        return
    catmull_rom_closed(knots, kb, knots_k, npseg, loop.dense, db)
    lb = e * num_points
    extent = EXTENT * scale[e]
    resample_scaled(loop.dense, db, knots_k * npseg, loop.dense_len, db, line_out, lb, num_points,
                    extent)  # fmt: skip


KNOTS = Tunable(
    "knots",
    12,
    lo=4,
    hi=64,
    config="polar_num_knots",
    unit="knots",
    doc="knots K of the polar loop.",
)
RADIAL_JITTER = Tunable(
    "radial_jitter",
    0.6,
    lo=0.0,
    hi=0.85,
    dynamic=True,
    config="polar_radial_jitter",
    doc="knot radius is 1 + U(-j, j).",
)
ANGULAR_JITTER = Tunable(
    "angular_jitter",
    0.3,
    lo=0.0,
    hi=0.45,
    dynamic=True,
    config="polar_angular_jitter",
    unit="knot cells",
    doc="knot angle jitter as a fraction of a knot cell (< 0.5 keeps the knots in angular order).",
)


class SamplerPolar(Stage):
    """Polar knot sampler (``generator="polar"``)."""

    role = "sampler"
    FIELDS = (KNOTS, SEGMENT_POINTS, RADIAL_JITTER, ANGULAR_JITTER, SCALE)

    def allocate(self, ws: Workspace) -> None:
        v, E = self.values, ws.layout.num_envs
        self.knots = ws.zeros(E * v.knots, wp.vec2f, f"{self.name} knots")
        self.loop = DenseLoop(ws, v.knots, v.num_points_per_segment, self.name, crossings=False)

    def enqueue(self, ws: Workspace, params: dict) -> None:
        v = self.values
        launch_sampler(
            ws,
            _polar_kernel,
            parameters=[params["radial_jitter"], params["angular_jitter"], params["scale"]],
            static=[v.knots, v.num_points_per_segment, ws.layout.num_points, int(knot_loop(ws))],
            scratch=[self.knots, self.loop.scratch],
        )


__all__ = ["ANGULAR_JITTER", "KNOTS", "RADIAL_JITTER", "SamplerPolar"]
