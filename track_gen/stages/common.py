"""What the samplers share: the course size and spline density fields, the dense loop's
scratch (:class:`DenseScratch`, built by :class:`DenseLoop`), the launch of a sampler kernel,
the spline tail and the gate tail.

In a gate pipeline (``ws.layout.family == "gates"``, :func:`knot_loop`) the bezier, hull,
polar and checkpoint samplers stop at their **knots** (the corners, polygon vertices, spline
knots or checkpoints a track's curve or walk is built from) and write a coarse loop made from
them with :func:`emit_knots`, their shared tail; ``gate_anchors`` places the gates along it by
arc length. No dense curve is built and no self-crossing is tested: a gate course may cross
itself in plan view.
"""

from __future__ import annotations

import warp as wp

from ..core.tunable import Tunable
from ..geometry import (
    CrossingScratch,
    bbox_scale,
    catmull_rom_closed,
    resample_first_simple,
    resample_scaled,
)

wp.set_module_options({"enable_backward": False})

SCALE = Tunable(
    "scale",
    1.0,
    lo=1.0e-6,
    hi=1.0e6,
    dynamic=True,
    unit="track units",
    doc="isotropic course size: each sampler scales its loop so the longest bounding-box side "
    "is 1.44 * scale.",
)
SEGMENT_POINTS = Tunable(
    "num_points_per_segment",
    30,
    lo=2,
    hi=256,
    unit="points",
    doc="dense samples per spline segment (bezier cubics, Catmull-Rom spans) before the loop "
    "is arc-resampled to num_points.",
)

#: The pipeline family whose samplers write a loop made from their knots (:func:`emit_knots`).
GATES = "gates"


def knot_loop(ws) -> bool:
    """True when a sampler writes the coarse loop of its knots (a gate pipeline) rather than
    its track centerline."""
    return ws.layout.family == GATES


@wp.struct
class DenseScratch:
    """The dense loop's scratch arrays as one kernel parameter (``# scratch``), built once by
    :class:`DenseLoop` when its stage allocates.

    Attributes:
        dense: vec2f ``[E * spans * npseg]``: the curve's points (before scaling).
        dense_len: float32 ``[E * spans * npseg]``: its segment lengths (the resampling
            scratch).
        cross_boxes: vec4f ``[E * nch]``: the crossing counter's chunk boxes (a null array
            when the loop tests no crossing).
        cross_turns: float32 ``[E * nch]``: its chunk turning estimates (likewise).
    """

    dense: wp.array(dtype=wp.vec2f)
    dense_len: wp.array(dtype=wp.float32)
    cross_boxes: wp.array(dtype=wp.vec4f)
    cross_turns: wp.array(dtype=wp.float32)


class DenseLoop:
    """The dense closed curve a sampler builds before it arc-resamples it to ``num_points``
    (``npseg`` samples per span of a spline or cubic), allocated through the stage's workspace
    (``ws.zeros``), one row block per env.

    Attributes:
        dense: vec2f ``[E * spans * npseg]``: the curve's points (before scaling).
        dense_len: float32 ``[E * spans * npseg]``: its segment lengths (the resampling
            scratch).
        cross: the :class:`~track_gen.geometry.CrossingScratch` of a ``num_points`` loop (the
            self-crossing test of the resampled loop and its fallbacks), or None when the
            sampler tests no crossing (``crossings=False``).
        scratch: the :class:`DenseScratch` of these arrays, the kernel's one ``# scratch``
            parameter for them (built here, once: a captured CUDA graph keeps the struct value
            it recorded, so it is never rebuilt).
    """

    def __init__(self, ws, spans: int, npseg: int, owner: str, crossings: bool = True):
        n = ws.layout.num_envs * int(spans) * int(npseg)
        self.cross = CrossingScratch(ws, ws.layout.num_points, owner) if crossings else None
        self.dense = ws.zeros(n, wp.vec2f, f"{owner} dense loop")
        self.dense_len = ws.zeros(n, wp.float32, f"{owner} dense segment lengths")
        self.scratch = DenseScratch()
        self.scratch.dense = self.dense
        self.scratch.dense_len = self.dense_len
        if self.cross is not None:
            self.scratch.cross_boxes = self.cross.boxes
            self.scratch.cross_turns = self.cross.turns

    @property
    def nch(self) -> int:
        """Crossing chunks per env (the kernel's ``cross_nch``)."""
        return self.cross.nch


