"""Collision against the gates of a :class:`~track_gen.results.GateSequence`.

Two models of a gate, one per course component (both named ``"collision"``):

Posts (:class:`DiscCollisionUtility`, :class:`DiscCollision`)
    Each gate has two posts, vertical cylinders of radius ``r`` through its bar ends ``left``
    and ``right``, infinitely tall: the test is in plan view (x, y; z is ignored), like
    :class:`~track_gen.tools.BandCollisionUtility`. Post ``2*g`` stands at gate ``g``'s left end,
    post ``2*g + 1`` at its right end. A box (an oriented rectangle in plan view) is tested
    against every post of its env: the post whose centre is nearest to the solid rectangle
    wins (ties: the lowest post index), ``distance`` = (distance from that centre to the
    rectangle, 0 when the centre is inside it) - ``r``, and ``hit = distance <= 0`` (the
    rectangle meets the disc). A post centre inside the rectangle gives ``distance = -r``.

Frames (:class:`FrameCollisionUtility`, :class:`FrameCollision`)
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

from ...core.deprecation import deprecated_names
from .component import DiscCollision, FrameCollision
from .fields import (
    AGENT_RADIUS,
    FRAME_DEPTH,
    FRAME_THICKNESS,
    POST_RADIUS,
    DiscCollisionSettings,
    FrameCollisionSettings,
)
from .kernels import FrameMember
from .result import DiscContact, FrameContact
from .utility import DiscCollisionUtility, FrameCollisionUtility

__all__ = [
    "AGENT_RADIUS",
    "DiscCollisionUtility",
    "DiscCollision",
    "DiscCollisionSettings",
    "DiscContact",
    "FRAME_DEPTH",
    "FRAME_THICKNESS",
    "FrameCollisionUtility",
    "FrameCollision",
    "FrameCollisionSettings",
    "FrameContact",
    "FrameMember",
    "POST_RADIUS",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "DiscCollider": "DiscCollisionUtility",
    "FrameCollider": "FrameCollisionUtility",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
