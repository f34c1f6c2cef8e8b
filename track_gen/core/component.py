"""The component contract of a course: the base class, declared inputs, their order and the
context that attaches them (re-exported by ``track_gen.tools``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import warp as wp

from .checks import check_bool, check_int
from .exec import check_stream

__all__ = [
    "Component",
    "ComponentContext",
    "InputSpec",
    "buffer_bytes",
    "check_generator",
    "source_family",
    "order_components",
]


def buffer_bytes(buffers) -> int:
    """Bytes of the ``(count, dtype)`` arrays ``buffers`` (a utility's ``buffers(...)``
    list; a count of 0 allocates one element, as ``AllocationBudget.zeros`` does)."""
    return sum(max(int(n), 1) * wp.types.type_size_in_bytes(d) for n, d in buffers)


def _is_dtype(d) -> bool:
    t = wp.types
    try:
        return (
            t.type_is_scalar(d)
            or t.type_is_vector(d)
            or t.type_is_quaternion(d)
            or t.type_is_matrix(d)
            or t.type_is_transformation(d)
        )
    except TypeError:
        return False


#: Most entries per env of one input (``InputSpec.slots``).
MAX_SLOTS = 1024


@dataclass(frozen=True)
class InputSpec:
    """An input array a component reads every step, bound with ``course.bind(name=array)``.

    Attributes:
        name: the bind keyword (``"position"``); one array goes to every component declaring
            the name.
        dtype: Warp dtype of the array (``wp.vec3f``).
        slots: entries per env: the array is ``[E * slots]``.
        default: another input's name that routes here when this one is not bound
            (``box_position`` defaults to ``position`` at one box per env); an explicit
            binding wins over the route.
        required: ``step()`` refuses to run while a required input is unbound.
        doc: meaning and unit.
    """

    name: str
    dtype: Any
    slots: int = 1
    default: str | None = None
    required: bool = True
    doc: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"InputSpec.name must be a non-empty str, got {self.name!r}")
        if not _is_dtype(self.dtype):
            raise TypeError(
                f"InputSpec({self.name!r}).dtype must be a Warp dtype, got {self.dtype!r}"
            )
        object.__setattr__(
            self, "slots", check_int(f"InputSpec({self.name!r}).slots", self.slots, 1, MAX_SLOTS)
        )
        if self.default is not None and (not isinstance(self.default, str) or not self.default):
            raise TypeError(f"InputSpec({self.name!r}).default must be a str name or None")
        object.__setattr__(
            self, "required", check_bool(f"InputSpec({self.name!r}).required", self.required)
        )


class Component:
    """Base of a course component: a tool that derives data from the course and answers per
    step (progress, collision, ...). Subclass it and override what you need.

    Class attributes (instances may override ``name``, ``after`` and ``source`` through the
    constructor):
        name: unique name in a course; third-party components use a namespaced name
            (``"acme.lookahead"``). The built-in names back the course attributes.
        after: names of components this one runs after (in every phase but ``reset``).
        source: name of the component whose result this one reads (implies ``after``).
        INPUTS: the :class:`InputSpec` s this component reads.
        requires: names of components that must be in the course.
        families: the generator families it attaches to (``("track",)``, ``("gates",)``), or
            None for any: a preset checks it (:meth:`check_family`) before it builds a
            generator.

    Lifecycle (all hooks receive the :class:`ComponentContext`):
        attach(ctx): allocate buffers once (construction, outside any capture).
        bind(arrays) -> on_bind(arrays): the routed input arrays (host call).
        on_generate(ctx, mask): refresh what derives from the course for the envs with
            ``mask[e] != 0`` (None: all envs); unmasked envs' data must stay bitwise unchanged.
        step(ctx): per sim step; return this component's result. A component that overrides
            ``step`` is an entry of ``StepResult`` (``res[name]``).
        reset(ctx, mask): reset per-env runtime state of the masked envs (None: all).

    Every hook but ``attach``/``bind`` only launches kernels: no allocation, no host sync.

    Memory (counted before anything is built):
        planned_bytes(layout, config) -> int: the bytes ``attach`` will allocate for a
            generator of ``layout`` (the :class:`~track_gen.engine.stage.Layout` it will
            have: ``num_envs``, ``N_max``, ``num_points``, ``device``, ``family``) built from
            ``config`` (its ``TrackGenConfig`` / ``GateGenConfig``). A course adds every
            component's planned bytes to the generator's and refuses a total past the
            device's free memory before the first allocation. Default 0: a component that
            does not declare it is counted only as it allocates. A component with a
            ``source`` finds that component in ``planned_source`` (set by the course before
            the call; None otherwise).
    """

    name: ClassVar[str] = ""
    after: ClassVar[tuple[str, ...]] = ()
    source: ClassVar[str | None] = None
    INPUTS: ClassVar[tuple[InputSpec, ...]] = ()
    requires: ClassVar[tuple[str, ...]] = ()
    families: ClassVar[tuple[str, ...] | None] = None

    def __init__(self, *, name: str | None = None, after=None, source: str | None = None):
        if name is not None:
            if not isinstance(name, str) or not name:
                raise TypeError(f"component name must be a non-empty str, got {name!r}")
            self.name = name
        if after is not None:
            if isinstance(after, (str, bytes)) or not hasattr(after, "__iter__"):
                raise TypeError(f"after must be a sequence of component names, got {after!r}")
            after = tuple(after)
            if not all(isinstance(a, str) and a for a in after):
                raise TypeError(f"after must hold non-empty str names, got {after!r}")
            self.after = after
        if source is not None:
            if not isinstance(source, str) or not source:
                raise TypeError(f"source must be a non-empty str name, got {source!r}")
            self.source = source
        self.result = None
        self.utility = None
        self.bound: dict[str, wp.array] = {}
        self._ctx: ComponentContext | None = None
        self.planned_source = None

    # --- hooks ---------------------------------------------------------------------------
    def attach(self, ctx: ComponentContext) -> None:
        """Allocate buffers (called once by the course, outside any capture)."""

    def bind(self, arrays: dict) -> None:
        """Receive the routed input arrays: store them, then call :meth:`on_bind`. When
        ``on_bind`` raises, the previous arrays are restored and the error propagates."""
        previous = self.bound
        self.bound = dict(arrays)
        try:
            self.on_bind(self.bound)
        except BaseException:
            self.bound = previous
            raise

    def on_bind(self, arrays: dict) -> None:
        """React to a new binding (e.g. hand the arrays to a utility)."""

    def on_generate(self, ctx: ComponentContext, mask) -> None:
        """Refresh derived data for the masked envs (None: all)."""

    def step(self, ctx: ComponentContext):
        """Per-step work; returns the component's result."""
        return None

    def reset(self, ctx: ComponentContext, mask) -> None:
        """Reset runtime state of the masked envs (None: all)."""

    def planned_bytes(self, layout, config) -> int:
        """Bytes :meth:`attach` will allocate for a generator of ``layout`` built from
        ``config`` (see the class docstring); default 0 (counted only as it allocates)."""
        return 0

    # --- helpers -------------------------------------------------------------------------
    def check_family(self, family: str) -> None:
        """Raise TypeError when this component cannot attach to a ``family`` generator
        (``"track"`` or ``"gates"``; see ``families``)."""
        if self.families is not None and family not in self.families:
            raise TypeError(
                f"{self!r} attaches to {' or '.join(self.families)} courses only, not to a "
                f"{family} course"
            )

    @property
    def steps(self) -> bool:
        """True when the component overrides :meth:`step` (an entry of ``StepResult``)."""
        return type(self).step is not Component.step

    @property
    def attached(self) -> bool:
        return self._ctx is not None

    def reads(self) -> tuple[str, ...]:
        """Names this component runs after: ``after`` plus ``source``."""
        return tuple(self.after) + ((self.source,) if self.source else ())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


