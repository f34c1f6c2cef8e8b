"""The Program: a built pipeline with its buffers, seeds, params and graphs."""

from __future__ import annotations

import contextlib
import time
import warnings
from types import MappingProxyType

import numpy as np
import warp as wp

from ..errors import NotCapturableError
from ..exec import check_mask, is_capturing, require_not_capturing
from ..results import GateSequence, Track
from ..seeds import PerEnvSeededRNG, SeedState, effective_seed_wp
from .params import Params, Randomizers
from .registry import Registry, default_registry
from .spec import PipelineSpec
from .stage import Layout, Workspace

__all__ = ["Program", "build"]

wp.set_module_options({"enable_backward": False})

#: Graph variants a program records besides the full regeneration; more run eagerly.
MAX_GRAPH_VARIANTS = 16


@wp.kernel
def _begin_kernel(
    mask: wp.array(dtype=wp.int32),
    use_mask: int,
    advance: int,
    seeds: wp.array(dtype=wp.int32),
    epochs: wp.array(dtype=wp.int32),
    active_out: wp.array(dtype=wp.int32),
    eff_seed_out: wp.array(dtype=wp.int32),
    fail_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    on = 1
    if use_mask != 0:
        if mask[e] == 0:
            on = 0
    active_out[e] = on
    if on == 0:
        return
    ep = epochs[e]
    if advance != 0:
        ep = ep + 1
        epochs[e] = ep
    eff_seed_out[e] = effective_seed_wp(seeds[e], ep)
    fail_out[e] = 0


@wp.kernel
def _commit_kernel(
    active: wp.array(dtype=wp.int32),
    epochs: wp.array(dtype=wp.int32),
    generation_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] != 0:
        generation_out[e] = epochs[e]


def _resolve_device(name):
    """The Warp device for ``TrackGenConfig.device`` (None: Warp's preferred device)."""
    if name is None:
        return wp.get_preferred_device()
    try:
        return wp.get_device(name)
    except (ValueError, RuntimeError) as exc:
        known = ", ".join(str(d) for d in wp.get_devices())
        raise ValueError(
            f"TrackGenConfig.device = {name!r} is not available here; use one of: {known}"
        ) from exc


class Program:
    """A built pipeline: fixed-batch buffers, per-env seeds and epochs, device params.

    Build with :func:`build` (or ``TrackGenerator``). Every buffer is allocated here;
    :meth:`generate` and :meth:`enqueue` allocate nothing.

    Attributes:
        spec: the :class:`PipelineSpec`.
        layout: the fixed shapes (:class:`Layout`).
        result: the :class:`~track_gen.Track`, the same instance for the program's life.
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
        device = _resolve_device(cfg.device)
        require_not_capturing(device, type(self).__name__)
        if rng is not None and seeds is not None:
            raise TypeError("pass the seeds either as rng or as seeds=, not both")
        if rng is not None and not isinstance(rng, PerEnvSeededRNG):
            raise TypeError(f"rng must be a PerEnvSeededRNG, got {type(rng).__name__}")
        if stream is not None and device.is_cpu:
            raise ValueError("stream= is only meaningful on a CUDA device; the CPU has no streams")
        registry = registry or default_registry()
        entries = [registry.get(s.kind) for s in spec.stages]
        if entries[0].cls.role != "sampler":
            raise ValueError(
                f"the first stage must be a sampler; {spec.stages[0].kind!r} is "
                f"not (samplers: {registry.samplers()})"
            )
        E = cfg.num_envs
        self.spec = spec
        self.layout = Layout(spec.family, E, cfg.N_max, cfg.num_points, device)
        self.stream = stream
        self.seeds = SeedState.create(rng if rng is not None else seeds, E, device)
        self.rng = self.seeds.rng
        result_cls = GateSequence if spec.family == "gates" else Track
        self.result = result_cls.allocate(E, cfg.N_max, device)
        self._host_stages = [
            s.name for s, e in zip(spec.stages, entries, strict=True) if not e.capturable
        ]
        self._ws = Workspace(
            layout=self.layout,
            config=cfg,
            active=wp.zeros(E, dtype=wp.int32, device=device),
            eff_seed=wp.zeros(E, dtype=wp.int32, device=device),
            fail=wp.zeros(E, dtype=wp.int32, device=device),
            line=wp.zeros(E * cfg.num_points, dtype=wp.vec2f, device=device),
            beads=wp.zeros(E * cfg.N_max, dtype=wp.vec2f, device=device),
            count=wp.zeros(E, dtype=wp.int32, device=device),
            result=self.result,
        )
        self._stages = []
        declarations = []
        for sspec, entry in zip(spec.stages, entries, strict=True):
            stage = entry.cls(sspec.name, cfg, dict(sspec.options))
            stage.resolve(registry)
            self._host_stages += stage.host_stages()
            for prefix, specs in stage.param_groups():
                for p in specs:
                    q = f"{prefix}.{p.name}"
                    default = getattr(cfg, p.config_field) if p.config_field else p.default
                    if prefix == sspec.name:
                        default = sspec.options.get(p.name, default)
                    declarations.append((q, p, sspec.options.get(q, default)))
            self._stages.append(stage)
        self.capturable = not self._host_stages
        self.params = Params(E, device, declarations)
        self.randomizers = Randomizers(self.params, dict(spec.randomize))
        staged = []
        for stage in self._stages:
            stage_params = {}
            for prefix, specs in stage.param_groups():
                for p in specs:
                    q = f"{prefix}.{p.name}"
                    stage_params[q] = self.params[q]
                    if prefix == stage.name:
                        stage_params[p.name] = self.params[q]
            stage.allocate(self._ws)
            staged.append((stage, stage_params))
        self._stages = staged
        self._regen_mask = wp.zeros(E, dtype=wp.int32, device=device)
        self._no_mask = wp.zeros(1, dtype=wp.int32, device=device)
        self.inputs = MappingProxyType({"regen_mask": self._regen_mask, **self._ws.inputs})
        self.input_info = MappingProxyType(
            {
                "regen_mask": "int32 [E]: nonzero entries select envs for masked regeneration",
                **self._ws.input_info,
            }
        )
        self.diagnostics = MappingProxyType(self._ws.diagnostics)
        self._graphs: dict = {}
        self._graph_overflow_warned = False

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

    def _check_flags(self, advance) -> None:
        if not isinstance(advance, (bool, np.bool_)):
            raise TypeError(f"advance must be a bool, got {advance!r}")

    def _check_capture(self, stream) -> bool:
        capturing = is_capturing(self.layout.device)
        if capturing and not self.capturable:
            raise NotCapturableError(
                f"stage(s) {self._host_stages} are registered with capturable=False and run on "
                "the host: call this generator outside any graph capture"
            )
        return capturing

    # ------------------------------------------------------------------ body
    def _body(self, advance: bool, mask, timer=None) -> None:
        ws, lay = self._ws, self.layout
        E = lay.num_envs
        use_mask = 0 if mask is None else 1
        wp.launch(
            _begin_kernel,
            E,
            inputs=[
                mask if mask is not None else self._no_mask,
                use_mask,
                int(advance),
                self.seeds.seeds,
                self.seeds.epochs,
            ],
            outputs=[ws.active, ws.eff_seed, ws.fail],
            device=lay.device,
        )
        self.randomizers.enqueue(ws.active, ws.eff_seed)
        for stage, params in self._stages:
            if timer is None:
                stage.enqueue(ws, params)
            else:
                with timer(stage.name):
                    stage.enqueue(ws, params)
        wp.launch(
            _commit_kernel,
            E,
            inputs=[ws.active, self.seeds.epochs],
            outputs=[self.result.generation],
            device=lay.device,
        )

    def enqueue(self, ctx=None, *, advance: bool = False, mask=None, stream=None) -> None:
        """Launch one regeneration on the stream without waiting (records into a capture).

        Args:
            ctx: optional object with a ``stream`` attribute (a course's context).
            advance: advance the epoch of the regenerated envs first.
            mask: None (every env) or a contiguous ``[E]`` int32 array; envs with
                ``mask[e] != 0`` are rebuilt, the others stay bitwise unchanged.
            stream: stream to launch on (default: ``ctx.stream``, else the program's).
        """
        self._check_flags(advance)
        self._check_mask(mask)
        self._check_capture(stream)
        if stream is None and ctx is not None:
            stream = getattr(ctx, "stream", None)
        self._run(bool(advance), mask, stream or self.stream, graph=False)

    def generate(self, seeds=None, advance: bool = False, mask=None) -> Track | GateSequence:
        """Regenerate and return :attr:`result` (the same instance every call).

        Args:
            seeds: None, or new seeds for every env (an int ``s`` gives ``s + e``, or
                ``[E]`` values); epochs are zeroed, so the batch equals a fresh generator's.
            advance: advance the epoch of the regenerated envs (a new course each).
            mask: None (every env) or a contiguous ``[E]`` int32 array selecting envs.

        On CUDA, outside a capture, each ``(advance, mask)`` variant is recorded once into
        the program's own graph and replayed; on the CPU the body runs eagerly.
        """
        self._check_flags(advance)
        self._check_mask(mask)
        capturing = self._check_capture(None)
        if seeds is not None:
            if capturing:
                raise NotCapturableError(
                    "generate(seeds=...) writes seeds from the host: call it outside the capture"
                )
            self.seeds.set(seeds)
            self.seeds.reset_epoch()
        self._run(bool(advance), mask, self.stream, graph=not capturing)
        return self.result

    def _run(self, advance: bool, mask, stream, graph: bool) -> None:
        dev = self.layout.device
        use_graph = graph and dev.is_cuda and self.capturable
        if not use_graph:
            with wp.ScopedStream(stream) if stream is not None else contextlib.nullcontext():
                self._body(advance, mask)
            return
        key = (advance, None if mask is None else mask.ptr)
        g = self._graphs.get(key)
        if g is None:
            if len(self._graphs) > MAX_GRAPH_VARIANTS:
                if not self._graph_overflow_warned:
                    self._graph_overflow_warned = True
                    warnings.warn(
                        f"{type(self).__name__}: more than {MAX_GRAPH_VARIANTS} "
                        "(advance, mask) variants; further variants run eagerly. Reuse "
                        "one mask array (inputs['regen_mask']).",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                with wp.ScopedStream(stream) if stream is not None else contextlib.nullcontext():
                    self._body(advance, mask)
                return
            with wp.ScopedCapture(device=dev, stream=stream) as cap:
                self._body(advance, mask)
            g = self._graphs[key] = cap.graph
        wp.capture_launch(g, stream=stream)

    def profile(self, calls: int = 3, advance: bool = True) -> dict[str, float]:
        """Mean wall-clock milliseconds per stage over ``calls`` eager regenerations.

        Synchronizes after every stage, so it is for benchmarks only (never inside a capture).
        With ``advance=True`` each call builds new courses.
        """
        require_not_capturing(self.layout.device, "profile()")
        times: dict[str, float] = {}
        dev = self.layout.device

        @contextlib.contextmanager
        def timer(name):
            wp.synchronize_device(dev)
            t0 = time.perf_counter()
            yield
            wp.synchronize_device(dev)
            times[name] = times.get(name, 0.0) + (time.perf_counter() - t0) * 1e3

        for _ in range(calls):
            self._body(bool(advance), None, timer)
        return {k: v / calls for k, v in times.items()}

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
