"""The Course: a generator plus ordered components, one bind, one regeneration body."""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Sequence
from types import MappingProxyType

import warp as wp

from ..core.budget import AllocationBudget
from ..core.checks import check_array, check_bool, check_mask
from ..core.component import Component, ComponentContext, order_components
from ..core.errors import CaptureError, NotCapturableError, RebindAfterCaptureWarning
from ..core.exec import (
    REGISTERED_KEEP,
    REGISTERED_STREAM,
    GraphCache,
    UseGuard,
    capture_stream,
    check_stream,
    is_capturing,
    load_masked,
    record_masked,
    require_not_capturing,
    stream_scope,
    use_conditional,
)
from .config import CourseConfig
from .presets import (
    COURSE_BUDGET_HINT,
    build_source,
    check_attach_budget,
    check_course_budget,
    check_generator,
    check_source,
    from_config,
    gates_components,
    track_components,
)
from .result import StepResult

__all__ = ["Course"]

#: Graph variants a course records besides ``course.graph``; more run eagerly.
MAX_COURSE_GRAPHS = 16
#: Input names every course accepts (ignored when no component declares them).
COMMON_INPUTS = ("position", "orientation", "half_extents", "box_position")


class Course:
    """A generator plus an ordered list of components (``track_gen.tools``).

    ``Course(generator, components=(), *, stream=None, prepare=True)``: the course orders the
    components by their ``after``/``source`` names, attaches them, binds every input at once
    (:meth:`bind`), answers every step (:meth:`step`), resets per env (:meth:`reset`) and runs
    the regeneration as ONE body (:meth:`regenerate`): ``generator.enqueue`` ->
    ``on_generate`` of each component (sorted) -> ``reset`` of each component (reversed),
    recorded on CUDA into the course's own graph per variant.

    Attributes:
        generator: the generator it drives (one course per generator: a newer course over the
            same generator takes it over, and this one raises RuntimeError at its next call).
        components: read-only name -> component mapping in execution order.
        inputs: ``"regen_mask"`` (the generator's) and ``"reset_mask"`` (the course's): stable,
            zero-initialised ``[E]`` int32 masks the library reads and never clears.
        result: the generator's result (Track or GateSequence).
        seeds: the generator's SeedState; ``rng`` its PerEnvSeededRNG or None.
        graph: the course's graph of the full regeneration (CUDA, after the first call).
    """

    def __init__(
        self, generator=None, components=(), *, stream=None, prepare: bool = True, config=None
    ):
        if config is not None or isinstance(generator, CourseConfig):
            config = config if config is not None else generator
            if config is not generator and generator is not None:
                raise TypeError("pass either a generator or config=, not both")
            if components:
                raise TypeError("config= builds its own components: pass none")
            generator, components = from_config(config)
        check_generator(generator)
        if (
            isinstance(components, Component)
            or not isinstance(components, Sequence)
            or isinstance(components, (str, bytes))
        ):
            raise TypeError(
                "components must be a sequence of components (a list or tuple); "
                f"got {type(components).__name__}"
            )
        ordered = order_components(components)
        device = generator.layout.device
        require_not_capturing(device, "Course construction")
        prepare = check_bool("prepare", prepare)
        check_stream(stream, device)
        check_attach_budget(generator, ordered)  # what is left now, before the first attach
        self.generator = generator
        self.stream = stream if stream is not None else getattr(generator, "stream", None)
        self._guard = UseGuard("Course")
        ctx = ComponentContext(generator, self.stream)
        ctx.course = weakref.ref(self)
        names = [c.name for c in ordered]
        try:
            for comp in ordered:
                ctx.add(comp, planned=names)
        except BaseException:
            ctx.detach_all()
            raise
        self._ctx = ctx
        self.components = MappingProxyType(ctx.components)
        E = generator.layout.num_envs
        budget = AllocationBudget(device, COURSE_BUDGET_HINT, owner="this course's")
        self._reset_mask = budget.zeros(E, wp.int32, "the course's reset mask")
        self._zero_mask = budget.zeros(E, wp.int32, "the course's zero mask")
        self._flag = budget.zeros(1, wp.int32, "the course's flag")  # any env masked (on device)
        self.inputs = MappingProxyType(
            {"regen_mask": generator.inputs["regen_mask"], "reset_mask": self._reset_mask}
        )
        self._result = StepResult(valid=generator.result.valid)
        self._graphs = GraphCache("Course", MAX_COURSE_GRAPHS + 1)
        self._stale = False
        self._stepped_in_capture = False
        self._rebind_warned = False
        self._prepared = False
        if prepare:
            self.prepare()
        generator._course_owner = weakref.ref(self)

    # -------------------------------------------------------------- construction presets
    @classmethod
    def track(
        cls,
        source,
        *,
        checkpoint_spacing,
        collision=None,
        max_checkpoints=None,
        racing_line=None,
        extra=(),
        seeds=None,
        stream=None,
        prepare: bool = True,
    ):
        """A track course: ``checkpoints``, ``progress``, ``collision`` (when given),
        ``racing_line`` (when given: a mapping of ``tools.RacingLine`` keyword arguments,
        ``vehicle_width``, ``a_lat``, ``a_lon``, ``v_max`` required; ``course.racing_line`` is
        its planner), then ``extra``. See the module docs for every check (all made before
        building)."""
        components = track_components(
            checkpoint_spacing=checkpoint_spacing,
            collision=collision,
            max_checkpoints=max_checkpoints,
            racing_line=racing_line,
            extra=extra,
        )
        check_source(source, "track", seeds, stream, prepare, components)
        spec = check_course_budget(source, "track", components)  # the pipeline, made once
        generator = build_source(source, "track", seeds, stream, spec)
        return cls(generator, components, stream=stream, prepare=prepare)

    @classmethod
    def gates(
        cls,
        source,
        *,
        collision=None,
        samples_per_gate=8,
        localize_window=None,
        min_time=None,
        extra=(),
        seeds=None,
        stream=None,
        prepare: bool = True,
    ):
        """A gate course: ``checkpoints`` (``tools.GateCheckpoints()``), ``centerline``
        (``tools.CenterlineFromGates(samples_per_gate)``), ``progress``, ``collision`` (when
        given: ``tools.DiscCollision(r)`` for a post radius ``r > 0``, or the component you
        pass), ``localizer`` (``tools.Localizer(warm_window=localize_window,
        source="centerline")``), ``min_time`` (when given: a mapping of ``tools.MinTime``
        keyword arguments, ``t_max`` and ``v_max`` required; ``course.min_time`` is its
        planner, re-planned with every regeneration), then ``extra``.

        Every check is made before any generator is built, the gate-width rule included: the
        construction ``gate_frames.gate_width`` of the config, spec or built generator must be
        > 0 (a width-0 gate can never be passed), or, when a randomizer draws the width, its
        construction lo must be > 0.
        """
        components = gates_components(
            collision=collision,
            samples_per_gate=samples_per_gate,
            localize_window=localize_window,
            min_time=min_time,
            extra=extra,
        )
        check_source(source, "gates", seeds, stream, prepare, components)
        spec = check_course_budget(source, "gates", components)  # the pipeline, made once
        generator = build_source(source, "gates", seeds, stream, spec)
        return cls(generator, components, stream=stream, prepare=prepare)

    @classmethod
    def from_config(cls, config, *, stream=None, prepare: bool = True):
        """``Course(config=config)``: build the generator and components a
        :class:`CourseConfig` describes (through ``cls(generator, components, ...)``, so a
        subclass's ``__init__`` runs)."""
        generator, components = from_config(config)
        return cls(generator, components, stream=stream, prepare=prepare)

    # -------------------------------------------------------------- properties
    @property
    def result(self):
        """The generator's result (live)."""
        return self.generator.result

    @property
    def seeds(self):
        return self.generator.seeds

    @property
    def rng(self):
        return self.generator.rng

    @property
    def device(self):
        return self.generator.layout.device

    @property
    def graph(self):
        """The course's graph of the full regeneration (CUDA, after the first call), else
        None."""
        return self._graphs.graphs.get(GraphCache.variant(False, None))

    def _utility(self, name):
        comp = self._ctx.components.get(name)
        return None if comp is None else comp.utility

    @property
    def progress(self):
        return self._utility("progress")

    @property
    def collision(self):
        return self._utility("collision")

    @property
    def localizer(self):
        return self._utility("localizer")

    @property
    def heightfield(self):
        return self._utility("heightfield")

    @property
    def racing_line(self):
        """The :class:`~track_gen.tools.RacingLineUtility` of the ``"racing_line"``
        component (``tools.RacingLine``), or None; its result is
        ``course.components["racing_line"].result``."""
        return self._utility("racing_line")

    @property
    def min_time(self):
        """The :class:`~track_gen.tools.MinTimeUtility` of the ``"min_time"`` component
        (``tools.MinTime``), or None; its result is ``course.components["min_time"].result``."""
        return self._utility("min_time")

    @property
    def checkpoint_sampler(self):
        return self._utility("checkpoints")

    @property
    def course_line(self):
        return self._utility("centerline")

    @property
    def checkpoints(self):
        comp = self._ctx.components.get("checkpoints")
        return None if comp is None else comp.result

    # -------------------------------------------------------------- checks
    def _check_owner(self) -> None:
        owner = getattr(self.generator, "_course_owner", None)
        if owner is not None and owner() is not self:
            raise RuntimeError(
                "this course's generator is driven by another Course (a newer "
                "course took it over): use that course"
            )

    def _check_mask(self, mask) -> None:
        check_mask(
            mask,
            self.generator.layout.num_envs,
            self.device,
            hint="use course.inputs['regen_mask'] or course.inputs['reset_mask']",
        )

    def _check_fresh(self) -> None:
        if self._stale:
            raise RuntimeError(
                "a regeneration of this course raised after the generator had rebuilt its "
                "envs and before every component refreshed them: call course.regenerate() "
                "(every env) to make the course consistent again"
            )

    def _check_call(self, capturing: bool) -> None:
        if capturing and not self._prepared:
            raise CaptureError(
                "this course was built with prepare=False: call course.prepare() "
                "before recording it into a capture"
            )
        if capturing and not getattr(self.generator, "capturable", True):
            raise NotCapturableError(
                "the generator has a stage that runs on the host (capturable=False): call "
                "regenerate outside the capture"
            )

    # -------------------------------------------------------------- binding
    def bind(self, *args, **arrays) -> None:
        """Bind every component input at once, by name (``position``, ``orientation``,
        ``half_extents``, ``box_position`` also positionally, in that order).

        Every array is validated (dtype, shape ``[E*slots]``, device, contiguity) and every
        route resolved before anything is rebound; a component whose ``on_bind`` raises gets
        its previous arrays back, as do the components already rebound by this call.
        """
        self._check_owner()
        if len(args) > len(COMMON_INPUTS):
            raise TypeError(
                f"bind() takes at most {len(COMMON_INPUTS)} positional arrays "
                f"({', '.join(COMMON_INPUTS)})"
            )
        for name, arr in zip(COMMON_INPUTS, args, strict=False):
            if name in arrays:
                raise TypeError(f"bind() got {name!r} both positionally and by name")
            arrays[name] = arr
        specs = self._ctx.inputs
        gen_inputs = set(getattr(self.generator, "input_info", {})) - {"regen_mask"}
        for name in arrays:
            if name in gen_inputs:
                raise TypeError(
                    f"{name!r} is an input of the generator, not of the course: write "
                    f"course.generator.inputs[{name!r}] in place (a stable array every "
                    "regeneration reads), e.g. with wp.copy on the regeneration's stream"
                )
            if name not in specs and name not in COMMON_INPUTS:
                raise TypeError(
                    f"bind() got an unknown input {name!r}; component inputs: {sorted(specs)}"
                )
        E, device = self.generator.layout.num_envs, self.device
        for name, arr in arrays.items():
            spec = specs.get(name)
            if spec is None:
                continue  # a common input no component declares: ignored
            check_array(f"bind({name}=...)", arr, spec.dtype, E * spec.slots, device)
        routed = {}
        for comp in self._ctx.components.values():
            mine = {}
            for spec in comp.INPUTS:
                if spec.name in arrays:
                    mine[spec.name] = arrays[spec.name]
                elif spec.default is not None and spec.default in arrays:
                    src = arrays[spec.default]
                    if src.shape[0] == E * spec.slots and src.dtype == spec.dtype:
                        mine[spec.name] = src
            routed[comp.name] = mine
        done = []
        with self._guard("bind()"):
            try:
                for comp in self._ctx.components.values():
                    previous = comp.bound
                    comp.bind(routed[comp.name])
                    done.append((comp, previous))
            except BaseException:
                for comp, previous in reversed(done):
                    comp.bind(previous)
                raise
        if self._stepped_in_capture and not self._rebind_warned:
            self._rebind_warned = True
            warnings.warn(
                "inputs rebound after a capture recorded course.step(): that graph "
                "keeps reading the old arrays; record it again",
                RebindAfterCaptureWarning,
                stacklevel=2,
            )

    def _unbound_required(self) -> list[str]:
        missing = []
        for comp in self._ctx.components.values():
            for spec in comp.INPUTS:
                if spec.required and spec.name not in comp.bound:
                    missing.append(f"{comp.name}.{spec.name}")
        return missing

    # -------------------------------------------------------------- per step
    def _stream_for(self, stream, call: str):
        """The stream a call runs on: ``stream`` when given (checked), else the course's
        default stream (CaptureError when another stream records: the call would run outside
        the capture), else an adopted capture stream (a ``registered()`` block's, or torch's
        capturing stream), else None (the device's current stream)."""
        if stream is not None:
            stream = check_stream(stream, self.device)
        elif self.stream is not None:
            if is_capturing(self.device) and not self.stream.is_capturing:
                raise CaptureError(
                    f"course.{call}: this course was built with stream={self.stream!r}, and "
                    "another stream is recording: pass stream=<the capturing stream> to every "
                    "call you record (or it would run outside your graph)"
                )
            stream = self.stream
        else:
            stream = capture_stream(self.device)
        keep = REGISTERED_KEEP.get()  # recording into a registered() block's graph:
        registered = REGISTERED_STREAM.get()  # live as long as that graph
        if keep is not None and registered is not None and stream is not None:
            if stream.cuda_stream == registered.cuda_stream and all(c is not self for c in keep):
                keep.append(self)
        return stream

    def step(self, *, stream=None) -> StepResult:
        """Run every per-step component in order; returns the same :class:`StepResult`.

        ``stream``: the stream to launch on (default: the course's; see the capture guide)."""
        self._check_owner()
        self._check_fresh()
        stream = self._stream_for(stream, "step()")
        if self._unbound_required():
            raise RuntimeError(f"call bind() before step() (unbound: {self._unbound_required()})")
        if is_capturing(self.device):
            self._stepped_in_capture = True
        entries = {}
        with self._guard("step()"), stream_scope(stream):
            for comp in self._ctx.components.values():
                if comp.steps:
                    comp.result = comp.step(self._ctx)
                    entries[comp.name] = comp.result
        self._result._set_entries(entries)
        self._result.valid = self.generator.result.valid
        return self._result

    def reset(self, mask=None, *, stream=None) -> None:
        """Respawn the masked envs (None: all) on the course they have: every component's
        runtime state (reversed order), nothing else."""
        self._check_owner()
        self._check_fresh()
        self._check_mask(mask)
        stream = self._stream_for(stream, "reset()")
        with self._guard("reset()"), stream_scope(stream):
            for comp in reversed(list(self._ctx.components.values())):
                comp.reset(self._ctx, mask)

    # -------------------------------------------------------------- regeneration
    def _hooks(self, mask, in_node: bool) -> None:
        """``on_generate`` of each component (sorted), then ``reset`` (reversed). Inside a
        conditional node a hook that raises is reported as a CaptureError naming it."""
        comps = list(self._ctx.components.values())
        calls = [(c, "on_generate", c.on_generate) for c in comps]
        calls += [(c, "reset", c.reset) for c in reversed(comps)]
        for comp, hook, fn in calls:
            try:
                fn(self._ctx, mask)
            except CaptureError:
                raise
            except Exception as err:
                if not in_node:
                    raise
                raise CaptureError(
                    f"component {comp.name!r}: its {hook}() cannot be recorded in the "
                    f"conditional node of a masked regeneration ({type(err).__name__}: {err}); "
                    "tools.check_component(component, course) finds the call, and "
                    "track_gen.core.exec.unconditional() records the body without the node"
                ) from err

    def _body(self, advance: bool, mask, stream, in_node: bool = False) -> None:
        self.generator.enqueue(self._ctx, advance=advance, mask=mask, stream=stream)
        try:
            self._hooks(mask, in_node)
        except BaseException:
            if not is_capturing(self.device):
                self._stale = True  # the generator committed; some components did not follow
            raise

    def _masked_body(self, advance: bool, mask, stream) -> None:
        """The body, behind a conditional node where the capture allows one
        (:func:`track_gen.core.exec.record_masked`): an all-zero mask then skips it on device."""
        if mask is None:
            self._body(advance, mask, stream)
            return
        in_node = use_conditional(self.device, stream)
        record_masked(
            lambda: self._body(advance, mask, stream, in_node),
            mask,
            self._flag,
            self.device,
            stream,
        )

    def _run_body(self, advance: bool, mask, allow_graph: bool, stream=None) -> None:
        stream = self._stream_for(stream, "regenerate()")
        capturing = is_capturing(self.device)
        self._check_call(capturing)
        if not self._prepared and not capturing:
            self._prepared = True
        use_graph = (
            allow_graph
            and not capturing
            and self.device.is_cuda
            and getattr(self.generator, "capturable", True)
        )
        with self._guard("regenerate()"):
            if use_graph:
                key = GraphCache.variant(advance, mask)
                self._graphs.run(
                    key, lambda: self._masked_body(advance, mask, stream), self.device, stream
                )
            else:
                with stream_scope(stream):
                    self._masked_body(advance, mask, stream)
        if mask is None and not capturing:
            self._stale = False

    def regenerate(self, mask=None, advance: bool = False, *, stream=None) -> None:
        """Give new courses: every env (``mask=None``) or the envs with ``mask[e] != 0``.

        ``advance=True`` moves the regenerated envs to their next epoch (a new course);
        ``advance=False`` rebuilds them from their current (seed, epoch). Regenerated envs'
        derived data is refreshed and their runtime state reset; unmasked envs keep their
        course, derived data and state bitwise; an all-zero mask is an exact no-op (skipped
        on device behind a conditional node where the capture allows one: the capture
        guide's cost table). ``stream``: see :meth:`step`.
        """
        self._check_owner()
        advance = check_bool("advance", advance)
        self._check_mask(mask)
        if mask is not None:
            self._check_fresh()
        self._run_body(advance, mask, allow_graph=True, stream=stream)

    def enqueue_generate(self, mask=None, advance: bool = False, *, stream=None) -> None:
        """The regeneration body, launched (or recorded into your capture) without the
        course's own graph."""
        self._check_owner()
        advance = check_bool("advance", advance)
        self._check_mask(mask)
        if mask is not None:
            self._check_fresh()
        self._run_body(advance, mask, allow_graph=False, stream=stream)

    def generate(self, seeds=None) -> None:
        """Regenerate every env; with ``seeds``, reseed every env and zero every epoch first
        (through the rng when there is one; RuntimeError for seeds bound to your array)."""
        self._check_owner()
        if seeds is None:
            self.regenerate()
            return
        if is_capturing(self.device):
            raise CaptureError(
                "generate(seeds=...) writes seeds from the host: call it outside the capture"
            )
        state = self.generator.seeds
        state.check_set(seeds)
        saved = state.snapshot()
        try:
            state.set(seeds)
            state.reset_epoch()
            self.regenerate()
        except BaseException:
            state.restore(saved)
            raise

    def prepare(self) -> None:
        """Load every module before recording: a fresh generator gets its first batch; a
        built one runs the masked body on an all-zero private mask (an exact identity)."""
        if self._prepared:
            return
        require_not_capturing(self.device, "Course.prepare()")
        built = bool((self.generator.result.generation.numpy() >= 0).any())
        self._prepared = True
        load_masked(self._zero_mask, self._flag, self.device)
        if built:
            self._run_body(False, self._zero_mask, allow_graph=False)
        else:
            self._run_body(False, None, allow_graph=False)

    def __repr__(self) -> str:
        return f"Course({self.generator!r}, components={list(self._ctx.components)})"
