"""``per_item`` kernels of the band collider's ``"segments"`` method (see
:mod:`track_gen.tools.band_collision`).

* Refresh: ``kernels.band_beads_kernel`` (one thread per env) decides each
  env's usable beads, :func:`_strip_bead_kernel` (one thread per bead slot) packs the borders,
  then
  :func:`_strip_chunk_kernel` (one thread per chunk) bounds each chunk of quads.
* Query: :func:`_segments_parts_kernel` runs five threads per box: part 4 scans the box
  against both borders (:func:`_scan_box`), part ``k < 4`` tests corner ``k`` against the band
  (an integer flag) and, when it is outside, scans for its nearest border point in full;
  :func:`_segments_combine_kernel` (one thread per box) then folds the four corners in order
  (the deepest, the first among equals) and writes the answer.

Each part calls the functions the ``per_env`` kernels call with the same arguments, and the
fold visits the corners in the same order with the same strict comparison, so the answers
are bitwise those of the ``per_env`` path: a corner's full scan can only end lower than the
``per_env`` scan that stops at the deepest corner so far, and such a corner is not the
deepest either way. No float atomics; no reduction depends on thread order.
"""

from __future__ import annotations

import warp as wp

from ..shared import make_box as _make_box
from .kernels import _corner, _Hit, _query_box
from .segments import (
    _band,
    _chunk_bounds,
    _first_chunk,
    _in_band,
    _no_hit,
    _scan_box,
    _scan_point,
    _seed_quad,
    _strip_row,
    _write_answer,
)

# fuse_fp off: no multiply-add contraction, so the per_env and per_item kernels round alike
# on every device (CUDA would otherwise contract them differently).
wp.set_module_options({"enable_backward": False, "fuse_fp": False})

#: Threads per box of the parts kernel: four corners, then the box scan.
QUERY_PARTS = 5
_BOX_PART = wp.constant(4)


@wp.kernel
def _strip_bead_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    beads: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    # outputs
    strip_out: wp.array(dtype=wp.vec4f),
):
    e, i = wp.tid()
    if mask[e] == 0:
        return
    row = e * n_max + i
    strip_out[row] = _strip_row(inner, outer, row, i, beads[e])


@wp.kernel
def _strip_chunk_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    beads: wp.array(dtype=wp.int32),
    strip: wp.array(dtype=wp.vec4f),
    # static
    n_max: int,
    nch: int,
    # outputs
    chunk_box_out: wp.array(dtype=wp.vec4f),
):
    e, c = wp.tid()
    if mask[e] == 0:
        return
    chunk_box_out[e * nch + c] = _chunk_bounds(strip, e * n_max, beads[e], c)


@wp.kernel
def _segments_parts_kernel(
    # inputs
    beads: wp.array(dtype=wp.int32),
    strip: wp.array(dtype=wp.vec4f),
    chunk_box: wp.array(dtype=wp.vec4f),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    # static
    n_max: int,
    nch: int,
    nbox: int,
    # outputs
    box_hit_out: wp.array(dtype=_Hit),
    inside_out: wp.array(dtype=wp.int32),
    corner_hit_out: wp.array(dtype=_Hit),
):
    """Part ``part`` of box ``row``: the box scan (``part == 4``) into ``box_hit_out[row]``, or
    corner ``part``'s in-band flag into ``inside_out[4 * row + part]`` and, outside, its
    nearest border point into ``corner_hit_out[4 * row + part]`` (d2 -1 when inside)."""
    row, part = wp.tid()
    e = row // nbox
    n = beads[e]
    if n < 3:
        return
    bx = _make_box(position[row], orientation[row], half_extents[row])
    if bx.ok == 0:
        return
    band = _band(strip, chunk_box, e, n_max, nch, n)
    first = _first_chunk(band, bx.p - bx.ext, bx.p + bx.ext)
    seed = _seed_quad(band, first, bx.p)
    if part == _BOX_PART:
        box_hit_out[row] = _scan_box(band, bx, first, seed)
        return
    c = _corner(bx, part)
    ins = _in_band(band, c, seed)
    inside_out[4 * row + part] = ins
    ch = _no_hit()
    if ins == 0:
        ch = _scan_point(band, c, seed, -1.0)
    corner_hit_out[4 * row + part] = ch


@wp.kernel
def _segments_combine_kernel(
    # inputs
    beads: wp.array(dtype=wp.int32),
    strip: wp.array(dtype=wp.vec4f),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    box_hit: wp.array(dtype=_Hit),
    inside_flags: wp.array(dtype=wp.int32),
    corner_hit: wp.array(dtype=_Hit),
    # static
    n_max: int,
    nbox: int,
    # outputs
    oob_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    nearest_out: wp.array(dtype=wp.vec2f),
    normal_out: wp.array(dtype=wp.vec2f),
    boundary_out: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    bx = _query_box(
        tid,
        beads[tid // nbox],
        position,
        orientation,
        half_extents,
        oob_out,
        distance_out,
        nearest_out,
        normal_out,
        boundary_out,
    )
    if bx.ok == 0:
        return
    e = tid // nbox
    inside = int(0)
    for k in range(4):
        inside = inside | (inside_flags[4 * tid + k] << k)
    hit = box_hit[tid]
    deep = _no_hit()
    if not (inside == 15 and hit.d2 > 0.0):
        for k in range(4):
            if (inside >> k) & 1 == 0:
                ch = corner_hit[4 * tid + k]
                if ch.d2 > deep.d2:
                    deep = ch
    _write_answer(
        tid,
        inside,
        hit,
        deep,
        strip,
        e * n_max,
        beads[e],
        oob_out,
        distance_out,
        nearest_out,
        normal_out,
        boundary_out,
    )
