"""The Tunable declarations of the prop placer (read by its utility and its component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ...core.tunable import Tunable
from ..fields import arc_spacing, count, distance

_SURFACES = ("tools.Props", "tools.PropsUtility")

# ---------------------------------------------------------------------------------- fields
KIND = Tunable(
    "kind",
    "cone",
    kind="choice",
    choices=("cone", "wall"),
    doc="what a prop is: an upright "
    "cone on a border point, or a wall segment between two consecutive border points.",
    surfaces=_SURFACES,
)


SPACING = arc_spacing(
    doc="target 3D arc distance between consecutive props along a border (required).",
    surfaces=_SURFACES,
)


SIDE = Tunable(
    "side",
    "both",
    kind="choice",
    choices=("both", "inner", "outer"),
    doc="the borders that get props (both: the inner border's rows first).",
    surfaces=_SURFACES,
)


MAX_PROPS = count(
    "max_props",
    None,
    hi=65536,
    unit="props",
    optional=True,
    doc="per-env prop capacity (all borders together); None ('auto') derives it from a bound "
    "on the border length.",
    surfaces=_SURFACES,
)


def _size(name: str, default: float, doc: str) -> Tunable:
    """A prop's size (a positive distance)."""
    return distance(name, default, positive=True, doc=doc, surfaces=_SURFACES)


CONE_DIAMETER = _size("cone_diameter", 0.04, "base diameter of a cone (scale x and y).")
CONE_HEIGHT = _size("cone_height", 0.06, "height of a cone (scale z).")
WALL_THICKNESS = _size("wall_thickness", 0.02, "thickness of a wall across the border (scale y).")
WALL_HEIGHT = _size("wall_height", 0.05, "height of a wall (scale z).")


_SIZE_FIELDS = (CONE_DIAMETER, CONE_HEIGHT, WALL_THICKNESS, WALL_HEIGHT)

#: Every field of the tool, in its keyword order.
FIELDS = (KIND, SPACING, SIDE, MAX_PROPS, *_SIZE_FIELDS)

PropsSettings = settings_class(
    "PropsSettings",
    FIELDS,
    title="Props",
    doc="The settings of the props along a track's borders (tools.Props, tools.PropsUtility). "
    "``spacing`` is required; ``max_props`` None lets the component choose the capacity "
    "(Props' 'auto').",
    module="track_gen.tools.props",
)
