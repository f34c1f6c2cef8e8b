"""The sensor observations of :class:`~track_gen.envs.RaceEnv`: the ``observations`` field,
the sensors' settings (the sensors' own declarations under ``<sensor>_`` names), the course
components they add, and the ONE kernel that writes their columns.

Columns, per sensor, in the order of ``observations`` (``state`` first, then ``lidar``,
``lookahead``, ``cones``); every column is finite, 0 where the env is invalid or the sensor
has no answer:

- ``lidar``: ``lidar_num_beams`` columns, beam ``b``'s distance / ``lidar_max_range`` in
  ``[0, 1]`` (1: nothing hit within range; :attr:`~track_gen.tools.LidarScan.distance`).
- ``lookahead``: per point ``k`` (``lookahead_num_points``), 5 columns: x / span, y / span (the
  point in the car frame, ``span = num_points * spacing``), width_left, width_right (track
  units), curvature * spacing (the heading change over one spacing, rad); with
  ``lookahead_source="racing_line"`` a 6th: the line's target speed / max_speed.
- ``cones``: per detection slot ``m`` (``cones_max_cones``, nearest first), 3 columns: x /
  max_range, y / max_range (car frame) and the side, +1 left (``ConeColour.LEFT``), -1 right,
  0 for an empty slot (then x = y = 0). The cones stand along both borders every
  ``cones_spacing`` (``tools.Props(kind="cone")``, added before the lidar, which sees them).
- ``raster``: ``tools.EgoRaster(raster_resolution, raster_extent)`` (heading up, cell ``(row,
  col)`` as in :class:`~track_gen.tools.EgoRasterImage`), channel-major: ``res * res``
  columns per channel, 1.0 where the cell has the channel's :class:`~track_gen.tools.RasterCell`
  bit, else 0.0 (and 0.0 on an ``UNKNOWN`` cell); the channels road, border, and cone when
  ``cones`` is observed too (the raster then draws its cones).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import warp as wp

from .. import tools
from ..core.tunable import Tunable
from ..tools.cones import fields as cone_fields
from ..tools.lidar import fields as lidar_fields
from ..tools.lookahead import fields as lookahead_fields
from ..tools.props import fields as prop_fields
from ..tools.raster import fields as raster_fields

__all__ = ["OBSERVATION_TERMS", "SENSOR_FIELDS", "sensor_components", "sensor_dims"]

wp.set_module_options({"enable_backward": False})

#: The observation terms, in their column order.
OBSERVATION_TERMS = ("state", "lidar", "lookahead", "cones", "raster")
#: Every accepted ``observations`` value: the terms of a nonempty subset joined by ``+``.
OBSERVATION_CHOICES = tuple(
    "+".join(c)
    for r in range(1, len(OBSERVATION_TERMS) + 1)
    for c in itertools.combinations(OBSERVATION_TERMS, r)
)
LOOKAHEAD_COLS = 5  # x, y, width_left, width_right, curvature (+ speed with the racing line)
CONE_COLS = 3  # x, y, side
#: The raster's channels, in column order: the RasterCell bits road, border (and cone).
RASTER_BITS = (1, 2, 4)


def _as(t, keyword: str, sensor: str):
    """The sensor's own declaration ``t``, taken by RaceConfig as ``keyword``."""
    return dataclasses.replace(
        t, aliases={**t.aliases, "RaceConfig": keyword}, doc=f"{sensor}: {t.doc}"
    )


OBSERVATIONS = Tunable(
    "observations",
    "state",
    choices=OBSERVATION_CHOICES,
    doc="the observation's terms joined by '+', in the order state, lidar, lookahead, cones, "
    "raster (e.g. 'lidar', 'state+cones'): 'state' the car and track-frame columns, the "
    "others the sensors' columns (docs/training.md).",
)
LIDAR_NUM_BEAMS = _as(lidar_fields.NUM_BEAMS, "lidar_num_beams", "lidar")
LIDAR_FOV = _as(lidar_fields.FOV, "lidar_fov", "lidar")
LIDAR_MAX_RANGE = _as(lidar_fields.MAX_RANGE, "lidar_max_range", "lidar")
LIDAR_NOISE_STD = _as(lidar_fields.NOISE_STD, "lidar_noise_std", "lidar")
LIDAR_DROPOUT = _as(lidar_fields.DROPOUT, "lidar_dropout", "lidar")
LOOKAHEAD_NUM_POINTS = _as(lookahead_fields.NUM_POINTS, "lookahead_num_points", "lookahead")
LOOKAHEAD_SPACING = _as(lookahead_fields.SPACING, "lookahead_spacing", "lookahead")
LOOKAHEAD_SOURCE = _as(lookahead_fields.SOURCE, "lookahead_source", "lookahead")
CONES_MAX_CONES = _as(cone_fields.MAX_CONES, "cones_max_cones", "cones")
CONES_FOV = _as(cone_fields.FOV, "cones_fov", "cones")
CONES_MAX_RANGE = _as(cone_fields.MAX_RANGE, "cones_max_range", "cones")
CONES_DROPOUT = _as(cone_fields.DROPOUT, "cones_dropout", "cones")
CONES_NOISE = _as(cone_fields.NOISE, "cones_noise", "cones")
CONES_SPACING = _as(prop_fields.SPACING, "cones_spacing", "cones (tools.Props(kind='cone'))")
RASTER_RESOLUTION = _as(raster_fields.RESOLUTION, "raster_resolution", "raster")
RASTER_EXTENT = _as(raster_fields.EXTENT, "raster_extent", "raster")

