"""The band collider utility."""

from __future__ import annotations

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array
from ...core.exec import require_not_capturing
from ...core.layout import PER_ITEM, resolve_kernel_layout
from ...core.settings import SettingsUtility, resolve_settings
from ...results import Track
from ..shared import fill_grid_kernel, mask_or
from .fields import BandCollisionSettings
from .items import (
    QUERY_PARTS,
    _segments_combine_kernel,
    _segments_parts_kernel,
    _strip_bead_kernel,
    _strip_chunk_kernel,
)
from .kernels import CHUNK_QUADS, _height_kernel, _Hit, band_beads_kernel
from .result import BandCollisionResult
from .sdf import (
    _sdf_frame_kernel,
    _sdf_quad_rect_kernel,
    _sdf_raster_kernel,
    _sdf_texel_kernel,
)
from .sdf_query import _sdf_query_kernel
from .segments import _segments_query_kernel, _strip_kernel


class BandCollisionUtility(SettingsUtility):
    """Oriented boxes against the road band of a :class:`~track_gen.results.Track`
    (see the module docstring for the band, the two methods and their accuracy).

    Args:
        track: the Track to test against. The collider keeps a reference and reads it in
            :meth:`refresh`, so a generator's stable ``result`` works across regenerations
            (refresh the regenerated envs).
        settings: a :class:`BandCollisionSettings` (positionally or as ``settings=``), or
            ``method`` by position; its fields, by keyword (``**fields``):
        method: ``"segments"`` (exact, default) or ``"sdf"`` (baked signed-distance grid).
        max_boxes: boxes per env ``B`` (``MAX_BOXES``); box ``b`` of env ``e`` is row
            ``e*B + b``.
        sdf_resolution: texels per side of each env's SDF grid (``SDF_RESOLUTION``;
            ``"sdf"`` only).
        sdf_padding: margin around the borders' bounding box in track units
            (``SDF_PADDING``), or None for 10% of its larger extent (``"sdf"`` only).
        clearance: ``CLEARANCE``: on an elevated track, a box whose centre is farther than
            this above or below the road surface is off the road (``oob = 1``) and
            ``contact.height`` says by how much; None (default) checks no height. One more
            launch per query, reading the Track's live centerline (O(count) per box).
        kernel_layout: ``KERNEL_LAYOUT``: ``"per_env"`` (the SDF bake and the segments
            refresh one thread per env, the segments query one per box), ``"per_item"``
            (the SDF bake one thread per texel, the segments refresh one per bead and chunk,
            the segments query five per box and a fold per box; a GPU's shape) or
            ``"auto"`` (per_env on the CPU, per_item on CUDA). Both give bitwise-identical
            results. The SDF query is one thread per box either way.

    Construction allocates every buffer and refreshes all envs. Attributes (read-only):

    * ``contact``: the :class:`BandCollisionResult` every query overwrites.
    * ``kernel_layout``: the resolved layout, ``"per_env"`` or ``"per_item"``.
    * ``beads``: int32 ``[E]``: beads of each env's band at its last refresh: ``count``
      clamped to ``[0, N_max]`` for a valid env (``valid != 0``) with at least 3 beads whose
      inner and outer borders (and centerline, with ``clearance``) are in range (finite,
      ``|x| <= COORD_LIMIT`` = 1e18, :mod:`~track_gen.core.extents`), else 0: the env answers
      as invalid.
    * ``strip``: vec4f ``[E*N_max]`` (``"segments"``): ``(inner.x, inner.y, outer.x,
      outer.y)`` per bead, track units (NaN past ``beads``).
    * ``chunk_box``: vec4f ``[E*ceil(N_max/CHUNK_QUADS)]`` (``"segments"``): bounding box
      ``(x0, y0, x1, y1)`` of each chunk of quads, track units (NaN past the env's chunks).
    * ``sdf``: float32 ``[E*res*res]`` (``"sdf"``): phi per texel, row-major per env
      (``e*res*res + j*res + i``, ``j`` along y), track units, positive inside the band.
    * ``sdf_border``: int8 ``[E*res*res]`` (``"sdf"``): border nearest to the texel
      (0 inner, 1 outer, -1 beyond the narrow band). With ``sdf``: ``5 * E * res^2`` bytes.
    * ``sdf_frame``: vec4f ``[E]`` (``"sdf"``): ``(x0, y0, cell, far)``: grid origin (corner of
      texel (0, 0)), cell size and the far-field clamp ``far = SDF_BAND_CELLS * cell``,
      track units; NaN for an invalid env.
    * ``sdf_aabb``: vec4f ``[E]`` (``"sdf"``): the borders' bounding box ``(x0, y0, x1, y1)``.

    Scratch of the ``per_item`` layout (allocated only for it): the SDF bake's texel
    rectangle ``(col0, row0, col1, row1)`` per quad (vec4i ``[E*N_max]``) and per chunk
    (vec4i ``[E*ceil(N_max/CHUNK_QUADS)]``); the segments query's box scan per box and its
    corner flags and corner scans (``[E*B]``, ``[4*E*B]``).
    """

    SETTINGS = BandCollisionSettings

    def __init__(
        self,
        track: Track,
        *settings: BandCollisionSettings | str,
        **fields,
    ):
        if not isinstance(track, Track):
            raise TypeError(f"track must be a Track, got {type(track).__name__}")
        self.settings = resolve_settings(
            BandCollisionSettings, "BandCollisionUtility", settings, fields
        )
        self.track = track
        self.device = track.count.device
        require_not_capturing(self.device, "BandCollisionUtility construction")
        self.kernel_layout = resolve_kernel_layout(self.settings.kernel_layout, self.device)
        self.num_envs = track.num_envs
        self._rows = self.num_envs * self.max_boxes
        self._nch = (track.N_max + CHUNK_QUADS - 1) // CHUNK_QUADS
        budget = AllocationBudget(self.device, "lower sdf_resolution or max_boxes")
        self._allocate(
            self,
            budget,
            self.device,
            self.settings,
            self.num_envs,
            track.N_max,
            kernel_layout=self.kernel_layout,
        )
        # recorded query launches and the box arrays they read (re-recorded, after the
        # checks, when other arrays come in)
        self._query_boxes: tuple = ()
        self._query_launches: tuple = ()
        self.refresh()

    @staticmethod
    def _allocate(
        out, budget, device, s: BandCollisionSettings, E: int, n_max: int, *, kernel_layout: str
    ) -> None:
        """Every array of a collider of ``E`` envs of ``n_max`` beads in the resolved
        ``kernel_layout``, set on ``out`` (the collider, or a stand-in when :meth:`buffers`
        records a plan)."""
        rows, per_item = E * s.max_boxes, kernel_layout == PER_ITEM
        nch = (n_max + CHUNK_QUADS - 1) // CHUNK_QUADS
        height = s.clearance is not None
        out.contact = BandCollisionResult.allocate(rows, device, height, budget, s.max_boxes)
        out._all = budget.full(E, 1, wp.int32, "all-envs mask")
        out.beads = budget.zeros(E, wp.int32, "band beads")
        out.strip = out.chunk_box = None
        out.sdf = out.sdf_border = out.sdf_frame = out.sdf_aabb = None
        out._quad_rect = out._chunk_rect = None
        out._box_hit = out._corner_inside = out._corner_hit = None
        if s.method == "segments":
            out.strip = budget.zeros(E * n_max, wp.vec4f, "border strip")
            out.chunk_box = budget.zeros(E * nch, wp.vec4f, "chunk boxes")
            if per_item:
                out._box_hit = budget.zeros(rows, _Hit, "per_item box scans (E * max_boxes)")
                out._corner_inside = budget.zeros(4 * rows, wp.int32, "per_item corner flags")
                out._corner_hit = budget.zeros(4 * rows, _Hit, "per_item corner scans")
        else:
            res = s.sdf_resolution
            texels = E * res * res
            what = f"SDF grids (E * sdf_resolution^2 = {E} * {res}^2)"
            out.sdf = budget.zeros(texels, wp.float32, what)
            out.sdf_border = budget.zeros(texels, wp.int8, what)
            out.sdf_frame = budget.zeros(E, wp.vec4f, "SDF frames")
            out.sdf_aabb = budget.zeros(E, wp.vec4f, "SDF boxes")
            if per_item:
                out._quad_rect = budget.zeros(E * n_max, wp.vec4i, "per_item quad rects")
                out._chunk_rect = budget.zeros(E * nch, wp.vec4i, "per_item chunk rects")

    # ------------------------------------------------------------------ refresh

    def refresh(self, mask: wp.array | None = None) -> None:
        """Recompute the data derived from the Track for the envs with ``mask[e] != 0``
        (``None``: all envs): bead counts and validity, then the packed borders and chunk
        boxes (``"segments"``) or the SDF bake (``"sdf"``: frame, then the narrow band).

        ``mask`` is a contiguous ``[E]`` int32 array on the track's device, read by pointer
        (a recorded refresh reads its current contents). Unmasked envs' derived data stay
        bitwise unchanged. Allocation-free; call it after every regeneration."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        t = self.track
        wp.launch(
            band_beads_kernel,
            self.num_envs,
            inputs=[mask, t.count, t.valid, t.inner, t.outer, t.center]
            + [0 if self.clearance is None else 1, t.N_max],
            outputs=[self.beads],
            device=self.device,
        )
        if self.method == "segments":
            self._refresh_segments(mask)
        else:
            self._refresh_sdf(mask)

    def _refresh_segments(self, mask: wp.array) -> None:
        t, E, dev = self.track, self.num_envs, self.device
        n_max, nch = t.N_max, self._nch
        if self.kernel_layout != PER_ITEM:
            wp.launch(
                _strip_kernel,
                E,
                inputs=[mask, t.inner, t.outer, self.beads, n_max, nch],
                outputs=[self.strip, self.chunk_box],
                device=dev,
            )
            return
        wp.launch(
            _strip_bead_kernel,
            (E, n_max),
            inputs=[mask, t.inner, t.outer, self.beads, n_max],
            outputs=[self.strip],
            device=dev,
        )
        wp.launch(
            _strip_chunk_kernel,
            (E, nch),
            inputs=[mask, self.beads, self.strip, n_max, nch],
            outputs=[self.chunk_box],
            device=dev,
        )

    def _refresh_sdf(self, mask: wp.array) -> None:
        t, E, dev = self.track, self.num_envs, self.device
        n_max, nch, res = t.N_max, self._nch, self.sdf_resolution
        pad = -1.0 if self.sdf_padding is None else self.sdf_padding
        wp.launch(
            _sdf_frame_kernel,
            E,
            inputs=[mask, self.beads, t.inner, t.outer, n_max, res, pad],
            outputs=[self.sdf_frame, self.sdf_aabb],
            device=dev,
        )
        if self.kernel_layout != PER_ITEM:
            wp.launch(
                fill_grid_kernel,
                (E, res),
                inputs=[mask, self.sdf_frame, res, 1, wp.int8(-1)],
                outputs=[self.sdf, self.sdf_border],
                device=dev,
            )
            wp.launch(
                _sdf_raster_kernel,
                E,
                inputs=[mask, t.inner, t.outer, self.beads, self.sdf_frame, n_max, res],
                outputs=[self.sdf, self.sdf_border],
                device=dev,
            )
            return
        wp.launch(
            _sdf_quad_rect_kernel,
            (E, nch),
            inputs=[mask, t.inner, t.outer, self.beads, self.sdf_frame, n_max, nch, res],
            outputs=[self._quad_rect, self._chunk_rect],
            device=dev,
        )
        wp.launch(
            _sdf_texel_kernel,
            (E, res, res),
            inputs=[mask, t.inner, t.outer, self.beads, self.sdf_frame, self._quad_rect]
            + [self._chunk_rect, n_max, nch, res],
            outputs=[self.sdf, self.sdf_border],
            device=dev,
        )

    # ------------------------------------------------------------------ query

    def query(
        self, position: wp.array, orientation: wp.array, half_extents: wp.array
    ) -> BandCollisionResult:
        """Test ``B = max_boxes`` boxes per env against the band; returns :attr:`contact`.

        Args:
            position: vec3f ``[E*B]``: box centres, track units (z ignored). A non-finite
                position (or orientation, or half extents) marks an inactive slot: oob 0,
                NaN geometry, boundary -1. A finite one is clamped to ``COORD_LIMIT``
                (1e18; within it, used bit for bit).
            orientation: quatf ``[E*B]`` (x, y, z, w): only the yaw about +z is used (the
                direction of the rotated local x axis in plan view). Any finite scale: a
                quaternion whose largest component is beyond ``[2**-30, 2**30]`` is divided
                by it first, so 1e30 or 1e-30 components give the yaw of the unit one.
            half_extents: vec2f ``[E*B]``: half length along the box's local x and half
                width along its local y, track units (absolute values, clamped to
                ``COORD_LIMIT``, are used).

        An active box of a valid env gets finite answers for any finite pose (a box beyond
        ``COORD_LIMIT``, or larger, is answered as the clamped box: off the road, oob 1, a
        finite negative distance). Every box of an invalid env (``beads == 0`` at the env's
        last refresh: ``valid == 0``, fewer than 3 beads, or borders out of range) gets oob
        1, NaN geometry and boundary -1, inactive slots included. Inputs are
        checked on the host before anything launches (ValueError naming the argument); no
        allocation, no host synchronization. The launches are recorded once per set of input
        arrays (the same arrays, read by pointer, are neither checked nor packed again).
        """
        key = (position, orientation, half_extents, self.track.center)
        if len(self._query_boxes) != len(key) or any(
            a is not b for a, b in zip(key, self._query_boxes, strict=True)
        ):
            self._query_launches = self._record_query(position, orientation, half_extents)
            self._query_boxes = key
        for launch in self._query_launches:
            launch.launch()
        return self.contact

    def _record_query(
        self, position: wp.array, orientation: wp.array, half_extents: wp.array
    ) -> tuple:
        """Check the box arrays and record the query's launches on them (nothing runs)."""
        rows, dev = self._rows, self.device
        slot = "one row per box slot (env e, box b at row e*max_boxes + b)"
        check_array("position", position, wp.vec3f, rows, dev, slot)
        check_array("orientation", orientation, wp.quatf, rows, dev, slot)
        check_array("half_extents", half_extents, wp.vec2f, rows, dev, slot)
        t, c, B = self.track, self.contact, self.max_boxes
        outs = c.arrays(exclude=("height",))  # the height kernel writes it
        boxes = [position, orientation, half_extents]
        segments = [self.beads, self.strip, self.chunk_box, *boxes, t.N_max, self._nch, B]

        def record(kernel, dim, inputs, outputs):
            return wp.launch(
                kernel, dim, inputs=inputs, outputs=outputs, device=dev, record_cmd=True
            )

        if self.method == "sdf":
            launches = [
                record(
                    _sdf_query_kernel,
                    rows,
                    [
                        self.beads,
                        self.sdf,
                        self.sdf_border,
                        self.sdf_frame,
                        self.sdf_aabb,
                        *boxes,
                        self.sdf_resolution,
                        B,
                    ],
                    outs,
                )
            ]
        elif self.kernel_layout != PER_ITEM:
            launches = [record(_segments_query_kernel, rows, segments, outs)]
        else:
            launches = [
                record(
                    _segments_parts_kernel,
                    (rows, QUERY_PARTS),
                    segments,
                    [self._box_hit, self._corner_inside, self._corner_hit],
                ),
                record(
                    _segments_combine_kernel,
                    rows,
                    [
                        self.beads,
                        self.strip,
                        *boxes,
                        self._box_hit,
                        self._corner_inside,
                        self._corner_hit,
                        t.N_max,
                        B,
                    ],
                    outs,
                ),
            ]
        if self.clearance is not None:
            launches.append(
                record(
                    _height_kernel,
                    rows,
                    [position, orientation, half_extents, t.center, self.beads, t.N_max]
                    + [B, self.clearance],
                    [c.oob, c.height],
                )
            )
        return tuple(launches)
