"""Kernels that write regenerated courses into a Newton model in place (pure Warp: this module
never imports newton, so it compiles where newton is not installed).

Three launches per write, each returning at once for an env whose mask is 0:

* ``_grid_kernel`` (one thread per env): the height-field shape's transform (the grid centred on
  the env's bake square) and a cleared ``clipped`` flag;
* ``_heights_kernel`` (one thread per grid row): each vertex's height, resampled bilinearly
  from the bake and normalised to the grid's fixed ``[z_lo, z_hi]`` range, into the env's block
  of ``model.heightfield_elevations``;
* ``_clip_kernel`` (one thread per bake row): ``clipped[e] = 1`` when an on-road texel lies
  outside the grid's square or its height outside ``[z_lo, z_hi]``;

plus ``_props_kernel`` (one thread per prop slot) for each group of props: a real prop's
transform (and a wall's scale), a parked transform for a slot past the env's count.
"""

from __future__ import annotations

import warp as wp

from ...core.extents import in_range3
from ...tools import PropKind

wp.set_module_options({"enable_backward": False})

_WALL = wp.constant(int(PropKind.WALL))


@wp.func
def grid_centre(frame: wp.vec4f, res: int) -> wp.vec2f:
    """Plan-view centre of an env's bake square ``(x0, y0, cell, fill)``; the origin for a
    frame that is not finite (an invalid env)."""
    half = 0.5 * frame[2] * float(res)
    c = wp.vec2f(frame[0] + half, frame[1] + half)
    if wp.isfinite(c[0]) and wp.isfinite(c[1]) and wp.isfinite(frame[3]):
        return c
    return wp.vec2f(0.0, 0.0)


@wp.func
def _texel(
    height: wp.array(dtype=wp.float32), base: int, res: int, i: int, j: int, fill: float
) -> float:
    """Height of bake texel ``(i, j)`` (``fill`` outside the grid)."""
    if i < 0 or j < 0 or i >= res or j >= res:
        return fill
    return height[base + j * res + i]


@wp.func
def bake_sample(
    height: wp.array(dtype=wp.float32), e: int, frame: wp.vec4f, res: int, p: wp.vec2f
) -> float:
    """Bilinear height of the bake of env ``e`` at the plan point ``p`` (between texel
    centres; ``fill`` beyond the grid)."""
    cell = frame[2]
    u = (p[0] - frame[0]) / cell - 0.5
    v = (p[1] - frame[1]) / cell - 0.5
    # clamp far points before the int conversion (they read fill anyway)
    u = wp.clamp(u, -2.0, float(res) + 1.0)
    v = wp.clamp(v, -2.0, float(res) + 1.0)
    i0 = int(wp.floor(u))
    j0 = int(wp.floor(v))
    a = u - float(i0)
    b = v - float(j0)
    base = e * res * res
    fill = frame[3]
    h00 = _texel(height, base, res, i0, j0, fill)
    h10 = _texel(height, base, res, i0 + 1, j0, fill)
    h01 = _texel(height, base, res, i0, j0 + 1, fill)
    h11 = _texel(height, base, res, i0 + 1, j0 + 1, fill)
    return (1.0 - b) * ((1.0 - a) * h00 + a * h10) + b * ((1.0 - a) * h01 + a * h11)


@wp.kernel
def _grid_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    hfield_shape: wp.array(dtype=wp.int32),
    # static
    res: int,
    # outputs
    shape_transform_out: wp.array(dtype=wp.transformf),
    clipped_out: wp.array(dtype=wp.int32),
):
    """The height-field shape of env ``e`` centred on its bake square (z = 0); ``clipped``
    cleared (``_clip_kernel`` sets it)."""
    e = wp.tid()
    if mask[e] == 0:
        return
    c = grid_centre(frame[e], res)
    shape_transform_out[hfield_shape[e]] = wp.transformf(
        wp.vec3f(c[0], c[1], 0.0), wp.quatf(0.0, 0.0, 0.0, 1.0)
    )
    clipped_out[e] = 0


@wp.kernel
def _heights_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    height: wp.array(dtype=wp.float32),
    frame: wp.array(dtype=wp.vec4f),
    offset: wp.array(dtype=wp.int32),
    # static
    res: int,
    grid: int,
    half_extent: float,
    z_lo: float,
    z_hi: float,
    # outputs
    elevation_out: wp.array(dtype=wp.float32),
):
    """Row ``row`` (along y) of env ``e``'s grid, Newton's row-major layout: vertex ``col``
    (along x) at ``centre + (-h + col * d, -h + row * d)``, ``d = 2h / (grid - 1)``, gets the
    bake's bilinear height there as ``(z - z_lo) / (z_hi - z_lo)`` clamped to [0, 1] (0 for an
    invalid env, a non-finite height or an empty range). One thread per row: an unmasked env
    costs ``grid`` threads that return at once."""
    e, row = wp.tid()
    if mask[e] == 0:
        return
    f = frame[e]
    c = grid_centre(f, res)
    d = 2.0 * half_extent / float(grid - 1)
    y = c[1] - half_extent + float(row) * d
    span = z_hi - z_lo
    usable = wp.isfinite(f[2]) and f[2] > 0.0 and span > 0.0
    base = offset[e] + row * grid
    for col in range(grid):
        value = float(0.0)
        if usable:
            z = bake_sample(height, e, f, res, wp.vec2f(c[0] - half_extent + float(col) * d, y))
            if wp.isfinite(z):
                value = wp.clamp((z - z_lo) / span, 0.0, 1.0)
        elevation_out[base + col] = value


