"""The Tunable declarations of the gate colliders (read by its utility and its component)."""

from __future__ import annotations

from ...core.tunable import Tunable

POST_RADIUS = Tunable(
    "post_radius",
    None,
    kind="float",
    lo=0.0,
    lo_open=True,
    hi=1.0e6,
    optional=True,
    unit="track units",
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


FRAME_THICKNESS = Tunable(
    "frame_thickness",
    0.01,
    lo=0.0,
    lo_open=True,
    hi=1.0e6,
    unit="track units",
    doc="width of each frame member in the gate plane, outside the square opening.",
    surfaces=("tools.FrameCollision", "tools.FrameCollider", "course.CourseConfig"),
    aliases={
        "FrameCollision": "thickness",
        "FrameCollider": "thickness",
        "CourseConfig": "frame_collision",
    },
)


FRAME_DEPTH = Tunable(
    "frame_depth",
    0.01,
    lo=0.0,
    hi=1.0e6,
    unit="track units",
    doc="extent of each frame member along the gate's forward axis (0: flat members).",
    surfaces=("tools.FrameCollision", "tools.FrameCollider", "course.CourseConfig"),
    aliases={
        "FrameCollision": "depth",
        "FrameCollider": "depth",
        "CourseConfig": "frame_collision",
    },
)


AGENT_RADIUS = Tunable(
    "agent_radius",
    0.0,
    lo=0.0,
    hi=1.0e6,
    unit="track units",
    doc="radius of the sphere tested against the gate frames (0: a point).",
    surfaces=("tools.FrameCollision", "tools.FrameCollider", "course.CourseConfig"),
    aliases={"CourseConfig": "frame_collision"},
)
