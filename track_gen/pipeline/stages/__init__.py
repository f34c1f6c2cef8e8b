"""Built-in pipeline stages, one module each."""

from .bezier import SamplerBezier
from .inflate import Inflate
from .polar import SamplerPolar
from .relax import RelaxXPBD
from .resample import ResampleConstantSpacing
from .validate import ValidateTrack

BUILTIN_STAGES = {
    "bezier": SamplerBezier,
    "polar": SamplerPolar,
    "resample": ResampleConstantSpacing,
    "relax": RelaxXPBD,
    "inflate": Inflate,
    "validate": ValidateTrack,
}

__all__ = [
    "BUILTIN_STAGES",
    "SamplerBezier",
    "SamplerPolar",
    "ResampleConstantSpacing",
    "RelaxXPBD",
    "Inflate",
    "ValidateTrack",
]
