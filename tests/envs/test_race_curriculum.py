"""``RaceEnv(curriculum=...)``: the env's LevelReplay hook against a hand loop that calls
LevelReplay the same way (its signal computed on the host from ``done_reason`` and
``final_lap_time``: the oracle), graph replay == eager, reseed, and the refusals (a fuzz
case for the new argument)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp
from hypothesis import given
from hypothesis import strategies as st

from track_gen.curriculum import LevelReplay
from track_gen.envs import RaceConfig, RaceDone, RaceEnv
from track_gen.envs import base as env_base
from track_gen.envs import race as race_module
from track_gen.envs.episode import SIGNAL_SUCCESS, EpisodeArrays
from track_gen.tools.terms import FINAL_ALL

E = 6
SEED = 5
CURRICULUM = {"buffer_size": 4, "replay_prob": 0.5, "staleness": 0.2, "seed": 3}
#: Short laps' worth of episode: max_laps=1 ends an episode at the first lap.
ONE_LAP = RaceConfig(max_laps=1, max_episode_steps=400)
TWO_LAPS_PAR = RaceConfig(max_laps=2, max_episode_steps=600, racing_line="par")


def _follow(obs: np.ndarray, speed: float, gain: float = 3.0) -> np.ndarray:
    """A line follower on the observation: steer at the first look-ahead point."""
    steer = np.clip(gain * np.arctan2(obs[:, 9], np.maximum(obs[:, 8], 1e-3)), -1, 1)
    throttle = np.clip(4.0 * (speed - obs[:, 0]), -1, 1)
    return np.stack([throttle, steer], 1).astype(np.float32)


def _actions(env, rng, step: int) -> np.ndarray:
    """Half the envs follow the centerline (laps: successes), the others wander (crashes)."""
    a = _follow(env.obs.numpy(), 0.3)
    wander = rng.uniform(-1, 1, a.shape).astype(np.float32)
    odd = np.arange(env.num_envs) % 2 == 1
    a[odd] = wander[odd]
    return a


def _signal_oracle(env, score: str, user: np.ndarray | None) -> np.ndarray:
    """The per-env signal the env must pass, from its public outputs (float32 [E])."""
    if score == "learnability":
        return ((env.done_reason.numpy() & int(RaceDone.LAPS)) != 0).astype(np.float32)
    if score == "regret":
        lap = env.final_lap_time.numpy()
        return np.where(np.isfinite(lap), lap, np.float32(np.inf)).astype(np.float32)
    return user


class HandLoop(RaceEnv):
    """A plain RaceEnv whose step is written out by hand around a LevelReplay built on its
    course: the composition ``docs/curriculum.md`` describes, with the signal from the
    host oracle."""

    def __init__(self, *args, kw, **kwargs):
        super().__init__(*args, **kwargs)
        self.hand = LevelReplay(self.course, **kw)
        self.score = kw.get("score", "value_loss")
        self.user = None
        self.hand_signal = wp.zeros(self.num_envs, dtype=wp.float32, device=self.device)

    def _simulate(self, guard: bool) -> None:
        self._act()
        res = self.course.step()
        self._observe(res, self._everyone, 0, FINAL_ALL)
        self._close_step(res)
        self.hand_signal.assign(_signal_oracle(self, self.score, self.user))
        self.hand.update(self.done, self.hand_signal)
        if not self.done.numpy().any():
            return
        self.hand.regenerate(self.done)
        self._respawn_observe(self.done)


def _host(env) -> dict[str, np.ndarray]:
    names = "obs final_obs reward done done_reason final_lap_time position yaw speed".split()
    out = {n: getattr(env, n).numpy().copy() for n in names}
    out["center"] = env.course.result.center.numpy().copy()
    out["seeds"] = env.seeds.numpy().copy()
    out["epochs"] = env.epochs.numpy().copy()
    return out


def _snap(lr: LevelReplay) -> dict:
    return {k: np.asarray(v).tobytes() for k, v in lr.snapshot().items()}


@pytest.mark.parametrize(
    "score, config, steps",
    [("learnability", ONE_LAP, 200), ("value_loss", ONE_LAP, 60), ("regret", TWO_LAPS_PAR, 330)],
)
def test_env_equals_the_hand_loop_and_the_signal_oracle(score, config, steps):
    kw = dict(CURRICULUM, score=score)
    env = RaceEnv(E, "cpu", SEED, config=config, curriculum=kw)
    hand = HandLoop(E, "cpu", SEED, config=config, kw=kw)
    assert isinstance(env.curriculum, LevelReplay) and env.curriculum.course is env.course
    assert env.curriculum_signal.dtype == wp.float32 and env.curriculum_signal.shape == (E,)
    rng = np.random.default_rng(0)
    done_kinds = set()
    for t in range(steps):
        a = wp.array(_actions(env, rng, t), device="cpu")
        if score == "value_loss":  # the training loop's estimate, written before the step
            hand.user = rng.uniform(0.0, 2.0, E).astype(np.float32)
            env.curriculum_signal.assign(hand.user)
        env.step(a)
        hand.step(a)
        he, hh = _host(env), _host(hand)
        for k in he:
            assert he[k].tobytes() == hh[k].tobytes(), (t, k)
        assert _snap(env.curriculum) == _snap(hand.hand), t
        done = he["done"] != 0
        if score != "value_loss":  # the oracle, where the curriculum reads it
            sig = env.curriculum_signal.numpy()
            want = _signal_oracle(env, score, None)
            assert sig[done].tobytes() == want[done].tobytes(), t
            done_kinds.update(sig[done].tolist())
    if score == "learnability":
        assert done_kinds == {0.0, 1.0}, done_kinds  # successes and failures both scored
    if score == "regret":
        assert math.inf in done_kinds and any(math.isfinite(x) for x in done_kinds), done_kinds
    assert env.curriculum.snapshot()["replayed"].any()  # the buffer filled and replayed


def test_captured_replay_equals_eager():
    kw = dict(CURRICULUM, score="learnability")
    eager = RaceEnv(E, "cpu", SEED, config=ONE_LAP, curriculum=kw)
    graph = RaceEnv(E, "cpu", SEED, config=ONE_LAP, curriculum=kw, captured=True)
    rng = np.random.default_rng(1)
    for t in range(60):
        a = wp.array(_actions(eager, rng, t), device="cpu")
        graph.obs.fill_(float("nan"))  # poisoned: a stale buffer cannot pass
        graph.curriculum_signal.fill_(float("nan"))
        eager.step(a)
        graph.step(a)
        he, hg = _host(eager), _host(graph)
        for k in he:
            assert he[k].tobytes() == hg[k].tobytes(), (t, k)
        d = he["done"] != 0
        assert eager.curriculum_signal.numpy()[d].tobytes() == (
            graph.curriculum_signal.numpy()[d].tobytes()
        )
        assert _snap(eager.curriculum) == _snap(graph.curriculum), t


def test_reseed_starts_a_new_curriculum_and_rerecords():
    kw = dict(CURRICULUM, score="learnability")
    env = RaceEnv(E, "cpu", SEED, config=ONE_LAP, curriculum=kw, captured=True)
    rng = np.random.default_rng(2)
    for t in range(30):
        env.step(wp.array(_actions(env, rng, t), device="cpu"))
    old = env.curriculum
    env.reseed(40)
    assert env.curriculum is not old and env.curriculum.snapshot()["step"] == 0
    fresh = RaceEnv(E, "cpu", 40, config=ONE_LAP, curriculum=kw)
    for t in range(30):
        a = wp.array(_actions(fresh, rng, t), device="cpu")
        env.step(a)
        fresh.step(a)
        he, hf = _host(env), _host(fresh)
        for k in he:
            assert he[k].tobytes() == hf[k].tobytes(), (t, k)
        assert _snap(env.curriculum) == _snap(fresh.curriculum), t


def test_without_curriculum_nothing_changes():
    env = RaceEnv(2, "cpu", SEED)
    assert env.curriculum is None and env.curriculum_signal is None
    with pytest.raises(AttributeError, match="curriculum_signal is None .* enable it"):
        env.curriculum_signal = wp.zeros(2, dtype=wp.float32)
    assert env.curriculum_signal is None


def test_rebinding_an_array_the_step_reads_raises_and_says_how_to_write():
    """``env.curriculum_signal = new`` was accepted and ignored (the step reads the array
    allocated at construction); every public array of the env refuses a rebinding and names
    ``.assign``, and the env keeps stepping on its own arrays."""
    env = RaceEnv(2, "cpu", SEED, curriculum={"buffer_size": 4, "replay_prob": 0.5})
    signal, actions = env.curriculum_signal, env.actions
    for name in ("curriculum_signal", "actions", "obs", "reward", "done", "position"):
        before = getattr(env, name)
        with pytest.raises(AttributeError, match=rf"RaceEnv\.{name} .*\.assign\(values\)"):
            setattr(env, name, wp.zeros_like(before))
        assert getattr(env, name) is before
    env.curriculum_signal.assign(np.array([0.5, 0.25], np.float32))  # the way to write it
    env.step()
    assert env.curriculum_signal is signal and env.actions is actions
    env.graph = None  # plain attributes are still set as usual
    # the containers too: the episode kernel reads their arrays through a struct built once
    for holder, name in ((env.episode, "length"), (env.outputs, "done"), (env.car, "speed")):
        before = getattr(holder, name)
        what = type(holder).__name__
        with pytest.raises(AttributeError, match=rf"{what}\.{name} .*\.assign\(values\)"):
            setattr(holder, name, wp.zeros_like(before))
        assert getattr(holder, name) is before
    for name in ("episode", "outputs", "car"):
        before = getattr(env, name)
        with pytest.raises(AttributeError, match=rf"RaceEnv\.{name} holds arrays .*<array>"):
            setattr(env, name, before)
        assert getattr(env, name) is before


def test_the_episode_struct_references_the_env_arrays():
    """The bookkeeping's struct holds the env's own arrays (the same objects, so the public
    arrays, the statistics and a recorded graph all see what the episode kernel writes) and
    its rules the config's values."""
    config = RaceConfig(max_laps=3, max_episode_steps=77)
    kw = {"buffer_size": 4, "replay_prob": 0.5, "score": "learnability"}
    env = RaceEnv(2, "cpu", SEED, config=config, curriculum=kw)
    ep, st = env.episode, env._stats
    expected = {
        "length": env.episode_length,
        "s_prev": ep.s_prev,
        "progress": env.episode_progress,
        "lap_mark": ep.lap_mark,
        "lap_last": ep.lap_last,
        **{f"stat_{f}": getattr(st, f) for f in ("episodes", "progress", "laps", "steps")},
        **{f"stat_{f}": getattr(st, f) for f in ("timed", "lap_time", "par_laps", "par_ratio")},
        "reward": env.reward,
        "done": env.done,
        "time_out": env.time_out,
        "done_reason": env.done_reason,
        "final_progress": env.final_progress,
        "final_lap_time": env.final_lap_time,
        "signal": env.curriculum_signal,
    }
    assert list(EpisodeArrays.vars) == list(expected)
    for name, array in expected.items():
        assert getattr(env._episode_arrays, name) is array, name
    rules = env._episode_rules
    assert (rules.max_laps, rules.max_episode_steps) == (3, 77)
    assert np.float32(rules.dt) == np.float32(config.dt) and rules.signal_mode == SIGNAL_SUCCESS


