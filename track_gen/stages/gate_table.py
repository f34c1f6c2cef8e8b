"""Given gate courses: the ``"gate_table"`` sampler of gate pipelines (built by
:func:`track_gen.io.gates_spec`).

The stage holds a table of ``K`` gate courses, each up to ``G <= max_gates`` gates with their
centres and the directions they face (stage options ``gates``: float32 ``[K, G, 6]`` rows
``(x, y, z, fx, fy, fz)``, track units, rows past the course's count ignored; ``counts``:
int ``[K]`` in ``[2, G]``). A regeneration copies course ``k`` into the env's gates
(``result.position``, ``result.count``) and directions (``ws.gate_tangent``, which
``gate_frames`` then faces the gates along instead of the neighbours' central difference):

* ``assign="env"``: ``k = e % K``, whatever the seed and epoch;
* ``assign="draw"``: ``k`` drawn uniformly from the env's effective seed, a pure function of
  (seed, epoch).

It places the gates itself, so the pipeline is ``gate_table -> gate_frames -> gate_validate``
(no ``gate_anchors``); the sampler's loop (``ws.line``) is not written.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ..engine.stage import Stage, Workspace
from .common import launch_sampler
from .real_track import table_draw, table_row

wp.set_module_options({"enable_backward": False})

SALT_GATE_TABLE = wp.constant(wp.uint32(0x6A7E7AB1))


@wp.kernel
def _gate_table_kernel(
    # inputs
    eff_seed: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    table_position: wp.array(dtype=wp.vec3f),
    table_forward: wp.array(dtype=wp.vec3f),
    table_count: wp.array(dtype=wp.int32),
    # static
    num_courses: int,
    table_gates: int,
    max_gates: int,
    draw: int,
    env_lo: int,
    # outputs
    position_out: wp.array(dtype=wp.vec3f),
    count_out: wp.array(dtype=wp.int32),
    tangent_out: wp.array(dtype=wp.vec3f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    k = table_row(eff_seed[e], e + env_lo, num_courses, draw, SALT_GATE_TABLE)
    n = table_count[k]
    src = k * table_gates
    dst = e * max_gates
    for i in range(n):
        position_out[dst + i] = table_position[src + i]
        tangent_out[dst + i] = table_forward[src + i]
    count_out[e] = n


class SamplerGateTable(Stage):
    """Sampler of given gate courses (``"gate_table"``); options ``gates``, ``counts`` (see the
    module) and ``assign`` (``"env"`` or ``"draw"``). Writes ``result.position``,
    ``result.count`` and ``ws.gate_tangent`` (which it allocates)."""

    role = "sampler"
    families = ("gates",)
    OPTIONS = ("gates", "counts", "assign")

    def __init__(self, name, config, options=None):
        super().__init__(name, config, options)
        if "gates" in self.options or "counts" in self.options:
            self._check_table(self.options.get("gates"), self.options.get("counts"), config)
        table_draw(self)

    def _check_table(self, gates, counts, config) -> None:
        fix = "build the spec with track_gen.io.gates_spec(paths, num_envs=...)"
        if not isinstance(gates, np.ndarray) or gates.ndim != 3 or gates.shape[2] != 6:
            raise ValueError(
                f"StageSpec({self.name!r}): option 'gates' must be a float32 [K, G, 6] array of "
                f"(x, y, z, fx, fy, fz) rows; {fix}"
            )
        K, G = gates.shape[0], gates.shape[1]
        max_gates = int(config.max_gates)
        if K < 1 or not 2 <= G <= max_gates:
            raise ValueError(
                f"StageSpec({self.name!r}): option 'gates' has shape {gates.shape}: expected "
                f"[K >= 1, G in [2, max_gates = {max_gates}], 6]; {fix}"
            )
        if not isinstance(counts, np.ndarray) or counts.shape != (K,):
            raise ValueError(
                f"StageSpec({self.name!r}): option 'counts' must be an int [K = {K}] array; {fix}"
            )
        if counts.dtype.kind not in "iu" or (counts < 2).any() or (counts > G).any():
            raise ValueError(
                f"StageSpec({self.name!r}): option 'counts' must hold ints in [2, {G}], got "
                f"{counts.tolist()}; {fix}"
            )
        rows = [gates[k, : int(counts[k])] for k in range(K)]
        if not all(np.isfinite(r).all() for r in rows):
            raise ValueError(
                f"StageSpec({self.name!r}): option 'gates' holds a NaN or inf in a course's "
                f"gates; {fix}"
            )

    def allocate(self, ws: Workspace) -> None:
        lay = ws.layout
        gates = self.options.get("gates")
        counts = self.options.get("counts")
        self._check_table(gates, counts, ws.config)
        self.num_courses = int(gates.shape[0])
        self.table_gates = int(gates.shape[1])
        self.draw = table_draw(self)
        rows = np.ascontiguousarray(gates.reshape(-1, 6), dtype=np.float32)
        self.table_position = ws.budget.array(rows[:, :3], wp.vec3f, f"{self.name} gates")
        self.table_forward = ws.budget.array(rows[:, 3:], wp.vec3f, f"{self.name} directions")
        self.table_count = ws.budget.array(
            np.asarray(counts, np.int32), wp.int32, f"{self.name} counts"
        )
        ws.gate_tangent = ws.zeros(lay.num_envs * lay.N_max, wp.vec3f, f"{self.name} tangents")

    def enqueue(self, ws: Workspace, params: dict) -> None:
        r = ws.result
        launch_sampler(
            ws,
            _gate_table_kernel,
            inputs=[self.table_position, self.table_forward, self.table_count],
            static=[self.num_courses, self.table_gates, ws.layout.N_max, self.draw, ws.env_lo],
            outputs=[r.position, r.count, ws.gate_tangent],
        )


__all__ = ["SamplerGateTable"]
