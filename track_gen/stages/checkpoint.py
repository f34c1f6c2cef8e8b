"""Checkpoint sampler: steer a car through random checkpoints, keep the best of K laps.

Per env (one thread) and per candidate ``k < K`` (``checkpoint_best_of_k``), each candidate
drawing from its own stream ``stage_rng(eff_seed, SALT_CHECKPOINT + k)``:

1. ``C`` checkpoints, checkpoint ``c`` at angle ``2*pi*c/C + U(-a, a) * 2*pi/C`` and radius
   ``U(radius_min_frac, 1)`` (a > 0.5 lets neighbours swap angular order: hairpins).
2. A fixed ``N``-step open walk (``N = num_points``), step ``dl = perimeter(checkpoints)/N``:
   start at checkpoint 0 heading to checkpoint 1; each step advances the target (mod C) when
   the car is within ``lookahead_frac`` of it, then turns by
   ``clamp(gain * wrap(bearing - theta), +-turn_rate)`` and moves ``dl`` along the heading.
3. Heading-ramp closure: the walk's heading increments plus a closing increment of 0, each
   shifted by the same ``(2*pi - sum)/N`` so the total turning is exactly ``+2*pi``; unit
   steps of ``1/N`` along the rebuilt headings, minus their mean (the loop closes), minus the
   centroid. The loop is therefore counter-clockwise.
4. Proper self-crossings are counted (chunks of 16 segments; chunk pairs are skipped when their
   bounding boxes are disjoint or when the arc joining them turns by less than pi, which makes
   it monotone along one direction); counting stops once it reaches the best count so far, and
   no further candidate is built once one has no crossing. Fewest crossings wins, ties to the
   lowest ``k``, so the course is a pure function of the effective seed.
5. The winner is arc-resampled to ``num_points`` and scaled so the longest bounding-box side is
   ``1.44 * scale``.

Loops are counter-clockwise. Crossings left in the winner are handed to the relaxation and the
final validity gate (no clip fallback).

In a gate pipeline the kernel stops at the first candidate's checkpoints (step 1, stream
``k = 0``): their polygon after two corner-cutting rounds (``emit_knots``; the walk that
smooths them for tracks is not run) is the loop, scaled the same way. ``turn_rate``,
``steer_gain``, ``lookahead_frac`` and ``best_of_k`` shape the walk only.
"""

from __future__ import annotations

import warp as wp

from ..core.extents import EXTENT
from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import (
    TWO_PI,
    CrossingScratch,
    count_crossings,
    resample_scaled,
    wrap_angle,
)
from ..seeds import stage_rng
from .common import SCALE, emit_knots, knot_loop, launch_sampler

wp.set_module_options({"enable_backward": False})

SALT_CHECKPOINT = wp.constant(wp.uint32(0xC4EC0005))
BIG = wp.constant(1 << 30)
#: Corner-cutting rounds of the gate loop (``emit_knots``): two, since the checkpoints are a
#: rougher polygon than the other samplers' knots (radii down to radius_min_frac,
#: neighbours that swap).
KNOT_ROUNDS = wp.constant(2)


@wp.func
def _draw_checkpoints(
    st: wp.uint32, cp: wp.array(dtype=wp.vec2f), cpb: int, n_cp: int, rmin: float, ajit: float
) -> wp.uint32:
    """A candidate's ``n_cp`` checkpoints (step 1) into ``cp[cpb ..]``; returns the advanced
    RNG state."""
    cell = TWO_PI / float(n_cp)
    for c in range(n_cp):
        ang = cell * (float(c) + (2.0 * wp.randf(st) - 1.0) * ajit)
        r = rmin + (1.0 - rmin) * wp.randf(st)
        cp[cpb + c] = wp.vec2f(r * wp.cos(ang), r * wp.sin(ang))
    return st


