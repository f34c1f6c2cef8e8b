"""Result containers: :class:`Track` (stable buffers, overwritten in place)."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

import warp as wp

__all__ = ["FailBit", "GateSequence", "Track"]


class FailBit(enum.IntFlag):
    """Why an env is invalid (``fail_mask[e]``); ``valid[e] == (fail_mask[e] == 0)``.

    TURNING: total turning of the centerline is not +-2*pi within ``turning_tol``
        (self-crossing or figure-eight loop).
    THICKNESS: a curvature radius or half a non-neighbour distance is below
        ``(1 - relax_tol) * half_width``: the road band overlaps itself.
    TRUNCATED: the loop needed more than ``N_max`` beads; raise ``N_max``.
    NONFINITE: the sampler or a stage produced NaN/inf coordinates.
    DEGENERATE: fewer than 4 beads or zero length (course far too small for the spacing);
        for gates, a gate whose tangent vanishes (two gates at one point).
    GATE_COUNT: a gate course has fewer than ``min_gates`` or more than ``max_gates`` gates.
    GATE_SPACING: two gate centres are closer than ``2 * gate_radius`` in plan view (the
        separation did not converge).
    CROSSING_BARS: the bars of two gates cross in plan view (wide gates on a tight course;
        lower ``gate_width`` or raise ``scale``).
    GRADE: consecutive gates climb more than ``z_valid_grade``.
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


@dataclass
class Track:
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

    @classmethod
    def allocate(cls, num_envs: int, n_max: int, device) -> Track:
        """NaN-filled buffers, ``valid = 0`` and ``generation = -1`` until built."""
        nan3 = wp.vec3f(float("nan"), float("nan"), float("nan"))
        rows = num_envs * n_max

        def v3():
            return wp.full(rows, nan3, dtype=wp.vec3f, device=device)

        return cls(
            outer=v3(),
            center=v3(),
            inner=v3(),
            tangent=v3(),
            normal=v3(),
            arclen=wp.full(rows, float("nan"), dtype=wp.float32, device=device),
            length=wp.zeros(num_envs, dtype=wp.float32, device=device),
            count=wp.zeros(num_envs, dtype=wp.int32, device=device),
            valid=wp.zeros(num_envs, dtype=wp.int32, device=device),
            fail_mask=wp.zeros(num_envs, dtype=wp.int32, device=device),
            winding=wp.zeros(num_envs, dtype=wp.float32, device=device),
            generation=wp.full(num_envs, -1, dtype=wp.int32, device=device),
        )

    @property
    def num_envs(self) -> int:
        return self.count.shape[0]

    @property
    def N_max(self) -> int:
        return self.center.shape[0] // self.count.shape[0]

    def clone(self) -> Track:
        """A detached deep copy (allocates: call it outside your graph)."""
        return Track(**{f.name: wp.clone(getattr(self, f.name)) for f in dataclasses.fields(self)})


@dataclass
class GateSequence:
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

    @classmethod
    def allocate(cls, num_envs: int, max_gates: int, device) -> GateSequence:
        """NaN-filled buffers, ``valid = 0`` and ``generation = -1`` until built."""
        nan = float("nan")
        rows = num_envs * max_gates

        def v3():
            return wp.full(rows, wp.vec3f(nan, nan, nan), dtype=wp.vec3f, device=device)

        return cls(
            position=v3(),
            tangent=v3(),
            forward=v3(),
            orientation=wp.full(rows, wp.quatf(nan, nan, nan, nan), dtype=wp.quatf, device=device),
            half_size=wp.full(rows, nan, dtype=wp.float32, device=device),
            left=v3(),
            right=v3(),
            count=wp.zeros(num_envs, dtype=wp.int32, device=device),
            valid=wp.zeros(num_envs, dtype=wp.int32, device=device),
            fail_mask=wp.zeros(num_envs, dtype=wp.int32, device=device),
            generation=wp.full(num_envs, -1, dtype=wp.int32, device=device),
        )

    @property
    def num_envs(self) -> int:
        return self.count.shape[0]

    @property
    def max_gates(self) -> int:
        return self.position.shape[0] // self.count.shape[0]

    def clone(self) -> GateSequence:
        """A detached deep copy (allocates: call it outside your graph)."""
        return GateSequence(
            **{f.name: wp.clone(getattr(self, f.name)) for f in dataclasses.fields(self)}
        )
