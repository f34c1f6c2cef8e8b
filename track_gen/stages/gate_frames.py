"""Gate frames: tangents, roll-free orientations, widths and bar end points.

Per env (one thread) over ``result.position``: the tangent is the unit central difference of
the neighbouring gates (the chord for two gates), or the direction a gate sampler that places
the gates itself gave (``ws.gate_tangent``, the ``gate_table`` sampler); ``forward`` is its
horizontal projection (``gate_align="yaw_only"``, level gates) or the tangent itself
(``"full_tangent"``), falling back to the horizontal tangent and then +x when it is near
vertical or zero. The frame is roll-free: ``left = normalize(up_world x forward)``,
``up = forward x left``; the orientation quaternion maps local (x, y, z) to (forward, left,
up). ``half_size = gate_width / 2`` (the dynamic ``gate_frames.gate_width``) and the bars run
from ``left = position + half_size * left_axis`` to ``right = position - half_size *
left_axis``. Only the ``count`` real rows are written: the commit writes the result's NaN
padding past ``count``.
"""

from __future__ import annotations

import warp as wp

from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace

wp.set_module_options({"enable_backward": False})


@wp.func
def _unit_or(v: wp.vec3f, fallback: wp.vec3f) -> wp.vec3f:
    n = wp.length(v)
    if n > 1.0e-6:
        return v / n
    return fallback


@wp.kernel
def _gate_frames_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    given: wp.array(dtype=wp.vec3f),
    # parameters
    gate_width: wp.array(dtype=wp.float32),
    # static
    yaw_only: int,
    max_gates: int,
    use_given: int,
    # outputs
    tangent_out: wp.array(dtype=wp.vec3f),
    forward_out: wp.array(dtype=wp.vec3f),
    orientation_out: wp.array(dtype=wp.quatf),
    half_size_out: wp.array(dtype=wp.float32),
    left_out: wp.array(dtype=wp.vec3f),
    right_out: wp.array(dtype=wp.vec3f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    n = count[e]
    if n <= 0:
        return
    gb = e * max_gates
    hs = 0.5 * gate_width[e]
    up_w = wp.vec3f(0.0, 0.0, 1.0)
    x_axis = wp.vec3f(1.0, 0.0, 0.0)
    zero3 = wp.vec3f(0.0, 0.0, 0.0)
    # the neighbours of gate i roll along: prev = gate i-1 (mod n), p = gate i, nxt = gate i+1
    prev = position[gb + n - 1]
    p = position[gb]
    for i in range(n):
        i_next = i + 1
        if i_next == n:
            i_next = 0
        nxt = position[gb + i_next]
        t = zero3
        if use_given != 0:
            t = given[gb + i]
        elif n == 2:
            t = position[gb + 1] - position[gb]
            if i == 1:
                t = -t
        elif n > 2:
            t = nxt - prev
        t_unit = _unit_or(t, zero3)
        flat = _unit_or(wp.vec3f(t[0], t[1], 0.0), x_axis)
        fwd = flat
        # up_world x forward: for a level forward (unit, horizontal) it is unit already
        left = wp.vec3f(-flat[1], flat[0], 0.0)
        if yaw_only == 0:
            fwd = _unit_or(t, flat)
            if wp.abs(fwd[2]) > 0.999999:
                fwd = flat
            else:
                left = _unit_or(wp.cross(up_w, fwd), wp.vec3f(0.0, 1.0, 0.0))
        up = wp.cross(fwd, left)
        rot = wp.mat33(fwd[0], left[0], up[0], fwd[1], left[1], up[1], fwd[2], left[2], up[2])
        tangent_out[gb + i] = t_unit
        forward_out[gb + i] = fwd
        orientation_out[gb + i] = wp.quat_from_matrix(rot)
        half_size_out[gb + i] = hs
        left_out[gb + i] = p + hs * left
        right_out[gb + i] = p - hs * left
        prev = p
        p = nxt


GATE_WIDTH = Tunable(
    "gate_width",
    0.0,
    lo=0.0,
    hi=1.0e6,
    write_lo_open=True,
    dynamic=True,
    unit="track units",
    doc="full opening width (half_size = width / 2); 0 makes point gates; a width set after "
    "construction must be > 0.",
)
ALIGN = Tunable(
    "align",
    "yaw_only",
    choices=("yaw_only", "full_tangent"),
    config="gate_align",
    doc="yaw_only: level gates facing the horizontal tangent; full_tangent: tilted with the 3D "
    "tangent.",
)


class GateFrames(Stage):
    """Gate frames (``"gate_frames"``): writes every ``GateSequence`` field but position."""

    families = ("gates",)
    FIELDS = (GATE_WIDTH, ALIGN)

    def allocate(self, ws: Workspace) -> None:
        # the directions of a gate sampler that gives them (gate_table), else a placeholder
        self.given = ws.gate_tangent
        self.use_given = 0 if ws.gate_tangent is None else 1
        if ws.gate_tangent is None:
            self.given = ws.zeros(1, wp.vec3f, f"{self.name} no given directions")

    def enqueue(self, ws: Workspace, params: dict) -> None:
        lay, r = ws.layout, ws.result
        yaw_only = 1 if self.values.align == "yaw_only" else 0
        wp.launch(
            _gate_frames_kernel,
            lay.num_envs,
            inputs=[
                ws.active,
                r.count,
                r.position,
                self.given,
                params["gate_width"],
                yaw_only,
                lay.N_max,
                self.use_given,
            ],
            outputs=[r.tangent, r.forward, r.orientation, r.half_size, r.left, r.right],
            device=lay.device,
        )
