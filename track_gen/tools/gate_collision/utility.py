"""The gate colliders utility."""

from __future__ import annotations

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array
from ...core.exec import require_not_capturing
from ...core.settings import SettingsUtility, resolve_settings
from ...results import GateSequence
from ..shared import mask_or
from .fields import DiscCollisionSettings, FrameCollisionSettings
from .kernels import (
    _disc_query_kernel,
    _frame_query_kernel,
    _frames_kernel,
    _posts_kernel,
)
from .result import DiscContact, FrameContact

#: GateSequence arrays a collider reads: per-gate rows ``[E*max_gates]`` and per-env ``[E]``.
_GATE_ROWS = {
    "position": wp.vec3f,
    "orientation": wp.quatf,
    "half_size": wp.float32,
    "left": wp.vec3f,
    "right": wp.vec3f,
}


_GATE_ENVS = {"count": wp.int32, "valid": wp.int32}


def _gates(value, owner: str) -> GateSequence:
    """``value`` checked as a GateSequence: its type, then every array a collider reads
    (dtype, shape, one device), so a kernel never reads out of bounds."""
    if not isinstance(value, GateSequence):
        raise TypeError(
            f"{owner} must be a GateSequence (a GateGenerator's result), got "
            f"{type(value).__name__}: a track's road is tested with tools.BandCollisionUtility"
        )
    count = value.count
    if not isinstance(count, wp.array) or count.ndim != 1 or count.shape[0] < 1:
        raise TypeError(f"{owner}.count must be an int32 [E] wp.array, got {count!r}")
    E, device = count.shape[0], count.device
    for name, dtype in _GATE_ENVS.items():
        check_array(f"{owner}.{name}", getattr(value, name), dtype, E, device)
    rows = value.position.shape[0] if isinstance(value.position, wp.array) else 0
    if rows == 0 or rows % E != 0:
        raise ValueError(
            f"{owner}.position has {rows} rows for {E} envs: expected E * max_gates rows"
        )
    for name, dtype in _GATE_ROWS.items():
        check_array(f"{owner}.{name}", getattr(value, name), dtype, rows, device)
    return value