_HOOKS = ("attach", "bind", "on_generate", "step", "reset")


def _check_component_shape(comp) -> None:
    missing = [h for h in _HOOKS if not callable(getattr(comp, h, None))]
    if missing:
        raise TypeError(
            f"{comp!r} lacks {missing}: subclass track_gen.tools.Component for the defaults"
        )
    name = getattr(comp, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"component {comp!r}: name must be a non-empty str, got {name!r}")


def order_components(components) -> list:
    """Stable topological order of ``components`` by their ``after`` and ``source`` names.

    An already-ordered list is kept as is; otherwise a component moves just behind what it
    reads. Raises TypeError / ValueError for a bad name, a duplicate, an attached component,
    an unknown read, a missing ``requires``, one input declared with two (dtype, slots), or a
    cycle, before anything is attached.
    """
    comps = list(components)
    for c in comps:
        _check_component_shape(c)
    names = [c.name for c in comps]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"two components named {dup}: names are unique within a course")
    declared: dict[str, tuple] = {}
    for c in comps:
        if getattr(c, "_ctx", None) is not None:
            raise ValueError(
                f"{c!r} is already attached to another course or context: build a new instance"
            )
        for r in c.reads():
            if r not in names:
                raise ValueError(
                    f"{c!r} runs after / reads {r!r}, which is not a component of this course "
                    f"(components: {names})"
                )
        for r in getattr(c, "requires", ()):
            if r not in names:
                raise ValueError(f"{c!r} requires a component named {r!r} (components: {names})")
        for spec in getattr(c, "INPUTS", ()):
            have = declared.setdefault(spec.name, (spec.dtype, spec.slots, c))
            if (have[0], have[1]) != (spec.dtype, spec.slots):
                raise ValueError(
                    f"input {spec.name!r} is declared twice with different (dtype, slots): "
                    f"({wp.types.type_repr(have[0])}, {have[1]}) by {have[2]!r} and "
                    f"({wp.types.type_repr(spec.dtype)}, {spec.slots}) by {c!r}"
                )
    done: list = []
    placed: set[str] = set()
    pending = list(comps)
    while pending:
        for c in pending:
            if all(r in placed for r in c.reads()):
                done.append(c)
                placed.add(c.name)
                pending.remove(c)
                break
        else:
            raise ValueError(
                f"components {[c.name for c in pending]} form a cycle of after / source names"
            )
    return done


