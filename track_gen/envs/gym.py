"""gymnasium 1.x ``VectorEnv`` over an env of :mod:`track_gen.envs`: :class:`BatchedVectorEnv`
(the adapter of any :class:`~track_gen.envs.BatchedEnv`), :class:`RaceVectorEnv` (over a
:class:`~track_gen.envs.RaceEnv`) and :class:`DroneVectorEnv` (over a
:class:`~track_gen.envs.DroneRaceEnv`).

Autoreset mode ``SAME_STEP`` (``metadata["autoreset_mode"]``): a step that ends an env's
episode returns, for that env, the FIRST observation of its next episode in ``obs`` (its car
already stands on its new course, or on the same one with ``new_course_on_reset=False``), the
ended episode's last observation in ``infos["final_obs"][e]`` and its summary in
``infos["final_info"]``; ``terminated`` / ``truncated`` describe the ended episode. The next
``step`` uses the action as for any other env.

Arrays returned are NumPy copies on the host (gymnasium's convention); the env itself runs on
its Warp device. Importing this module imports gymnasium (the ``[rl]`` extra).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import warp as wp
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..core.budget import AllocationBudget
from ..core.checks import check_int, is_int
from .drone import DroneRaceEnv
from .race import ENV_BUDGET_HINT, RaceDone, RaceEnv

__all__ = ["BatchedVectorEnv", "DroneVectorEnv", "RaceVectorEnv"]


class BatchedVectorEnv(VectorEnv):
    """A gymnasium ``VectorEnv`` of an env of :mod:`track_gen.envs` (``env_class``; see the
    module docs).

    Args:
        num_envs: E.
        device: Warp device of the env (None: the default device).
        seed: an int ``s``: env ``e`` gets seed ``s + e`` (``reset(seed=...)`` reseeds).
        obs_format: keyword-only, ``"box"`` (default: the flat observation, ``[E, D]``) or
            ``"dict"`` (a ``Dict`` space of one ``Box`` per observed term of
            ``config.observations``, in its order: ``"lidar"`` and ``"raster"`` ``[0, 1]``,
            the others ``(-inf, inf)``; observations are then dicts of ``[E, d]`` arrays,
            the flat columns split by term, and each ``infos["final_obs"][e]`` a dict of
            ``[d]`` arrays).
        env_kwargs: keyword arguments of ``env_class`` (a RaceEnv's ``config``,
            ``new_course_on_reset``, ``captured``, ``curriculum``).

    Spaces: ``single_observation_space`` ``Box(-inf, inf, (D,), float32)`` (or the ``Dict``),
    ``single_action_space`` ``Box(-1, 1, (A,), float32)`` (a RaceEnv's: throttle, steering
    command); ``observation_space`` / ``action_space`` are their batches.
    """

    #: The env class the adapter builds (a subclass names its own).
    env_class: type = RaceEnv

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self, num_envs: int, device=None, seed: int = 0, *, obs_format: str = "box", **env_kwargs
    ):
        if obs_format not in ("box", "dict"):
            raise ValueError(f"obs_format = {obs_format!r} must be 'box' or 'dict'")
        self.env = self.env_class(num_envs, device, seed, **env_kwargs)
        self.num_envs = self.env.num_envs
        self.obs_format = obs_format
        D = self.env.obs_dim
        self._terms = self.env.term_slices()
        if obs_format == "dict":
            self.single_observation_space = gym.spaces.Dict(
                {
                    name: gym.spaces.Box(*self.env.term_bounds(name), (b - a,), np.float32)
                    for name, (a, b) in self._terms.items()
                }
            )
        else:
            self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (D,), np.float32)
        A = self.env.actions.shape[1]
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (A,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        budget = AllocationBudget(self.env.device, ENV_BUDGET_HINT, owner="this env's")
        self._mask = budget.zeros(self.num_envs, wp.int32, "the reset mask")
        self._host_actions = np.zeros((self.num_envs, A), np.float32)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Restart episodes. ``seed`` (an int ``s``): every env reseeded ``s + e`` with a new
        course at epoch 0. ``options={"reset_mask": bool [E]}`` restarts only those envs on
        their same course (a seed then is a ValueError). Returns ``(obs [E, D] float32,
        {})``."""
        mask = None
        if options is not None:
            if not isinstance(options, dict):
                raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
            unknown = set(options) - {"reset_mask"}
            if unknown:
                raise ValueError(f"options: unknown keys {sorted(unknown)}; known: reset_mask")
            if "reset_mask" in options:
                mask = np.asarray(options["reset_mask"])
                if mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                    raise ValueError(
                        f"options['reset_mask'] must be a bool array of shape "
                        f"({self.num_envs},), got {mask.dtype} {mask.shape}"
                    )
        if seed is not None:
            if not is_int(seed):
                raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
            if mask is not None:
                raise ValueError("reset(seed=...) reseeds every env: pass no reset_mask with it")
            check_int("seed", seed, -(2**31), 2**31 - self.num_envs)
            self.env.reseed(int(seed))
        elif mask is not None:
            self._mask.assign(mask.astype(np.int32))
            self.env.reset(self._mask)
        else:
            self.env.reset()
        return self._format(self.env.obs.numpy().copy()), {}

    def _format(self, flat: np.ndarray):
        """The flat observation (``[..., D]``) in the space's format."""
        if self.obs_format == "box":
            return flat
        return {name: flat[..., a:b].copy() for name, (a, b) in self._terms.items()}

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every env with ``actions`` (``[E, A]`` real numbers, read as float32): each
        component is clamped to [-1, 1] and a NaN or infinite one (as float32: a float64
        beyond the float32 range too) is read as 0, as the env reads its device actions. A
        wrong shape (ValueError) or a non-number dtype (TypeError) is refused before the env
        moves.

        Returns ``(obs float32 [E, D], rewards float32 [E], terminated bool [E], truncated
        bool [E], infos)``; ``infos`` holds ``final_obs`` (object ``[E]``: the ended
        episode's last observation, None elsewhere), ``final_info`` (``episode_progress``
        laps, ``lap_completed``, ``done_reason``, each ``[E]`` with a ``_`` mask) and their
        ``_final_obs`` / ``_final_info`` masks, only when some env is done."""
        a = np.asarray(actions)
        if a.shape != self._host_actions.shape:
            raise ValueError(f"actions must have shape {self._host_actions.shape}, got {a.shape}")
        if not np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.complexfloating):
            raise TypeError(f"actions must be real numbers, got dtype {a.dtype}")
        with np.errstate(over="ignore", invalid="ignore"):
            np.copyto(self._host_actions, a, casting="unsafe")  # NaN / inf read as 0 on device
        self.env.actions.assign(self._host_actions)
        self.env.step()
        e = self.env
        obs = e.obs.numpy().copy()
        reward = e.reward.numpy().copy()
        done = e.done.numpy() != 0
        truncated = e.time_out.numpy() != 0
        terminated = done & ~truncated
        infos: dict[str, Any] = {}
        if done.any():
            final = e.final_obs.numpy()
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                final_obs[i] = self._format(final[i].copy())
            reason = e.done_reason.numpy().copy()
            infos = {
                "final_obs": final_obs,
                "_final_obs": done.copy(),
                "final_info": {
                    "episode_progress": np.where(done, e.final_progress.numpy(), 0.0),
                    "_episode_progress": done.copy(),
                    "lap_completed": done & ((reason & int(RaceDone.LAPS)) != 0),
                    "_lap_completed": done.copy(),
                    "done_reason": np.where(done, reason, 0),
                    "_done_reason": done.copy(),
                },
                "_final_info": done.copy(),
            }
        return self._format(obs), reward, terminated, truncated, infos

    def close_extras(self, **kwargs) -> None:
        """Nothing to release beyond the env's arrays (freed with it)."""


class RaceVectorEnv(BatchedVectorEnv):
    """A gymnasium ``VectorEnv`` of ``num_envs`` racing cars (:class:`RaceEnv`; see
    :class:`BatchedVectorEnv` for the arguments and spaces)."""

    env_class = RaceEnv


class DroneVectorEnv(BatchedVectorEnv):
    """A gymnasium ``VectorEnv`` of ``num_envs`` quadrotors racing gate courses
    (:class:`DroneRaceEnv`; see :class:`BatchedVectorEnv` for the arguments and spaces: 4
    actions in [-1, 1], thrust then body rates)."""

    env_class = DroneRaceEnv
