"""The host checks of a pipeline, made before anything is allocated: its stage kinds, each
stage's family and options (the stage is built from its :class:`StageSpec`), the structure (a
sampler first, one stage that decides validity) and the randomizers.

A :class:`~track_gen.pipeline.PipelineSpec` runs them when it is made, against the default
registry. A namespaced kind that registry does not hold (a plugin registered later, or only
in the registry passed to ``build``) defers the checks that need it to the build, which runs
every check again against the program's registry before it allocates anything. A kind without
a namespace that is not registered is refused at once: only built-in kinds have one
(:meth:`~track_gen.pipeline.Registry.register`).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.tunable import Tunable
from .params import check_randomizer
from .registry import Registry, StageEntry
from .stage import Stage

__all__ = ["check_sampler_name", "is_namespaced", "lookup", "plan_stages"]

#: The built-in stage that decides validity in each family, and the preset that adds it.
VALIDATOR = {"track": "validate", "gates": "gate_validate"}
PRESET = {"track": "presets.track", "gates": "presets.gates"}


def is_namespaced(kind: str) -> bool:
    """True for a plugin kind name (``"acme.spiral"``); only built-in kinds have none."""
    return "." in kind.strip(".")


def lookup(registry: Registry, kind: str, owner: str, defer: bool = False) -> StageEntry | None:
    """The entry of ``kind``; ValueError listing the registered kinds when there is none
    (with ``defer``, None for a namespaced kind: it may be registered before the build)."""
    if kind in registry:
        return registry.get(kind)
    if defer and is_namespaced(kind):
        return None
    if is_namespaced(kind):
        hint = (
            "register it first (track_gen.pipeline.register), or build with the registry that "
            "holds it (registry=)"
        )
    else:
        hint = "a kind without a namespace is a built-in one"
    raise ValueError(
        f"{owner}: no stage kind {kind!r} is registered; registered kinds: {registry.kinds()} "
        f"({hint})"
    )


def check_sampler_name(config, registry: Registry, defer: bool = False) -> None:
    """``config.generator`` names a registered sampler of ``registry`` (with ``defer``, a
    namespaced name it does not hold yet passes: the build checks it)."""
    name = config.generator
    if name in registry:
        ok = registry.get(name).cls.role == "sampler"
    else:
        ok = defer and is_namespaced(name)
    if not ok:
        raise ValueError(
            f"{type(config).__name__}.generator = {name!r} is not a registered sampler; "
            f"choose one of {registry.samplers()}"
        )


def _check_family(kind: str, cls: type, family: str) -> None:
    families = getattr(cls, "families", None)
    if families is None or family in families:
        return
    home = families[0]
    raise ValueError(
        f"StageSpec({kind!r}): stage kind {kind!r} works in {' or '.join(families)} pipelines "
        f"only, not in this {family} pipeline: build a {home} pipeline "
        f"({PRESET.get(home, 'PipelineSpec')}(...), family={home!r})"
    )


def _check_validity(spec, classes: list[type]) -> None:
    if any(getattr(cls, "validates", False) for cls in classes):
        return
    family = spec.family
    raise ValueError(
        f"PipelineSpec: no stage of this {family} pipeline decides validity, so every env would "
        f"read valid = 0 with fail_mask = 0: add StageSpec({VALIDATOR[family]!r}) after the "
        f"geometry stages, as {PRESET[family]}(...) does (a plugin stage that writes "
        "result.valid and result.fail_mask declares validates = True)"
    )


def _declarations(stages: list[Stage]) -> dict[str, Tunable]:
    """Public name -> declaration of every dynamic field (what ``generator.params`` holds)."""
    out: dict[str, Tunable] = {}
    for stage in stages:
        for name, t, _ in stage.dynamic_fields():
            if name in out:
                raise ValueError(f"dynamic parameter {name!r} is declared twice")
            out[name] = t
    return out


def plan_stages(spec, registry: Registry, defer: bool = False) -> list[Stage] | None:
    """The stages of ``spec``, each built from its StageSpec (options checked against its
    declarations) and resolved, after every structure check; then each randomizer checked
    against its field. With ``defer`` (a spec being made), a namespaced kind ``registry`` does
    not hold skips what needs it and returns None; the build runs every check again.

    Raises ValueError (TypeError for a wrong kind of option) naming the stage, the option and
    the fix; KeyError for a randomized name that is no dynamic field."""
    entries = [lookup(registry, s.kind, f"StageSpec({s.kind!r})", defer) for s in spec.stages]
    first = entries[0]
    if first is not None and first.cls.role != "sampler":
        raise ValueError(
            f"the first stage must be a sampler; {spec.stages[0].kind!r} is "
            f"not (samplers: {registry.samplers()})"
        )
    for sspec, entry in zip(spec.stages, entries, strict=True):
        if entry is not None:
            _check_family(sspec.kind, entry.cls, spec.family)
    complete = all(entry is not None for entry in entries)
    stages = []
    for sspec, entry in zip(spec.stages, entries, strict=True):
        if entry is None:
            continue
        stage = entry.cls(sspec.name, spec.config, dict(sspec.options))
        waiting = [k for k in stage.resolves() if k not in registry and is_namespaced(k)]
        if defer and waiting:
            complete = False
        else:
            stage.resolve(registry)
        stages.append(stage)
    if not complete:
        return None
    _check_validity(spec, [entry.cls for entry in entries])
    declarations = _declarations(stages)
    for name, lo_hi in spec.randomize:
        check_randomizer(declarations, name, lo_hi)
    return stages


def randomize_items(value) -> list[tuple]:
    """``PipelineSpec.randomize`` (a mapping or a sequence of ``(name, (lo, hi))`` pairs) as
    a list of pairs (TypeError for anything else)."""
    if isinstance(value, Mapping):
        return list(value.items())
    fix = "a mapping or a sequence of ('<stage>.<field>', (lo, hi)) pairs"
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(
            f"PipelineSpec.randomize must be {fix}, got {type(value).__name__} {value!r}"
        )
    items = list(value)
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"PipelineSpec.randomize must be {fix}, got the entry {item!r}")
    return [tuple(item) for item in items]
