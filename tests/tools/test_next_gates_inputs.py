"""Fuzz of every input of the next-gates sensor (``tools.NextGates`` / ``NextGatesUtility``).

Settings (``num_gates``, ``reveal_range``, ``nominal_noise``) take edge, in-range and
out-of-range values of every kind: each is refused with the error its declaration implies
(plus the documented rule: a nominal noise needs a reveal range) before anything is built.
Poses take any float32 (NaN, inf, huge, subnormal), progress targets any int32: answers of a
valid env with a finite position and a finite, nonzero orientation are finite, every other
env answers the documented "no answer", and nothing crashes. Hand-made gate batches (counts
beyond the capacity, NaN and huge coordinates) and ``seeds`` of another kind too.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import GateGenerator, TrackGenerator
from track_gen.pipeline import presets
from track_gen.tools import (
    HeightFieldUtility,
    NextGates,
    NextGatesUtility,
    PropsUtility,
)
from track_gen.tools.next_gates import NOMINAL_NOISE, NUM_GATES, REVEAL_RANGE

from ..support.strategies import (
    agent_rows,
    examples,
    expected_error,
    other_objects,
    values,
    wrong_arrays,
)
from ..support.strategies import in_range as in_range_of

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz


E = 3


def _first_error(*errors):
    return next((e for e in errors if e is not None), None)


@settings(max_examples=examples(60))
@given(values(NUM_GATES), st.one_of(st.none(), values(REVEAL_RANGE)), values(NOMINAL_NOISE))
def test_next_gates_settings(num_gates, reveal_range, nominal_noise):
    want = _first_error(
        expected_error(NUM_GATES, num_gates),
        expected_error(REVEAL_RANGE, reveal_range),
        expected_error(NOMINAL_NOISE, nominal_noise),
    )
    if want is None and float(nominal_noise) > 0.0 and reveal_range is None:
        want = ValueError
    if want is None:
        comp = NextGates(num_gates, reveal_range=reveal_range, nominal_noise=nominal_noise)
        assert comp.num_gates == int(num_gates)
        return
    with pytest.raises(want):
        NextGates(num_gates, reveal_range=reveal_range, nominal_noise=nominal_noise)


@functools.lru_cache(maxsize=1)
def _gates():
    gen = GateGenerator(presets.gates(num_envs=E, device="cpu", gate_width=0.1), seeds=4)
    gen.generate()
    return gen


@settings(max_examples=examples(40))
@given(
    agent_rows(E, 3),
    agent_rows(E, 4),
    st.lists(st.integers(-(2**31), 2**31 - 1), min_size=E, max_size=E),
    st.integers(1, 40),
    in_range_of(REVEAL_RANGE),
    in_range_of(NOMINAL_NOISE),
)
def test_next_gates_any_pose_target_and_range(pos, quat, target, k, reveal, noise):
    gen = _gates()
    nxt = wp.array(np.asarray(target, np.int32), dtype=wp.int32, device="cpu")
    sensor = NextGatesUtility(
        gen.result,
        nxt,
        k,
        seeds=gen.seeds.seeds,
        reveal_range=float(reveal),
        nominal_noise=float(noise),
    )
    count = gen.result.count.numpy()
    nominal = sensor.nominal_position.numpy().reshape(E, -1, 3)
    for e in range(E):
        assert np.isfinite(nominal[e, : count[e]]).all()
    poses = sensor.sense(
        wp.array(pos, dtype=wp.vec3f, device="cpu"), wp.array(quat, dtype=wp.quatf, device="cpu")
    )
    idx, rel, rot = poses.host("index"), poses.host("position"), poses.host("orientation")
    for e in range(E):
        live = np.isfinite(pos[e]).all() and np.isfinite(quat[e]).all() and np.any(quat[e])
        n = min(k, int(count[e]))
        if not live:
            assert (idx[e] == -1).all() and np.isnan(rel[e]).all() and np.isnan(rot[e]).all()
            continue
        assert (idx[e, :n] >= 0).all() and (idx[e, :n] < count[e]).all()
        assert np.isfinite(rel[e, :n]).all() and np.isfinite(rot[e, :n]).all()
        assert (idx[e, n:] == -1).all() and np.isnan(rel[e, n:]).all()
        np.testing.assert_allclose(np.linalg.norm(rot[e, :n], axis=1), 1.0, atol=1e-5)


def test_next_gates_wrong_arrays_refused_before_launch():
    gen = _gates()
    nxt = wp.zeros(E, dtype=wp.int32, device="cpu")
    sensor = NextGatesUtility(gen.result, nxt, 2)
    good_p = wp.zeros(E, dtype=wp.vec3f, device="cpu")
    good_q = wp.zeros(E, dtype=wp.quatf, device="cpu")
    before = [a.numpy().tobytes() for a in sensor.poses.arrays()]
    for _label, error, make in wrong_arrays(E, wp.vec3f, "cpu"):
        with pytest.raises(error, match="position"):
            sensor.sense(make(), good_q)
    for _label, error, make in wrong_arrays(E, wp.quatf, "cpu"):
        with pytest.raises(error, match="orientation"):
            sensor.sense(good_p, make())
    for _label, error, make in wrong_arrays(E, wp.int32, "cpu"):
        with pytest.raises(error, match="next_index"):
            NextGatesUtility(gen.result, make(), 2)
    assert [a.numpy().tobytes() for a in sensor.poses.arrays()] == before


@functools.lru_cache(maxsize=1)
def _track():
    gen = TrackGenerator(presets.track(num_envs=E, device="cpu"), seeds=8)
    gen.generate()
    props = PropsUtility(gen.result, "cone", 0.1, max_props=256)
    field = HeightFieldUtility(gen.result, resolution=32)
    return gen, props, field


_POISON = [np.nan, np.inf, -np.inf, 1e19, -1e30, 3.4e38, 1e-40]


@settings(max_examples=examples(25))
@given(
    st.lists(st.sampled_from([-5, 0, 1, 2, 40, 2**31 - 1]), min_size=E, max_size=E),
    st.lists(st.tuples(st.integers(0, E - 1), st.sampled_from(_POISON)), max_size=4),
    st.integers(0, 2**31 - 1),
)
def test_next_gates_on_hand_made_bad_gates(counts, poison, seed):
    """Gate counts beyond the capacity and NaN / huge gate coordinates: no crash; a slot
    answers either a finite pose or NaN with index -1."""
    gen = _gates()
    seq = gen.result.clone()
    rng = np.random.default_rng(seed)
    seq.count.assign(np.asarray(counts, np.int32))
    M = seq.max_gates
    gp = seq.position.numpy().reshape(E, M, 3)
    for e, value in poison:
        gp[e, rng.integers(M), rng.integers(3)] = value
    seq.position.assign(gp.reshape(-1, 3))
    nxt = wp.array(rng.integers(-3, 50, E).astype(np.int32), dtype=wp.int32, device="cpu")
    sensor = NextGatesUtility(
        seq, nxt, 4, seeds=gen.seeds.seeds, reveal_range=0.3, nominal_noise=0.1
    )
    pos = wp.array(rng.normal(0, 0.5, (E, 3)).astype(np.float32), dtype=wp.vec3f, device="cpu")
    quat = wp.array(np.tile([0, 0, 0, 1], (E, 1)).astype(np.float32), dtype=wp.quatf)
    poses = sensor.sense(pos, quat)
    idx, rel = poses.host("index"), poses.host("position")
    live = idx >= 0
    assert np.isfinite(rel[live]).all() and np.isnan(rel[~live]).all()
    assert (idx < np.clip(seq.count.numpy(), 0, M)[:, None]).all()


def _wrong_objects():
    """Objects a props / height_field / seeds argument may be given by mistake: every other
    kind, the track, the placer and the baker instead of their results, each result as the
    other argument."""
    gen, props, field = _track()
    return [*other_objects(E), 3, gen.result, props, field, props.props, field.field]


@settings(max_examples=examples(30))
@given(seeds=st.sampled_from(_wrong_objects()))
def test_next_gates_seeds_are_checked_also_without_reveal_range(seeds):
    """A seeds of the wrong kind was accepted and ignored without ``reveal_range``."""
    gen = _gates()
    nxt = wp.zeros(E, dtype=wp.int32, device="cpu")
    with pytest.raises(TypeError, match="seeds must be"):
        NextGatesUtility(gen.result, nxt, 2, seeds=seeds)
    assert NextGatesUtility(gen.result, nxt, 2, seeds=gen.seeds.seeds).seeds is gen.seeds.seeds
