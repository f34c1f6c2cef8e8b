"""Elevation: a smooth, closed height profile along the loop (stage ``elevate``, tracks), and
the altitude profiles gates share with it.

Profiles (``z_profile``) of the height ``z(u)`` at the arc fraction ``u = s / L`` (plan-view
arc, ``0 <= u < 1``), periodic so the loop closes seamlessly at the start line:

``flat``
    ``z = 0`` everywhere. The track pipeline has no ``elevate`` stage then, so a flat track is
    byte for byte the output of a config without elevation.
``uniform``
    ``z_knots`` control heights ``U(z_min, z_max)`` evenly spaced along the loop, joined by a
    periodic uniform cubic B-spline (C2; it stays inside the knots' range, so inside
    ``[z_min, z_max]``).
``random_walk``
    the same B-spline over knots that walk from ``z_base``: knot ``k+1`` is knot ``k`` plus
    ``U(-1, 1) * z_max_step * L / z_knots`` (``z_max_step`` is a grade); the walk's drift is
    spread evenly over the knots (knot ``k`` minus ``k / z_knots`` of it) so the walk returns
    to ``z_base`` and the closing span is a step like the others, then the knots are clamped
    to ``[z_min, z_max]``. Between knots the spline's grade stays about ``z_max_step`` (a
    little more where the drift correction adds to a step).
``noise``
    ``z = mid + half * sum_h a_h sin(2 pi h u + phi_h)`` over ``h = 1 .. max(1, z_knots // 2)``
    harmonics with ``a_h`` proportional to ``1 / h`` and summing to 1 and random phases, so
    ``z`` stays in ``[z_min, z_max]`` (``mid``, ``half``: their centre and half range).

Each env draws its knots and phases from its effective seed (a stream of this stage), so a
profile is part of what (seed, epoch) decides. ``z_min > z_max`` (a per-env value written into
``params``) is read as the ordered pair.

The stage (after ``validate``, on the committed plan-view road): every bead's ``center``,
``inner`` and ``outer`` get ``z(u)`` (the road is level across its width; the borders stay at
``half_width`` from the centre in plan view); ``tangent`` becomes the unit 3D central
difference, ``normal`` stays the horizontal left normal; ``arclen`` and ``length`` become 3D
(so beads are arc-uniform in plan view, not exactly in 3D). The steepest grade
``|dz| / plan distance`` between consecutive beads above ``z_valid_grade`` (when > 0) sets
``FailBit.GRADE``.
"""

from __future__ import annotations

import warp as wp

from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import TWO_PI
from ..results import FailBit
from ..seeds import stage_rng

wp.set_module_options({"enable_backward": False})

SALT_KNOTS = wp.constant(wp.uint32(0x2E1E7A7E))
SALT_NOISE = wp.constant(wp.uint32(0x5E1F5A11))
_GRADE = wp.constant(int(FailBit.GRADE))
Z_FLAT = wp.constant(0)
Z_UNIFORM = wp.constant(1)
Z_RANDOM_WALK = wp.constant(2)
Z_NOISE = wp.constant(3)

# ------------------------------------------------------------------------------- fields
Z_PROFILE = Tunable(
    "z_profile",
    "flat",
    choices=("flat", "uniform", "random_walk", "noise"),
    doc="height profile along the loop (tracks) or altitude per gate: flat (z_base for gates, "
    "0 for tracks), uniform knots in [z_min, z_max], a random walk from z_base, or smooth "
    "periodic noise spanning [z_min, z_max].",
)
Z_BASE = Tunable(
    "z_base",
    0.0,
    lo=-1.0e6,
    hi=1.0e6,
    dynamic=True,
    unit="track units",
    doc="base altitude (flat gates, and where a random walk starts).",
)


def _not_above_z_max(value, lookup):
    z_max = lookup(Z_MAX)
    return f"must be <= z_max = {z_max!r}" if value > z_max else None


