"""The height-field baker utility."""

from __future__ import annotations

import math
import os
import sys
import warnings

import warp as wp

from ...core.budget import AllocationBudget
from ...core.exec import require_not_capturing
from ...core.extents import EXTENT
from ...core.settings import SettingsUtility, resolve_settings
from ...results import Track
from ..shared import fill_grid_kernel, mask_or
from .fields import MARGIN, RESOLUTION, SIZE_HI, HeightFieldSettings
from .kernels import _frame_kernel, _raster_kernel
from .result import HeightFieldResult

#: Fewest texels across the road (``2 * half_width / cell``) a grid must give the largest
#: course before :func:`check_grid_resolution` warns.
MIN_TEXELS_ACROSS = 4


#: Default margin, as a fraction of the borders' larger side (``margin=None``).
_AUTO_MARGIN = 0.1


class GridResolutionWarning(UserWarning):
    """A baked grid (height field, SDF) is too coarse for the largest course the generator
    can draw: fewer than :data:`MIN_TEXELS_ACROSS` texels across the road."""


class HeightFieldUtility(SettingsUtility):
    """Bakes the road height of every env of a :class:`~track_gen.results.Track` into a
    square grid (see the module docstring for the surface, the frame and the overlap rule).

    Args:
        track: the Track to bake. The baker keeps a reference and reads it in :meth:`bake`,
            so a generator's stable ``result`` works across regenerations (rebake the
            regenerated envs).
        settings: a :class:`HeightFieldSettings` (positionally or as ``settings=``), or
            ``resolution`` by position; its fields by keyword (``**fields``):
        resolution: texels per side of each env's grid (``RESOLUTION``).
        margin: margin around the borders' bounding box, track units (``MARGIN``), or None for
            10% of its larger side.
        fill: height of the off-road texels, track units (``FILL``), or None for each env's
            lowest road height.

    Construction allocates :attr:`field` (``5 * E * res^2`` bytes plus the frames) and bakes
    every env. Attributes (read-only): ``field`` (the :class:`HeightFieldResult` every bake
    overwrites), ``track``, ``resolution``, ``margin``, ``fill``, ``num_envs``, ``device``.
    """

    SETTINGS = HeightFieldSettings

    def __init__(
        self,
        track: Track,
        *settings: HeightFieldSettings | int,
        **fields,
    ):
        if not isinstance(track, Track):
            raise TypeError(
                f"HeightFieldUtility(track): track must be a Track (a TrackGenerator's result), "
                f"got {type(track).__name__}"
            )
        self.settings = resolve_settings(
            HeightFieldSettings, "HeightFieldUtility", settings, fields
        )
        self.track = track
        self.device = track.count.device
        require_not_capturing(self.device, "HeightFieldUtility construction")
        self.num_envs = track.num_envs
        budget = AllocationBudget(self.device, "lower the height-field resolution")
        self._allocate(self, budget, self.device, self.settings, self.num_envs)
        self.bake()

    @staticmethod
    def _allocate(out, budget, device, s: HeightFieldSettings, E: int) -> None:
        """Every array of a baker of ``E`` envs, set on ``out`` (the baker, or a stand-in
        when :meth:`buffers` records a plan)."""
        res = s.resolution
        what = f"height fields (E * resolution^2 = {E} * {res}^2)"
        out._all = budget.full(E, 1, wp.int32, "all-envs mask")
        out.field = HeightFieldResult(
            height=budget.zeros(E * res * res, wp.float32, what),
            on_road=budget.zeros(E * res * res, wp.int8, what),
            frame=budget.zeros(E, wp.vec4f, "height-field frames"),
        )

    def bake(self, mask: wp.array | None = None) -> HeightFieldResult:
        """Rebake the envs with ``mask[e] != 0`` (None: every env) from the Track's current
        borders and return :attr:`field` (the same instance every call).

        ``mask`` is a contiguous ``[E]`` int32 array on the track's device, read by pointer (a
        recorded bake reads its current contents). Unmasked envs stay bitwise unchanged.
        Three launches, no allocation, no host synchronization: call it after every
        regeneration with the same mask."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
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
