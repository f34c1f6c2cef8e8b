"""The answers of :class:`~track_gen.tools.band_collision.BandCollider` (:class:`BandContact`)
and the height check of its ``clearance`` (:func:`_height_kernel`, one thread per box)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import warp as wp

from ...core.extents import clamp3

wp.set_module_options({"enable_backward": False})

__all__ = ["BandContact"]


# ----------------------------------------------------------------------------- results


@dataclass
class BandContact:
    """Per-box answers of :meth:`BandCollider.query` (box ``b`` of env ``e`` at row
    ``e*B + b``, ``B = max_boxes``). The collider returns the same instance on every query and
    overwrites it; :meth:`clone` takes a snapshot. Distances are in track units.

    Attributes:
        oob: int32 ``[E*B]``: 1 when some part of the box is off the road (a corner outside
            the band, or a border crossing the box), else 0. 1 for every box of an invalid
            env, 0 for an inactive slot.
        distance: float32 ``[E*B]``: signed clearance, track units. Positive: the box is
            inside the band, this far from the nearest border; negative: the deepest
            penetration of a box corner beyond a border; 0: a border crosses the box with
            every corner inside. NaN for an inactive slot or an invalid env. (``"sdf"``:
            approximate, and about ``-SDF_BAND_CELLS`` cells at most deep.)
        nearest: vec2f ``[E*B]``: the border point closest to the box (to its deepest outside
            corner when a corner is out), plan view, track units. NaN when inactive/invalid.
        normal: vec2f ``[E*B]``: unit border normal at ``nearest``, pointing into the band.
            NaN when inactive/invalid.
        boundary: int32 ``[E*B]``: the border ``nearest`` lies on: 0 inner, 1 outer, -1 none
            (inactive slot, invalid env, or an SDF sample deeper than its narrow band).
        height: float32 ``[E*B]`` or None: the box centre's height above the road surface
            (its z minus the centerline's z at the centre's plan-view projection onto the
            nearest centerline segment; the road is level across its width), track units; NaN
            for an inactive slot or an invalid env. None when the collider has no
            ``clearance`` (heights are not checked).
    """

    oob: wp.array
    distance: wp.array
    nearest: wp.array
    normal: wp.array
    boundary: wp.array
    height: wp.array | None = None

    @staticmethod
    def buffers(rows: int, height: bool = False) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array :meth:`allocate` makes."""
        out = [(rows, wp.int32), (rows, wp.float32), (rows, wp.vec2f), (rows, wp.vec2f)]
        out.append((rows, wp.int32))
        return out + ([(rows, wp.float32)] if height else [])

    @classmethod
    def allocate(cls, rows: int, device, height: bool = False) -> BandContact:
        """Buffers for ``rows`` boxes: oob 0, NaN geometry, boundary -1 (and NaN heights
        when ``height``)."""
        nan = float("nan")
        return cls(
            oob=wp.zeros(rows, dtype=wp.int32, device=device),
            distance=wp.full(rows, nan, dtype=wp.float32, device=device),
            nearest=wp.full(rows, wp.vec2f(nan, nan), dtype=wp.vec2f, device=device),
            normal=wp.full(rows, wp.vec2f(nan, nan), dtype=wp.vec2f, device=device),
            boundary=wp.full(rows, -1, dtype=wp.int32, device=device),
            height=wp.full(rows, nan, dtype=wp.float32, device=device) if height else None,
        )

    def clone(self) -> BandContact:
        """A detached deep copy (allocates: call it outside your graph)."""
        return BandContact(
            **{
                f.name: None if getattr(self, f.name) is None else wp.clone(getattr(self, f.name))
                for f in dataclasses.fields(self)
            }
        )


_NAN_F = wp.constant(float("nan"))
_INF_F = wp.constant(float("inf"))


@wp.kernel
def _height_kernel(
    # inputs
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    half_extents: wp.array(dtype=wp.vec2f),
    center: wp.array(dtype=wp.vec3f),
    beads: wp.array(dtype=wp.int32),
    # static
    n_max: int,
    boxes: int,
    clearance: float,
    # outputs
    oob_out: wp.array(dtype=wp.int32),
    height_out: wp.array(dtype=wp.float32),
):
    """Height of each box centre above the road surface (the centerline's z at the centre's
    plan-view projection onto the nearest centerline segment); beyond ``clearance``: oob.
    Distances are compared in float64, so a box far away still finds its segment; the centre
    is clamped to ``COORD_LIMIT`` first, as the query clamps it (the height stays finite)."""
    row = wp.tid()
    e = row // boxes
    n = wp.clamp(beads[e], 0, n_max)
    p = position[row]
    q = orientation[row]
    h2 = half_extents[row]
    height_out[row] = _NAN_F
    active = wp.isfinite(p[0]) and wp.isfinite(p[1]) and wp.isfinite(p[2])
    active = active and wp.isfinite(q[0]) and wp.isfinite(q[1]) and wp.isfinite(q[2])
    active = active and wp.isfinite(q[3]) and wp.isfinite(h2[0]) and wp.isfinite(h2[1])
    if n < 3 or not active:
        return  # an invalid env or an inactive slot: the query's answer stands
    p = clamp3(p)  # as the query clamps it (core/extents.py): the height stays finite
    base = e * n_max
    px = wp.float64(p[0])
    py = wp.float64(p[1])
    best = wp.float64(_INF_F)
    z = float(_NAN_F)
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        a = center[base + i]
        b = center[base + j]
        ax = wp.float64(a[0])
        ay = wp.float64(a[1])
        dx = wp.float64(b[0]) - ax
        dy = wp.float64(b[1]) - ay
        dd = dx * dx + dy * dy
        t = wp.float64(0.0)
        if dd > wp.float64(0.0):
            t = wp.clamp(((px - ax) * dx + (py - ay) * dy) / dd, wp.float64(0.0), wp.float64(1.0))
        qx = ax + t * dx - px
        qy = ay + t * dy - py
        d2 = qx * qx + qy * qy
        if d2 < best:
            best = d2
            z = a[2] + float(t) * (b[2] - a[2])
    h = p[2] - z
    height_out[row] = h
    if wp.abs(h) > clearance:
        oob_out[row] = 1
