"""Constant-spacing resample: the sampler's loop -> beads about ``spacing`` apart.

Per env: perimeter ``T``; ``count = floor(T/spacing) + 1`` reduced while
``(count-1)*spacing >= T``; bead k at arc ``k*T/count``, so every edge is
``T/count`` in ``[spacing, spacing*count/(count-1))`` and the loop has no short closing gap
(which would otherwise look like a pinch to the relaxation's separation test). Rows past
count are NaN. A loop
that needs more than ``N_max`` beads keeps ``N_max`` and gets ``FailBit.TRUNCATED``; a
non-finite loop gets ``NONFINITE``; fewer than 4 beads ``DEGENERATE``. The bead count is
compared with the capacity in float64 before any int conversion, so no loop size, spacing or
user centerline can overflow it.
"""

from __future__ import annotations

import warp as wp

from ...geometry import NAN, all_finite, closed_length, emit_along_loop
from ...results import FailBit
from ...tunable import Tunable
from ..stage import Stage, Workspace
from .inflate import HALF_WIDTH

wp.set_module_options({"enable_backward": False})

_TRUNCATED = wp.constant(int(FailBit.TRUNCATED))
_NONFINITE = wp.constant(int(FailBit.NONFINITE))
_DEGENERATE = wp.constant(int(FailBit.DEGENERATE))


@wp.kernel
def _resample_kernel(
    line: wp.array(dtype=wp.vec2f),
    active: wp.array(dtype=wp.int32),
    num_points: int,
    spacing: float,
    n_max: int,
    beads_out: wp.array(dtype=wp.vec2f),
    count_out: wp.array(dtype=wp.int32),
    fail_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    lb = e * num_points
    bb = e * n_max
    n = int(0)
    if all_finite(line, lb, num_points):
        total = closed_length(line, lb, num_points)
        sp = wp.float64(spacing)
        if total > wp.float64(0.0):
            ratio = total / sp
            if ratio >= wp.float64(n_max + 1) or not wp.isfinite(ratio):
                # more beads than the capacity (compared before any int conversion, so a
                # loop of any size clamps instead of overflowing the count)
                fail_out[e] = fail_out[e] | _TRUNCATED
                n = n_max
            else:
                n = int(wp.floor(ratio)) + 1
                while n > 1 and wp.float64(n - 1) * sp >= total:
                    n -= 1
                if n > n_max:
                    fail_out[e] = fail_out[e] | _TRUNCATED
                    n = n_max
        emit_along_loop(line, lb, num_points, beads_out, bb, n, total, wp.float64(n))
    else:
        fail_out[e] = fail_out[e] | _NONFINITE
    if n < 4:
        fail_out[e] = fail_out[e] | _DEGENERATE
    for k in range(n, n_max):
        beads_out[bb + k] = wp.vec2f(NAN, NAN)
    count_out[e] = n


SPACING = Tunable(
    "spacing",
    None,
    kind="float",
    lo=1.0e-6,
    hi=1.0e6,
    optional=True,
    unit="track units",
    doc="arc distance between output beads; None is 0.6 * half_width.",
)


def resolved_spacing(spacing, half_width) -> float:
    """The bead spacing: ``spacing``, or ``0.6 * half_width`` when it is None."""
    return float(spacing) if spacing is not None else 0.6 * float(half_width)


class ResampleConstantSpacing(Stage):
    """Constant-spacing bead resample (``"resample"``): ``line`` -> ``beads``, ``count``."""

    FIELDS = (SPACING, HALF_WIDTH)

    def enqueue(self, ws: Workspace, params: dict) -> None:
        lay = ws.layout
        wp.launch(
            _resample_kernel,
            lay.num_envs,
            inputs=[
                ws.line,
                ws.active,
                lay.num_points,
                resolved_spacing(self.values.spacing, self.values.half_width),
                lay.N_max,
            ],
            outputs=[ws.beads, ws.count, ws.fail],
            device=lay.device,
        )
