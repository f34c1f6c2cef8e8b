"""The device state of a :class:`~track_gen.curriculum.LevelReplay`, allocated once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from ..core.budget import AllocationBudget
from .kernels import UNDO_COLUMNS

#: What a refusal of the curriculum's buffers suggests.
BUDGET_HINT = "lower buffer_size or num_envs"


@dataclass
class LevelBuffer:
    """The level buffer and the per-env bookkeeping (``B`` = buffer_size, ``E`` = num_envs).

    Slots ``0 .. filled - 1`` hold levels; the rest are empty (seed 0, score 0).

    Attributes:
        seed: int32 ``[B]``: each buffered level's effective seed (its course is that of a
            fresh generator whose env has this seed at epoch 0).
        score: float32 ``[B]``: the level's score (the score rule's units).
        last_played: int64 ``[B]``: the update step at which the level was last drawn or
            entered the buffer (staleness is ``step - last_played``).
        plays: int32 ``[B]``: episodes scored on the level since it entered.
        successes: float32 ``[B]``: sum of the clamped success signal of those episodes
            (``learnability``; 0 for the other rules).
        filled: int32 ``[1]``: slots in use.
        step: int64 ``[1]``: ``update()`` calls so far (the random stream's counter).
        env_slot: int32 ``[E]``: the slot of the env's current level, -1 when the level is
            not buffered (a fresh draw, or its slot was replaced since).
        env_level: int32 ``[E]``: the effective seed of the env's current level.
        replayed: int32 ``[E]``: 1 when the env's last regeneration replayed a buffered level,
            0 when it drew a fresh one.
        fresh_base: int32 ``[E]``: the env's seed when the curriculum was built; fresh level
            ``k`` of the env is ``effective_seed(fresh_base[e], fresh_epoch[e])``.
        fresh_epoch: int32 ``[E]``: the epoch of the env's last fresh level.
    """

    seed: wp.array
    score: wp.array
    last_played: wp.array
    plays: wp.array
    successes: wp.array
    filled: wp.array
    step: wp.array
    env_slot: wp.array
    env_level: wp.array
    replayed: wp.array
    fresh_base: wp.array
    fresh_epoch: wp.array
    # scratch of one regeneration
    weight: wp.array  # float64 [B]
    cdf: wp.array  # float64 [B]
    keys: wp.array  # float32 [2B] (the CPU ranking's radix sort)
    order: wp.array  # int32 [2B]
    last_undo: wp.array  # int64 [B]
    undo: wp.array  # int32 [E, UNDO_COLUMNS]
    everyone: wp.array  # int32 [E], ones

    @classmethod
    def allocate(
        cls, buffer_size: int, levels: np.ndarray, seeds: np.ndarray, epochs: np.ndarray, device
    ) -> LevelBuffer:
        """An empty buffer for ``E = len(levels)`` envs whose current levels have the effective
        seeds ``levels``, built from ``seeds`` at ``epochs`` (host int32 ``[E]`` each: the fresh
        draws continue from there). Every array is checked against the allocation budget."""
        B, E = int(buffer_size), len(levels)
        budget = AllocationBudget(device, BUDGET_HINT, owner="this curriculum's")
        z = budget.zeros

        def host(values, what):
            return budget.array(np.asarray(values, np.int32), wp.int32, what)

        return cls(
            seed=z(B, wp.int32, "level seeds"),
            score=z(B, wp.float32, "level scores"),
            last_played=z(B, wp.int64, "level last-played steps"),
            plays=z(B, wp.int32, "level plays"),
            successes=z(B, wp.float32, "level successes"),
            filled=z(1, wp.int32, "buffer fill"),
            step=z(1, wp.int64, "update step"),
            env_slot=budget.full(E, -1, wp.int32, "env slots"),
            env_level=host(levels, "env levels"),
            replayed=z(E, wp.int32, "env replay flags"),
            fresh_base=host(seeds, "fresh-level bases"),
            fresh_epoch=host(epochs, "fresh-level epochs"),
            weight=z(B, wp.float64, "rank weights"),
            cdf=z(B, wp.float64, "replay distribution"),
            keys=z(2 * B, wp.float32, "rank sort keys"),
            order=z(2 * B, wp.int32, "rank sort order"),
            last_undo=z(B, wp.int64, "last-played undo"),
            undo=z((E, UNDO_COLUMNS), wp.int32, "decision undo"),
            everyone=budget.full(E, 1, wp.int32, "all-envs mask"),
        )