#: RaceConfig's sensor fields, in order (``observations`` first).
SENSOR_FIELDS = (
    OBSERVATIONS,
    LIDAR_NUM_BEAMS,
    LIDAR_FOV,
    LIDAR_MAX_RANGE,
    LIDAR_NOISE_STD,
    LIDAR_DROPOUT,
    LOOKAHEAD_NUM_POINTS,
    LOOKAHEAD_SPACING,
    LOOKAHEAD_SOURCE,
    CONES_MAX_CONES,
    CONES_FOV,
    CONES_MAX_RANGE,
    CONES_DROPOUT,
    CONES_NOISE,
    CONES_SPACING,
    RASTER_RESOLUTION,
    RASTER_EXTENT,
)
#: RaceConfig's defaults of the sensor fields whose declaration has none (or too many beams
#: for a policy's input).
SENSOR_DEFAULTS = {
    "lidar_num_beams": 64,
    "lookahead_num_points": 8,
    "lookahead_spacing": 0.1,
    "cones_max_cones": 8,
    "cones_fov": math.pi,
    "cones_max_range": 0.5,
    "cones_spacing": 0.1,
    "raster_resolution": 16,
    "raster_extent": 1.0,
}


def terms(config) -> tuple[str, ...]:
    """The observed terms of ``config`` (``observations`` split at ``+``)."""
    return tuple(config.observations.split("+"))


def lookahead_cols(config) -> int:
    """Columns per look-ahead point: 5, plus the target speed with the racing line."""
    return LOOKAHEAD_COLS + (1 if config.lookahead_source == "racing_line" else 0)


def raster_channels(config) -> int:
    """Channels of the raster term: road and border, and cone when ``cones`` is observed."""
    return 3 if "cones" in terms(config) else 2


def sensor_dims(config) -> dict[str, int]:
    """Columns of each observed sensor term of ``config`` (state excluded), in order."""
    dims = {
        "lidar": config.lidar_num_beams,
        "lookahead": config.lookahead_num_points * lookahead_cols(config),
        "cones": config.cones_max_cones * CONE_COLS,
        "raster": raster_channels(config) * config.raster_resolution**2,
    }
    return {t: dims[t] for t in terms(config) if t != "state"}


def stochastic_sensors(config) -> bool:
    """Whether an observed sensor draws noise or dropout (each course step draws anew)."""
    obs = terms(config)
    lidar = "lidar" in obs and (config.lidar_noise_std > 0 or config.lidar_dropout > 0)
    cones = "cones" in obs and (config.cones_noise > 0 or config.cones_dropout > 0)
    return lidar or cones


def sensor_components(config) -> list:
    """The course components the observed sensors need, in course order (the cones' props
    first: the lidar then sees them too)."""
    obs = terms(config)
    out = []
    if "cones" in obs:
        out.append(tools.Props(kind="cone", spacing=config.cones_spacing))
    if "lidar" in obs:
        out.append(
            tools.Lidar(
                config.lidar_num_beams,
                fov=config.lidar_fov,
                max_range=config.lidar_max_range,
                noise_std=config.lidar_noise_std,
                dropout=config.lidar_dropout,
            )
        )
    if "lookahead" in obs:
        out.append(
            tools.Lookahead(
                config.lookahead_num_points,
                config.lookahead_spacing,
                source=config.lookahead_source,
            )
        )
    if "cones" in obs:
        out.append(
            tools.ConeDetections(
                config.cones_max_cones,
                fov=config.cones_fov,
                max_range=config.cones_max_range,
                dropout=config.cones_dropout,
                noise=config.cones_noise,
            )
        )
    if "raster" in obs:
        out.append(
            tools.EgoRaster(
                config.raster_resolution,
                config.raster_extent,
                cones="props" if "cones" in obs else None,
            )
        )
    return out


