"""The raster's observation term ``"raster"``: the ego raster (heading up, cell ``(row,
col)`` as in :class:`EgoRasterResult`), channel-major: ``resolution**2`` columns per channel,
1.0 where the cell has the channel's :class:`RasterCell` bit, else 0.0 (and 0.0 on an
``UNKNOWN`` cell); the channels road, border, and cone when ``"cones"`` is observed too
(the raster then draws the cones' props)."""

from __future__ import annotations

import warp as wp

from ..terms import ObservationTerm, final_flag, put_column
from .component import EgoRaster
from .fields import EgoRasterSettings
from .kernels import RasterCell

__all__ = ["RASTER_BITS", "RasterTerm"]

wp.set_module_options({"enable_backward": False})

#: The raster's channels, in column order: the RasterCell bits road, border (and cone).
RASTER_BITS = (RasterCell.ROAD, RasterCell.BORDER, RasterCell.CONE)
_ROAD = wp.constant(int(RasterCell.ROAD))
_BORDER = wp.constant(int(RasterCell.BORDER))
_CONE = wp.constant(int(RasterCell.CONE))
_UNKNOWN = wp.constant(int(RasterCell.UNKNOWN))


@wp.func
def _channel_bit(c: int) -> int:
    bit = _ROAD
    if c == 1:
        bit = _BORDER
    elif c == 2:
        bit = _CONE
    return bit


@wp.func
def write_raster_columns(
    e: int,
    ok: bool,
    fin: int,
    col: int,
    cells_per_env: int,
    channels: int,
    cells: wp.array(dtype=wp.uint8),
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    """Env ``e``'s cells, one 0/1 column per cell and channel from column ``col``."""
    for i in range(cells_per_env):
        bits = int(cells[e * cells_per_env + i])
        known = ok and (bits & _UNKNOWN) == 0
        for c in range(channels):
            k = col + c * cells_per_env + i
            v = wp.where(known and (bits & _channel_bit(c)) != 0, 1.0, 0.0)
            put_column(obs_out, final_obs_out, e, k, v, fin)


@wp.kernel
def _raster_term_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    ok_env: wp.array(dtype=wp.int32),
    cells: wp.array(dtype=wp.uint8),
    # static
    cells_per_env: int,
    channels: int,
    col: int,
    write_final: int,
    # outputs
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    e = wp.tid()
    fin = final_flag(write_final, mask[e])
    ok = ok_env[e] != 0
    write_raster_columns(e, ok, fin, col, cells_per_env, channels, cells, obs_out, final_obs_out)


class RasterTerm(ObservationTerm):
    """``"raster"``: an :class:`EgoRaster` named ``"raster"`` (drawing the cones' props when
    ``"cones"`` is observed); 16 x 16 cells over a window of 1.0 in an env by default."""

    name = "raster"
    settings = EgoRasterSettings
    env_defaults = {"resolution": 16, "extent": 1.0}
    bounds = (0.0, 1.0)

    def channels(self, ctx) -> int:
        """Road and border, and cone when ``"cones"`` is observed."""
        return 3 if "cones" in ctx.observed else 2

    def components(self, settings, ctx):
        cones = "props" if "cones" in ctx.observed else None
        return [EgoRaster(settings, cones=cones)]

    def dim(self, settings, ctx) -> int:
        return self.channels(ctx) * settings.resolution**2

    def write(self, settings, ctx, res, col, mask, write_final, out) -> None:
        self.launch(
            _raster_term_kernel,
            [
                mask,
                out.ok,
                res[self.name].cells,
                settings.resolution**2,
                self.channels(ctx),
                col,
                write_final,
            ],
            out,
        )