Z_MIN = Tunable(
    "z_min",
    0.0,
    lo=-1.0e6,
    hi=1.0e6,
    dynamic=True,
    rule=_not_above_z_max,
    unit="track units",
    doc="lowest altitude (<= z_max at construction; the kernel orders the pair).",
)
Z_MAX = Tunable(
    "z_max", 0.0, lo=-1.0e6, hi=1.0e6, dynamic=True, unit="track units", doc="highest altitude."
)
Z_MAX_STEP = Tunable(
    "z_max_step",
    0.0,
    lo=0.0,
    hi=1.0e6,
    dynamic=True,
    unit="grade",
    doc="random-walk steps are U(-1, 1) * z_max_step per unit of plan distance.",
)
Z_KNOTS = Tunable(
    "z_knots",
    8,
    lo=3,
    hi=64,
    unit="knots",
    doc="control knots along the loop (uniform, random_walk); noise uses z_knots // 2 harmonics.",
)


def _zero_or_float32(value, lookup):
    """0 disables the check; a positive limit must stay positive as the float32 the kernel
    reads (1e-50 would silently disable it)."""
    tiny = 1.1754944e-38
    return f"must be 0 (no check) or >= {tiny} (a float32)" if 0.0 < value < tiny else None


Z_VALID_GRADE = Tunable(
    "z_valid_grade",
    0.0,
    lo=0.0,
    hi=1.0e6,
    rule=_zero_or_float32,
    unit="grade",
    doc="a course steeper than this grade (|dz| / plan distance, between consecutive beads or "
    "gates) is invalid (FailBit.GRADE); 0 disables the check.",
)

#: Kernel codes of ``z_profile``.
Z_CODES = {"flat": 0, "uniform": 1, "random_walk": 2, "noise": 3}


