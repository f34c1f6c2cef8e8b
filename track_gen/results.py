"""Result containers: :class:`Track` (stable buffers, overwritten in place)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import warp as wp

from .core.budget import AllocationBudget
from .core.rows import RowBatch
from .core.units import TRACK_UNITS

__all__ = ["FailBit", "GateSequence", "Track"]

wp.set_module_options({"enable_backward": False})

_NAN = wp.constant(float("nan"))


class FailBit(enum.IntFlag):
    """Why an env is invalid (``fail_mask[e]``); ``valid[e] == (fail_mask[e] == 0)``.

    TURNING: total turning of the centerline is not +-2*pi within ``turning_tol``
        (self-crossing or figure-eight loop).
    THICKNESS: a curvature radius or half a non-neighbour distance is below
        ``(1 - thickness_tol) * half_width``: the road band overlaps itself.
    TRUNCATED: the loop needed more than ``N_max`` beads; raise ``N_max``.
    NONFINITE: the sampler or a stage produced NaN/inf coordinates, or coordinates too large
        for a geometric test to decide in float32 (gate bars beyond 1e18).
    DEGENERATE: fewer than 4 beads or zero length (course far too small for the spacing);
        for gates, a gate whose tangent vanishes (two gates at one point).
    GATE_COUNT: a gate course has fewer than ``min_gates`` or more than ``max_gates`` gates.
    GATE_SPACING: two gate centres are closer than ``2 * gate_radius`` in plan view (the
        separation did not converge).
    CROSSING_BARS: the bars of two gates cross in plan view (wide gates on a tight course;
        lower ``gate_width`` or raise ``scale``).
    GRADE: consecutive gates climb more than ``z_valid_grade``.
    PARAM_RANGE: a dynamic parameter of the env (``generator.params``) was NaN, inf or outside
        its declared range when the env was built (a value written into the array directly;
        writes through ``params[name] = ...`` are refused on the host instead).
    """

    TURNING = 1
    THICKNESS = 2
    TRUNCATED = 4
    NONFINITE = 8
    DEGENERATE = 16
    GATE_COUNT = 32
    GATE_SPACING = 64
    CROSSING_BARS = 128
    GRADE = 256
    PARAM_RANGE = 512


def _full_fn(device, budget: AllocationBudget | None, what: str):
    """``full(n, value, dtype)`` through ``budget`` (a fresh one on ``device`` when None)."""
    budget = budget or AllocationBudget(device)
    return lambda n, value, dtype: budget.full(n, value, dtype, what)


@wp.func
def _merge_bits(bits: wp.int32, extra: wp.int32, valid: wp.int32):
    """(fail_mask | extra, valid with every set bit clearing it)."""
    m = bits | extra
    v = valid
    if m != 0:
        v = 0
    return m, v


@wp.func
def _commit_rows(
    src: wp.array(dtype=Any), base: int, rows: int, n_max: int, pad: Any, dst: wp.array(dtype=Any)
):
    """Rows ``base .. base + n_max`` of ``dst``: the first ``rows`` copied from ``src``, the
    rest written ``pad`` without reading them (a stale or poisoned row cannot survive a
    regeneration)."""
    for i in range(rows):
        dst[base + i] = src[base + i]
    for i in range(rows, n_max):
        dst[base + i] = pad


@wp.func
def _commit_env(
    e: int,
    fail: wp.array(dtype=wp.int32),
    epoch: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    fail_mask: wp.array(dtype=wp.int32),
    count_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
    fail_mask_out: wp.array(dtype=wp.int32),
    generation_out: wp.array(dtype=wp.int32),
):
    """Env ``e``'s count, its fail bits merged with ``fail`` (and the validity they leave) and
    its generation ``epoch[e]``."""
    count_out[e] = count[e]
    m, v = _merge_bits(fail_mask[e], fail[e], valid[e])
    fail_mask_out[e] = m
    valid_out[e] = v
    generation_out[e] = epoch[e]


@wp.kernel
def _commit_track_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    fail: wp.array(dtype=wp.int32),
    epoch: wp.array(dtype=wp.int32),
    outer: wp.array(dtype=wp.vec3f),
    center: wp.array(dtype=wp.vec3f),
    inner: wp.array(dtype=wp.vec3f),
    tangent: wp.array(dtype=wp.vec3f),
    normal: wp.array(dtype=wp.vec3f),
    arclen: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    fail_mask: wp.array(dtype=wp.int32),
    winding: wp.array(dtype=wp.float32),
    # static
    n_max: int,
    # outputs
    outer_out: wp.array(dtype=wp.vec3f),
    center_out: wp.array(dtype=wp.vec3f),
    inner_out: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
    normal_out: wp.array(dtype=wp.vec3f),
    arclen_out: wp.array(dtype=wp.float32),
    length_out: wp.array(dtype=wp.float32),
    count_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
    fail_mask_out: wp.array(dtype=wp.int32),
    winding_out: wp.array(dtype=wp.float32),
    generation_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    base = e * n_max
    rows = wp.clamp(count[e], 0, n_max)
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    _commit_rows(outer, base, rows, n_max, nan3, outer_out)
    _commit_rows(center, base, rows, n_max, nan3, center_out)
    _commit_rows(inner, base, rows, n_max, nan3, inner_out)
    _commit_rows(tangent, base, rows, n_max, nan3, tangent_out)
    _commit_rows(normal, base, rows, n_max, nan3, normal_out)
    _commit_rows(arclen, base, rows, n_max, _NAN, arclen_out)
    length_out[e] = length[e]
    winding_out[e] = winding[e]
    _commit_env(
        e, fail, epoch, count, valid, fail_mask, count_out, valid_out, fail_mask_out, generation_out
    )


@wp.kernel
def _commit_gates_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    fail: wp.array(dtype=wp.int32),
    epoch: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    tangent: wp.array(dtype=wp.vec3f),
    forward: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_size: wp.array(dtype=wp.float32),
    left: wp.array(dtype=wp.vec3f),
    right: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    fail_mask: wp.array(dtype=wp.int32),
    # static
    max_gates: int,
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
    forward_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
    half_size_out: wp.array(dtype=wp.float32),
    left_out: wp.array(dtype=wp.vec3f),
    right_out: wp.array(dtype=wp.vec3f),
    count_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
    fail_mask_out: wp.array(dtype=wp.int32),
    generation_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    base = e * max_gates
    rows = wp.clamp(count[e], 0, max_gates)
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    _commit_rows(position, base, rows, max_gates, nan3, position_out)
    _commit_rows(tangent, base, rows, max_gates, nan3, tangent_out)
    _commit_rows(forward, base, rows, max_gates, nan3, forward_out)
    _commit_rows(
        orientation, base, rows, max_gates, wp.quatf(_NAN, _NAN, _NAN, _NAN), orientation_out
    )
    _commit_rows(half_size, base, rows, max_gates, _NAN, half_size_out)
    _commit_rows(left, base, rows, max_gates, nan3, left_out)
    _commit_rows(right, base, rows, max_gates, nan3, right_out)
    _commit_env(
        e, fail, epoch, count, valid, fail_mask, count_out, valid_out, fail_mask_out, generation_out
    )


@dataclass
class Track(RowBatch):
    """A batch of road-band tracks, flat and NaN-padded (env ``e`` owns rows
    ``e*N_max .. e*N_max + N_max - 1``; rows past ``count[e]`` are NaN).

    Attributes:
        outer: vec3f ``[E*N_max]``: outer border (the larger of the two offset loops).
        center: vec3f ``[E*N_max]``: centerline beads, arc-uniform, z = 0.
        inner: vec3f ``[E*N_max]``: inner border; ``|outer[i]-center[i]| = half_width``.
        tangent: vec3f ``[E*N_max]``: unit central-difference tangent.
        normal: vec3f ``[E*N_max]``: plan-view left normal ``(-t.y, t.x, 0)``.
        arclen: float32 ``[E*N_max]``: arc length before bead i (0 at i = 0), track units.
        length: float32 ``[E]``: closed perimeter (closing segment included).
        count: int32 ``[E]``: real beads.
        valid: int32 ``[E]``: 1 when ``fail_mask == 0``.
        fail_mask: int32 ``[E]``: :class:`FailBit` flags.
        winding: float32 ``[E]``: +1 counter-clockwise, -1 clockwise, 0 degenerate.
        generation: int32 ``[E]``: epoch the env's course was built with (-1: never built).
        unit: the unit of every length above (``"m"`` or ``"track units"``: the config's
            ``unit``); speeds derived from the track are ``<unit>/s``.
    """

    outer: wp.array
    center: wp.array
    inner: wp.array
    tangent: wp.array
    normal: wp.array
    arclen: wp.array
    length: wp.array
    count: wp.array
    valid: wp.array
    fail_mask: wp.array
    winding: wp.array
    generation: wp.array

    #: The unit of every length (not a dataclass field: set by the program, kept by clone()).
    unit = TRACK_UNITS
    _host_attrs = ("unit",)
    _row_arrays = ("outer", "center", "inner", "tangent", "normal", "arclen")
    _env_arrays = ("length", "count", "valid", "fail_mask", "winding", "generation")

    @classmethod
    def allocate(cls, num_envs: int, n_max: int, device, budget=None) -> Track:
        """NaN-filled buffers, ``valid = 0`` and ``generation = -1`` until built (each array
        checked against ``budget``, an :class:`~track_gen.engine.stage.AllocationBudget`,
        before it is allocated)."""
        full = _full_fn(device, budget, "result")
        nan = float("nan")
        rows = num_envs * n_max

        def v3():
            return full(rows, wp.vec3f(nan, nan, nan), wp.vec3f)

        return cls(
            outer=v3(),
            center=v3(),
            inner=v3(),
            tangent=v3(),
            normal=v3(),
            arclen=full(rows, nan, wp.float32),
            length=full(num_envs, 0.0, wp.float32),
            count=full(num_envs, 0, wp.int32),
            valid=full(num_envs, 0, wp.int32),
            fail_mask=full(num_envs, 0, wp.int32),
            winding=full(num_envs, 0.0, wp.float32),
            generation=full(num_envs, -1, wp.int32),
        )

    def commit(self, staged: Track, active: wp.array, fail: wp.array, epoch: wp.array) -> None:
        """Copy the active envs' rows of ``staged`` into this result; ``fail_mask`` gains the
        ``fail`` bits, ``valid`` drops where any bit is set, ``generation = epoch``.

        Rows below the env's new count are copied; the padding is written NaN."""
        E = self.num_envs
        wp.launch(
            _commit_track_kernel,
            E,
            inputs=[active, fail, epoch, *staged.arrays(exclude=("generation",)), self.N_max],
            outputs=self.arrays(),
            device=self.count.device,
        )

    @property
    def N_max(self) -> int:
        """Per-env capacity (the row stride, :attr:`rows_per_env`)."""
        return self.rows_per_env


