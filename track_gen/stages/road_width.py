"""Smoothly varying road widths for generated tracks: the ``"road_width"`` stage.

Inserted after the sampler when ``width_variation > 0`` (a config with the default 0 builds
exactly the pipeline without it, so its tracks keep their bytes). Per env, each side's width
along the sampler's loop (point ``i`` of ``num_points``, ``u = i / num_points``) is

    w(u) = half_width * (1 - width_variation * (0.5 + 0.5 * f(u)))

with ``f`` a sum of three sinusoids of 1, 2 and 3 periods per lap, random amplitudes and
phases from the env's effective seed, normalized to ``[-1, 1]``: smooth, closed, and between
``(1 - width_variation) * half_width`` and ``half_width`` (so the relaxation, which keeps the
loop ``half_width`` thick, leaves room for the widest road). Left and right draw their own
``f``. The widths then follow the beads through resample, inflate and validate
(:mod:`~track_gen.stages.widths`), as a real circuit's do.
"""

from __future__ import annotations

import warp as wp

from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import TWO_PI
from ..seeds import stage_rng
from .inflate import HALF_WIDTH
from .widths import allocate_widths

wp.set_module_options({"enable_backward": False})

SALT_ROAD_WIDTH = wp.constant(wp.uint32(0x3D1D7A11))

WIDTH_VARIATION = Tunable(
    "width_variation",
    0.0,
    lo=0.0,
    hi=0.9,
    unit="half widths",
    doc="0: constant half_width. Above 0, each side's width varies smoothly along the track "
    "between (1 - width_variation) * half_width and half_width, drawn per env from "
    "(seed, epoch) (stage road_width).",
)


@wp.func
def _draw_wave(st: wp.uint32):
    """Amplitudes (normalized to sum 1) and phases of one side's three sinusoids; returns
    them and the advanced RNG state."""
    amp = wp.vec3f(wp.randf(st), wp.randf(st), wp.randf(st))
    phase = TWO_PI * wp.vec3f(wp.randf(st), wp.randf(st), wp.randf(st))
    amp = amp / wp.max(amp[0] + amp[1] + amp[2], 1.0e-6)
    return amp, phase, st


@wp.func
def _wave(a: float, amp: wp.vec3f, phase: wp.vec3f) -> float:
    """``f`` at lap angle ``a``: within [-1, 1]."""
    f = amp[0] * wp.sin(a + phase[0]) + amp[1] * wp.sin(2.0 * a + phase[1])
    f = f + amp[2] * wp.sin(3.0 * a + phase[2])
    return wp.clamp(f, -1.0, 1.0)


@wp.kernel
def _road_width_kernel(
    # inputs
    eff_seed: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    # static
    hw: float,
    variation: float,
    num_points: int,
    # outputs
    width_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    st = stage_rng(eff_seed[e], SALT_ROAD_WIDTH)
    amp_l, phase_l, st = _draw_wave(st)
    amp_r, phase_r, st = _draw_wave(st)
    base = e * num_points
    for i in range(num_points):
        a = TWO_PI * float(i) / float(num_points)
        wl = hw * (1.0 - variation * (0.5 + 0.5 * _wave(a, amp_l, phase_l)))
        wr = hw * (1.0 - variation * (0.5 + 0.5 * _wave(a, amp_r, phase_r)))
        width_out[base + i] = wp.vec2f(wl, wr)


class RoadWidth(Stage):
    """Smoothly varying left/right widths (``"road_width"``): writes ``ws.line_width`` and
    allocates ``ws.bead_width`` (see the module)."""

    families = ("track",)
    FIELDS = (HALF_WIDTH, WIDTH_VARIATION)

    def allocate(self, ws: Workspace) -> None:
        allocate_widths(ws, self.name)

    def enqueue(self, ws: Workspace, params: dict) -> None:
        lay, v = ws.layout, self.values
        wp.launch(
            _road_width_kernel,
            lay.num_envs,
            inputs=[
                ws.eff_seed,
                ws.active,
                float(v.half_width),
                float(v.width_variation),
                lay.num_points,
            ],
            outputs=[ws.line_width],
            device=lay.device,
        )


__all__ = ["WIDTH_VARIATION", "RoadWidth"]
