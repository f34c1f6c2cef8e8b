"""``Program.time_stages(enable)``: the per-stage timer's one input.

``True`` / ``False`` (NumPy bools included) are accepted; every other object is a TypeError
naming ``enable`` that leaves the timer as it was (on or off) and changes no output byte of
the next regeneration.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen import TrackGenConfig, TrackGenerator

from ..support.strategies import examples, other_objects

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 2


@pytest.fixture(scope="module")
def gen():
    return TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device="cpu"), seeds=5)


def _bytes(g) -> bytes:
    g.generate()
    return g.result.center.numpy().tobytes() + g.result.valid.numpy().tobytes()


@settings(max_examples=examples(40), deadline=None)
@given(
    start_on=st.booleans(),
    value=st.one_of(
        st.sampled_from([True, False, np.bool_(True), np.bool_(False)]),
        st.sampled_from(other_objects(E)),
        st.integers(),
        st.floats(allow_nan=True),
        st.text(max_size=4),
    ),
)
def test_enable_is_a_bool_or_refused_cleanly(gen, start_on, value):
    gen.time_stages(start_on)
    before_timer = gen.stage_timer
    before = _bytes(gen)
    is_bool = isinstance(value, (bool, np.bool_))
    if is_bool:
        out = gen.time_stages(value)
        assert (out is None) == (not bool(value))
        assert gen.stage_timer is out
    else:
        with pytest.raises(TypeError, match="enable"):
            gen.time_stages(value)
        assert gen.stage_timer is before_timer
    assert _bytes(gen) == before
