"""CourseConfig: a flat, frozen description of a course."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..config import GateGenConfig, TrackGenConfig
from ..seeds import SeedState
from ..tools.band_collision import MAX_BOXES, METHOD, SDF_RESOLUTION
from ..tools.checkpoints import MAX_CHECKPOINTS, SPACING
from ..tools.course_line import SAMPLES_PER_GATE
from ..tools.gate_collision import AGENT_RADIUS, FRAME_DEPTH, FRAME_THICKNESS, POST_RADIUS
from ..tools.heightfield import RESOLUTION
from ..tools.localizer import WARM_WINDOW
from .rules import check_checkpoint_capacity, check_gate_width

__all__ = ["CourseConfig"]


@dataclass(frozen=True)
class CourseConfig:
    """A course as flat data: ``Course(CourseConfig(...))`` (or ``Course.from_config``) is
    the mode's preset with the same options: ``Course.track(config.gen, ...)`` or
    ``Course.gates(config.gen, ...)``, byte-identical for the same seeds.

    Attributes:
        mode: required, ``"track"`` or ``"gates"``.
        gen: required, the generator's config: a ``TrackGenConfig`` in track mode, a
            ``GateGenConfig`` in gates mode.
        seeds: what the generator's ``seeds=`` takes (an int, an ``[E]`` int32 array, a
            PerEnvSeededRNG or a SeedState; checked here, the device when the course is
            built); default 0.

    Track mode:
        checkpoint_spacing: required, track units between checkpoints
            (``tools.checkpoints.SPACING``).
        max_checkpoints: checkpoint capacity (``tools.checkpoints.MAX_CHECKPOINTS``); None
            chooses it.
        collision: None, or the band collision backend (``tools.band_collision.METHOD``).
        sdf_resolution: SDF grid side (``tools.band_collision.SDF_RESOLUTION``;
            ``collision="sdf"`` only); None is 128.
        max_boxes: boxes per env (``tools.band_collision.MAX_BOXES``; needs a collision);
            default 1.
        heightfield_resolution: None, or the side of a ``tools.HeightFieldBake`` grid
            (``tools.heightfield.RESOLUTION``) added as the ``heightfield`` component.

    Gates mode:
        post_radius: None, or the radius of the gate posts for a ``tools.DiscCollision``
            (``tools.gate_collision.POST_RADIUS``: > 0).
        frame_collision: None, or ``(thickness, depth, agent_radius)`` (a tuple, or a mapping
            with those keys) for a ``tools.FrameCollision``; not with ``post_radius``.
        samples_per_gate: course-line beads per gate (``tools.course_line.SAMPLES_PER_GATE``);
            default 8.
        localize_window: the localizer's warm window (``tools.localizer.WARM_WINDOW``); None
            searches every segment each step.

    Each field is checked with the declaration of the component that reads it (ranges in
    the Fields reference; the same rules as the presets, the gate-width rule included);
    options that do not apply to the mode raise ``ValueError``.
    """

    mode: str
    gen: Any
    seeds: Any = 0
    checkpoint_spacing: float | None = None
    max_checkpoints: int | None = None
    collision: str | None = None
    sdf_resolution: int | None = None
    max_boxes: int = 1
    heightfield_resolution: int | None = None
    post_radius: float | None = None
    frame_collision: Any = None
    samples_per_gate: int = 8
    localize_window: int | None = None

    def __post_init__(self):
        if not isinstance(self.mode, str):
            raise TypeError(
                f"CourseConfig.mode must be a str ('track' or 'gates'), got {self.mode!r}"
            )
        self._set("mode", str(self.mode))  # np.str_ -> str
        if self.mode == "track":
            self._check_track()
        elif self.mode == "gates":
            self._check_gates()
        else:
            raise ValueError(
                f"CourseConfig.mode = {self.mode!r} is out of range: must be 'track' or 'gates'"
            )
        SeedState.check(self.seeds, self.gen.num_envs)

    def _set(self, name, value) -> None:
        object.__setattr__(self, name, value)

    def _refuse(self, names, mode) -> None:
        defaults = {f.name: f.default for f in fields(self)}
        for name in names:
            value, default = getattr(self, name), defaults[name]
            if not (value is default or (type(value) is type(default) and value == default)):
                raise ValueError(
                    f"CourseConfig.{name} = {getattr(self, name)!r} does not apply to "
                    f"mode={mode!r}: leave it at {defaults[name]!r}"
                )

    def _check_track(self) -> None:
        if not isinstance(self.gen, TrackGenConfig) or isinstance(self.gen, GateGenConfig):
            raise TypeError(
                f"CourseConfig.gen must be a TrackGenConfig in track mode, got "
                f"{type(self.gen).__name__} (a GateGenConfig goes with mode='gates')"
            )
        self._refuse(
            ("post_radius", "frame_collision", "samples_per_gate", "localize_window"), "track"
        )
        if self.checkpoint_spacing is None:
            raise ValueError(
                "CourseConfig.checkpoint_spacing is required in track mode: pass a number "
                f"{SPACING.range_text()} (track units between checkpoints)"
            )
        self._set(
            "checkpoint_spacing",
            SPACING.check(self.checkpoint_spacing, "CourseConfig.checkpoint_spacing"),
        )
        self._set(
            "max_checkpoints",
            MAX_CHECKPOINTS.check(self.max_checkpoints, "CourseConfig.max_checkpoints"),
        )
        if self.collision is not None:
            self._set("collision", METHOD.check(self.collision, "CourseConfig.collision"))
        if self.sdf_resolution is not None:
            if self.collision != "sdf":
                raise ValueError("CourseConfig.sdf_resolution applies to collision='sdf' only")
            r = SDF_RESOLUTION.check(self.sdf_resolution, "CourseConfig.sdf_resolution")
            self._set("sdf_resolution", r)
        if self.heightfield_resolution is not None:
            self._set(
                "heightfield_resolution",
                RESOLUTION.check(
                    self.heightfield_resolution, "CourseConfig.heightfield_resolution"
                ),
            )
        mb = MAX_BOXES.check(self.max_boxes, "CourseConfig.max_boxes")
        self._set("max_boxes", mb)
        if mb > 1 and self.collision is None:
            raise ValueError("CourseConfig.max_boxes > 1 needs a collision backend")
        check_checkpoint_capacity(self.gen, self.checkpoint_spacing, self.max_checkpoints)

    def _check_gates(self) -> None:
        if not isinstance(self.gen, GateGenConfig):
            raise TypeError(
                f"CourseConfig.gen must be a GateGenConfig in gates mode, got "
                f"{type(self.gen).__name__}"
            )
        self._refuse(
            (
                "checkpoint_spacing",
                "max_checkpoints",
                "collision",
                "sdf_resolution",
                "max_boxes",
                "heightfield_resolution",
            ),
            "gates",
        )
        if self.post_radius is not None:
            self._set(
                "post_radius", POST_RADIUS.check(self.post_radius, "CourseConfig.post_radius")
            )
        fc = self.frame_collision
        if fc is not None:
            if self.post_radius is not None:
                raise ValueError(
                    "CourseConfig: pass post_radius (posts) or frame_collision (frames), not both"
                )
            keys = ("thickness", "depth", "agent_radius")
            if isinstance(fc, Mapping):
                unknown = sorted(set(map(str, fc)) - set(keys))
                missing = [k for k in keys if k not in fc]
                if unknown or missing:
                    raise ValueError(
                        f"CourseConfig.frame_collision needs the keys {keys} "
                        f"(unknown: {unknown}, missing: {missing})"
                    )
                fc = tuple(fc[k] for k in keys)
            elif isinstance(fc, (str, bytes)) or not isinstance(fc, Sequence) or len(fc) != 3:
                raise TypeError(
                    "CourseConfig.frame_collision must be (thickness, depth, agent_radius) or a "
                    f"mapping with those keys, got {fc!r}"
                )
            tunables = (FRAME_THICKNESS, FRAME_DEPTH, AGENT_RADIUS)
            fc = tuple(
                t.check(v, f"CourseConfig.frame_collision {k}")
                for t, k, v in zip(tunables, keys, fc, strict=True)
            )
            self._set("frame_collision", fc)
        self._set(
            "samples_per_gate",
            SAMPLES_PER_GATE.check(self.samples_per_gate, "CourseConfig.samples_per_gate"),
        )
        self._set(
            "localize_window",
            WARM_WINDOW.check(self.localize_window, "CourseConfig.localize_window"),
        )
        check_gate_width(self.gen)
