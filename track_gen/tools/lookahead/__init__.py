"""The points ahead of the agent: :class:`Lookahead` (the course component ``"lookahead"``),
:class:`LookaheadSampler` (its utility) and :class:`LookaheadPoints` (its result). See
``docs/sensors/lookahead.md``."""

from .component import Lookahead
from .fields import ALONG, NUM_POINTS, SOURCE, SPACING, LookaheadSettings
from .kernels import heading_axis, to_agent_frame
from .result import LookaheadPoints
from .utility import LookaheadSampler

__all__ = [
    "LookaheadSettings",
    "Lookahead",
    "LookaheadPoints",
    "LookaheadSampler",
    "NUM_POINTS",
    "ALONG",
    "SOURCE",
    "SPACING",
    "heading_axis",
    "to_agent_frame",
]
