"""Grid corners shared by the bezier and hull samplers: their fields, the corner scratch
(:class:`GridCorners`), the corner draw (:func:`draw_grid_corners`) and their host side
(:class:`SamplerGridBase`)."""

from __future__ import annotations

from typing import ClassVar

import warp as wp

from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import centroid, sort_by_angle_keyed
from .common import DenseLoop, knot_loop, launch_sampler

wp.set_module_options({"enable_backward": False})

MIN_CORNERS = Tunable(
    "min_corners",
    9,
    lo=3,
    hi=64,
    unit="corners",
    renamed_from=("min_num_points",),
    doc="fewest corners of a bezier or hull loop.",
)
MAX_CORNERS = Tunable(
    "max_corners",
    13,
    lo=MIN_CORNERS,
    hi=64,
    unit="corners",
    renamed_from=("max_num_points",),
    doc="most corners of a bezier or hull loop (each env draws its count in "
    "[min_corners, max_corners]).",
)


def _grid_holds_corners(value, lookup):
    cells = int(1.0 / (2.0 * value))
    corners = lookup(MAX_CORNERS)
    if cells * cells < corners:
        return (
            f"gives {cells}x{cells} grid cells, fewer than max_corners = {corners}; lower it "
            "(or lower max_corners)"
        )
    return None


MIN_POINT_DISTANCE = Tunable(
    "min_point_distance",
    0.05,
    lo=0.001,
    hi=0.5,
    rule=_grid_holds_corners,
    unit="unit square",
    doc="grid cell half-size: cells = int(1 / (2 * value)) per axis over the unit square; "
    "corners occupy distinct cells, so it sets the smallest corner spacing before scaling.",
)
#: The corner grid's fields (bezier and hull).
GRID_FIELDS = (MIN_CORNERS, MAX_CORNERS, MIN_POINT_DISTANCE)


def grid_cells(min_point_distance: float) -> int:
    """Grid cells per axis for ``min_point_distance`` (>= 1)."""
    return max(int(1.0 / (2.0 * min_point_distance)), 1)


@wp.struct
class GridDraw:
    """The corner draw's launch constants as one kernel parameter (``# static``), built once by
    :class:`SamplerGridBase` when it allocates.

    Attributes:
        min_pts: fewest corners of a loop (``min_corners``).
        max_pts: most corners of a loop (``max_corners``; each env's rows are ``max_pts``
            long).
        cells: grid cells per axis (:func:`grid_cells`).
    """

    min_pts: int
    max_pts: int
    cells: int


@wp.struct
class GridCorners:
    """An env batch's grid-corner scratch as one kernel parameter (``# scratch``), built once
    by :class:`SamplerGridBase` when it allocates; each env's rows start at ``e * max_corners``.

    Attributes:
        corners: vec2f ``[E * max_corners]``: the corners (unit square), angle-sorted.
        cell_ids: int32 ``[E * max_corners]``: the grid cell of each corner.
        keys: float32 ``[E * max_corners]``: the corners' angle sort keys.
    """

    corners: wp.array(dtype=wp.vec2f)
    cell_ids: wp.array(dtype=wp.int32)
    keys: wp.array(dtype=wp.float32)


@wp.func
def pseudo_angle(d: wp.vec2f) -> float:
    """A key in ``(-2, 2]`` strictly increasing with ``atan2(d[1], d[0])`` (the diamond angle,
    ``dy / (|dx| + |dy|)`` per half-plane) without a transcendental function; 0 for ``d = 0``."""
    t = d[1] / wp.max(wp.abs(d[0]) + wp.abs(d[1]), 1.0e-30)
    if d[0] >= 0.0:
        return t
    if d[1] >= 0.0:
        return 2.0 - t
    return -2.0 - t