@wp.kernel
def _clip_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    height: wp.array(dtype=wp.float32),
    on_road: wp.array(dtype=wp.int8),
    frame: wp.array(dtype=wp.vec4f),
    # static
    res: int,
    half_extent: float,
    z_lo: float,
    z_hi: float,
    # outputs
    clipped_inout: wp.array(dtype=wp.int32),
):
    """Row ``j`` of env ``e``'s bake: ``clipped[e] = 1`` when one of its on-road texels lies
    outside the grid's square (farther than ``half_extent`` from the centre along x or y) or
    holds a height outside ``[z_lo, z_hi]`` (which the grid clamps)."""
    e, j = wp.tid()
    if mask[e] == 0:
        return
    f = frame[e]
    if not (wp.isfinite(f[2]) and f[2] > 0.0):
        return
    c = grid_centre(f, res)
    base = e * res * res + j * res
    y = f[1] + (float(j) + 0.5) * f[2]
    bad = int(0)
    for i in range(res):
        if on_road[base + i] != wp.int8(0):
            x = f[0] + (float(i) + 0.5) * f[2]
            z = height[base + i]
            if wp.abs(x - c[0]) > half_extent or wp.abs(y - c[1]) > half_extent:
                bad = 1
            if not (z >= z_lo and z <= z_hi):
                bad = 1
    if bad != 0:
        wp.atomic_max(clipped_inout, e, 1)


@wp.kernel
def _props_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    scale: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    prop_shape: wp.array(dtype=wp.int32),
    # static
    res: int,
    slots: int,
    kind: int,
    park_z: float,
    # outputs
    shape_transform_out: wp.array(dtype=wp.transformf),
    shape_scale_out: wp.array(dtype=wp.vec3f),
    shape_radius_out: wp.array(dtype=wp.float32),
):
    """Slot ``k`` of env ``e``: for ``k < count[e]`` with finite data, the prop's shape at its
    pose (the base centre raised by half its height along its local z) and, for a wall, its
    box half extents and bounding radius; otherwise the shape is parked at ``park_z`` under
    the grid's centre (its scale unchanged)."""
    e, k = wp.tid()
    if mask[e] == 0:
        return
    row = e * slots + k
    shape = prop_shape[row]
    p = position[row]
    q = orientation[row]
    s = scale[row]
    real = k < count[e] and in_range3(p) and in_range3(s) and s[2] > 0.0
    if real:
        n = wp.length(q)
        real = wp.isfinite(n) and n > 0.0
    if real:
        q = q / wp.length(q)
        centre = p + wp.quat_rotate(q, wp.vec3f(0.0, 0.0, 0.5 * s[2]))
        shape_transform_out[shape] = wp.transformf(centre, q)
        if kind == _WALL:
            half = 0.5 * s
            shape_scale_out[shape] = half
            shape_radius_out[shape] = wp.length(half)
    else:
        c = grid_centre(frame[e], res)
        shape_transform_out[shape] = wp.transformf(
            wp.vec3f(c[0], c[1], park_z), wp.quatf(0.0, 0.0, 0.0, 1.0)
        )


@wp.kernel
def _mesh_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    mesh: wp.array(dtype=wp.uint64),
    offset: wp.array(dtype=wp.int32),
    elevation: wp.array(dtype=wp.float32),
    # static
    grid: int,
    z_lo: float,
    z_hi: float,
):
    """Row ``row`` of env ``e``'s own height-field mesh (Newton's layout: top vertex ``col *
    grid + row``, x along ``col``): each top vertex's z from the grid's elevation, through the
    mesh id (the points array lives in the mesh; refit the mesh afterwards)."""
    e, row = wp.tid()
    if mask[e] == 0:
        return
    m = wp.mesh_get(mesh[e])
    span = z_hi - z_lo
    for col in range(grid):
        k = col * grid + row
        p = m.points[k]
        m.points[k] = wp.vec3f(p[0], p[1], z_lo + elevation[offset[e] + row * grid + col] * span)


@wp.kernel
def _poses_kernel(
    # inputs
    body: wp.array(dtype=wp.int32),
    body_q: wp.array(dtype=wp.transformf),
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
):
    """Env ``e``'s pose: the translation and rotation of body ``body[e]`` in ``body_q``."""
    e = wp.tid()
    x = body_q[body[e]]
    position_out[e] = wp.transform_get_translation(x)
    orientation_out[e] = wp.transform_get_rotation(x)
