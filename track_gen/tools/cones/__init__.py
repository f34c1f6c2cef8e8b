"""The cones the agent sees: :class:`ConeDetections` (the course component ``"cones"``),
:class:`ConeDetectionsUtility` (its utility) and :class:`ConeDetectionsResult` (its result). See
``docs/sensors/cones.md``."""

from ...core.deprecation import deprecated_names
from .component import ConeDetections
from .fields import DROPOUT, FOV, MAX_CONES, MAX_RANGE, NOISE, ConeDetectionsSettings
from .kernels import ConeColour
from .result import ConeDetectionsResult
from .utility import ConeDetectionsUtility

__all__ = [
    "ConeDetectionsSettings",
    "ConeColour",
    "ConeDetectionsResult",
    "ConeDetections",
    "ConeDetectionsUtility",
    "DROPOUT",
    "FOV",
    "MAX_CONES",
    "MAX_RANGE",
    "NOISE",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "ConeDetectionSet": "ConeDetectionsResult",
    "ConeDetector": "ConeDetectionsUtility",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
