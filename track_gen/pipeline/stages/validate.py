"""Validity: ``valid[e]`` and named ``fail_mask[e]`` bits for each rebuilt env.

Checks on the final centerline (one thread per env):

* NONFINITE: any real bead is NaN/inf.
* TURNING: ``| |sum of wrapped heading changes| - 2*pi | > turning_tol``.
* THICKNESS: the smallest Menger radius, or half the smallest distance between beads
  farther apart in index than the band, is below ``(1 - thickness_tol) * hw``.

Bits raised by earlier stages (TRUNCATED, DEGENERATE, NONFINITE) are kept.
"""

from __future__ import annotations

import warp as wp

from ...geometry import all_finite, menger_curvature, wrap_angle
from ...results import FailBit
from ...tunable import Tunable
from ..stage import Stage, Workspace
from .inflate import HALF_WIDTH
from .relax import BAND, band_for, index_gap

wp.set_module_options({"enable_backward": False})

_TURNING = wp.constant(int(FailBit.TURNING))
_THICKNESS = wp.constant(int(FailBit.THICKNESS))
_NONFINITE = wp.constant(int(FailBit.NONFINITE))
_DEGENERATE = wp.constant(int(FailBit.DEGENERATE))


@wp.kernel
def _validate_kernel(
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    length: wp.array(dtype=wp.float32),
    beads: wp.array(dtype=wp.vec2f),
    fail: wp.array(dtype=wp.int32),
    turning_tol: wp.array(dtype=wp.float32),
    thickness_tol: wp.array(dtype=wp.float32),
    hw: float,
    fixed_band: int,
    n_max: int,
    fail_mask_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    bits = fail[e]
    n = count[e]
    base = e * n_max
    if n < 4:
        bits = bits | _DEGENERATE
    elif not all_finite(beads, base, n):
        bits = bits | _NONFINITE
    else:
        # turning number
        turn = float(0.0)
        prev = beads[base] - beads[base + n - 1]
        a_prev = wp.atan2(prev[1], prev[0])
        for i in range(n):
            d = beads[base + (i + 1) % n] - beads[base + i]
            a = wp.atan2(d[1], d[0])
            turn += wrap_angle(a - a_prev)
            a_prev = a
        # written so that a NaN tolerance fails the check instead of passing it
        if not (wp.abs(wp.abs(turn) - 6.28318530717959) <= turning_tol[e]):
            bits = bits | _TURNING
        # thickness: curvature radius and non-neighbour separation
        floor_r = (1.0 - thickness_tol[e]) * hw
        thin = int(0)
        if not wp.isfinite(floor_r):
            thin = 1
        for i in range(n):
            k = menger_curvature(
                beads[base + (i + n - 1) % n], beads[base + i], beads[base + (i + 1) % n]
            )
            if k * floor_r > 1.0:
                thin = 1
        if thin == 0:
            band = band_for(hw, length[e] / float(n), fixed_band, n)
            dmin = 2.0 * floor_r
            d2min = dmin * dmin
            for i in range(n):
                if thin != 0:
                    break
                xi = beads[base + i]
                for j in range(i + band + 1, n):
                    if index_gap(i, j, n) <= band:
                        continue
                    d = beads[base + j] - xi
                    if wp.abs(d[0]) < dmin and wp.abs(d[1]) < dmin:
                        if wp.dot(d, d) < d2min:
                            thin = 1
                            break
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
    lo=0.0,
    hi=1.0,
    lo_open=True,
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
    """Track validity (``"validate"``): writes ``result.valid`` and ``result.fail_mask``."""

    FIELDS = (HALF_WIDTH, BAND, TURNING_TOL, THICKNESS_TOL)

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
                ws.fail,
                params["turning_tol"],
                params["thickness_tol"],
                float(v.half_width),
                int(v.band or 0),
                lay.N_max,
            ],
            outputs=[r.fail_mask, r.valid],
            device=lay.device,
        )