def launch_sampler(ws, kernel, *, parameters=(), static=(), scratch=(), inputs=(), outputs=None):
    """Launch a sampler's kernel over the batch, one thread per env, on the layout's device.

    The kernel's parameter groups take, in order: ``# inputs`` ``eff_seed``, ``active`` (the
    workspace's seeds and mask), then ``inputs``; ``# parameters`` ``parameters`` (the stage's
    per-env ``[E]`` arrays of ``params``); ``# static`` ``static``; ``# scratch`` ``scratch``;
    ``# outputs`` ``outputs`` (default: the loop, ``[ws.line]``).
    """
    wp.launch(
        kernel,
        ws.layout.num_envs,
        inputs=[ws.eff_seed, ws.active, *inputs, *parameters, *static, *scratch],
        outputs=[ws.line] if outputs is None else list(outputs),
        device=ws.layout.device,
    )


@wp.func
def emit_spline(
    verts: wp.array(dtype=wp.vec2f),
    vb: int,
    nv: int,
    npseg: int,
    fallback: wp.array(dtype=wp.vec2f),
    fb: int,
    n_fallback: int,
    loop: DenseScratch,
    cross_nch: int,
    e: int,
    num_points: int,
    extent: float,
    line_out: wp.array(dtype=wp.vec2f),
):
    """The spline samplers' tail (hull, voronoi) for env ``e``: a closed centripetal
    Catmull-Rom through the polygon ``verts[vb .. vb + nv)``, ``npseg`` samples per span into
    ``loop.dense`` (the env's rows from ``vb * npseg``: ``npseg`` per vertex slot), then the
    first of the spline, the polygon and the polygon ``fallback[fb .. fb + n_fallback)`` whose
    resampling does not cross itself, arc-resampled into the env's ``num_points`` rows of
    ``line_out`` with its longest bounding-box side ``extent``
    (:func:`~track_gen.geometry.resample_first_simple`: ``loop.dense_len`` from ``vb * npseg``
    and the crossing scratch from ``e * cross_nch`` are its scratch)."""
    db = vb * npseg
    catmull_rom_closed(verts, vb, nv, npseg, loop.dense, db)
    resample_first_simple(
        loop.dense, db, nv * npseg, verts, vb, nv, fallback, fb, n_fallback, loop.dense_len, db,
        loop.cross_boxes, loop.cross_turns, e * cross_nch, line_out, e * num_points, num_points,
        extent,
    )  # fmt: skip


@wp.func
def cut_corners(pts: wp.array(dtype=wp.vec2f), b: int, n: int):
    """One corner-cutting round on the closed polygon ``pts[b .. b + n)``, in place: vertex i
    becomes the midpoint of edge (i, i + 1). The midpoints are where the uniform quadratic
    B-spline of the polygon touches it; every round rounds the polygon further."""
    first = pts[b]
    for i in range(n - 1):
        pts[b + i] = 0.5 * (pts[b + i] + pts[b + i + 1])
    pts[b + n - 1] = 0.5 * (pts[b + n - 1] + first)


@wp.func
def emit_knots(
    knots: wp.array(dtype=wp.vec2f),
    kb: int,
    n: int,
    rounds: int,
    seg_len: wp.array(dtype=wp.float32),
    len_base: int,
    line_out: wp.array(dtype=wp.vec2f),
    lb: int,
    num_points: int,
    extent: float,
):
    """The gate samplers' tail: the closed knot polygon ``knots[kb .. kb + n)`` after
    ``rounds`` :func:`cut_corners` rounds (in place: ``knots`` is the caller's scratch) into
    the ``num_points`` rows of ``line_out`` from ``lb``, its bounding box centred on the
    origin with its longest side ``extent``.

    ``n <= num_points``: the ``n`` vertices, the last one repeated over the remaining rows
    (zero-length segments: the loop and its length are the polygon's). ``n > num_points``:
    the polygon arc-resampled to ``num_points`` (``seg_len`` from ``len_base``: ``n`` floats
    of scratch).
    """
    for _r in range(rounds):
        cut_corners(knots, kb, n)
    if n > num_points:
        resample_scaled(knots, kb, n, seg_len, len_base, line_out, lb, num_points, extent)
    else:
        lo = knots[kb]
        hi = lo
        for i in range(n):
            p = knots[kb + i]
            lo = wp.min(lo, p)
            hi = wp.max(hi, p)
            line_out[lb + i] = p
        bbox_scale(line_out, lb, n, wp.vec4f(lo[0], lo[1], hi[0], hi[1]), extent)
        last = line_out[lb + n - 1]
        for i in range(n, num_points):
            line_out[lb + i] = last


__all__ = [
    "GATES",
    "SCALE",
    "SEGMENT_POINTS",
    "DenseLoop",
    "DenseScratch",
    "cut_corners",
    "emit_knots",
    "emit_spline",
    "knot_loop",
    "launch_sampler",
]
