"""Declarative pipeline descriptions: :class:`PipelineSpec`, :class:`StageSpec`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .params import MAX_RANDOMIZED, as_range
from .plan import plan_stages, randomize_items
from .registry import default_registry

__all__ = ["PipelineSpec", "StageSpec"]

#: The config class of each pipeline family (its ``family`` class attribute names it).
CONFIG_NAMES = {"track": "TrackGenConfig", "gates": "GateGenConfig"}


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
        object.__setattr__(self, "kind", str(self.kind))  # np.str_ -> str
        if self.name is None:
            object.__setattr__(self, "name", self.kind)
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(
                f"StageSpec.name must be a non-empty str, got {self.name!r} (it namespaces the "
                "stage's params: '<name>.<field>')"
            )
        object.__setattr__(self, "name", str(self.name))
        if not isinstance(self.options, Mapping):
            raise TypeError(
                f"StageSpec.options must be a mapping of option name -> value, got "
                f"{type(self.options).__name__}"
            )
        bad = [k for k in self.options if not isinstance(k, str)]
        if bad:
            raise TypeError(f"StageSpec.options keys must be str, got {bad!r}")
        options = {str(k): v for k, v in self.options.items()}
        object.__setattr__(self, "options", MappingProxyType(options))


@dataclass(frozen=True)
class PipelineSpec:
    """A generator pipeline: a config and the ordered stages that run on it.

    Build one with :func:`track_gen.pipeline.presets.track` and turn it into a generator with
    :func:`track_gen.pipeline.build` or ``TrackGenerator(spec)``.

    Checked when it is made (and again when it is built, against the program's registry,
    before anything is allocated): each stage's kind, family and options (against the
    stage's declarations and the config), a sampler first, a stage that decides validity
    (``validate`` / ``gate_validate``) and every randomizer against its field. A namespaced
    kind the default registry does not hold yet (a plugin) defers the checks that need it to
    the build. Unknown kinds and structure errors raise ValueError, an unknown randomized
    field KeyError.
    """

    config: Any
    stages: tuple[StageSpec, ...]
    family: str = "track"
    randomize: tuple[tuple[str, tuple[float, float]], ...] = ()

    def __post_init__(self):
        if not isinstance(self.family, str):
            raise TypeError(
                f"PipelineSpec.family must be 'track' or 'gates' (a str), got "
                f"{type(self.family).__name__} {self.family!r}"
            )
        want = CONFIG_NAMES.get(self.family)
        if want is None:
            raise ValueError(f"PipelineSpec.family = {self.family!r}: must be 'track' or 'gates'")
        # a config's class names the family it builds (TrackGenConfig.family == "track")
        if getattr(type(self.config), "family", None) != self.family:
            raise TypeError(
                f"PipelineSpec.config must be a {want} for family "
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
        object.__setattr__(self, "family", str(self.family))
        rnd = {}
        for name, lo_hi in randomize_items(self.randomize):
            if not isinstance(name, str):
                raise TypeError(
                    f"with_randomize: {name!r} is not a '<stage>.<field>' name (a str), got "
                    f"{type(name).__name__}"
                )
            if "." not in name:
                raise ValueError(f"with_randomize: {name!r} is not a '<stage>.<field>' name")
            rnd[str(name)] = as_range(name, lo_hi)
        if len(rnd) > MAX_RANDOMIZED:
            raise ValueError(f"with_randomize: {len(rnd)} fields, at most {MAX_RANDOMIZED}")
        object.__setattr__(self, "randomize", tuple(rnd.items()))
        plan_stages(self, default_registry(), defer=True)

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
