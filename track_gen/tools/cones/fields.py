"""The Tunable declarations of the cone detector (read by its utility and its component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ..fields import count, distance, field_of_view, probability

_SURFACES = ("tools.ConeDetections", "tools.ConeDetectionsUtility")

MAX_CONES = count(
    "max_cones",
    None,
    hi=4096,
    unit="cones",
    doc="detections per env, the nearest first (no default: ConeDetections and "
    "ConeDetectionsUtility require it).",
    surfaces=_SURFACES,
)

FOV = field_of_view(
    None,
    doc="full horizontal field of view, centred on the agent's heading: a cone can be seen "
    "when its bearing |atan2(y, x)| <= fov / 2 (2*pi: all around; no default).",
    surfaces=_SURFACES,
)

MAX_RANGE = distance(
    "max_range",
    None,
    positive=True,
    doc="largest 3D distance from the agent at which a cone is seen (no default).",
    surfaces=_SURFACES,
)

DROPOUT = probability(
    "dropout",
    doc="chance that a cone is missed on a step, drawn per cone and step (0: never, 1: always).",
    surfaces=_SURFACES,
)

NOISE = distance(
    "noise",
    0.0,
    doc="standard deviation of the Gaussian noise added to each coordinate of a seen cone's "
    "reported position, per cone and step (0: exact; whether a cone is seen is decided on its "
    "true position).",
    surfaces=_SURFACES,
)

#: Every field of the tool, in its keyword order.
FIELDS = (
    MAX_CONES,
    FOV,
    MAX_RANGE,
    DROPOUT,
    NOISE,
)

ConeDetectionsSettings = settings_class(
    "ConeDetectionsSettings",
    FIELDS,
    title="Cone detections",
    doc="The settings of a cone detector (tools.ConeDetections, tools.ConeDetectionsUtility, "
    "RaceConfig.cones). Fields without a default are required.",
    module="track_gen.tools.cones",
)
