"""track_gen.envs.gym.RaceVectorEnv: gymnasium 1.x VectorEnv shapes, dtypes, spaces, the
same-step autoreset semantics, seeding determinism, partial resets and gymnasium's checks
that apply to a vector env (observations in the space, returned data never reused)."""

from __future__ import annotations

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import data_equivalence  # noqa: E402
from gymnasium.utils.passive_env_checker import check_obs  # noqa: E402
from gymnasium.vector import AutoresetMode, VectorEnv  # noqa: E402

from track_gen.envs import RaceConfig, RaceDone  # noqa: E402
from track_gen.envs.gym import RaceVectorEnv  # noqa: E402

E = 6


def test_spaces_reset_and_step_shapes(device):
    env = RaceVectorEnv(E, device, seed=3)
    assert isinstance(env, VectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    D = env.env.obs_dim
    assert env.single_observation_space.shape == (D,)
    assert env.observation_space.shape == (E, D)
    assert env.action_space.shape == (E, 2) and env.action_space.dtype == np.float32
    obs, info = env.reset(seed=3)
    assert isinstance(info, dict)
    assert obs.shape == (E, D) and obs.dtype == np.float32
    check_obs(obs, env.observation_space, "reset")
    env.action_space.seed(0)
    for _ in range(5):
        obs, rew, term, trunc, info = env.step(env.action_space.sample())
        check_obs(obs, env.observation_space, "step")
        assert rew.shape == (E,) and rew.dtype == np.float32
        assert term.shape == trunc.shape == (E,)
        assert term.dtype == trunc.dtype == np.bool_
        assert not (term & trunc).any()
    env.close()


def test_same_step_autoreset(device):
    env = RaceVectorEnv(E, device, seed=3, config=RaceConfig(max_episode_steps=8))
    env.reset(seed=3)
    prev_epochs = env.env.epochs.numpy().copy()
    actions = np.zeros((E, 2), np.float32)
    actions[: E // 2, 0] = 1.0  # half of the cars floor it (and crash); the others stand
    seen_done = False
    for t in range(8):
        obs, rew, term, trunc, info = env.step(actions)
        done = term | trunc
        epochs = env.env.epochs.numpy()
        np.testing.assert_array_equal(epochs - prev_epochs, done.astype(np.int32))
        prev_epochs = epochs.copy()
        if not done.any():
            assert "final_obs" not in info
            continue
        seen_done = True
        np.testing.assert_array_equal(info["_final_obs"], done)
        for e in range(E):
            if done[e]:
                final = info["final_obs"][e]
                assert final.shape == obs[e].shape and np.isfinite(final).all()
                assert obs[e, 0] == 0.0  # the new episode: the car at rest
                assert obs[e, 5] > 0  # on the road again
                if info["final_info"]["done_reason"][e] & int(RaceDone.OOB):
                    assert final[5] < 0  # the ended episode's last view: off the road
            else:
                assert info["final_obs"][e] is None
        fi = info["final_info"]
        np.testing.assert_array_equal(fi["_episode_progress"], done)
        assert ((fi["done_reason"] != 0) == done).all()
        # a truncation is a time-out alone; everything else is a termination
        np.testing.assert_array_equal(trunc, done & (fi["done_reason"] == int(RaceDone.TIME_OUT)))
        if t == 7:
            assert done[E // 2 :].all() and trunc[E // 2 :].all()  # the still cars time out
    assert seen_done


def test_reset_seed_determinism_and_no_data_reuse(device):
    a = RaceVectorEnv(E, device, seed=0)
    b = RaceVectorEnv(E, device, seed=99)
    oa, _ = a.reset(seed=11)
    ob, _ = b.reset(seed=11)
    assert data_equivalence(oa, ob, exact=True)
    rng = np.random.default_rng(0)
    prev = oa
    for _ in range(10):
        act = rng.uniform(-1, 1, (E, 2)).astype(np.float32)
        ra, rb = a.step(act), b.step(act)
        assert data_equivalence(ra[:4], rb[:4], exact=True)
        assert not np.shares_memory(ra[0], prev)  # a fresh array every step
        assert not np.shares_memory(ra[0], a.env.obs.numpy())
        prev = ra[0]
    oc, _ = a.reset(seed=12)
    assert not data_equivalence(oc, oa)


def test_reset_mask_restarts_only_those_envs(device):
    env = RaceVectorEnv(E, device, seed=1)
    env.reset()
    for _ in range(3):
        obs, *_ = env.step(np.tile([[0.6, 0.0]], (E, 1)))
    mask = np.zeros(E, bool)
    mask[[0, 3]] = True
    out, _ = env.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(out[~mask], obs[~mask])
    assert (out[mask, 0] == 0).all() and (obs[mask, 0] > 0).all()


def test_bad_inputs_raise_before_stepping(device):
    env = RaceVectorEnv(E, device, seed=1)
    env.reset()
    before = env.env.position.numpy().copy()
    for bad, err in [
        (np.zeros((E, 3)), ValueError),
        (np.zeros(E), ValueError),
        (np.full((E, 2), "a"), TypeError),
    ]:
        with pytest.raises(err):
            env.step(bad)
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(options={"reset_mask": np.ones(E + 1, bool)})
    with pytest.raises(ValueError, match="unknown"):
        env.reset(options={"foo": 1})
    with pytest.raises(TypeError, match="seed"):
        env.reset(seed=1.5)
    np.testing.assert_array_equal(env.env.position.numpy(), before)


def test_non_finite_actions_are_read_as_zero_like_race_env(device):
    """One rule for every adapter: a NaN or infinite action component (as float32, a float64
    beyond the float32 range included) is read as 0 by the env; finite ones are clamped."""
    odd = np.resize(np.array([[np.nan, 0.0], [np.inf, -np.inf], [1e300, np.nan]]), (E, 2))
    a, b = RaceVectorEnv(E, device, seed=4), RaceVectorEnv(E, device, seed=4)
    a.reset()
    b.reset()
    for _ in range(3):
        out_a = a.step(odd)
        out_b = b.step(np.zeros((E, 2)))
        for x, y in zip(out_a[:4], out_b[:4], strict=True):
            assert x.tobytes() == y.tobytes()
    assert a.step(np.full((E, 2), 5.0))[0].tobytes() == b.step(np.ones((E, 2)))[0].tobytes()