# ------------------------------------------------------------------------------ refusals
@pytest.fixture
def nothing_built(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("the course was built before the curriculum was checked")

    monkeypatch.setattr(race_module.Course, "track", refuse)


@pytest.mark.parametrize(
    "curriculum, kwargs, error, words",
    [
        ([("buffer_size", 4)], {}, TypeError, "curriculum must be None or a mapping"),
        ({"buffer_size": 4, "replay_prob": 0.5, "size": 3}, {}, ValueError, "curriculum.size"),
        ({"replay_prob": 0.5}, {}, ValueError, "curriculum.buffer_size is missing"),
        ({"buffer_size": 4}, {}, ValueError, "curriculum.replay_prob is missing"),
        ({"buffer_size": 0, "replay_prob": 0.5}, {}, ValueError, "curriculum.buffer_size"),
        ({"buffer_size": 4, "replay_prob": 1.5}, {}, ValueError, "curriculum.replay_prob"),
        ({"buffer_size": 4.0, "replay_prob": 0.5}, {}, TypeError, "curriculum.buffer_size"),
        ({**CURRICULUM, "score": "loss"}, {}, ValueError, "curriculum.score"),
        ({**CURRICULUM, "temperature": 0.0}, {}, ValueError, "curriculum.temperature"),
        ({**CURRICULUM, "staleness": math.nan}, {}, ValueError, "curriculum.staleness"),
        ({**CURRICULUM, "seed": 2**31}, {}, ValueError, "curriculum.seed"),
        (CURRICULUM, {"new_course_on_reset": False}, ValueError, "new_course_on_reset=True"),
        ({**CURRICULUM, "score": "regret"}, {}, ValueError, "racing_line='par'"),
    ],
)
def test_refusals_name_the_key_before_anything_is_built(
    nothing_built, curriculum, kwargs, error, words
):
    with pytest.raises(error, match=words.replace(".", r"\.").replace("(", r"\(")):
        RaceEnv(2, "cpu", 0, curriculum=curriculum, **kwargs)


def test_regret_with_a_racing_line_is_accepted():
    env = RaceEnv(2, "cpu", 0, config=TWO_LAPS_PAR, curriculum={**CURRICULUM, "score": "regret"})
    assert env.curriculum.rule.name == "REGRET"


# ------------------------------------------------------------------------------ fuzz
VALUES = st.one_of(
    st.integers(-(2**33), 2**33),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([None, True, "regret", "learnability", "value_loss", "x", [1], b"4"]),
)
KEYS = st.sampled_from([*env_base.CURRICULUM_FIELDS, "buffer", 3])


def _expected_error(curriculum):
    """None when the mapping is valid, else the exception type the env must raise (the
    oracle: the LevelReplay ranges of docs/curriculum.md)."""
    for k in curriculum:
        if k not in env_base.CURRICULUM_FIELDS:
            return ValueError
    if "buffer_size" not in curriculum or "replay_prob" not in curriculum:
        return ValueError
    ranges = {
        "buffer_size": ("int", 1, 65536),
        "replay_prob": ("float", 0.0, 1.0),
        "staleness": ("float", 0.0, 1.0),
        "temperature": ("float", 1e-3, 1e3),
        "seed": ("int", -(2**31), 2**31 - 1),
    }
    for k, v in curriculum.items():
        if k == "score":
            if not isinstance(v, str):
                return TypeError
            if v not in ("value_loss", "learnability", "regret"):
                return ValueError
            continue
        kind, lo, hi = ranges[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return TypeError
        if kind == "int" and not isinstance(v, int):
            return TypeError
        if not math.isfinite(v) or not lo <= v <= hi:
            return ValueError
    if curriculum.get("score") == "regret":
        return ValueError  # the default config plans no racing line
    return None


@pytest.mark.fuzz
@given(st.dictionaries(KEYS, VALUES, max_size=4), st.booleans())
def test_fuzz_curriculum_argument(extra, base):
    curriculum = {**({"buffer_size": 2, "replay_prob": 0.5} if base else {}), **extra}
    want = _expected_error(curriculum)
    if want is None:
        env = RaceEnv(2, "cpu", 1, curriculum=curriculum)
        env.step(wp.array(np.ones((2, 2), np.float32), device="cpu"))
        assert np.isfinite(env.obs.numpy()).all()
        return
    with pytest.raises(want, match="curriculum"):
        RaceEnv(2, "cpu", 1, curriculum=curriculum)
