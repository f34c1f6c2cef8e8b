"""User-facing generators built on the pipeline engine."""

from __future__ import annotations

import warp as wp

from .config import GateGenConfig, TrackGenConfig
from .engine.plan import check_sampler_name
from .engine.program import Program
from .engine.registry import Registry, default_registry
from .engine.spec import PipelineSpec
from .pipeline.presets import gates_from_config, track_from_config
from .seeds import PerEnvSeededRNG, SeedState

__all__ = ["GateGenerator", "GeneratorBase", "TrackGenerator"]


class GeneratorBase(Program):
    """What :class:`TrackGenerator` and :class:`GateGenerator` share: a :class:`Program`
    built from the family's config (through its standard pipeline) or from a
    :class:`~track_gen.pipeline.PipelineSpec` of that family, with the arguments documented
    on :class:`TrackGenerator`. Each generator class names its family, config type, preset
    and standard pipeline; neither is the other (a gate generator is no TrackGenerator).
    """

    #: ``"track"`` or ``"gates"``; the config class; the preset that builds a spec; the
    #: standard pipeline of a config (set by each generator class).
    _family: str = ""
    _config_type: type = type(None)
    _preset: str = ""
    _pipeline = None

    def __init__(
        self,
        config_or_spec: TrackGenConfig | GateGenConfig | PipelineSpec,
        rng: PerEnvSeededRNG | None = None,
        *,
        seeds: int | wp.array | PerEnvSeededRNG | SeedState | None = None,
        stream: wp.Stream | None = None,
        registry: Registry | None = None,
    ):
        name = type(self).__name__
        if registry is not None and not isinstance(registry, Registry):
            raise TypeError(f"registry must be a Registry, got {type(registry).__name__}")
        if isinstance(config_or_spec, self._config_type):
            check_sampler_name(config_or_spec, registry or default_registry())
            spec = type(self)._pipeline(config_or_spec)
        elif isinstance(config_or_spec, PipelineSpec):
            spec = config_or_spec
            if spec.family != self._family:
                raise TypeError(
                    f"{name} needs a {self._family} pipeline ({self._preset}(...)), "
                    f"got family {spec.family!r}"
                )
        else:
            raise TypeError(
                f"{name}(config_or_spec): expected a {self._config_type.__name__} "
                f"or a PipelineSpec ({self._preset}(...)), got "
                f"{type(config_or_spec).__name__}"
            )
        super().__init__(spec, registry=registry, seeds=seeds, rng=rng, stream=stream)


class TrackGenerator(GeneratorBase):
    """A fixed batch of road-band tracks (a :class:`~track_gen.Track`), built from a
    :class:`TrackGenConfig` or ``presets.track(...)``.

    Args:
        config_or_spec: the family's config, or a PipelineSpec of the family.
        rng: optional :class:`PerEnvSeededRNG`, positionally: ``TrackGenerator(config, rng)``
            (the spelling of the cuda-graph loop guide).
        seeds: what seeds the batch: an int ``s`` (env e gets ``s + e``), an ``[E]`` int32
            ``wp.array`` used by pointer, a :class:`PerEnvSeededRNG` or a
            :class:`~track_gen.SeedState`. Default 0.
        stream: default CUDA stream for launches.
        registry: where stage names are looked up (default: the process-wide registry).

    Construction allocates every buffer and generates nothing: ``result`` holds NaN rows
    and ``generation == -1`` until the first :meth:`generate`. It raises
    :class:`~track_gen.CaptureError` inside a graph capture.
    """

    _family = "track"
    _config_type = TrackGenConfig
    _preset = "presets.track"
    _pipeline = staticmethod(track_from_config)

    @property
    def config(self) -> TrackGenConfig:
        """The :class:`TrackGenConfig` of this generator."""
        return self.spec.config


class GateGenerator(GeneratorBase):
    """A fixed batch of drone-racing gate courses (a :class:`~track_gen.GateSequence`).

    Same arguments, seeds, epochs, masked regeneration, ``params``, ``inputs`` and graphs as
    :class:`TrackGenerator`; the gates are placed along the loops of the same sampler stages
    (``GateGenConfig.generator``). Build from a :class:`GateGenConfig` or
    ``presets.gates(...)``.
    """

    _family = "gates"
    _config_type = GateGenConfig
    _preset = "presets.gates"
    _pipeline = staticmethod(gates_from_config)

    @property
    def config(self) -> GateGenConfig:
        """The :class:`GateGenConfig` of this generator."""
        return self.spec.config
