"""Props along the road borders: :class:`PropSet`, :class:`PropPlacer` and :class:`Props`.

A prop is an instance pose for a renderer or an obstacle set: a cone standing on a border
point, or a wall segment spanning two consecutive border points. Per env and per border
(``side``: the inner border, the outer border or both), ``n`` props sit evenly along the
border's closed 3D polyline, the first at the border's bead 0 (the start line), with no gap
and no doubled prop at the seam.

Placement rules (one thread per env, :meth:`PropPlacer.place`):

* **Spacing.** A border of closed 3D length ``L`` (closing segment included) gets
  ``n = max(1, round(L / spacing))`` props (halves round up); prop ``k`` (``k = 0 .. n-1``)
  is the border point at arc ``k * L / n``, linearly interpolated on its polyline segment.
  Prop 0 is bead 0 of the border; the arc from the last prop back to prop 0 is ``L / n``,
  equal to every other step (seam-free).
* **Rows.** Env ``e`` owns rows ``e*M .. e*M + M - 1``: the inner border's props first, then
  the outer border's (``side="both"``); ``side`` tells which border a row belongs to. Rows
  past ``count[e]`` are NaN (``side = -1``).
* **Truncation.** When the borders need more than ``M`` props in all, ``count = M`` and
  ``truncated = 1``; each border keeps ``n' <= n`` props, spread evenly at ``k * L / n'``
  (so farther apart than ``spacing``). With both borders, the ``M`` rows are shared in
  proportion to the demands: ``n_inner' = floor(M * n_inner / (n_inner + n_outer))``,
  ``n_outer' = M - n_inner'`` (a border may get 0 props when ``M`` is tiny).
* **Invalid envs** (``valid == 0``), tracks of fewer than 3 or more than ``N_max`` beads,
  borders of non-finite or zero length and borders with a coordinate that is non-finite or
  beyond ``COORD_LIMIT`` (1e18 track units, :mod:`~track_gen.core.extents`) give
  ``count = 0`` (``truncated = 0``) and NaN rows: every placed prop is finite.
* **Masking.** Only the envs with ``mask[e] != 0`` are written (all ``M`` rows, count and
  flag); every other env stays bitwise unchanged.

Pose conventions (any z: the borders may be elevated):

* ``position`` is the prop's **base centre**: its local ``z = 0`` face rests there and the
  prop extends ``scale.z`` along its local +z.
* ``orientation`` (quaternion x, y, z, w) rotates the prop's local frame into the world. A
  cone stays upright: a pure yaw, its local x the plan-view direction of the border segment
  it stands on (``atan2(dy, dx)``; yaw 0 for a vertical or zero-length segment). A wall is
  roll-free: yaw from the plan-view direction of its chord, then pitched so that its local x
  is the 3D unit chord (climbing along a slope) and its local y stays horizontal.
* ``scale``: a cone is ``(diameter, diameter, height)``; a wall ``(chord length, thickness,
  height)``, its base centre at the chord's midpoint (a wall of a border with one prop, or of
  a zero chord, has length 0 and the border direction at its point).
"""

from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass

import numpy as np
import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_float, check_mask
from ...core.component import Component, buffer_bytes
from ...core.exec import require_not_capturing
from ...core.extents import in_range3
from ...core.tunable import Tunable
from ...results import Track
from ..checkpoints import construction_result

wp.set_module_options({"enable_backward": False})

__all__ = [
    "BORDER_SLACK",
    "CONE_DIAMETER",
    "CONE_HEIGHT",
    "KIND",
    "MAX_PROPS",
    "SIDE",
    "SPACING",
    "WALL_HEIGHT",
    "WALL_THICKNESS",
    "PropKind",
    "PropPlacer",
    "PropSet",
    "PropSide",
    "Props",
    "border_length_bound",
]


class PropKind(enum.IntEnum):
    """What a prop is (``PropPlacer.kind`` inside the kernel)."""

    CONE = 0  # upright, on a border point
    WALL = 1  # a segment between two consecutive border points


class PropSide(enum.IntEnum):
    """Which border a prop row belongs to (``PropSet.side``; -1 past ``count``)."""

    INNER = 0
    OUTER = 1


_KIND_OF = {"cone": PropKind.CONE, "wall": PropKind.WALL}
_SIDES_OF = {"inner": (True, False), "outer": (False, True), "both": (True, True)}

