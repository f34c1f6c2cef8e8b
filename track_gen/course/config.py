"""CourseConfig: a flat, frozen description of a course."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from ..config import GateGenConfig, TrackGenConfig
from ..core.tunable import Tunable, labelled
from ..seeds import SeedState
from ..tools.band_collision import MAX_BOXES, METHOD, SDF_RESOLUTION
from ..tools.checkpoints import MAX_CHECKPOINTS, SPACING
from ..tools.course_line import SAMPLES_PER_GATE
from ..tools.gate_collision import AGENT_RADIUS, FRAME_DEPTH, FRAME_THICKNESS, POST_RADIUS
from ..tools.heightfield import RESOLUTION
from ..tools.localizer import WARM_WINDOW
from ..tools.min_time import MinTimeSettings
from ..tools.racing_line import RacingLineSettings
from .rules import check_checkpoint_capacity, check_gate_width

__all__ = ["CourseConfig", "check_min_time", "check_racing_line"]

#: The component fields of each mode, in field order: a field's name is the declaration's
#: keyword for CourseConfig (its alias: ``METHOD`` is ``collision``), its range the
#: declaration's. ``frame_collision`` (three declarations in one tuple) sits before
#: ``samples_per_gate``.
TRACK_FIELDS = (SPACING, MAX_CHECKPOINTS, METHOD, SDF_RESOLUTION, MAX_BOXES, RESOLUTION)
GATE_FIELDS = (POST_RADIUS, SAMPLES_PER_GATE, WARM_WINDOW)
#: The declarations of ``frame_collision``'s (thickness, depth, agent_radius), in order; its
#: mapping keys are their keywords for ``FrameCollision``.
FRAME_FIELDS = (FRAME_THICKNESS, FRAME_DEPTH, AGENT_RADIUS)
#: Fields whose CourseConfig default is None, not the declaration's: None leaves the
#: component out (``collision``, ``heightfield_resolution``) or at its own default
#: (``sdf_resolution``).
NONE_BY_DEFAULT = (METHOD, SDF_RESOLUTION, RESOLUTION)

_OWNER = "CourseConfig"


def _name(t: Tunable) -> str:
    return t.keyword(_OWNER)


def _annotation(t: Tunable):
    base = {"int": int, "float": float}.get(t.kind, str)
    return base | None if (t.optional or t.default is None or t in NONE_BY_DEFAULT) else base


def _field(t: Tunable):
    default = None if t in NONE_BY_DEFAULT else t.default
    return _name(t), _annotation(t), dataclasses.field(default=default, metadata={"tunable": t})


class _CourseConfigChecks:
    """The checks of :class:`CourseConfig` (its fields are generated below)."""

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
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        for name in names:
            value, default = getattr(self, name), defaults[name]
            if not (value is default or (type(value) is type(default) and value == default)):
                raise ValueError(
                    f"CourseConfig.{name} = {getattr(self, name)!r} does not apply to "
                    f"mode={mode!r}: leave it at {defaults[name]!r}"
                )

    def _check_fields(self, *tunables: Tunable) -> None:
        """Check each field of ``tunables`` with its declaration, in order (None left alone
        where it is the CourseConfig default: the component is left out or at its default)."""
        for t in tunables:
            name = _name(t)
            value = getattr(self, name)
            if value is None and t in NONE_BY_DEFAULT:
                continue
            self._set(name, t.check(value, f"{_OWNER}.{name}"))

    def _check_track(self) -> None:
        if not isinstance(self.gen, TrackGenConfig) or isinstance(self.gen, GateGenConfig):
            raise TypeError(
                f"CourseConfig.gen must be a TrackGenConfig in track mode, got "
                f"{type(self.gen).__name__} (a GateGenConfig goes with mode='gates')"
            )
        gate_names = (_name(POST_RADIUS), "frame_collision", *map(_name, GATE_FIELDS[1:]))
        self._refuse(gate_names, "track")
        spacing = _name(SPACING)
        if getattr(self, spacing) is None:
            raise ValueError(
                f"CourseConfig.{spacing} is required in track mode: pass a number "
                f"{SPACING.range_text()} (track units between checkpoints)"
            )
        # the documented order of the checks (the cross-field rules between them)
        self._check_fields(SPACING, MAX_CHECKPOINTS, METHOD)
        if self.sdf_resolution is not None and self.collision != "sdf":
            raise ValueError("CourseConfig.sdf_resolution applies to collision='sdf' only")
        self._check_fields(SDF_RESOLUTION, RESOLUTION, MAX_BOXES)
        if self.max_boxes > 1 and self.collision is None:
            raise ValueError("CourseConfig.max_boxes > 1 needs a collision backend")
        self._set("racing_line", check_racing_line(self.racing_line, "CourseConfig.racing_line"))
        self._refuse(("min_time",), "track")
        check_checkpoint_capacity(self.gen, self.checkpoint_spacing, self.max_checkpoints)

    def _check_gates(self) -> None:
        if not isinstance(self.gen, GateGenConfig):
            raise TypeError(
                f"CourseConfig.gen must be a GateGenConfig in gates mode, got "
                f"{type(self.gen).__name__}"
            )
        self._refuse((*map(_name, TRACK_FIELDS), "racing_line"), "gates")
        self._check_fields(POST_RADIUS)
        if self.frame_collision is not None:
            if self.post_radius is not None:
                raise ValueError(
                    "CourseConfig: pass post_radius (posts) or frame_collision (frames), not both"
                )
            self._set("frame_collision", _check_frame_collision(self.frame_collision))
        self._check_fields(SAMPLES_PER_GATE, WARM_WINDOW)
        self._set("min_time", check_min_time(self.min_time, "CourseConfig.min_time"))
        check_gate_width(self.gen)


def _check_frame_collision(fc) -> tuple:
    """``(thickness, depth, agent_radius)`` from a tuple or a mapping with those keys (the
    keywords of ``FrameCollision``), each checked with its declaration."""
    keys = tuple(t.keyword("FrameCollision") for t in FRAME_FIELDS)
    if isinstance(fc, Mapping):
        unknown = sorted(set(map(str, fc)) - set(keys))
        missing = [k for k in keys if k not in fc]
        if unknown or missing:
            raise ValueError(
                f"CourseConfig.frame_collision needs the keys {keys} "
                f"(unknown: {unknown}, missing: {missing})"
            )
        fc = tuple(fc[k] for k in keys)
    elif isinstance(fc, (str, bytes)) or not isinstance(fc, Sequence) or len(fc) != len(keys):
        raise TypeError(
            f"CourseConfig.frame_collision must be ({', '.join(keys)}) or a mapping with those "
            f"keys, got {fc!r}"
        )
    return tuple(
        t.check(v, f"CourseConfig.frame_collision {k}")
        for t, k, v in zip(FRAME_FIELDS, keys, fc, strict=True)
    )


def _check_settings(value, name: str, cls: type, example: str):
    """None, or the ``cls`` instance (a tool's settings class) of ``value``: a ``cls``, or a
    mapping of its fields (the keywords of its component; the fields without a default
    required), the declarations' defaults filled in (a settings object is a read-only mapping
    of every key). Raises TypeError / ValueError naming ``name``, the key and the value (each
    checked by the settings class) before anything is built."""
    if value is None or isinstance(value, cls):
        return value
    keys = cls.__field_names__
    component = cls.__name__.removesuffix("Settings")
    if not isinstance(value, Mapping):
        hint = (
            f" (a {component} component goes in extra=)"
            if hasattr(value, "step") and not isinstance(value, type)
            else ""
        )
        raise TypeError(
            f"{name} must be None, a tools.{cls.__name__} or a mapping of its fields "
            f"({', '.join(keys)}), got {value!r}{hint}"
        )
    unknown = [k for k in value if not (isinstance(k, str) and k in keys)]
    if unknown:
        close = difflib.get_close_matches(str(unknown[0]), keys, 1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"{name} has unknown keys {unknown!r}{hint}: its keys are {keys}")
    required = [
        k
        for t, k in zip(cls.__tunables__, keys, strict=True)
        if t.default is None and not t.optional
    ]
    missing = [k for k in required if k not in value]
    if missing:
        raise ValueError(
            f"{name} needs the keys {tuple(required)} (missing: {missing}), e.g. {example}"
        )
    with labelled(name):
        return cls(**{k: value[k] for k in keys if k in value})


def check_racing_line(value, name: str) -> RacingLineSettings | None:
    """None, or the :class:`~track_gen.tools.RacingLineSettings` of ``value``: a
    ``RacingLineSettings``, or a mapping of its fields (the keywords of ``tools.RacingLine``;
    ``vehicle_width``, ``a_lat``, ``a_lon`` and ``v_max`` required), the declarations'
    defaults filled in. Raises TypeError / ValueError naming ``name``, the key and the value
    (each checked by the settings class) before anything is built."""
    return _check_settings(
        value,
        name,
        RacingLineSettings,
        "{'vehicle_width': 0.04, 'a_lat': 8.0, 'a_lon': 4.0, 'v_max': 6.0}",
    )


def check_min_time(value, name: str) -> MinTimeSettings | None:
    """None, or the :class:`~track_gen.tools.MinTimeSettings` of ``value``: a
    ``MinTimeSettings``, or a mapping of its fields (the keywords of ``tools.MinTime``;
    ``t_max`` and ``v_max`` required; ``t_max >= 1.001 gravity``), the declarations' defaults
    filled in. Raises TypeError / ValueError naming ``name``, the key and the value before
    anything is built."""
    return _check_settings(value, name, MinTimeSettings, "{'t_max': 34.32, 'v_max': 90.0}")


_DOC = """A course as flat data: ``Course(CourseConfig(...))`` (or ``Course.from_config``) is
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
    racing_line: None, or a ``tools.RacingLineSettings`` (or a mapping of its fields:
        ``vehicle_width``, ``a_lat``, ``a_lon``, ``v_max`` required; ``kappa_max``,
        ``iterations``, ``linearisations``, ``kappa_iterations`` optional) added as the
        ``racing_line`` component; kept as the checked ``RacingLineSettings`` (a read-only
        mapping of every key).

