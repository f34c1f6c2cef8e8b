"""Gate course validity: ``valid[e]`` and named ``fail_mask[e]`` bits.

Per env (one thread):

* ``GATE_COUNT``: the count is outside ``[min_gates, max_gates]``;
* ``NONFINITE``: a NaN/inf field of a real gate, or bars too far out (beyond ``1e18``) for
  the crossing test to decide in float32; ``DEGENERATE``: a vanishing tangent;
* ``GATE_SPACING``: two centres closer than ``2 * gate_radius`` in plan view (minus a
  ``1e-4`` relative slop on the squared distance for float32 rounding; the same check
  at every scale);
* ``CROSSING_BARS``: the bars of two gates properly cross in plan view (touching or collinear
  bars are not flagged);
* ``GRADE``: consecutive gates (the closing pair included) climb more than
  ``z_valid_grade`` (0 disables).

Plan-view crossings of the course itself are legal (over/under courses).
"""

from __future__ import annotations

import warp as wp

from ...geometry import segments_cross
from ...results import FailBit
from ..stage import Stage, Workspace
from .elevate import Z_VALID_GRADE
from .gate_anchors import MIN_GATES, RADIUS

wp.set_module_options({"enable_backward": False})

_COUNT = wp.constant(int(FailBit.GATE_COUNT))
_SPACING = wp.constant(int(FailBit.GATE_SPACING))
_BARS = wp.constant(int(FailBit.CROSSING_BARS))
_GRADE = wp.constant(int(FailBit.GRADE))
_NONFINITE = wp.constant(int(FailBit.NONFINITE))
_DEGENERATE = wp.constant(int(FailBit.DEGENERATE))
#: Largest plan-view coordinate the bar crossing test can decide in float32 (its products
#: are squares of coordinate differences).
TEST_EXTENT = wp.constant(1.0e18)


@wp.func
def _xy(p: wp.vec3f) -> wp.vec2f:
    return wp.vec2f(p[0], p[1])


@wp.func
def _extent(p: wp.vec3f) -> float:
    return wp.max(wp.abs(p[0]), wp.abs(p[1]))


@wp.func
def _finite3(p: wp.vec3f) -> bool:
    return wp.isfinite(p[0]) and wp.isfinite(p[1]) and wp.isfinite(p[2])


@wp.kernel
def _gate_validate_kernel(
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    tangent: wp.array(dtype=wp.vec3f),
    half_size: wp.array(dtype=wp.float32),
    left: wp.array(dtype=wp.vec3f),
    right: wp.array(dtype=wp.vec3f),
    fail: wp.array(dtype=wp.int32),
    min_gates: int,
    max_gates: int,
    radius: float,
    grade: float,
    fail_mask_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    bits = fail[e]
    n = count[e]
    gb = e * max_gates
    if n < min_gates or n > max_gates:
        bits = bits | _COUNT
    finite = int(1)
    for i in range(n):
        if not (
            _finite3(position[gb + i])
            and _finite3(left[gb + i])
            and _finite3(right[gb + i])
            and wp.isfinite(half_size[gb + i])
        ):
            finite = 0
        elif wp.dot(tangent[gb + i], tangent[gb + i]) <= 1.0e-12:
            bits = bits | _DEGENERATE
    if finite == 0:
        bits = bits | _NONFINITE
    else:
        d_min2 = 4.0 * radius * radius
        for i in range(n):
            for j in range(i + 1, n):
                d = _xy(position[gb + j]) - _xy(position[gb + i])
                dd = wp.dot(d, d)
                if dd < d_min2 * (1.0 - 1.0e-4):
                    bits = bits | _SPACING
                if half_size[gb + i] > 0.0 or half_size[gb + j] > 0.0:
                    ext = wp.max(
                        wp.max(_extent(left[gb + i]), _extent(right[gb + i])),
                        wp.max(_extent(left[gb + j]), _extent(right[gb + j])),
                    )
                    if ext > TEST_EXTENT:
                        # the crossing products would overflow float32: undecidable, so the
                        # env is invalid rather than passed
                        bits = bits | _NONFINITE
                    elif segments_cross(
                        _xy(left[gb + i]), _xy(right[gb + i]), _xy(left[gb + j]), _xy(right[gb + j])
                    ):
                        bits = bits | _BARS
        if grade > 0.0:
            for i in range(n):
                a = position[gb + i]
                b = position[gb + (i + 1) % n]
                dxy = wp.length(_xy(b) - _xy(a))
                if wp.abs(b[2] - a[2]) > grade * wp.max(dxy, 1.0e-9):
                    bits = bits | _GRADE
    fail_mask_out[e] = bits
    ok = 0
    if bits == 0:
        ok = 1
    valid_out[e] = ok


class GateValidate(Stage):
    """Gate validity (``"gate_validate"``): writes ``result.valid`` and ``fail_mask``."""

    FIELDS = (MIN_GATES, RADIUS, Z_VALID_GRADE)

    def enqueue(self, ws: Workspace, params: dict) -> None:
        v, lay, r = self.values, ws.layout, ws.result
        wp.launch(
            _gate_validate_kernel,
            lay.num_envs,
            inputs=[
                ws.active,
                r.count,
                r.position,
                r.tangent,
                r.half_size,
                r.left,
                r.right,
                ws.fail,
                v.min_gates,
                lay.N_max,
                float(v.radius),
                float(v.z_valid_grade),
            ],
            outputs=[r.fail_mask, r.valid],
            device=lay.device,
        )
