"""Collision against the gates of a :class:`~track_gen.results.GateSequence`.

Two models of a gate, one per course component (both named ``"collision"``):

Posts (:class:`DiscCollider`, :class:`DiscCollision`)
    Each gate has two posts, vertical cylinders of radius ``r`` through its bar ends ``left``
    and ``right``, infinitely tall: the test is in plan view (x, y; z is ignored), like
    :class:`~track_gen.tools.BandCollider`. Post ``2*g`` stands at gate ``g``'s left end,
    post ``2*g + 1`` at its right end. A box (an oriented rectangle in plan view) is tested
    against every post of its env: the post whose centre is nearest to the solid rectangle
    wins (ties: the lowest post index), ``distance`` = (distance from that centre to the
    rectangle, 0 when the centre is inside it) - ``r``, and ``hit = distance <= 0`` (the
    rectangle meets the disc). A post centre inside the rectangle gives ``distance = -r``.

Frames (:class:`FrameCollider`, :class:`FrameCollision`)
    Each gate is a square frame of four members around its opening (half-size
    ``h = half_size``), solid boxes in the gate frame (x forward, y left, z up; centre at the
    gate's ``position``, axes from its ``orientation``), member thickness ``th`` (across the
    opening's edge, in the gate plane) and depth ``dp`` (along x):

    =========  ====================  ==========================
    member     centre (gate frame)   half extents
    =========  ====================  ==========================
    0 left     (0, +(h + th/2), 0)   (dp/2, th/2, h + th)
    1 right    (0, -(h + th/2), 0)   (dp/2, th/2, h + th)
    2 top      (0, 0, +(h + th/2))   (dp/2, h + th, th/2)
    3 bottom   (0, 0, -(h + th/2))   (dp/2, h + th, th/2)
    =========  ====================  ==========================

    The side members span the full outer height, so the corner squares belong to two members
    (a tie goes to the lower member id). An agent is a sphere of radius ``agent_radius``: the
    member box with the smallest signed distance to its centre wins (ties: lowest gate, then
    lowest member), ``distance`` = (that signed distance) - ``agent_radius`` and
    ``hit = distance <= 0``. The signed distance is the Euclidean distance to the box outside
    it and minus the depth to the box's nearest face inside it (so a centre inside a member
    reads ``distance < -agent_radius``, the deeper the more negative, and the member it is
    deepest in wins). ``depth = 0`` makes flat members (plates in the gate plane).

Both colliders answer from the data their ``refresh(mask)`` derived from the gates (counts and
validity included): call it after every regeneration (same mask) before the next query; an
env keeps its previous answers until it is refreshed. An env with ``valid == 0`` or no gates
answers "no course" (hit 0, index -1, NaN geometry). Queries and refreshes are one launch
each, allocate nothing, never synchronize and can be recorded into a graph. Every env's gates
are tested by brute force (``max_gates <= 256``; the frame query skips a gate whose bounding
sphere is farther than the best member so far).

Input range (:mod:`~track_gen.core.extents`): a post, or a gate frame, whose coordinates are
non-finite or beyond ``COORD_LIMIT`` (1e18 track units) is packed NaN and never wins (an env
with no other post or gate answers "no course"); a gate's orientation is scaled by its
largest component before it is normalized. A query clamps a finite position, box centre or
half extent to ``COORD_LIMIT`` (a pose within it is used bit for bit) and scales a huge or
tiny box quaternion the same way, so an agent of a valid env at any finite pose gets finite
answers (beyond the limit: the answer of the clamped pose, far from every gate).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array, check_mask
from ...core.component import Component, InputSpec, buffer_bytes
from ...core.exec import require_not_capturing
from ...core.tunable import Tunable
from ...results import GateSequence
from ..band_collision import MAX_BOXES, box_inputs
from .kernels import (
    FrameMember,
    _disc_query_kernel,
    _frame_query_kernel,
    _frames_kernel,
    _posts_kernel,
)

wp.set_module_options({"enable_backward": False})

__all__ = [
    "AGENT_RADIUS",
    "FRAME_DEPTH",
    "FRAME_THICKNESS",
    "POST_RADIUS",
    "DiscCollider",
    "DiscCollision",
    "DiscContact",
    "FrameCollider",
    "FrameCollision",
    "FrameContact",
    "FrameMember",
]

POST_RADIUS = Tunable(
    "post_radius",
    None,
    kind="float",
    lo=0.0,
    lo_open=True,
    hi=1.0e6,
    optional=True,
    unit="track units",
    doc="radius of each gate post (a vertical cylinder through a bar end); None: no post "
    "collision (DiscCollider and DiscCollision need a number).",
)
FRAME_THICKNESS = Tunable(
    "frame_thickness",
    0.01,
    lo=0.0,
    lo_open=True,
    hi=1.0e6,
    unit="track units",
    doc="width of each frame member in the gate plane, outside the square opening.",
)
FRAME_DEPTH = Tunable(
    "frame_depth",
    0.01,
    lo=0.0,
    hi=1.0e6,
    unit="track units",
    doc="extent of each frame member along the gate's forward axis (0: flat members).",
)
AGENT_RADIUS = Tunable(
    "agent_radius",
    0.0,
    lo=0.0,
    hi=1.0e6,
    unit="track units",
    doc="radius of the sphere tested against the gate frames (0: a point).",
)


def _radius(value, owner: str) -> float:
    """A post radius: a number > 0 (``POST_RADIUS``; None is refused here)."""
    if value is None:
        rule = POST_RADIUS.range_text().removesuffix(", or None")
        raise TypeError(f"{owner} must be a number, got None: pass a post radius {rule}")
    return POST_RADIUS.check(value, owner)


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
            f"{type(value).__name__}: a track's road is tested with tools.BandCollider"
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


def _needs_gates(ctx, component: str) -> GateSequence:
    result = ctx.generator.result
    if not isinstance(result, GateSequence):
        raise TypeError(
            f"{component} needs a gate generator (its result a GateSequence), got a "
            f"{type(result).__name__}: a track course collides with its road band, "
            "tools.BandCollision()"
        )
    return result


# ----------------------------------------------------------------------------- results


@dataclass
class DiscContact:
    """Per-box answers of :meth:`DiscCollider.query` (box ``b`` of env ``e`` at row
    ``e*B + b``, ``B = max_boxes``). The collider returns the same instance on every query and
    overwrites it; :meth:`clone` takes a snapshot. Plan view (x, y), track units.

    Attributes:
        hit: int32 ``[E*B]``: 1 when the box's rectangle meets a post's disc (``distance <=
            0``), else 0. 0 for an inactive slot and for every box of an invalid env.
        post: int32 ``[E*B]``: the nearest post, ``2*g`` (gate ``g``'s left end) or
            ``2*g + 1`` (its right end); -1 for an inactive slot or an invalid env.
        distance: float32 ``[E*B]``: signed clearance between the rectangle and the nearest
            disc: distance from the post centre to the solid rectangle minus the radius
            (negative: they overlap; ``-radius`` when the centre is inside the rectangle).
            NaN when inactive/invalid.
        nearest: vec2f ``[E*B]``: the nearest post's centre (x, y). NaN when inactive/invalid.
    """

    hit: wp.array
    post: wp.array
    distance: wp.array
    nearest: wp.array

    @staticmethod
    def buffers(rows: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array :meth:`allocate` makes."""
        return [(rows, wp.int32), (rows, wp.int32), (rows, wp.float32), (rows, wp.vec2f)]

    @classmethod
    def allocate(cls, rows: int, device) -> DiscContact:
        """Buffers for ``rows`` boxes: hit 0, post -1, NaN geometry."""
        nan = float("nan")
        return cls(
            hit=wp.zeros(rows, dtype=wp.int32, device=device),
            post=wp.full(rows, -1, dtype=wp.int32, device=device),
            distance=wp.full(rows, nan, dtype=wp.float32, device=device),
            nearest=wp.full(rows, wp.vec2f(nan, nan), dtype=wp.vec2f, device=device),
        )

    def clone(self) -> DiscContact:
        """A detached deep copy (allocates: call it outside your graph)."""
        return DiscContact(
            **{f.name: wp.clone(getattr(self, f.name)) for f in dataclasses.fields(self)}
        )


@dataclass
class FrameContact:
    """Per-env answers of :meth:`FrameCollider.query` (one agent per env). The collider
    returns the same instance on every query and overwrites it; :meth:`clone` takes a
    snapshot. Track units.

    Attributes:
        hit: int32 ``[E]``: 1 when the agent's sphere meets a frame member (``distance <=
            0``), else 0 (also for an invalid env or a non-finite position).
        gate: int32 ``[E]``: gate of the nearest member; -1 when invalid/non-finite.
        member: int32 ``[E]``: the nearest member (:class:`FrameMember`: 0 left, 1 right,
            2 top, 3 bottom); -1 when invalid/non-finite.
        distance: float32 ``[E]``: signed distance from the agent centre to the nearest
            member box minus ``agent_radius``: outside the box the Euclidean distance, inside
            it minus the depth to the box's nearest face (``< -agent_radius``; 0 on its
            surface gives ``-agent_radius``). NaN when invalid/non-finite.
        nearest: vec3f ``[E]``: the closest point on that member box's surface (inside: on
            the face nearest to the centre). NaN when invalid/non-finite.
        normal: vec3f ``[E]``: the box's outward unit normal at ``nearest``: the unit vector
            from ``nearest`` towards the agent centre outside the box, the nearest face's
            outward axis inside it (push the agent along it to leave the member). NaN only
            when the env is invalid or the position non-finite.
    """

    hit: wp.array
    gate: wp.array
    member: wp.array
    distance: wp.array
    nearest: wp.array
    normal: wp.array

    @staticmethod
    def buffers(rows: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array :meth:`allocate` makes."""
        return [(rows, wp.int32)] * 3 + [(rows, wp.float32)] + [(rows, wp.vec3f)] * 2

    @classmethod
    def allocate(cls, rows: int, device) -> FrameContact:
        """Buffers for ``rows`` agents: hit 0, indices -1, NaN geometry."""
        nan = float("nan")
        nan3 = wp.vec3f(nan, nan, nan)
        return cls(
            hit=wp.zeros(rows, dtype=wp.int32, device=device),
            gate=wp.full(rows, -1, dtype=wp.int32, device=device),
            member=wp.full(rows, -1, dtype=wp.int32, device=device),
            distance=wp.full(rows, nan, dtype=wp.float32, device=device),
            nearest=wp.full(rows, nan3, dtype=wp.vec3f, device=device),
            normal=wp.full(rows, nan3, dtype=wp.vec3f, device=device),
        )

    def clone(self) -> FrameContact:
        """A detached deep copy (allocates: call it outside your graph)."""
        return FrameContact(
            **{f.name: wp.clone(getattr(self, f.name)) for f in dataclasses.fields(self)}
        )


# ----------------------------------------------------------------------------- posts


class DiscCollider:
    """Oriented boxes against the gate posts (plan-view discs; see the module docstring).

    Args:
        gates: the GateSequence to test against. The collider keeps a reference and reads it
            in :meth:`refresh`, so a generator's stable ``result`` works across regenerations
            (refresh the regenerated envs).
        radius: post radius ``r``, track units (``POST_RADIUS``: a number > 0).
        max_boxes: boxes per env ``B`` (``MAX_BOXES``); box ``b`` of env ``e`` is row
            ``e*B + b``.

    Construction allocates every buffer and refreshes all envs. Attributes (read-only):

    * ``contact``: the :class:`DiscContact` every query overwrites.
    * ``posts``: vec2f ``[E*2*max_gates]``: post centres (x, y) per env, track units, post
      ``k`` of env ``e`` at row ``e*2*max_gates + k`` (``2*g`` left, ``2*g + 1`` right end
      of gate ``g``); NaN past ``num_posts`` and for a bar end that is non-finite or beyond
      ``COORD_LIMIT`` (such a post never wins).
    * ``num_posts``: int32 ``[E]``: ``2*count`` (``count`` clamped to ``[0, max_gates]``) for
      a valid env (``valid != 0``), else 0 (the env answers as invalid).
    """

    def __init__(self, gates: GateSequence, radius: float, *, max_boxes: int = 1):
        self.gates = _gates(gates, "DiscCollider gates")
        self.radius = _radius(radius, "DiscCollider radius")
        self.max_boxes = MAX_BOXES.check(max_boxes, "DiscCollider max_boxes")
        self.device = gates.count.device
        require_not_capturing(self.device, "DiscCollider construction")
        self.num_envs = gates.num_envs
        self.max_gates = gates.max_gates
        E, dev = self.num_envs, self.device
        budget = AllocationBudget(dev, "lower max_boxes or max_gates")
        self._rows = E * self.max_boxes
        budget.take(self._rows * 4, wp.float32, "box contacts (E * max_boxes)")
        self._all = budget.full(E, 1, wp.int32, "all-envs mask")
        self.contact = DiscContact.allocate(self._rows, dev)
        self.posts = budget.zeros(E * 2 * self.max_gates, wp.vec2f, "gate posts")
        self.num_posts = budget.zeros(E, wp.int32, "post counts")
        self.refresh()

    @staticmethod
    def buffers(num_envs: int, max_gates: int, max_boxes: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a collider allocates."""
        E = num_envs
        posts = [(E * 2 * max_gates, wp.vec2f), (E, wp.int32)]
        return [(E, wp.int32), *DiscContact.buffers(E * max_boxes), *posts]

    def refresh(self, mask: wp.array | None = None) -> None:
        """Pack the posts of the envs with ``mask[e] != 0`` (``None``: all envs) from the
        gates' ``left``/``right``, ``count`` and ``valid``.

        ``mask`` is a contiguous ``[E]`` int32 array on the gates' device, read by pointer.
        Unmasked envs' posts stay bitwise unchanged. One launch, allocation-free."""
        if mask is None:
            mask = self._all
        else:
            check_mask(mask, self.num_envs, self.device)
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
            outputs=[c.hit, c.post, c.distance, c.nearest],
            device=dev,
        )
        return c


class DiscCollision(Component):
    """Course component ``"collision"`` of a gate course: oriented boxes against the gate
    posts (plan-view discs of radius ``radius`` at every bar end).

    Args:
        radius: post radius, track units (> 0).
        max_boxes: boxes per env B (inputs are ``[E*B]``).

    Inputs (as :class:`~track_gen.tools.BandCollision`'s): ``box_position`` vec3f ``[E*B]``
    (defaults to ``position`` when B == 1), ``orientation`` quatf ``[E*B]`` (yaw used),
    ``half_extents`` vec2f ``[E*B]``. ``step`` returns the :class:`DiscContact`
    (``res.contacts``); ``utility`` is the :class:`DiscCollider`. Needs a gate generator
    (TypeError otherwise).
    """

    name = "collision"
    families = ("gates",)

    def __init__(self, radius: float, *, max_boxes: int = 1, name: str | None = None):
        super().__init__(name=name)
        self.radius = _radius(radius, "DiscCollision radius")
        self.max_boxes = max_boxes = MAX_BOXES.check(max_boxes, "DiscCollision max_boxes")
        self.INPUTS = box_inputs(max_boxes)

    def attach(self, ctx) -> None:
        gates = _needs_gates(ctx, "DiscCollision")
        self.utility = DiscCollider(gates, self.radius, max_boxes=self.max_boxes)
        self.result = self.utility.contact

    def planned_bytes(self, layout, config) -> int:
        """The :class:`DiscCollider`'s buffers (:meth:`DiscCollider.buffers`)."""
        return buffer_bytes(DiscCollider.buffers(layout.num_envs, layout.N_max, self.max_boxes))

    def on_generate(self, ctx, mask) -> None:
        self.utility.refresh(mask)

    def step(self, ctx):
        b = self.bound
        return self.utility.query(b["box_position"], b["orientation"], b["half_extents"])


# ----------------------------------------------------------------------------- frames


class FrameCollider:
    """Spheres against the gate frames (four boxes per gate; see the module docstring).

    Args:
        gates: the GateSequence to test against (kept by reference, read in
            :meth:`refresh`).
        thickness: member thickness ``th``, track units (``FRAME_THICKNESS``, > 0).
        depth: member depth ``dp`` along the gate's forward axis, track units
            (``FRAME_DEPTH``, >= 0).
        agent_radius: radius of each env's agent sphere, track units (``AGENT_RADIUS``,
            >= 0).

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

    def __init__(self, gates: GateSequence, thickness: float, depth: float, agent_radius: float):
        self.gates = _gates(gates, "FrameCollider gates")
        self.thickness = FRAME_THICKNESS.check(thickness, "FrameCollider thickness")
        self.depth = FRAME_DEPTH.check(depth, "FrameCollider depth")
        self.agent_radius = AGENT_RADIUS.check(agent_radius, "FrameCollider agent_radius")
        self.device = gates.count.device
        require_not_capturing(self.device, "FrameCollider construction")
        self.num_envs = gates.num_envs
        self.max_gates = gates.max_gates
        E, dev = self.num_envs, self.device
        budget = AllocationBudget(dev, "lower num_envs or max_gates")
        budget.take(E * 10, wp.float32, "frame contacts")
        self._all = budget.full(E, 1, wp.int32, "all-envs mask")
        self.contact = FrameContact.allocate(E, dev)
        self.frame = budget.zeros(E * self.max_gates, wp.vec4f, "gate frames")
        self.rotation = budget.zeros(E * self.max_gates, wp.mat33f, "gate rotations")
        self.num_gates = budget.zeros(E, wp.int32, "gate counts")
        self.refresh()

    @staticmethod
    def buffers(num_envs: int, max_gates: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a collider allocates."""
        E, rows = num_envs, num_envs * max_gates
        frames = [(rows, wp.vec4f), (rows, wp.mat33f), (E, wp.int32)]
        return [(E, wp.int32), *FrameContact.buffers(E), *frames]

    def refresh(self, mask: wp.array | None = None) -> None:
        """Derive the gate frames (centre, half size, world -> gate rotation) of the envs
        with ``mask[e] != 0`` (``None``: all envs).

        ``mask`` is a contiguous ``[E]`` int32 array on the gates' device, read by pointer.
        Unmasked envs' frames stay bitwise unchanged. One launch, allocation-free."""
        if mask is None:
            mask = self._all
        else:
            check_mask(mask, self.num_envs, self.device)
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
            outputs=[c.hit, c.gate, c.member, c.distance, c.nearest, c.normal],
            device=dev,
        )
        return c


