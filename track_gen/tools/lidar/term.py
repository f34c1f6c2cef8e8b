"""The lidar's observation term ``"lidar"``: ``num_beams`` columns, beam ``b``'s distance /
``max_range`` in ``[0, 1]`` (1: nothing hit within range; :attr:`LidarResult.distance`), 0
where the env is not usable or the beam has no answer."""

from __future__ import annotations

import warp as wp

from ..terms import ObservationTerm, final_flag, put_column, unit_or_zero
from .component import Lidar
from .fields import LidarSettings

__all__ = ["LidarTerm"]

wp.set_module_options({"enable_backward": False})


@wp.func
def write_lidar_columns(
    e: int,
    ok: bool,
    fin: int,
    col: int,
    num_beams: int,
    inv_range: float,
    distance: wp.array(dtype=wp.float32),
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    """Env ``e``'s beams, scaled by ``inv_range``, into columns ``col ..``."""
    for b in range(num_beams):
        v = unit_or_zero(ok, distance[e * num_beams + b] * inv_range)
        put_column(obs_out, final_obs_out, e, col + b, v, fin)


@wp.kernel
def _lidar_term_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    ok_env: wp.array(dtype=wp.int32),
    distance: wp.array(dtype=wp.float32),
    # static
    num_beams: int,
    col: int,
    inv_range: float,
    write_final: int,
    # outputs
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    e = wp.tid()
    fin = final_flag(write_final, mask[e])
    ok = ok_env[e] != 0
    write_lidar_columns(e, ok, fin, col, num_beams, inv_range, distance, obs_out, final_obs_out)


class LidarTerm(ObservationTerm):
    """``"lidar"``: a :class:`Lidar` named ``"lidar"`` (sees the props of the course when
    another term adds them, the cones' props); 64 beams in an env by default."""

    name = "lidar"
    settings = LidarSettings
    env_defaults = {"num_beams": 64}
    bounds = (0.0, 1.0)

    def components(self, settings, ctx):
        return [Lidar(settings)]

    def dim(self, settings, ctx) -> int:
        return settings.num_beams

    def stochastic(self, settings) -> bool:
        return settings.noise_std > 0 or settings.dropout > 0

    def write(self, settings, ctx, res, col, mask, write_final, out) -> None:
        self.launch(
            _lidar_term_kernel,
            [
                mask,
                out.ok,
                res[self.name].distance,
                settings.num_beams,
                col,
                1.0 / settings.max_range,
                write_final,
            ],
            out,
        )