@wp.func
def draw_grid_corners(
    st: wp.uint32,
    draw: GridDraw,
    grid: GridCorners,
    cb: int,
    exact: int,
):
    """Draw an env's corner count ``m`` uniform in ``[draw.min_pts, draw.max_pts]``, then ``m``
    corners in distinct cells of a ``draw.cells x draw.cells`` grid over the unit square
    (uniform inside their cell) into ``grid.corners`` from row ``cb``, sorted
    counter-clockwise around their centroid.

    A cell already taken is redrawn up to 8 times, then the next free cell is taken (one
    exists: the declaration guarantees ``cells * cells >= max_corners``). ``grid.cell_ids``
    and ``grid.keys`` (the corners' sort keys) are scratch rows at ``cb`` like the corners.
    ``exact`` 1 sorts by ``atan2`` (tracks); 0 by :func:`pseudo_angle` (gate loops: the same
    order but for corners in one direction from the centroid or that float32 ``atan2`` rounds
    to one angle, at a third of the cost). Returns ``m`` and the advanced RNG state (a Warp
    function advances its own copy of ``st``).
    """
    min_pts = draw.min_pts
    max_pts = draw.max_pts
    cells = draw.cells
    m = min_pts + int(wp.randf(st) * float(max_pts - min_pts + 1))
    m = wp.min(m, max_pts)
    ncell = cells * cells
    inv = 1.0 / float(cells)
    for i in range(m):
        cell = wp.min(int(wp.randf(st) * float(ncell)), ncell - 1)
        for _probe in range(ncell + 9):
            dup = int(0)
            for j in range(i):
                if grid.cell_ids[cb + j] == cell:
                    dup = 1
            if dup == 0:
                break
            if _probe < 8:
                cell = wp.min(int(wp.randf(st) * float(ncell)), ncell - 1)
            else:
                cell = (cell + 1) % ncell
        grid.cell_ids[cb + i] = cell
        cx = float(cell % cells) + wp.randf(st)
        cy = float(cell // cells) + wp.randf(st)
        grid.corners[cb + i] = wp.vec2f(cx * inv, cy * inv)
    cen = centroid(grid.corners, cb, m)
    if exact != 0:
        sort_by_angle_keyed(grid.corners, cb, m, cen, grid.keys, cb)
        return m, st
    for i in range(m):
        grid.keys[cb + i] = pseudo_angle(grid.corners[cb + i] - cen)
    # insertion sort on the keys (stable, as sort_by_angle_keyed)
    for i in range(1, m):
        p = grid.corners[cb + i]
        a = grid.keys[cb + i]
        slot = cb + i  # the hole moves down past every larger key
        while slot > cb:
            below = grid.keys[slot - 1]
            if below <= a:
                break
            grid.corners[slot] = grid.corners[slot - 1]
            grid.keys[slot] = below
            slot -= 1
        grid.corners[slot] = p
        grid.keys[slot] = a
    return m, st


class SamplerGridBase(Stage):
    """The host side of the grid samplers (bezier, hull): the corner grid's cells, the
    per-env corner scratch, the dense loop and one launch.

    A subclass sets ``KERNEL``, whose signature is ``# inputs`` ``eff_seed``, ``active``;
    ``# parameters`` the arrays of ``PARAMETERS`` (field names, in kernel order); ``# static``
    ``draw`` (:class:`GridDraw`), ``npseg``, ``num_points``, ``cross_nch``, ``knots_only``;
    ``# scratch`` ``grid`` (:class:`GridCorners`), the arrays of :meth:`curve_scratch`, then
    ``loop`` (:class:`~track_gen.stages.common.DenseScratch`); ``# outputs`` ``line_out``. It
    sets ``SPANS_PER_CORNER`` (dense-loop spans per corner) and allocates its own scratch after
    this class's.

    Attributes:
        cells: grid cells per axis (:func:`grid_cells`).
        draw: the :class:`GridDraw` of the corner counts and ``cells`` (built once, here).
        corners: vec2f ``[E * max_corners]``: each env's corners (unit square).
        cell_ids: int32 ``[E * max_corners]``: the grid cell of each corner.
        corner_keys: float32 ``[E * max_corners]``: the corners' angle sort keys.
        grid: the :class:`GridCorners` of these three arrays (built once, here: a captured
            CUDA graph keeps the struct value it recorded).
        loop: the :class:`~track_gen.stages.common.DenseLoop` of ``SPANS_PER_CORNER *
            max_corners`` spans.
    """

    role = "sampler"
    KERNEL: ClassVar = None
    PARAMETERS: ClassVar[tuple[str, ...]] = ()
    SPANS_PER_CORNER: ClassVar[int] = 1

    def allocate(self, ws: Workspace) -> None:
        v, E = self.values, ws.layout.num_envs
        self.cells = grid_cells(v.min_point_distance)
        self.draw = GridDraw()
        self.draw.min_pts = v.min_corners
        self.draw.max_pts = v.max_corners
        self.draw.cells = self.cells
        self.corners = ws.zeros(E * v.max_corners, wp.vec2f, f"{self.name} corners")
        self.cell_ids = ws.zeros(E * v.max_corners, wp.int32, f"{self.name} cell ids")
        self.corner_keys = ws.zeros(E * v.max_corners, wp.float32, f"{self.name} corner angles")
        self.grid = GridCorners()
        self.grid.corners = self.corners
        self.grid.cell_ids = self.cell_ids
        self.grid.keys = self.corner_keys
        spans = self.SPANS_PER_CORNER * v.max_corners
        self.loop = DenseLoop(ws, spans, v.num_points_per_segment, self.name)

    def curve_scratch(self) -> list:
        """The subclass's own scratch arrays, in kernel order (between the corners' and the
        dense loop's)."""
        return []

    def enqueue(self, ws: Workspace, params: dict) -> None:
        v = self.values
        launch_sampler(
            ws,
            self.KERNEL,
            parameters=[params[name] for name in self.PARAMETERS],
            static=[
                self.draw,
                v.num_points_per_segment,
                ws.layout.num_points,
                self.loop.nch,
                int(knot_loop(ws)),
            ],
            scratch=[self.grid, *self.curve_scratch(), self.loop.scratch],
        )
