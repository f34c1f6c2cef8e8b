"""Units of a course: the ``unit`` config field and the derived unit names.

A generator's result knows the unit of its coordinates (``Track.unit``,
``GateSequence.unit``): ``"m"`` for metre courses (``presets.circuit``, real circuits read in
metres) and ``"track units"`` for the normalized courses of the other samplers, about 1.44
across. Everything computed from a course (racing line, sensors, course descriptors, exports)
carries the same length unit; speeds are ``<unit>/s``, accelerations ``<unit>/s^2``.
"""

from __future__ import annotations

from .tunable import Tunable

#: The accepted units of a course's coordinates.
UNITS = ("track units", "m")
#: The unit of the normalized courses (every sampler but ``circuit``).
TRACK_UNITS = UNITS[0]
#: Metres.
METRES = UNITS[1]

UNIT = Tunable(
    "unit",
    TRACK_UNITS,
    kind="choice",
    choices=UNITS,
    doc="unit of the course's coordinates, carried by the result (Track.unit) and everything "
    "computed from it: 'm' for circuits in metres (presets.circuit, real circuits), 'track "
    "units' for the normalized courses (about 1.44 across).",
)


def speed_unit(unit: str) -> str:
    """``"m/s"`` or ``"track units/s"``."""
    return f"{unit}/s"


def accel_unit(unit: str) -> str:
    """``"m/s^2"`` or ``"track units/s^2"``."""
    return f"{unit}/s^2"


__all__ = ["METRES", "TRACK_UNITS", "UNIT", "UNITS", "accel_unit", "speed_unit"]