class FrameCollision(Component):
    """Course component ``"collision"`` of a gate course: each env's agent sphere against the
    square gate frames.

    Args:
        thickness: member thickness, track units (> 0).
        depth: member depth along the gate's forward axis, track units (>= 0).
        agent_radius: the agent sphere's radius, track units (>= 0).

    Input: ``position`` vec3f ``[E]`` (agent centres). ``step`` returns the
    :class:`FrameContact` (``res.contacts``); ``utility`` is the :class:`FrameCollider`.
    Needs a gate generator (TypeError otherwise).
    """

    name = "collision"
    families = ("gates",)
    INPUTS = (InputSpec("position", wp.vec3f, doc="agent centres, track units"),)

    def __init__(
        self, thickness: float, depth: float, agent_radius: float, *, name: str | None = None
    ):
        super().__init__(name=name)
        self.thickness = FRAME_THICKNESS.check(thickness, "FrameCollision thickness")
        self.depth = FRAME_DEPTH.check(depth, "FrameCollision depth")
        self.agent_radius = AGENT_RADIUS.check(agent_radius, "FrameCollision agent_radius")

    def attach(self, ctx) -> None:
        gates = _needs_gates(ctx, "FrameCollision")
        self.utility = FrameCollider(gates, self.thickness, self.depth, self.agent_radius)
        self.result = self.utility.contact

    def planned_bytes(self, layout, config) -> int:
        """The :class:`FrameCollider`'s buffers (:meth:`FrameCollider.buffers`)."""
        return buffer_bytes(FrameCollider.buffers(layout.num_envs, layout.N_max))

    def on_generate(self, ctx, mask) -> None:
        self.utility.refresh(mask)

    def step(self, ctx):
        return self.utility.query(self.bound["position"])
