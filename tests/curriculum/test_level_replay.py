"""LevelReplay against its NumPy oracle (same rule, same random stream), the courses it
rebuilds, its score updates, its graph replay and its determinism across processes."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import warp as wp

from track_gen import PerEnvSeededRNG, tools
from track_gen.course import Course
from track_gen.curriculum import LevelReplay
from track_gen.pipeline import presets

from ..support.course_state import course_rows
from .oracle import Oracle

ROOT = Path(__file__).resolve().parents[2]
E = 16
SETTINGS = {"buffer_size": 6, "replay_prob": 0.6, "staleness": 0.3, "temperature": 0.5, "seed": 3}
LIMITS = {"a_lat": 8.0, "a_lon": 4.0, "v_max": 6.0}


def make_course(device, seeds=0, racing_line=False, num_envs=E, cpu_threads=1):
    extra = [tools.RacingLine(0.04, **LIMITS)] if racing_line else []
    return Course.track(
        presets.track(num_envs=num_envs, device=device, cpu_threads=cpu_threads),
        checkpoint_spacing=0.6,
        extra=extra,
        seeds=seeds,
    )


def oracle_for(course, **settings):
    seeds, epochs = course.seeds.snapshot()
    return Oracle(seeds, epochs, course.seeds.effective_seeds(), **settings)


def assert_same_state(lr: LevelReplay, oracle: Oracle, where: str) -> None:
    got, want = lr.snapshot(), oracle.state()
    for key, value in want.items():
        np.testing.assert_array_equal(got[key], value, err_msg=f"{key} at {where}")


def episode_inputs(rng, rule, n):
    done = (rng.random(n) < 0.4).astype(np.int32)
    if rule == "learnability":
        signal = (rng.random(n) < 0.5).astype(np.float32)
    elif rule == "regret":
        signal = rng.uniform(0.5, 4.0, n).astype(np.float32)
        signal[rng.random(n) < 0.2] = np.inf  # no lap completed
    else:
        signal = rng.normal(size=n).astype(np.float32)
    signal[rng.random(n) < 0.05] = np.nan  # unscored
    signal[done == 0] = np.float32(1e30)  # never read: would dominate any score
    return done, signal


@pytest.mark.parametrize("rule", ["value_loss", "learnability", "regret"])
def test_decisions_match_the_numpy_oracle(device, rule):
    course = make_course(device, seeds=11, racing_line=rule == "regret")
    lr = LevelReplay(course, score=rule, **SETTINGS)
    oracle = oracle_for(course, score=rule, **SETTINGS)
    done_w = wp.zeros(E, dtype=wp.int32, device=device)
    signal_w = wp.zeros(E, dtype=wp.float32, device=device)
    rng = np.random.default_rng(5)
    replays = 0
    for t in range(40):
        done, signal = episode_inputs(rng, rule, E)
        done_w.assign(done)
        signal_w.assign(signal)
        par = course.racing_line.line.lap_time.numpy() if rule == "regret" else None
        lr.update(done_w, signal_w)
        oracle.update(done, signal, par)
        assert_same_state(lr, oracle, f"update {t}")
        lr.regenerate(done_w)
        oracle.regenerate(done)
        assert_same_state(lr, oracle, f"regenerate {t}")
        seeds, epochs = course.seeds.snapshot()
        np.testing.assert_array_equal(seeds[done != 0], oracle.env_level[done != 0])
        assert (epochs[done != 0] == 0).all()
        replays += int(oracle.replayed[done != 0].sum())
    assert oracle.filled == SETTINGS["buffer_size"] and replays > 5


def test_replayed_levels_rebuild_the_buffered_courses_bitwise(device):
    course = make_course(device, seeds=100)
    lr = LevelReplay(course, buffer_size=4, replay_prob=1.0, seed=9)
    everyone = wp.ones(E, dtype=wp.int32, device=device)
    signal = wp.array(np.linspace(0.0, 1.0, E, dtype=np.float32), device=device)
    for _ in range(3):
        lr.update(everyone, signal)
        lr.regenerate(everyone)
    snap = lr.snapshot()
    assert snap["replayed"].all() and set(snap["env_level"]) <= set(snap["seed"])
    fresh = make_course(device, seeds=wp.array(snap["env_level"], dtype=wp.int32, device=device))
    got, want = course_rows(course, seeds=True), course_rows(fresh, seeds=True)
    assert got.keys() == want.keys()
    for key in want:
        assert got[key].tobytes() == want[key].tobytes(), key


def test_replay_prob_zero_gives_the_courses_of_advance(device):
    course, twin = make_course(device, seeds=40), make_course(device, seeds=40)
    lr = LevelReplay(course, buffer_size=3, replay_prob=0.0)
    mask = wp.array(np.arange(E) % 3 == 0, dtype=wp.int32, device=device)
    signal = wp.zeros(E, dtype=wp.float32, device=device)
    for _ in range(3):
        lr.update(mask, signal)
        lr.regenerate(mask)
        twin.regenerate(mask=mask, advance=True)
    got, want = course_rows(course), course_rows(twin)
    for key in want:
        if key.endswith(".generation"):
            continue  # the epoch: 0 under the curriculum (the seed holds the level)
        assert got[key].tobytes() == want[key].tobytes(), key
    _, epochs = twin.seeds.snapshot()
    assert (lr.snapshot()["env_level"] == twin.seeds.effective_seeds()).all()
    assert (epochs[::3] == 3).all()


def test_scores_update_only_for_done_envs(device):
    course = make_course(device)
    lr = LevelReplay(course, buffer_size=E, replay_prob=0.0)
    everyone = wp.ones(E, dtype=wp.int32, device=device)
    lr.update(everyone, wp.full(E, 0.5, dtype=wp.float32, device=device))
    before = lr.snapshot()
    assert (before["score"] == 0.5).all() and (before["env_slot"] == np.arange(E)).all()
    done = (np.arange(E) % 4 == 1).astype(np.int32)
    signal = np.where(done != 0, 2.0, np.nan).astype(np.float32)
    lr.update(wp.array(done, device=device), wp.array(signal, device=device))
    after = lr.snapshot()
    assert after["step"] == before["step"] + 1
    np.testing.assert_array_equal(after["score"], np.where(done != 0, 2.0, 0.5))
    np.testing.assert_array_equal(after["plays"], np.where(done != 0, 2, 1))
    np.testing.assert_array_equal(after["last_played"], before["last_played"])


def test_an_all_zero_mask_changes_nothing(device):
    course = make_course(device)
    lr = LevelReplay(course, buffer_size=2, replay_prob=1.0)
    zero = wp.zeros(E, dtype=wp.int32, device=device)
    lr.update(
        wp.ones(E, dtype=wp.int32, device=device), wp.ones(E, dtype=wp.float32, device=device)
    )
    snap, rows = lr.snapshot(), course_rows(course, seeds=True)
    lr.regenerate(zero)
    after = course_rows(course, seeds=True)
    for key, value in lr.snapshot().items():
        np.testing.assert_array_equal(value, snap[key], err_msg=key)
    assert all(after[k].tobytes() == rows[k].tobytes() for k in rows)


def test_a_regeneration_the_course_refuses_changes_nothing(device):
    rng = PerEnvSeededRNG(0, num_envs=E, device=device)
    course = make_course(device, seeds=rng)
    lr = LevelReplay(course, buffer_size=2, replay_prob=1.0)
    everyone = wp.ones(E, dtype=wp.int32, device=device)
    lr.update(everyone, wp.ones(E, dtype=wp.float32, device=device))
    snap, seeds = lr.snapshot(), course.seeds.snapshot()
    Course(course.generator)  # a newer course takes the generator over
    with pytest.raises(RuntimeError, match="another Course"):
        lr.regenerate(everyone)
    for key, value in lr.snapshot().items():
        np.testing.assert_array_equal(value, snap[key], err_msg=key)
    for a, b in zip(course.seeds.snapshot(), seeds, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_newer_curriculum_takes_the_course_over(device):
    course = make_course(device)
    old = LevelReplay(course, buffer_size=2, replay_prob=1.0)
    ones = wp.ones(E, dtype=wp.int32, device=device)
    signal = wp.ones(E, dtype=wp.float32, device=device)
    old.update(ones, signal)
    new = LevelReplay(course, buffer_size=3, replay_prob=0.0)
    snap, rows = old.snapshot(), course_rows(course, seeds=True)
    with pytest.raises(RuntimeError, match="newer LevelReplay"):
        old.update(ones, signal)
    with pytest.raises(RuntimeError, match="newer LevelReplay"):
        old.regenerate(ones)
    for key, value in old.snapshot().items():
        np.testing.assert_array_equal(value, snap[key], err_msg=key)
    after = course_rows(course, seeds=True)
    assert all(after[k].tobytes() == rows[k].tobytes() for k in rows)
    new.update(ones, signal)
    new.regenerate(ones)


@wp.kernel
def fake_episodes(
    # inputs
    length: wp.array(dtype=wp.float32),
    # outputs
    tick_inout: wp.array(dtype=wp.int32),
    done_out: wp.array(dtype=wp.int32),
    signal_out: wp.array(dtype=wp.float32),
):
    """A stand-in for an RL step: env e's episode ends every 2 + e % 3 steps with a success
    signal from its course's length (so replays and fresh draws both feed the scores)."""
    e = wp.tid()
    t = tick_inout[e] + 1
    tick_inout[e] = t
    d = int(0)
    if t % (2 + e % 3) == 0:
        d = 1
    done_out[e] = d
    signal_out[e] = wp.where(length[e] - wp.floor(length[e]) < 0.5, 1.0, 0.0)


