"""Bezier sampler: corners in distinct grid cells, angle-sorted, joined by cubic segments.

Per env (one thread): draw ``m`` corners in distinct cells of a ``cells x cells`` grid over
the unit square, sort them by angle around their centroid (counter-clockwise), give each
corner a tangent blended between its incident edges (``edgy``), join consecutive corners
with cubics whose handles are ``min(rad * chord, handle_clamp_frac * shorter edge)``,
arc-resample to ``num_points`` and scale the bounding box to ``1.44 * scale``. A loop whose
curves cross itself falls back to the straight corner polygon, which is simple because the
corners are angle-sorted around an interior point (the relaxation rounds it later).
"""

from __future__ import annotations

import warp as wp

from ...geometry import (
    CrossingScratch,
    bbox_normalize,
    has_self_crossing,
    resample_closed,
    safe_normalize,
)
from ...seeds import stage_rng
from ..stage import ParamSpec, Stage, Workspace
from .corners import draw_grid_corners

wp.set_module_options({"enable_backward": False})

SALT_BEZIER = wp.constant(wp.uint32(0xB321E001))
EXTENT = 1.44


@wp.func
def _corner_tangent(c: wp.array(dtype=wp.vec2f), cb: int, m: int, i: int, p: float) -> wp.vec2f:
    ip = (i + m - 1) % m
    inx = (i + 1) % m
    u_in = safe_normalize(c[cb + i] - c[cb + ip])
    u_out = safe_normalize(c[cb + inx] - c[cb + i])
    return safe_normalize(p * u_out + (1.0 - p) * u_in)


@wp.func
def _shorter_edge(c: wp.array(dtype=wp.vec2f), cb: int, m: int, i: int) -> float:
    ip = (i + m - 1) % m
    inx = (i + 1) % m
    return wp.min(wp.length(c[cb + i] - c[cb + ip]), wp.length(c[cb + inx] - c[cb + i]))


@wp.kernel
def _bezier_kernel(
    eff_seed: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    rad: wp.array(dtype=wp.float32),
    edgy: wp.array(dtype=wp.float32),
    clamp_frac: wp.array(dtype=wp.float32),
    scale: wp.array(dtype=wp.float32),
    min_pts: int,
    max_pts: int,
    cells: int,
    npseg: int,
    num_points: int,
    corners: wp.array(dtype=wp.vec2f),
    cell_ids: wp.array(dtype=wp.int32),
    dense: wp.array(dtype=wp.vec2f),
    cross_boxes: wp.array(dtype=wp.vec4f),
    cross_turns: wp.array(dtype=wp.float32),
    cross_nch: int,
    line_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    st = stage_rng(eff_seed[e], SALT_BEZIER)
    m = min_pts + int(wp.randf(st) * float(max_pts - min_pts + 1))
    m = wp.min(m, max_pts)
    cb = e * max_pts
    st = draw_grid_corners(st, m, cells, corners, cell_ids, cb)
    # cubic segments into the dense buffer (endpoint of each segment excluded)
    pblend = wp.atan(edgy[e]) / 3.14159265358979 + 0.5
    r = rad[e]
    cf = clamp_frac[e]
    db = e * max_pts * npseg
    for i in range(m):
        i1 = (i + 1) % m
        c0 = corners[cb + i]
        c1 = corners[cb + i1]
        chord = wp.length(c1 - c0)
        h0 = wp.min(r * chord, cf * _shorter_edge(corners, cb, m, i))
        h1 = wp.min(r * chord, cf * _shorter_edge(corners, cb, m, i1))
        p1 = c0 + h0 * _corner_tangent(corners, cb, m, i, pblend)
        p2 = c1 - h1 * _corner_tangent(corners, cb, m, i1, pblend)
        for s in range(npseg):
            u = float(s) / float(npseg)
            v = 1.0 - u
            dense[db + i * npseg + s] = (
                (v * v * v) * c0
                + (3.0 * v * v * u) * p1
                + (3.0 * v * u * u) * p2
                + (u * u * u) * c1
            )
    lb = e * num_points
    resample_closed(dense, db, m * npseg, line_out, lb, num_points)
    if has_self_crossing(line_out, lb, num_points, cross_boxes, cross_turns, e * cross_nch):
        resample_closed(corners, cb, m, line_out, lb, num_points)
    bbox_normalize(line_out, lb, num_points, EXTENT * scale[e])


class SamplerBezier(Stage):
    """Bezier corner-loop sampler (``generator="bezier"``); loops are counter-clockwise."""

    role = "sampler"
    PARAMS = (
        ParamSpec("rad", "rad", lo=0.0, hi=2.0, doc="handle length / chord (curviness)"),
        ParamSpec("edgy", "edgy", doc="tangent blend; p = atan(edgy)/pi + 0.5"),
        ParamSpec(
            "handle_clamp_frac",
            "handle_clamp_frac",
            lo=0.0,
            hi=1.0,
            doc="handle cap as a fraction of the shorter incident edge",
        ),
        ParamSpec(
            "scale",
            "scale",
            lo=0.0,
            lo_open=True,
            doc="longest bounding-box side is 1.44 * scale (track units)",
        ),
    )

    def allocate(self, ws: Workspace) -> None:
        self.cross = CrossingScratch(ws.layout.num_envs, ws.layout.num_points, ws.layout.device)
        c, E, dev = self.config, ws.layout.num_envs, ws.layout.device
        self.cells = int(1.0 / (2.0 * c.min_point_distance))
        self.corners = wp.zeros(E * c.max_num_points, dtype=wp.vec2f, device=dev)
        self.cell_ids = wp.zeros(E * c.max_num_points, dtype=wp.int32, device=dev)
        self.dense = wp.zeros(
            E * c.max_num_points * c.num_points_per_segment, dtype=wp.vec2f, device=dev
        )

    def enqueue(self, ws: Workspace, params: dict) -> None:
        c = self.config
        wp.launch(
            _bezier_kernel,
            ws.layout.num_envs,
            inputs=[
                ws.eff_seed,
                ws.active,
                params["rad"],
                params["edgy"],
                params["handle_clamp_frac"],
                params["scale"],
                c.min_num_points,
                c.max_num_points,
                self.cells,
                c.num_points_per_segment,
                ws.layout.num_points,
                self.corners,
                self.cell_ids,
                self.dense,
                self.cross.boxes,
                self.cross.turns,
                self.cross.nch,
            ],
            outputs=[ws.line],
            device=ws.layout.device,
        )


__all__ = ["SamplerBezier"]
