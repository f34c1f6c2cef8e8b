"""The Tunable declarations of the track localizer (read by its utility and its component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ..fields import count

WARM_WINDOW = count(
    "warm_window",
    None,
    hi=16384,
    unit="segments",
    optional=True,
    doc="half-width W of the warm search window (2W + 1 segments around the previous "
    "answer); None: a full search every locate.",
    surfaces=(
        "tools.Localizer",
        "tools.LocalizerUtility",
        "course.Course.gates",
        "course.CourseConfig",
    ),
    aliases={"Course.gates": "localize_window", "CourseConfig": "localize_window"},
)

#: Every field of the tool, in its keyword order.
FIELDS = (WARM_WINDOW,)

LocalizerSettings = settings_class(
    "LocalizerSettings",
    FIELDS,
    title="Localizer",
    doc="The settings of a localizer (tools.Localizer, tools.LocalizerUtility).",
    module="track_gen.tools.localizer",
)
