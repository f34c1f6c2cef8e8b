"""Declarative pipeline descriptions: :class:`PipelineSpec`, :class:`StageSpec`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .params import as_range

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
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(
                f"StageSpec.name must be a non-empty str, got {self.name!r} (it namespaces the "
                "stage's params: '<name>.<field>')"
            )
        if not isinstance(self.options, Mapping):
            raise TypeError(
                f"StageSpec.options must be a mapping of option name -> value, got "
                f"{type(self.options).__name__}"
            )
        bad = [k for k in self.options if not isinstance(k, str)]
        if bad:
            raise TypeError(f"StageSpec.options keys must be str, got {bad!r}")
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))


@dataclass(frozen=True)
class PipelineSpec:
    """A generator pipeline: a config and the ordered stages that run on it.

    Build one with :func:`track_gen.pipeline.presets.track` and turn it into a generator with
    :func:`track_gen.pipeline.build` or ``TrackGenerator(spec)``.
    """

    config: Any
    stages: tuple[StageSpec, ...]
    family: str = "track"
    randomize: tuple[tuple[str, tuple[float, float]], ...] = ()

    def __post_init__(self):
        from ..config import GateGenConfig, TrackGenConfig

        want = {"track": TrackGenConfig, "gates": GateGenConfig}.get(self.family)
        if want is None:
            raise ValueError(f"PipelineSpec.family = {self.family!r}: must be 'track' or 'gates'")
        if not isinstance(self.config, want):
            raise TypeError(
                f"PipelineSpec.config must be a {want.__name__} for family "
                f"{self.family!r}, got {type(self.config).__name__}"
            )
        if isinstance(self.stages, (str, bytes, StageSpec)) or not hasattr(self.stages, "__iter__"):
            raise TypeError("PipelineSpec.stages must be a sequence of StageSpec")
        stages = tuple(self.stages)
        if not stages:
            raise ValueError("PipelineSpec.stages is empty")
        if not all(isinstance(s, StageSpec) for s in stages):
            raise TypeError("PipelineSpec.stages must hold StageSpec objects only")
        names = [s.name for s in stages]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"PipelineSpec: duplicate stage names {sorted(dup)}")
        object.__setattr__(self, "stages", stages)
        rnd = dict(self.randomize)
        for name, lo_hi in rnd.items():
            if not isinstance(name, str) or "." not in name:
                raise ValueError(f"with_randomize: {name!r} is not a '<stage>.<field>' name")
            rnd[name] = as_range(name, lo_hi)
        object.__setattr__(self, "randomize", tuple(rnd.items()))

    @property
    def num_envs(self) -> int:
        return self.config.num_envs

    def stage(self, name: str) -> StageSpec:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"no stage named {name!r}; stages: {[s.name for s in self.stages]}")

    def with_randomize(self, ranges: Mapping[str, tuple[float, float]]) -> PipelineSpec:
        """A copy whose dynamic fields in ``ranges`` are drawn per env from (seed, epoch).

        Args:
            ranges: ``{"<stage>.<field>": (lo, hi)}``; each env rebuilt by a regeneration draws
                the field uniformly in ``[lo, hi)`` before the stages run, from a stream of its
                effective seed salted with the field name. Later calls add or replace ranges.

        Example:
            ``presets.track(num_envs=64).with_randomize({"bezier.rad": (0.2, 0.6)})``
        """
        if not hasattr(ranges, "items"):
            raise TypeError("with_randomize expects a mapping {'<stage>.<field>': (lo, hi)}")
        merged = dict(self.randomize)
        merged.update(ranges)
        return dataclasses.replace(self, randomize=tuple(merged.items()))

    def replace_config(self, **changes) -> PipelineSpec:
        """A copy with config fields changed (stages kept)."""
        return dataclasses.replace(self, config=self.config.replace(**changes))
