"""Ready-made pipeline specs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..config import GateGenConfig, TrackGenConfig
from ..engine.plan import check_sampler_name
from ..engine.registry import default_registry
from ..engine.spec import PipelineSpec, StageSpec
from ..stages.circuit import preset_fields

__all__ = ["circuit", "gates", "gates_from_config", "track", "track_from_config", "track_mix"]


def track_from_config(config: TrackGenConfig, *, sampler: StageSpec | None = None) -> PipelineSpec:
    """The standard track pipeline for ``config``.

    Stages: ``<generator>`` (sampler) -> ``road_width`` (when ``width_variation > 0``) ->
    ``resample`` -> ``relax`` (when ``relax_enable``) -> ``inflate`` -> ``validate`` ->
    ``elevate`` (when ``z_profile`` is not ``"flat"``: a flat config's pipeline is exactly the
    one without elevation).

    Args:
        config: a :class:`~track_gen.TrackGenConfig`.
        sampler: the first stage with its options (``StageSpec("mix", options=...)``);
            default ``StageSpec(config.generator)``.

    Raises ValueError when ``config.generator`` is not a registered sampler (a namespaced
    name the default registry does not hold yet is checked when the generator is built).
    """
    check_sampler_name(config, default_registry(), defer=True)
    if sampler is not None and not isinstance(sampler, StageSpec):
        raise TypeError(f"sampler must be a StageSpec or None, got {type(sampler).__name__}")
    stages = [sampler if sampler is not None else StageSpec(config.generator)]
    if config.width_variation > 0:
        stages.append(StageSpec("road_width"))
    stages.append(StageSpec("resample"))
    if config.relax_enable:
        stages.append(StageSpec("relax"))
    stages += [StageSpec("inflate"), StageSpec("validate")]
    if config.z_profile != "flat":
        stages.append(StageSpec("elevate"))
    return PipelineSpec(config=config, stages=tuple(stages), family="track")


def track(**config_fields) -> PipelineSpec:
    """A track pipeline from :class:`~track_gen.TrackGenConfig` fields.

    Example:
        ``presets.track(num_envs=64, device="cpu", generator="polar")``
    """

    return track_from_config(TrackGenConfig(**config_fields))


def circuit(num_envs: int, **config_fields: Any) -> PipelineSpec:
    """Circuits in metres with the structure of real ones (``generator="circuit"``).

    Every length of the result is in metres (``Track.unit == "m"``), and so is everything
    computed from it (racing line m and m/s, sensors, course descriptors, exports). Defaults
    chosen here: ``spacing`` 4 m beads, ``N_max`` room for the longest lap (``length_max``),
    ``num_points`` a power of two with the sampler's points at most 2 m apart on that lap,
    ``half_width`` the widest half width the width fields allow (``road_width_max``,
    ``road_narrowing``, ``start_widening``: it caps every bead's width and sizes the course
    tools), ``relax_enable=False`` (the layout keeps its clearance by construction) and
    ``unit="m"``.

    Args:
        num_envs: batch size E.
        config_fields: any :class:`~track_gen.TrackGenConfig` field, the circuit's own
            (``length_min``, ``road_width_max``, ``corner_count_max``, ...) included; the
            derived defaults above follow the ones given.

    Example:
        ``presets.circuit(1024, device="cuda:0", length_max=5000.0)``
    """
    if "generator" in config_fields:
        raise TypeError(
            "presets.circuit sets generator='circuit' itself; use presets.track(generator=...) "
            "for another sampler"
        )
    return track_from_config(TrackGenConfig(**preset_fields(num_envs, **config_fields)))


def track_mix(
    generators: Mapping[str, float] | Sequence[str], **config_fields: Any
) -> PipelineSpec:
    """A track pipeline whose envs each draw their sampler from ``generators``.

    Args:
        generators: ``{name: weight}`` (weights > 0, any scale) or a sequence of names (equal
            weights), e.g. ``{"bezier": 2, "polar": 1}``. Each env rebuilt by a regeneration
            picks one from a stream of its effective seed: part of what (seed, epoch) decides.
        config_fields: :class:`~track_gen.TrackGenConfig` fields (``generator`` is set to
            ``"mix"``).

    Example:
        ``presets.track_mix({"bezier": 1, "polar": 1}, num_envs=256).with_randomize(
        {"bezier.rad": (0.2, 0.6)})``
    """

    if (
        generators is None
        or isinstance(generators, (str, bytes))
        or not hasattr(generators, "__iter__")
    ):
        raise TypeError(
            "track_mix: generators must be a mapping {name: weight} or a sequence of names, "
            f"got {type(generators).__name__} {generators!r}"
        )
    if "generator" in config_fields:
        raise TypeError(
            "track_mix sets generator='mix' itself: pass the samplers in generators "
            f"(got generator={config_fields['generator']!r})"
        )
    config = TrackGenConfig(**config_fields, generator="mix")
    pairs = (
        generators.items() if isinstance(generators, Mapping) else ((g, 1.0) for g in generators)
    )
    items = tuple((str(g) if isinstance(g, str) else g, w) for g, w in pairs)  # np.str_ -> str
    # the mix stage checks the names, weights and child options (mix.py) with the spec
    return track_from_config(config, sampler=StageSpec("mix", options={"generators": items}))


def gates_from_config(config) -> PipelineSpec:
    """The standard gate pipeline for ``config``.

    Stages: ``<generator>`` (the same sampler stages as tracks) -> ``gate_anchors`` ->
    ``gate_frames`` -> ``gate_validate``. In a gate pipeline the bezier, hull, polar and
    checkpoint samplers write the corner-cut polygon of their knots (``docs/gates.md``, "The
    gate loop"), the others a loop at ``config``'s resolution: a ``GateGenConfig`` defaults
    to the coarse gate resolution (``GATE_RESOLUTION``: 32 loop points, 2 per spline segment)
    unless ``num_points`` / ``num_points_per_segment`` are passed.
    """
    check_sampler_name(config, default_registry(), defer=True)
    stages = (
        StageSpec(config.generator),
        StageSpec("gate_anchors"),
        StageSpec("gate_frames"),
        StageSpec("gate_validate"),
    )
    return PipelineSpec(config=config, stages=stages, family="gates")


def gates(**config_fields) -> PipelineSpec:
    """A gate-course pipeline from :class:`~track_gen.GateGenConfig` fields.

    ``gate_width`` defaults to 0 (point gates): pass one, or randomize
    ``"gate_frames.gate_width"``. The gates follow the sampler's knot loop or its loop at gate
    resolution (``docs/gates.md``, "The gate loop").

    Example:
        ``presets.gates(num_envs=64, device="cpu", gate_width=0.1)``
    """

    return gates_from_config(GateGenConfig(**config_fields))
