"""The ego raster utility."""

from __future__ import annotations

import math

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array
from ...core.exec import require_not_capturing
from ...core.settings import SettingsUtility, resolve_settings
from ...results import Track
from ..heightfield import HeightFieldResult
from ..props import PropsResult
from ..shared import mask_or
from .fields import EgoRasterSettings
from .kernels import _cells_kernel, _cones_kernel, _grid_kernel, _pose_kernel
from .result import EgoRasterResult

#: Bucket index entries each env may hold, per bead of ``N_max`` (more: the env's cells test
#: every quad, still exactly).
ENTRIES_PER_BEAD = 16
#: The padding of a quad's box when it is binned, in cells (above half a cell's diagonal;
#: the grid adds 1e-6 times the course's largest coordinate for float32 rounding).
PAD_CELLS = 0.75


def grid_buckets(n_max: int) -> int:
    """Buckets per side of each env's grid: ``clamp(isqrt(N_max) + 1, 8, 64)``."""
    return min(max(math.isqrt(int(n_max)) + 1, 8), 64)


class EgoRasterUtility(SettingsUtility):
    """Top-down, agent-centred, heading-up rasters of a track's road, per env.

    Args:
        track: the generator's :class:`~track_gen.Track` (read live by pointer: call
            :meth:`refresh` after every regeneration).
        settings: an :class:`EgoRasterSettings` (positionally or as ``settings=``), or
            ``resolution`` (cells per side ``res``) and ``extent`` (side of the square window,
            track units; cell side ``extent / res``) by position, or by keyword
            (``**fields``).
        props: an optional :class:`~track_gen.tools.PropsResult` of cones (``kind == "cone"``)
            on the same envs, read live: sets the ``CONE`` bit.
        height_field: an optional :class:`~track_gen.tools.HeightFieldResult` on the same envs,
            read live: fills :attr:`EgoRasterResult.height`.

    State (allocated once, rebuilt by :meth:`refresh` for the masked envs): per env, the
    plan-view box of its borders padded by ``PAD_CELLS`` cells, cut into ``G x G`` buckets
    (:func:`grid_buckets`), and for each bucket the quads whose padded box overlaps it
    (ascending, at most ``ENTRIES_PER_BEAD * N_max`` entries per env; an env needing more is
    flagged in ``overflow`` and its cells test every quad), with each quad's plan-view box
    (``boxes``) and edge slopes (``slopes``, vec4f ``[E*N_max]`` each; a quad whose box is
    farther than 1.5 cells from a cell centre is skipped without reading its corners). A cell
    finds its candidates in its centre's bucket, so its flags equal those of a test against
    every quad.
    """

    SETTINGS = EgoRasterSettings

    def __init__(
        self,
        track: Track,
        *settings: EgoRasterSettings | int | float,
        props: PropsResult | None = None,
        height_field: HeightFieldResult | None = None,
        **fields,
    ):
        # the declarations keep the cell side extent / res >= 1e-6 / 512, far above
        # float32's smallest normal: no second bound here
        self.settings = resolve_settings(
            EgoRasterSettings, "EgoRasterUtility", settings, fields, positional=2
        )
        for name in ("inner", "outer", "center", "count", "valid"):
            if not isinstance(getattr(track, name, None), wp.array):
                raise TypeError(
                    f"EgoRasterUtility(track): track must be a Track (a TrackGenerator's result), "
                    f"got {type(track).__name__} without a wp.array {name!r}"
                )
        E = track.count.shape[0]
        device = track.count.device
        if props is not None:
            if not isinstance(props, PropsResult):
                raise TypeError(
                    "EgoRasterUtility props must be a PropsResult of cones (tools.Props' result, "
                    "or "
                    f"tools.PropsUtility(...).props) or None, got {type(props).__name__}"
                )
            if props.kind != "cone":
                raise ValueError(
                    "EgoRasterUtility(props=...): the raster draws cones; pass a PropsResult of "
                    f"kind 'cone' (got kind {getattr(props, 'kind', None)!r})"
                )
            for name, dtype in (("position", wp.vec3f), ("scale", wp.vec3f)):
                check_array(
                    f"props.{name}",
                    getattr(props, name, None),
                    dtype,
                    props.position.shape[0],
                    device,
                )
            check_array("props.count", props.count, wp.int32, E, device)
        if height_field is not None:
            if not isinstance(height_field, HeightFieldResult):
                raise TypeError(
                    "EgoRasterUtility height_field must be a HeightFieldResult "
                    "(tools.HeightFieldBake's "
                    "result, or tools.HeightFieldUtility(...).field) or None, got "
                    f"{type(height_field).__name__}"
                )
            rows = height_field.height.shape[0]
            check_array("height_field.frame", height_field.frame, wp.vec4f, E, device)
            check_array("height_field.height", height_field.height, wp.float32, rows, device)
        require_not_capturing(device, "EgoRasterUtility construction")
        self.track = track
        self.props = props
        self.height_field = height_field
        self.device = device
        self.num_envs = E
        self.N_max = track.center.shape[0] // E
        self.buckets = grid_buckets(self.N_max)
        self.capacity = ENTRIES_PER_BEAD * self.N_max
        self.cell = self.extent / self.resolution
        budget = AllocationBudget(device, "lower num_envs or resolution")
        self._allocate(
            self, budget, device, self.settings, E, self.N_max, height=height_field is not None
        )
        self.refresh()

    @staticmethod
    def _allocate(out, budget, device, s: EgoRasterSettings, E: int, n_max: int, *, height: bool):
        """Every array of a rasterizer of ``E`` envs of ``n_max`` rows, set on ``out`` (the
        rasterizer, or a stand-in when :meth:`buffers` records a plan)."""
        g, nan = grid_buckets(n_max), float("nan")
        nan4 = wp.vec4f(nan, nan, nan, nan)
        out.image = EgoRasterResult.allocate(E, s.resolution, height, device, budget)
        out.beads = budget.zeros(E, wp.int32, "raster beads")
        out.frame = budget.full(E, nan4, wp.vec4f, "raster grids")
        out.overflow = budget.zeros(E, wp.int32, "raster grid overflow")
        out.offsets = budget.zeros(E * (g * g + 1), wp.int32, "raster grid buckets")
        out.entries = budget.zeros(E * ENTRIES_PER_BEAD * n_max, wp.int32, "raster grid entries")
        out.boxes = budget.full(E * n_max, nan4, wp.vec4f, "raster quad boxes")
        out.slopes = budget.full(E * n_max, nan4, wp.vec4f, "raster quad slopes")
        out._all = budget.full(E, 1, wp.int32, "all-envs mask")
        out._empty_f = budget.zeros(1, wp.float32, "no height field")
        out._empty_v = budget.zeros(1, wp.vec4f, "no height field")

    def refresh(self, mask: wp.array | None = None) -> None:
        """Rebuild the bucket grids of the envs with ``mask[e] != 0`` (None: all) from the
        track; unmasked envs stay bitwise unchanged. One launch, allocation-free."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        t = self.track
        wp.launch(
            _grid_kernel,
            self.num_envs,
            inputs=[mask, t.inner, t.outer, t.center, t.count, t.valid]
            + [self.N_max, self.buckets, self.capacity, float(PAD_CELLS * self.cell)],
            outputs=[self.beads, self.frame, self.overflow, self.offsets, self.entries]
            + [self.boxes, self.slopes],
            device=self.device,
        )

    def render(self, position: wp.array, orientation: wp.array) -> EgoRasterResult:
        """The raster of every env around the agent at ``position`` (vec3f ``[E]``, track
        units) heading along ``orientation`` (quatf ``[E]``, x y z w, world-from-body: the
        plan-view direction of its rotated body x); returns :attr:`image` (the same instance
        every call). Two launches (three with cones), no allocation, no host sync."""
        E, res = self.num_envs, self.resolution
        check_array("position", position, wp.vec3f, E, self.device, "one agent per env")
        check_array("orientation", orientation, wp.quatf, E, self.device, "one agent per env")
        im, t, hf = self.image, self.track, self.height_field
        wp.launch(
            _pose_kernel,
            E,
            inputs=[position, orientation, self.beads],
            outputs=[im.heading],
            device=self.device,
        )
        use_height = hf is not None
        hf_arrays = [hf.height, hf.frame] if use_height else [self._empty_f, self._empty_v]
        hf_res = hf.resolution if use_height else 0
        wp.launch(
            _cells_kernel,
            (E, res),
            inputs=[position, im.heading, t.inner, t.outer, self.boxes, self.slopes]
            + [self.beads, self.frame]
            + [self.overflow, self.offsets, self.entries, *hf_arrays, self.N_max]
            + [self.buckets, self.capacity, res, float(self.cell), int(use_height), hf_res],
            outputs=[im.cells, im.height if use_height else self._empty_f],
            device=self.device,
        )
        if self.props is not None:
            ps = self.props
            wp.launch(
                _cones_kernel,
                E,
                inputs=[position, im.heading, ps.position, ps.scale, ps.count]
                + [ps.position.shape[0] // E, res, float(self.cell)],
                outputs=[im.cells],
                device=self.device,
            )
        return im
