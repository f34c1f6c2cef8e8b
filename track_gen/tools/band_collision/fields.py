"""The Tunable declarations of the band collider (read by its utility and its component)."""

from __future__ import annotations

from ...core.layout import KERNEL_LAYOUT
from ...core.settings import settings_class
from ...core.tunable import Tunable
from ..fields import count, distance, grid_resolution

_SURFACES = ("tools.BandCollision", "tools.BandCollisionUtility", "course.CourseConfig")

METHOD = Tunable(
    "method",
    "segments",
    choices=("segments", "sdf"),
    doc="segments: exact border segments; sdf: a baked signed-distance grid per env.",
    surfaces=(
        "tools.BandCollision",
        "tools.BandCollisionUtility",
        "course.Course.track",
        "course.CourseConfig",
    ),
    aliases={"Course.track": "collision", "CourseConfig": "collision"},
)


MAX_BOXES = count(
    "max_boxes",
    1,
    hi=1024,
    unit="boxes",
    doc="boxes per env B (inputs are [E*B]).",
    surfaces=_SURFACES,
)


SDF_RESOLUTION = grid_resolution(
    "sdf_resolution",
    doc="texels per side of each env's SDF grid (sdf only).",
    surfaces=_SURFACES,
)


SDF_PADDING = distance(
    "sdf_padding",
    None,
    optional=True,
    doc="margin around the borders' bounding box; None is 10% of its larger extent (sdf only).",
    surfaces=("tools.BandCollision", "tools.BandCollisionUtility"),
)


CLEARANCE = distance(
    "clearance",
    None,
    optional=True,
    doc="how far a box centre may be above or below the road surface (elevated tracks); "
    "farther is off the road (oob = 1). None: heights are not checked (height NaN).",
    surfaces=("tools.BandCollision", "tools.BandCollisionUtility"),
)


#: Collision methods accepted by :class:`BandCollisionUtility`.
METHODS = METHOD.choices

#: Every field of the tool, in its keyword order (``kernel_layout``: the thread layout of the
#: SDF bake and the segments refresh and query).
FIELDS = (METHOD, MAX_BOXES, SDF_RESOLUTION, SDF_PADDING, CLEARANCE, KERNEL_LAYOUT)

BandCollisionSettings = settings_class(
    "BandCollisionSettings",
    FIELDS,
    title="Band collision",
    doc="The settings of the road-band collision of a track course (tools.BandCollision, "
    "tools.BandCollisionUtility).",
    module="track_gen.tools.band_collision",
)
