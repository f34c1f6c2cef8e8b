"""The Tunable declarations of the band collider (read by its utility and its component)."""

from __future__ import annotations

from ...core.tunable import Tunable
from ..fields import distance, grid_resolution

_SURFACES = ("tools.BandCollision", "tools.BandCollider", "course.CourseConfig")

METHOD = Tunable(
    "method",
    "segments",
    choices=("segments", "sdf"),
    doc="segments: exact border segments; sdf: a baked signed-distance grid per env.",
    surfaces=(
        "tools.BandCollision",
        "tools.BandCollider",
        "course.Course.track",
        "course.CourseConfig",
    ),
    aliases={"Course.track": "collision", "CourseConfig": "collision"},
)


MAX_BOXES = Tunable(
    "max_boxes",
    1,
    lo=1,
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
    surfaces=("tools.BandCollider",),
)


CLEARANCE = distance(
    "clearance",
    None,
    optional=True,
    doc="how far a box centre may be above or below the road surface (elevated tracks); "
    "farther is off the road (oob = 1). None: heights are not checked (height NaN).",
    surfaces=("tools.BandCollision", "tools.BandCollider"),
)


#: Collision methods accepted by :class:`BandCollider`.
METHODS = METHOD.choices
