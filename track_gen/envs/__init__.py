"""Reinforcement-learning environments on track_gen courses (the optional ``[rl]`` extra).

:class:`RaceEnv` is the batched car-racing env and :class:`DroneRaceEnv` the batched
quadrotor racing gate courses in metres (Warp only), both standing on
:class:`BatchedEnv`, the machinery every batched env shares (observation terms, masked
auto-reset with regeneration and the curriculum hook, capture, final observations,
statistics; ``docs/training.md``). The adapters import their trainer's package when
imported: ``track_gen.envs.gym`` (gymnasium 1.x ``VectorEnv``) and ``track_gen.envs.rsl_rl``
(rsl-rl-lib 5.x ``VecEnv``). ``track_gen.envs.vehicles``: the vehicles in SI units of a metre
env (:class:`VehicleSettings`, the presets ``GT`` and ``F1TENTH``).
"""

from .base import BatchedEnv, EnvStats, EpisodeState, EpisodeStats, StepOutputs
from .drone import (
    DRONE_PRESETS,
    DroneConfig,
    DroneCrash,
    DroneRaceEnv,
    DroneState,
    drone_config,
    drone_gates_spec,
    fly_drones,
)
from .race import CarState, RaceConfig, RaceDone, RaceEnv, RaceStats
from .race_config import CarLimits
from .vehicles import VehicleSettings

__all__ = [
    "BatchedEnv",
    "CarLimits",
    "CarState",
    "DRONE_PRESETS",
    "DroneConfig",
    "DroneCrash",
    "DroneRaceEnv",
    "DroneState",
    "drone_config",
    "drone_gates_spec",
    "fly_drones",
    "EnvStats",
    "EpisodeState",
    "EpisodeStats",
    "RaceConfig",
    "RaceDone",
    "RaceEnv",
    "RaceStats",
    "StepOutputs",
    "VehicleSettings",
]
