"""The stage interface every pipeline stage (built-in or plugin) implements, the layout fields
every generator has, and the shared workspace with its allocation budget."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import warp as wp

from ..core.budget import AllocationBudget
from ..core.layout import PER_ENV
from ..core.tunable import Tunable, Values, resolve_values
from ..seeds import NUM_ENVS
from .threads import CPU_THREADS

__all__ = [
    "LAYOUT_FIELDS",
    "Layout",
    "Stage",
    "Tunable",
    "Workspace",
]

# ---------------------------------------------------------------------------- layout fields
GENERATOR = Tunable(
    "generator",
    "bezier",
    kind="name",
    doc="centerline sampler: a registered sampler stage (bezier, checkpoint, hull, polar, "
    "repulsive, voronoi, or a plugin's namespaced name).",
)
DEVICE = Tunable(
    "device",
    None,
    kind="device",
    doc="Warp device ('cpu', 'cuda:0'); None is Warp's preferred device (CUDA when present).",
)
NUM_POINTS = Tunable(
    "num_points",
    256,
    lo=16,
    hi=16384,
    unit="points",
    doc="resolution of the sampler's closed centerline, before constant-spacing resampling.",
)
#: Largest per-env bead capacity: one env's regeneration of a loop that fills it costs about
#: 0.3 s on a loaded 2-core CPU (1.1 s at 8192 beads; benchmarks/work_bounds.py).
N_MAX_HI = 4096
N_MAX = Tunable(
    "N_max",
    384,
    lo=8,
    hi=N_MAX_HI,
    unit="beads",
    doc="per-env bead capacity; a loop needing more beads is truncated and marked invalid "
    "(FailBit.TRUNCATED). A filled loop costs O(N_max^2) per env: about 0.07 s at 2048 beads "
    "and 0.3 s at 4096 on a loaded 2-core CPU, before the relaxation's sweeps "
    "(docs/performance.md).",
)
#: Fields every generator's config has (the track config adds N_max).
LAYOUT_FIELDS = (GENERATOR, NUM_ENVS, DEVICE, CPU_THREADS, NUM_POINTS)


@dataclass(frozen=True)
class Layout:
    """The fixed shapes of a generator (never change after construction).

    Attributes:
        family: ``"track"`` or ``"gates"``.
        num_envs: batch size E.
        N_max: per-env capacity, the stride of every per-row result array (beads for tracks,
            ``max_gates`` for gates).
        num_points: sampler output resolution (stride of ``Workspace.line``).
        device: the Warp device.
        kernel_layout: ``"per_env"`` or ``"per_item"`` (``config.kernel_layout`` resolved for
            the device by :func:`resolve_kernel_layout`): the thread layout of the stages that
            implement both.
    """

    family: str
    num_envs: int
    N_max: int
    num_points: int
    device: Any
    kernel_layout: str = PER_ENV


@dataclass
class Workspace:
    """Buffers shared between stages, allocated once by the program.

    Attributes:
        layout: the :class:`Layout`.
        config: the config the pipeline was built from (``TrackGenConfig`` / ``GateGenConfig``).
        budget: the :class:`AllocationBudget`; stages allocate through :meth:`zeros`.
        active: int32 ``[E]``: 1 for envs rebuilt by the current call (mask), else 0.
            Every stage skips inactive envs, which therefore stay bitwise unchanged.
        eff_seed: int32 ``[E]``: effective seed of each env for the current call.
        fail: int32 ``[E]``: :class:`~track_gen.FailBit` flags raised so far this call.
        line: vec2f ``[E*num_points]``: the sampler's closed centerline (written by the sampler).
        beads: vec2f ``[E*N_max]``: constant-spacing beads (resample -> relax -> inflate).
        count: int32 ``[E]``: real beads in ``beads``.
        line_width: vec2f ``[E*num_points]`` or None: per-point road widths ``(left, right)``
            of ``line`` (track units, left = the side of the plan-view left normal), written
            by a sampler that has them (``real_track``); None: the constant ``half_width``.
        bead_width: vec2f ``[E*N_max]`` or None: ``line_width`` resampled to the beads
            (``resample``), read by ``inflate`` (border offsets) and ``validate``
            (thickness against the local width); NaN past ``count``.
        gate_tangent: vec3f ``[E*N_max]`` or None: the directions the gates face, written by
            a gate sampler that places the gates itself (``gate_table``); ``gate_frames``
            faces each gate along it instead of its neighbours' central difference. None:
            the central difference.
        line_level: vec2f ``[E*num_points]`` or None: per-point overpass levels of ``line``
            ``(deck, crossings)``, written by a sampler of real circuits whose centre line
            crosses itself on a bridge (``real_track``): ``deck`` is ``+c`` on the upper and
            ``-c`` on the lower road within crossing ``c``'s zone (1-based), 0 elsewhere;
            ``crossings`` the loop's number of such crossings. None: no overpass.
        bead_level: vec2f ``[E*N_max]`` or None: ``line_level`` resampled to the beads
            (``resample``), read by ``validate`` (beads on the two decks of one crossing are
            not too close, and the turning of a loop with ``k`` crossings is ``2 pi m`` with
            ``m = k + 1`` mod 2, ``|m| <= k + 1``); NaN past ``count``.
        result: the staging :class:`~track_gen.Track` / :class:`~track_gen.GateSequence` the
            stages write; the program commits the rebuilt envs' rows to the generator's result
            only once every stage has been launched, so a stage that raises leaves the result
            unchanged.
        diagnostics: name -> device array that stages expose (e.g. relax overflow counts).
        inputs: name -> stable device array a stage reads and the user writes in place
            (declared with :meth:`add_input`; exposed as ``generator.inputs``).
        input_info: name -> description of each input.
        env_lo: the global index of env 0 of this workspace: 0 for the whole batch, ``lo``
            for an env range ``[lo, hi)`` run on its own CPU thread (whose arrays are the
            batch's arrays cut to the range). A kernel that needs an env's global index
            (anything but indexing the workspace's arrays) adds it.
    """

    layout: Layout
    config: Any
    budget: AllocationBudget
    active: wp.array
    eff_seed: wp.array
    fail: wp.array
    line: wp.array
    beads: wp.array
    count: wp.array
    result: Any
    diagnostics: dict = dataclasses.field(default_factory=dict)
    line_width: Any = None
    bead_width: Any = None
    gate_tangent: Any = None
    line_level: Any = None
    bead_level: Any = None
    inputs: dict = dataclasses.field(default_factory=dict)
    input_info: dict = dataclasses.field(default_factory=dict)
    env_lo: int = 0

    def zeros(self, count: int, dtype, what: str) -> wp.array:
        """A zero-filled ``[count]`` scratch array on the layout's device, checked against the
        allocation budget first (``what`` names it in the error)."""
        return self.budget.zeros(count, dtype, what)

    def add_input(self, name: str, array: wp.array, doc: str) -> wp.array:
        """Expose ``array`` as a user-writable generator input named ``name``
        (``"<stage>.<field>"``). Every regeneration and every replay reads it in place."""
        if name in self.inputs or name == "regen_mask":
            raise ValueError(f"generator input {name!r} is declared twice")
        self.inputs[name] = array
        self.input_info[name] = doc
        return array


class Stage:
    """Base class of a pipeline stage.

    A stage is built once per program with ``Stage(name, config, options)``; it allocates its
    scratch in :meth:`allocate` (through ``ws.zeros``) and launches its kernels in
    :meth:`enqueue`, which must not allocate, synchronize or read device data on the host
    (unless the stage is registered with ``capturable=False``). It reads and writes only the
    rows of envs with ``ws.active[e] != 0``.

    Class attributes:
        role: ``"sampler"`` (writes ``ws.line``) or ``"process"`` (anything after).
        families: the pipeline families the stage works in (``("track",)``, ``("gates",)``),
            or None for both; a pipeline of another family is refused before anything is
            built.
        validates: True for a stage that writes ``result.valid`` and ``result.fail_mask`` of
            every active env (``validate``, ``gate_validate``); every pipeline needs one, so
            that ``valid[e] == (fail_mask[e] == 0)`` holds for every env it builds.
        FIELDS: the stage's tunables (:class:`~track_gen.pipeline.Tunable`), static and
            dynamic, each declared once. Their values are in ``self.values``: a
            ``StageSpec`` option of the field's name, else the config field of that name, else
            the declared default, each checked against the declaration.
        OPTIONS: names of further ``StageSpec`` options the stage reads itself from
            ``self.options`` (any other unknown option is refused).
    """

    role: ClassVar[str] = "process"
    families: ClassVar[tuple[str, ...] | None] = None
    validates: ClassVar[bool] = False
    FIELDS: ClassVar[tuple[Tunable, ...]] = ()
    OPTIONS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, name: str, config, options: dict | None = None):
        self.name = name
        self.config = config
        self.options = dict(options or {})
        self.values: Values = resolve_values(
            type(self).FIELDS,
            config,
            self.options,
            f"StageSpec({name!r})",
            extra=type(self).OPTIONS,
        )

    def resolves(self) -> tuple[str, ...]:
        """The stage kinds :meth:`resolve` looks up (a composite's children; default none), so
        that a spec naming a kind not registered yet is checked when it is built."""
        return ()

    def resolve(self, registry) -> None:
        """Look up other stages in ``registry`` (composite stages); called before params."""

    def dynamic_fields(self) -> list[tuple[str, Tunable, float]]:
        """``(public name, tunable, initial value)`` of every dynamic field this stage reads;
        default: its own dynamic FIELDS as ``"<name>.<field>"``."""
        return [
            (f"{self.name}.{t.name}", t, self.values[t.name])
            for t in type(self).FIELDS
            if t.dynamic
        ]

    def param_arrays(self, params) -> dict:
        """The ``params`` argument of :meth:`enqueue`: each of :meth:`dynamic_fields`' arrays
        from ``params`` (a mapping by public name), by public name and, for the stage's own
        fields, by field name."""
        out = {}
        for q, _, _ in self.dynamic_fields():
            out[q] = params[q]
            if q.startswith(self.name + "."):
                out[q[len(self.name) + 1 :]] = params[q]
        return out

    def host_stages(self) -> list[str]:
        """Names of contained stages registered with ``capturable=False`` (composites)."""
        return []

    def allocate(self, ws: Workspace) -> None:
        """Allocate scratch buffers with ``ws.zeros`` / ``ws.budget`` and nothing else
        (called outside any capture: once for the program, and before that for one and for two
        envs, by :meth:`AllocationBudget.plan`, on fresh stage instances)."""

    def enqueue(self, ws: Workspace, params: dict) -> None:
        """Launch the stage's kernels on the current stream.

        Args:
            ws: the shared :class:`Workspace`.
            params: ``[E]`` float32 device array of each dynamic field, by public name
                (``"bezier.rad"``) and, for the stage's own fields, by field name (``"rad"``).
        """
        raise NotImplementedError(f"stage {type(self).__name__} must implement enqueue()")
