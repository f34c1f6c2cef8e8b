"""The Tunable declarations of the next-gates sensor (read by its utility and its component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ...core.tunable import config_label
from ..fields import count, distance

_SURFACES = ("tools.NextGates", "tools.NextGatesUtility")

NUM_GATES = count(
    "num_gates",
    None,
    hi=256,
    unit="gates",
    doc="how many upcoming gates each env answers (slot 0: the target gate); required.",
    surfaces=_SURFACES,
)


REVEAL_RANGE = distance(
    "reveal_range",
    None,
    optional=True,
    doc="distance from a gate's true centre within which the agent sees its true pose (kept "
    "until a reset or a regeneration); until then the gate answers its nominal pose. None: "
    "every gate answers its true pose.",
    surfaces=_SURFACES,
)


NOMINAL_NOISE = distance(
    "nominal_noise",
    0.0,
    doc="size of the error of a nominal gate pose, drawn at generation: each centre "
    "coordinate is off by up to this much, and the yaw by atan(d / half_size) for a fourth "
    "draw |d| up to it. Needs reveal_range.",
    surfaces=_SURFACES,
)

#: Every field of the tool, in its keyword order.
FIELDS = (
    NUM_GATES,
    REVEAL_RANGE,
    NOMINAL_NOISE,
)


def _check(settings) -> None:
    """``nominal_noise > 0`` needs a ``reveal_range`` (the nominal poses would never be
    seen)."""
    if settings.nominal_noise > 0.0 and settings.reveal_range is None:
        raise ValueError(
            f"{config_label(settings)}.nominal_noise = {settings.nominal_noise!r} needs "
            "reveal_range: without it every gate answers its true pose, so the nominal poses "
            "would never be seen; pass reveal_range=<a distance, track units> or "
            "nominal_noise=0"
        )


NextGatesSettings = settings_class(
    "NextGatesSettings",
    FIELDS,
    title="Next gates",
    doc="The settings of a next-gates sensor (tools.NextGates, tools.NextGatesUtility). "
    "Fields without a default are required.",
    module="track_gen.tools.next_gates",
    check=_check,
)
