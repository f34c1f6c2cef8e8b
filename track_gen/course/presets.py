"""The component lists of the course presets, with every check made before building."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from ..config import GateGenConfig, TrackGenConfig
from ..core.budget import AllocationBudget
from ..core.checks import check_bool
from ..core.component import Component, check_generator, order_components, source_family
from ..core.exec import check_stream
from ..core.tunable import Tunable
from ..engine.plan import check_sampler_name
from ..engine.program import plan_program, program_layout, resolve_device
from ..engine.registry import default_registry
from ..engine.spec import PipelineSpec
from ..generators import GateGenerator, TrackGenerator
from ..seeds import SeedState
from ..tools.band_collision import MAX_BOXES, METHOD, SDF_RESOLUTION, BandCollision
from ..tools.checkpoints import MAX_CHECKPOINTS, SPACING, Checkpoints, GateCheckpoints
from ..tools.course_line import SAMPLES_PER_GATE, CenterlineFromGates
from ..tools.gate_collision import POST_RADIUS, DiscCollision, FrameCollision
from ..tools.heightfield import RESOLUTION, HeightFieldBake
from ..tools.localizer import WARM_WINDOW, Localizer
from ..tools.min_time import MinTime
from ..tools.progress import Progress
from ..tools.racing_line import RacingLine
from .config import FRAME_FIELDS, CourseConfig, check_min_time, check_racing_line
from .rules import check_checkpoint_capacity, check_gate_width

__all__ = [
    "COURSE_BUDGET_HINT",
    "build_source",
    "check_attach_budget",
    "check_course_budget",
    "check_source",
    "from_config",
    "gates_components",
    "track_components",
]


#: The labels of the surfaces whose keywords the declarations carry (``Tunable.aliases``).
TRACK, GATES, CONFIG = "Course.track", "Course.gates", "CourseConfig"

#: What a course's budget refusal suggests.
COURSE_BUDGET_HINT = (
    "lower num_envs or the components' sizes (sdf_resolution, heightfield resolution, "
    "max_checkpoints, max_props, max_boxes)"
)


def course_mask_bytes(num_envs: int) -> int:
    """Bytes of the course's own arrays: ``reset_mask`` and a zero mask (int32 ``[E]``) and
    its on-device flag (int32 ``[1]``)."""
    return 4 * (2 * int(num_envs) + 1)


def planned_component_bytes(components, layout, config) -> list[tuple[object, int]]:
    """``(component, bytes)`` of each component's ``planned_bytes(layout, config)`` (0 for one
    that does not declare it); a component with a ``source`` finds it in ``planned_source``
    first."""
    peers = {getattr(c, "name", None): c for c in components}
    out = []
    for comp in components:
        source = getattr(comp, "source", None)
        if source is not None and hasattr(comp, "planned_source"):
            comp.planned_source = peers.get(source)
        planned = getattr(comp, "planned_bytes", None)
        out.append((comp, int(planned(layout, config)) if callable(planned) else 0))
    return out


def _take_components(budget, layout, config, components) -> None:
    """Count the components' planned bytes and the course's masks through ``budget``
    (ValueError naming the component that tips the total past it)."""
    for comp, nbytes in planned_component_bytes(components, layout, config):
        what = (
            f"component {getattr(comp, 'name', '?')!r} ({type(comp).__name__}, "
            f"{nbytes / 2**30:.2f} GiB planned)"
        )
        budget.take_bytes(nbytes, what)
    budget.take_bytes(course_mask_bytes(layout.num_envs), "the course's masks")


def check_course_budget(source, family, components) -> PipelineSpec | None:
    """A course built from a config or a spec: its generator's bytes (counted without building
    it: :func:`~track_gen.engine.program.plan_program`) plus every component's planned bytes
    and the course's masks, against the device's budget, before anything is allocated
    (ValueError naming the component, or the generator, that tips the total). Returns the
    spec it counted (a config's standard pipeline, made once: :func:`build_source` builds the
    generator from it), or None for a built generator, whose course
    :func:`check_attach_budget` checks instead."""
    if not isinstance(source, (TrackGenConfig, GateGenConfig, PipelineSpec)):
        return None
    spec = source
    if not isinstance(source, PipelineSpec):
        check_sampler_name(source, default_registry())
        spec = _generator_class(family)._pipeline(source)
    generator_bytes = plan_program(spec)  # the generator's own refusal, when alone too large
    layout = program_layout(spec)
    budget = AllocationBudget(layout.device, COURSE_BUDGET_HINT, owner="this course's")
    budget.take_bytes(generator_bytes, f"the generator ({generator_bytes / 2**30:.2f} GiB)")
    _take_components(budget, layout, spec.config, components)
    return spec


def _generator_class(family: str) -> type:
    return GateGenerator if family == "gates" else TrackGenerator


def check_attach_budget(generator, components) -> None:
    """A course on a built generator: its components' planned bytes and the course's masks
    against what the device has left now, before the first component attaches."""
    layout = generator.layout
    config = getattr(generator, "config", None)
    if config is None:
        config = getattr(getattr(generator, "spec", None), "config", None)
    budget = AllocationBudget(layout.device, COURSE_BUDGET_HINT, owner="this course's")
    _take_components(budget, layout, config, components)


def _check_sequence(name: str, value) -> list:
    if (
        isinstance(value, Component)
        or isinstance(value, (str, bytes))
        or not isinstance(value, Sequence)
    ):
        raise TypeError(
            f"{name} must be a sequence of components (a list or tuple), got {type(value).__name__}"
        )
    return list(value)


def _collision_component(collision):
    """A component passed in the ``collision`` slot, which must be named ``"collision"``."""
    if getattr(collision, "name", None) != "collision":
        raise ValueError(
            f"the collision slot takes a component named 'collision', got "
            f"{getattr(collision, 'name', None)!r}: put a collision under another name in extra="
        )
    return collision


def _is_component(value) -> bool:
    return isinstance(value, Component) or (
        not isinstance(value, (str, bytes, numbers.Number)) and hasattr(value, "step")
    )


def track_components(
    *, checkpoint_spacing, collision=None, max_checkpoints=None, racing_line=None, extra=()
):
    """``checkpoints``, ``progress``, ``collision`` (when given), ``racing_line`` (when
    given: ``tools.RacingLine(**racing_line)``), then ``extra``, ordered.

    Raises before anything is built: ``checkpoint_spacing`` must be a number in the range of
    ``tools.checkpoints.SPACING``; ``racing_line`` None or a mapping of ``tools.RacingLine``
    keyword arguments (:func:`~track_gen.course.config.check_racing_line`);
    ``collision`` None, ``"segments"``, ``"sdf"`` or a component named ``"collision"`` (a
    bool or another string is refused; a collision under another name goes in ``extra``);
    ``max_checkpoints`` None / ``"auto"`` or an int >= 3; ``extra`` a sequence; duplicate
    names, unknown reads, cycles and attached components.
    """
    SPACING.check(checkpoint_spacing, SPACING.keyword(TRACK))
    if isinstance(max_checkpoints, str) and max_checkpoints == "auto":
        max_checkpoints = None
    MAX_CHECKPOINTS.check(max_checkpoints, MAX_CHECKPOINTS.keyword(TRACK))
    racing_line = check_racing_line(racing_line, "racing_line")
    extra = _check_sequence("extra", extra)
    checkpoints = {
        SPACING.keyword("Checkpoints"): float(checkpoint_spacing),
        MAX_CHECKPOINTS.keyword("Checkpoints"): max_checkpoints or "auto",
    }
    comps = [Checkpoints(**checkpoints), Progress()]
    if collision is None:
        pass
    elif isinstance(collision, str):
        if collision not in METHOD.choices:
            raise ValueError(
                f"collision = {collision!r} must be one of {METHOD.choices}, None or a component"
            )
        comps.append(BandCollision(**{METHOD.keyword("BandCollision"): collision}))
    elif _is_component(collision):
        comps.append(_collision_component(collision))
    else:
        raise TypeError(
            f"collision = {collision!r}: pass None, 'segments', 'sdf' or a "
            "component named 'collision'"
        )
    if racing_line is not None:
        comps.append(RacingLine(racing_line))
    return _ordered(comps, extra)


def _ordered(comps: list, extra: list) -> list:
    """``order_components(comps + extra)``, its errors naming the argument they come from."""
    try:
        return order_components(comps + extra)
    except (TypeError, ValueError) as err:
        where = "extra" if extra else "collision"
        raise type(err)(f"{where}: {err}") from None


def gates_components(
    *, collision=None, samples_per_gate=8, localize_window=None, min_time=None, extra=()
):
    """``checkpoints``, ``centerline``, ``progress``, ``collision`` (when given),
    ``localizer``, ``min_time`` (when given: ``tools.MinTime(**min_time)``), then ``extra``,
    ordered.

    Raises before anything is built: ``collision`` None, a post radius (a number in the range
    of ``tools.gate_collision.POST_RADIUS``: > 0) or a component named ``"collision"`` (a
    bool or a string is refused); ``samples_per_gate`` an int >= 2
    (``tools.course_line.SAMPLES_PER_GATE``); ``localize_window`` None or an int >= 1
    (``tools.localizer.WARM_WINDOW``); ``min_time`` None or a mapping of ``tools.MinTime``
    keyword arguments (:func:`~track_gen.course.config.check_min_time`); ``extra`` a
    sequence; duplicate names, unknown reads, cycles and attached components.
    """
    samples_per_gate = SAMPLES_PER_GATE.check(samples_per_gate, SAMPLES_PER_GATE.keyword(GATES))
    localize_window = WARM_WINDOW.check(localize_window, WARM_WINDOW.keyword(GATES))
    min_time = check_min_time(min_time, "min_time")
    extra = _check_sequence("extra", extra)
    slot = []
    if collision is None:
        pass
    elif isinstance(collision, (bool, str, bytes)):
        raise TypeError(
            f"collision = {collision!r}: pass None, a post radius (a number > 0) or a "
            "component named 'collision' (tools.FrameCollision(...))"
        )
    elif isinstance(collision, numbers.Real):
        radius = POST_RADIUS.check(collision, f"{POST_RADIUS.keyword(GATES)} (the post radius)")
        slot.append(DiscCollision(**{POST_RADIUS.keyword("DiscCollision"): radius}))
    elif _is_component(collision):
        slot.append(_collision_component(collision))
    else:
        raise TypeError(
            f"collision = {collision!r}: pass None, a post radius (a number > 0) or a "
            "component named 'collision' (tools.FrameCollision(...))"
        )
    line = {SAMPLES_PER_GATE.keyword("CenterlineFromGates"): samples_per_gate}
    localizer = {WARM_WINDOW.keyword("Localizer"): localize_window, "source": "centerline"}
    comps = [
        GateCheckpoints(),
        CenterlineFromGates(**line),
        Progress(),
        *slot,
        Localizer(**localizer),
    ]
    if min_time is not None:
        comps.append(MinTime(**min_time))
    return _ordered(comps, extra)


def check_source(source, family, seeds, stream, prepare, components) -> None:
    """Every rule of a preset's source, made before anything is built: ``prepare`` a bool;
    the source's kind and family; ``seeds=`` / ``stream=`` (checked as the generator will
    check them) only with a config or a spec; the gate-width rule (gates); and each
    component's generator family (:meth:`Component.check_family`)."""
    check_bool("prepare", prepare)
    other = "Course.gates(...)" if family == "track" else "Course.track(...)"
    if isinstance(source, (TrackGenConfig, GateGenConfig, PipelineSpec)):
        src_family = source_family(source)
        if src_family != family:
            raise TypeError(f"source: a {src_family} source goes to {other}")
        config = source.config if isinstance(source, PipelineSpec) else source
        device = resolve_device(config)
        SeedState.check(seeds, config.num_envs, device)
        check_stream(stream, device)
    elif hasattr(source, "layout") and hasattr(source, "enqueue"):
        if seeds is not None or stream is not None:
            raise TypeError(
                "seeds= and stream= configure the generator the preset builds; "
                "a built generator (source) already has them"
            )
        check_generator(source, "source")
        src_family = source_family(source) or family
        if src_family != family:
            raise TypeError(f"source: a {src_family} generator goes to {other}")
    else:
        raise TypeError(
            "source must be a config, a PipelineSpec or a built generator, got "
            f"{type(source).__name__}"
        )
    if family == "gates":
        check_gate_width(source)
    elif isinstance(source, (TrackGenConfig, PipelineSpec)):
        config = source.config if isinstance(source, PipelineSpec) else source
        for comp in components:
            if isinstance(comp, Checkpoints):
                check_checkpoint_capacity(config, comp.spacing, comp.max_checkpoints)
    for comp in components:
        check = getattr(comp, "check_family", None)
        if callable(check):
            check(family)