def source_family(source) -> str | None:
    """``"track"`` / ``"gates"`` of a config (its class's ``family``), a spec or a built
    generator (None: unknown)."""
    family = getattr(source, "family", None)
    if isinstance(family, str):
        return family
    spec = getattr(source, "spec", None)
    family = getattr(spec, "family", None)
    if family is None:
        family = getattr(getattr(source, "layout", None), "family", None)
    return family


def _describes_a_generator(source) -> bool:
    """True for what builds a generator rather than a built one: a generator config (a class
    assembled from Tunable declarations) or a pipeline spec (stages and a config)."""
    if hasattr(type(source), "__tunables__"):
        return True
    return hasattr(source, "stages") and hasattr(source, "config") and not hasattr(source, "result")


def check_generator(generator, name: str = "Course(generator, ...)") -> None:
    """A built generator's surface (``result``, ``layout``, ``enqueue``, ``inputs``), checked
    before a course uses it: TypeError naming what is missing (a config or a spec names the
    preset that builds one)."""
    if _describes_a_generator(generator):
        family = source_family(generator)
        preset = "Course.gates(...)" if family == "gates" else "Course.track(...)"
        raise TypeError(
            f"{name} takes a built generator, got a {type(generator).__name__}: use {preset} "
            "to build one (or build the generator yourself and pass it with your components)"
        )
    kind = type(generator).__name__
    fix = "pass a TrackGenerator, a GateGenerator or a Program"
    for attr in ("result", "layout", "enqueue", "inputs"):
        if not hasattr(generator, attr):
            raise TypeError(f"{name}: {kind} lacks {attr!r}; {fix}")
    layout = generator.layout
    if not isinstance(getattr(layout, "device", None), wp.Device) or not isinstance(
        getattr(layout, "num_envs", None), int
    ):
        raise TypeError(f"{name}: {kind}.layout lacks a Warp device and an int num_envs; {fix}")
    for attr in ("valid", "generation"):
        if not isinstance(getattr(generator.result, attr, None), wp.array):
            raise TypeError(f"{name}: {kind}.result lacks the wp.array {attr!r}; {fix}")
    if not callable(generator.enqueue):
        raise TypeError(f"{name}: {kind}.enqueue is not callable; {fix}")
    if not callable(getattr(generator.inputs, "get", None)) or not isinstance(
        generator.inputs.get("regen_mask"), wp.array
    ):
        raise TypeError(f"{name}: {kind}.inputs lacks the wp.array 'regen_mask'; {fix}")


