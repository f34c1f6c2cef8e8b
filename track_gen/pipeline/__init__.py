"""The pipeline engine: specs, registry, stages and built programs."""

from . import presets
from .params import Params
from .program import Program, build
from .registry import Registry, StageEntry, default_registry, register
from .spec import PipelineSpec, StageSpec
from .stage import Layout, ParamSpec, Stage, Workspace

__all__ = [
    "Layout",
    "Params",
    "ParamSpec",
    "PipelineSpec",
    "Program",
    "Registry",
    "Stage",
    "StageEntry",
    "StageSpec",
    "Workspace",
    "build",
    "default_registry",
    "presets",
    "register",
]
