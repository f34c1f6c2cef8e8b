"""Declarative pipeline descriptions: :class:`PipelineSpec`, :class:`StageSpec`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..config import TrackGenConfig

__all__ = ["PipelineSpec", "StageSpec"]


@dataclass(frozen=True)
class StageSpec:
    """One stage of a pipeline.

    Attributes:
        kind: registered stage name (``"bezier"``, ``"resample"``, ...).
        name: instance name, the namespace of its params (``"bezier.rad"``); defaults to kind.
        options: static options passed to the stage constructor.
    """

    kind: str
    name: str | None = None
    options: Any = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.kind, str) or not self.kind:
            raise TypeError(f"StageSpec.kind must be a non-empty str, got {self.kind!r}")
        if self.name is None:
            object.__setattr__(self, "name", self.kind)
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))


@dataclass(frozen=True)
class PipelineSpec:
    """A generator pipeline: a config and the ordered stages that run on it.

    Build one with :func:`track_gen.pipeline.presets.track` and turn it into a generator with
    :func:`track_gen.pipeline.build` or ``TrackGenerator(spec)``.
    """

    config: TrackGenConfig
    stages: tuple[StageSpec, ...]
    family: str = "track"

    def __post_init__(self):
        if not isinstance(self.config, TrackGenConfig):
            raise TypeError("PipelineSpec.config must be a TrackGenConfig")
        stages = tuple(self.stages)
        if not stages:
            raise ValueError("PipelineSpec.stages is empty")
        names = [s.name for s in stages]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"PipelineSpec: duplicate stage names {sorted(dup)}")
        object.__setattr__(self, "stages", stages)

    @property
    def num_envs(self) -> int:
        return self.config.num_envs

    def stage(self, name: str) -> StageSpec:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"no stage named {name!r}; stages: {[s.name for s in self.stages]}")

    def replace_config(self, **changes) -> PipelineSpec:
        """A copy with config fields changed (stages kept)."""
        return dataclasses.replace(self, config=self.config.replace(**changes))
