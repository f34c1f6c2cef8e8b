"""The points ahead of the agent: :class:`Lookahead` (the course component ``"lookahead"``),
:class:`LookaheadUtility` (its utility) and :class:`LookaheadResult` (its result). See
``docs/sensors/lookahead.md``."""

from ...core.deprecation import deprecated_names
from .component import Lookahead
from .fields import ALONG, NUM_POINTS, SOURCE, SPACING, LookaheadSettings
from .kernels import heading_axis, to_agent_frame
from .result import LookaheadResult
from .utility import LookaheadUtility

__all__ = [
    "LookaheadSettings",
    "Lookahead",
    "LookaheadResult",
    "LookaheadUtility",
    "NUM_POINTS",
    "ALONG",
    "SOURCE",
    "SPACING",
    "heading_axis",
    "to_agent_frame",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "LookaheadPoints": "LookaheadResult",
    "LookaheadSampler": "LookaheadUtility",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
