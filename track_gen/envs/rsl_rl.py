"""rsl-rl-lib 5.x ``VecEnv`` over any env of :mod:`track_gen.envs` (a
:class:`~track_gen.envs.BatchedEnv`: :class:`~track_gen.envs.RaceEnv`, ...): :class:`RslRlEnv`
(``RslRlRaceEnv`` is the same class).

Tensors live on the course's device: the env's Warp arrays are viewed as torch tensors once
(``wp.to_torch``, zero-copy), actions are copied into the env's action buffer with
``Tensor.copy_`` and every step returns device-side clones (rsl_rl keeps the observation of
one step while the env writes the next). Nothing is read back to the host on CUDA: the env's
launches run on torch's current stream (``wp.ScopedStream(wp.stream_from_torch(...))``), so
torch's copy-in, Warp's step and torch's clones are ordered on one stream without a host
synchronization.

Importing this module imports torch, tensordict and rsl_rl (the ``[rl]`` extra).
"""

from __future__ import annotations

import contextlib
import dataclasses

import torch
import warp as wp
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from .base import BatchedEnv

__all__ = ["RslRlEnv", "RslRlRaceEnv", "ppo_config"]


class RslRlEnv(VecEnv):
    """rsl_rl's ``VecEnv`` contract for any :class:`~track_gen.envs.BatchedEnv`
    (:class:`RaceEnv` and the other envs of :mod:`track_gen.envs`).

    Args:
        env: the env (its device is the tensors' device).

    Attributes:
        num_envs: E. num_actions: ``A``, the env's action columns (each in [-1, 1]; a
            RaceEnv's: throttle and steering command).
        max_episode_length: ``env.config.max_episode_steps``.
        episode_length_buf: int32 ``[E]`` tensor, a zero-copy view of
            ``env.episode_length`` (assigning a tensor copies it in place).
        device: the torch device of the env. cfg: the env's settings as a dict.

    :meth:`step` returns ``(obs, rewards, dones, extras)``: ``obs`` a TensorDict
    ``{"policy": float32 [E, D]}`` (for a done env its new episode's first observation),
    ``rewards`` float32 ``[E]``, ``dones`` int32 ``[E]`` and ``extras["time_outs"]`` int32
    ``[E]`` (1 for a truncation), ``extras["final_obs"]`` float32 ``[E, D]`` (the ended
    episode's last observation for a done env).
    """

    def __init__(self, env: BatchedEnv):
        if not isinstance(env, BatchedEnv):
            raise TypeError(
                f"env must be a track_gen.envs env (RaceEnv, a BatchedEnv), got "
                f"{type(env).__name__}"
            )
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.actions.shape[1]
        self.max_episode_length = env.config.max_episode_steps
        self.device = wp.device_to_torch(env.device)
        self.cfg = {
            "num_envs": env.num_envs,
            "new_course_on_reset": env.new_course_on_reset,
            **dataclasses.asdict(env.config),
        }
        self._actions = wp.to_torch(env.actions)
        self._obs = wp.to_torch(env.obs)
        self._final_obs = wp.to_torch(env.final_obs)
        self._reward = wp.to_torch(env.reward)
        self._done = wp.to_torch(env.done)
        self._time_out = wp.to_torch(env.time_out)
        self._episode_length = wp.to_torch(env.episode_length)
        self._cuda = env.device.is_cuda
        self._stream = None  # torch's current stream as a wp.Stream, cached by handle
        if self._cuda:
            wp.synchronize_device(env.device)  # construction ran on Warp's stream: settle once

    def _torch_stream(self):
        """A scope that puts Warp's launches on torch's current stream (no-op on the CPU)."""
        if not self._cuda:
            return contextlib.nullcontext()
        ts = torch.cuda.current_stream(self.device)
        if self._stream is None or self._stream.cuda_stream != ts.cuda_stream:
            self._stream = wp.stream_from_torch(ts)
        return wp.ScopedStream(self._stream)

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """int32 ``[E]``: steps of each running episode (a view of the env's counter)."""
        return self._episode_length

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        # rsl_rl's init_at_random_ep_len assigns a new tensor: copy it into the env's counter
        self._episode_length.copy_(value.to(self._episode_length.dtype))

    def _observations(self) -> TensorDict:
        return TensorDict(
            {"policy": self._obs.clone()}, batch_size=[self.num_envs], device=self.device
        )

    def get_observations(self) -> TensorDict:
        """The current observation, ``{"policy": float32 [E, D]}`` (a copy)."""
        return self._observations()

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        """Apply ``actions`` (``[E, A]``, any float dtype, on :attr:`device`) and step every
        env.

        The actions are copied as float32: each component is clamped to [-1, 1] and a NaN or
        infinite one is read as 0 (the rule of every env). A wrong shape or device raises
        ValueError before the env changes."""
        if not isinstance(actions, torch.Tensor):
            raise TypeError(f"actions must be a torch.Tensor, got {type(actions).__name__}")
        want = (self.num_envs, self.num_actions)
        if tuple(actions.shape) != want:
            raise ValueError(f"actions must have shape {want}, got {tuple(actions.shape)}")
        if actions.device != self._actions.device:
            raise ValueError(f"actions are on {actions.device}, the env on {self.device}")
        self._actions.copy_(actions)
        with self._torch_stream():
            self.env.step()
        extras = {"time_outs": self._time_out.clone(), "final_obs": self._final_obs.clone()}
        return self._observations(), self._reward.clone(), self._done.clone(), extras

    def reset(self) -> TensorDict:
        """Restart every episode on its current course; returns the first observation."""
        with self._torch_stream():
            self.env.reset()
        return self._observations()


#: rsl_rl's VecEnv over a :class:`RaceEnv` (the name of earlier releases).
RslRlRaceEnv = RslRlEnv


def ppo_config(
    *,
    num_steps_per_env: int = 24,
    hidden_dims: tuple[int, ...] = (64, 64),
    learning_rate: float = 1e-3,
    init_std: float = 0.6,
    entropy_coef: float = 0.003,
    num_learning_epochs: int = 4,
    num_mini_batches: int = 4,
    gamma: float = 0.99,
) -> dict:
    """A train config for rsl_rl's ``OnPolicyRunner`` (PPO, MLP actor and critic with
    observation normalization) that trains :class:`RaceEnv` from scratch in a few minutes of
    CPU (``examples/train_ppo.py``). Returns a new dict each call: edit it freely."""
    mlp = {
        "class_name": "MLPModel",
        "hidden_dims": list(hidden_dims),
        "activation": "elu",
        "obs_normalization": True,
    }
    return {
        "num_steps_per_env": num_steps_per_env,
        "save_interval": 10**9,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "check_for_nan": True,
        "actor": {
            **mlp,
            "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": init_std},
        },
        "critic": dict(mlp),
        "algorithm": {
            "class_name": "PPO",
            "num_learning_epochs": num_learning_epochs,
            "num_mini_batches": num_mini_batches,
            "clip_param": 0.2,
            "gamma": gamma,
            "lam": 0.95,
            "value_loss_coef": 1.0,
            "entropy_coef": entropy_coef,
            "learning_rate": learning_rate,
            "max_grad_norm": 1.0,
            "schedule": "adaptive",
            "desired_kl": 0.01,
        },
    }
