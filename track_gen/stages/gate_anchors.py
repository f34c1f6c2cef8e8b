"""Gate placement: gates along the sampler's loop, ordered, separated, at an altitude.

Per env (one thread), from the sampler's closed loop ``ws.line`` (any track sampler: the
gates follow the same shapes as the tracks):

1. ``K ~ U{num_gates_min .. num_gates_max}`` gates; gate k at arc
   ``(k + 0.5 + U(-j, j)) * L / K`` along the loop (``j = gate_jitter < 0.5`` keeps them in
   loop order).
2. ``random_pairs`` ordering: consecutive pairs ``(2p, 2p+1)`` are shuffled as units
   (Fisher-Yates on the pairs), which makes crossing courses; ``ccw`` keeps loop order.
3. Separation: Gauss-Seidel rounds push any two gates closer than ``2 * gate_radius`` apart
   by half the deficit each (a coincident pair along a direction hashed from the pair and
   the round); a round that moves nothing ends the solve.
4. Altitude per gate (``z_profile``): flat, uniform in ``[z_min, z_max]``, a random walk
   from ``z_base`` with steps ``U(-1, 1) * z_max_step * plan distance``, clamped, or the
   ``noise`` profile of :mod:`.elevate` at the gate's arc fraction (placement arc / L).

Writes ``result.position`` and ``result.count`` (rows past ``K`` are left as they are in the
staging buffers: the commit writes the result's NaN padding); a non-finite loop (or one whose
length overflows) gives ``count = 0`` and ``FailBit.NONFINITE``.

Cost per env: one pass over the loop (finiteness and length), one forward walk placing every
gate (``O(num_points + K)``), ``O(K^2)`` separation pairs per round (squared distances first).
The gate pipeline's samplers write a short loop: the corner-cut polygon of their knots
(bezier, hull, polar, checkpoint; ``stages/common.emit_knots``) or a loop at gate resolution
(``GateGenConfig``'s ``num_points``; ``docs/gates.md``, "The gate loop").
"""

from __future__ import annotations

import warp as wp

from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import TWO_PI
from ..results import FailBit
from ..seeds import stage_rng
from .elevate import (
    Z_BASE,
    Z_CODES,
    Z_KNOTS,
    Z_MAX,
    Z_MAX_STEP,
    Z_MIN,
    Z_NOISE,
    Z_PROFILE,
    Z_RANDOM_WALK,
    Z_UNIFORM,
    noise_height,
)

wp.set_module_options({"enable_backward": False})

SALT_GATES = wp.constant(wp.uint32(0x6A7E5007))
_NONFINITE = wp.constant(int(FailBit.NONFINITE))
ORDER_CCW = wp.constant(0)
ORDER_RANDOM_PAIRS = wp.constant(1)


@wp.func
def _loop_length(line: wp.array(dtype=wp.vec2f), lb: int, n: int) -> wp.float64:
    """Perimeter of the closed loop ``line[lb .. lb+n)`` (float64 accumulation). A NaN or inf
    coordinate makes its two segments, hence the total, non-finite: the loop's finiteness
    check is ``isfinite(total)``."""
    total = wp.float64(0.0)
    p = line[lb]
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        q = line[lb + j]
        total += wp.float64(wp.length(q - p))
        p = q
    return total