_NAN = wp.constant(float("nan"))
_WALL = wp.constant(int(PropKind.WALL))
_INNER = wp.constant(int(PropSide.INNER))
_OUTER = wp.constant(int(PropSide.OUTER))


# ---------------------------------------------------------------------------------- result
@dataclass
class PropSet:
    """A batch of prop poses, flat and NaN-padded (env ``e`` owns rows ``e*M .. e*M + M - 1``;
    rows past ``count[e]`` are NaN, ``side`` -1). Units are track units.

    Attributes:
        position: vec3f ``[E*M]``: base centre of the prop (a cone's border point; a wall's
            chord midpoint).
        orientation: quatf ``[E*M]`` (x, y, z, w): local to world. Cones: yaw only, local x
            the plan-view border direction, local z up. Walls: yaw then pitch, local x the
            unit chord, local y horizontal.
        scale: vec3f ``[E*M]``: extents along the local axes. Cones ``(diameter, diameter,
            height)``; walls ``(chord length, thickness, height)``.
        side: int32 ``[E*M]``: :class:`PropSide` (0 inner, 1 outer; -1 past ``count``).
        count: int32 ``[E]``: real props (inner ones first, then outer ones).
        truncated: int32 ``[E]``: 1 when the env needed more than M props at its last
            placement (its props are then farther apart than ``spacing``).
        kind: ``"cone"`` or ``"wall"`` (host str, fixed at construction).
    """

    position: wp.array
    orientation: wp.array
    scale: wp.array
    side: wp.array
    count: wp.array
    truncated: wp.array
    kind: str = "cone"

    @staticmethod
    def buffers(num_envs: int, max_props: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array :meth:`allocate` makes."""
        rows = num_envs * max_props
        out = [(rows, wp.vec3f), (rows, wp.quatf), (rows, wp.vec3f), (rows, wp.int32)]
        return out + [(num_envs, wp.int32)] * 2

    @classmethod
    def allocate(
        cls, num_envs: int, max_props: int, device, budget=None, kind: str = "cone"
    ) -> PropSet:
        """NaN rows, ``side = -1``, ``count = truncated = 0`` (each array checked against
        ``budget`` first)."""
        budget = budget or AllocationBudget(device, "lower max_props")
        nan = float("nan")
        rows = int(num_envs) * int(max_props)
        return cls(
            position=budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "props"),
            orientation=budget.full(rows, wp.quatf(nan, nan, nan, nan), wp.quatf, "props"),
            scale=budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "props"),
            side=budget.full(rows, -1, wp.int32, "props"),
            count=budget.zeros(int(num_envs), wp.int32, "prop counts"),
            truncated=budget.zeros(int(num_envs), wp.int32, "prop truncation flags"),
            kind=kind,
        )

    @property
    def num_envs(self) -> int:
        return self.count.shape[0]

    @property
    def max_props(self) -> int:
        """Per-env capacity M (the row stride)."""
        return self.position.shape[0] // self.count.shape[0]

    @property
    def device(self):
        return self.position.device

    def clone(self) -> PropSet:
        """A detached deep copy (allocates: call it outside your graph)."""
        arrays = {
            f.name: wp.clone(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if isinstance(getattr(self, f.name), wp.array)
        }
        return PropSet(**arrays, kind=self.kind)


# ---------------------------------------------------------------------------------- fields
KIND = Tunable(
    "kind",
    "cone",
    kind="choice",
    choices=("cone", "wall"),
    doc="what a prop is: an upright "
    "cone on a border point, or a wall segment between two consecutive border points.",
)
SPACING = Tunable(
    "spacing",
    None,
    kind="float",
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units",
    doc="target 3D arc distance between consecutive props along a border (required).",
)
SIDE = Tunable(
    "side",
    "both",
    kind="choice",
    choices=("both", "inner", "outer"),
    doc="the borders that get props (both: the inner border's rows first).",
)
MAX_PROPS = Tunable(
    "max_props",
    None,
    kind="int",
    lo=1,
    hi=65536,
    optional=True,
    unit="props",
    doc="per-env prop capacity (all borders together); None ('auto') derives it from a bound "
    "on the border length.",
)
CONE_DIAMETER = Tunable(
    "cone_diameter",
    0.04,
    lo=0.0,
    hi=1.0e6,
    lo_open=True,
    unit="track units",
    doc="base diameter of a cone (scale x and y).",
)
CONE_HEIGHT = Tunable(
    "cone_height",
    0.06,
    lo=0.0,
    hi=1.0e6,
    lo_open=True,
    unit="track units",
    doc="height of a cone (scale z).",
)
WALL_THICKNESS = Tunable(
    "wall_thickness",
    0.02,
    lo=0.0,
    hi=1.0e6,
    lo_open=True,
    unit="track units",
    doc="thickness of a wall across the border (scale y).",
)
WALL_HEIGHT = Tunable(
    "wall_height",
    0.05,
    lo=0.0,
    hi=1.0e6,
    lo_open=True,
    unit="track units",
    doc="height of a wall (scale z).",
)

_SIZE_FIELDS = (CONE_DIAMETER, CONE_HEIGHT, WALL_THICKNESS, WALL_HEIGHT)

#: Relative margin of :func:`border_length_bound`.
BORDER_SLACK = 1.01


def border_length_bound(centerline_bound: float, half_width: float, grade: float = 0.0) -> float:
    """A bound on the closed 3D length of either border of a valid track:
    ``BORDER_SLACK * ((1 + grade) * centerline_bound + 2 * pi * half_width)``.

    A border offset by ``half_width`` from a closed centerline of plan length ``Lc`` whose
    curvature radius stays >= ``half_width`` is ``Lc + 2*pi*half_width`` long on the outside
    (the plan integral of ``1 + half_width * curvature``) and ``Lc - 2*pi*half_width`` on the
    inside; elevation adds at most ``sum |dz| <= grade * Lc`` when every centerline step
    climbs at most ``grade`` (the generator's grade check). ``BORDER_SLACK`` (1%) covers the
    polyline offsets and the validation's thickness tolerance (a curvature radius a little
    under ``half_width``; measured excess below 0.02% of a border). ``centerline_bound``: a
    bound on ``Lc``, track units.
    """
    plan = (1.0 + float(grade)) * float(centerline_bound) + 2.0 * math.pi * float(half_width)
    return BORDER_SLACK * plan


def _longest_border(track) -> float:
    """``BORDER_SLACK`` times the longest closed 3D border of a valid env of ``track`` (read
    back): the capacity rule of an elevated config without a grade limit."""
    E, n_max = track.num_envs, track.N_max
    count = np.clip(track.count.numpy(), 0, n_max)
    ok = (track.valid.numpy() != 0) & (count >= 3)
    longest = 0.0
    for name in ("inner", "outer"):
        pts = getattr(track, name).numpy().reshape(E, n_max, 3).astype(np.float64)
        for e in np.flatnonzero(ok):
            p = pts[e, : count[e]]
            longest = max(longest, float(np.linalg.norm(np.roll(p, -1, 0) - p, axis=1).sum()))
    return BORDER_SLACK * max(longest, 1.0e-6)


def capacity_for(spacing: float, max_loop_length: float, sides: int, owner: str = "spacing") -> int:
    """``sides * max(1, ceil(max_loop_length / spacing))`` (a border of length ``L <= bound``
    needs ``round(L / spacing) <= ceil(bound / spacing)`` props), refused above
    ``MAX_PROPS.hi``."""
    cap = int(sides) * max(1, math.ceil(max_loop_length / spacing))
    if cap > MAX_PROPS.hi:
        raise ValueError(
            f"{owner} = {spacing!r} gives {cap:,} props per env for borders up to "
            f"{max_loop_length:g} track units (max_loop_length), more than {MAX_PROPS.hi}: raise "
            "the spacing, lower max_loop_length or pass max_props"
        )
    return cap


# ---------------------------------------------------------------------------------- kernel
@wp.func
def _border_length(pts: wp.array(dtype=wp.vec3f), base: int, nb: int) -> wp.float64:
    """Closed 3D length of the polyline ``pts[base .. base + nb - 1]`` (float64 sum)."""
    total = wp.float64(0.0)
    for i in range(nb):
        j = i + 1
        if j == nb:
            j = 0
        total += wp.float64(wp.length(pts[base + j] - pts[base + i]))
    return total


@wp.func
def _border_in_range(pts: wp.array(dtype=wp.vec3f), base: int, nb: int) -> bool:
    """Every bead of the border finite and within ``COORD_LIMIT`` (core/extents.py)."""
    for i in range(nb):
        if not in_range3(pts[base + i]):
            return False
    return True


@wp.func
def _demand(length: wp.float64, spacing: wp.float64) -> wp.float64:
    """``max(1, round(length / spacing))`` (halves up) as a float64; 0 for a non-finite or
    non-positive length."""
    n = wp.float64(0.0)
    if wp.isfinite(length) and length > wp.float64(0.0):
        n = wp.max(wp.floor(length / spacing + wp.float64(0.5)), wp.float64(1.0))
    return n


@wp.func
def _pose(d: wp.vec3f, pitched: int) -> wp.quatf:
    """Yaw from the plan-view direction of ``d`` (0 when it vanishes); with ``pitched``, then
    a pitch about the local y axis that turns the local x onto ``d`` (roll-free)."""
    h = wp.sqrt(d[0] * d[0] + d[1] * d[1])
    yaw = float(0.0)
    if h > 0.0:
        yaw = wp.atan2(d[1], d[0])
    q = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), yaw)
    if pitched != 0:
        pitch = float(0.0)
        if h > 0.0 or d[2] != 0.0:
            pitch = wp.atan2(d[2], h)
        q = q * wp.quat_from_axis_angle(wp.vec3f(0.0, 1.0, 0.0), -pitch)
    return q


@wp.func
def _write_wall(
    a: wp.vec3f,
    b: wp.vec3f,
    fallback: wp.vec3f,
    row: int,
    side: int,
    thickness: float,
    height: float,
    position_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
    scale_out: wp.array(dtype=wp.vec3f),
    side_out: wp.array(dtype=wp.int32),
):
    chord = b - a
    clen = wp.length(chord)
    d = chord
    if clen == 0.0:
        d = fallback
    position_out[row] = 0.5 * (a + b)
    orientation_out[row] = _pose(d, 1)
    scale_out[row] = wp.vec3f(clen, thickness, height)
    side_out[row] = side


@wp.func
def _place_border(
    # inputs
    pts: wp.array(dtype=wp.vec3f),
    base: int,
    nb: int,
    total: wp.float64,
    n: int,
    side: int,
    kind: int,
    size: wp.vec4f,
    row0: int,
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
    scale_out: wp.array(dtype=wp.vec3f),
    side_out: wp.array(dtype=wp.int32),
):
    """Props ``0 .. n-1`` of one border at arcs ``k * total / n`` into rows ``row0 + k``.

    One merge walk: segment ``i`` (bead ``i`` to bead ``i+1``, the last one closing the loop)
    holds the arcs ``[a, a + seg)``; a zero-length segment is stepped over."""
    i = int(0)
    j = wp.min(1, nb - 1)
    p0 = pts[base]
    p1 = pts[base + j]
    seg = wp.float64(wp.length(p1 - p0))
    a = wp.float64(0.0)
    first = wp.vec3f(0.0, 0.0, 0.0)
    prev = wp.vec3f(0.0, 0.0, 0.0)
    prev_dir = wp.vec3f(0.0, 0.0, 0.0)
    for k in range(n):
        s = wp.float64(k) * total / wp.float64(n)
        while i < nb - 1 and a + seg <= s:
            a += seg
            i += 1
            j = i + 1
            if j == nb:
                j = 0
            p0 = pts[base + i]
            p1 = pts[base + j]
            seg = wp.float64(wp.length(p1 - p0))
        t = float(0.0)
        if seg > wp.float64(0.0):
            t = float(wp.clamp((s - a) / seg, wp.float64(0.0), wp.float64(1.0)))
        p = p0 + t * (p1 - p0)
        dseg = p1 - p0
        if kind == _WALL:
            if k == 0:
                first = p
            else:
                _write_wall(
                    prev,
                    p,
                    prev_dir,
                    row0 + k - 1,
                    side,
                    size[2],
                    size[3],
                    position_out,
                    orientation_out,
                    scale_out,
                    side_out,
                )
            prev = p
            prev_dir = dseg
        else:
            position_out[row0 + k] = p
            orientation_out[row0 + k] = _pose(dseg, 0)
            scale_out[row0 + k] = wp.vec3f(size[0], size[0], size[1])
            side_out[row0 + k] = side
    if kind == _WALL and n > 0:
        _write_wall(
            prev,
            first,
            prev_dir,
            row0 + n - 1,
            side,
            size[2],
            size[3],
            position_out,
            orientation_out,
            scale_out,
            side_out,
        )


@wp.kernel
def _place_kernel(
    # inputs
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    bead_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    # static
    use_mask: int,
    n_max: int,
    spacing: wp.float64,
    cap: int,
    use_inner: int,
    use_outer: int,
    kind: int,
    size: wp.vec4f,
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
    scale_out: wp.array(dtype=wp.vec3f),
    side_out: wp.array(dtype=wp.int32),
    count_out: wp.array(dtype=wp.int32),
    truncated_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if use_mask != 0:
        if mask[e] == 0:
            return
    nb = bead_count[e]
    base = e * n_max
    out = e * cap
    len_in = wp.float64(0.0)
    len_out = wp.float64(0.0)
    want_in = wp.float64(0.0)
    want_out = wp.float64(0.0)
    if valid[e] != 0 and nb >= 3 and nb <= n_max:
        # a used border out of range has no usable length (it voids the env below)
        if use_inner != 0 and _border_in_range(inner, base, nb):
            len_in = _border_length(inner, base, nb)
            want_in = _demand(len_in, spacing)
        if use_outer != 0 and _border_in_range(outer, base, nb):
            len_out = _border_length(outer, base, nb)
            want_out = _demand(len_out, spacing)
        # a used border of unusable length voids the env
        if (use_inner != 0 and want_in == wp.float64(0.0)) or (
            use_outer != 0 and want_out == wp.float64(0.0)
        ):
            want_in = wp.float64(0.0)
            want_out = wp.float64(0.0)
    want = want_in + want_out
    n_in = int(0)
    n_out = int(0)
    truncated = int(0)
    if want > wp.float64(cap):
        # share the M rows in proportion to the demands (each border keeps <= its demand)
        truncated = 1
        if want_out == wp.float64(0.0):
            n_in = cap
        elif want_in > wp.float64(0.0):
            n_in = int(wp.floor(wp.float64(cap) * want_in / want))
        n_out = cap - n_in
    else:
        n_in = int(want_in)  # exact: want <= cap <= 65536
        n_out = int(want_out)
    if n_in > 0:
        _place_border(
            inner,
            base,
            nb,
            len_in,
            n_in,
            _INNER,
            kind,
            size,
            out,
            position_out,
            orientation_out,
            scale_out,
            side_out,
        )
    if n_out > 0:
        _place_border(
            outer,
            base,
            nb,
            len_out,
            n_out,
            _OUTER,
            kind,
            size,
            out + n_in,
            position_out,
            orientation_out,
            scale_out,
            side_out,
        )
    n = n_in + n_out
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    for k in range(n, cap):
        position_out[out + k] = nan3
        orientation_out[out + k] = wp.quatf(_NAN, _NAN, _NAN, _NAN)
        scale_out[out + k] = nan3
        side_out[out + k] = -1
    count_out[e] = n
    truncated_out[e] = truncated


# ---------------------------------------------------------------------------------- placer
class PropPlacer:
    """Props along the borders of a road-band :class:`~track_gen.Track` (the module docs
    give the placement rules and pose conventions).

    Args:
        track: the generator's :class:`~track_gen.Track` (read live by pointer: call
            :meth:`place` after every regeneration).
        kind: ``"cone"`` or ``"wall"`` (``KIND``).
        spacing: target 3D arc distance between props along a border, track units
            (``SPACING``; required).
        side: ``"both"``, ``"inner"`` or ``"outer"`` (``SIDE``).
        max_props: per-env capacity M, all borders together (``MAX_PROPS``). Default:
            derived from ``max_loop_length``.
        max_loop_length: keyword-only bound on any border's closed 3D length (track units,
            > 0; :func:`border_length_bound`): ``M = sides * max(1, ceil(max_loop_length /
            spacing))``. Ignored when ``max_props`` is given; one of the two is required.
        cone_diameter: keyword-only, track units (``CONE_DIAMETER``, default 0.04).
        cone_height: keyword-only, track units (``CONE_HEIGHT``, default 0.06).
        wall_thickness: keyword-only, track units (``WALL_THICKNESS``, default 0.02).
        wall_height: keyword-only, track units (``WALL_HEIGHT``, default 0.05).

    Attributes:
        props: the :class:`PropSet` (allocated once, overwritten by :meth:`place`).

    Construction allocates (outside any capture) and places every env once; :meth:`place`
    is allocation-free, one launch, and capturable.
    """

    def __init__(
        self,
        track: Track,
        kind: str = "cone",
        spacing: float | None = None,
        side: str = "both",
        max_props: int | None = None,
        *,
        max_loop_length: float | None = None,
        cone_diameter: float = CONE_DIAMETER.default,
        cone_height: float = CONE_HEIGHT.default,
        wall_thickness: float = WALL_THICKNESS.default,
        wall_height: float = WALL_HEIGHT.default,
    ):
        for name in ("inner", "outer", "count", "valid"):
            if not isinstance(getattr(track, name, None), wp.array):
                raise TypeError(
                    f"PropPlacer(track): track must be a Track (a TrackGenerator's result), "
                    f"got {type(track).__name__} without a wp.array {name!r}"
                )
        self.kind = KIND.check(kind, "PropPlacer kind")
        self.spacing = SPACING.check(spacing, "PropPlacer spacing")
        self.side = SIDE.check(side, "PropPlacer side")
        sizes = (cone_diameter, cone_height, wall_thickness, wall_height)
        self.sizes = tuple(
            t.check(v, f"PropPlacer {t.name}") for t, v in zip(_SIZE_FIELDS, sizes, strict=True)
        )
        use_inner, use_outer = _SIDES_OF[self.side]
        sides = int(use_inner) + int(use_outer)
        if max_props is not None:
            cap = MAX_PROPS.check(max_props, "PropPlacer max_props")
        elif max_loop_length is not None:
            bound = check_float("max_loop_length", max_loop_length, lo=0.0, hi=1.0e12, lo_open=True)
            cap = capacity_for(self.spacing, bound, sides)
        else:
            raise ValueError(
                "PropPlacer needs a capacity: pass max_props (an int >= 1, the per-env prop "
                "capacity) or max_loop_length= (a bound on any border's length; capacity "
                "sides * max(1, ceil(max_loop_length / spacing)))"
            )
        device = track.inner.device
        require_not_capturing(device, "PropPlacer construction")
        self.track = track
        self.device = device
        E = track.count.shape[0]
        self._n_max = track.inner.shape[0] // E
        self._flags = (int(use_inner), int(use_outer), int(_KIND_OF[self.kind]))
        budget = AllocationBudget(device, "raise the spacing or lower max_props")
        self.props = PropSet.allocate(E, cap, device, budget, kind=self.kind)
        self._no_mask = budget.zeros(1, wp.int32, "empty mask")
        self.place()

    @staticmethod
    def buffers(num_envs: int, max_props: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a placer allocates (its :class:`PropSet` and an
        empty mask)."""
        return PropSet.buffers(num_envs, max_props) + [(1, wp.int32)]

    @property
    def num_envs(self) -> int:
        return self.props.num_envs

    @property
    def max_props(self) -> int:
        """Per-env capacity M."""
        return self.props.max_props

    def place(self, mask: wp.array | None = None) -> PropSet:
        """Place the props of the envs with ``mask[e] != 0`` (None: every env) and return
        :attr:`props` (the same instance every call).

        ``mask`` is a contiguous ``[E]`` int32 array on the track's device; unmasked envs
        stay bitwise unchanged. One launch, no allocation, no host sync.
        """
        check_mask(mask, self.num_envs, self.device)
        t, ps = self.track, self.props
        use_inner, use_outer, kind = self._flags
        wp.launch(
            _place_kernel,
            self.num_envs,
            inputs=[
                t.inner,
                t.outer,
                t.count,
                t.valid,
                self._no_mask if mask is None else mask,
                0 if mask is None else 1,
                self._n_max,
                wp.float64(self.spacing),
                self.max_props,
                use_inner,
                use_outer,
                kind,
                wp.vec4f(*self.sizes),
            ],
            outputs=[ps.position, ps.orientation, ps.scale, ps.side, ps.count, ps.truncated],
            device=self.device,
        )
        return ps


