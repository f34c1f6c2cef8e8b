"""Grid corners shared by the bezier and hull samplers."""

from __future__ import annotations

import warp as wp

from ...geometry import centroid, sort_by_angle

wp.set_module_options({"enable_backward": False})


@wp.func
def draw_grid_corners(
    st: wp.uint32,
    m: int,
    cells: int,
    corners: wp.array(dtype=wp.vec2f),
    cell_ids: wp.array(dtype=wp.int32),
    cb: int,
) -> wp.uint32:
    """Draw ``m`` corners in distinct cells of a ``cells x cells`` grid over the unit square
    (uniform inside their cell), sorted counter-clockwise around their centroid.

    A cell already taken is redrawn up to 8 times, then the next free cell is taken (one
    exists: the config guarantees ``cells * cells >= max_num_points``). Returns the advanced
    RNG state (a Warp function advances its own copy of ``st``).
    """
    ncell = cells * cells
    inv = 1.0 / float(cells)
    for i in range(m):
        cell = wp.min(int(wp.randf(st) * float(ncell)), ncell - 1)
        for _probe in range(ncell + 9):
            dup = int(0)
            for j in range(i):
                if cell_ids[cb + j] == cell:
                    dup = 1
            if dup == 0:
                break
            if _probe < 8:
                cell = wp.min(int(wp.randf(st) * float(ncell)), ncell - 1)
            else:
                cell = (cell + 1) % ncell
        cell_ids[cb + i] = cell
        cx = float(cell % cells) + wp.randf(st)
        cy = float(cell // cells) + wp.randf(st)
        corners[cb + i] = wp.vec2f(cx * inv, cy * inv)
    sort_by_angle(corners, cb, m, centroid(corners, cb, m))
    return st
