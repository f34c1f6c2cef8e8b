"""CourseConfig: a flat, frozen description of a course."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

from ..config import GateGenConfig, TrackGenConfig

__all__ = ["CourseConfig"]


@dataclass(frozen=True)
class CourseConfig:
    """A course as flat data: ``Course(CourseConfig(...))`` (or ``Course.from_config``) is
    ``Course.track(config.gen, ...)`` with the same options.

    Attributes:
        mode (str, required): ``"track"``. (``"gates"`` is refused until gate courses get
            their components.)
        gen (TrackGenConfig, required): the generator's configuration; its type must match
            ``mode``.
        seeds (default 0): what ``TrackGenerator(seeds=)`` takes (an int, an ``[E]`` int32
            array, a PerEnvSeededRNG or a SeedState).
        checkpoint_spacing (float, required > 0 in track mode): track units between checkpoints.
        max_checkpoints (int >= 3 or None): checkpoint capacity; None chooses it.
        collision (None, ``"segments"`` or ``"sdf"``): the band collision backend.
        sdf_resolution (int >= 8 or None -> 128): SDF grid side (``collision="sdf"`` only).
        max_boxes (int >= 1, default 1): boxes per env (needs a collision).

    Options that do not apply to the mode raise ``ValueError`` on construction.
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
        if self.mode == "gates" or isinstance(self.gen, GateGenConfig):
            raise ValueError(
                "CourseConfig(mode='gates') is not available yet: gate courses have "
                "no course components in this version; use mode='track'"
            )
        if self.mode != "track":
            raise ValueError(f"CourseConfig.mode = {self.mode!r} must be 'track'")
        if not isinstance(self.gen, TrackGenConfig):
            raise TypeError(
                f"CourseConfig.gen must be a TrackGenConfig in track mode, got "
                f"{type(self.gen).__name__}"
            )
        sp = self.checkpoint_spacing
        if isinstance(sp, bool) or not isinstance(sp, numbers.Real) or not sp > 0:
            raise ValueError(
                f"CourseConfig.checkpoint_spacing = {sp!r} is required in track mode "
                "and must be a number > 0"
            )
        mc = self.max_checkpoints
        if mc is not None and (
            isinstance(mc, bool) or not isinstance(mc, numbers.Integral) or mc < 3
        ):
            raise ValueError(f"CourseConfig.max_checkpoints = {mc!r} must be an int >= 3 or None")
        if self.collision not in (None, "segments", "sdf"):
            raise ValueError(
                f"CourseConfig.collision = {self.collision!r} must be None, 'segments' or 'sdf'"
            )
        if self.sdf_resolution is not None:
            if self.collision != "sdf":
                raise ValueError("CourseConfig.sdf_resolution applies to collision='sdf' only")
            r = self.sdf_resolution
            if isinstance(r, bool) or not isinstance(r, numbers.Integral) or r < 8:
                raise ValueError(f"CourseConfig.sdf_resolution = {r!r} must be an int >= 8")
        mb = self.max_boxes
        if isinstance(mb, bool) or not isinstance(mb, numbers.Integral) or mb < 1:
            raise ValueError(f"CourseConfig.max_boxes = {mb!r} must be an int >= 1")
        if mb > 1 and self.collision is None:
            raise ValueError("CourseConfig.max_boxes > 1 needs a collision backend")