# ---------------------------------------------------------------------------------- component
class Props(Component):
    """Course component ``"props"``: cones or wall segments every ``spacing`` along the
    borders of each env, refreshed for the regenerated envs (``on_generate``).

    Args:
        kind: ``"cone"`` or ``"wall"`` (``KIND``).
        spacing: target 3D arc distance between props along a border, track units
            (``SPACING``; required).
        side: ``"both"``, ``"inner"`` or ``"outer"`` (``SIDE``).
        max_props: per-env capacity (``MAX_PROPS``), or ``"auto"`` (None): ``sides *
            max(1, ceil(B / spacing))`` with ``B = border_length_bound((N_max + 1) * bead
            spacing, half_width, grade)``: the centerline of a valid track is at most
            ``(N_max + 1)`` bead spacings long (a longer loop is TRUNCATED and invalid), a
            border at most ``2 * pi * half_width`` longer, and elevation adds at most
            ``grade`` times the centerline when the generator checks grades
            (``z_valid_grade > 0``; otherwise a steep border may be truncated, flagged in
            ``truncated``).
        cone_diameter: keyword-only prop size (see :class:`PropPlacer`).
        cone_height: keyword-only prop size.
        wall_thickness: keyword-only prop size.
        wall_height: keyword-only prop size.
        name: component name (default ``"props"``).

    ``result`` is the :class:`PropSet`; ``utility`` the :class:`PropPlacer`. Track courses
    only (a gate course is refused with a TypeError).
    """

    name = "props"
    families = ("track",)

    def __init__(
        self,
        kind: str = "cone",
        spacing: float | None = None,
        side: str = "both",
        max_props: int | str | None = "auto",
        *,
        cone_diameter: float = CONE_DIAMETER.default,
        cone_height: float = CONE_HEIGHT.default,
        wall_thickness: float = WALL_THICKNESS.default,
        wall_height: float = WALL_HEIGHT.default,
        name: str | None = None,
    ):
        super().__init__(name=name)
        self.kind = KIND.check(kind, "Props kind")
        self.spacing = SPACING.check(spacing, "Props spacing")
        self.side = SIDE.check(side, "Props side")
        if isinstance(max_props, str) and max_props == "auto":
            max_props = None
        self.max_props = MAX_PROPS.check(max_props, "Props max_props")
        sizes = (cone_diameter, cone_height, wall_thickness, wall_height)
        self.sizes = {
            t.name: t.check(v, f"Props {t.name}") for t, v in zip(_SIZE_FIELDS, sizes, strict=True)
        }

    def attach(self, ctx) -> None:
        track = ctx.generator.result
        if not isinstance(track, Track):
            raise TypeError(
                f"Props needs a track generator (its result a Track), got a "
                f"{type(track).__name__}: props stand on road borders"
            )
        bound = None
        if self.max_props is None:
            cfg = getattr(ctx.generator, "config", None)
            bead = getattr(cfg, "resolved_spacing", None)
            half_width = getattr(cfg, "half_width", None)
            if bead is None or half_width is None:
                raise ValueError(
                    "Props(max_props='auto') needs a generator with a bead spacing and a "
                    "half_width (a TrackGenerator); pass max_props=<int >= 1>"
                )
            grade = getattr(cfg, "z_valid_grade", None) or 0.0
            if getattr(cfg, "z_profile", "flat") != "flat" and not grade > 0.0:
                bound = _longest_border(construction_result(ctx))  # no declared bound
            else:
                bound = border_length_bound(
                    (ctx.layout.N_max + 1) * float(bead), float(half_width), float(grade)
                )
            sides = 2 if self.side == "both" else 1
            capacity_for(self.spacing, bound, sides, "Props spacing")
        self.utility = PropPlacer(
            track,
            self.kind,
            self.spacing,
            self.side,
            self.max_props,
            max_loop_length=bound,
            **self.sizes,
        )
        self.result = self.utility.props

    def planned_bytes(self, layout, config) -> int:
        """The :class:`PropPlacer`'s buffers at the capacity ``attach`` chooses: the explicit
        ``max_props``, else the declared border bound (a lower bound for an elevated config
        without a grade check, whose capacity reads its first batch)."""
        cap = self.max_props
        if cap is None:
            bead = getattr(config, "resolved_spacing", None)
            half_width = getattr(config, "half_width", None)
            if bead is None or half_width is None:
                return 0  # attach refuses this generator
            grade = getattr(config, "z_valid_grade", None) or 0.0
            bound = border_length_bound(
                (layout.N_max + 1) * float(bead), float(half_width), float(grade)
            )
            sides = 2 if self.side == "both" else 1
            cap = capacity_for(self.spacing, bound, sides, "Props spacing")
        return buffer_bytes(PropPlacer.buffers(layout.num_envs, cap))

    def on_generate(self, ctx, mask) -> None:
        self.utility.place(mask)