Gates mode:
    post_radius: None, or the radius of the gate posts for a ``tools.DiscCollision``
        (``tools.gate_collision.POST_RADIUS``: > 0).
    frame_collision: None, or ``(thickness, depth, agent_radius)`` (a tuple, or a mapping
        with those keys) for a ``tools.FrameCollision``; not with ``post_radius``.
    samples_per_gate: course-line beads per gate (``tools.course_line.SAMPLES_PER_GATE``);
        default 8.
    localize_window: the localizer's warm window (``tools.localizer.WARM_WINDOW``); None
        searches every segment each step.
    min_time: None, or a ``tools.MinTimeSettings`` (or a mapping of its fields: ``t_max``,
        ``v_max`` required; ``gravity``, ``samples``, ``iterations`` optional) added as the
        ``min_time`` component (the point-mass par of a lap); kept as the checked
        ``MinTimeSettings`` (a read-only mapping of every key).

The component fields are generated from those declarations: each field's name is the
declaration's keyword for CourseConfig (``Tunable.aliases``), its check the declaration's
(ranges in the Fields reference; the same rules as the presets, the gate-width rule
included); options that do not apply to the mode raise ``ValueError``.
"""


def _course_config_fields() -> list:
    fields = [("mode", str), ("gen", Any), ("seeds", Any, dataclasses.field(default=0))]
    fields += [_field(t) for t in TRACK_FIELDS]
    fields.append(_field(POST_RADIUS))
    fields.append(("frame_collision", Any, dataclasses.field(default=None)))
    fields += [_field(t) for t in GATE_FIELDS if t is not POST_RADIUS]
    fields.append(("racing_line", Any, dataclasses.field(default=None)))  # last: keeps positions
    fields.append(("min_time", Any, dataclasses.field(default=None)))
    return fields


CourseConfig = dataclasses.make_dataclass(
    "CourseConfig", _course_config_fields(), bases=(_CourseConfigChecks,), frozen=True
)
CourseConfig.__module__ = __name__
CourseConfig.__doc__ = _DOC
