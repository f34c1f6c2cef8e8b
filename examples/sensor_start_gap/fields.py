"""The start-gap sensor's one setting and its settings class."""

from __future__ import annotations

from track_gen import tools
from track_gen.pipeline import Tunable

MAX_RANGE = Tunable(
    "max_range",
    1.0,
    kind="float",
    lo=1.0e-6,  # a positive distance declares its smallest value (the float32 rule)
    hi=1.0e6,
    unit="track units",
    doc="the distance the observation divides by (columns clamped to [-1, 1]).",
)

StartGapSettings = tools.settings_class(
    "StartGapSettings",
    (MAX_RANGE,),
    doc="The settings of the start-gap sensor.",
    module=__name__,
)
