"""The result class of the ego raster."""

from __future__ import annotations

import math
from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.rows import RowBatch
from .kernels import RasterCell


@dataclass
class EgoRasterResult(RowBatch):
    """Per-env top-down rasters around the agent (the same instance every step;
    :meth:`clone` for a snapshot). See :mod:`track_gen.tools.raster` for the frame.

    Attributes:
        cells: uint8 ``[E*res*res]``: :class:`RasterCell` flags of cell ``(row, col)`` at
            ``e*res*res + row*res + col`` (row 0 ahead of the agent, column 0 on its left).
        height: float32 ``[E*res*res]`` or None (no height field): the road height field's
            value at the cell centre minus the agent's z, track units; NaN where ``cells``
            is ``UNKNOWN``.
        heading: vec2f ``[E]``: the unit plan-view heading the raster's up axis points along
            (world x, y); NaN for an env without an answer.
    """

    cells: wp.array
    height: wp.array | None
    heading: wp.array

    _row_arrays = ("cells", "height")
    _env_arrays = ("heading",)

    @property
    def resolution(self) -> int:
        """Cells per side ``res`` (:attr:`rows_per_env` is ``res * res``)."""
        return math.isqrt(self.rows_per_env)

    @classmethod
    def allocate(
        cls, num_envs: int, resolution: int, height: bool, device, budget: AllocationBudget
    ) -> EgoRasterResult:
        """Every cell ``UNKNOWN``, NaN heights and headings, checked against ``budget``."""
        cells = num_envs * resolution * resolution
        nan = float("nan")
        return cls(
            cells=budget.full(cells, int(RasterCell.UNKNOWN), wp.uint8, "raster cells"),
            heading=budget.full(num_envs, wp.vec2f(nan, nan), wp.vec2f, "raster headings"),
            height=budget.full(cells, nan, wp.float32, "raster heights") if height else None,
        )
