"""Curricula over a course's levels: :class:`LevelReplay` (prioritized level replay at the
auto-reset, on the course's device). See ``docs/curriculum.md``."""

from .buffer import LevelBuffer
from .fields import BUFFER_SIZE, REPLAY_PROB, SCORE, SEED, STALENESS, TEMPERATURE, ScoreRule
from .level_replay import LevelReplay

__all__ = [
    "BUFFER_SIZE",
    "REPLAY_PROB",
    "SCORE",
    "SEED",
    "STALENESS",
    "TEMPERATURE",
    "LevelBuffer",
    "LevelReplay",
    "ScoreRule",
]