class ComponentContext:
    """What components see: the generator, its layout and device, the course's stream and the
    components attached so far (by name).

    Attributes:
        generator: the course's generator (``result``, ``layout``, ``enqueue``, ...).
        layout: ``generator.layout`` (``num_envs``, ``N_max``, ``device``).
        device: the Warp device.
        stream: the stream the course launches on (None: the device's current stream).
        components: name -> attached component, in execution order.
        inputs: name -> :class:`InputSpec` of every declared input.
        course: a weak reference to the course this context serves (None for a context
            used on its own); the generator accepts ``enqueue`` calls carrying it.

    ``ComponentContext(generator, stream=None)`` checks both first: a built generator's
    surface (:func:`check_generator`: TypeError naming what is missing, or the preset for a
    config or spec) and ``stream`` (None, or a ``wp.Stream`` of the generator's CUDA device).
    """

    def __init__(self, generator, stream=None):
        check_generator(generator, "ComponentContext(generator)")
        check_stream(stream, generator.layout.device)
        self.generator = generator
        self.layout = generator.layout
        self.device = generator.layout.device
        self.stream = stream
        self.components: dict[str, Component] = {}
        self.inputs: dict[str, InputSpec] = {}
        self.course = None

    @property
    def num_envs(self) -> int:
        return self.layout.num_envs

    def get(self, name: str):
        """The attached component ``name`` (KeyError listing the names)."""
        try:
            return self.components[name]
        except KeyError:
            raise KeyError(f"no component {name!r}; components: {list(self.components)}") from None

    def check(self, comp: Component, planned: list[str]) -> None:
        """Every check :meth:`add` makes, without attaching (``planned``: the course's names)."""
        _check_component_shape(comp)
        if isinstance(planned, (str, bytes)) or not isinstance(planned, (list, tuple)):
            raise TypeError(
                f"planned must be a list of component names, got {type(planned).__name__}"
            )
        for r in comp.reads():
            if r not in planned:
                raise ValueError(f"{comp!r} reads {r!r}, which is not a component of this course")
        for r in comp.requires:
            if r not in planned:
                raise ValueError(
                    f"{comp!r} requires a component named {r!r} (components: {planned})"
                )
        for spec in getattr(comp, "INPUTS", ()):
            have = self.inputs.get(spec.name)
            if have is not None and (have.dtype != spec.dtype or have.slots != spec.slots):
                raise ValueError(
                    f"input {spec.name!r} is declared twice with different (dtype, slots): "
                    f"({wp.types.type_repr(have.dtype)}, {have.slots}) and "
                    f"({wp.types.type_repr(spec.dtype)}, {spec.slots}) ({comp!r})"
                )

    def add(self, comp: Component, planned: list[str] | None = None) -> Component:
        """Check ``comp`` (its hooks and name, reads, requires, input conflicts, not attached
        elsewhere), then attach it."""
        _check_component_shape(comp)
        if getattr(comp, "_ctx", None) is not None:
            raise ValueError(
                f"{comp!r} is already attached to another course or context: build a new instance"
            )
        planned = planned if planned is not None else [*self.components, comp.name]
        self.check(comp, planned)
        for spec in getattr(comp, "INPUTS", ()):
            self.inputs.setdefault(spec.name, spec)
        comp.attach(self)
        comp._ctx = self
        self.components[comp.name] = comp
        return comp

    def detach_all(self) -> None:
        """Release every component (after a refused construction)."""
        for c in self.components.values():
            c._ctx = None
        self.components.clear()
        self.inputs.clear()
