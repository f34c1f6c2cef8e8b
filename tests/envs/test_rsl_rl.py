"""track_gen.envs.rsl_rl.RslRlRaceEnv: the rsl-rl-lib 5.x VecEnv contract (attributes,
TensorDict observations, step outputs, time-outs, zero-copy views on the env's device, fresh
outputs every step) and a 2-iteration PPO training smoke test through OnPolicyRunner."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("rsl_rl")

import warp as wp  # noqa: E402
from rsl_rl.env import VecEnv  # noqa: E402
from rsl_rl.runners import OnPolicyRunner  # noqa: E402
from tensordict import TensorDict  # noqa: E402

from track_gen.envs import RaceConfig, RaceEnv  # noqa: E402
from track_gen.envs.rsl_rl import RslRlRaceEnv, ppo_config  # noqa: E402

E = 8


def test_vecenv_contract(device):
    env = RaceEnv(E, device, 4, config=RaceConfig(max_episode_steps=6))
    vec = RslRlRaceEnv(env)
    assert isinstance(vec, VecEnv)
    assert vec.num_envs == E and vec.num_actions == 2 and vec.max_episode_length == 6
    assert isinstance(vec.cfg, dict) and vec.cfg["num_envs"] == E
    dev = wp.device_to_torch(env.device)
    assert torch.device(vec.device) == torch.device(dev)
    # zero-copy: the episode counter is a view of the env's array
    assert vec.episode_length_buf.data_ptr() == env.episode_length.ptr
    obs = vec.get_observations()
    assert isinstance(obs, TensorDict) and list(obs.keys()) == ["policy"]
    assert obs["policy"].shape == (E, env.obs_dim) and obs["policy"].dtype == torch.float32
    assert obs["policy"].device == torch.device(dev)
    actions = torch.zeros((E, 2), device=dev)
    actions[:4, 0] = 1.0
    for t in range(6):
        out_obs, rew, dones, extras = vec.step(actions)
        # rsl_rl keeps the previous observation while the env writes the next: fresh tensors
        assert out_obs["policy"].data_ptr() != env.obs.ptr
        assert rew.shape == (E,) and rew.dtype == torch.float32 and rew.device == obs.device
        assert dones.shape == (E,) and dones.device == obs.device
        assert extras["time_outs"].shape == (E,)
        assert extras["final_obs"].shape == (E, env.obs_dim)
        np.testing.assert_array_equal(env.actions.numpy(), actions.cpu().numpy())
        np.testing.assert_array_equal(dones.cpu().numpy(), env.done.numpy())
        np.testing.assert_array_equal(rew.cpu().numpy(), env.reward.numpy())
        np.testing.assert_array_equal(out_obs["policy"].cpu().numpy(), env.obs.numpy())
        if t == 5:  # the standing cars time out at step 6: truncations
            still = slice(4, E)
            assert dones[still].all() and extras["time_outs"][still].all()
    # rsl_rl's init_at_random_ep_len assigns a tensor: it lands in the env's counter
    vec.episode_length_buf = torch.full((E,), 3, dtype=torch.int64, device=dev)
    np.testing.assert_array_equal(env.episode_length.numpy(), 3)


def test_bad_actions_raise_before_stepping(device):
    env = RaceEnv(4, device, 4)
    vec = RslRlRaceEnv(env)
    before = env.position.numpy().copy()
    with pytest.raises(ValueError, match="shape"):
        vec.step(torch.zeros((4, 3), device=vec.device))
    with pytest.raises(TypeError, match="torch.Tensor"):
        vec.step(np.zeros((4, 2), np.float32))
    with pytest.raises(TypeError, match="RaceEnv"):
        RslRlRaceEnv("env")
    np.testing.assert_array_equal(env.position.numpy(), before)


def test_two_iteration_training_smoke(tmp_path):
    """examples/train_ppo.py end to end at a toy size: 2 PPO iterations change the policy,
    write metrics.json and the curve PNG."""
    from examples import train_ppo

    out = tmp_path / "run"
    rc = train_ppo.main(
        ["--device", "cpu", "--num-envs", "16", "--iterations", "2", "--steps-per-env", "8"]
        + ["--out", str(out)]
    )
    assert rc == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert len(metrics["history"]) == 2 and metrics["env_steps"] == 16 * 8 * 2
    assert (out / "training_curve.png").stat().st_size > 1000
    # a runner built the same way learns: the actor's weights move in one iteration
    env = RaceEnv(16, "cpu", 0)
    runner = OnPolicyRunner(RslRlRaceEnv(env), ppo_config(num_steps_per_env=8), None, "cpu")
    before = [p.detach().clone() for p in runner.alg.actor.parameters()]
    runner.learn(1)
    after = list(runner.alg.actor.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(after, before, strict=True))
