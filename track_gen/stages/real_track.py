"""Real circuits: the ``"real_track"`` sampler (built by :func:`track_gen.io.tracks_spec`).

The stage holds a table of ``K`` closed circuits, each arc-resampled on the host to the
layout's ``num_points`` points with its left and right road widths (stage option ``table``:
float32 ``[K, num_points, 4]`` rows ``(x, y, width_left, width_right)``, track units, left =
the side of the plan-view left normal). A regeneration copies circuit ``k`` into the env's
``line`` and ``line_width``:

* ``assign="env"``: ``k = e % K``, whatever the seed and epoch (a regeneration rebuilds the
  same circuit);
* ``assign="draw"``: ``k`` drawn uniformly from the env's effective seed, so ``advance=True``
  may pick another circuit, as a pure function of (seed, epoch).

The widths then follow the beads through resample, inflate and validate
(:mod:`~track_gen.stages.widths`).

Option ``levels`` (float32 ``[K, num_points, 2]``, from :func:`track_gen.io.tracks_spec`):
the overpass levels ``(deck, crossings)`` of circuits whose centre line crosses itself on a
bridge (``engine.stage.Workspace.line_level``); the stage then writes ``ws.line_level`` and
validity accepts the crossing. Option ``report`` (float32 ``[K, 2]``): what the import
adjusted per circuit, ``(largest inner-width narrowing at a hairpin in table units,
overpasses)``, copied to each env as ``diagnostics["real_track.narrowed"]`` (float32 ``[E]``)
and ``diagnostics["real_track.overpasses"]`` (int32 ``[E]``).
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ..engine.stage import Stage, Workspace
from ..seeds import stage_rng
from .common import launch_sampler
from .widths import allocate_levels, allocate_widths

wp.set_module_options({"enable_backward": False})

SALT_REAL_TRACK = wp.constant(wp.uint32(0x5EA17AC4))
#: ``assign`` option values, by kernel code.
ASSIGN_MODES = ("env", "draw")


def table_draw(stage: Stage) -> int:
    """The ``assign`` option of a table sampler (``real_track``, ``gate_table``) as its
    kernel's ``draw`` flag: 0 for ``"env"`` (the default), 1 for ``"draw"``; a ValueError
    naming the stage for anything else."""
    assign = stage.options.get("assign", "env")
    if not isinstance(assign, str) or assign not in ASSIGN_MODES:
        raise ValueError(
            f"StageSpec({stage.name!r}): option assign = {assign!r}: must be one of {ASSIGN_MODES}"
        )
    return int(assign == "draw")


@wp.func
def table_row(eff_seed: wp.int32, env: int, num_rows: int, draw: int, salt: wp.uint32) -> int:
    """The row of a table sampler's table (``num_rows`` rows) an env copies: ``assign="env"``
    (``draw == 0``) its index in the whole batch ``env`` mod ``num_rows``; ``assign="draw"``
    one drawn uniformly from ``stage_rng(eff_seed, salt)``."""
    k = env % num_rows
    if draw != 0:
        st = stage_rng(eff_seed, salt)
        k = wp.min(int(wp.randf(st) * float(num_rows)), num_rows - 1)
    return k


@wp.kernel
def _real_track_kernel(
    # inputs
    eff_seed: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    table_xy: wp.array(dtype=wp.vec2f),
    table_width: wp.array(dtype=wp.vec2f),
    table_level: wp.array(dtype=wp.vec2f),
    report: wp.array(dtype=wp.vec2f),
    # static
    num_tracks: int,
    num_points: int,
    draw: int,
    env_lo: int,
    levels: int,
    # outputs
    line_out: wp.array(dtype=wp.vec2f),
    width_out: wp.array(dtype=wp.vec2f),
    level_out: wp.array(dtype=wp.vec2f),
    narrowed_out: wp.array(dtype=wp.float32),
    overpasses_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    k = table_row(eff_seed[e], e + env_lo, num_tracks, draw, SALT_REAL_TRACK)
    src = k * num_points
    dst = e * num_points
    for i in range(num_points):
        line_out[dst + i] = table_xy[src + i]
        width_out[dst + i] = table_width[src + i]
    if levels != 0:
        for i in range(num_points):
            level_out[dst + i] = table_level[src + i]
    narrowed_out[e] = report[k][0]
    overpasses_out[e] = int(report[k][1])


class SamplerRealTrack(Stage):
    """Sampler of real circuits (``"real_track"``); options ``table``, ``levels``,
    ``report`` (see the module) and ``assign`` (``"env"`` or ``"draw"``). Writes ``ws.line``
    and ``ws.line_width`` (and ``ws.line_level`` with levels) and allocates ``ws.bead_width``."""

    role = "sampler"
    OPTIONS = ("table", "assign", "levels", "report")

    def __init__(self, name, config, options=None):
        super().__init__(name, config, options)
        # a given table and assign are checked with the spec; a missing table when the
        # generator is built (io.tracks_spec adds it to the standard pipeline)
        if "table" in self.options:
            self._check_table(self.options["table"], config.num_points)
            k = self.options["table"].shape[0]
            self._check_extra("levels", (k, config.num_points, 2))
            self._check_extra("report", (k, 2))
        table_draw(self)

    def _check_table(self, table, num_points: int) -> None:
        if not isinstance(table, np.ndarray) or table.ndim != 3 or table.shape[2] != 4:
            raise ValueError(
                f"StageSpec({self.name!r}): option 'table' must be a float32 [K, num_points, 4] "
                "array of (x, y, width_left, width_right) rows; build the spec with "
                "track_gen.io.tracks_spec(tracks, num_envs=...)"
            )
        if table.shape[1] != num_points or table.shape[0] < 1:
            raise ValueError(
                f"StageSpec({self.name!r}): option 'table' has shape {table.shape}, expected "
                f"[K >= 1, num_points = {num_points}, 4]; build the spec with "
                "track_gen.io.tracks_spec"
            )

    def _check_extra(self, name: str, shape: tuple) -> None:
        value = self.options.get(name)
        if value is not None and (not isinstance(value, np.ndarray) or value.shape != shape):
            raise ValueError(
                f"StageSpec({self.name!r}): option {name!r} must be a float32 array of shape "
                f"{list(shape)}; build the spec with track_gen.io.tracks_spec"
            )

    def allocate(self, ws: Workspace) -> None:
        lay = ws.layout
        table = self.options.get("table")
        self._check_table(table, lay.num_points)
        rows = np.ascontiguousarray(table.reshape(-1, 4), dtype=np.float32)
        self.num_tracks = int(table.shape[0])
        self.draw = table_draw(self)
        self.table_xy = ws.budget.array(rows[:, :2], wp.vec2f, f"{self.name} circuits")
        self.table_width = ws.budget.array(rows[:, 2:], wp.vec2f, f"{self.name} widths")
        K = self.num_tracks
        levels = self.options.get("levels")
        report = self.options.get("report")
        if report is None:
            report = np.zeros((K, 2), np.float32)
        self.report = ws.budget.array(
            np.ascontiguousarray(report, np.float32), wp.vec2f, f"{self.name} import report"
        )
        self.levels = int(levels is not None)
        allocate_widths(ws, self.name)
        if levels is not None:
            self.table_level = ws.budget.array(
                np.ascontiguousarray(levels.reshape(-1, 2), np.float32),
                wp.vec2f,
                f"{self.name} overpass levels",
            )
            allocate_levels(ws, self.name)
        else:
            self.table_level = None
        E = ws.layout.num_envs
        self.narrowed = ws.zeros(E, wp.float32, f"{self.name} narrowed")
        self.overpasses = ws.zeros(E, wp.int32, f"{self.name} overpasses")
        ws.diagnostics[f"{self.name}.narrowed"] = self.narrowed
        ws.diagnostics[f"{self.name}.overpasses"] = self.overpasses

    def enqueue(self, ws: Workspace, params: dict) -> None:
        launch_sampler(
            ws,
            _real_track_kernel,
            inputs=[self.table_xy, self.table_width, self.table_level, self.report],
            static=[self.num_tracks, ws.layout.num_points, self.draw, ws.env_lo, self.levels],
            outputs=[ws.line, ws.line_width, ws.line_level, self.narrowed, self.overpasses],
        )


__all__ = ["ASSIGN_MODES", "SamplerRealTrack"]
