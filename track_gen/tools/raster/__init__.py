"""Top-down rasters around the agent: :class:`EgoRaster` (the course component
``"raster"``), :class:`EgoRasterUtility` (its utility), :class:`EgoRasterResult` (its result) and
:class:`RasterCell` (the cell bits). See ``docs/sensors/raster.md``.

Frame. Per env, the raster is a ``res x res`` square of side ``extent`` centred on the
agent's plan-view position, its up axis the agent's heading ``h`` (the plan view of the body
x axis of the orientation, normalized; +x when the body x is vertical) and its left axis
``perp(h) = (-h.y, h.x)``. Cell ``(row, col)`` is element ``e*res*res + row*res + col``; its
centre lies at ``forward = extent/2 - (row + 0.5) * cell`` and ``left = extent/2 - (col +
0.5) * cell`` (``cell = extent / res``) from the agent: row 0 is the farthest ahead, column 0
the farthest left, so ``cells.reshape(res, res)`` shown as an image is heading-up.

Cells (uint8 bit flags, :class:`RasterCell`):

* ``ROAD`` (1): the cell centre lies on the road band, the union of the quads ``(inner[i],
  outer[i], outer[i+1], inner[i+1])`` by the even-odd rule of the band collider (bitwise the
  same quad test as its SDF bake and the height field's ``on_road``);
* ``BORDER`` (2): an inner or outer border segment meets the cell's closed square;
* ``CONE`` (4): the base disc (diameter ``scale.x``) of a cone of the ``cones`` component
  meets the square;
* ``UNKNOWN`` (128), alone on every cell: no answer (an invalid env, a non-finite position,
  an orientation that is non-finite or zero).

Exactness. Each env's bucket grid (built per regeneration) lists, per bucket, every quad
whose box padded by ``PAD_CELLS`` cells overlaps it; a cell tests the quads of its centre's
bucket, which include every quad that can contain the centre or reach the square. The flags
are therefore those of a float32 test against every quad; they differ from exact arithmetic
only for a centre (or a square edge, a disc) within float32 rounding of a border.
"""

from ...core.deprecation import deprecated_names
from .component import EgoRaster
from .fields import EXTENT, RESOLUTION, EgoRasterSettings
from .kernels import RasterCell
from .result import EgoRasterResult
from .utility import ENTRIES_PER_BEAD, PAD_CELLS, EgoRasterUtility, grid_buckets

__all__ = [
    "EgoRasterSettings",
    "ENTRIES_PER_BEAD",
    "EXTENT",
    "EgoRaster",
    "EgoRasterResult",
    "EgoRasterUtility",
    "PAD_CELLS",
    "RESOLUTION",
    "RasterCell",
    "grid_buckets",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "EgoRasterImage": "EgoRasterResult",
    "EgoRasterizer": "EgoRasterUtility",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