class DiscCollisionUtility(SettingsUtility):
    """Oriented boxes against the gate posts (plan-view discs; see the module docstring).

    Args:
        gates: the GateSequence to test against. The collider keeps a reference and reads it
            in :meth:`refresh`, so a generator's stable ``result`` works across regenerations
            (refresh the regenerated envs).
        settings: a :class:`DiscCollisionSettings` (positionally or as ``settings=``), or
            ``radius`` (post radius ``r``, track units, ``POST_RADIUS``: a number > 0) by
            position; ``max_boxes`` (boxes per env ``B``, ``MAX_BOXES``; box ``b`` of env
            ``e`` is row ``e*B + b``) by keyword.

    Construction allocates every buffer and refreshes all envs. Attributes (read-only):

    * ``contact``: the :class:`DiscContact` every query overwrites.
    * ``posts``: vec2f ``[E*2*max_gates]``: post centres (x, y) per env, track units, post
      ``k`` of env ``e`` at row ``e*2*max_gates + k`` (``2*g`` left, ``2*g + 1`` right end
      of gate ``g``); NaN past ``num_posts`` and for a bar end that is non-finite or beyond
      ``COORD_LIMIT`` (such a post never wins).
    * ``num_posts``: int32 ``[E]``: ``2*count`` (``count`` clamped to ``[0, max_gates]``) for
      a valid env (``valid != 0``), else 0 (the env answers as invalid).
    """

    SETTINGS = DiscCollisionSettings

    def __init__(self, gates: GateSequence, *settings: DiscCollisionSettings | float, **fields):
        self.gates = _gates(gates, "DiscCollisionUtility gates")
        self.settings = resolve_settings(
            DiscCollisionSettings, "DiscCollisionUtility", settings, fields
        )
        self.device = gates.count.device
        require_not_capturing(self.device, "DiscCollisionUtility construction")
        self.num_envs = gates.num_envs
        self.max_gates = gates.max_gates
        self._rows = self.num_envs * self.max_boxes
        budget = AllocationBudget(self.device, "lower max_boxes or max_gates")
        self._allocate(self, budget, self.device, self.settings, self.num_envs, self.max_gates)
        self.refresh()

    @staticmethod
    def _allocate(out, budget, device, s: DiscCollisionSettings, E: int, max_gates: int):
        """Every array of a collider of ``E`` envs of ``max_gates`` gates, set on ``out``
        (the collider, or a stand-in when :meth:`buffers` records a plan)."""
        out.contact = DiscContact.allocate(E * s.max_boxes, device, budget, s.max_boxes)
        out._all = budget.full(E, 1, wp.int32, "all-envs mask")
        out.posts = budget.zeros(E * 2 * max_gates, wp.vec2f, "gate posts")
        out.num_posts = budget.zeros(E, wp.int32, "post counts")

    def refresh(self, mask: wp.array | None = None) -> None:
        """Pack the posts of the envs with ``mask[e] != 0`` (``None``: all envs) from the
        gates' ``left``/``right``, ``count`` and ``valid``.

        ``mask`` is a contiguous ``[E]`` int32 array on the gates' device, read by pointer.
        Unmasked envs' posts stay bitwise unchanged. One launch, allocation-free."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        s = self.gates
        wp.launch(
            _posts_kernel,
            self.num_envs,
            inputs=[mask, s.left, s.right, s.count, s.valid, self.max_gates],
            outputs=[self.num_posts, self.posts],
            device=self.device,
        )

    def query(
        self, position: wp.array, orientation: wp.array, half_extents: wp.array
    ) -> DiscContact:
        """Test ``B = max_boxes`` boxes per env against their env's posts; returns
        :attr:`contact`.

        Args:
            position: vec3f ``[E*B]``: box centres, track units (z ignored). A non-finite
                position (or orientation, or half extents) marks an inactive slot: hit 0,
                post -1, NaN geometry; a finite one is clamped to ``COORD_LIMIT`` (1e18).
            orientation: quatf ``[E*B]`` (x, y, z, w): only the yaw about +z is used (the
                direction of the rotated local x axis in plan view; any finite scale: a huge
                or tiny quaternion is scaled by its largest component first).
            half_extents: vec2f ``[E*B]``: half length along the box's local x and half
                width along its local y, track units (absolute values, clamped to
                ``COORD_LIMIT``, are used).

        Every box of an invalid env (no posts at its last refresh), or of an env whose posts
        are all NaN (non-finite or beyond ``COORD_LIMIT``), answers hit 0, post -1 and NaN
        geometry. Inputs are checked on the host before anything launches; one launch,
        no allocation, no host synchronization.
        """
        rows, dev = self._rows, self.device
        slot = "one row per box slot (env e, box b at row e*max_boxes + b)"
        check_array("position", position, wp.vec3f, rows, dev, slot)
        check_array("orientation", orientation, wp.quatf, rows, dev, slot)
        check_array("half_extents", half_extents, wp.vec2f, rows, dev, slot)
        c = self.contact
        wp.launch(
            _disc_query_kernel,
            rows,
            inputs=[
                self.num_posts,
                self.posts,
                position,
                orientation,
                half_extents,
                self.max_gates,
                self.max_boxes,
                self.radius,
            ],
            outputs=c.arrays(),
            device=dev,
        )
        return c


class FrameCollisionUtility(SettingsUtility):
    """Spheres against the gate frames (four boxes per gate; see the module docstring).

    Args:
        gates: the GateSequence to test against (kept by reference, read in
            :meth:`refresh`).
        settings: a :class:`FrameCollisionSettings` (positionally or as ``settings=``), or
            by position or keyword: ``thickness`` (member thickness ``th``, track units,
            ``FRAME_THICKNESS``, > 0), ``depth`` (member depth ``dp`` along the gate's
            forward axis, track units, ``FRAME_DEPTH``, >= 0), ``agent_radius`` (radius of
            each env's agent sphere, track units, ``AGENT_RADIUS``, >= 0).

    Construction allocates every buffer and refreshes all envs. Attributes (read-only):

    * ``contact``: the :class:`FrameContact` every query overwrites.
    * ``frame``: vec4f ``[E*max_gates]``: ``(centre x, y, z, half_size)`` per gate, track
      units; NaN past ``num_gates`` (and for a gate whose centre or half size is non-finite
      or beyond ``COORD_LIMIT``, or whose orientation is non-finite or zero: it is never
      hit).
    * ``rotation``: mat33f ``[E*max_gates]``: world -> gate rotation (rows: the gate's
      forward, left and up axes in world), from its normalized ``orientation``; NaN where
      ``frame`` is.
    * ``num_gates``: int32 ``[E]``: ``count`` clamped to ``[0, max_gates]`` for a valid env
      (``valid != 0``), else 0 (answers as invalid).
    """

    SETTINGS = FrameCollisionSettings

    def __init__(self, gates: GateSequence, *settings: FrameCollisionSettings | float, **fields):
        self.gates = _gates(gates, "FrameCollisionUtility gates")
        self.settings = resolve_settings(
            FrameCollisionSettings, "FrameCollisionUtility", settings, fields, positional=3
        )
        self.device = gates.count.device
        require_not_capturing(self.device, "FrameCollisionUtility construction")
        self.num_envs = gates.num_envs
        self.max_gates = gates.max_gates
        budget = AllocationBudget(self.device, "lower num_envs or max_gates")
        self._allocate(self, budget, self.device, self.settings, self.num_envs, self.max_gates)
        self.refresh()

    @staticmethod
    def _allocate(out, budget, device, s, E: int, max_gates: int) -> None:
        """Every array of a collider of ``E`` envs of ``max_gates`` gates, set on ``out``
        (the collider, or a stand-in when :meth:`buffers` records a plan)."""
        out.contact = FrameContact.allocate(E, device, budget)
        out._all = budget.full(E, 1, wp.int32, "all-envs mask")
        out.frame = budget.zeros(E * max_gates, wp.vec4f, "gate frames")
        out.rotation = budget.zeros(E * max_gates, wp.mat33f, "gate rotations")
        out.num_gates = budget.zeros(E, wp.int32, "gate counts")

    def refresh(self, mask: wp.array | None = None) -> None:
        """Derive the gate frames (centre, half size, world -> gate rotation) of the envs
        with ``mask[e] != 0`` (``None``: all envs).

        ``mask`` is a contiguous ``[E]`` int32 array on the gates' device, read by pointer.
        Unmasked envs' frames stay bitwise unchanged. One launch, allocation-free."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        s = self.gates
        wp.launch(
            _frames_kernel,
            self.num_envs,
            inputs=[mask, s.position, s.orientation, s.half_size, s.count, s.valid]
            + [self.max_gates],
            outputs=[self.num_gates, self.frame, self.rotation],
            device=self.device,
        )

    def query(self, position: wp.array) -> FrameContact:
        """Test each env's agent sphere against its env's gate frames; returns
        :attr:`contact`.

        Args:
            position: vec3f ``[E]``: agent centres, track units. A non-finite position
                answers hit 0, gate -1, member -1 and NaN geometry, as an invalid env does; a
                finite one is clamped to ``COORD_LIMIT`` (1e18; within it, used as is).

        Inputs are checked on the host before anything launches; one launch, no allocation,
        no host synchronization.
        """
        E, dev = self.num_envs, self.device
        check_array("position", position, wp.vec3f, E, dev, "one agent centre per env")
        c = self.contact
        wp.launch(
            _frame_query_kernel,
            E,
            inputs=[
                self.num_gates,
                self.frame,
                self.rotation,
                position,
                self.max_gates,
                self.thickness,
                self.depth,
                self.agent_radius,
            ],
            outputs=c.arrays(),
            device=dev,
        )
        return c
