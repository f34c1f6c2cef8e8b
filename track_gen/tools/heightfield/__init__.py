"""Road height fields: :class:`HeightFieldUtility` (-> :class:`HeightFieldResult`) and the course
component :class:`HeightFieldBake` (``course.heightfield``).

Per env, a ``res x res`` grid of heights over a square around the borders' bounding box,
padded by ``margin`` (default 10% of the box's larger side), the same frame as the SDF of
:class:`~track_gen.tools.BandCollisionUtility`: texel ``(i, j)`` of env ``e`` is element
``e*res*res + j*res + i`` (``j`` along y) and samples the texel centre
``(x0 + (i + 0.5) * cell, y0 + (j + 0.5) * cell)``.

The road surface. Each quad of the band, ``(inner[i], outer[i], outer[i+1], inner[i+1])``
(the closing quad ``count-1 -> 0`` included), is a bilinear patch between its two rungs
(the bead cross-sections ``inner[i] -> outer[i]``): a point ``p`` of the quad has the
coordinates ``(u, v)`` with ``p = lerp(lerp(inner[i], inner[i+1], v), lerp(outer[i],
outer[i+1], v), u)`` in plan view (u across the road, v along it) and the height
``lerp(lerp(inner[i].z, inner[i+1].z, v), lerp(outer[i].z, outer[i+1].z, v), u)``. On a level
road (``inner[i].z == outer[i].z == center[i].z``) that is ``z_i + v (z_{i+1} - z_i)``: the
height is constant along every interpolated rung (the centerline's normal) and, on the
centerline, the piecewise-linear centerline height. Two neighbouring quads share a rung and
agree on it, so the surface is continuous across every rung, and nothing depends on which
border is nearest: no cliff at the road's medial axis, also where the inner border collapses
to a point (a hairpin of radius ``half_width``, where a triangle split of the quads would leave
a sawtooth). Its slope is the local grade: the centerline grade on the centerline, larger on
the inside of a bend (where the rungs converge).

On the road. A texel is on the road when its centre lies in some quad by the even-odd rule
of the band collider (``on_road = 1``; bitwise the same test as the SDF bake's sign). Where
quads overlap (a bend tighter than ``half_width``, allowed by the validator's
``thickness_tol``, folds the inner border; or two road sections closer than a road width), the
texel takes the HIGHEST of their heights (the top surface; independent of the quad order).
Off the road the texel holds the fill value: ``fill`` when given, else the env's lowest road
height (the minimum z over its inner and outer beads), so off-road texels never stand above
the road's lowest point; read ``on_road`` to tell them apart. An invalid env (``valid == 0``,
fewer than 3 beads (``count`` clamped to ``[0, N_max]``), or a border coordinate that is
non-finite or beyond ``COORD_LIMIT`` = 1e18 track units: the band collider's rule,
:mod:`~track_gen.core.extents`) has a NaN frame, NaN heights and ``on_road = 0``; every
other env's grid is finite.

Accuracy. A texel holds the surface height at its centre up to float32 rounding (the tests
hold it within ``1e-5 * max|z| + 1e-6`` of a float64 evaluation; measured errors stay below
``2e-7`` on courses of scale 1); interpolating between texel centres errs near the borders by
up to a cell. The grid resolves the road only when a cell is small against it:
:func:`check_grid_resolution` (called by :class:`HeightFieldBake` and by
``BandCollision("sdf")``) warns with :class:`GridResolutionWarning` when the largest course
the generator can draw would get fewer than 4 texels across the road.

The bake (:meth:`HeightFieldUtility.bake`) allocates nothing, never synchronizes, rebakes the
masked envs only (unmasked envs stay bitwise unchanged) and can be recorded into a graph. Its
work is proportional to the road's area in texels plus ``res^2`` per baked env (the fill):
about 0.17-0.22 s for E=1024, res 128 on one CPU core (0.13 s raster, 0.05 s fill), about the
cost of the SDF bake.
"""

from ...core.deprecation import deprecated_names
from .component import HeightFieldBake
from .fields import FILL, MARGIN, RESOLUTION, SIZE_HI, HeightFieldSettings
from .result import HeightFieldResult
from .utility import (
    MIN_TEXELS_ACROSS,
    GridResolutionWarning,
    HeightFieldUtility,
    check_grid_resolution,
    largest_course_scale,
)

__all__ = [
    "FILL",
    "GridResolutionWarning",
    "HeightFieldResult",
    "HeightFieldSettings",
    "HeightFieldBake",
    "HeightFieldUtility",
    "MARGIN",
    "MIN_TEXELS_ACROSS",
    "RESOLUTION",
    "SIZE_HI",
    "check_grid_resolution",
    "largest_course_scale",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "HeightField": "HeightFieldResult",
    "HeightFieldBaker": "HeightFieldUtility",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
