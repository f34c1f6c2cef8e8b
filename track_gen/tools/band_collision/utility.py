"""Oriented boxes against the road band of a :class:`~track_gen.results.Track`.

The band of a valid env is the road between its index-aligned borders: the union of the quads
``(inner[i], outer[i], outer[i+1], inner[i+1])`` for ``i < count`` (the closing quad
``count-1 -> 0`` included), in plan view (x, y; z is ignored). A quad contains a point by the
even-odd rule over its four edges; the radial edge two neighbouring quads share is evaluated
the same way for both, so a point on it (a box spawned on a bead) lies in exactly one.
:class:`BandCollider` answers, per box, whether some part of it is off the road, its signed
clearance, the closest border point and the border normal there, with one of two methods:

``"segments"`` (exact)
    One thread per box. :meth:`BandCollider.refresh` packs each env's borders into one
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
    ``(x0 + (i + 0.5) * cell, y0 + (j + 0.5) * cell)``. The bake (:meth:`BandCollider.refresh`,
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

Both methods answer from the data :meth:`BandCollider.refresh` derived from the Track (bead
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

from __future__ import annotations

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array, check_mask
from ...core.component import Component, InputSpec, buffer_bytes
from ...core.exec import require_not_capturing
from ...core.layout import KERNEL_LAYOUT, PER_ITEM, resolve_kernel_layout
from ...core.tunable import Tunable
from ...results import Track
from ..heightfield import SIZE_HI, check_grid_resolution
from ..shared import fill_grid_kernel
from .items import (
    QUERY_PARTS,
    _segments_combine_kernel,
    _segments_parts_kernel,
    _strip_bead_kernel,
    _strip_chunk_kernel,
)
from .kernels import CHUNK_QUADS, SDF_BAND_CELLS, _Hit, band_beads_kernel
from .result import BandContact, _height_kernel
from .sdf import (
    _sdf_frame_kernel,
    _sdf_quad_rect_kernel,
    _sdf_raster_kernel,
    _sdf_texel_kernel,
)
from .sdf_query import _sdf_query_kernel
from .segments import _segments_query_kernel, _strip_kernel

wp.set_module_options({"enable_backward": False})

__all__ = [
    "CHUNK_QUADS",
    "MAX_BOXES",
    "METHOD",
    "METHODS",
    "SDF_PADDING",
    "SDF_RESOLUTION",
    "SDF_BAND_CELLS",
    "CLEARANCE",
    "BandCollider",
    "BandCollision",
    "BandContact",
]

METHOD = Tunable(
    "method",
    "segments",
    choices=("segments", "sdf"),
    doc="segments: exact border segments; sdf: a baked signed-distance grid per env.",
)
MAX_BOXES = Tunable(
    "max_boxes", 1, lo=1, hi=1024, unit="boxes", doc="boxes per env B (inputs are [E*B])."
)
SDF_RESOLUTION = Tunable(
    "sdf_resolution",
    128,
    lo=8,
    hi=4096,
    unit="texels",
    doc="texels per side of each env's SDF grid (sdf only).",
)
SDF_PADDING = Tunable(
    "sdf_padding",
    None,
    kind="float",
    lo=0.0,
    hi=1.0e6,
    optional=True,
    unit="track units",
    doc="margin around the borders' bounding box; None is 10% of its larger extent (sdf only).",
)
CLEARANCE = Tunable(
    "clearance",
    None,
    kind="float",
    lo=0.0,
    hi=1.0e6,
    optional=True,
    unit="track units",
    doc="how far a box centre may be above or below the road surface (elevated tracks); "
    "farther is off the road (oob = 1). None: heights are not checked (height NaN).",
)
#: Collision methods accepted by :class:`BandCollider`.
METHODS = METHOD.choices


class BandCollider:
    """Oriented boxes against the road band of a :class:`~track_gen.results.Track`
    (see the module docstring for the band, the two methods and their accuracy).

    Args:
        track: the Track to test against. The collider keeps a reference and reads it in
            :meth:`refresh`, so a generator's stable ``result`` works across regenerations
            (refresh the regenerated envs).
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

    * ``contact``: the :class:`BandContact` every query overwrites.
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

    def __init__(
        self,
        track: Track,
        *,
        method: str = "segments",
        max_boxes: int = 1,
        sdf_resolution: int = 128,
        sdf_padding: float | None = None,
        clearance: float | None = None,
        kernel_layout: str = "auto",
    ):
        if not isinstance(track, Track):
            raise TypeError(f"track must be a Track, got {type(track).__name__}")
        method = METHOD.check(method, "BandCollider method")
        clearance = CLEARANCE.check(clearance, "BandCollider clearance")
        self.clearance = None if clearance is None else float(clearance)
        max_boxes = MAX_BOXES.check(max_boxes, "BandCollider max_boxes")
        sdf_resolution = SDF_RESOLUTION.check(sdf_resolution, "BandCollider sdf_resolution")
        sdf_padding = SDF_PADDING.check(sdf_padding, "BandCollider sdf_padding")
        kernel_layout = KERNEL_LAYOUT.check(kernel_layout, "BandCollider kernel_layout")
        self.track = track
        self.device = track.count.device
        require_not_capturing(self.device, "BandCollider construction")
        self.method = method
        self.kernel_layout = resolve_kernel_layout(kernel_layout, self.device)
        per_item = self.kernel_layout == PER_ITEM
        self.num_envs = track.num_envs
        self.max_boxes = int(max_boxes)
        self.sdf_resolution = int(sdf_resolution)
        self.sdf_padding = None if sdf_padding is None else float(sdf_padding)
        E, dev = self.num_envs, self.device
        budget = AllocationBudget(dev, "lower sdf_resolution or max_boxes")
        self._rows = E * self.max_boxes
        budget.take(self._rows * 6, wp.vec3f, "box contacts (E * max_boxes)")
        self._all = budget.full(E, 1, wp.int32, "all-envs mask")
        self.contact = BandContact.allocate(self._rows, dev, height=self.clearance is not None)
        self._nch = (track.N_max + CHUNK_QUADS - 1) // CHUNK_QUADS
        self.beads = budget.zeros(E, wp.int32, "band beads")
        self.strip = self.chunk_box = None
        self.sdf = self.sdf_border = self.sdf_frame = self.sdf_aabb = None
        self._quad_rect = self._chunk_rect = None
        self._box_hit = self._corner_inside = self._corner_hit = None
        if method == "segments":
            self.strip = budget.zeros(E * track.N_max, wp.vec4f, "border strip")
            self.chunk_box = budget.zeros(E * self._nch, wp.vec4f, "chunk boxes")
            if per_item:
                rows = self._rows
                self._box_hit = budget.zeros(rows, _Hit, "per_item box scans (E * max_boxes)")
                self._corner_inside = budget.zeros(4 * rows, wp.int32, "per_item corner flags")
                self._corner_hit = budget.zeros(4 * rows, _Hit, "per_item corner scans")
        else:
            texels = E * self.sdf_resolution * self.sdf_resolution
            what = f"SDF grids (E * sdf_resolution^2 = {E} * {self.sdf_resolution}^2)"
            self.sdf = budget.zeros(texels, wp.float32, what)
            self.sdf_border = budget.zeros(texels, wp.int8, what)
            self.sdf_frame = budget.zeros(E, wp.vec4f, "SDF frames")
            self.sdf_aabb = budget.zeros(E, wp.vec4f, "SDF boxes")
            if per_item:
                self._quad_rect = budget.zeros(E * track.N_max, wp.vec4i, "per_item quad rects")
                self._chunk_rect = budget.zeros(E * self._nch, wp.vec4i, "per_item chunk rects")
        # recorded query launches and the box arrays they read (re-recorded, after the
        # checks, when other arrays come in)
        self._query_boxes: tuple = ()
        self._query_launches: tuple = ()
        self.refresh()

    @staticmethod
    def buffers(
        num_envs: int,
        n_max: int,
        method: str,
        max_boxes: int,
        sdf_resolution: int,
        height: bool,
        kernel_layout: str,
    ) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a collider of ``num_envs`` envs of ``n_max``
        beads allocates (``kernel_layout`` resolved: ``"per_env"`` or ``"per_item"``;
        ``height``: a clearance is set)."""
        E, rows = num_envs, num_envs * max_boxes
        nch = (n_max + CHUNK_QUADS - 1) // CHUNK_QUADS
        out = [(E, wp.int32), *BandContact.buffers(rows, height), (E, wp.int32)]
        per_item = kernel_layout == PER_ITEM
        if method == "segments":
            out += [(E * n_max, wp.vec4f), (E * nch, wp.vec4f)]
            if per_item:
                out += [(rows, _Hit), (4 * rows, wp.int32), (4 * rows, _Hit)]
        else:
            texels = E * sdf_resolution * sdf_resolution
            out += [(texels, wp.float32), (texels, wp.int8), (E, wp.vec4f), (E, wp.vec4f)]
            if per_item:
                out += [(E * n_max, wp.vec4i), (E * nch, wp.vec4i)]
        return out

    # ------------------------------------------------------------------ refresh

    def refresh(self, mask: wp.array | None = None) -> None:
        """Recompute the data derived from the Track for the envs with ``mask[e] != 0``
        (``None``: all envs): bead counts and validity, then the packed borders and chunk
        boxes (``"segments"``) or the SDF bake (``"sdf"``: frame, then the narrow band).

        ``mask`` is a contiguous ``[E]`` int32 array on the track's device, read by pointer
        (a recorded refresh reads its current contents). Unmasked envs' derived data stay
        bitwise unchanged. Allocation-free; call it after every regeneration."""
        if mask is None:
            mask = self._all
        else:
            check_mask(mask, self.num_envs, self.device)
        if self.method == "segments":
            self._refresh_segments(mask)
        else:
            self._refresh_sdf(mask)

    def _refresh_segments(self, mask: wp.array) -> None:
        t, E, dev = self.track, self.num_envs, self.device
        n_max, nch = t.N_max, self._nch
        use_center = 0 if self.clearance is None else 1
        if self.kernel_layout != PER_ITEM:
            wp.launch(
                _strip_kernel,
                E,
                inputs=[mask, t.inner, t.outer, t.count, t.valid, t.center, use_center]
                + [n_max, nch],
                outputs=[self.beads, self.strip, self.chunk_box],
                device=dev,
            )
            return
        wp.launch(
            band_beads_kernel,
            E,
            inputs=[mask, t.count, t.valid, t.inner, t.outer, t.center, use_center, n_max],
            outputs=[self.beads],
            device=dev,
        )
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
            inputs=[mask, t.inner, t.outer, t.count, t.valid, t.center]
            + [0 if self.clearance is None else 1, n_max, res, pad],
            outputs=[self.beads, self.sdf_frame, self.sdf_aabb],
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
    ) -> BandContact:
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
        outs = [c.oob, c.distance, c.nearest, c.normal, c.boundary]
        boxes = [position, orientation, half_extents]

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
            launches = [
                record(
                    _segments_query_kernel,
                    rows,
                    [
                        self.beads,
                        self.strip,
                        self.chunk_box,
                        *boxes,
                        t.N_max,
                        self._nch,
                        B,
                    ],
                    outs,
                )
            ]
        else:
            launches = [
                record(
                    _segments_parts_kernel,
                    (rows, QUERY_PARTS),
                    [
                        self.beads,
                        self.strip,
                        self.chunk_box,
                        *boxes,
                        t.N_max,
                        self._nch,
                        B,
                    ],
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


def box_inputs(max_boxes: int) -> tuple[InputSpec, ...]:
    """The course inputs of ``max_boxes`` oriented boxes per env, shared by every box
    collision: ``box_position`` vec3f (routed from ``position`` at one box per env),
    ``orientation`` quatf (yaw used), ``half_extents`` vec2f, each ``[E * max_boxes]``."""
    return (
        InputSpec(
            "box_position",
            wp.vec3f,
            slots=max_boxes,
            default="position" if max_boxes == 1 else None,
            doc="box centres, track units",
        ),
        InputSpec("orientation", wp.quatf, slots=max_boxes, doc="box orientations (yaw)"),
        InputSpec("half_extents", wp.vec2f, slots=max_boxes, doc="box half length, width"),
    )


class BandCollision(Component):
    """Course component ``"collision"``: oriented boxes against the road band.

    Args:
        method: ``"segments"`` (exact, reads the borders) or ``"sdf"`` (a baked grid per env,
            refreshed for the regenerated envs).
        max_boxes: boxes per env B (inputs are ``[E*B]``).
        sdf_resolution: grid side for ``"sdf"``.
        clearance: see :class:`BandCollider` (elevated tracks: a box centre farther than this
            above or below the road is off the road; None checks no height).
        size_hi: the largest course scale a later curriculum reaches, for the SDF grid's
            resolution warning (``"sdf"``; None: the generator's construction range).
        kernel_layout: thread layout of the SDF bake and the segments refresh and query
            (``"auto"``, ``"per_env"``, ``"per_item"``; see :class:`BandCollider`).

    Inputs: ``box_position`` vec3f ``[E*B]`` (defaults to ``position`` when B == 1),
    ``orientation`` quatf ``[E*B]`` (yaw used), ``half_extents`` vec2f ``[E*B]``.
    ``step`` returns the :class:`BandContact` (``res.contacts``); an invalid env answers
    oob = 1 with NaN distance, nearest and normal. ``utility`` is the :class:`BandCollider`.
    """

    name = "collision"
    families = ("track",)

    def __init__(
        self,
        method: str = "segments",
        *,
        max_boxes: int = 1,
        sdf_resolution: int = 128,
        clearance: float | None = None,
        size_hi: float | None = None,
        kernel_layout: str = "auto",
        name: str | None = None,
    ):
        super().__init__(name=name)
        self.method = METHOD.check(method, "BandCollision method")
        self.max_boxes = max_boxes = MAX_BOXES.check(max_boxes, "BandCollision max_boxes")
        self.sdf_resolution = SDF_RESOLUTION.check(sdf_resolution, "BandCollision sdf_resolution")
        self.clearance = CLEARANCE.check(clearance, "BandCollision clearance")
        self.size_hi = SIZE_HI.check(size_hi, "BandCollision size_hi")
        self.kernel_layout = KERNEL_LAYOUT.check(kernel_layout, "BandCollision kernel_layout")
        self.INPUTS = box_inputs(max_boxes)

    def attach(self, ctx) -> None:
        if self.method == "sdf":
            check_grid_resolution(
                f"BandCollision('sdf', sdf_resolution={self.sdf_resolution})",
                ctx.generator,
                self.sdf_resolution,
                size_hi=self.size_hi,
            )
        self.utility = BandCollider(
            ctx.generator.result,
            method=self.method,
            max_boxes=self.max_boxes,
            sdf_resolution=self.sdf_resolution,
            clearance=self.clearance,
            kernel_layout=self.kernel_layout,
        )
        self.result = self.utility.contact

    def planned_bytes(self, layout, config) -> int:
        """The :class:`BandCollider`'s buffers (:meth:`BandCollider.buffers`)."""
        return buffer_bytes(
            BandCollider.buffers(
                layout.num_envs,
                layout.N_max,
                self.method,
                self.max_boxes,
                self.sdf_resolution,
                self.clearance is not None,
                resolve_kernel_layout(self.kernel_layout, layout.device),
            )
        )

    def on_generate(self, ctx, mask) -> None:
        self.utility.refresh(mask)

    def step(self, ctx):
        b = self.bound
        return self.utility.query(b["box_position"], b["orientation"], b["half_extents"])
