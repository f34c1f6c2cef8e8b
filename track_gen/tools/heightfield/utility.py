"""Road height fields: :class:`HeightFieldBaker` (-> :class:`HeightField`) and the course
component :class:`HeightFieldBake` (``course.heightfield``).

Per env, a ``res x res`` grid of heights over a square around the borders' bounding box,
padded by ``margin`` (default 10% of the box's larger side), the same frame as the SDF of
:class:`~track_gen.tools.BandCollider`: texel ``(i, j)`` of env ``e`` is element
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

The bake (:meth:`HeightFieldBaker.bake`) allocates nothing, never synchronizes, rebakes the
masked envs only (unmasked envs stay bitwise unchanged) and can be recorded into a graph. Its
work is proportional to the road's area in texels plus ``res^2`` per baked env (the fill):
about 0.17-0.22 s for E=1024, res 128 on one CPU core (0.13 s raster, 0.05 s fill), about the
cost of the SDF bake.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import warnings
from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_mask
from ...core.component import Component, buffer_bytes
from ...core.exec import require_not_capturing
from ...core.extents import EXTENT
from ...core.tunable import Tunable
from ...results import Track
from ..shared import fill_grid_kernel
from .kernels import _frame_kernel, _raster_kernel

wp.set_module_options({"enable_backward": False})

__all__ = [
    "FILL",
    "MARGIN",
    "MIN_TEXELS_ACROSS",
    "RESOLUTION",
    "SIZE_HI",
    "GridResolutionWarning",
    "HeightField",
    "HeightFieldBake",
    "HeightFieldBaker",
    "check_grid_resolution",
    "largest_course_scale",
]

RESOLUTION = Tunable(
    "resolution", 128, lo=8, hi=4096, unit="texels", doc="texels per side of each env's grid."
)
MARGIN = Tunable(
    "margin",
    None,
    kind="float",
    lo=0.0,
    hi=1.0e6,
    optional=True,
    unit="track units",
    doc="margin around the borders' bounding box; None is 10% of its larger side.",
)
FILL = Tunable(
    "fill",
    None,
    kind="float",
    lo=-1.0e30,
    hi=1.0e30,
    optional=True,
    unit="track units",
    doc="height of the off-road texels; None is the env's lowest road height.",
)
SIZE_HI = Tunable(
    "size_hi",
    None,
    kind="float",
    lo=0.0,
    hi=1.0e6,
    lo_open=True,
    optional=True,
    unit="track units",
    doc="the largest course scale a curriculum will reach (for the resolution check); None "
    "reads it from the generator.",
)

#: Fewest texels across the road (``2 * half_width / cell``) a grid must give the largest
#: course before :func:`check_grid_resolution` warns.
MIN_TEXELS_ACROSS = 4
#: Default margin, as a fraction of the borders' larger side (``margin=None``).
_AUTO_MARGIN = 0.1


class GridResolutionWarning(UserWarning):
    """A baked grid (height field, SDF) is too coarse for the largest course the generator
    can draw: fewer than :data:`MIN_TEXELS_ACROSS` texels across the road."""


# ----------------------------------------------------------------------------- result


@dataclass
class HeightField:
    """Per-env road height grids (see the module docstring for the surface and the frame).
    The baker overwrites the same instance at every bake; :meth:`clone` takes a snapshot.

    Attributes:
        height: float32 ``[E*res*res]``: height at each texel centre, track units, row-major
            per env (``e*res*res + j*res + i``, ``j`` along y). Off the road: the env's fill
            value (``frame[e][3]``); NaN for every texel of an invalid env.
        on_road: int8 ``[E*res*res]``: 1 when the texel centre lies on the road band, else 0
            (0 for every texel of an invalid env).
        frame: vec4f ``[E]``: ``(x0, y0, cell, fill)``: the grid origin (corner of texel
            (0, 0)), the cell size and the off-road fill value, track units; NaN for an
            invalid env.
    """

    height: wp.array
    on_road: wp.array
    frame: wp.array

    @property
    def num_envs(self) -> int:
        return self.frame.shape[0]

    @property
    def resolution(self) -> int:
        """Texels per side ``res``."""
        return math.isqrt(self.height.shape[0] // self.frame.shape[0])

    def clone(self) -> HeightField:
        """A detached deep copy (allocates: call it outside your graph)."""
        return HeightField(
            **{f.name: wp.clone(getattr(self, f.name)) for f in dataclasses.fields(self)}
        )


# ----------------------------------------------------------------------------- baker


class HeightFieldBaker:
    """Bakes the road height of every env of a :class:`~track_gen.results.Track` into a
    square grid (see the module docstring for the surface, the frame and the overlap rule).

    Args:
        track: the Track to bake. The baker keeps a reference and reads it in :meth:`bake`,
            so a generator's stable ``result`` works across regenerations (rebake the
            regenerated envs).
        resolution: texels per side of each env's grid (``RESOLUTION``).
        margin: margin around the borders' bounding box, track units (``MARGIN``), or None for
            10% of its larger side.
        fill: height of the off-road texels, track units (``FILL``), or None for each env's
            lowest road height.

    Construction allocates :attr:`field` (``5 * E * res^2`` bytes plus the frames) and bakes
    every env. Attributes (read-only): ``field`` (the :class:`HeightField` every bake
    overwrites), ``track``, ``resolution``, ``margin``, ``fill``, ``num_envs``, ``device``.
    """

    def __init__(
        self,
        track: Track,
        *,
        resolution: int = 128,
        margin: float | None = None,
        fill: float | None = None,
    ):
        if not isinstance(track, Track):
            raise TypeError(
                f"HeightFieldBaker(track): track must be a Track (a TrackGenerator's result), "
                f"got {type(track).__name__}"
            )
        self.resolution = RESOLUTION.check(resolution, "HeightFieldBaker resolution")
        self.margin = MARGIN.check(margin, "HeightFieldBaker margin")
        self.fill = FILL.check(fill, "HeightFieldBaker fill")
        self.track = track
        self.device = track.count.device
        require_not_capturing(self.device, "HeightFieldBaker construction")
        self.num_envs = E = track.num_envs
        res = self.resolution
        budget = AllocationBudget(self.device, "lower the height-field resolution")
        what = f"height fields (E * resolution^2 = {E} * {res}^2)"
        self._all = budget.full(E, 1, wp.int32, "all-envs mask")
        self.field = HeightField(
            height=budget.zeros(E * res * res, wp.float32, what),
            on_road=budget.zeros(E * res * res, wp.int8, what),
            frame=budget.zeros(E, wp.vec4f, "height-field frames"),
        )
        self.bake()

    @staticmethod
    def buffers(num_envs: int, resolution: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a baker of ``num_envs`` envs allocates."""
        texels = num_envs * resolution * resolution
        return [(num_envs, wp.int32), (texels, wp.float32), (texels, wp.int8), (num_envs, wp.vec4f)]

    def bake(self, mask: wp.array | None = None) -> HeightField:
        """Rebake the envs with ``mask[e] != 0`` (None: every env) from the Track's current
        borders and return :attr:`field` (the same instance every call).

        ``mask`` is a contiguous ``[E]`` int32 array on the track's device, read by pointer (a
        recorded bake reads its current contents). Unmasked envs stay bitwise unchanged.
        Three launches, no allocation, no host synchronization: call it after every
        regeneration with the same mask."""
        check_mask(mask, self.num_envs, self.device)
        if mask is None:
            mask = self._all
        t, f, E, res, dev = self.track, self.field, self.num_envs, self.resolution, self.device
        margin = -1.0 if self.margin is None else self.margin
        fill = 0.0 if self.fill is None else self.fill
        auto_fill = 1 if self.fill is None else 0
        wp.launch(
            _frame_kernel,
            E,
            inputs=[mask, t.inner, t.outer, t.count, t.valid, t.N_max, res, margin, fill]
            + [auto_fill],
            outputs=[f.frame],
            device=dev,
        )
        wp.launch(
            fill_grid_kernel,
            (E, res),
            inputs=[mask, f.frame, res, 0, wp.int8(0)],
            outputs=[f.height, f.on_road],
            device=dev,
        )
        wp.launch(
            _raster_kernel,
            E,
            inputs=[mask, t.inner, t.outer, t.count, t.valid, f.frame, t.N_max, res],
            outputs=[f.height, f.on_road],
            device=dev,
        )
        return f


