"""The result class of the height-field baker."""

from __future__ import annotations

import math
from dataclasses import dataclass

import warp as wp

from ...core.rows import RowBatch


@dataclass
class HeightFieldResult(RowBatch):
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

    _row_arrays = ("height", "on_road")
    _env_arrays = ("frame",)

    @property
    def resolution(self) -> int:
        """Texels per side ``res`` (:attr:`rows_per_env` is ``res * res``)."""
        return math.isqrt(self.rows_per_env)
