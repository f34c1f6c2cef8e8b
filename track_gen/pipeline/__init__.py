"""The pipeline engine: specs, registry, stages and built programs."""

from ..tunable import Tunable
from . import presets
from .params import Params
from .program import Program, build
from .registry import Registry, StageEntry, default_registry, register
from .spec import PipelineSpec, StageSpec
from .stage import Layout, Stage, Workspace
from .timer import StageTimer

__all__ = [
    "Layout",
    "Params",
    "PipelineSpec",
    "Program",
    "Registry",
    "Stage",
    "StageEntry",
    "StageSpec",
    "StageTimer",
    "Tunable",
    "Workspace",
    "build",
    "default_registry",
    "presets",
    "register",
]
