"""Oriented boxes against the road band of a :class:`~track_gen.results.Track`.

The band of a valid env is the road between its index-aligned borders: the union of the quads
``(inner[i], outer[i], outer[i+1], inner[i+1])`` for ``i < count`` (the closing quad
``count-1 -> 0`` included), in plan view (x, y; z is ignored). A quad contains a point by the
even-odd rule over its four edges; the radial edge two neighbouring quads share is evaluated
the same way for both, so a point on it (a box spawned on a bead) lies in exactly one.
:class:`BandCollisionUtility` answers, per box, whether some part of it is off the road, its signed
clearance, the closest border point and the border normal there, with one of two methods:

``"segments"`` (exact)
    One thread per box. :meth:`BandCollisionUtility.refresh` packs each env's borders into one
    ``(inner.xy, outer.xy)`` row per bead and stores the bounding box of every chunk of
    :data:`CHUNK_QUADS` consecutive quads. A query starts at the bead nearest to the box in
    the nearest chunk (a tight first bound), then visits the other chunks, skipping every chunk
    and every border segment whose bounding box is farther than the best distance so far, so
    only the few segments around the box are tested exactly. A box is off the road
    (``oob = 1``) iff one of its corners is outside the band or a border segment meets the
    (solid) box:

    * no border segment meets the box and its four corners are inside the band: ``oob = 0``,
      ``distance`` = distance between the solid box and the nearest border segment (> 0);
    * some corner is outside the band: ``distance = -max`` over the outside corners of their
      distance to the nearest border (the deepest penetration);
    * a border segment meets the box but every corner is inside: ``distance = 0``.

    About 0.4 ms per query for E=1024 single boxes on one CPU core (``benchmarks/collision.py``).

``"sdf"`` (approximate, cheaper queries)
    Per env a ``res x res`` grid of signed distances ``phi`` (positive inside the band) over a
    square around the borders' bounding box, padded by ``sdf_padding`` (default 10% of the
    larger extent); texel ``(i, j)`` holds ``phi`` at the texel centre
    ``(x0 + (i + 0.5) * cell, y0 + (j + 0.5) * cell)``. The bake
    (:meth:`BandCollisionUtility.refresh`,
    one thread per env) is a narrow band: every quad, extended across the road by
    :data:`SDF_BAND_CELLS` cells beyond both borders, is rasterized (its convex hull, row by
    row) and its texels take the distance to the quad's two border segments (the minimum over
    every quad that reaches them) and the quad's inside flag (the union over quads). Every
    texel inside the band is inside some quad, so the sign is exact at every texel centre;
    texels no extended quad reaches are outside and hold the clamp ``-SDF_BAND_CELLS * cell``.
    The work is proportional to the road's area in texels, not to ``res^2 * count``
    (about 0.13 s for E=1024, res 128 on one CPU core).

    A query (one thread per box) samples ``phi`` bilinearly (grid coordinates clamped to the
    edge texels; outside the borders' bounding box ``phi`` is also capped by minus the distance
    to that box) at the box centre and its four corners: the smallest sample (the first of
    equals) is the ``distance``, ``oob = distance <= 0``, the normal is the normalized central
    difference (step one cell, doubled while ``phi`` is flat there) at that sample and
    ``nearest = sample - phi * normal``; ``boundary`` is the border nearest to the texel under
    ``nearest``. About 0.14 ms per query for E=1024 single boxes on one CPU core.

    Approximation: inside the band and up to ``SDF_BAND_CELLS - 1`` cells outside it, ``phi``
    is the exact signed distance at texel centres; bilinear sampling errs by a fraction of a
    cell near the border (more near sharp corners and across the ridge of ``phi`` on the
    road's medial axis, where normals are noisy); a box edge cutting a border between the
    sampled points goes unnoticed. ``oob`` flags and distances therefore agree with
    ``"segments"`` except within about one cell of zero clearance. A sample farther outside
    reads about ``-SDF_BAND_CELLS * cell`` (clamped), with a rough normal, ``nearest`` not on a
    border and ``boundary`` possibly -1. Use it when a batch serves many queries between
    regenerations and flags or approximate clearances suffice.

Both methods answer from the data :meth:`BandCollisionUtility.refresh` derived from the Track (bead
counts and validity included): call ``refresh(mask)`` after every regeneration (same mask)
before the next query; an env keeps its previous answers until it is refreshed. Queries and
refreshes allocate nothing, never synchronize and can be recorded into a graph (CUDA, or a
Warp CPU capture).

``kernel_layout`` chooses the thread layout of the SDF bake and the segments refresh and
query: ``"per_env"`` (one thread per env; per box for the query), ``"per_item"`` (one thread
per texel, per bead and chunk, five per box, with deterministic per-env and per-box folds; a
GPU's shape) or ``"auto"`` (per_env on the CPU, per_item on CUDA). Both give bitwise-identical
data and answers (docs/collision.md).

Kernels: :mod:`~track_gen.tools.band_collision.kernels` (shared functions),
:mod:`~track_gen.tools.band_collision.segments` (segments, per_env),
:mod:`~track_gen.tools.band_collision.items` (segments, per_item) and
:mod:`~track_gen.tools.band_collision.sdf` (the SDF bake in both layouts, the SDF query).
"""

from ...core.deprecation import deprecated_names
from .component import BandCollision, box_inputs
from .fields import (
    CLEARANCE,
    MAX_BOXES,
    METHOD,
    METHODS,
    SDF_PADDING,
    SDF_RESOLUTION,
    BandCollisionSettings,
)
from .items import QUERY_PARTS
from .kernels import CHUNK_QUADS, SDF_BAND_CELLS
from .result import BandCollisionResult
from .utility import BandCollisionUtility

__all__ = [
    "BandCollisionUtility",
    "BandCollision",
    "BandCollisionSettings",
    "BandCollisionResult",
    "CHUNK_QUADS",
    "CLEARANCE",
    "MAX_BOXES",
    "METHOD",
    "METHODS",
    "QUERY_PARTS",
    "SDF_BAND_CELLS",
    "SDF_PADDING",
    "SDF_RESOLUTION",
    "box_inputs",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "BandCollider": "BandCollisionUtility",
    "BandContact": "BandCollisionResult",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
