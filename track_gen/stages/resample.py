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

Two thread layouts (``Layout.kernel_layout``), bitwise equal: ``per_env`` tabulates the loop's
arc and walks it in one thread per env; ``per_item`` tabulates in one thread per env, then
places each bead in its own thread (binary search of the table, see ``resample_kernels``).
"""

from __future__ import annotations

import warp as wp

from ..core.layout import PER_ITEM
from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import NAN
from ..geometry.polylines import lerp_on_edge
from ..results import FailBit
from .inflate import HALF_WIDTH
from .resample_kernels import emit_rows_kernel, locate, tabulate_arc
from .widths import launch_bead_widths

# fuse_fp off: no multiply-add contraction, so the per_env and per_item kernels round alike
# on every device (CUDA would otherwise contract them differently).
wp.set_module_options({"enable_backward": False, "fuse_fp": False})

_TRUNCATED = wp.constant(int(FailBit.TRUNCATED))
_NONFINITE = wp.constant(int(FailBit.NONFINITE))
_DEGENERATE = wp.constant(int(FailBit.DEGENERATE))


@wp.func
def _count_beads(
    line: wp.array(dtype=wp.vec2f),
    e: int,
    num_points: int,
    spacing: float,
    n_max: int,
    arc: wp.array(dtype=wp.float64),
    edge: wp.array(dtype=wp.float32),
    fail_inout: wp.array(dtype=wp.int32),
) -> int:
    """Tabulate env ``e``'s loop (``line[lb ..]``, table at ``arc[ab ..]``, ``edge[lb ..]``
    with ``lb = e * num_points``, ``ab = e * (num_points + 1)``), choose its bead count and
    add the fail bits it raises to ``fail_inout[e]``. Returns the count."""
    lb = e * num_points
    total, finite = tabulate_arc(line, lb, num_points, arc, e * (num_points + 1), edge, lb)
    n = int(0)
    bits = int(0)
    if finite != 0:
        sp = wp.float64(spacing)
        if total > wp.float64(0.0):
            ratio = total / sp
            if ratio >= wp.float64(n_max + 1) or not wp.isfinite(ratio):
                # more beads than the capacity (compared before any int conversion, so a
                # loop of any size clamps instead of overflowing the count)
                bits = bits | _TRUNCATED
                n = n_max
            else:
                n = int(wp.floor(ratio)) + 1
                while n > 1 and wp.float64(n - 1) * sp >= total:
                    n -= 1
                if n > n_max:
                    bits = bits | _TRUNCATED
                    n = n_max
    else:
        bits = bits | _NONFINITE
    if n < 4:
        bits = bits | _DEGENERATE
    if bits != 0:
        fail_inout[e] = fail_inout[e] | bits
    return n


@wp.kernel
def _resample_kernel(
    # inputs
    line: wp.array(dtype=wp.vec2f),
    active: wp.array(dtype=wp.int32),
    # static
    num_points: int,
    spacing: float,
    n_max: int,
    walk: int,
    # scratch
    arc: wp.array(dtype=wp.float64),
    edge: wp.array(dtype=wp.float32),
    # outputs
    beads_out: wp.array(dtype=wp.vec2f),
    count_inout: wp.array(dtype=wp.int32),
    fail_inout: wp.array(dtype=wp.int32),
):
    """One thread per env tabulates the loop and counts its beads; with ``walk`` (per_env)
    it also walks the loop for the beads (``count_inout`` holds the previous count on
    entry), else (per_item) :func:`emit_rows_kernel` places them next."""
    e = wp.tid()
    if active[e] == 0:
        return
    n = _count_beads(line, e, num_points, spacing, n_max, arc, edge, fail_inout)
    if walk != 0:
        lb = e * num_points
        ab = e * (num_points + 1)
        bb = e * n_max
        j = int(0)
        for k in range(n):
            j, frac = locate(arc, ab, num_points, edge, lb, k, n, j)
            beads_out[bb + k] = lerp_on_edge(line, lb, num_points, j, frac)
        # rows past the previous count are NaN already (NaN from allocation on)
        for k in range(n, wp.clamp(count_inout[e], n, n_max)):
            beads_out[bb + k] = wp.vec2f(NAN, NAN)
    count_inout[e] = n


SPACING = Tunable(
    "spacing",
    None,
    kind="float",
    optional=True,
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units",
    doc="arc distance between output beads; None is 0.6 * half_width.",
)


def resolved_spacing(spacing, half_width) -> float:
    """The bead spacing: ``spacing``, or ``0.6 * half_width`` when it is None."""
    return float(spacing) if spacing is not None else 0.6 * float(half_width)


class ResampleConstantSpacing(Stage):
    """Constant-spacing bead resample (``"resample"``): ``line`` -> ``beads``, ``count``.

    Scratch: ``arc`` float64 ``[E*(num_points+1)]`` (arc length at each loop vertex, the
    perimeter last), ``edge`` float32 ``[E*num_points]`` (edge lengths), track units."""

    families = ("track",)
    FIELDS = (SPACING, HALF_WIDTH)

    def allocate(self, ws: Workspace) -> None:
        lay = ws.layout
        # every row past an env's count is NaN from here on; the per_env kernel then pads
        # only the rows between the new count and the previous one
        ws.beads.fill_(wp.vec2f(float("nan"), float("nan")))
        self.arc = ws.zeros(lay.num_envs * (lay.num_points + 1), wp.float64, f"{self.name} arc")
        self.edge = ws.zeros(lay.num_envs * lay.num_points, wp.float32, f"{self.name} edges")

    def enqueue(self, ws: Workspace, params: dict) -> None:
        lay = ws.layout
        spacing = resolved_spacing(self.values.spacing, self.values.half_width)
        walk = int(lay.kernel_layout != PER_ITEM)
        wp.launch(
            _resample_kernel,
            lay.num_envs,
            inputs=[
                ws.line,
                ws.active,
                lay.num_points,
                spacing,
                lay.N_max,
                walk,
                self.arc,
                self.edge,
            ],
            outputs=[ws.beads, ws.count, ws.fail],
            device=lay.device,
        )
        if not walk:
            wp.launch(
                emit_rows_kernel,
                (lay.num_envs, lay.N_max),
                inputs=[
                    ws.line,
                    ws.active,
                    ws.count,
                    self.arc,
                    self.edge,
                    lay.num_points,
                    lay.N_max,
                ],
                outputs=[ws.beads],
                device=lay.device,
            )
        if ws.line_width is not None:
            launch_bead_widths(ws, self.arc, self.edge)