# ----------------------------------------------------------------------------- resolution


def largest_course_scale(generator, size_hi: float | None = None) -> tuple[float, str] | None:
    """``(scale, where)``: the largest course scale ``generator`` can draw and where it was
    read, or None when it cannot be told (no ``size_hi`` and a generator without a spec, or
    whose samplers read no ``scale``, such as the ``"centerline"`` sampler).

    ``size_hi`` when given; else, over the samplers' ``"<stage>.scale"`` fields, the
    construction ``hi`` of the field's randomizer (``spec.randomize``) when it has one, else
    the construction ``scale`` of the config; the largest of them."""
    if size_hi is not None:
        return float(size_hi), "size_hi"
    spec = getattr(generator, "spec", None)
    config = getattr(spec, "config", None)
    params = getattr(generator, "params", None)
    if config is None or params is None or not hasattr(config, "scale"):
        return None
    names = [k for k in params if isinstance(k, str) and k.endswith(".scale")]
    if not names:
        return None
    randomize = dict(getattr(spec, "randomize", ()))
    best = None
    for name in names:
        if name in randomize:
            value, where = float(randomize[name][1]), f"the {name!r} randomizer's hi"
        else:
            value, where = float(config.scale), "the construction scale"
        if best is None or value > best[0]:
            best = (value, where)
    return best


