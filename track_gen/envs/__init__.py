"""Reinforcement-learning environments on track_gen courses (the optional ``[rl]`` extra).

:class:`RaceEnv` is the batched car-racing env itself (Warp only). The adapters import their
trainer's package when imported: ``track_gen.envs.gym`` (gymnasium 1.x ``VectorEnv``) and
``track_gen.envs.rsl_rl`` (rsl-rl-lib 5.x ``VecEnv``). See ``docs/training.md``.
"""

from .race import RaceConfig, RaceDone, RaceEnv, RaceStats

__all__ = ["RaceConfig", "RaceDone", "RaceEnv", "RaceStats"]
