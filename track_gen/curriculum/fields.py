"""The Tunable declarations of :class:`~track_gen.curriculum.LevelReplay` (one row each: the
constructor's checks and the docs read them)."""

from __future__ import annotations

import enum

from ..core.checks import INT32_MAX, INT32_MIN
from ..core.tunable import Tunable

__all__ = [
    "BUFFER_SIZE",
    "REPLAY_PROB",
    "SCORE",
    "SEED",
    "STALENESS",
    "TEMPERATURE",
    "ScoreRule",
]


class ScoreRule(enum.IntEnum):
    """The built-in score rules (``LevelReplay(score=...)``; the kernels read the value)."""

    VALUE_LOSS = 0  #: ``"value_loss"``: the signal is the level's score as given
    LEARNABILITY = 1  #: ``"learnability"``: ``p * (1 - p)`` of the level's success rate
    REGRET = 2  #: ``"regret"``: ``1 - par / lap_time`` against the racing line's par time


#: The score names the constructor takes, in :class:`ScoreRule` order.
SCORE_NAMES = ("value_loss", "learnability", "regret")

BUFFER_SIZE = Tunable(
    "buffer_size",
    None,
    kind="int",
    lo=1,
    hi=65536,
    unit="levels",
    doc="slots of the level buffer (no default); a call ranks the buffer in O(buffer_size^2) "
    "work, spread over one thread per slot.",
)
REPLAY_PROB = Tunable(
    "replay_prob",
    None,
    kind="float",
    lo=0.0,
    hi=1.0,
    doc="probability that a reset env replays a buffered level once the buffer is full "
    "(no default); 0 draws fresh levels only.",
)
SCORE = Tunable(
    "score",
    "value_loss",
    choices=SCORE_NAMES,
    doc="how update()'s per-env signal becomes a level score: value_loss (as given), "
    "learnability (p * (1 - p) of the success rate) or regret (1 - par / lap time).",
)
STALENESS = Tunable(
    "staleness",
    0.1,
    lo=0.0,
    hi=1.0,
    doc="rho: the replay distribution is (1 - rho) * P_score + rho * P_staleness.",
)
TEMPERATURE = Tunable(
    "temperature",
    0.1,
    lo=1e-3,
    hi=1e3,
    doc="beta: P_score is proportional to (1 / rank) ** (1 / beta).",
)
SEED = Tunable(
    "seed",
    0,
    lo=INT32_MIN,
    hi=INT32_MAX,
    doc="the seed of the replay decisions' random stream.",
)
