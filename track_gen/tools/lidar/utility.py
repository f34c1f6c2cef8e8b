"""The lidar scanner utility."""

from __future__ import annotations

import numpy as np
import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array
from ...core.exec import require_not_capturing
from ...results import GateSequence, Track
from ..props import PropSet
from ..shared import check_rows, mask_or
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
from .kernels import (
    _advance_kernel,
    _gate_key_kernel,
    _gate_scan_kernel,
    _grid_kernel,
    _reset_kernel,
    _track_scan_kernel,
)
from .result import LidarScan

_TRACK_ROWS = {"inner": wp.vec3f, "outer": wp.vec3f}
_TRACK_ENVS = {"count": wp.int32, "valid": wp.int32, "generation": wp.int32}
_GATE_ROWS = {
    "position": wp.vec3f,
    "orientation": wp.quatf,
    "half_size": wp.float32,
    "left": wp.vec3f,
    "right": wp.vec3f,
}
_GATE_ENVS = {"count": wp.int32, "valid": wp.int32, "generation": wp.int32}
_PROP_ROWS = {"position": wp.vec3f, "orientation": wp.quatf, "scale": wp.vec3f}
_PROP_KIND = {"cone": 0, "wall": 1}


def beam_angles(num_beams: int, fov: float) -> np.ndarray:
    """float64 ``[num_beams]``: beam ``b``'s angle from the agent's heading,
    ``-fov/2 + (b + 1/2) * fov / num_beams`` rad (counter-clockwise, centred, no beam twice
    on a full circle)."""
    b = np.arange(int(num_beams), dtype=np.float64)
    return -0.5 * float(fov) + (b + 0.5) * float(fov) / int(num_beams)


class _Shared:
    """Arrays every env range of a scanner shares (never cut to a range): the beam table
    and the one-row stand-ins of absent inputs."""

    def __init__(self, budget: AllocationBudget, angles: np.ndarray):
        table = np.stack([np.cos(angles), np.sin(angles)], -1).astype(np.float32)
        self.beams = budget.array(table, wp.vec2f, "lidar beam directions")
        self.seeds = budget.zeros(1, wp.int32, "no seeds")
        self.vec3 = budget.zeros(1, wp.vec3f, "no props")
        self.quat = budget.zeros(1, wp.quatf, "no props")
        self.count = budget.zeros(1, wp.int32, "no props")

    @staticmethod
    def buffers(num_beams: int) -> list[tuple[int, type]]:
        return [(num_beams, wp.vec2f), (1, wp.int32), (1, wp.vec3f), (1, wp.quatf), (1, wp.int32)]


