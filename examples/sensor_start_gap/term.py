"""The start-gap observation term: two columns, the start line's x and y in the agent's
frame over ``max_range``, clamped to [-1, 1]; 0 where the env is not usable."""

from __future__ import annotations

import warp as wp

from track_gen import tools

from .component import StartGap
from .fields import StartGapSettings


@wp.func
def write_start_gap_columns(
    e: int,
    ok: bool,
    fin: int,
    col: int,
    inv_range: float,
    gap: wp.array(dtype=wp.vec3f),
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    """The writer: env ``e``'s two columns from ``col``."""
    g = gap[e]
    x = wp.clamp(tools.unit_or_zero(ok, g[0] * inv_range), -1.0, 1.0)
    y = wp.clamp(tools.unit_or_zero(ok, g[1] * inv_range), -1.0, 1.0)
    tools.put_column(obs_out, final_obs_out, e, col, x, fin)
    tools.put_column(obs_out, final_obs_out, e, col + 1, y, fin)


@wp.kernel
def start_gap_term_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    ok_env: wp.array(dtype=wp.int32),
    gap: wp.array(dtype=wp.vec3f),
    # static
    col: int,
    inv_range: float,
    write_final: int,
    # outputs
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    e = wp.tid()
    fin = tools.final_flag(write_final, mask[e])
    write_start_gap_columns(e, ok_env[e] != 0, fin, col, inv_range, gap, obs_out, final_obs_out)


class StartGapTerm(tools.ObservationTerm):
    """``"acme.start_gap"``: the :class:`StartGap` sensor's two columns."""

    name = "acme.start_gap"
    settings = StartGapSettings
    bounds = (-1.0, 1.0)

    def components(self, settings, ctx):
        return [StartGap(settings.max_range)]

    def dim(self, settings, ctx) -> int:
        return 2

    def write(self, settings, ctx, res, col, mask, write_final, out) -> None:
        wp.launch(
            start_gap_term_kernel,
            out.obs.shape[0],
            inputs=[mask, out.ok, res[self.name].gap, col, 1.0 / settings.max_range, write_final],
            outputs=[out.obs, out.final_obs],
            device=out.obs.device,
        )