def build_source(source, family, seeds, stream, spec: PipelineSpec | None = None):
    """The generator a preset drives: built from ``spec`` (the pipeline
    :func:`check_course_budget` counted for a config or spec source), or ``source`` used as
    is (a built generator; the source was checked by :func:`check_source`)."""
    if spec is not None:
        return _generator_class(family)(spec, seeds=seeds, stream=stream)
    if isinstance(source, (TrackGenConfig, GateGenConfig, PipelineSpec)):
        return _generator_class(family)(source, seeds=seeds, stream=stream)
    return source


def _options(config, surface: str, *tunables: Tunable) -> dict:
    """``{keyword: value}`` of each declaration for ``surface`` (a label: ``"Course.track"``,
    ``"BandCollision"``): its keyword there (:meth:`Tunable.keyword`, the alias the declaration
    carries) and the value of its ``config`` field (its keyword for ``CourseConfig``)."""
    return {t.keyword(surface): getattr(config, t.keyword(CONFIG)) for t in tunables}


def from_config(config):
    """The generator and components a :class:`CourseConfig` describes (the preset's rules);
    every keyword comes from the fields' declarations, and the generator is built from the
    pipeline :func:`check_course_budget` counted (made and planned once there)."""
    if not isinstance(config, CourseConfig):
        raise TypeError(f"config must be a CourseConfig, got {type(config).__name__}")
    if config.mode == "gates":
        options = _options(config, GATES, POST_RADIUS, SAMPLES_PER_GATE, WARM_WINDOW)
        frames = getattr(config, FRAME_FIELDS[0].keyword(CONFIG))
        if frames is not None:  # (thickness, depth, agent_radius), checked by CourseConfig
            keywords = (t.keyword("FrameCollision") for t in FRAME_FIELDS)
            frame = FrameCollision(**dict(zip(keywords, frames, strict=True)))
            options[POST_RADIUS.keyword(GATES)] = frame
        options["min_time"] = config.min_time  # checked by CourseConfig, every key
        components = gates_components(**options)  # CourseConfig checked the gate-width rule
        spec = check_course_budget(config.gen, "gates", components)
        return build_source(config.gen, "gates", config.seeds, None, spec), components

    collision = None
    if getattr(config, METHOD.keyword(CONFIG)) is not None:
        band = _options(config, "BandCollision", METHOD, MAX_BOXES, SDF_RESOLUTION)
        sdf = SDF_RESOLUTION.keyword("BandCollision")
        if band[sdf] is None:  # CourseConfig's None: the component's own default
            band[sdf] = SDF_RESOLUTION.default
        collision = BandCollision(**band)
    extra = []
    heightfield = _options(config, "HeightFieldBake", RESOLUTION)
    if heightfield[RESOLUTION.keyword("HeightFieldBake")] is not None:
        extra.append(HeightFieldBake(**heightfield))
    options = _options(config, TRACK, SPACING, MAX_CHECKPOINTS)
    options[METHOD.keyword(TRACK)] = collision
    options["racing_line"] = config.racing_line  # checked by CourseConfig, every key
    components = track_components(**options, extra=extra)
    spec = check_course_budget(config.gen, "track", components)
    return build_source(config.gen, "track", config.seeds, None, spec), components
