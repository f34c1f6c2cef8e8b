"""CourseConfig: a flat, frozen description of a course."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import GateGenConfig, TrackGenConfig

__all__ = ["CourseConfig"]


@dataclass(frozen=True)
class CourseConfig:
    """A course as flat data: ``Course(CourseConfig(...))`` (or ``Course.from_config``) is
    ``Course.track(config.gen, ...)`` with the same options.

    Attributes:
        mode: required, ``"track"`` (``"gates"`` is refused: gate courses have no preset in
            this version).
        gen: required, the generator's ``TrackGenConfig``; its type must match ``mode``.
        seeds: what ``TrackGenerator(seeds=)`` takes (an int, an ``[E]`` int32 array, a
            PerEnvSeededRNG or a SeedState); default 0.
        checkpoint_spacing: required in track mode, track units between checkpoints (the
            ``tools.checkpoints.SPACING`` declaration).
        max_checkpoints: checkpoint capacity (``tools.checkpoints.MAX_CHECKPOINTS``); None
            chooses it.
        collision: None, or the band collision backend (``tools.band_collision.METHOD``).
        sdf_resolution: SDF grid side (``tools.band_collision.SDF_RESOLUTION``;
            ``collision="sdf"`` only); None is 128.
        max_boxes: boxes per env (``tools.band_collision.MAX_BOXES``; needs a collision);
            default 1.

    Each field is checked with the declaration of the component that reads it (ranges in
    the Fields reference; the same rules as ``Course.track``); options that do not apply to
    the mode raise ``ValueError``.
    """

    mode: str
    gen: Any
    seeds: Any = 0
    checkpoint_spacing: float | None = None
    max_checkpoints: int | None = None
    collision: str | None = None
    sdf_resolution: int | None = None
    max_boxes: int = 1

    def __post_init__(self):
        from ..tools.band_collision import MAX_BOXES, METHOD, SDF_RESOLUTION
        from ..tools.checkpoints import MAX_CHECKPOINTS, SPACING

        if self.mode == "gates" or isinstance(self.gen, GateGenConfig):
            raise ValueError(
                "CourseConfig(mode='gates') is not available in this version: gate courses "
                "have no preset yet; use mode='track', or a GateGenerator with "
                "Course(generator, components)"
            )
        if not isinstance(self.mode, str):
            raise TypeError(f"CourseConfig.mode must be a str ('track'), got {self.mode!r}")
        if self.mode != "track":
            raise ValueError(f"CourseConfig.mode = {self.mode!r} is out of range: must be 'track'")
        if not isinstance(self.gen, TrackGenConfig):
            raise TypeError(
                f"CourseConfig.gen must be a TrackGenConfig in track mode, got "
                f"{type(self.gen).__name__}"
            )
        if self.checkpoint_spacing is None:
            raise ValueError(
                "CourseConfig.checkpoint_spacing is required in track mode: pass a number "
                f"{SPACING.range_text()} (track units between checkpoints)"
            )
        sp = SPACING.check(self.checkpoint_spacing, "CourseConfig.checkpoint_spacing")
        object.__setattr__(self, "checkpoint_spacing", sp)
        mc = MAX_CHECKPOINTS.check(self.max_checkpoints, "CourseConfig.max_checkpoints")
        object.__setattr__(self, "max_checkpoints", mc)
        if self.collision is not None:
            METHOD.check(self.collision, "CourseConfig.collision")
        if self.sdf_resolution is not None:
            if self.collision != "sdf":
                raise ValueError("CourseConfig.sdf_resolution applies to collision='sdf' only")
            r = SDF_RESOLUTION.check(self.sdf_resolution, "CourseConfig.sdf_resolution")
            object.__setattr__(self, "sdf_resolution", r)
        mb = MAX_BOXES.check(self.max_boxes, "CourseConfig.max_boxes")
        object.__setattr__(self, "max_boxes", mb)
        if mb > 1 and self.collision is None:
            raise ValueError("CourseConfig.max_boxes > 1 needs a collision backend")