# ------------------------------------------------------------------------------ kernel
@wp.func
def _unit(ok: bool, x: float) -> float:
    """``x`` where ``ok`` and finite, else 0."""
    return wp.where(ok and wp.isfinite(x), x, 0.0)


@wp.func
def _put(
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
    e: int,
    col: int,
    v: float,
    fin: int,
):
    """``v`` into column ``col`` of env ``e``'s observation, and of its final one when
    ``fin != 0``."""
    obs_out[e, col] = v
    if fin != 0:
        final_obs_out[e, col] = v


@wp.kernel
def observe_sensors(
    # inputs
    mask: wp.array(dtype=wp.int32),
    ok_env: wp.array(dtype=wp.int32),
    lidar_distance: wp.array(dtype=wp.float32),
    look_position: wp.array(dtype=wp.vec3f),
    look_width_left: wp.array(dtype=wp.float32),
    look_width_right: wp.array(dtype=wp.float32),
    look_curvature: wp.array(dtype=wp.float32),
    look_speed: wp.array(dtype=wp.float32),
    look_valid: wp.array(dtype=wp.int32),
    cone_position: wp.array(dtype=wp.vec3f),
    cone_colour: wp.array(dtype=wp.int32),
    cone_count: wp.array(dtype=wp.int32),
    cone_valid: wp.array(dtype=wp.int32),
    raster_cells: wp.array(dtype=wp.uint8),
    # static
    num_beams: int,
    lidar_col: int,
    inv_lidar_range: float,
    num_points: int,
    look_col: int,
    look_stride: int,
    inv_span: float,
    spacing: float,
    inv_max_speed: float,
    max_cones: int,
    cone_col: int,
    inv_cone_range: float,
    raster_n: int,
    raster_col: int,
    raster_channels: int,
    write_final: int,
    # outputs
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    """The sensor columns of every env (module docs) into ``obs_out``, and the same into
    ``final_obs_out`` with ``write_final`` 1 (every env: a step) or 2 (the envs with
    ``mask[e] == 0``: the pass after an auto-reset, whose course step drew the sensors again;
    a done env's final observation keeps its ended episode's). ``ok_env[e]``: the env is
    usable (the state kernel's test); a sensor with no answer for the env reads 0 too."""
    e = wp.tid()
    ok = ok_env[e] != 0
    fin = write_final
    if write_final == 2:
        fin = wp.where(mask[e] == 0, 1, 0)
    for b in range(num_beams):
        v = _unit(ok, lidar_distance[e * num_beams + b] * inv_lidar_range)
        obs_out[e, lidar_col + b] = v
        if fin != 0:
            final_obs_out[e, lidar_col + b] = v
    if num_points > 0:
        lok = ok and look_valid[e] != 0
        for k in range(num_points):
            r = e * num_points + k
            p = look_position[r]
            col = look_col + k * look_stride
            _put(obs_out, final_obs_out, e, col, _unit(lok, p[0] * inv_span), fin)
            _put(obs_out, final_obs_out, e, col + 1, _unit(lok, p[1] * inv_span), fin)
            _put(obs_out, final_obs_out, e, col + 2, _unit(lok, look_width_left[r]), fin)
            _put(obs_out, final_obs_out, e, col + 3, _unit(lok, look_width_right[r]), fin)
            _put(obs_out, final_obs_out, e, col + 4, _unit(lok, look_curvature[r] * spacing), fin)
            if look_stride > 5:
                v = _unit(lok, look_speed[r] * inv_max_speed)
                _put(obs_out, final_obs_out, e, col + 5, v, fin)
    if max_cones > 0:
        cok = ok and cone_valid[e] != 0
        n = cone_count[e]
        for m in range(max_cones):
            r = e * max_cones + m
            seen = cok and m < n
            p = cone_position[r]
            side = wp.where(cone_colour[r] == 0, 1.0, -1.0)
            col = cone_col + m * 3
            _put(obs_out, final_obs_out, e, col, _unit(seen, p[0] * inv_cone_range), fin)
            _put(obs_out, final_obs_out, e, col + 1, _unit(seen, p[1] * inv_cone_range), fin)
            _put(obs_out, final_obs_out, e, col + 2, wp.where(seen, side, 0.0), fin)
    for i in range(raster_n):
        bits = int(raster_cells[e * raster_n + i])
        known = ok and (bits & 128) == 0
        for c in range(raster_channels):
            bit = 1 << c  # RASTER_BITS: road 1, border 2, cone 4
            col = raster_col + c * raster_n + i
            v = wp.where(known and (bits & bit) != 0, 1.0, 0.0)
            obs_out[e, col] = v
            if fin != 0:
                final_obs_out[e, col] = v
