"""The extents every layer shares: the size of a sampler's loop (``EXTENT``), the input
range the tools' kernels are safe for (``COORD_LIMIT``, the gate validator's decidable
extent too), and the functions that apply the range.

Every tool works in float32. Two rules keep its arithmetic finite for any input:

* **Course data** (a Track's beads, a GateSequence's gates, a CheckpointsResult's positions): a
  coordinate is *in range* when it is finite and ``|x| <= COORD_LIMIT`` (1e18 track units,
  the extent beyond which the gate validator already calls a course ``NONFINITE``). A tool
  uses an env (or a gate, a post, a checkpoint) only when the coordinates it reads are in
  range; anything else answers as documented for an env without a course.
* **Per-step poses** (agent positions, box centres and half extents): a finite coordinate is
  clamped to ``[-COORD_LIMIT, COORD_LIMIT]`` before the test (a pose within the limit is
  used bit for bit); a non-finite one marks the slot inactive, as before. Distances,
  squared distances and sums of in-range coordinates and clamped poses then stay far below
  the float32 maximum (3.4e38): no overflow, no inf, no NaN. A pose beyond the limit is
  answered as the clamped pose: beyond any course, so off the road / clear of every gate,
  with a finite distance.
* **Quaternions** carry no scale: :func:`scaled_quat` divides a finite quaternion whose
  largest component lies outside ``[2**-30, 2**30]`` by that component first, so the
  squares and products the rotation needs cannot overflow (1e19 and above) or underflow
  (1e-19 and below); a quaternion inside that range is used bit for bit.
"""

from __future__ import annotations

import warp as wp

wp.set_module_options({"enable_backward": False})

__all__ = ["COORD_LIMIT", "EXTENT", "QUAT_SCALE_RANGE"]

#: Longest bounding-box side of every sampler's loop is ``EXTENT * scale``.
EXTENT = 1.44

#: Largest coordinate magnitude (track units) a tool reads from course data, and the clamp of
#: per-step positions and half extents.
COORD_LIMIT = 1.0e18
#: Largest-component range of a quaternion that is used unscaled (outside: divided by it).
QUAT_SCALE_RANGE = (2.0**-30, 2.0**30)

_LIMIT = wp.constant(COORD_LIMIT)
_QUAT_LO = wp.constant(QUAT_SCALE_RANGE[0])
_QUAT_HI = wp.constant(QUAT_SCALE_RANGE[1])


@wp.func
def in_range(x: float) -> bool:
    """``|x| <= COORD_LIMIT``: False for NaN, inf and finite values beyond the limit."""
    return wp.abs(x) <= _LIMIT


@wp.func
def in_range2(v: wp.vec2f) -> bool:
    return in_range(v[0]) and in_range(v[1])


@wp.func
def in_range3(v: wp.vec3f) -> bool:
    return in_range(v[0]) and in_range(v[1]) and in_range(v[2])


@wp.func
def clamp_coord(x: float) -> float:
    """``x`` clamped to ``[-COORD_LIMIT, COORD_LIMIT]`` (x itself inside; NaN maps to
    ``-COORD_LIMIT``: test finiteness first)."""
    return wp.clamp(x, -_LIMIT, _LIMIT)


@wp.func
def clamp2(v: wp.vec2f) -> wp.vec2f:
    return wp.vec2f(clamp_coord(v[0]), clamp_coord(v[1]))


@wp.func
def clamp3(v: wp.vec3f) -> wp.vec3f:
    return wp.vec3f(clamp_coord(v[0]), clamp_coord(v[1]), clamp_coord(v[2]))


@wp.func
def scaled_quat(q: wp.quatf) -> wp.quatf:
    """``q`` divided by its largest ``|component|`` when that lies outside ``[2**-30, 2**30]``
    (a finite, nonzero q); else q itself, bit for bit (a unit quaternion, a zero or
    non-finite one)."""
    m = wp.max(wp.max(wp.abs(q[0]), wp.abs(q[1])), wp.max(wp.abs(q[2]), wp.abs(q[3])))
    if m - m == 0.0 and m > 0.0 and (m > _QUAT_HI or m < _QUAT_LO):
        return wp.quatf(q[0] / m, q[1] / m, q[2] / m, q[3] / m)
    return q
