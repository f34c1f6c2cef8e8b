"""Seeds: ``TrackGenerator(cfg, seeds=...)``, ``generate(seeds=...)``, ``SeedState.set`` and
``PerEnvSeededRNG.set_seeds_warp(seeds, ids)``.

Seeds are int32 values: an int ``s`` gives env ``e`` the seed ``s + e``, or one int per env.
Floats, NaN and bools (even one among ints) are refused with TypeError, values outside int32
with ValueError (never wrapped), nested or multi-dimensional values with ValueError; ids must
be unique ints in ``[0, E)`` (an empty list selects no env). A refused call leaves seeds and
epochs byte-identical; an accepted one stores exactly the expected int32 values.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
import warp as wp
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen import PerEnvSeededRNG, SeedState, TrackGenConfig, TrackGenerator

from .support.invariants import arrays_bytes, check_result
from .support.strategies import (
    INT32_MAX,
    INT32_MIN,
    boundary_ints,
    examples,
    expected_host_values,
    is_bool,
    is_int,
    non_int_scalars,
    wrong_arrays,
)

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 3


def _config(device):
    return TrackGenConfig(num_envs=E, device=device, num_points=64, relax_enable=False)


# ------------------------------------------------------------------------------ oracle
def expected_seeds(seeds, idx: np.ndarray):
    """``(error, int32 values for the envs idx)`` of a seed write."""
    if is_int(seeds):
        s = int(seeds)
        hi = int(idx.max()) if idx.size else 0
        if s < INT32_MIN or s + hi > INT32_MAX:
            return ValueError, None
        return None, (s + idx).astype(np.int64)
    if seeds is None or is_bool(seeds) or isinstance(seeds, (float, np.floating)):
        return TypeError, None
    err, items = expected_host_values(seeds, "int")
    if err is not None:
        return err, None
    if len(items) != idx.size:
        return ValueError, None
    if any(v < INT32_MIN or v > INT32_MAX for v in items):
        return ValueError, None
    return None, np.asarray(items, np.int64)


def expected_ids(ids, E: int):
    """``(error, env indices)`` of the ``ids`` argument."""
    if ids is None:
        return None, np.arange(E)
    err, items = expected_host_values(ids, "int")
    if err is not None:
        return err, None
    if any(v < 0 or v >= E for v in items):
        return ValueError, None
    if len(set(items)) != len(items):
        return ValueError, None
    return None, np.asarray(items, np.int64)


# ------------------------------------------------------------------------------ strategies
#: Elements that spoil an int list: bools (TypeError even among ints), nested values
#: (ValueError), floats and other kinds (TypeError).
_SPOILERS = st.sampled_from(
    [True, False, np.bool_(True), [1], (1,), [], np.array([1]), np.array(1), 1.0, None, "1"]
)


def _seed_lists(n: int | None = None):
    size = {"min_size": n, "max_size": n} if n is not None else {"min_size": 0, "max_size": 6}
    items = st.one_of(boundary_ints, boundary_ints, non_int_scalars, _SPOILERS)
    return st.lists(items, **size)


def _nested(n: int):
    """``n`` ints as a nested list or a 2-D array (one value per env is expected)."""
    ints = st.lists(st.integers(-100, 100), min_size=n, max_size=n)
    return st.one_of(
        ints.map(lambda v: [[x] for x in v]),
        ints.map(lambda v: [v]),
        ints.map(lambda v: np.asarray(v, np.int64).reshape(-1, 1)),
        ints.map(lambda v: np.asarray(v, np.int32).reshape(1, -1)),
    )


def seed_values(n: int, device):
    """Anything a caller may pass as seeds for ``n`` envs."""
    return st.one_of(
        boundary_ints,
        non_int_scalars,
        _seed_lists(n),
        _seed_lists(),
        _nested(n),
        st.lists(st.integers(INT32_MIN, INT32_MAX), min_size=n, max_size=n),
        st.lists(st.integers(INT32_MIN, INT32_MAX), min_size=n, max_size=n).map(tuple),
        st.tuples(
            st.lists(st.integers(-(2**31) - 5, 2**31 + 5), min_size=n, max_size=n),
            st.sampled_from([np.int64, np.int32, np.uint32, np.float64, np.float32]),
        ).map(lambda p: np.asarray(p[0]).astype(p[1]) if p[1] is not np.int32 else _clip32(p[0])),
        st.tuples(
            st.lists(st.integers(0, 1000), min_size=n, max_size=n),
            st.sampled_from([wp.int32, wp.int64, wp.float32, wp.uint32]),
        ).map(lambda p: wp.array(p[0], dtype=p[1], device=device)),
    )


def _clip32(values):
    return np.clip(np.asarray(values, np.int64), INT32_MIN, INT32_MAX).astype(np.int32)


def id_values(E: int):
    ints = st.integers(-2, E + 1)
    return st.one_of(
        st.none(),
        st.lists(st.integers(0, E - 1), min_size=0, max_size=E, unique=True),
        st.lists(ints, min_size=1, max_size=E + 1),
        st.lists(st.integers(0, E - 1), min_size=1, max_size=E).map(np.asarray),
        st.lists(st.sampled_from([0.0, 1.0, 1.5, float("nan")]), min_size=1, max_size=E),
        st.lists(st.one_of(st.integers(0, E - 1), _SPOILERS), min_size=1, max_size=E),
        st.sampled_from(
            [[2**40], [-(2**40)], [10**400], [True, False], [True, 2], [[0], [1]], [[0, 1]]]
            + [np.array([0.0, 1.0]), np.array([[0, 1]]), [], (), np.array([], np.int64)]
        ),
    )


# ------------------------------------------------------------------------------ constructor
@settings(max_examples=examples(80))
@given(data=st.data())
def test_constructor_seeds_are_stored_exactly_or_refused(device, data):
    cfg = _config(device)
    kind = data.draw(st.sampled_from(["value", "wrong array", "array", "rng"]), label="kind")
    if kind == "value":
        seeds = data.draw(st.one_of(st.none(), seed_values(E, device)), label="seeds")
    elif kind == "wrong array":
        _label, _err, make = data.draw(st.sampled_from(wrong_arrays(E, wp.int32, device)))
        seeds = make()
    elif kind == "array":
        host = data.draw(st.lists(st.integers(INT32_MIN, INT32_MAX), min_size=E, max_size=E))
        seeds = wp.array(host, dtype=wp.int32, device=device)
    else:
        n = data.draw(st.sampled_from([E, E + 1, 1]), label="rng envs")
        seeds = PerEnvSeededRNG(data.draw(st.integers(-100, 100)), n, device)
    if kind == "rng":
        err = None if seeds.num_envs == E else ValueError
    elif kind == "array":
        err = None
    elif kind == "wrong array":
        err = _err
    elif seeds is None:
        err = None
    elif isinstance(seeds, wp.array):  # an [E] array from seed_values: only int32 is taken
        err = None if seeds.dtype == wp.int32 else TypeError
        kind = "array"
    elif is_int(seeds):
        err, _ = expected_seeds(seeds, np.arange(E))
    else:
        err = TypeError  # only an int, a wp.array, an rng or a SeedState
    event(f"{kind}: {err.__name__ if err else 'accepted'}")
    if err is not None:
        with pytest.raises(err):
            TrackGenerator(cfg, seeds=seeds)
        return
    gen = TrackGenerator(cfg, seeds=seeds)
    stored = gen.seeds.seeds.numpy()
    if kind in ("array", "rng"):
        array = seeds if kind == "array" else seeds.seeds_warp
        assert gen.seeds.seeds.ptr == array.ptr  # used by pointer, never copied
    else:
        base = 0 if seeds is None else int(seeds)
        np.testing.assert_array_equal(stored.astype(np.int64), base + np.arange(E))
    np.testing.assert_array_equal(gen.seeds.epochs.numpy(), 0)


# ------------------------------------------------------------------------------ after construction
@pytest.fixture(scope="module")
def seeded():
    """``device -> (generator with owned seeds, generator on an rng, the rng)``."""
    cache = {}

    def get(device):
        if str(device) not in cache:
            owned = TrackGenerator(_config(device), seeds=7)
            rng = PerEnvSeededRNG(100, E, device)
            on_rng = TrackGenerator(_config(device), seeds=rng)
            owned.generate()
            on_rng.generate()
            cache[str(device)] = (owned, on_rng, rng)
        return cache[str(device)]

    return get


@settings(max_examples=examples(120))
@given(data=st.data())
def test_seed_writes_store_exact_int32_values_or_change_nothing(seeded, device, data):
    owned, on_rng, rng = seeded(device)
    how = data.draw(
        st.sampled_from(["generate", "state.set", "rng.set", "rng.set ids", "rng generate"]),
        label="call",
    )
    ids = data.draw(id_values(E), label="ids") if how == "rng.set ids" else None
    id_err, idx = expected_ids(ids, E)
    n = E if idx is None else idx.size
    seeds = data.draw(seed_values(n, device), label="seeds")
    seed_err, values = expected_seeds(seeds, idx) if id_err is None else (None, None)
    keep = seeds is None and how in ("generate", "rng generate")  # generate(seeds=None)
    if keep:
        seed_err, values = None, None
    gen = owned if how in ("generate", "state.set") else on_rng
    state = gen.seeds
    before_seeds = state.seeds.numpy().copy()
    before = arrays_bytes(state.seeds, state.epochs)
    err = id_err or seed_err
    event(f"{how}: {err.__name__ if err else 'accepted'}")

    def call():
        if how == "generate" or how == "rng generate":
            gen.generate(seeds=seeds)
        elif how == "state.set":
            state.set(seeds)
        elif how == "rng.set":
            rng.set_seeds_warp(seeds)
        else:
            rng.set_seeds_warp(seeds, ids=ids)

    if err is not None:
        with pytest.raises(err):
            call()
        assert arrays_bytes(state.seeds, state.epochs) == before, "a refused call changed seeds"
        return
    epochs = state.epochs.numpy().copy()
    call()
    expected = before_seeds.astype(np.int64)
    if keep:  # a plain regeneration: seeds and epochs as they were
        np.testing.assert_array_equal(state.seeds.numpy().astype(np.int64), expected)
        np.testing.assert_array_equal(state.epochs.numpy(), epochs)
        check_result(gen)
        return
    expected[idx] = values
    np.testing.assert_array_equal(state.seeds.numpy().astype(np.int64), expected)
    if how in ("generate", "rng generate"):
        np.testing.assert_array_equal(state.epochs.numpy(), 0)
        check_result(gen)
    else:
        np.testing.assert_array_equal(state.epochs.numpy(), epochs)


def test_seeds_bound_to_a_user_array_are_never_written(device):
    mine = wp.array(np.arange(E) + 40, dtype=wp.int32, device=device)
    gen = TrackGenerator(_config(device), seeds=mine)
    gen.generate()
    for call in (lambda: gen.seeds.set(5), lambda: gen.generate(seeds=5)):
        with pytest.raises(RuntimeError, match="your own array"):
            call()
    np.testing.assert_array_equal(mine.numpy(), np.arange(E) + 40)


def test_a_seed_state_serves_one_live_generator(device):
    first = TrackGenerator(_config(device), seeds=3)
    state = first.seeds
    with pytest.raises(ValueError, match="SeedState"):
        TrackGenerator(_config(device), seeds=state)
    del first
    gc.collect()
    second = TrackGenerator(_config(device), seeds=state)  # the first one is gone
    assert second.seeds is state
    with pytest.raises(ValueError, match="batch size"):
        TrackGenerator(
            TrackGenConfig(num_envs=E + 1, device=device), seeds=SeedState.create(1, E, device)
        )


# ------------------------------------------------------------------------------ fixed findings
@pytest.mark.parametrize(
    "seeds, ids",
    [
        ([True, 1, 2], None),
        ([np.bool_(False), 5, 6], None),
        ([5, 6], [True, 2]),
        ([5, 6], [np.bool_(True), 2]),
        (np.array([True, False, True]), None),
    ],
)
def test_bools_inside_seed_or_id_lists_are_refused(seeds, ids):
    rng = PerEnvSeededRNG(100, E, "cpu")
    before = rng.seeds_warp.numpy().tobytes()
    with pytest.raises(TypeError, match="ids" if ids is not None else "seeds"):
        rng.set_seeds_warp(seeds, ids=ids)
    assert rng.seeds_warp.numpy().tobytes() == before


@pytest.mark.parametrize(
    "seeds, ids",
    [
        ([[1, 2, 3]], None),
        ([[5], [6], [7]], None),
        ([5, [6], 7], None),
        (np.arange(E).reshape(E, 1), None),
        ([5, 6], [[0], [1]]),
        ([5, 6], np.array([[0, 1]])),
    ],
    ids=["[[1, 2, 3]]", "[[5], [6], [7]]", "one nested", "[E, 1] array", "ids nested", "ids 2-D"],
)
def test_seed_lists_of_another_shape_are_refused(seeded, seeds, ids):
    owned, _, rng = seeded("cpu")
    before = rng.seeds_warp.numpy().tobytes()
    with pytest.raises(ValueError, match="ids" if ids is not None else "seeds"):
        rng.set_seeds_warp(seeds, ids=ids)
    assert rng.seeds_warp.numpy().tobytes() == before
    if ids is None:
        state_before = arrays_bytes(owned.seeds.seeds, owned.seeds.epochs)
        with pytest.raises(ValueError, match="seeds"):
            owned.seeds.set(seeds)
        assert arrays_bytes(owned.seeds.seeds, owned.seeds.epochs) == state_before


@pytest.mark.parametrize(
    "seeds, ids",
    [
        (np.array([], np.int64), np.array([], np.int64)),
        ([], []),
        ((), ()),
        (7, []),
    ],
    ids=["int64 arrays", "lists", "tuples", "int seed"],
)
def test_an_empty_ids_list_is_a_no_op(seeded, seeds, ids):
    _, _, rng = seeded("cpu")
    before = rng.seeds_warp.numpy().tobytes()
    rng.set_seeds_warp(seeds, ids=ids)
    assert rng.seeds_warp.numpy().tobytes() == before


def test_an_empty_ids_list_still_checks_the_seeds(seeded):
    _, _, rng = seeded("cpu")
    before = rng.seeds_warp.numpy().tobytes()
    with pytest.raises(ValueError, match="seeds"):
        rng.set_seeds_warp([1], ids=[])  # one seed for no env
    with pytest.raises(TypeError, match="seeds"):
        rng.set_seeds_warp([1.5], ids=[])
    assert rng.seeds_warp.numpy().tobytes() == before


@pytest.mark.parametrize("seeds", [[10**400, 1, 2], [2**64, 1, 2], [1, 2, -(2**63) - 1]])
def test_seeds_beyond_int64_are_a_value_error(seeded, seeds):
    _, _, rng = seeded("cpu")
    before = rng.seeds_warp.numpy().tobytes()
    with pytest.raises(ValueError, match="int32"):
        rng.set_seeds_warp(seeds)
    assert rng.seeds_warp.numpy().tobytes() == before


#: Integers at the int32, int64 and uint64 edges: a uint64 above int64 max (``2**64 - 5``)
#: must not wrap to a negative int64 (``-5``) on its way to the int32 range check.
_EDGES = [0, 1, 5, INT32_MAX, INT32_MAX + 1, 2**32 - 1, 2**32 + 5, 2**63 - 1, 2**63, 2**64 - 5]
_EDGES += [2**64 - 1, -1, INT32_MIN, INT32_MIN - 1, -(2**63)]
_WIDE = [np.uint64, np.int64, np.uint32, np.int32]


def _edge_arrays(n: int, device):
    """``n`` edge integers as a NumPy array (or a ``wp.array``) of each dtype that holds them
    all, or as a list."""

    def build(p):
        values, dtype, as_wp = p
        info = np.iinfo(dtype)
        values = [min(max(v, int(info.min)), int(info.max)) for v in values]
        arr = np.array(values, dtype=dtype)
        if as_wp and dtype in (np.uint64, np.int64):
            return wp.array(arr, dtype=wp.uint64 if dtype is np.uint64 else wp.int64, device=device)
        return arr

    # a uint64 that wraps into int32 (2**64 - k reads as -k) among int32 values
    wrapping = st.integers(2**64 - 5, 2**64 - 1)
    edges = (
        st.sampled_from(_EDGES) | st.integers(-5, 5) | wrapping | st.integers(2**63 - 3, 2**63 + 3)
    )
    values = st.lists(edges, min_size=n, max_size=n)
    small_or_wrapping = st.lists(st.integers(-5, 5) | wrapping, min_size=n, max_size=n)
    return st.one_of(
        st.tuples(values, st.sampled_from(_WIDE), st.booleans()).map(build),
        st.tuples(small_or_wrapping, st.just(np.uint64), st.booleans()).map(build),
        values,
    )


@settings(max_examples=examples(80))
@given(data=st.data())
def test_int64_and_uint64_edge_seeds_are_stored_exactly_or_refused(seeded, device, data):
    owned, on_rng, rng = seeded(device)
    how = data.draw(st.sampled_from(["generate", "state.set", "rng.set", "rng.set ids"]))
    ids = data.draw(st.sampled_from([[0], [2, 0], [1, 2, 0]])) if how == "rng.set ids" else None
    idx = np.arange(E) if ids is None else np.asarray(ids)
    seeds = data.draw(_edge_arrays(idx.size, device), label="seeds")
    err, values = expected_seeds(seeds, idx)
    gen = owned if how in ("generate", "state.set") else on_rng
    state = gen.seeds
    expected = state.seeds.numpy().astype(np.int64)
    before = arrays_bytes(state.seeds, state.epochs)
    event(f"{how}: {err.__name__ if err else 'accepted'}")

    def call():
        if how == "generate":
            gen.generate(seeds=seeds)
        elif how == "state.set":
            state.set(seeds)
        else:
            rng.set_seeds_warp(seeds, ids=ids)

    if err is not None:
        with pytest.raises(err, match="int32"):
            call()
        assert arrays_bytes(state.seeds, state.epochs) == before, "a refused call changed seeds"
        return
    call()
    expected[idx] = values
    np.testing.assert_array_equal(state.seeds.numpy().astype(np.int64), expected)


@pytest.mark.parametrize(
    "value, dtype",
    [(v, np.uint64) for v in (2**64 - 5, 2**64 - 1, 2**63, 2**63 - 1, INT32_MAX + 1)]
    + [(v, np.int64) for v in (2**63 - 1, INT32_MAX + 1, INT32_MIN - 1, -(2**63))],
)
def test_a_seed_array_beyond_int32_never_wraps(value, dtype):
    """``2**64 - 5`` in a uint64 array is refused, not read as ``-5`` (an int64 wrap)."""
    from track_gen.core.checks import check_seed_values

    with pytest.raises(ValueError, match=str(value)):
        check_seed_values("seeds", np.array([value, 1, 2], dtype=dtype), 3)


# ------------------------------------------------------------------------------ known issues
@pytest.mark.parametrize(
    "seeds, ids",
    [({5: "a", 6: "b", 7: "c"}, None), ({9, 8, 7}, None), ([1, 2], {0: "x", 2: "y"})],
    ids=["seeds dict", "seeds set", "ids dict"],
)
def test_mapping_or_set_seeds_and_ids_are_refused(seeded, seeds, ids):
    _, _, rng = seeded("cpu")
    before = rng.seeds_warp.numpy().tobytes()
    try:
        rng.set_seeds_warp(seeds, ids=ids)
    except TypeError:
        pass
    assert rng.seeds_warp.numpy().tobytes() == before
