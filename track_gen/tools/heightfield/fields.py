"""The Tunable declarations of the height-field baker (read by its utility and its component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ...core.tunable import Tunable
from ..fields import DISTANCE_HI, distance, grid_resolution

RESOLUTION = grid_resolution(
    "resolution",
    doc="texels per side of each env's grid.",
    surfaces=("tools.HeightFieldBake", "tools.HeightFieldUtility", "course.CourseConfig"),
    aliases={"CourseConfig": "heightfield_resolution"},
)


MARGIN = distance(
    "margin",
    None,
    optional=True,
    doc="margin around the borders' bounding box; None is 10% of its larger side.",
    surfaces=("tools.HeightFieldBake", "tools.HeightFieldUtility"),
)


FILL = Tunable(
    "fill",
    None,
    kind="float",
    lo=-DISTANCE_HI,
    hi=DISTANCE_HI,
    optional=True,
    unit="track units",
    doc="height of the off-road texels; None is the env's lowest road height.",
    surfaces=("tools.HeightFieldBake", "tools.HeightFieldUtility"),
)


SIZE_HI = distance(
    "size_hi",
    None,
    positive=True,
    optional=True,
    doc="the largest course scale a curriculum will reach (for the resolution check); None "
    "reads it from the generator.",
    surfaces=("tools.HeightFieldBake", "tools.BandCollision"),
)

#: Every field of the tool, in its keyword order (``size_hi`` is the component's own: the
#: resolution check it makes against the generator).
FIELDS = (RESOLUTION, MARGIN, FILL)

HeightFieldSettings = settings_class(
    "HeightFieldSettings",
    FIELDS,
    title="Height field",
    doc="The settings of a road height field (tools.HeightFieldBake, tools.HeightFieldUtility).",
    module="track_gen.tools.heightfield",
)
