"""The Program: a built pipeline with its buffers, seeds, params and graphs."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from types import MappingProxyType

import numpy as np
import warp as wp

from ..core.budget import AllocationBudget
from ..core.checks import INT32_MAX, check_bool, check_mask
from ..core.errors import NotCapturableError
from ..core.exec import (
    GraphCache,
    UseGuard,
    check_stream,
    is_capturing,
    require_not_capturing,
    stream_scope,
)
from ..core.layout import resolve_kernel_layout
from ..results import GateSequence, Track
from ..seeds import PerEnvSeededRNG, SeedState, effective_seed_wp
from .params import Params, Randomizers
from .plan import plan_stages
from .registry import Registry, default_registry
from .spec import PipelineSpec
from .stage import Layout, Workspace
from .threads import (
    NotRangeSafeError,
    RangeBudget,
    RecordingBudget,
    env_ranges,
    resolve_cpu_threads,
    run_ranges,
)
from .timer import StageTimer

__all__ = ["Program", "build", "plan_program", "program_layout", "resolve_device"]

wp.set_module_options({"enable_backward": False})

#: Graph variants a program records besides the full regeneration; more run eagerly.
MAX_GRAPH_VARIANTS = 16
#: Largest epoch; advancing past it restarts at 1.
EPOCH_MAX = wp.constant(INT32_MAX)
#: What the allocation budget's refusal suggests.
BUDGET_HINT = "lower num_envs, N_max, num_points or the stage sizes"


@dataclasses.dataclass
class _Buffers:
    """Every buffer a program allocates at construction (see :func:`_allocate_buffers`)."""

    result: Track | GateSequence
    ws: Workspace
    epoch: wp.array
    params: Params
    randomizers: Randomizers
    regen_mask: wp.array
    no_mask: wp.array


@dataclasses.dataclass
class _EnvRange:
    """One contiguous env range ``[lo, hi)`` run on its own CPU thread: a workspace whose
    arrays are the batch's cut to the range, and the range's own stage instances with
    their params (views of the batch's)."""

    lo: int
    hi: int
    ws: Workspace
    stages: list


def _allocate_buffers(
    cfg,
    stages,
    layout: Layout,
    budget: AllocationBudget,
    result_cls,
    randomize,
    logs: list | None = None,
):
    """The program's buffers for ``layout`` through ``budget``: the result and its staging
    copy, the workspace, the epochs, the params and the randomizers (of ``randomize``), each
    stage's scratch (``stage.allocate``) and the masks. ``AllocationBudget.plan`` runs it for
    one and two envs to count a construction before it allocates; the program then runs it
    for its own layout. The seed state (two
    int32 ``[E]`` arrays) is counted here and allocated by the program. ``logs``: a list that
    receives, per stage, the arrays its ``allocate`` asked for (what the env ranges of
    ``cpu_threads`` cut)."""
    E = layout.num_envs
    result = result_cls.allocate(E, layout.N_max, layout.device, budget)
    staged = result_cls.allocate(E, layout.N_max, layout.device, budget)
    result.unit = staged.unit = cfg.unit  # the unit every length of the course is in
    ws = Workspace(
        layout=layout,
        config=cfg,
        budget=budget,
        active=budget.zeros(E, wp.int32, "active mask"),
        eff_seed=budget.zeros(E, wp.int32, "effective seeds"),
        fail=budget.zeros(E, wp.int32, "fail bits"),
        line=budget.zeros(E * layout.num_points, wp.vec2f, "sampler loops (E * num_points)"),
        beads=budget.zeros(E * layout.N_max, wp.vec2f, "beads (E * N_max)"),
        count=budget.zeros(E, wp.int32, "bead counts"),
        result=staged,
    )
    epoch = budget.zeros(E, wp.int32, "next epochs")
    budget.take(2 * E, wp.int32, "seeds and epochs")
    declarations = []
    for stage in stages:
        declarations += stage.dynamic_fields()
    params = Params(E, layout.device, declarations, budget)
    randomizers = Randomizers(params, dict(randomize))
    for stage in stages:
        if logs is None:
            stage.allocate(ws)
            continue
        ws.budget = RecordingBudget(budget)
        try:
            stage.allocate(ws)
        finally:
            logs.append(ws.budget.log)
            ws.budget = budget
    return _Buffers(
        result=result,
        ws=ws,
        epoch=epoch,
        params=params,
        randomizers=randomizers,
        regen_mask=budget.zeros(E, wp.int32, "regen_mask"),
        no_mask=budget.zeros(1, wp.int32, "empty mask"),
    )


def _result_class(spec: PipelineSpec):
    return GateSequence if spec.family == "gates" else Track


def program_layout(spec: PipelineSpec, device=None) -> Layout:
    """The :class:`Layout` a :class:`Program` built from ``spec`` has (``device``: the
    resolved Warp device; None resolves ``spec.config.device``)."""
    cfg = spec.config
    device = resolve_device(cfg) if device is None else wp.get_device(device)
    return Layout(
        spec.family,
        cfg.num_envs,
        cfg.N_max,
        cfg.num_points,
        device,
        resolve_kernel_layout(getattr(cfg, "kernel_layout", "auto"), device),
    )


def _plan_into(budget: AllocationBudget, spec: PipelineSpec, registry, layout: Layout) -> None:
    """Count every buffer of a program of ``spec`` through ``budget`` (its ``plan``: the
    allocation function run for one and two envs, extrapolated to ``layout.num_envs``)."""
    cfg = spec.config
    result_cls = _result_class(spec)

    def probe(num_envs: int, probe_budget: AllocationBudget) -> None:
        probe_layout = dataclasses.replace(layout, num_envs=num_envs)
        _allocate_buffers(
            cfg, plan_stages(spec, registry), probe_layout, probe_budget, result_cls, spec.randomize
        )

    budget.plan(probe, layout.num_envs)


def plan_program(spec: PipelineSpec, registry: Registry | None = None) -> int:
    """Bytes a :class:`Program` built from ``spec`` would allocate, counted without building
    it: every check of the spec, then the program's allocation function run for one and two
    envs (tiny arrays, dropped at once) and extrapolated to ``num_envs``. Raises the program's
    ValueError when the batch alone exceeds the device's budget (an array past int32
    indexing, or the total past :func:`~track_gen.engine.stage.memory_budget`)."""
    if not isinstance(spec, PipelineSpec):
        raise TypeError(f"expected a PipelineSpec, got {type(spec).__name__}")
    if registry is not None and not isinstance(registry, Registry):
        raise TypeError(f"registry must be a Registry, got {type(registry).__name__}")
    registry = registry or default_registry()
    plan_stages(spec, registry)
    layout = program_layout(spec)
    budget = AllocationBudget(layout.device, BUDGET_HINT)
    _plan_into(budget, spec, registry, layout)
    return int(budget.planned)


@wp.kernel
def _begin_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    epochs: wp.array(dtype=wp.int32),
    # static
    use_mask: int,
    advance: int,
    env_lo: int,
    # outputs
    active_out: wp.array(dtype=wp.int32),
    epoch_out: wp.array(dtype=wp.int32),
    eff_seed_out: wp.array(dtype=wp.int32),
    fail_out: wp.array(dtype=wp.int32),
):
    e = wp.tid() + env_lo
    on = 1
    if use_mask != 0:
        if mask[e] == 0:
            on = 0
    active_out[e] = on
    if on == 0:
        return
    ep = epochs[e]
    if advance != 0:
        if ep >= EPOCH_MAX:
            ep = 1  # epochs restart at 1 rather than wrap to a negative value
        else:
            ep = ep + 1
    epoch_out[e] = ep
    eff_seed_out[e] = effective_seed_wp(seeds[e], ep)
    fail_out[e] = 0


