"""The cones' observation term ``"cones"``: cones stand along both borders every ``spacing``
(a :class:`~track_gen.tools.Props` of cones, which a lidar sees too), and per detection slot
``m`` (``max_cones``, nearest first) 3 columns: x / max_range, y / max_range (agent frame)
and the side, +1 left (:attr:`ConeColour.LEFT`), -1 right, 0 for an empty slot (then
x = y = 0). 0 where the env is not usable or the detector has no answer."""

from __future__ import annotations

import warp as wp

from ...core.tunable import config_class
from ..props import Props
from ..props import fields as prop_fields
from ..terms import ObservationTerm, final_flag, put_column, settings_kwargs, unit_or_zero
from .component import ConeDetections
from .fields import FIELDS
from .kernels import ConeColour

__all__ = ["CONE_COLS", "ConesSettings", "ConesTerm"]

wp.set_module_options({"enable_backward": False})

#: Columns per detection slot: x, y, side.
CONE_COLS = 3
_LEFT = wp.constant(int(ConeColour.LEFT))

#: The cone term's settings: the detector's fields and the spacing of the cones it places.
ConesSettings = config_class(
    "ConesSettings",
    [("Cone detections", "", FIELDS), ("Cones on both borders", "", (prop_fields.SPACING,))],
    doc="The settings of the cones observation term: a ConeDetections detector (its fields) "
    "and the Props cones it detects along both borders, every spacing.",
    module="track_gen.tools.cones",
)


@wp.func
def write_cone_columns(
    e: int,
    ok: bool,
    fin: int,
    col: int,
    max_cones: int,
    inv_range: float,
    position: wp.array(dtype=wp.vec3f),
    colour: wp.array(dtype=wp.int32),
    count: int,
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    """Env ``e``'s ``count`` detections into 3 columns a slot from column ``col``."""
    for m in range(max_cones):
        r = e * max_cones + m
        seen = ok and m < count
        p = position[r]
        side = wp.where(colour[r] == _LEFT, 1.0, -1.0)
        c = col + m * 3
        put_column(obs_out, final_obs_out, e, c, unit_or_zero(seen, p[0] * inv_range), fin)
        put_column(obs_out, final_obs_out, e, c + 1, unit_or_zero(seen, p[1] * inv_range), fin)
        put_column(obs_out, final_obs_out, e, c + 2, wp.where(seen, side, 0.0), fin)


@wp.kernel
def _cones_term_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    ok_env: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    colour: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    # static
    max_cones: int,
    col: int,
    inv_range: float,
    write_final: int,
    # outputs
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    e = wp.tid()
    fin = final_flag(write_final, mask[e])
    ok = ok_env[e] != 0 and valid[e] != 0
    write_cone_columns(
        e, ok, fin, col, max_cones, inv_range, position, colour, count[e], obs_out, final_obs_out
    )


class ConesTerm(ObservationTerm):
    """``"cones"``: a :class:`Props` of cones named ``"props"`` (a prerequisite: a lidar sees
    them) and a :class:`ConeDetections` named ``"cones"``; 8 slots, a half-circle field of
    view and a range of 0.5 in an env by default, cones every 0.1."""

    name = "cones"
    settings = ConesSettings
    env_defaults = {"max_cones": 8, "fov": 3.141592653589793, "max_range": 0.5, "spacing": 0.1}

    def prerequisites(self, settings, ctx):
        return [Props(kind="cone", spacing=settings.spacing)]

    def components(self, settings, ctx):
        kw = settings_kwargs(settings)
        kw.pop("spacing")
        return [ConeDetections(**kw)]

    def dim(self, settings, ctx) -> int:
        return settings.max_cones * CONE_COLS

    def stochastic(self, settings) -> bool:
        return settings.noise > 0 or settings.dropout > 0

    def write(self, settings, ctx, res, col, mask, write_final, out) -> None:
        cones = res[self.name]
        self.launch(
            _cones_term_kernel,
            [
                mask,
                out.ok,
                cones.position,
                cones.colour,
                cones.count,
                cones.valid,
                settings.max_cones,
                col,
                1.0 / settings.max_range,
                write_final,
            ],
            out,
        )
