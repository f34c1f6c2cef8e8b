"""Ready-made pipeline specs."""

from __future__ import annotations

from ..config import TrackGenConfig
from .spec import PipelineSpec, StageSpec

__all__ = ["track", "track_from_config"]


def track_from_config(config: TrackGenConfig) -> PipelineSpec:
    """The standard track pipeline for ``config``.

    Stages: ``<generator>`` (sampler) -> ``resample`` -> ``relax`` (when
    ``relax_enable``) -> ``inflate`` -> ``validate``.
    """
    stages = [StageSpec(config.generator), StageSpec("resample")]
    if config.relax_enable:
        stages.append(StageSpec("relax"))
    stages += [StageSpec("inflate"), StageSpec("validate")]
    return PipelineSpec(config=config, stages=tuple(stages), family="track")


def track(**config_fields) -> PipelineSpec:
    """A track pipeline from :class:`~track_gen.TrackGenConfig` fields.

    Example:
        ``presets.track(num_envs=64, device="cpu", generator="polar")``
    """
    return track_from_config(TrackGenConfig(**config_fields))
