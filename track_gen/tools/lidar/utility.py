"""The lidar scanner utility."""

from __future__ import annotations

import numpy as np
import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array
from ...core.exec import require_not_capturing
from ...core.settings import SettingsUtility, resolve_settings
from ...results import GateSequence, Track
from ..props import PropsResult
from ..shared import check_rows, mask_or
from .fields import LidarSettings
from .kernels import (
    _advance_kernel,
    _gate_key_kernel,
    _gate_scan_kernel,
    _grid_kernel,
    _reset_kernel,
    _track_scan_kernel,
)
from .result import LidarResult

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


class LidarUtility(SettingsUtility):
    """Planar range beams from each env's agent against its course (the module docs give
    the model, the candidate grid and the noise stream).

    Args:
        course: the generator's :class:`~track_gen.Track` (road borders) or
            :class:`~track_gen.GateSequence` (gates), read by pointer: call
            :meth:`refresh` after every regeneration.
        settings: a :class:`LidarSettings` (positionally or as ``settings=``), or
            ``num_beams`` (beams per env ``B``) by position.
        props: keyword-only :class:`~track_gen.tools.PropsResult` of the same track (read by
            pointer, refreshed with it), or None: no props.
        seeds: keyword-only int32 ``[E]`` per-env seeds (the generator's
            ``seeds.seeds``), read at every refresh; None: seed 0 for every env.
        **fields: any field of :class:`LidarSettings` by keyword (over the settings
            given), checked by it.

    Attributes:
        scan_result: the :class:`LidarResult` every :meth:`scan` overwrites.
        status: int32 ``[E]``: :class:`ScanStatus` of each env at its last refresh.
        key: uint32 ``[E]``: each env's noise key (a hash of its effective seed and epoch).
        grid: vec4f ``[E]``: ``(origin x, origin y, cell size, side)`` of each env's grid
            (track courses; NaN for an env without a course).

    Construction allocates (outside any capture) and refreshes every env; :meth:`refresh`,
    :meth:`scan` and :meth:`reset` allocate nothing, never synchronize and can be recorded.
    """

    SETTINGS = LidarSettings

    def __init__(
        self,
        course: Track | GateSequence,
        *settings: LidarSettings | int,
        props: PropsResult | None = None,
        seeds: wp.array | None = None,
        **fields,
    ):
        owner = "LidarUtility"
        self.settings = resolve_settings(LidarSettings, owner, settings, fields)
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
        device = course.count.device
        if seeds is not None:
            check_array(f"{owner} seeds", seeds, wp.int32, E, device, "the per-env seeds")
        self.props = None
        self._prop_cap = 1
        self._prop_kind = 0
        if props is not None:
            if not isinstance(props, PropsResult):
                raise TypeError(
                    f"{owner} props must be a PropsResult (tools.Props' result, or "
                    f"tools.PropsUtility(...).props) or None, got {type(props).__name__}"
                )
            if self.gates:
                raise TypeError(f"{owner} props: a gate course has no props; pass props=None")
            PE, prow = check_rows(
                f"{owner} props", props, _PROP_ROWS, {"count": wp.int32}, "PropsResult"
            )
            if PE != E or props.position.device != device:
                raise ValueError(
                    f"{owner} props hold {PE} envs on {props.position.device}, expected {E} on "
                    f"{device}: pass the PropsResult of the same course"
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
        self._allocate(self, budget, device, self.settings, E, self.n_max, gates=self.gates)
        self.refresh()

    @staticmethod
    def _allocate(out, budget, device, s: LidarSettings, E: int, n_max: int, *, gates: bool):
        """Every array of a scanner of ``E`` envs of ``n_max`` rows, set on ``out`` (the
        scanner, or a stand-in when :meth:`buffers` records a plan)."""
        out.scan_result = LidarResult.allocate(E, s.num_beams, device, budget)
        out._shared = _Shared(budget, beam_angles(s.num_beams, s.fov))
        out._all = budget.full(E, 1, wp.int32, "all-envs mask")
        out.status = budget.zeros(E, wp.int32, "lidar env status")
        out.key = budget.zeros(E, wp.uint32, "lidar noise keys")
        if not gates:
            G, capacity = s.grid_cells, s.cell_entries * 2 * n_max
            out.grid = budget.zeros(E, wp.vec4f, "lidar grid boxes")
            out.num_items = budget.zeros(E, wp.int32, "lidar item counts")
            out.cell_start = budget.zeros(E * (G * G + 1), wp.int32, "lidar cell starts")
            out.cell_item = budget.zeros(E * capacity, wp.int32, "lidar cell items")
            out.segments = budget.zeros(E * 2 * n_max, wp.vec4f, "lidar border segments")

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

    def scan(self, position: wp.array, orientation: wp.array) -> LidarResult:
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