@wp.func
def _walk_candidate(
    st: wp.uint32,
    cp: wp.array(dtype=wp.vec2f),
    cpb: int,
    n_cp: int,
    rmin: float,
    ajit: float,
    turn_rate: float,
    gain: float,
    look: float,
    buf: wp.array(dtype=wp.vec2f),
    b: int,
    n: int,
):
    """Build one closed, counter-clockwise candidate loop of ``n`` points in ``buf[b ..]``."""
    st = _draw_checkpoints(st, cp, cpb, n_cp, rmin, ajit)
    per = float(0.0)
    for c in range(n_cp):
        per += wp.length(cp[cpb + (c + 1) % n_cp] - cp[cpb + c])
    dl = per / float(n)
    # steer: record the heading after each step (edge j has heading buf[b + j][0])
    p = cp[cpb]
    d0 = cp[cpb + 1] - p
    theta = wp.atan2(d0[1], d0[0])
    target = int(1)
    look2 = look * look
    for j in range(n):
        dt = cp[cpb + target] - p
        if wp.dot(dt, dt) < look2:
            target = (target + 1) % n_cp
            dt = cp[cpb + target] - p
        err = wrap_angle(wp.atan2(dt[1], dt[0]) - theta)
        theta += wp.clamp(gain * err, -turn_rate, turn_rate)
        p = p + dl * wp.vec2f(wp.cos(theta), wp.sin(theta))
        buf[b + j] = wp.vec2f(theta, 0.0)
    # heading-ramp closure: total turning exactly +2*pi, closing increment = ramp
    th0 = buf[b][0]
    ramp = (TWO_PI - (buf[b + n - 1][0] - th0)) / float(n)
    inv_n = 1.0 / float(n)
    mean = wp.vec2f(0.0, 0.0)
    for j in range(n):
        h = buf[b + j][0] - th0 + float(j) * ramp
        u = inv_n * wp.vec2f(wp.cos(h), wp.sin(h))
        buf[b + j] = u
        mean += u
    mean = mean * inv_n
    q = wp.vec2f(0.0, 0.0)
    cen = wp.vec2f(0.0, 0.0)
    for j in range(n):
        ed = buf[b + j] - mean
        buf[b + j] = q
        cen += q
        q = q + ed
    cen = cen * inv_n
    for j in range(n):
        buf[b + j] = buf[b + j] - cen


