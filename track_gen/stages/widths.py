"""Per-bead road widths: the width path of real circuits through resample, inflate, validate.

A sampler that has widths (``real_track``) writes ``ws.line_width`` (vec2f
``[E*num_points]``: left and right width of each loop point, track units, left = the side
of the plan-view left normal). Then, and only then, the stages launch these kernels after
their own (a pipeline without widths runs exactly the kernels it always ran, so generated
tracks keep their bytes):

* ``resample``: :func:`launch_bead_widths` interpolates the widths at every bead's arc
  position on the loop (the same arc table and fraction the bead itself was placed with)
  into ``ws.bead_width`` (vec2f ``[E*N_max]``, NaN past ``count``);
* ``inflate``: :func:`launch_width_borders` rewrites the borders as ``c + w_left * n`` and
  ``c - w_right * n`` (``n`` the left normal); the one with the larger absolute shoelace
  area (float64, bead order) is ``outer``, ties to the left one as with a constant width;
* ``validate`` checks the thickness against the local widths (its kernel's ``widths``
  switch, in ``validate.py``).

A sampler of real circuits whose centre line crosses itself on a bridge also writes
``ws.line_level`` (:func:`allocate_levels`): ``resample`` carries it to ``ws.bead_level`` with
the widths, and ``validate`` reads it (its ``levels`` switch).

:func:`allocate_widths` gives a workspace the two width buffers (once, whichever stage asks
first). Every kernel is one thread per env (``resample``'s per bead), reads only active envs
and allocates nothing.
"""

from __future__ import annotations

import warp as wp

from ..geometry import cross2
from .resample_kernels import emit_rows_kernel

wp.set_module_options({"enable_backward": False, "fuse_fp": False})


def allocate_levels(ws, owner: str) -> None:
    """Give ``ws`` its ``line_level`` (zeros) and ``bead_level`` (NaN) buffers: the overpass
    levels of a sampler whose loops cross themselves on bridges (``engine.stage.Workspace``)."""
    lay = ws.layout
    if ws.line_level is None:
        ws.line_level = ws.zeros(lay.num_envs * lay.num_points, wp.vec2f, f"{owner} line levels")
    if ws.bead_level is None:
        nan = float("nan")
        ws.bead_level = ws.budget.full(
            lay.num_envs * lay.N_max, wp.vec2f(nan, nan), wp.vec2f, "bead levels"
        )


def allocate_widths(ws, owner: str) -> None:
    """Give ``ws`` its ``line_width`` (zeros) and ``bead_width`` (NaN) buffers unless a stage
    before did (``owner`` names the stage in the allocation budget's error)."""
    lay = ws.layout
    if ws.line_width is None:
        ws.line_width = ws.zeros(lay.num_envs * lay.num_points, wp.vec2f, f"{owner} line widths")
    if ws.bead_width is None:
        nan = float("nan")
        ws.bead_width = ws.budget.full(
            lay.num_envs * lay.N_max, wp.vec2f(nan, nan), wp.vec2f, "bead widths"
        )


# --------------------------------------------------------------------------- resample
def launch_bead_widths(ws, arc: wp.array, edge: wp.array) -> None:
    """``ws.bead_width`` from ``ws.line_width`` with the resample stage's arc table
    (``arc`` float64 ``[E*(num_points+1)]``, ``edge`` float32 ``[E*num_points]``), after
    the resample kernels have written ``ws.count``: one thread per bead row, the kernel that
    places the per_item beads."""
    lay = ws.layout
    wp.launch(
        emit_rows_kernel,
        (lay.num_envs, lay.N_max),
        inputs=[ws.line_width, ws.active, ws.count, arc, edge, lay.num_points, lay.N_max],
        outputs=[ws.bead_width],
        device=lay.device,
    )
    if ws.line_level is not None:  # overpass levels, the same way
        wp.launch(
            emit_rows_kernel,
            (lay.num_envs, lay.N_max),
            inputs=[ws.line_level, ws.active, ws.count, arc, edge, lay.num_points, lay.N_max],
            outputs=[ws.bead_level],
            device=lay.device,
        )


# --------------------------------------------------------------------------- inflate
@wp.func
def _side_point(c: wp.vec3f, nrm: wp.vec3f, w: float) -> wp.vec2f:
    return wp.vec2f(c[0] + w * nrm[0], c[1] + w * nrm[1])


@wp.kernel
def _width_borders_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    center: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    bead_width: wp.array(dtype=wp.vec2f),
    # static
    n_max: int,
    # outputs
    outer_out: wp.array(dtype=wp.vec3f),
    inner_out: wp.array(dtype=wp.vec3f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    n = count[e]
    if n < 4:
        return
    base = e * n_max
    area_l = wp.float64(0.0)
    area_r = wp.float64(0.0)
    l0 = _side_point(center[base], normal[base], bead_width[base][0])
    r0 = _side_point(center[base], normal[base], -bead_width[base][1])
    lp = l0
    rp = r0
    for i in range(1, n + 1):
        li = l0
        ri = r0
        if i < n:
            w = bead_width[base + i]
            li = _side_point(center[base + i], normal[base + i], w[0])
            ri = _side_point(center[base + i], normal[base + i], -w[1])
        area_l += wp.float64(cross2(lp, li))
        area_r += wp.float64(cross2(rp, ri))
        lp = li
        rp = ri
    left_outer = not (wp.abs(area_r) > wp.abs(area_l))
    for i in range(n):
        c = center[base + i]
        w = bead_width[base + i]
        lft = _side_point(c, normal[base + i], w[0])
        rgt = _side_point(c, normal[base + i], -w[1])
        if left_outer:
            outer_out[base + i] = wp.vec3f(lft[0], lft[1], c[2])
            inner_out[base + i] = wp.vec3f(rgt[0], rgt[1], c[2])
        else:
            outer_out[base + i] = wp.vec3f(rgt[0], rgt[1], c[2])
            inner_out[base + i] = wp.vec3f(lft[0], lft[1], c[2])


def launch_width_borders(ws) -> None:
    """Rewrite ``ws.result.outer`` / ``inner`` of the active envs from ``ws.bead_width``
    (after the inflate kernels: centerline and normals are final)."""
    lay, r = ws.layout, ws.result
    wp.launch(
        _width_borders_kernel,
        lay.num_envs,
        inputs=[ws.active, r.count, r.center, r.normal, ws.bead_width, lay.N_max],
        outputs=[r.outer, r.inner],
        device=lay.device,
    )


__all__ = ["allocate_levels", "allocate_widths", "launch_bead_widths", "launch_width_borders"]
