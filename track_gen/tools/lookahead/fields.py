"""The Tunable declarations of the lookahead sampler (read by its utility and its component)."""

from __future__ import annotations

from ...core.settings import settings_class
from ...core.tunable import Tunable
from ..fields import arc_spacing, count

_SURFACES = ("tools.Lookahead", "tools.LookaheadUtility")

NUM_POINTS = count(
    "num_points",
    None,
    hi=4096,
    unit="points",
    doc="points ahead of the agent per env (no default: Lookahead and LookaheadUtility "
    "require it).",
    surfaces=_SURFACES,
)

SPACING = arc_spacing(
    doc="arc distance along the centre line between the agent's arc position and the first "
    "point, and between consecutive points (required).",
    surfaces=_SURFACES,
)

ALONG = Tunable(
    "along",
    "center",
    kind="choice",
    choices=("center", "racing_line"),
    doc="the line the points lie on: the centre line, or the racing line of the "
    "'racing_line' component (with its target speeds).",
    surfaces=("tools.Lookahead",),  # the sampler follows the racing line it is given (line=)
)
#: The earlier name of :data:`ALONG` (``Lookahead(source=...)``, deprecated: ``source``
#: names a component everywhere else).
SOURCE = ALONG

#: Every field of the tool, in its keyword order.
FIELDS = (
    NUM_POINTS,
    SPACING,
    ALONG,
)

LookaheadSettings = settings_class(
    "LookaheadSettings",
    FIELDS,
    title="Lookahead",
    doc="The settings of a look-ahead sensor (tools.Lookahead, tools.LookaheadUtility, "
    "RaceConfig.lookahead). Fields without a default are required.",
    module="track_gen.tools.lookahead",
    deprecated={"source": "along"},
)
