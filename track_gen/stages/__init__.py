"""Built-in pipeline stages, one module each (registered as the built-in kinds of every
``Registry`` on import)."""

from ..engine.registry import add_builtins
from .bezier import SamplerBezier
from .centerline import SamplerCenterline
from .checkpoint import SamplerCheckpoint
from .circuit import SamplerCircuit
from .elevate import Elevate
from .gate_anchors import GateAnchors
from .gate_frames import GateFrames
from .gate_table import SamplerGateTable
from .gate_validate import GateValidate
from .hull import SamplerHull
from .inflate import Inflate
from .mix import SamplerMix
from .polar import SamplerPolar
from .real_track import SamplerRealTrack
from .relax import RelaxPBD
from .repulsive import SamplerRepulsive
from .resample import ResampleConstantSpacing
from .road_width import RoadWidth
from .validate import ValidateTrack
from .voronoi import SamplerVoronoi

#: Built-in samplers a config selects by name (``generator=``). Their FIELDS join the flat
#: configs (one section each), so a new built-in sampler is its module plus one line here.
BUILTIN_SAMPLERS = {
    "bezier": SamplerBezier,
    "polar": SamplerPolar,
    "hull": SamplerHull,
    "voronoi": SamplerVoronoi,
    "checkpoint": SamplerCheckpoint,
    "repulsive": SamplerRepulsive,
    "circuit": SamplerCircuit,
}

#: Every built-in stage kind.
BUILTIN_STAGES = {
    **BUILTIN_SAMPLERS,
    "mix": SamplerMix,
    "centerline": SamplerCenterline,
    "real_track": SamplerRealTrack,
    "gate_table": SamplerGateTable,
    "road_width": RoadWidth,
    "resample": ResampleConstantSpacing,
    "relax": RelaxPBD,
    "inflate": Inflate,
    "validate": ValidateTrack,
    "elevate": Elevate,
    "gate_anchors": GateAnchors,
    "gate_frames": GateFrames,
    "gate_validate": GateValidate,
}

add_builtins(BUILTIN_STAGES)

__all__ = [
    "BUILTIN_SAMPLERS",
    "BUILTIN_STAGES",
    "SamplerBezier",
    "SamplerPolar",
    "SamplerHull",
    "SamplerVoronoi",
    "SamplerMix",
    "SamplerCenterline",
    "SamplerRealTrack",
    "SamplerGateTable",
    "SamplerCheckpoint",
    "SamplerCircuit",
    "SamplerRepulsive",
    "ResampleConstantSpacing",
    "RoadWidth",
    "RelaxPBD",
    "Inflate",
    "ValidateTrack",
    "Elevate",
    "GateAnchors",
    "GateFrames",
    "GateValidate",
]
