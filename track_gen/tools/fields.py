"""The Tunable ranges several tools declare fields with: one home for each kind of value.

Each helper returns one field's :class:`~track_gen.core.tunable.Tunable`; the tool's own
``fields.py`` names it and gives its doc and surfaces (and aliases where a spec keyword
differs), so a range, a unit or a default is written once however many tools use it.
"""

from __future__ import annotations

import math

from ..core.tunable import Tunable

#: Largest distance a tool's field accepts, track units.
DISTANCE_HI = 1.0e6
#: Smallest positive distance a tool's field accepts, track units (a float32 kernel divides
#: by a positive distance: a range, a size, a spacing).
DISTANCE_LO = 1.0e-6


def distance(
    name: str, default, *, positive: bool = False, optional: bool = False, **declaration
) -> Tunable:
    """A distance in track units: ``[0, DISTANCE_HI]``, or ``[DISTANCE_LO, DISTANCE_HI]`` when
    ``positive``; ``optional``: None is allowed (the tool derives the value)."""
    return Tunable(
        name,
        default,
        kind="float",
        lo=DISTANCE_LO if positive else 0.0,
        hi=DISTANCE_HI,
        optional=optional,
        unit="track units",
        **declaration,
    )


def arc_spacing(**declaration) -> Tunable:
    """``spacing``: the required arc distance between consecutive placed items along a loop,
    ``[DISTANCE_LO, DISTANCE_HI]`` track units."""
    return Tunable(
        "spacing",
        None,
        kind="float",
        lo=DISTANCE_LO,
        hi=DISTANCE_HI,
        unit="track units",
        **declaration,
    )


def grid_resolution(name: str, **declaration) -> Tunable:
    """Texels per side of each env's square grid (a bake): 128 by default, ``[8, 4096]``."""
    return Tunable(name, 128, lo=8, hi=4096, unit="texels", **declaration)


def count(name: str, default, *, hi: int, unit: str, lo: int = 1, **declaration) -> Tunable:
    """An int count in ``[lo, hi]`` (1 by default); ``unit`` says what it counts."""
    return Tunable(name, default, kind="int", lo=lo, hi=hi, unit=unit, **declaration)


def probability(name: str, **declaration) -> Tunable:
    """A probability in ``[0, 1]``, 0 by default."""
    return Tunable(name, 0.0, kind="float", lo=0.0, hi=1.0, unit="probability", **declaration)


def field_of_view(default, **declaration) -> Tunable:
    """``fov``: a horizontal field of view in ``[1e-6, 2*pi]`` rad."""
    return Tunable(
        "fov", default, kind="float", lo=1.0e-6, hi=2.0 * math.pi, unit="rad", **declaration
    )


def positive(name: str, default, *, unit: str, **declaration) -> Tunable:
    """A positive physical quantity (a rate, a limit) in ``[1e-6, 1e6]`` of ``unit``."""
    return Tunable(name, default, kind="float", lo=1.0e-6, hi=1.0e6, unit=unit, **declaration)
