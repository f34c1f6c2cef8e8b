"""Plan-view frames of a pose: the heading of a world-from-body quaternion and back.

The heading of an agent (or a box, a wall, a raster) is the plan-view direction of its
quaternion's rotated local x axis: for ``q = (x, y, z, w)`` that axis projects to
``(w^2 + x^2 - y^2 - z^2, 2 (x y + w z))`` (:func:`plan_x_axis`), valid for a quaternion of
any scale. :func:`heading_of` scales a huge or tiny quaternion first
(:func:`~track_gen.core.extents.scaled_quat`) and normalizes that axis; a vertical axis or a
zero quaternion heads ``+x``. :func:`yaw_quat` is the way back: the quaternion of a yaw about
``+z``. Every tool that reads a heading calls these, so a pose means the same thing to the
collision, the lidar, the raster and the sensors.
"""

from __future__ import annotations

import warp as wp

from ..core.extents import scaled_quat

wp.set_module_options({"enable_backward": False})


@wp.func
def plan_x_axis(r: wp.quatf) -> wp.vec2f:
    """``(w^2 + x^2 - y^2 - z^2, 2 (x y + w z))`` of ``r = (x, y, z, w)``: the plan view of
    its rotated local x axis, scaled by ``|r|^2`` (not normalized; any scale of ``r``)."""
    return wp.vec2f(
        r[3] * r[3] + r[0] * r[0] - r[1] * r[1] - r[2] * r[2], 2.0 * (r[0] * r[1] + r[3] * r[2])
    )


@wp.func
def unit_heading(a: wp.vec2f) -> wp.vec2f:
    """``a`` (a :func:`plan_x_axis`) divided by its length, ``(1, 0)`` when that is not above
    1e-30 (a vertical local x axis, a zero quaternion)."""
    ln = wp.sqrt(a[0] * a[0] + a[1] * a[1])
    out = wp.vec2f(1.0, 0.0)
    if ln > 1.0e-30:
        out = wp.vec2f(a[0] / ln, a[1] / ln)
    return out


@wp.func
def heading_of(rot: wp.quatf) -> wp.vec2f:
    """Unit plan-view heading ``(cos yaw, sin yaw)`` of a world-from-body quaternion (x, y,
    z, w) of any finite scale (a huge or tiny one is scaled by its largest component
    first); ``(1, 0)`` when its local x axis is vertical or it is zero. A non-finite
    quaternion gives a non-finite heading: test it first where that matters."""
    return unit_heading(plan_x_axis(scaled_quat(rot)))


@wp.func
def yaw_quat(yaw: float) -> wp.quatf:
    """The quaternion (x, y, z, w) of a rotation by ``yaw`` rad about ``+z``: the pose whose
    :func:`heading_of` is ``(cos yaw, sin yaw)``."""
    return wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), yaw)