class LidarScanner:
    """Planar range beams from each env's agent against its course (the module docs give
    the model, the candidate grid and the noise stream).

    Args:
        course: the generator's :class:`~track_gen.Track` (road borders) or
            :class:`~track_gen.GateSequence` (gates), read by pointer: call
            :meth:`refresh` after every regeneration.
        num_beams: beams per env ``B`` (``NUM_BEAMS``).
        fov: keyword-only field of view, rad (``FOV``, default 2*pi).
        max_range: keyword-only, track units (``MAX_RANGE``, default 1.0).
        props: keyword-only :class:`~track_gen.tools.PropSet` of the same track (read by
            pointer, refreshed with it), or None: no props.
        gate_model: keyword-only, gate courses: ``"posts"`` or ``"frames"`` (``GATE_MODEL``).
        post_radius: keyword-only, track units (``POST_RADIUS``).
        frame_thickness: keyword-only, track units (``FRAME_THICKNESS``).
        frame_depth: keyword-only, track units (``FRAME_DEPTH``).
        noise_std: keyword-only range noise, track units (``NOISE_STD``, 0: none).
        dropout: keyword-only dropout probability (``DROPOUT``, 0: none).
        grid_cells: keyword-only grid side ``G`` (``GRID_CELLS``, track courses).
        cell_entries: keyword-only grid capacity per item (``CELL_ENTRIES``).
        seeds: keyword-only int32 ``[E]`` per-env seeds (the generator's
            ``seeds.seeds``), read at every refresh; None: seed 0 for every env.

    Attributes:
        scan_result: the :class:`LidarScan` every :meth:`scan` overwrites.
        status: int32 ``[E]``: :class:`ScanStatus` of each env at its last refresh.
        key: uint32 ``[E]``: each env's noise key (a hash of its effective seed and epoch).
        grid: vec4f ``[E]``: ``(origin x, origin y, cell size, side)`` of each env's grid
            (track courses; NaN for an env without a course).

    Construction allocates (outside any capture) and refreshes every env; :meth:`refresh`,
    :meth:`scan` and :meth:`reset` allocate nothing, never synchronize and can be recorded.
    """

    def __init__(
        self,
        course: Track | GateSequence,
        num_beams: int = NUM_BEAMS.default,
        *,
        fov: float = FOV.default,
        max_range: float = MAX_RANGE.default,
        props: PropSet | None = None,
        gate_model: str = GATE_MODEL.default,
        post_radius: float = POST_RADIUS.default,
        frame_thickness: float = FRAME_THICKNESS.default,
        frame_depth: float = FRAME_DEPTH.default,
        noise_std: float = NOISE_STD.default,
        dropout: float = DROPOUT.default,
        grid_cells: int = GRID_CELLS.default,
        cell_entries: int = CELL_ENTRIES.default,
        seeds: wp.array | None = None,
    ):
        owner = "LidarScanner"
        if isinstance(course, Track):
            E, rows = check_rows(f"{owner} course", course, _TRACK_ROWS, _TRACK_ENVS, "Track")
            self.gates = False
        elif isinstance(course, GateSequence):
            E, rows = check_rows(f"{owner} course", course, _GATE_ROWS, _GATE_ENVS, "GateSequence")
            self.gates = True
        else:
            raise TypeError(
                f"{owner} course must be a Track or a GateSequence (a generator's result), got "
                f"{type(course).__name__}"
            )
        self.num_beams = NUM_BEAMS.check(num_beams, f"{owner} num_beams")
        self.fov = FOV.check(fov, f"{owner} fov")
        self.max_range = MAX_RANGE.check(max_range, f"{owner} max_range")
        self.gate_model = GATE_MODEL.check(gate_model, f"{owner} gate_model")
        self.post_radius = POST_RADIUS.check(post_radius, f"{owner} post_radius")
        self.frame_thickness = FRAME_THICKNESS.check(frame_thickness, f"{owner} frame_thickness")
        self.frame_depth = FRAME_DEPTH.check(frame_depth, f"{owner} frame_depth")
        self.noise_std = NOISE_STD.check(noise_std, f"{owner} noise_std")
        self.dropout = DROPOUT.check(dropout, f"{owner} dropout")
        self.grid_cells = GRID_CELLS.check(grid_cells, f"{owner} grid_cells")
        self.cell_entries = CELL_ENTRIES.check(cell_entries, f"{owner} cell_entries")
        device = course.count.device
        if seeds is not None:
            check_array(f"{owner} seeds", seeds, wp.int32, E, device, "the per-env seeds")
        self.props = None
        self._prop_cap = 1
        self._prop_kind = 0
        if props is not None:
            if not isinstance(props, PropSet):
                raise TypeError(
                    f"{owner} props must be a PropSet (tools.Props' result, or "
                    f"tools.PropPlacer(...).props) or None, got {type(props).__name__}"
                )
            if self.gates:
                raise TypeError(f"{owner} props: a gate course has no props; pass props=None")
            PE, prow = check_rows(
                f"{owner} props", props, _PROP_ROWS, {"count": wp.int32}, "PropSet"
            )
            if PE != E or props.position.device != device:
                raise ValueError(
                    f"{owner} props hold {PE} envs on {props.position.device}, expected {E} on "
                    f"{device}: pass the PropSet of the same course"
                )
            if getattr(props, "kind", None) not in _PROP_KIND:
                raise ValueError(f"{owner} props.kind must be 'cone' or 'wall'")
            self.props = props
            self._prop_cap = prow // E
            self._prop_kind = _PROP_KIND[props.kind]
        require_not_capturing(device, f"{owner} construction")
        self.course = course
        self.seeds = seeds
        self.device = device
        self.num_envs = E
        self.n_max = rows // E
        self.capacity = self.cell_entries * 2 * self.n_max
        budget = AllocationBudget(device, "lower num_beams, grid_cells or cell_entries")
        self.scan_result = LidarScan.allocate(E, self.num_beams, device, budget)
        self._shared = _Shared(budget, beam_angles(self.num_beams, self.fov))
        self._all = budget.full(E, 1, wp.int32, "all-envs mask")
        self.status = budget.zeros(E, wp.int32, "lidar env status")
        self.key = budget.zeros(E, wp.uint32, "lidar noise keys")
        if not self.gates:
            G = self.grid_cells
            self.grid = budget.zeros(E, wp.vec4f, "lidar grid boxes")
            self.num_items = budget.zeros(E, wp.int32, "lidar item counts")
            self.cell_start = budget.zeros(E * (G * G + 1), wp.int32, "lidar cell starts")
            self.cell_item = budget.zeros(E * self.capacity, wp.int32, "lidar cell items")
            self.segments = budget.zeros(E * 2 * self.n_max, wp.vec4f, "lidar border segments")
        self.refresh()

    @staticmethod
    def buffers(
        num_envs: int,
        num_beams: int,
        *,
        gates: bool,
        n_max: int = 0,
        grid_cells: int = GRID_CELLS.default,
        cell_entries: int = CELL_ENTRIES.default,
    ) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a scanner allocates (``n_max``: the track's
        rows per env)."""
        E = num_envs
        out = LidarScan.buffers(E, num_beams) + _Shared.buffers(num_beams)
        out += [(E, wp.int32), (E, wp.int32), (E, wp.uint32)]
        if not gates:
            G = grid_cells
            cap = cell_entries * 2 * n_max
            out += [(E, wp.vec4f), (E, wp.int32), (E * (G * G + 1), wp.int32), (E * cap, wp.int32)]
            out += [(E * 2 * n_max, wp.vec4f)]
        return out

    def refresh(self, mask: wp.array | None = None) -> None:
        """Rebuild the noise key, the status and (track courses) the candidate grid of the
        envs with ``mask[e] != 0`` (None: every env); unmasked envs stay bitwise unchanged.
        ``mask`` is a contiguous ``[E]`` int32 array on the course's device. One launch."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        c, sh = self.course, self._shared
        seeds, use_seeds = (sh.seeds, 0) if self.seeds is None else (self.seeds, 1)
        if self.gates:
            wp.launch(
                _gate_key_kernel,
                self.num_envs,
                inputs=[mask, c.count, c.valid, c.generation, seeds, use_seeds],
                outputs=[self.status, self.key],
                device=self.device,
            )
            return
        p = self.props
        props = (
            [sh.vec3, sh.quat, sh.vec3, sh.count, 0]
            if p is None
            else [p.position, p.orientation, p.scale, p.count, 1]
        )
        wp.launch(
            _grid_kernel,
            self.num_envs,
            inputs=[mask, c.inner, c.outer, c.count, c.valid, c.generation, seeds, *props[:4]]
            + [use_seeds, props[4], self._prop_kind, self._prop_cap, self.n_max]
            + [self.grid_cells, self.capacity],
            outputs=[
                self.status,
                self.key,
                self.grid,
                self.cell_start,
                self.cell_item,
                self.num_items,
                self.segments,
            ],
            device=self.device,
        )

    def check_pose(self, position: wp.array, orientation: wp.array) -> None:
        """The checks :meth:`scan` makes before it launches (TypeError / ValueError naming
        the argument)."""
        E, dev = self.num_envs, self.device
        check_array("position", position, wp.vec3f, E, dev, "one agent position per env")
        check_array(
            "orientation", orientation, wp.quatf, E, dev, "one world-from-body quaternion per env"
        )

    def scan(self, position: wp.array, orientation: wp.array) -> LidarScan:
        """Cast every env's beams and return :attr:`scan_result`; then each env's step
        counter advances by one.

        Args:
            position: vec3f ``[E]``: agent positions, track units (the beams start at its
                plan point; its z is the height at which gate frames are met). A finite
                position is clamped to ``COORD_LIMIT``; a non-finite one answers NaN.
            orientation: quatf ``[E]`` (x, y, z, w), world from body: the heading is the
                plan direction of the rotated local x axis (yaw about +z; any finite scale;
                ``(1, 0)`` when that axis is vertical or the quaternion zero). A non-finite
                one answers NaN.

        Inputs are checked on the host before anything launches; two launches, no
        allocation, no host synchronization.
        """
        self.check_pose(position, orientation)
        self._launch(position, orientation)
        return self.scan_result

    def _launch(self, position: wp.array, orientation: wp.array) -> None:
        """The scan's launches on this scanner's envs (a range view's too), unchecked."""
        r, c, sh = self.scan_result, self.course, self._shared
        B = self.num_beams
        noise = [self.max_range, self.noise_std, self.dropout]
        if self.gates:
            inputs = [position, orientation, sh.beams, self.status, self.key, r.step]
            inputs += [c.position, c.orientation, c.half_size, c.left, c.right, c.count]
            inputs += [B, self.n_max, int(self.gate_model == "frames"), self.post_radius]
            inputs += [self.frame_thickness, self.frame_depth, *noise]
            kernel = _gate_scan_kernel
        else:
            p = self.props
            props = (
                [sh.vec3, sh.quat, sh.vec3] if p is None else [p.position, p.orientation, p.scale]
            )
            inputs = [position, orientation, sh.beams, self.status, self.key, r.step, self.grid]
            inputs += [self.cell_start, self.cell_item, self.num_items, self.segments, c.count]
            inputs += [*props, B, self._prop_kind, self._prop_cap, self.n_max]
            inputs += [self.grid_cells, self.capacity, *noise]
            kernel = _track_scan_kernel
        wp.launch(
            kernel,
            (self.num_envs, B),
            inputs=inputs,
            outputs=[r.distance, r.hit],
            device=self.device,
        )
        wp.launch(_advance_kernel, self.num_envs, inputs=[], outputs=[r.step], device=self.device)

    def reset(self, mask: wp.array | None = None) -> None:
        """Restart the noise stream (step counter 0) of the envs with ``mask[e] != 0``
        (None: every env) and clear their last scan (NaN distances, hit 0). One launch."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        r = self.scan_result
        wp.launch(
            _reset_kernel,
            self.num_envs,
            inputs=[mask, self.num_beams],
            outputs=[r.step, r.distance, r.hit],
            device=self.device,
        )
