"""The next-gates sensor's observation term ``"next_gates"``: per slot ``k`` (``num_gates``),
7 columns, all in ``[-1, 1]``:

* 3: the gate's centre in the agent's body frame, squashed: ``p / (|p| + position_scale)``
  (its direction times ``d / (d + position_scale)`` for the distance ``d``: 0.5 at
  ``position_scale``; :attr:`NextGatesResult.position`);
* 3: the gate's forward axis (the direction it is passed in) in the body frame, a unit vector
  (:attr:`NextGatesResult.orientation` applied to +x);
* 1: ``revealed`` (1: the slot answers the true pose; 0: the nominal pose drawn at generation,
  with ``reveal_range``).

Every column is 0 where the env is not usable or the slot has no answer (an env with fewer
gates than slots, a non-finite agent state)."""

from __future__ import annotations

import warp as wp

from ...core.tunable import Tunable
from ..terms import ObservationTerm, final_flag, put_column, settings_class, unit_or_zero
from .component import NextGates
from .fields import FIELDS

__all__ = ["NEXT_GATES_COLS", "NextGatesTerm", "NextGatesTermSettings", "POSITION_SCALE"]

wp.set_module_options({"enable_backward": False})

#: Columns per slot: the squashed position (3), the forward axis (3), the revealed flag.
NEXT_GATES_COLS = 7

POSITION_SCALE = Tunable(
    "position_scale",
    1.0,
    lo=1.0e-6,
    hi=1.0e6,
    unit="track units",
    doc="the distance at which a gate's squashed position columns p / (|p| + position_scale) "
    "reach half its direction (the term only; a metre course: metres).",
)

NextGatesTermSettings = settings_class(
    "NextGatesTermSettings",
    (*FIELDS, POSITION_SCALE),
    doc="The settings of the 'next_gates' observation term: the sensor's (tools.NextGates: "
    "num_gates, reveal_range, nominal_noise) and the term's position_scale.",
    module="track_gen.tools.next_gates.term",
)


@wp.func
def write_next_gates_columns(
    e: int,
    ok: bool,
    fin: int,
    col: int,
    slots: int,
    scale: float,
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    index: wp.array(dtype=wp.int32),
    revealed: wp.array(dtype=wp.int32),
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    """Env ``e``'s slots into 7 columns each from column ``col``."""
    for k in range(slots):
        r = e * slots + k
        p = position[r]
        q = orientation[r]
        f = wp.quat_rotate(q, wp.vec3f(1.0, 0.0, 0.0))
        d = wp.length(p)
        inv = 1.0 / (d + scale)
        live = ok and index[r] >= 0 and wp.isfinite(d) and wp.isfinite(wp.length(f))
        c = col + k * 7
        for i in range(3):
            put_column(obs_out, final_obs_out, e, c + i, unit_or_zero(live, p[i] * inv), fin)
            put_column(obs_out, final_obs_out, e, c + 3 + i, unit_or_zero(live, f[i]), fin)
        seen = wp.where(live and revealed[r] != 0, 1.0, 0.0)
        put_column(obs_out, final_obs_out, e, c + 6, seen, fin)


@wp.kernel
def _next_gates_term_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    ok_env: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    index: wp.array(dtype=wp.int32),
    revealed: wp.array(dtype=wp.int32),
    # static
    slots: int,
    col: int,
    scale: float,
    write_final: int,
    # outputs
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
):
    e = wp.tid()
    fin = final_flag(write_final, mask[e])
    ok = ok_env[e] != 0
    write_next_gates_columns(
        e,
        ok,
        fin,
        col,
        slots,
        scale,
        position,
        orientation,
        index,
        revealed,
        obs_out,
        final_obs_out,
    )


class NextGatesTerm(ObservationTerm):
    """``"next_gates"``: a :class:`NextGates` named ``"next_gates"`` (gate courses only); 2
    slots and a ``position_scale`` of 1 by default (an env may default its own: the drone
    env's presets set metres)."""

    name = "next_gates"
    settings = NextGatesTermSettings
    env_defaults = {"num_gates": 2}
    bounds = (-1.0, 1.0)

    def components(self, settings, ctx):
        return [
            NextGates(
                settings.num_gates,
                reveal_range=settings.reveal_range,
                nominal_noise=settings.nominal_noise,
            )
        ]

    def dim(self, settings, ctx) -> int:
        return settings.num_gates * NEXT_GATES_COLS

    def write(self, settings, ctx, res, col, mask, write_final, out) -> None:
        poses = res[self.name]
        wp.launch(
            _next_gates_term_kernel,
            out.obs.shape[0],
            inputs=[
                mask,
                out.ok,
                poses.position,
                poses.orientation,
                poses.index,
                poses.revealed,
                settings.num_gates,
                col,
                settings.position_scale,
                write_final,
            ],
            outputs=[out.obs, out.final_obs],
            device=out.obs.device,
        )
