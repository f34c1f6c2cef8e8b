"""The localizer tool (see :mod:`track_gen.tools.localizer.utility`)."""

from .utility import (
    WARM_WINDOW,
    CourseLine,
    Localizer,
    TrackFrame,
    TrackLocalizer,
)

__all__ = [
    "CourseLine",
    "Localizer",
    "TrackFrame",
    "TrackLocalizer",
    "WARM_WINDOW",
]