class Loop:
    """A course, its curriculum and the fake episode kernel: one RL step per :meth:`step`."""

    def __init__(self, device, cpu_threads=1):
        self.course = make_course(device, seeds=21, cpu_threads=cpu_threads)
        self.lr = LevelReplay(self.course, score="learnability", **SETTINGS)
        self.tick = wp.zeros(E, dtype=wp.int32, device=device)
        self.done = wp.zeros(E, dtype=wp.int32, device=device)
        self.signal = wp.zeros(E, dtype=wp.float32, device=device)
        self.device = device

    def step(self, guard: bool = False):
        wp.launch(
            fake_episodes,
            E,
            inputs=[self.course.result.length],
            outputs=[self.tick, self.done, self.signal],
            device=self.device,
        )
        self.lr.update(self.done, self.signal)
        if guard and not self.done.numpy().any():
            return  # a host loop's guard: no env done, no regeneration
        self.lr.regenerate(self.done)

    def state(self) -> dict:
        out = {f"lr.{k}": np.asarray(v) for k, v in self.lr.snapshot().items()}
        out.update(course_rows(self.course, seeds=True))
        out["done"], out["signal"] = self.done.numpy(), self.signal.numpy()
        return out


def test_a_recorded_step_equals_the_eager_step_bitwise(device):
    eager, live = Loop(device), Loop(device)
    with wp.ScopedCapture(device=device) as cap:
        live.step()
    b = live.lr.buffer
    scratch = (live.done, live.signal, b.weight, b.cdf)
    replays = 0
    for n in range(30):
        for arr in scratch:  # poisoned: a replay that skips a write differs
            arr.fill_(-7 if arr.dtype == wp.int32 else np.nan)
        wp.capture_launch(cap.graph)
        eager.step()
        got, want = live.state(), eager.state()
        for key in want:
            assert np.asarray(got[key]).tobytes() == np.asarray(want[key]).tobytes(), (n, key)
        replays += int(got["lr.replayed"].sum())
    assert replays > 0


