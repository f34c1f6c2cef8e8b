"""The Tunable declarations of the ego raster (read by its utility and its component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ..fields import count, distance

_SURFACES = ("tools.EgoRaster", "tools.EgoRasterUtility")

RESOLUTION = count(
    "resolution",
    64,
    hi=512,
    unit="cells",
    lo=8,
    doc="cells per side of each env's square raster.",
    surfaces=_SURFACES,
)


EXTENT = distance(
    "extent",
    None,
    positive=True,
    doc="side of the square window the raster covers, centred on the agent (required).",
    surfaces=_SURFACES,
)

#: Every field of the tool, in its keyword order.
FIELDS = (
    RESOLUTION,
    EXTENT,
)

EgoRasterSettings = settings_class(
    "EgoRasterSettings",
    FIELDS,
    title="Ego raster",
    doc="The settings of an ego raster (tools.EgoRaster, tools.EgoRasterUtility, "
    "RaceConfig.raster). Fields without a default are required.",
    module="track_gen.tools.raster",
)
