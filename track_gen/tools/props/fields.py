"""The Tunable declarations of the prop placer (read by its utility and its component)."""

from __future__ import annotations

from ...core.tunable import Tunable

# ---------------------------------------------------------------------------------- fields
KIND = Tunable(
    "kind",
    "cone",
    kind="choice",
    choices=("cone", "wall"),
    doc="what a prop is: an upright "
    "cone on a border point, or a wall segment between two consecutive border points.",
    surfaces=("tools.Props", "tools.PropPlacer"),
)


SPACING = Tunable(
    "spacing",
    None,
    kind="float",
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units",
    doc="target 3D arc distance between consecutive props along a border (required).",
    surfaces=("tools.Props", "tools.PropPlacer"),
)


SIDE = Tunable(
    "side",
    "both",
    kind="choice",
    choices=("both", "inner", "outer"),
    doc="the borders that get props (both: the inner border's rows first).",
    surfaces=("tools.Props", "tools.PropPlacer"),
)


MAX_PROPS = Tunable(
    "max_props",
    None,
    kind="int",
    lo=1,
    hi=65536,
    optional=True,
    unit="props",
    doc="per-env prop capacity (all borders together); None ('auto') derives it from a bound "
    "on the border length.",
    surfaces=("tools.Props", "tools.PropPlacer"),
)


CONE_DIAMETER = Tunable(
    "cone_diameter",
    0.04,
    lo=0.0,
    hi=1.0e6,
    lo_open=True,
    unit="track units",
    doc="base diameter of a cone (scale x and y).",
    surfaces=("tools.Props", "tools.PropPlacer"),
)


CONE_HEIGHT = Tunable(
    "cone_height",
    0.06,
    lo=0.0,
    hi=1.0e6,
    lo_open=True,
    unit="track units",
    doc="height of a cone (scale z).",
    surfaces=("tools.Props", "tools.PropPlacer"),
)


WALL_THICKNESS = Tunable(
    "wall_thickness",
    0.02,
    lo=0.0,
    hi=1.0e6,
    lo_open=True,
    unit="track units",
    doc="thickness of a wall across the border (scale y).",
    surfaces=("tools.Props", "tools.PropPlacer"),
)


WALL_HEIGHT = Tunable(
    "wall_height",
    0.05,
    lo=0.0,
    hi=1.0e6,
    lo_open=True,
    unit="track units",
    doc="height of a wall (scale z).",
    surfaces=("tools.Props", "tools.PropPlacer"),
)


_SIZE_FIELDS = (CONE_DIAMETER, CONE_HEIGHT, WALL_THICKNESS, WALL_HEIGHT)
