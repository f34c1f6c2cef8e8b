"""User-facing generators built on the pipeline engine."""

from __future__ import annotations

from .config import TrackGenConfig
from .pipeline.presets import track_from_config
from .pipeline.program import Program
from .pipeline.registry import Registry, default_registry
from .pipeline.spec import PipelineSpec
from .seeds import PerEnvSeededRNG

__all__ = ["TrackGenerator"]


class TrackGenerator(Program):
    """A fixed batch of road-band tracks.

    Args:
        config_or_spec: a :class:`TrackGenConfig` or a :class:`~track_gen.pipeline.PipelineSpec`
            (``presets.track(...)``).
        rng: optional :class:`PerEnvSeededRNG` (the peer-compatible spelling
            ``TrackGenerator(config, rng)``).
        seeds: what seeds the batch: an int ``s`` (env e gets ``s + e``), an ``[E]`` int32
            ``wp.array`` used by pointer, a :class:`PerEnvSeededRNG` or a
            :class:`~track_gen.SeedState`. Default 0.
        stream: default CUDA stream for launches.
        registry: where stage names are looked up (default: the process-wide registry).

    Construction allocates every buffer and generates nothing: ``result`` holds NaN rows
    and ``generation == -1`` until the first :meth:`generate`. It raises
    :class:`~track_gen.CaptureError` inside a graph capture.
    """

    def __init__(
        self,
        config_or_spec,
        rng: PerEnvSeededRNG | None = None,
        *,
        seeds=None,
        stream=None,
        registry: Registry | None = None,
    ):
        if isinstance(config_or_spec, TrackGenConfig):
            reg = registry or default_registry()
            if (
                config_or_spec.generator not in reg
                or reg.get(config_or_spec.generator).cls.role != "sampler"
            ):
                raise ValueError(
                    f"TrackGenConfig.generator = {config_or_spec.generator!r} is not "
                    f"a registered sampler; choose one of {reg.samplers()}"
                )
            spec = track_from_config(config_or_spec)
        elif isinstance(config_or_spec, PipelineSpec):
            spec = config_or_spec
            if spec.family != "track":
                raise TypeError(
                    f"TrackGenerator needs a track pipeline, got family {spec.family!r}"
                )
        else:
            raise TypeError(
                "TrackGenerator(config_or_spec): expected a TrackGenConfig or a "
                "PipelineSpec (presets.track(...)), got "
                f"{type(config_or_spec).__name__}"
            )
        super().__init__(spec, registry=registry, seeds=seeds, rng=rng, stream=stream)

    @property
    def config(self) -> TrackGenConfig:
        """The :class:`TrackGenConfig` of this generator."""
        return self.spec.config