def check_grid_resolution(
    owner: str,
    generator,
    resolution: int,
    *,
    size_hi: float | None = None,
    margin: float | None = None,
) -> float | None:
    """Warn (:class:`GridResolutionWarning`) when a ``resolution``-texel square grid cannot
    resolve the road on the largest course ``generator`` can draw; return the predicted cell
    size (None: no check).

    The rule: with ``scale`` from :func:`largest_course_scale` and ``hw`` the config's
    ``half_width``, the borders' bounding box of that course has a larger side of at most
    ``1.44 * scale + 2 * hw``; the grid's side is that plus twice the margin (``margin``
    track units, or 10% of the side when None) and ``cell = side / resolution``. Warns when
    ``cell > hw / 2``, i.e. fewer than :data:`MIN_TEXELS_ACROSS` (4) texels across the road.
    Checked once, at construction: a curriculum that widens the size later passes its final
    ``hi`` as ``size_hi``. No check for a generator without a config (``half_width``) or whose
    size cannot be told (:func:`largest_course_scale` is None)."""
    if not isinstance(owner, str):
        raise TypeError(f"owner must be a str (the component's name), got {type(owner).__name__}")
    resolution = RESOLUTION.check(resolution, "check_grid_resolution resolution")
    size_hi = SIZE_HI.check(size_hi, "check_grid_resolution size_hi")
    margin = MARGIN.check(margin, "check_grid_resolution margin")
    config = getattr(getattr(generator, "spec", None), "config", None)
    hw = getattr(config, "half_width", None)
    found = largest_course_scale(generator, size_hi)
    if hw is None or found is None:
        return None
    scale, where = found
    hw = float(hw)
    extent = EXTENT * scale + 2.0 * hw
    side = extent * (1.0 + 2.0 * _AUTO_MARGIN) if margin is None else extent + 2.0 * margin
    cell = side / int(resolution)
    across = 2.0 * hw / cell
    if across < MIN_TEXELS_ACROSS:
        need = math.ceil(MIN_TEXELS_ACROSS * side / (2.0 * hw))
        warnings.warn(
            f"{owner}: a {resolution}x{resolution} grid cannot resolve the road on the "
            f"largest course this generator can draw (scale {scale:g}, {where}): its square "
            f"of side {side:.4g} track units gets cells of {cell:.4g}, {across:.2f} texels "
            f"across the road (2 * half_width = {2.0 * hw:g}), fewer than "
            f"{MIN_TEXELS_ACROSS}. Raise the resolution to >= {need}, or shrink the course "
            "(scale, or the randomizer's hi); a curriculum that stays smaller passes its "
            "final hi as size_hi=",
            GridResolutionWarning,
            stacklevel=_outside_package(),
        )
    return cell


def _outside_package() -> int:
    """The stacklevel of the innermost caller outside ``track_gen`` (for warnings)."""
    pkg = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkg):
        frame, level = frame.f_back, level + 1
    return level


# ----------------------------------------------------------------------------- component


class HeightFieldBake(Component):
    """Course component ``"heightfield"``: the road height field of every env, rebaked for
    the regenerated envs in the regeneration body (``on_generate``).

    Args:
        resolution: texels per side (``RESOLUTION``).
        size_hi: the largest course scale the course will draw (``SIZE_HI``), for the
            resolution check; None reads it from the generator (a size randomizer's
            construction hi, else the construction scale). Pass a curriculum's final hi.
        margin: margin around each env's borders, track units (``MARGIN``; None: 10%).
        fill: off-road height (``FILL``; None: each env's lowest road height).

    ``attach`` warns (:class:`GridResolutionWarning`, :func:`check_grid_resolution`) when the
    grid cannot resolve the largest course, and raises TypeError on a gate course. ``utility``
    is the :class:`HeightFieldBaker` (``course.heightfield``), ``result`` its
    :class:`HeightField`. No per-step work.
    """

    name = "heightfield"
    families = ("track",)

    def __init__(
        self,
        resolution: int = 128,
        size_hi: float | None = None,
        *,
        margin: float | None = None,
        fill: float | None = None,
        name: str | None = None,
    ):
        super().__init__(name=name)
        self.resolution = RESOLUTION.check(resolution, "HeightFieldBake resolution")
        self.size_hi = SIZE_HI.check(size_hi, "HeightFieldBake size_hi")
        self.margin = MARGIN.check(margin, "HeightFieldBake margin")
        self.fill = FILL.check(fill, "HeightFieldBake fill")

    def attach(self, ctx) -> None:
        track = ctx.generator.result
        if not isinstance(track, Track):
            raise TypeError(
                f"HeightFieldBake needs a track generator (its result a Track), got a "
                f"{type(track).__name__}: a gate course has no road surface"
            )
        check_grid_resolution(
            f"HeightFieldBake(resolution={self.resolution})",
            ctx.generator,
            self.resolution,
            size_hi=self.size_hi,
            margin=self.margin,
        )
        self.utility = HeightFieldBaker(
            track, resolution=self.resolution, margin=self.margin, fill=self.fill
        )
        self.result = self.utility.field

    def planned_bytes(self, layout, config) -> int:
        """The :class:`HeightFieldBaker`'s buffers (:meth:`HeightFieldBaker.buffers`)."""
        return buffer_bytes(HeightFieldBaker.buffers(layout.num_envs, self.resolution))

    def on_generate(self, ctx, mask) -> None:
        self.utility.bake(mask)