def test_a_host_guard_makes_the_same_decisions():
    every, guarded = Loop("cpu"), Loop("cpu")
    skipped = 0
    for _ in range(20):
        every.step()
        guarded.step(guard=True)
        skipped += int(not guarded.done.numpy().any())
    assert skipped > 0 and state_hash(every) == state_hash(guarded)


def state_hash(loop: Loop) -> str:
    h = hashlib.sha256()
    for key, value in sorted(loop.state().items()):
        h.update(key.encode())
        h.update(np.ascontiguousarray(value).tobytes())
    return h.hexdigest()


def test_decisions_are_the_same_for_any_cpu_thread_count():
    hashes = set()
    for threads in (1, 2, 3):
        loop = Loop("cpu", cpu_threads=threads)
        for _ in range(15):
            loop.step()
        hashes.add(state_hash(loop))
    assert len(hashes) == 1


SCRIPT = """
import hashlib, numpy as np, warp as wp
wp.config.quiet = True
import tests.curriculum.test_level_replay as t
loop = t.Loop("cpu")
for _ in range(25):
    loop.step()
print(t.state_hash(loop))
"""


def test_decisions_are_the_same_in_another_process():
    loop = Loop("cpu")
    for _ in range(25):
        loop.step()
    runs = [
        subprocess.run(
            [sys.executable, "-c", textwrap.dedent(SCRIPT)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=600,
        )
        for _ in range(2)
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr
    assert {run.stdout.strip().splitlines()[-1] for run in runs} == {state_hash(loop)}


def test_the_cpu_sort_and_the_cuda_count_give_the_same_ranks():
    """The two ranking paths (radix sort on the CPU, one counting thread per slot on CUDA),
    both run on the CPU here, on scores with ties, signed zeros and a part-filled buffer."""
    from track_gen.curriculum import kernels as k

    B = 64
    rng = np.random.default_rng(2)
    scores = rng.choice(np.array([-1.5, -0.0, 0.0, 0.25, 0.25, 3.0], np.float32), B)
    for n in (0, 1, 37, B):
        score = wp.array(scores, dtype=wp.float32)
        last = wp.array(rng.integers(0, 9, B), dtype=wp.int64)
        filled = wp.array([n], dtype=wp.int32)
        w_count, w_sort = wp.zeros(B, dtype=wp.float64), wp.zeros(B, dtype=wp.float64)
        undo = wp.zeros(B, dtype=wp.int64)
        keys, order = wp.zeros(2 * B, dtype=wp.float32), wp.zeros(2 * B, dtype=wp.int32)
        wp.launch(
            k._rank_weights_kernel, B, inputs=[score, last, filled, 2.0], outputs=[w_count, undo]
        )
        wp.launch(k._rank_keys_kernel, B, inputs=[score, last, filled], outputs=[keys, order, undo])
        wp.utils.radix_sort_pairs(keys, order, B)
        wp.launch(k._order_weights_kernel, B, inputs=[order, filled, 2.0], outputs=[w_sort])
        assert w_count.numpy().tobytes() == w_sort.numpy().tobytes(), n
        assert (undo.numpy() == last.numpy()).all()
