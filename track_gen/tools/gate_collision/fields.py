"""The Tunable declarations of the gate colliders (read by its utility and its component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ...core.tunable import config_label
from ..band_collision.fields import MAX_BOXES
from ..fields import distance

_FRAME_SURFACES = ("tools.FrameCollision", "tools.FrameCollisionUtility", "course.CourseConfig")

POST_RADIUS = distance(
    "post_radius",
    None,
    positive=True,
    optional=True,
    doc="radius of each gate post (a vertical cylinder through a bar end); None: no post "
    "collision (DiscCollisionUtility and DiscCollision need a number).",
    surfaces=(
        "tools.DiscCollision",
        "tools.DiscCollisionUtility",
        "course.Course.gates",
        "course.CourseConfig",
    ),
    aliases={
        "DiscCollision": "radius",
        "DiscCollisionUtility": "radius",
        "Course.gates": "collision",
    },
)


FRAME_THICKNESS = distance(
    "frame_thickness",
    0.01,
    positive=True,
    doc="width of each frame member in the gate plane, outside the square opening.",
    surfaces=_FRAME_SURFACES,
    aliases={
        "FrameCollision": "thickness",
        "FrameCollisionUtility": "thickness",
        "CourseConfig": "frame_collision",
    },
)


FRAME_DEPTH = distance(
    "frame_depth",
    0.01,
    doc="extent of each frame member along the gate's forward axis (0: flat members).",
    surfaces=_FRAME_SURFACES,
    aliases={
        "FrameCollision": "depth",
        "FrameCollisionUtility": "depth",
        "CourseConfig": "frame_collision",
    },
)


AGENT_RADIUS = distance(
    "agent_radius",
    0.0,
    doc="radius of the sphere tested against the gate frames (0: a point).",
    surfaces=_FRAME_SURFACES,
    aliases={"CourseConfig": "frame_collision"},
)


def _check_disc(settings) -> None:
    """A disc collider needs a post radius (None, CourseConfig's "no post collision", is
    refused here)."""
    if settings.radius is None:
        rule = POST_RADIUS.range_text().removesuffix(", or None")
        raise TypeError(
            f"{config_label(settings)}.radius must be a number, got None: pass a post radius {rule}"
        )


#: The fields of the disc (post) collider, in its keyword order.
DISC_FIELDS = (POST_RADIUS, MAX_BOXES)
#: The fields of the frame collider, in its keyword order.
FRAME_FIELDS = (FRAME_THICKNESS, FRAME_DEPTH, AGENT_RADIUS)

DiscCollisionSettings = settings_class(
    "DiscCollisionSettings",
    DISC_FIELDS,
    title="Disc collision",
    doc="The settings of the post collision of a gate course (tools.DiscCollision, "
    "tools.DiscCollisionUtility): the post ``radius`` (required) and the boxes per env.",
    module="track_gen.tools.gate_collision",
    check=_check_disc,
)

FrameCollisionSettings = settings_class(
    "FrameCollisionSettings",
    FRAME_FIELDS,
    title="Frame collision",
    doc="The settings of the frame collision of a gate course (tools.FrameCollision, "
    "tools.FrameCollisionUtility): the members' thickness and depth and the agent sphere's radius.",
    module="track_gen.tools.gate_collision",
)
