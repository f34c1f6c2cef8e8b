"""The cones the agent sees: :class:`ConeDetections` (the course component ``"cones"``),
:class:`ConeDetector` (its utility) and :class:`ConeDetectionSet` (its result). See
``docs/sensors/cones.md``."""

from .component import ConeDetections
from .fields import DROPOUT, FOV, MAX_CONES, MAX_RANGE, NOISE, ConeDetectionsSettings
from .kernels import ConeColour
from .result import ConeDetectionSet
from .utility import ConeDetector

__all__ = [
    "ConeDetectionsSettings",
    "ConeColour",
    "ConeDetectionSet",
    "ConeDetections",
    "ConeDetector",
    "DROPOUT",
    "FOV",
    "MAX_CONES",
    "MAX_RANGE",
    "NOISE",
]
