"""Checkpoints along a course: :class:`CheckpointSet` and :class:`CheckpointPlacer`.

A checkpoint is a planar opening an agent passes through: a centre, two end points ``left``
and ``right`` across the course, a unit ``tangent`` (the plane normal, the direction of
travel) and a vertical half-opening ``up_half``. A road-band track gets evenly spaced
cross-sections from :class:`CheckpointPlacer`; a gate course is its own checkpoint set
(:meth:`CheckpointSet.from_gates`, no copy). :class:`~track_gen.tools.progress.ProgressTracker`
counts passes through them.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass

import numpy as np
import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_float, check_int, check_mask
from ...core.component import Component, buffer_bytes
from ...core.exec import as_device, require_not_capturing
from ...core.extents import in_range3
from ...core.tunable import Tunable
from ...results import GateSequence, Track

wp.set_module_options({"enable_backward": False})

__all__ = [
    "MAX_CHECKPOINTS",
    "SPACING",
    "CheckpointPlacer",
    "CheckpointSet",
    "Checkpoints",
    "GateCheckpoints",
]

#: ``up_half`` of a track cross-section: no vertical limit.
UNBOUNDED_UP_HALF = 1.0e30

_NAN = wp.constant(float("nan"))
_UP_HALF = wp.constant(UNBOUNDED_UP_HALF)


@dataclass
class CheckpointSet:
    """A batch of checkpoint openings, flat and NaN-padded (env ``e`` owns rows
    ``e*M .. e*M + M - 1``; rows past ``count[e]`` are NaN). Units are track units.

    Attributes:
        position: vec3f ``[E*M]``: checkpoint centre (centerline point, or gate centre).
        left: vec3f ``[E*M]``: one end of the opening (the inner border point for tracks,
            the gate's left bar end for gates).
        right: vec3f ``[E*M]``: the other end (outer border point, or right bar end).
        tangent: vec3f ``[E*M]``: unit normal of the checkpoint plane, pointing in the
            direction of travel (a checkpoint is passed going from its negative to its
            positive side).
        up_half: float32 ``[E*M]``: vertical half-opening, measured along
            ``normalize((right - left) x tangent)`` from the midpoint of ``left``/``right``
            (``1e30`` for track cross-sections, the gate's ``half_size`` for gates).
        count: int32 ``[E]``: real checkpoints (0: the env has none).
        truncated: int32 ``[E]``: 1 when the env needed more checkpoints than the capacity at
            its last placement (they are then farther apart than the spacing); always 0 for
            gates. (The placer's ``clipped`` array.)
    """

    position: wp.array
    left: wp.array
    right: wp.array
    tangent: wp.array
    up_half: wp.array
    count: wp.array
    truncated: wp.array | None = None

    @staticmethod
    def buffers(num_envs: int, max_checkpoints: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array :meth:`allocate` makes."""
        rows = num_envs * max_checkpoints
        return [(rows, wp.vec3f)] * 4 + [(rows, wp.float32)] + [(num_envs, wp.int32)] * 2

    @classmethod
    def allocate(
        cls,
        num_envs: int,
        max_checkpoints: int,
        device: wp.context.Device | str,
        budget: AllocationBudget | None = None,
    ) -> CheckpointSet:
        """NaN rows and ``count = 0`` (each array checked against ``budget`` first).

        Args:
            num_envs: envs E, an int >= 1.
            max_checkpoints: per-env capacity M (``MAX_CHECKPOINTS``: an int in
                ``[3, 65536]``).
            device: a ``wp.Device`` or a device name this machine has (``"cpu"``,
                ``"cuda:0"``).
            budget: an :class:`~track_gen.engine.stage.AllocationBudget` to allocate
                through, or None for a fresh one on ``device``.

        The arguments are checked before anything is allocated (TypeError for the wrong
        kind, ValueError for a value out of range or a device this machine lacks)."""
        num_envs = check_int("CheckpointSet.allocate num_envs", num_envs, lo=1)
        max_checkpoints = MAX_CHECKPOINTS.check(
            max_checkpoints, "CheckpointSet.allocate max_checkpoints"
        )
        if max_checkpoints is None:
            raise TypeError(
                "CheckpointSet.allocate max_checkpoints must be an int, got None: pass the "
                f"per-env capacity ({MAX_CHECKPOINTS.range_text().removesuffix(', or None')})"
            )
        device = as_device(device, "CheckpointSet.allocate device")
        budget = budget or AllocationBudget(device, "lower max_checkpoints")
        nan = float("nan")
        rows = num_envs * max_checkpoints

        def v3():
            return budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "checkpoints")

        return cls(
            position=v3(),
            left=v3(),
            right=v3(),
            tangent=v3(),
            up_half=budget.full(rows, nan, wp.float32, "checkpoints"),
            count=budget.zeros(num_envs, wp.int32, "checkpoint counts"),
            truncated=budget.zeros(num_envs, wp.int32, "checkpoint truncation flags"),
        )

    @classmethod
    def from_gates(cls, seq: GateSequence) -> CheckpointSet:
        """The gates of ``seq`` as checkpoints, aliasing its arrays (no copy: every
        regeneration of the gate generator is seen at once).

        ``position``, ``left``, ``right`` and ``count`` are the gate arrays, ``tangent`` is
        ``seq.forward`` and ``up_half`` is ``seq.half_size`` (square openings). A gate of width
        0 can never be passed.
        """
        for name in ("position", "left", "right", "forward", "half_size", "count"):
            if not isinstance(getattr(seq, name, None), wp.array):
                raise TypeError(
                    f"from_gates(seq): seq must be a GateSequence (a GateGenerator's result), "
                    f"got {type(seq).__name__} without a wp.array {name!r}"
                )
        return cls(
            position=seq.position,
            left=seq.left,
            right=seq.right,
            tangent=seq.forward,
            up_half=seq.half_size,
            count=seq.count,
            truncated=wp.zeros(seq.count.shape[0], dtype=wp.int32, device=seq.count.device),
        )

    @property
    def num_envs(self) -> int:
        return self.count.shape[0]

    @property
    def max_checkpoints(self) -> int:
        """Per-env capacity M (the row stride)."""
        return self.position.shape[0] // self.count.shape[0]

    @property
    def device(self):
        return self.position.device

    def clone(self) -> CheckpointSet:
        """A detached deep copy (allocates: call it outside your graph)."""
        return CheckpointSet(
            **{f.name: wp.clone(getattr(self, f.name)) for f in dataclasses.fields(self)}
        )


# ---------------------------------------------------------------------------------- fields
SPACING = Tunable(
    "spacing",
    None,
    kind="float",
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units",
    doc="arc distance between checkpoints (required).",
)
MAX_CHECKPOINTS = Tunable(
    "max_checkpoints",
    None,
    kind="int",
    lo=3,
    hi=65536,
    optional=True,
    unit="checkpoints",
    doc="per-env checkpoint capacity; None ('auto') derives it from the longest loop.",
)


def capacity_for(spacing: float, max_loop_length: float, owner: str = "spacing") -> int:
    """``max(3, ceil(max_loop_length / spacing))``, refused above ``MAX_CHECKPOINTS.hi``."""
    cap = max(3, math.ceil(max_loop_length / spacing))
    if cap > MAX_CHECKPOINTS.hi:
        raise ValueError(
            f"{owner} = {spacing!r} gives {cap:,} checkpoints per env for loops up to "
            f"{max_loop_length:g} track units, more than {MAX_CHECKPOINTS.hi}: raise the "
            "spacing or pass max_checkpoints"
        )
    return cap


def construction_result(ctx):
    """The generator's result holding the construction batch, built now (eagerly, through
    the course's context) when the generator has none yet; the course's ``prepare`` then keeps
    it. For components whose capacity reads the first batch back (elevated configs declare no
    length bound)."""
    result = ctx.generator.result
    if not (result.generation.numpy() >= 0).any():
        ctx.generator.enqueue(ctx)
    return result


# ---------------------------------------------------------------------------------- kernel
@wp.func
def _lerp3(a: wp.vec3f, b: wp.vec3f, t: float) -> wp.vec3f:
    return a + t * (b - a)


@wp.kernel
def _sample_kernel(
    # inputs
    center: wp.array(dtype=wp.vec3f),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    arclen: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    bead_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    # static
    use_mask: int,
    n_max: int,
    spacing: float,
    cap: int,
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    left_out: wp.array(dtype=wp.vec3f),
    right_out: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
    up_half_out: wp.array(dtype=wp.float32),
    count_out: wp.array(dtype=wp.int32),
    clipped_out: wp.array(dtype=wp.int32),
    step_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    if use_mask != 0:
        if mask[e] == 0:
            return
    nb = bead_count[e]
    total = length[e]
    base = e * n_max
    out = e * cap
    n = int(0)
    clipped = int(0)
    step = float(0.0)
    ok = valid[e] != 0 and nb >= 3 and nb <= n_max and wp.isfinite(total) and total > 0.0
    if ok:
        # the beads' coordinates in range (core/extents.py): every interpolation stays finite
        for i in range(nb):
            rows_ok = in_range3(center[base + i]) and in_range3(inner[base + i])
            if not (rows_ok and in_range3(outer[base + i])):
                ok = False
    if ok:
        r = wp.floor(total / spacing + 0.5)  # nearest integer, halves up
        if r > float(cap):
            n = cap
            clipped = 1
        else:
            n = wp.max(int(r), 3)
        step = total / float(n)
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    for k in range(cap):
        if k < n:
            s = float(k) * step
            # largest bead i with arclen[i] <= s (arclen[0] = 0 <= s)
            lo = int(0)
            hi = nb - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if arclen[base + mid] <= s:
                    lo = mid
                else:
                    hi = mid - 1
            j = lo + 1
            a1 = total
            if j == nb:
                j = 0
            else:
                a1 = arclen[base + j]
            a0 = arclen[base + lo]
            t = float(0.0)
            if a1 > a0:
                t = wp.clamp((s - a0) / (a1 - a0), 0.0, 1.0)
            c0 = center[base + lo]
            c1 = center[base + j]
            chord = c1 - c0
            chord = wp.vec3f(chord[0], chord[1], 0.0)  # vertical checkpoint planes
            clen = wp.length(chord)
            tan = wp.vec3f(0.0, 0.0, 0.0)
            if clen > 0.0:
                tan = chord / clen
            position_out[out + k] = _lerp3(c0, c1, t)
            left_out[out + k] = _lerp3(inner[base + lo], inner[base + j], t)
            right_out[out + k] = _lerp3(outer[base + lo], outer[base + j], t)
            tangent_out[out + k] = tan
            up_half_out[out + k] = _UP_HALF
        else:
            position_out[out + k] = nan3
            left_out[out + k] = nan3
            right_out[out + k] = nan3
            tangent_out[out + k] = nan3
            up_half_out[out + k] = _NAN
    count_out[e] = n
    clipped_out[e] = clipped
    step_out[e] = step


# ---------------------------------------------------------------------------------- sampler
class CheckpointPlacer:
    """Evenly spaced cross-sections of a road-band :class:`~track_gen.Track`.

    Per env, ``n = clamp(round(length / spacing), 3, M)`` checkpoints sit at arc
    ``k * length / n`` (k = 0 .. n-1) along the closed centerline: checkpoint 0 is the
    start line at bead 0, there is no seam gap and no doubled checkpoint. Each one
    interpolates the centerline, inner and outer borders on the same segment with the same
    parameter (``left`` = inner, ``right`` = outer), its tangent is the horizontal unit chord
    of that centerline segment (the checkpoint planes are vertical through the 3D centerline
    of an elevated track) and ``up_half = 1e30`` (any height above or below the road counts).
    Invalid envs (``valid == 0``), tracks of fewer than 3 or more than ``N_max`` beads, a
    ``length`` that is not finite and positive, and beads with a centerline or border
    coordinate that is non-finite or beyond ``COORD_LIMIT`` (1e18 track units,
    :mod:`~track_gen.core.extents`) get ``count = 0`` and NaN rows: every placed checkpoint
    is finite.

    Args:
        track: the generator's :class:`~track_gen.Track` (read live by pointer: call
            :meth:`sample` after every regeneration).
        spacing: target arc distance between checkpoints, track units (``SPACING``).
        max_checkpoints: per-env capacity M (``MAX_CHECKPOINTS``). Default: derived from
            ``max_loop_length``.
        max_loop_length: keyword-only bound on any track's perimeter (track units, > 0):
            ``M = max(3, ceil(max_loop_length / spacing))``. Ignored when ``max_checkpoints``
            is given; one of the two is required.

    Attributes:
        checkpoints: the :class:`CheckpointSet` (allocated once, overwritten by
            :meth:`sample`).
        clipped: int32 ``[E]``: 1 when ``round(length / spacing)`` exceeded M at the last
            sample of the env (its checkpoints are then farther apart than ``spacing``).
        step: float32 ``[E]``: arc between consecutive checkpoints, track units (0 for an
            env without checkpoints).

    Construction allocates (outside any capture) and samples once; :meth:`sample` is
    allocation-free, one launch, and capturable.
    """

    def __init__(
        self,
        track: Track,
        spacing: float,
        max_checkpoints: int | None = None,
        *,
        max_loop_length: float | None = None,
    ):
        for name in ("center", "inner", "outer", "arclen", "length", "count", "valid"):
            if not isinstance(getattr(track, name, None), wp.array):
                raise TypeError(
                    f"CheckpointPlacer(track): track must be a Track (a TrackGenerator's "
                    f"result), got {type(track).__name__} without a wp.array {name!r}"
                )
        spacing = SPACING.check(spacing, "CheckpointPlacer spacing")
        if max_checkpoints is not None:
            cap = MAX_CHECKPOINTS.check(max_checkpoints, "CheckpointPlacer max_checkpoints")
        elif max_loop_length is not None:
            bound = check_float("max_loop_length", max_loop_length, lo=0.0, hi=1.0e12, lo_open=True)
            cap = capacity_for(spacing, bound)
        else:
            raise ValueError(
                "CheckpointPlacer needs a capacity: pass max_checkpoints (an int >= 3, the "
                "per-env checkpoint capacity) or max_loop_length= (a bound on any track's "
                "perimeter; capacity max(3, ceil(max_loop_length / spacing)))"
            )
        device = track.center.device
        require_not_capturing(device, "CheckpointPlacer construction")
        self.track = track
        self.spacing = spacing
        self.device = device
        E = track.count.shape[0]
        self._n_max = track.center.shape[0] // E
        budget = AllocationBudget(device, "raise the spacing or lower max_checkpoints")
        self.checkpoints = CheckpointSet.allocate(E, cap, device, budget)
        self.clipped = self.checkpoints.truncated
        self.step = budget.zeros(E, wp.float32, "checkpoint steps")
        self._no_mask = budget.zeros(1, wp.int32, "empty mask")
        self.sample()

    @staticmethod
    def buffers(num_envs: int, max_checkpoints: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a placer of capacity ``max_checkpoints``
        allocates (its :class:`CheckpointSet`, the steps and an empty mask)."""
        extra = [(num_envs, wp.float32), (1, wp.int32)]
        return CheckpointSet.buffers(num_envs, max_checkpoints) + extra

    @property
    def num_envs(self) -> int:
        return self.checkpoints.num_envs

    @property
    def max_checkpoints(self) -> int:
        """Per-env capacity M."""
        return self.checkpoints.max_checkpoints

    def sample(self, mask: wp.array | None = None) -> CheckpointSet:
        """Place the checkpoints of the envs with ``mask[e] != 0`` (None: every env) and
        return :attr:`checkpoints` (the same instance every call).

        ``mask`` is a contiguous ``[E]`` int32 array on the track's device; unmasked envs
        stay bitwise unchanged. One launch, no allocation, no host sync.
        """
        check_mask(mask, self.num_envs, self.device)
        t, cs = self.track, self.checkpoints
        wp.launch(
            _sample_kernel,
            self.num_envs,
            inputs=[
                t.center,
                t.inner,
                t.outer,
                t.arclen,
                t.length,
                t.count,
                t.valid,
                self._no_mask if mask is None else mask,
                0 if mask is None else 1,
                self._n_max,
                self.spacing,
                self.max_checkpoints,
            ],
            outputs=[
                cs.position,
                cs.left,
                cs.right,
                cs.tangent,
                cs.up_half,
                cs.count,
                self.clipped,
                self.step,
            ],
            device=self.device,
        )
        return cs


class Checkpoints(Component):
    """Course component ``"checkpoints"``: checkpoints every ``spacing`` along each env's
    centerline, refreshed for the regenerated envs (``on_generate``).

    Args:
        spacing: track units between checkpoints (``SPACING``).
        max_checkpoints: per-env capacity (``MAX_CHECKPOINTS``), or ``"auto"``: the longest
            track the generator can produce, ``max(3, ceil(max_loop_length / spacing))`` with
            ``max_loop_length = (N_max + 1) * bead spacing`` (a longer loop is TRUNCATED and
            invalid), so no valid env is ever clipped; an elevated config (``z_profile`` not
            flat) declares no such bound, so the longest valid loop of the construction batch
            (read back; built at attach when the generator has none yet). When a capacity the
            course chose clips a valid env of the first batch, construction warns once.

    ``result`` is the :class:`CheckpointSet` (a per-generation result: read it through
    ``course.checkpoints``); ``utility`` the :class:`CheckpointPlacer`
    (``course.checkpoint_sampler``).
    """

    name = "checkpoints"
    families = ("track",)

    def __init__(
        self, spacing: float, max_checkpoints: int | str | None = "auto", *, name: str | None = None
    ):
        super().__init__(name=name)
        self.spacing = SPACING.check(spacing, "Checkpoints spacing")
        if isinstance(max_checkpoints, str) and max_checkpoints == "auto":
            max_checkpoints = None
        self.max_checkpoints = MAX_CHECKPOINTS.check(max_checkpoints, "Checkpoints max_checkpoints")

    def attach(self, ctx) -> None:
        track = ctx.generator.result
        bound = None
        chosen = self.max_checkpoints is None
        if chosen:
            bound = self._longest_loop(ctx)
            capacity_for(self.spacing, bound, "checkpoint_spacing")
        self.utility = CheckpointPlacer(
            track, self.spacing, self.max_checkpoints, max_loop_length=bound
        )
        self.result = self.utility.checkpoints
        if chosen:
            clipped = (self.utility.clipped.numpy() != 0) & (track.valid.numpy() != 0)
            if clipped.any():
                warnings.warn(
                    f"Checkpoints: the capacity the course chose ({self.utility.max_checkpoints} "
                    f"per env) clips {int(clipped.sum())} valid env(s) of the first batch "
                    "(their checkpoints are farther apart than the spacing; "
                    "checkpoints.truncated says which): pass a larger max_checkpoints",
                    RuntimeWarning,
                    stacklevel=2,
                )

    def planned_bytes(self, layout, config) -> int:
        """The :class:`CheckpointPlacer`'s buffers at the capacity ``attach`` chooses: the
        explicit ``max_checkpoints``, else ``capacity_for(spacing, (N_max + 1) * bead
        spacing)`` (the flat bound; an elevated config's capacity reads its first batch, so
        this plan is a lower bound there and ``attach`` checks the rest as it allocates)."""
        cap = self.max_checkpoints
        if cap is None:
            bead = getattr(config, "resolved_spacing", None)
            if bead is None:
                return 0  # attach refuses this generator
            cap = capacity_for(self.spacing, (layout.N_max + 1) * float(bead), "checkpoint_spacing")
        return buffer_bytes(CheckpointPlacer.buffers(layout.num_envs, cap))

    def _longest_loop(self, ctx) -> float:
        """The longest loop the generator can produce: ``(N_max + 1) * bead spacing`` for a
        flat track config; an elevated config declares no bound (its 3D length exceeds the
        plan-view one), so the readback of the construction batch (built here when the
        generator has none yet)."""
        cfg = getattr(ctx.generator, "config", None)
        bead = getattr(cfg, "resolved_spacing", None)
        if bead is None:
            raise ValueError(
                "Checkpoints(max_checkpoints='auto') needs a generator with a bead spacing "
                "(a TrackGenerator); pass max_checkpoints=<int >= 3>"
            )
        if getattr(cfg, "z_profile", "flat") == "flat":
            return (ctx.layout.N_max + 1) * float(bead)
        track = construction_result(ctx)
        length = track.length.numpy()
        ok = (track.valid.numpy() != 0) & np.isfinite(length)
        longest = float(length[ok].max()) if ok.any() else 0.0
        return max(longest, 3.0 * self.spacing)

    def on_generate(self, ctx, mask) -> None:
        self.utility.sample(mask)


class GateCheckpoints(Component):
    """Course component ``"checkpoints"`` of a gate course: one checkpoint per gate, the gate
    itself (its plane, its square opening of half-size ``half_size`` in both axes of the
    plane, passed along ``forward``).

    ``result`` is :meth:`CheckpointSet.from_gates` of the generator's result: it aliases the
    gate arrays (no copy), so every regeneration, masked or not, is seen at once and an
    unmasked env's checkpoints stay bitwise its gates. ``utility`` is None (nothing is
    placed). :class:`~track_gen.tools.progress.Progress` reads it as in track mode, counting
    a pass only through the opening.
    """

    name = "checkpoints"
    families = ("gates",)

    def attach(self, ctx) -> None:
        result = ctx.generator.result
        if not isinstance(result, GateSequence):
            raise TypeError(
                "GateCheckpoints needs a gate generator (its result a GateSequence), got a "
                f"{type(result).__name__}: a track course places its checkpoints with "
                "tools.Checkpoints(spacing)"
            )
        self.result = CheckpointSet.from_gates(result)

    def planned_bytes(self, layout, config) -> int:
        """The ``truncated`` flags of :meth:`CheckpointSet.from_gates` (the rest aliases the
        gates)."""
        return buffer_bytes([(layout.num_envs, wp.int32)])