@dataclass
class GateSequence(RowBatch):
    """A batch of gate courses, flat and NaN-padded (env ``e`` owns rows
    ``e*max_gates .. e*max_gates + max_gates - 1``; rows past ``count[e]`` are NaN).

    Attributes:
        position: vec3f ``[E*max_gates]``: gate centres, track units.
        tangent: vec3f ``[E*max_gates]``: unit central difference of the neighbouring gates.
        forward: vec3f ``[E*max_gates]``: unit normal of the gate plane, the direction a gate
            is passed in (the horizontal tangent for ``yaw_only``, the tangent otherwise).
        orientation: quatf ``[E*max_gates]`` (x, y, z, w): roll-free frame, local x = forward,
            y = left, z = up.
        half_size: float32 ``[E*max_gates]``: half the opening width (``gate_width / 2``).
        left, right: vec3f ``[E*max_gates]``: bar end points ``position +- half_size * left``.
        count: int32 ``[E]``: real gates.
        valid: int32 ``[E]``: 1 when ``fail_mask == 0``.
        fail_mask: int32 ``[E]``: :class:`FailBit` flags.
        generation: int32 ``[E]``: epoch the env's course was built with (-1: never built).
        unit: the unit of every length above (the config's ``unit``).
    """

    position: wp.array
    tangent: wp.array
    forward: wp.array
    orientation: wp.array
    half_size: wp.array
    left: wp.array
    right: wp.array
    count: wp.array
    valid: wp.array
    fail_mask: wp.array
    generation: wp.array

    unit = TRACK_UNITS
    _host_attrs = ("unit",)
    _row_arrays = ("position", "tangent", "forward", "orientation", "half_size", "left", "right")
    _env_arrays = ("count", "valid", "fail_mask", "generation")

    @classmethod
    def allocate(cls, num_envs: int, max_gates: int, device, budget=None) -> GateSequence:
        """NaN-filled buffers, ``valid = 0`` and ``generation = -1`` until built (checked
        against ``budget`` like :meth:`Track.allocate`)."""
        full = _full_fn(device, budget, "result")
        nan = float("nan")
        rows = num_envs * max_gates

        def v3():
            return full(rows, wp.vec3f(nan, nan, nan), wp.vec3f)

        return cls(
            position=v3(),
            tangent=v3(),
            forward=v3(),
            orientation=full(rows, wp.quatf(nan, nan, nan, nan), wp.quatf),
            half_size=full(rows, nan, wp.float32),
            left=v3(),
            right=v3(),
            count=full(num_envs, 0, wp.int32),
            valid=full(num_envs, 0, wp.int32),
            fail_mask=full(num_envs, 0, wp.int32),
            generation=full(num_envs, -1, wp.int32),
        )

    def commit(
        self, staged: GateSequence, active: wp.array, fail: wp.array, epoch: wp.array
    ) -> None:
        """Copy the active envs' rows of ``staged`` into this result (see
        :meth:`Track.commit`)."""
        wp.launch(
            _commit_gates_kernel,
            self.num_envs,
            inputs=[active, fail, epoch, *staged.arrays(exclude=("generation",)), self.max_gates],
            outputs=self.arrays(),
            device=self.count.device,
        )

    @property
    def max_gates(self) -> int:
        """Per-env capacity (the row stride, :attr:`rows_per_env`)."""
        return self.rows_per_env
