"""The Tunable declarations of :class:`~track_gen.interop.newton.NewtonCourse`."""

from __future__ import annotations

from ...core.tunable import Tunable
from ...tools.fields import DISTANCE_HI, distance

_SURFACES = ("interop.newton.NewtonCourse",)

#: Slack of the default grid over the largest bake square the generator predicts: measured
#: bake squares reach 1.18 times the prediction (E = 512, four samplers, three batches).
GRID_SLACK = 1.25

RESOLUTION = Tunable(
    "resolution",
    None,
    kind="int",
    lo=2,
    hi=4096,
    optional=True,
    unit="vertices",
    doc="height-field vertices per side of every world's grid; None gives cells no larger than "
    "the bake's on the largest predicted course.",
    surfaces=_SURFACES,
)

HALF_EXTENT = distance(
    "half_extent",
    None,
    positive=True,
    optional=True,
    doc="half the side of every world's square height-field grid, centred on the env's bake "
    f"square at each write; None is {GRID_SLACK} times half the largest bake square (predicted "
    "from the generator, or read from the first batch).",
    surfaces=_SURFACES,
)

Z_LO = Tunable(
    "z_lo",
    None,
    kind="float",
    lo=-DISTANCE_HI,
    hi=DISTANCE_HI,
    optional=True,
    unit="track units",
    doc="lowest height the grids hold (Newton's min_z); None is the lowest of what the "
    "generator can draw (z_min, its randomizer's lo; 0 for a flat track), the bake's fill and "
    "the first batch's baked heights.",
    surfaces=_SURFACES,
)

Z_HI = Tunable(
    "z_hi",
    None,
    kind="float",
    lo=-DISTANCE_HI,
    hi=DISTANCE_HI,
    optional=True,
    unit="track units",
    doc="highest height the grids hold (Newton's max_z; >= z_lo); None is the highest of what "
    "the generator can draw (z_max, its randomizer's hi), the bake's fill and the first "
    "batch's baked heights.",
    surfaces=_SURFACES,
)

MESHES = Tunable(
    "meshes",
    False,
    kind="bool",
    doc="give every world its own copy of Newton's height-field triangle mesh (which ray casts "
    "read) and let refresh_meshes() rewrite it; False: the worlds share one flat mesh, built "
    "at finalize and never updated.",
    surfaces=_SURFACES,
)

PARK_DEPTH = distance(
    "park_depth",
    None,
    positive=True,
    optional=True,
    doc="how far below z_lo an unused prop is parked (under the grid's centre); None is "
    "2 * half_extent.",
    surfaces=_SURFACES,
)
