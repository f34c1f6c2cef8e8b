"""The pipeline: specs, registry, stages and built programs (public names of
``track_gen.engine``, the built-in stages of ``track_gen.stages``, and the ready-made specs of
:mod:`track_gen.pipeline.presets`)."""

from ..core.tunable import Tunable
from ..engine.params import Params
from ..engine.program import Program, build
from ..engine.registry import Registry, StageEntry, default_registry, register
from ..engine.spec import PipelineSpec, StageSpec
from ..engine.stage import Layout, Stage, Workspace
from ..engine.timer import StageTimer
from . import presets

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