@wp.kernel
def _commit_epochs_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    epoch: wp.array(dtype=wp.int32),
    # outputs
    epochs_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] != 0:
        epochs_out[e] = epoch[e]


def resolve_device(cfg):
    """The Warp device for ``config.device`` (None: Warp's preferred device)."""
    name = cfg.device
    if name is None:
        return wp.get_preferred_device()
    try:
        return wp.get_device(name)
    except (ValueError, RuntimeError) as exc:
        known = ", ".join(str(d) for d in wp.get_devices())
        raise ValueError(
            f"{type(cfg).__name__}.device = {name!r} is not available here; use one of: {known}"
        ) from exc


class Program:
    """A built pipeline: fixed-batch buffers, per-env seeds and epochs, device params.

    Build with :func:`build` (or ``TrackGenerator``). Every buffer is allocated here, each
    checked against the allocation budget first (int32 indexing, the device's memory);
    :meth:`generate` and :meth:`enqueue` allocate nothing.

    Attributes:
        spec: the :class:`PipelineSpec`.
        layout: the fixed shapes (:class:`Layout`).
        result: the :class:`~track_gen.Track` (or ``GateSequence``), the same instance for the
            program's life.
        seeds: the :class:`~track_gen.SeedState` (per-env seeds and epochs).
        rng: the :class:`~track_gen.PerEnvSeededRNG` given as seeds, else None.
        params: :class:`Params`, the dynamic per-env fields (``"<stage>.<field>"``).
        randomizers: :class:`Randomizers`, the live ``(lo, hi)`` range of each field drawn
            per env from its (seed, epoch) (``spec.with_randomize``).
        inputs: read-only mapping of stable input arrays; ``"regen_mask"`` is a
            zero-initialised ``[E]`` int32 mask for masked regeneration.
        input_info: name -> description of each input.
        diagnostics: read-only mapping of per-env device counters exposed by stages,
            e.g. ``"relax.sep_overflow"`` (int32 ``[E]``: separation candidates dropped).
        capturable: False when a stage needs host control flow.
        stream: default stream for launches (None: the device's current stream).

    Rules of use:
        * One thread at a time: a call from a second thread while one runs raises
          RuntimeError.
        * Driven by a :class:`~track_gen.course.Course`, the generator refuses direct
          :meth:`generate` / :meth:`enqueue` calls (the course's components derive data from
          every course): regenerate through the course.
        * A regeneration is all or nothing: the stages write staging buffers and the rebuilt
          envs' rows, epochs and generations are committed after the last stage, so a stage
          that raises leaves seeds, epochs and the result as they were.
    """

    def __init__(
        self,
        spec: PipelineSpec,
        *,
        registry: Registry | None = None,
        seeds=None,
        rng: PerEnvSeededRNG | None = None,
        stream=None,
    ):
        if not isinstance(spec, PipelineSpec):
            raise TypeError(f"expected a PipelineSpec, got {type(spec).__name__}")
        cfg = spec.config
        device = resolve_device(cfg)
        require_not_capturing(device, type(self).__name__)
        if rng is not None and seeds is not None:
            raise TypeError("pass the seeds either as rng or as seeds=, not both")
        if rng is not None and not isinstance(rng, PerEnvSeededRNG):
            raise TypeError(f"rng must be a PerEnvSeededRNG, got {type(rng).__name__}")
        check_stream(stream, device)
        SeedState.check(rng if rng is not None else seeds, cfg.num_envs, device)
        if registry is not None and not isinstance(registry, Registry):
            raise TypeError(f"registry must be a Registry, got {type(registry).__name__}")
        registry = registry or default_registry()
        stages = plan_stages(spec, registry)  # every check of the spec, before any allocation
        entries = [registry.get(s.kind) for s in spec.stages]
        E = cfg.num_envs
        self.spec = spec
        self.layout = program_layout(spec, device)
        self.stream = stream
        self._guard = UseGuard(type(self).__name__)
        self._course_owner = None
        budget = AllocationBudget(device, BUDGET_HINT)
        _plan_into(budget, spec, registry, self.layout)  # every buffer counted first
        logs: list = []
        bufs = _allocate_buffers(
            cfg, stages, self.layout, budget, _result_class(spec), spec.randomize, logs
        )
        self.result, self._ws, self._epoch = bufs.result, bufs.ws, bufs.epoch
        self.params = bufs.params
        self._regen_mask, self._no_mask = bufs.regen_mask, bufs.no_mask
        self.seeds = SeedState.create(rng if rng is not None else seeds, E, device)
        self.rng = self.seeds.rng
        self._host_stages = [
            s.name for s, e in zip(spec.stages, entries, strict=True) if not e.capturable
        ]
        for stage in stages:
            self._host_stages += stage.host_stages()
        self.capturable = not self._host_stages
        self.params.guard = self._guard
        self.randomizers = bufs.randomizers
        self._stages = [(stage, stage.param_arrays(self.params)) for stage in stages]
        self.inputs = MappingProxyType({"regen_mask": self._regen_mask, **self._ws.inputs})
        self.input_info = MappingProxyType(
            {
                "regen_mask": "int32 [E]: nonzero entries select envs for masked regeneration",
                **self._ws.input_info,
            }
        )
        self.diagnostics = MappingProxyType(self._ws.diagnostics)
        self._graphs = GraphCache(type(self).__name__, MAX_GRAPH_VARIANTS + 1)
        self._timer: StageTimer | None = None
        self._ranges = self._env_ranges(spec, registry, stages, logs, budget)
        self._ranges_used = False
        self.seeds.claim(self)

    # ------------------------------------------------------------------ threads
    def _env_ranges(self, spec, registry, stages, logs, budget) -> list[_EnvRange]:
        """The env ranges ``cpu_threads`` runs on their own threads (empty: one thread, on
        CUDA, or when a stage is not registered ``range_safe``)."""
        lay = self.layout
        threads = resolve_cpu_threads(
            spec.config.cpu_threads, lay.num_envs, lay.device, spec.family
        )
        kinds = [s.kind for s in spec.stages]
        for stage in stages:
            kinds += list(stage.resolves())
        if threads <= 1 or not all(registry.get(k).range_safe for k in kinds if k in registry):
            return []
        ws = self._ws
        P, N = lay.num_points, lay.N_max
        out = []
        try:
            for lo, hi in env_ranges(lay.num_envs, threads):
                rws = Workspace(
                    layout=dataclasses.replace(lay, num_envs=hi - lo),
                    config=spec.config,
                    budget=budget,
                    active=ws.active[lo:hi],
                    eff_seed=ws.eff_seed[lo:hi],
                    fail=ws.fail[lo:hi],
                    line=ws.line[lo * P : hi * P],
                    beads=ws.beads[lo * N : hi * N],
                    count=ws.count[lo:hi],
                    result=ws.result.env_range(lo, hi),
                    env_lo=lo,
                )
                own = plan_stages(spec, registry)
                for stage, log in zip(own, logs, strict=True):
                    rws.budget = RangeBudget(budget, log, lay.num_envs, lo, hi)
                    stage.allocate(rws)
                    rws.budget.done()
                rws.budget = budget
                params = self.params.env_range(lo, hi)
                out.append(_EnvRange(lo, hi, rws, [(s, s.param_arrays(params)) for s in own]))
        except NotRangeSafeError:
            return []
        return out

    @property
    def env_ranges(self) -> tuple[tuple[int, int], ...]:
        """The ``(lo, hi)`` env ranges a regeneration runs on their own CPU threads (empty on
        one thread); a course's per-generation tools split their work the same way."""
        return tuple((r.lo, r.hi) for r in self._ranges)

    @property
    def cpu_threads(self) -> int:
        """Threads a regeneration runs on (``config.cpu_threads`` resolved: 1 on CUDA, for
        a pipeline holding a stage not registered ``range_safe``, or when the batch is too
        small to split)."""
        return max(len(self._ranges), 1)

    # ------------------------------------------------------------------ checks
    @property
    def device(self):
        return self.layout.device

    @property
    def num_envs(self) -> int:
        return self.layout.num_envs

    def _check_mask(self, mask) -> None:
        check_mask(
            mask,
            self.layout.num_envs,
            self.layout.device,
            hint="use generator.inputs['regen_mask']",
        )

    def _check_capture(self) -> bool:
        capturing = is_capturing(self.layout.device)
        if capturing and not self.capturable:
            raise NotCapturableError(
                f"stage(s) {self._host_stages} are registered with capturable=False and run on "
                "the host: call this generator outside any graph capture"
            )
        return capturing

    def _check_driver(self, ctx, call: str) -> None:
        """Refuse a direct call on a generator a live course drives."""
        owner = self._course_owner() if self._course_owner is not None else None
        if owner is not None and getattr(ctx, "course", None) is None:
            raise RuntimeError(
                f"{type(self).__name__}.{call}: this generator is driven by {owner!r}, whose "
                "components derive data from every course it builds: regenerate through the "
                "course (course.regenerate / course.generate), or build a second generator"
            )

    # ------------------------------------------------------------------ timing
    @property
    def stage_timer(self) -> StageTimer | None:
        """The :class:`StageTimer` of :meth:`time_stages`, or None when timing is off."""
        return self._timer

    def time_stages(self, enable: bool = True) -> StageTimer | None:
        """Time every later regeneration per part (setup, each stage, commit); returns the
        :class:`StageTimer` (``timer.read()`` gives ms per part), or None with
        ``enable=False``.

        The marks are asynchronous (CUDA timing events, recorded into graphs as well), so the
        regeneration does not wait for the device. The program's own recorded graphs are
        dropped and re-recorded with the marks; a graph recorded elsewhere before this call
        (a course's) holds no marks. Allocates events: call it outside any capture.
        """
        enable = check_bool("enable", enable)
        require_not_capturing(self.layout.device, f"{type(self).__name__}.time_stages()")
        with self._guard("time_stages()"):
            if enable and self._timer is None:
                self._timer = StageTimer(self.layout.device, [s.name for s, _ in self._stages])
            elif not enable:
                self._timer = None
            self._graphs.graphs.clear()
        return self._timer

    # ------------------------------------------------------------------ body
    def _begin(self, advance: bool, mask, lo: int, hi: int) -> None:
        """Envs ``[lo, hi)``: the active mask, the next epochs, the effective seeds and the
        fail bits; then the randomizers' draws and the params check."""
        ws = self._ws
        wp.launch(
            _begin_kernel,
            hi - lo,
            inputs=[
                mask if mask is not None else self._no_mask,
                self.seeds.seeds,
                self.seeds.epochs,
                0 if mask is None else 1,
                int(advance),
                lo,
            ],
            outputs=[ws.active, self._epoch, ws.eff_seed, ws.fail],
            device=self.layout.device,
        )
        self.randomizers.enqueue(ws.active, ws.eff_seed, (lo, hi))
        self.params.enqueue_check(ws.active, ws.fail, (lo, hi))

    def _run_range(self, r: _EnvRange, advance: bool, mask) -> None:
        self._begin(advance, mask, r.lo, r.hi)
        for stage, params in r.stages:
            stage.enqueue(r.ws, params)

    def _threaded(self, mask) -> bool:
        """Whether this regeneration runs on the env ranges' threads: a CPU program with
        ranges, for every env (a masked regeneration, an auto-reset of a few envs, costs in
        proportion to them and runs on one thread: the threads' handoff would outweigh it),
        outside any capture (a recorded graph replays the whole batch's launches on one
        thread) and with the stage timer off (it times the one-thread path)."""
        if not self._ranges or self._timer is not None or mask is not None:
            return False
        return not is_capturing(self.layout.device)

    def _body(self, advance: bool, mask) -> None:
        ws, lay = self._ws, self.layout
        E = lay.num_envs
        timer = self._timer
        if self._threaded(mask):
            tasks = [(lambda r=r: self._run_range(r, advance, mask)) for r in self._ranges]
            if self._ranges_used:
                run_ranges(tasks)
            else:  # the first regeneration loads every kernel: one range after the other
                for task in tasks:
                    task()
                self._ranges_used = True
        else:
            if timer is not None:
                timer.mark(0)
            self._begin(advance, mask, 0, E)
            for i, (stage, params) in enumerate(self._stages):
                if timer is not None:
                    timer.mark(i + 1)
                stage.enqueue(ws, params)
        if timer is not None:
            timer.mark(len(self._stages) + 1)
        # commit: nothing above touched the result, the epochs or the generations
        self.result.commit(ws.result, ws.active, ws.fail, self._epoch)
        wp.launch(
            _commit_epochs_kernel,
            E,
            inputs=[ws.active, self._epoch],
            outputs=[self.seeds.epochs],
            device=lay.device,
        )
        if timer is not None:
            timer.mark(len(self._stages) + 2)

    def enqueue(
        self,
        ctx: object | None = None,
        *,
        advance: bool = False,
        mask: wp.array | None = None,
        stream: wp.Stream | None = None,
    ) -> None:
        """Launch one regeneration on the stream without waiting (records into a capture).

        Args:
            ctx: None, or an object with a ``stream`` attribute (a course's context); its
                stream is checked like ``stream``.
            advance: advance the epoch of the regenerated envs first.
            mask: None (every env) or a contiguous ``[E]`` int32 array; envs with
                ``mask[e] != 0`` are rebuilt, the others stay bitwise unchanged.
            stream: None or a ``wp.Stream`` of the program's CUDA device (TypeError for
                another kind, ValueError on the CPU or another device) to launch on
                (default: ``ctx.stream``, else the program's).
        """
        advance = check_bool("advance", advance)
        self._check_mask(mask)
        device = self.layout.device
        check_stream(stream, device)
        if ctx is not None:
            if not hasattr(ctx, "stream"):
                raise TypeError(
                    "ctx must be None or a course's ComponentContext (an object with a stream "
                    f"attribute), got {type(ctx).__name__} {ctx!r:.40}"
                )
            check_stream(ctx.stream, device, "ctx.stream")
        self._check_capture()
        self._check_driver(ctx, "enqueue()")
        if stream is None and ctx is not None:
            stream = ctx.stream
        with self._guard("enqueue()"):
            self._run(advance, mask, stream or self.stream, graph=False)

    def generate(
        self,
        seeds: int | Sequence[int] | np.ndarray | None = None,
        advance: bool = False,
        mask: wp.array | None = None,
    ) -> Track | GateSequence:
        """Regenerate and return :attr:`result` (the same instance every call).

        Args:
            seeds: None, or new seeds for every env (an int ``s`` gives ``s + e``, or
                ``[E]`` int values); epochs are zeroed, so the batch equals a fresh
                generator's.
            advance: advance the epoch of the regenerated envs (a new course each).
            mask: None (every env) or a contiguous ``[E]`` int32 array selecting envs.

        On CUDA, outside a capture, each ``(advance, mask)`` variant is recorded once into
        the program's own graph and replayed; on the CPU the body runs eagerly.
        """
        advance = check_bool("advance", advance)
        self._check_mask(mask)
        capturing = self._check_capture()
        self._check_driver(None, "generate()")
        with self._guard("generate()"):
            if seeds is None:
                self._run(advance, mask, self.stream, graph=not capturing)
                return self.result
            if capturing:
                raise NotCapturableError(
                    "generate(seeds=...) writes seeds from the host: call it outside the capture"
                )
            self.seeds.check_set(seeds)
            saved = self.seeds.snapshot()
            try:
                self.seeds.set(seeds)
                self.seeds.reset_epoch()
                self._run(advance, mask, self.stream, graph=True)
            except BaseException:
                self.seeds.restore(saved)
                raise
        return self.result

    def _run(self, advance: bool, mask, stream, graph: bool) -> None:
        dev = self.layout.device
        if not (graph and dev.is_cuda and self.capturable):
            with stream_scope(stream):
                self._body(advance, mask)
            return
        key = GraphCache.variant(advance, mask)
        self._graphs.run(key, lambda: self._body(advance, mask), dev, stream)

    def __repr__(self) -> str:
        c = self.spec.config
        return (
            f"{type(self).__name__}(generator={c.generator!r}, num_envs={c.num_envs}, "
            f"N_max={c.N_max}, device={str(self.layout.device)!r})"
        )


def build(
    spec: PipelineSpec, registry: Registry | None = None, *, seeds=None, stream=None
) -> Program:
    """Build a :class:`Program` from ``spec`` with stages looked up in ``registry``."""
    return Program(spec, registry=registry, seeds=seeds, stream=stream)
