"""The Tunable declarations of the gate colliders (read by its utility and its component)."""

from __future__ import annotations

from ..fields import distance

_FRAME_SURFACES = ("tools.FrameCollision", "tools.FrameCollider", "course.CourseConfig")

POST_RADIUS = distance(
    "post_radius",
    None,
    positive=True,
    optional=True,
    doc="radius of each gate post (a vertical cylinder through a bar end); None: no post "
    "collision (DiscCollider and DiscCollision need a number).",
    surfaces=(
        "tools.DiscCollision",
        "tools.DiscCollider",
        "course.Course.gates",
        "course.CourseConfig",
    ),
    aliases={"DiscCollision": "radius", "DiscCollider": "radius", "Course.gates": "collision"},
)


FRAME_THICKNESS = distance(
    "frame_thickness",
    0.01,
    positive=True,
    doc="width of each frame member in the gate plane, outside the square opening.",
    surfaces=_FRAME_SURFACES,
    aliases={
        "FrameCollision": "thickness",
        "FrameCollider": "thickness",
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
        "FrameCollider": "depth",
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