# ------------------------------------------------------------------------------- profiles
@wp.func
def noise_height(eff_seed: wp.int32, u: float, knots: int, zlo: float, zhi: float) -> float:
    """The ``noise`` profile at arc fraction ``u`` (``max(1, knots // 2)`` harmonics)."""
    harmonics = wp.max(knots // 2, 1)
    norm = float(0.0)
    for h in range(1, harmonics + 1):
        norm += 1.0 / float(h)
    acc = float(0.0)
    for h in range(1, harmonics + 1):
        st = stage_rng(eff_seed, SALT_NOISE + wp.uint32(h))
        phase = TWO_PI * wp.randf(st)
        acc += (1.0 / float(h)) / norm * wp.sin(TWO_PI * float(h) * u + phase)
    return 0.5 * (zlo + zhi) + 0.5 * (zhi - zlo) * acc


@wp.func
def bspline_height(knots: wp.array(dtype=wp.float32), base: int, k: int, u: float) -> float:
    """Periodic uniform cubic B-spline over ``knots[base .. base+k)`` at ``u`` in [0, 1)."""
    t = u * float(k)
    i = int(wp.floor(t))
    f = t - float(i)
    i = ((i % k) + k) % k
    f2 = f * f
    f3 = f2 * f
    b0 = (1.0 - 3.0 * f + 3.0 * f2 - f3) / 6.0
    b1 = (4.0 - 6.0 * f2 + 3.0 * f3) / 6.0
    b2 = (1.0 + 3.0 * f + 3.0 * f2 - 3.0 * f3) / 6.0
    b3 = f3 / 6.0
    z0 = knots[base + (i + k - 1) % k]
    z1 = knots[base + i]
    z2 = knots[base + (i + 1) % k]
    z3 = knots[base + (i + 2) % k]
    return b0 * z0 + b1 * z1 + b2 * z2 + b3 * z3


@wp.kernel
def _elevate_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    eff_seed: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    # parameters
    z_base: wp.array(dtype=wp.float32),
    z_min: wp.array(dtype=wp.float32),
    z_max: wp.array(dtype=wp.float32),
    z_max_step: wp.array(dtype=wp.float32),
    # static
    profile: int,
    n_knots: int,
    valid_grade: float,
    n_max: int,
    # scratch
    knots: wp.array(dtype=wp.float32),
    # outputs
    center_inout: wp.array(dtype=wp.vec3f),
    inner_inout: wp.array(dtype=wp.vec3f),
    outer_inout: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
    arclen_inout: wp.array(dtype=wp.float32),
    length_inout: wp.array(dtype=wp.float32),
    fail_inout: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    n = wp.clamp(count[e], 0, n_max)
    total = length_inout[e]
    if n < 4 or not (total > 0.0) or not wp.isfinite(total):
        return  # degenerate: flagged by earlier stages; left flat
    base = e * n_max
    kb = e * 64
    zlo = wp.min(z_min[e], z_max[e])
    zhi = wp.max(z_min[e], z_max[e])
    seed = eff_seed[e]
    if profile == Z_UNIFORM:
        st = stage_rng(seed, SALT_KNOTS)
        for k in range(n_knots):
            knots[kb + k] = zlo + wp.randf(st) * (zhi - zlo)
    elif profile == Z_RANDOM_WALK:
        # a walk of n_knots steps from z_base; its drift is spread over the knots so the walk
        # returns to its start (the closing span is a step like the others), then clamped
        st = stage_rng(seed, SALT_KNOTS)
        z0 = wp.clamp(z_base[e], zlo, zhi)
        step = z_max_step[e] * total / float(n_knots)
        z = z0
        for k in range(n_knots):
            knots[kb + k] = z
            z = z + (2.0 * wp.randf(st) - 1.0) * step
        drift = z - z0
        for k in range(n_knots):
            knots[kb + k] = wp.clamp(knots[kb + k] - float(k) / float(n_knots) * drift, zlo, zhi)
    # heights (u from the plan-view arc), then 3D frames and arc length
    for i in range(n):
        u = wp.clamp(arclen_inout[base + i] / total, 0.0, 1.0)
        z = float(0.0)
        if profile == Z_NOISE:
            z = noise_height(seed, u, n_knots, zlo, zhi)
        elif profile != Z_FLAT:
            z = bspline_height(knots, kb, n_knots, u)
        c = center_inout[base + i]
        center_inout[base + i] = wp.vec3f(c[0], c[1], z)
        a = inner_inout[base + i]
        inner_inout[base + i] = wp.vec3f(a[0], a[1], z)
        b = outer_inout[base + i]
        outer_inout[base + i] = wp.vec3f(b[0], b[1], z)
    acc = float(0.0)
    steepest = float(0.0)
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        h = i - 1
        if h < 0:
            h = n - 1
        ci = center_inout[base + i]
        d = center_inout[base + j] - ci
        plan = wp.sqrt(d[0] * d[0] + d[1] * d[1])
        if plan > 0.0:
            steepest = wp.max(steepest, wp.abs(d[2]) / plan)
        arclen_inout[base + i] = acc
        acc += wp.length(d)
        t = center_inout[base + j] - center_inout[base + h]
        tl = wp.length(t)
        if tl > 0.0:
            tangent_out[base + i] = t / tl
    length_inout[e] = acc
    if valid_grade > 0.0 and steepest > valid_grade:
        fail_inout[e] = fail_inout[e] | _GRADE


class Elevate(Stage):
    """Track elevation (``"elevate"``): heights along the committed plan-view road, 3D frames
    and arc length, and the GRADE check (see the module docstring). Only in the pipeline when
    ``z_profile != "flat"``."""

    families = ("track",)
    FIELDS = (Z_PROFILE, Z_BASE, Z_MIN, Z_MAX, Z_MAX_STEP, Z_KNOTS, Z_VALID_GRADE)

    def allocate(self, ws: Workspace) -> None:
        self.knots = ws.zeros(ws.layout.num_envs * 64, wp.float32, f"{self.name} knots")

    def enqueue(self, ws: Workspace, params: dict) -> None:
        v, lay, r = self.values, ws.layout, ws.result
        wp.launch(
            _elevate_kernel,
            lay.num_envs,
            inputs=[
                ws.active,
                ws.eff_seed,
                r.count,
                params["z_base"],
                params["z_min"],
                params["z_max"],
                params["z_max_step"],
                Z_CODES[v.z_profile],
                v.z_knots,
                float(v.z_valid_grade),
                lay.N_max,
            ],
            outputs=[
                self.knots,
                r.center,
                r.inner,
                r.outer,
                r.tangent,
                r.arclen,
                r.length,
                ws.fail,
            ],
            device=lay.device,
        )
