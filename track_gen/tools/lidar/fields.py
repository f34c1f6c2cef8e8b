"""The Tunable declarations of the lidar (read by its utility and its component)."""

from __future__ import annotations

import math

from ...core.settings import settings_class
from ...core.tunable import Tunable
from ..fields import count, distance, field_of_view, probability

_SURFACES = ("tools.Lidar", "tools.LidarUtility")

# ---------------------------------------------------------------------------------- fields
NUM_BEAMS = count(
    "num_beams",
    360,
    hi=4096,
    unit="beams",
    doc="rays per env and step, spread evenly over the field of view.",
    surfaces=_SURFACES,
)


FOV = field_of_view(
    2.0 * math.pi,
    doc="angular width of the fan, centred on the agent's heading (2*pi: a full circle).",
    surfaces=_SURFACES,
)


MAX_RANGE = distance(
    "max_range",
    1.0,
    positive=True,
    doc="longest distance a beam measures; a beam that hits nothing closer reads it.",
    surfaces=_SURFACES,
)


GATE_MODEL = Tunable(
    "gate_model",
    "posts",
    kind="choice",
    choices=("posts", "frames"),
    doc="what a beam sees of a gate (gate courses): its two posts (plan-view discs) or its "
    "square frame (four solid members, met at the agent's height).",
    surfaces=_SURFACES,
)


POST_RADIUS = distance(
    "post_radius",
    0.01,
    positive=True,
    doc="radius of the gate posts a beam sees (gate_model 'posts').",
    surfaces=_SURFACES,
)


FRAME_THICKNESS = distance(
    "frame_thickness",
    0.01,
    positive=True,
    doc="width of each frame member in the gate plane (gate_model 'frames').",
    surfaces=_SURFACES,
)


FRAME_DEPTH = distance(
    "frame_depth",
    0.01,
    doc="extent of each frame member along the gate's forward axis (gate_model 'frames').",
    surfaces=_SURFACES,
)


NOISE_STD = distance(
    "noise_std",
    0.0,
    doc="standard deviation of the Gaussian range noise added to every hit (0: none).",
    surfaces=_SURFACES,
)


DROPOUT = probability(
    "dropout",
    doc="probability that a beam returns nothing (reads max_range, hit 0) at a step.",
    surfaces=_SURFACES,
)


GRID_CELLS = count(
    "grid_cells",
    32,
    hi=256,
    unit="cells",
    doc="cells per side of each env's square candidate grid of border segments and props "
    "(track courses).",
    surfaces=_SURFACES,
)


CELL_ENTRIES = count(
    "cell_entries",
    4,
    hi=1024,
    unit="entries per segment",
    doc="grid capacity per env: cell_entries * 2 * N_max cell entries (border segments and "
    "props together); an env that needs more is scanned by brute force (exact, slower).",
    surfaces=_SURFACES,
)

#: Every field of the tool, in its keyword order.
FIELDS = (
    NUM_BEAMS,
    FOV,
    MAX_RANGE,
    GATE_MODEL,
    POST_RADIUS,
    FRAME_THICKNESS,
    FRAME_DEPTH,
    NOISE_STD,
    DROPOUT,
    GRID_CELLS,
    CELL_ENTRIES,
)

LidarSettings = settings_class(
    "LidarSettings",
    FIELDS,
    title="Lidar",
    doc="The settings of a lidar (tools.Lidar, tools.LidarUtility, RaceConfig.lidar). "
    "Fields without a default are required.",
    module="track_gen.tools.lidar",
)