@wp.kernel
def _gate_anchors_kernel(
    # inputs
    line: wp.array(dtype=wp.vec2f),
    active: wp.array(dtype=wp.int32),
    eff_seed: wp.array(dtype=wp.int32),
    # parameters
    jitter: wp.array(dtype=wp.float32),
    z_base: wp.array(dtype=wp.float32),
    z_min: wp.array(dtype=wp.float32),
    z_max: wp.array(dtype=wp.float32),
    z_max_step: wp.array(dtype=wp.float32),
    # static
    num_points: int,
    max_gates: int,
    num_min: int,
    num_max: int,
    ordering: int,
    radius: float,
    solve_iters: int,
    z_profile: int,
    z_knots: int,
    # scratch
    xy: wp.array(dtype=wp.vec2f),
    u_gate: wp.array(dtype=wp.float32),
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    count_out: wp.array(dtype=wp.int32),
    fail_inout: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    lb = e * num_points
    gb = e * max_gates
    k_gates = int(0)
    total64 = _loop_length(line, lb, num_points)
    if wp.isfinite(total64):
        st = stage_rng(eff_seed[e], SALT_GATES)
        k_gates = wp.min(num_min + int(wp.randf(st) * float(num_max - num_min + 1)), num_max)
        total = float(total64)
        j = jitter[e]  # range: JITTER (an out-of-range value is flagged PARAM_RANGE)
        slot = total / float(k_gates)
        # one forward walk places every gate: the arcs ascend (|jitter| < 0.5); an arc behind
        # the walk (only an out-of-range jitter makes one) restarts it from the first point
        seg_i = int(0)
        acc = float(0.0)
        a = line[lb]
        b = line[lb + 1]
        seg = wp.length(b - a)
        for k in range(k_gates):
            s = (float(k) + 0.5 + (2.0 * wp.randf(st) - 1.0) * j) * slot
            if s < acc:
                seg_i = 0
                acc = 0.0
                a = line[lb]
                b = line[lb + 1]
                seg = wp.length(b - a)
            while acc + seg < s and seg_i < num_points - 1:
                acc += seg
                seg_i += 1
                nxt = seg_i + 1
                if nxt == num_points:
                    nxt = 0
                a = b
                b = line[lb + nxt]
                seg = wp.length(b - a)
            t = wp.clamp((s - acc) / wp.max(seg, 1.0e-12), 0.0, 1.0)
            xy[gb + k] = a + t * (b - a)
            u_gate[gb + k] = s / total
        if ordering == ORDER_RANDOM_PAIRS:
            pairs = k_gates // 2
            for p in range(pairs - 1, 0, -1):
                q = wp.min(int(wp.randf(st) * float(p + 1)), p)
                a0 = xy[gb + 2 * p]
                a1 = xy[gb + 2 * p + 1]
                xy[gb + 2 * p] = xy[gb + 2 * q]
                xy[gb + 2 * p + 1] = xy[gb + 2 * q + 1]
                xy[gb + 2 * q] = a0
                xy[gb + 2 * q + 1] = a1
        # Gauss-Seidel separation in plan view (squared distances first: most pairs are far)
        d_min = 2.0 * radius
        d_min2 = d_min * d_min
        for r in range(solve_iters):
            moved = int(0)
            for ia in range(k_gates):
                pa = xy[gb + ia]
                for ib in range(ia + 1, k_gates):
                    d = xy[gb + ib] - pa
                    dd = wp.dot(d, d)
                    if dd < d_min2:
                        dist = wp.sqrt(dd)
                        if dist + 1.0e-8 < d_min:
                            u = wp.vec2f(0.0, 0.0)
                            if dist > 1.0e-8:
                                u = d / dist
                            else:
                                h = wp.randf(wp.rand_init(ia * 7919 + ib * 104729 + r))
                                u = wp.vec2f(wp.cos(TWO_PI * h), wp.sin(TWO_PI * h))
                            push = 0.5 * (d_min - dist)
                            pa = pa - push * u
                            xy[gb + ia] = pa
                            xy[gb + ib] = xy[gb + ib] + push * u
                            moved = 1
            if moved == 0:
                break
        # altitude
        zlo = wp.min(z_min[e], z_max[e])
        zhi = wp.max(z_min[e], z_max[e])
        z = z_base[e]
        for k in range(k_gates):
            g = xy[gb + k]
            if z_profile == Z_UNIFORM:
                z = zlo + wp.randf(st) * (zhi - zlo)
            elif z_profile == Z_NOISE:
                z = noise_height(eff_seed[e], u_gate[gb + k], z_knots, zlo, zhi)
            elif z_profile == Z_RANDOM_WALK:
                if k > 0:
                    step = wp.length(g - xy[gb + k - 1])
                    z = wp.clamp(z + (2.0 * wp.randf(st) - 1.0) * z_max_step[e] * step, zlo, zhi)
                else:
                    z = wp.clamp(z_base[e], zlo, zhi)
            position_out[gb + k] = wp.vec3f(g[0], g[1], z)
    else:
        fail_inout[e] = fail_inout[e] | _NONFINITE
    count_out[e] = k_gates


MIN_GATES = Tunable(
    "min_gates",
    4,
    lo=2,
    hi=256,
    unit="gates",
    doc="validity floor on the gate count (FailBit.GATE_COUNT below it).",
)
NUM_GATES_MIN = Tunable(
    "num_gates_min",
    8,
    lo=MIN_GATES,
    hi=256,
    unit="gates",
    doc="fewest gates an env draws (>= min_gates, so no course is built below the floor).",
)
NUM_GATES_MAX = Tunable(
    "num_gates_max",
    12,
    lo=NUM_GATES_MIN,
    hi=256,
    unit="gates",
    doc="most gates an env draws: the count is uniform in [num_gates_min, num_gates_max].",
)
MAX_GATES = Tunable(
    "max_gates",
    32,
    lo=NUM_GATES_MAX,
    hi=256,
    unit="gates",
    doc="per-env gate capacity, the stride of every gate array.",
)
JITTER = Tunable(
    "jitter",
    0.25,
    lo=0.0,
    hi=0.45,
    dynamic=True,
    config="gate_jitter",
    unit="slots",
    doc="gate k sits at arc (k + 0.5 + U(-j, j)) * L / K along the loop (< 0.5 keeps loop order).",
)
ORDERING = Tunable(
    "ordering",
    "ccw",
    choices=("ccw", "random_pairs"),
    config="gate_ordering",
    doc="ccw flies the gates in loop order; random_pairs shuffles consecutive pairs as units "
    "(crossing courses).",
)
RADIUS = Tunable(
    "radius",
    0.025,
    lo=0.0,
    hi=1.0e6,
    config="gate_radius",
    unit="track units",
    doc="gates are pushed apart until their centres are at least 2 * gate_radius apart in "
    "plan view.",
)
SOLVE_ITERS = Tunable(
    "solve_iters",
    8,
    lo=0,
    hi=1000,
    config="gate_solve_iters",
    unit="rounds",
    doc="Gauss-Seidel separation rounds (0 disables the separation).",
)
_ORDER_CODES = {"ccw": 0, "random_pairs": 1}


class GateAnchors(Stage):
    """Gate placement (``"gate_anchors"``): ``ws.line`` -> ``result.position``, ``count``."""

    families = ("gates",)
    FIELDS = (
        MIN_GATES,
        NUM_GATES_MIN,
        NUM_GATES_MAX,
        MAX_GATES,
        JITTER,
        ORDERING,
        RADIUS,
        SOLVE_ITERS,
        Z_PROFILE,
        Z_BASE,
        Z_MIN,
        Z_MAX,
        Z_MAX_STEP,
        Z_KNOTS,
    )

    def allocate(self, ws: Workspace) -> None:
        lay = ws.layout
        self.xy = ws.zeros(lay.num_envs * lay.N_max, wp.vec2f, f"{self.name} plan positions")
        self.u = ws.zeros(lay.num_envs * lay.N_max, wp.float32, f"{self.name} arc fractions")

    def enqueue(self, ws: Workspace, params: dict) -> None:
        v, lay, r = self.values, ws.layout, ws.result
        wp.launch(
            _gate_anchors_kernel,
            lay.num_envs,
            inputs=[
                ws.line,
                ws.active,
                ws.eff_seed,
                params["jitter"],
                params["z_base"],
                params["z_min"],
                params["z_max"],
                params["z_max_step"],
                lay.num_points,
                lay.N_max,
                v.num_gates_min,
                min(v.num_gates_max, lay.N_max),
                _ORDER_CODES[v.ordering],
                float(v.radius),
                v.solve_iters,
                Z_CODES[v.z_profile],
                v.z_knots,
            ],
            outputs=[self.xy, self.u, r.position, r.count, ws.fail],
            device=lay.device,
        )
