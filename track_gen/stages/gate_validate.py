"""Gate course validity: ``valid[e]`` and named ``fail_mask[e]`` bits.

Per env (one thread):

* ``GATE_COUNT``: the count is outside ``[min_gates, max_gates]``;
* ``NONFINITE``: a NaN/inf field of a real gate, or (when some gate has a width) bars too
  far out (beyond ``1e18``) for the crossing test to decide in float32 (no crossing is tested
  then); ``DEGENERATE``: a vanishing tangent;
* ``GATE_SPACING``: two centres closer than ``2 * gate_radius`` in plan view (minus a
  ``1e-4`` relative slop on the squared distance for float32 rounding; the same check
  at every scale);
* ``CROSSING_BARS``: the bars of two gates properly cross in plan view (touching or collinear
  bars are not flagged). A pair whose centres are farther apart than twice the env's longest
  centre-to-bar-end distance (plus a rounding slop) cannot cross and skips the test;
  ``check_bars=False`` skips it for every pair (given gates stacked one above another, whose
  bars cross in plan view only: ``io.gates_spec``);
* ``GRADE``: consecutive gates (the closing pair included) climb more than
  ``z_valid_grade`` (0 disables).

Plan-view crossings of the course itself are legal (over/under courses).
"""

from __future__ import annotations

import warp as wp

from ..core.extents import COORD_LIMIT
from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import finite, finite3, segments_cross, xy
from ..results import FailBit
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
#: are squares of coordinate differences): the tools' COORD_LIMIT.
TEST_EXTENT = wp.constant(COORD_LIMIT)


CHECK_BARS = Tunable(
    "check_bars",
    True,
    kind="bool",
    config="gate_check_bars",
    doc="flag gates whose bars cross in plan view (FailBit.CROSSING_BARS); given gates stacked "
    "one above another (io.gates_spec) turn it off.",
)


@wp.func
def _extent(p: wp.vec3f) -> float:
    return wp.max(wp.abs(p[0]), wp.abs(p[1]))


@wp.kernel
def _gate_validate_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    tangent: wp.array(dtype=wp.vec3f),
    half_size: wp.array(dtype=wp.float32),
    left: wp.array(dtype=wp.vec3f),
    right: wp.array(dtype=wp.vec3f),
    fail: wp.array(dtype=wp.int32),
    # static
    min_gates: int,
    max_gates: int,
    radius: float,
    grade: float,
    check_bars: int,
    # outputs
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
    # one pass over the gates: finiteness, vanishing tangents, the bars' reach
    finite_ok = int(1)
    ext = float(0.0)
    hs_max = float(0.0)
    bar2_max = float(0.0)  # squared plan distance from a centre to its farthest bar end
    for i in range(n):
        pi3 = position[gb + i]
        li = left[gb + i]
        ri = right[gb + i]
        hs = half_size[gb + i]
        if not (finite3(pi3) and finite3(li) and finite3(ri) and finite(hs)):
            finite_ok = 0
        else:
            ti = tangent[gb + i]
            if wp.dot(ti, ti) <= 1.0e-12:
                bits = bits | _DEGENERATE
            ext = wp.max(ext, wp.max(_extent(li), _extent(ri)))
            hs_max = wp.max(hs_max, hs)
            dl = xy(li) - xy(pi3)
            dr = xy(ri) - xy(pi3)
            bar2_max = wp.max(bar2_max, wp.max(wp.dot(dl, dl), wp.dot(dr, dr)))
    if finite_ok == 0:
        bits = bits | _NONFINITE
    else:
        test_bars = int(0)
        if hs_max > 0.0 and n >= 2 and check_bars != 0:
            test_bars = 1
            if ext > TEST_EXTENT:
                # the crossing products would overflow float32: undecidable, so the env is
                # invalid rather than passed
                bits = bits | _NONFINITE
                test_bars = 0
        # every bar lies within sqrt(bar2_max) of its centre, so two bars whose centres are
        # farther apart than reach (plus a rounding slop) cannot cross
        reach = 2.0 * wp.sqrt(bar2_max) + 4.0e-6 * ext
        reach2 = 1.0001 * reach * reach
        d_min2 = 4.0 * radius * radius * (1.0 - 1.0e-4)
        for i in range(n):
            pi = xy(position[gb + i])
            for j in range(i + 1, n):
                d = xy(position[gb + j]) - pi
                dd = wp.dot(d, d)
                if dd < d_min2:
                    bits = bits | _SPACING
                if test_bars != 0:
                    if dd <= reach2 and segments_cross(
                        xy(left[gb + i]), xy(right[gb + i]), xy(left[gb + j]), xy(right[gb + j])
                    ):
                        bits = bits | _BARS
        if grade > 0.0:
            for i in range(n):
                a = position[gb + i]
                b = position[gb + (i + 1) % n]
                dxy = wp.length(xy(b) - xy(a))
                if wp.abs(b[2] - a[2]) > grade * wp.max(dxy, 1.0e-9):
                    bits = bits | _GRADE
    fail_mask_out[e] = bits
    ok = 0
    if bits == 0:
        ok = 1
    valid_out[e] = ok


class GateValidate(Stage):
    """Gate validity (``"gate_validate"``): writes ``result.valid`` and ``fail_mask``."""

    families = ("gates",)
    validates = True
    FIELDS = (MIN_GATES, RADIUS, Z_VALID_GRADE, CHECK_BARS)

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
                1 if v.check_bars else 0,
            ],
            outputs=[r.fail_mask, r.valid],
            device=lay.device,
        )
