"""User-provided centerlines: the ``"centerline"`` sampler.

Each env's loop is whatever you wrote into ``generator.inputs["centerline.xy"]`` (vec2f
``[E*num_points]``, env e owns rows ``e*num_points ..``, a closed loop, last point not
repeated, track units). The rest of the pipeline (resample, relax, inflate, validate) runs on
it as on any sampler's loop, so a real circuit or a curriculum of hand-made courses gets the
same beads, borders and validity (a loop of any size is safe: one longer than ``N_max`` beads
is truncated and marked ``TRUNCATED``). The loop is used as is: no normalization, no randomness
(seeds and epochs do not change it; rewrite the input instead). The input is read by pointer at
every regeneration and every replay: write it in place (``.assign``, ``wp.copy``).
"""

from __future__ import annotations

import warp as wp

from ..engine.stage import Stage, Workspace

wp.set_module_options({"enable_backward": False})


@wp.kernel
def _copy_centerline_kernel(
    # inputs
    xy: wp.array(dtype=wp.vec2f),
    active: wp.array(dtype=wp.int32),
    # static
    num_points: int,
    # outputs
    line_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    base = e * num_points
    for i in range(num_points):
        line_out[base + i] = xy[base + i]


class SamplerCenterline(Stage):
    """Sampler that reads each env's loop from the ``"<name>.xy"`` generator input."""

    role = "sampler"

    def allocate(self, ws: Workspace) -> None:
        lay = ws.layout
        self.xy = ws.add_input(
            f"{self.name}.xy",
            ws.zeros(lay.num_envs * lay.num_points, wp.vec2f, f"{self.name} input"),
            "vec2f [E*num_points]: one closed centerline per env (rows e*num_points ..), "
            "track units, written in place by the user",
        )

    def enqueue(self, ws: Workspace, params: dict) -> None:
        lay = ws.layout
        wp.launch(
            _copy_centerline_kernel,
            lay.num_envs,
            inputs=[self.xy, ws.active, lay.num_points],
            outputs=[ws.line],
            device=lay.device,
        )
