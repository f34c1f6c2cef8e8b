"""track_gen: procedural race tracks for batched RL on NVIDIA Warp.

Public surface::

    from track_gen import TrackGenConfig, TrackGenerator, PerEnvSeededRNG, SeedState
    from track_gen.pipeline import presets, build, PipelineSpec, Registry
"""

from .config import TRACK_GENERATORS, GateGenConfig, SamplerConfig, TrackGenConfig
from .core.errors import CaptureError, NotCapturableError, RebindAfterCaptureWarning
from .generators import GateGenerator, TrackGenerator
from .results import FailBit, GateSequence, Track
from .seeds import PerEnvSeededRNG, SeedState, effective_seed

__version__ = "0.1.0"

__all__ = [
    "TRACK_GENERATORS",
    "CaptureError",
    "FailBit",
    "GateGenConfig",
    "GateGenerator",
    "GateSequence",
    "NotCapturableError",
    "PerEnvSeededRNG",
    "RebindAfterCaptureWarning",
    "SamplerConfig",
    "SeedState",
    "Track",
    "TrackGenConfig",
    "TrackGenerator",
    "__version__",
    "effective_seed",
]
