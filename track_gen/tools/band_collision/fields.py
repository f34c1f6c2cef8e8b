"""The Tunable declarations of the band collider (read by its utility and its component)."""

from __future__ import annotations

from ...core.tunable import Tunable

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
    surfaces=("tools.BandCollision", "tools.BandCollider", "course.CourseConfig"),
)


SDF_RESOLUTION = Tunable(
    "sdf_resolution",
    128,
    lo=8,
    hi=4096,
    unit="texels",
    doc="texels per side of each env's SDF grid (sdf only).",
    surfaces=("tools.BandCollision", "tools.BandCollider", "course.CourseConfig"),
)


SDF_PADDING = Tunable(
    "sdf_padding",
    None,
    kind="float",
    lo=0.0,
    hi=1.0e6,
    optional=True,
    unit="track units",
    doc="margin around the borders' bounding box; None is 10% of its larger extent (sdf only).",
    surfaces=("tools.BandCollider",),
)


CLEARANCE = Tunable(
    "clearance",
    None,
    kind="float",
    lo=0.0,
    hi=1.0e6,
    optional=True,
    unit="track units",
    doc="how far a box centre may be above or below the road surface (elevated tracks); "
    "farther is off the road (oob = 1). None: heights are not checked (height NaN).",
    surfaces=("tools.BandCollision", "tools.BandCollider"),
)


#: Collision methods accepted by :class:`BandCollider`.
METHODS = METHOD.choices
