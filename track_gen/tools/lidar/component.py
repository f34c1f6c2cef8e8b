"""The course component of the lidar (its Tunables: ``fields.py``)."""

from __future__ import annotations

import warp as wp

from ...core.component import Component, InputSpec, buffer_bytes
from ...core.exec import is_capturing
from ...core.ranges import EnvSplit, range_view, run_ranges
from ...results import GateSequence, Track
from ..props import PropSet
from .fields import (
    CELL_ENTRIES,
    DROPOUT,
    FOV,
    FRAME_DEPTH,
    FRAME_THICKNESS,
    GATE_MODEL,
    GRID_CELLS,
    MAX_RANGE,
    NOISE_STD,
    NUM_BEAMS,
    POST_RADIUS,
)
from .utility import LidarScanner

_AUTO = "auto"


def _props_name(value) -> str | None:
    if value is None or value == _AUTO:
        return value
    if not isinstance(value, str) or not value:
        raise TypeError(
            f"Lidar props must be 'auto', None or the name of a props component, got {value!r}"
        )
    return value


# ---------------------------------------------------------------------------------- component
class Lidar(Component):
    """Course component ``"lidar"``: ``num_beams`` planar range beams per env and step from
    the agent's pose against the road borders (and props) of a track course or the gates
    (posts or frames) of a gate course. ``res["lidar"]`` is the :class:`LidarScan`.

    Args:
        num_beams: beams per env (``NUM_BEAMS``).
        fov: keyword-only field of view, rad (``FOV``; default 2*pi).
        max_range: keyword-only, track units (``MAX_RANGE``; default 1.0).
        props: keyword-only: ``"auto"`` (the component named ``"props"`` when the course
            attached one before this one, as ``Course.track(..., extra=[Props(...),
            Lidar(...)])`` does), the name of a props component (this one then runs after
            it; a course without it is refused), or None (props are not seen).
        gate_model: keyword-only (gate courses): ``"posts"`` or ``"frames"`` (``GATE_MODEL``).
        post_radius: keyword-only, track units (``POST_RADIUS``).
        frame_thickness: keyword-only, track units (``FRAME_THICKNESS``).
        frame_depth: keyword-only, track units (``FRAME_DEPTH``).
        noise_std: keyword-only range noise, track units (``NOISE_STD``).
        dropout: keyword-only dropout probability (``DROPOUT``).
        grid_cells: keyword-only grid side (``GRID_CELLS``).
        cell_entries: keyword-only grid capacity per item (``CELL_ENTRIES``).
        name: component name (default ``"lidar"``).
        after: names this component runs after.

    Inputs: ``position`` vec3f ``[E]`` (agent positions, track units) and ``orientation``
    quatf ``[E]`` (world from body; the heading is the yaw about +z). The noise key of an env
    is refreshed with its course, its step counter restarts at every reset of the env.
    ``utility`` is the :class:`LidarScanner`.
    """

    name = "lidar"
    INPUTS = (
        InputSpec("position", wp.vec3f, doc="agent position per env, track units"),
        InputSpec("orientation", wp.quatf, doc="agent orientation per env (world from body)"),
    )

    def __init__(
        self,
        num_beams: int = NUM_BEAMS.default,
        *,
        fov: float = FOV.default,
        max_range: float = MAX_RANGE.default,
        props: str | None = _AUTO,
        gate_model: str = GATE_MODEL.default,
        post_radius: float = POST_RADIUS.default,
        frame_thickness: float = FRAME_THICKNESS.default,
        frame_depth: float = FRAME_DEPTH.default,
        noise_std: float = NOISE_STD.default,
        dropout: float = DROPOUT.default,
        grid_cells: int = GRID_CELLS.default,
        cell_entries: int = CELL_ENTRIES.default,
        name: str | None = None,
        after: tuple[str, ...] | None = None,
    ):
        self.props_name = _props_name(props)
        super().__init__(name=name, after=after)
        if self.props_name not in (None, _AUTO) and self.props_name not in self.after:
            self.after = (*self.after, self.props_name)
        owner = "Lidar"
        self.options = {
            "fov": FOV.check(fov, f"{owner} fov"),
            "max_range": MAX_RANGE.check(max_range, f"{owner} max_range"),
            "gate_model": GATE_MODEL.check(gate_model, f"{owner} gate_model"),
            "post_radius": POST_RADIUS.check(post_radius, f"{owner} post_radius"),
            "frame_thickness": FRAME_THICKNESS.check(frame_thickness, f"{owner} frame_thickness"),
            "frame_depth": FRAME_DEPTH.check(frame_depth, f"{owner} frame_depth"),
            "noise_std": NOISE_STD.check(noise_std, f"{owner} noise_std"),
            "dropout": DROPOUT.check(dropout, f"{owner} dropout"),
            "grid_cells": GRID_CELLS.check(grid_cells, f"{owner} grid_cells"),
            "cell_entries": CELL_ENTRIES.check(cell_entries, f"{owner} cell_entries"),
        }
        self.num_beams = NUM_BEAMS.check(num_beams, f"{owner} num_beams")
        self._views: list = []

    def _prop_set(self, ctx) -> PropSet | None:
        name = self.props_name
        if name is None or not isinstance(ctx.generator.result, Track):
            return None
        if name == _AUTO:
            comp = ctx.components.get("props")
            if comp is None:
                return None
        else:
            comp = ctx.get(name)
        result = getattr(comp, "result", None)
        if not isinstance(result, PropSet):
            raise TypeError(
                f"Lidar props={name!r}: component {comp!r} has no PropSet result; name a "
                "tools.Props component or pass props=None"
            )
        return result

    def attach(self, ctx) -> None:
        result = ctx.generator.result
        if not isinstance(result, (Track, GateSequence)):
            raise TypeError(
                f"Lidar needs a track or gate generator, got a {type(result).__name__} result"
            )
        seeds = getattr(getattr(ctx.generator, "seeds", None), "seeds", None)
        ok = isinstance(seeds, wp.array) and seeds.dtype == wp.int32
        self.utility = LidarScanner(
            result,
            self.num_beams,
            props=self._prop_set(ctx),
            seeds=seeds if ok and seeds.shape == (ctx.num_envs,) else None,
            **self.options,
        )
        self._split = EnvSplit(self.utility, ctx.generator)
        self._ranges = self._split.ranges
        self.result = self.utility.scan_result

    def planned_bytes(self, layout, config) -> int:
        """The :class:`LidarScanner`'s buffers (:meth:`LidarScanner.buffers`)."""
        gates = getattr(layout, "family", "track") == "gates"
        o = self.options
        return buffer_bytes(
            LidarScanner.buffers(
                layout.num_envs,
                self.num_beams,
                gates=gates,
                n_max=layout.N_max,
                grid_cells=o["grid_cells"],
                cell_entries=o["cell_entries"],
            )
        )

    def on_bind(self, arrays) -> None:
        u = self.utility
        u.check_pose(arrays["position"], arrays["orientation"])
        E = u.num_envs
        # one scanner view per CPU env range, its inputs cut to the range
        self._views = [
            (
                range_view(u, E, lo, hi),
                arrays["position"][lo:hi],
                arrays["orientation"][lo:hi],
            )
            for lo, hi in self._ranges
        ]

    def on_generate(self, ctx, mask) -> None:
        self._split.run(LidarScanner.refresh, mask)

    def step(self, ctx):
        b = self.bound
        if self._views and not is_capturing(ctx.device):
            run_ranges([(lambda v=v: v[0]._launch(v[1], v[2])) for v in self._views])
        else:
            self.utility._launch(b["position"], b["orientation"])
        return self.result

    def reset(self, ctx, mask) -> None:
        self.utility.reset(mask)
