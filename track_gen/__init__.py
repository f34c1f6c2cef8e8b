"""track_gen: procedural race tracks for batched RL on NVIDIA Warp.

Public surface::

    from track_gen import TrackGenConfig, TrackGenerator, PerEnvSeededRNG, SeedState
    from track_gen.pipeline import presets, build, PipelineSpec, Registry

The names below load on first use (PEP 562): ``import track_gen`` alone imports neither Warp
nor the generators, so the ``track-gen`` command can refuse a bad input file before it pays
for them. ``track_gen.X`` and ``from track_gen import X`` work as for any module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what static tools (type checkers, the API docs) see
    from .config import TRACK_GENERATORS, GateGenConfig, SamplerConfig, TrackGenConfig
    from .core.errors import CaptureError, NotCapturableError, RebindAfterCaptureWarning
    from .generators import GateGenerator, TrackGenerator
    from .results import FailBit, GateSequence, Track
    from .seeds import PerEnvSeededRNG, SeedState, effective_seed

__version__ = "0.1.0"

#: Each public name and the module that defines it (imported on first use).
_SOURCES = {
    "TRACK_GENERATORS": ".config",
    "GateGenConfig": ".config",
    "SamplerConfig": ".config",
    "TrackGenConfig": ".config",
    "CaptureError": ".core.errors",
    "NotCapturableError": ".core.errors",
    "RebindAfterCaptureWarning": ".core.errors",
    "GateGenerator": ".generators",
    "TrackGenerator": ".generators",
    "FailBit": ".results",
    "GateSequence": ".results",
    "Track": ".results",
    "PerEnvSeededRNG": ".seeds",
    "SeedState": ".seeds",
    "effective_seed": ".seeds",
}

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


def __getattr__(name: str):
    """A public name (imported from its module on first use, then kept here) or a subpackage
    (``track_gen.pipeline`` without an import statement, as before the names were lazy)."""
    if name in _SOURCES:
        value = getattr(importlib.import_module(_SOURCES[name], __name__), name)
        globals()[name] = value
        return value
    if not name.startswith("_"):
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SOURCES})