@wp.kernel
def _checkpoint_kernel(
    # inputs
    eff_seed: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    # parameters
    radius_min_frac: wp.array(dtype=wp.float32),
    angle_jitter: wp.array(dtype=wp.float32),
    turn_rate: wp.array(dtype=wp.float32),
    steer_gain: wp.array(dtype=wp.float32),
    lookahead_frac: wp.array(dtype=wp.float32),
    scale: wp.array(dtype=wp.float32),
    # static
    n_cp: int,
    best_of_k: int,
    num_points: int,
    nch: int,
    knots_only: int,
    # scratch
    cps: wp.array(dtype=wp.vec2f),
    cand: wp.array(dtype=wp.vec2f),
    cand_len: wp.array(dtype=wp.float32),
    boxes: wp.array(dtype=wp.vec4f),
    turns: wp.array(dtype=wp.float32),
    # outputs
    line_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    n = num_points
    rmin = wp.clamp(radius_min_frac[e], 0.0, 0.999)
    ajit = wp.clamp(angle_jitter[e], 0.0, 1.0)
    trate = wp.clamp(turn_rate[e], 1.0e-4, 3.0)
    gain = wp.max(steer_gain[e], 1.0e-4)
    look = wp.max(lookahead_frac[e], 1.0e-4)
    cpb = e * n_cp
    if knots_only != 0:
        # a gate loop: the first candidate's checkpoints (cand_len rows hold max(n, n_cp)
        # floats: the resampling scratch of more checkpoints than num_points)
        st = stage_rng(eff_seed[e], SALT_CHECKPOINT)
        st = _draw_checkpoints(st, cps, cpb, n_cp, rmin, ajit)
        emit_knots(cps, cpb, n_cp, KNOT_ROUNDS, cand_len, e * wp.max(n, n_cp), line_out,
                   e * n, n, EXTENT * scale[e])  # fmt: skip
        return
    sb = e * nch
    best = int(BIG)
    best_slot = int(0)
    slot = int(0)
    for k in range(best_of_k):
        if best == 0:
            break
        st = stage_rng(eff_seed[e], SALT_CHECKPOINT + wp.uint32(k))
        b = (2 * e + slot) * n
        _walk_candidate(st, cps, cpb, n_cp, rmin, ajit, trate, gain, look, cand, b, n)
        cnt = int(0)
        if best_of_k > 1:
            cnt = count_crossings(cand, b, n, boxes, turns, sb, best)
        if cnt < best:
            best = cnt
            best_slot = slot
            slot = 1 - slot
    lb = e * n
    resample_scaled(
        cand, (2 * e + best_slot) * n, n, cand_len, lb, line_out, lb, n, EXTENT * scale[e]
    )


COUNT = Tunable(
    "count",
    12,
    lo=3,
    hi=64,
    config="checkpoint_count",
    unit="checkpoints",
    doc="checkpoints C the walk steers through.",
)
RADIUS_MIN_FRAC = Tunable(
    "radius_min_frac",
    0.33,
    lo=0.0,
    hi=1.0,
    hi_open=True,
    dynamic=True,
    config="checkpoint_radius_min_frac",
    doc="checkpoint radius ~ U(frac, 1) (course radius 1).",
)
ANGLE_JITTER = Tunable(
    "angle_jitter",
    0.55,
    lo=0.0,
    hi=1.0,
    dynamic=True,
    config="checkpoint_angle_jitter",
    unit="slots",
    doc="checkpoint angle jitter as a fraction of a checkpoint slot (> 0.5 lets neighbours "
    "swap: hairpins).",
)
TURN_RATE = Tunable(
    "turn_rate",
    0.42,
    lo=1.0e-6,
    hi=3.0,
    dynamic=True,
    config="checkpoint_turn_rate",
    unit="rad",
    doc="largest heading change per walk step.",
)
STEER_GAIN = Tunable(
    "steer_gain",
    0.65,
    lo=1.0e-6,
    hi=10.0,
    dynamic=True,
    config="checkpoint_steer_gain",
    doc="proportional steering gain on the heading error.",
)
LOOKAHEAD_FRAC = Tunable(
    "lookahead_frac",
    0.16,
    lo=1.0e-6,
    hi=1.0,
    dynamic=True,
    config="checkpoint_lookahead_frac",
    doc="advance to the next checkpoint inside this radius (fraction of the unit course radius).",
)
BEST_OF_K = Tunable(
    "best_of_k",
    4,
    lo=1,
    hi=16,
    config="checkpoint_best_of_k",
    unit="candidates",
    doc="candidate laps per env; the one with the fewest self-crossings wins, ties to the "
    "lowest index.",
)


class SamplerCheckpoint(Stage):
    """Checkpoint-steering sampler (``generator="checkpoint"``); loops are counter-clockwise."""

    role = "sampler"
    FIELDS = (
        COUNT,
        RADIUS_MIN_FRAC,
        ANGLE_JITTER,
        TURN_RATE,
        STEER_GAIN,
        LOOKAHEAD_FRAC,
        BEST_OF_K,
        SCALE,
    )

    def allocate(self, ws: Workspace) -> None:
        v, E, n = self.values, ws.layout.num_envs, ws.layout.num_points
        self.cps = ws.zeros(E * v.count, wp.vec2f, f"{self.name} checkpoints")
        self.cross = CrossingScratch(ws, n, self.name)
        # two candidate loops per env: the best so far and the one being built
        self.cand = ws.zeros(E * 2 * n, wp.vec2f, f"{self.name} candidate loops")
        n_len = max(n, v.count) if knot_loop(ws) else n
        self.cand_len = ws.zeros(E * n_len, wp.float32, f"{self.name} winner segment lengths")

    def enqueue(self, ws: Workspace, params: dict) -> None:
        v = self.values
        names = ("radius_min_frac", "angle_jitter", "turn_rate", "steer_gain", "lookahead_frac")
        launch_sampler(
            ws,
            _checkpoint_kernel,
            parameters=[*(params[name] for name in names), params["scale"]],
            static=[v.count, v.best_of_k, ws.layout.num_points, self.cross.nch, int(knot_loop(ws))],
            scratch=[self.cps, self.cand, self.cand_len, self.cross.boxes, self.cross.turns],
        )


__all__ = ["SamplerCheckpoint"]
