"""The answers of :class:`~track_gen.tools.band_collision.BandCollisionUtility`
(:class:`BandCollisionResult`); the height check of its ``clearance`` (``_height_kernel``) is
in ``kernels.py``."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import BoxRowBatch


@dataclass
class BandCollisionResult(BoxRowBatch):
    """Per-box answers of :meth:`BandCollisionUtility.query` (box ``b`` of env ``e`` at row
    ``e*B + b``, ``B = max_boxes``). The collider returns the same instance on every query and
    overwrites it; :meth:`clone` takes a snapshot. Distances are in track units.

    Attributes:
        oob: int32 ``[E*B]``: 1 when some part of the box is off the road (a corner outside
            the band, or a border crossing the box), else 0. 1 for every box of an invalid
            env, 0 for an inactive slot.
        distance: float32 ``[E*B]``: signed clearance, track units. Positive: the box is
            inside the band, this far from the nearest border; negative: the deepest
            penetration of a box corner beyond a border; 0: a border crosses the box with
            every corner inside. NaN for an inactive slot or an invalid env. (``"sdf"``:
            approximate, and about ``-SDF_BAND_CELLS`` cells at most deep.)
        nearest: vec2f ``[E*B]``: the border point closest to the box (to its deepest outside
            corner when a corner is out), plan view, track units. NaN when inactive/invalid.
        normal: vec2f ``[E*B]``: unit border normal at ``nearest``, pointing into the band.
            NaN when inactive/invalid.
        boundary: int32 ``[E*B]``: the border ``nearest`` lies on: 0 inner, 1 outer, -1 none
            (inactive slot, invalid env, or an SDF sample deeper than its narrow band).
        height: float32 ``[E*B]`` or None: the box centre's height above the road surface
            (its z minus the centerline's z at the centre's plan-view projection onto the
            nearest centerline segment; the road is level across its width), track units; NaN
            for an inactive slot or an invalid env. None when the collider has no
            ``clearance`` (heights are not checked).
    """

    oob: wp.array
    distance: wp.array
    nearest: wp.array
    normal: wp.array
    boundary: wp.array
    height: wp.array | None = None

    _row_arrays = ("oob", "distance", "nearest", "normal", "boundary", "height")

    @classmethod
    def allocate(
        cls,
        rows: int,
        device,
        height: bool = False,
        budget: AllocationBudget | None = None,
        max_boxes: int = 0,
    ) -> BandCollisionResult:
        """Buffers for ``rows`` boxes (``E * max_boxes``): oob 0, NaN geometry, boundary -1
        (and NaN heights when ``height``), each checked against ``budget`` (a fresh one on
        ``device`` when None) before it is allocated."""
        budget = budget or AllocationBudget(device, "lower max_boxes")
        nan = float("nan")
        what = "box contacts (E * max_boxes)"
        out = cls(
            oob=budget.zeros(rows, wp.int32, what),
            distance=budget.full(rows, nan, wp.float32, what),
            nearest=budget.full(rows, wp.vec2f(nan, nan), wp.vec2f, what),
            normal=budget.full(rows, wp.vec2f(nan, nan), wp.vec2f, what),
            boundary=budget.full(rows, -1, wp.int32, what),
            height=budget.full(rows, nan, wp.float32, what) if height else None,
        )
        out._boxes_per_env = int(max_boxes)
        return out
