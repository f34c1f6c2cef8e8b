"""The look-ahead's observation term ``"lookahead"``: per point ``k`` (``num_points``), 5
columns: x / span, y / span (the point in the agent frame, ``span = num_points * spacing``),
width_left, width_right (length units), curvature * spacing (the heading change over one
spacing, rad); with ``along="racing_line"`` a 6th: the line's target speed / the env's top
speed. 0 where the env is not usable or the sensor has no answer."""

from __future__ import annotations

import warp as wp

from ..terms import ObservationTerm, final_flag, put_column, unit_or_zero
from .component import Lookahead
from .fields import LookaheadSettings

__all__ = ["LOOKAHEAD_COLS", "LookaheadTerm"]

wp.set_module_options({"enable_backward": False})

#: Columns per point: x, y, width_left, width_right, curvature (+ speed with the racing line).
LOOKAHEAD_COLS = 5


@wp.func
def write_lookahead_columns(
    e: int,
    ok: bool,
    fin: int,
    col: int,
    num_points: int,
    stride: int,
    inv_span: float,
    spacing: float,
    speed_scale: float,
    position: wp.array(dtype=wp.vec3f),
    width_left: wp.array(dtype=wp.float32),
    width_right: wp.array(dtype=wp.float32),
    curvature: wp.array(dtype=wp.float32),
    speed: wp.array(dtype=wp.float32),
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    """Env ``e``'s points into ``stride`` columns each from column ``col``."""
    for k in range(num_points):
        r = e * num_points + k
        p = position[r]
        c = col + k * stride
        put_column(obs_out, final_obs_out, e, c, unit_or_zero(ok, p[0] * inv_span), fin)
        put_column(obs_out, final_obs_out, e, c + 1, unit_or_zero(ok, p[1] * inv_span), fin)
        put_column(obs_out, final_obs_out, e, c + 2, unit_or_zero(ok, width_left[r]), fin)
        put_column(obs_out, final_obs_out, e, c + 3, unit_or_zero(ok, width_right[r]), fin)
        put_column(obs_out, final_obs_out, e, c + 4, unit_or_zero(ok, curvature[r] * spacing), fin)
        if stride > 5:
            v = unit_or_zero(ok, speed[r] * speed_scale)
            put_column(obs_out, final_obs_out, e, c + 5, v, fin)


@wp.kernel
def _lookahead_term_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    ok_env: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    width_left: wp.array(dtype=wp.float32),
    width_right: wp.array(dtype=wp.float32),
    curvature: wp.array(dtype=wp.float32),
    speed: wp.array(dtype=wp.float32),
    valid: wp.array(dtype=wp.int32),
    # static
    num_points: int,
    col: int,
    stride: int,
    inv_span: float,
    spacing: float,
    speed_scale: float,
    write_final: int,
    # outputs
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    e = wp.tid()
    fin = final_flag(write_final, mask[e])
    ok = ok_env[e] != 0 and valid[e] != 0
    write_lookahead_columns(
        e,
        ok,
        fin,
        col,
        num_points,
        stride,
        inv_span,
        spacing,
        speed_scale,
        position,
        width_left,
        width_right,
        curvature,
        speed,
        obs_out,
        final_obs_out,
    )


class LookaheadTerm(ObservationTerm):
    """``"lookahead"``: a :class:`Lookahead` named ``"lookahead"``; 8 points 0.1 apart in an
    env by default."""

    name = "lookahead"
    config_field = "lookahead_points"  # RaceConfig.lookahead: the car's look-ahead distances
    settings = LookaheadSettings
    env_defaults = {"num_points": 8, "spacing": 0.1}

    def components(self, settings, ctx):
        return [Lookahead(settings)]

    def columns_per_point(self, settings) -> int:
        """5, plus the target speed with the racing line."""
        return LOOKAHEAD_COLS + (1 if settings.along == "racing_line" else 0)

    def dim(self, settings, ctx) -> int:
        return settings.num_points * self.columns_per_point(settings)

    def needs_racing_line(self, settings) -> bool:
        return settings.along == "racing_line"

    def write(self, settings, ctx, res, col, mask, write_final, out) -> None:
        look = res[self.name]
        K, h = settings.num_points, settings.spacing
        speed = look.speed if look.speed is not None else look.curvature  # unread without
        self.launch(
            _lookahead_term_kernel,
            [
                mask,
                out.ok,
                look.position,
                look.width_left,
                look.width_right,
                look.curvature,
                speed,
                look.valid,
                K,
                col,
                self.columns_per_point(settings),
                1.0 / (K * h),
                h,
                ctx.speed_scale,
                write_final,
            ],
            out,
        )
