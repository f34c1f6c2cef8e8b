"""A planar lidar: :class:`LidarResult`, :class:`LidarUtility` and :class:`Lidar`.

Each env's agent casts ``num_beams`` horizontal rays per step from its position, beam ``b``
at ``-fov/2 + (b + 1/2) * fov / num_beams`` rad from its heading (counter-clockwise; the
heading is the plan direction of the orientation's local x axis, the yaw about +z). A beam
reads the distance to the first obstacle along it, ``max_range`` when none lies within it.

What a beam sees:

* **Track courses**: the road borders (the closed inner and outer polylines, infinitely
  tall walls seen in plan view: z is ignored) and, with a props component, the props (a
  cone is the disc of its base, ``scale.x / 2`` in radius; a wall the plan footprint of its
  base face, a rectangle of ``scale.x`` times the plan length of its local x by
  ``scale.y``, also infinitely tall).
* **Gate courses**: ``gate_model="posts"``: each gate's two posts, infinitely tall discs of
  ``post_radius`` at its bar ends (plan view, as ``DiscCollision``); ``gate_model="frames"``:
  each gate's four frame members (``FrameCollision``'s boxes, ``frame_thickness`` and
  ``frame_depth``), met by the ray at the agent's height (a 3D ray in the horizontal plane
  through the position, so a beam passes above or below a frame and through its opening).

A position inside a solid obstacle (a disc, a rectangle, a member box) reads 0.

Exactness and the candidate grid (track courses): each env's refresh packs its border
segments and props into a uniform square grid of ``grid_cells x grid_cells`` cells over
their bounding box; an item is listed in every cell its bounding box overlaps (a 0.1% cell
margin). A beam marches through the cells it crosses (a DDA from where it enters the grid)
and tests every listed item exactly (float32 ray-segment, ray-disc and ray-rectangle
intersections, a segment's parameter range widened by 1e-5 so that the ray cannot slip
between two segments sharing a bead); it stops at the first cell whose exit lies beyond
the nearest hit so far, so the answer is the exact first hit among all items. The lists
hold at most ``cell_entries * 2 * N_max`` entries per env; an env that needs more is
scanned by brute force over all its items (``status`` BRUTE; the same answer, slower).
Gate courses test every gate of the env (``max_gates <= 256``; a frame's bounding circle
first).

Invalid envs and inputs: an env that is invalid at its last refresh, has fewer than 3 or
more than ``N_max`` beads, a border bead or a prop out of range (``COORD_LIMIT``), or no
gates, answers NaN distances and hit 0 on every beam, as does a non-finite position or
orientation; a finite position beyond ``COORD_LIMIT`` is clamped to it. A gate or post out
of range is never hit. Every answer of a valid env with a finite pose is finite.

Noise (``noise_std``, ``dropout``): beam ``b`` of env ``e`` at its scan ``k`` (the step
counter ``LidarResult.step``: scans since the env's last reset, 0 after ``reset``) draws from
a hash of ``(key[e], k, b)``, ``key[e]`` a hash of the env's effective seed and epoch (the
``seeds`` and ``generation`` at its last refresh): a pure function of (effective seed,
epoch, step counter), the same on every run, replay and CPU thread count. A draw below
``dropout`` drops the beam (``max_range``, hit 0); a hit's distance gets ``noise_std``
times a standard normal (Box-Muller), clamped to ``[0, max_range]``. A masked regeneration
refreshes the masked envs' keys only.

Every refresh, scan and reset is allocation-free and capturable; the component splits its
refresh and its scan on the generator's CPU env ranges (``cpu_threads``), each range
writing its own rows, so the bytes do not depend on the thread count.
"""

from ...core.deprecation import deprecated_names
from .component import Lidar
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
    LidarSettings,
)
from .kernels import ScanStatus
from .result import LidarResult
from .utility import LidarUtility, beam_angles

__all__ = [
    "LidarSettings",
    "CELL_ENTRIES",
    "DROPOUT",
    "FOV",
    "FRAME_DEPTH",
    "FRAME_THICKNESS",
    "GATE_MODEL",
    "GRID_CELLS",
    "Lidar",
    "LidarResult",
    "LidarUtility",
    "MAX_RANGE",
    "NOISE_STD",
    "NUM_BEAMS",
    "POST_RADIUS",
    "ScanStatus",
    "beam_angles",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "LidarScan": "LidarResult",
    "LidarScanner": "LidarUtility",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
