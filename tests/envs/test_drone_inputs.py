"""DroneConfig and DroneRaceEnv inputs, fuzzed from the declarations: every field refused
naming ``DroneConfig.<field>`` (its declaration's range, then the rules between fields), or
accepted and then flown: an env of an accepted config keeps every observation column and
reward finite.

Oracles: tests/support/strategies.py (``expected_error`` from each Tunable); the rules
between fields are DroneConfig's documented ones (``drone_config.check_rules``), asserted to
name a DroneConfig field."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from track_gen.envs import DroneConfig, DroneRaceEnv, drone_config, fly_drones

from ..support.strategies import examples, expected_error, normalized, values

pytestmark = pytest.mark.fuzz

#: The drone's own fields (the observation's are the env base's, fuzzed with RaceConfig's).
OWN = [
    (name, t)
    for name, t in zip(DroneConfig.__field_names__, DroneConfig.__tunables__, strict=True)
    if t.kind in ("int", "float", "floats", "bool", "choice")
]


def _build(kwargs):
    try:
        return DroneConfig(**kwargs), None
    except (TypeError, ValueError) as exc:
        return None, exc


@pytest.mark.filterwarnings("ignore:overflow encountered in nextafter")
@pytest.mark.parametrize("name,t", OWN, ids=lambda v: getattr(v, "name", v))
@settings(max_examples=examples(30), deadline=None)
@given(data=st.data())
def test_drone_config_fields_follow_their_declarations(name, t, data):
    """A value the declaration refuses is refused naming the field (TypeError for a wrong
    kind, ValueError out of range); one it accepts is stored, or refused by a documented rule
    between fields, naming a DroneConfig field."""
    if t.kind == "floats":
        element = dataclasses.replace(t, kind="float", default=None, optional=False, length=(0, 0))
        items = data.draw(st.lists(values(element, None), min_size=2, max_size=4), label=name)
        value = tuple(items)
        if len(value) != 3:
            err = ValueError
        else:
            err = next((e for e in (expected_error(element, v, None) for v in value) if e), None)
    elif t.kind == "bool":
        value = data.draw(st.sampled_from([True, False, 0, 1, "yes", None, 1.0]), label=name)
        err = None if isinstance(value, bool) else TypeError
    else:
        value = data.draw(values(t, None), label=name)
        err = expected_error(t, value, None)
    event(f"{name}: {err.__name__ if err else 'declared ok'}")
    config, exc = _build({name: value})
    if err is not None:
        assert isinstance(exc, err), (value, exc)
        assert f"DroneConfig.{name}" in str(exc)
        return
    if exc is not None:  # a rule between fields (thrust vs gravity, z_min vs the gate, ...)
        assert isinstance(exc, ValueError) and "DroneConfig." in str(exc), exc
        event(f"{name}: refused by a rule")
        return
    got = getattr(config, name)
    want = tuple(float(v) for v in value) if t.kind == "floats" else normalized(t, value)
    assert got == want


def _in_range(t):
    lo, hi = t.lo, t.hi
    if t.kind == "int":
        return st.integers(int(lo), int(min(hi, lo + 6)))
    if t.kind == "float":
        return st.sampled_from([float(lo), float(hi), float(t.default)])
    if t.kind == "floats":
        return st.sampled_from([(float(lo),) * 3, (float(hi),) * 3, tuple(t.default)])
    if t.kind == "choice":
        return st.sampled_from(t.choices)
    return st.booleans()


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_accepted_extremes_fly_finite(data):
    """Configs of extreme accepted values (each field at its bound or default, the rest the
    Crazyflie's): an env of 2 builds, its dynamics and every column stay finite for any
    actions (NaN and inf included), and the reward is finite."""
    picked = data.draw(st.lists(st.sampled_from(OWN), min_size=1, max_size=4, unique=True))
    kwargs = {name: data.draw(_in_range(t), label=name) for name, t in picked}
    try:
        config = drone_config("crazyflie", **kwargs)
    except ValueError as exc:  # a documented rule between fields
        assert "DroneConfig." in str(exc)
        return
    env = DroneRaceEnv(2, "cpu", 0, config=config)
    acts = data.draw(
        st.lists(
            st.lists(
                st.sampled_from([0.0, 1.0, -1.0, 0.3, np.nan, np.inf, -np.inf, 1e30]),
                min_size=4,
                max_size=4,
            ),
            min_size=2,
            max_size=2,
        )
    )
    a = wp.array(np.array(acts, np.float32), dtype=wp.float32, device="cpu")
    for _ in range(5):
        env.step(a)
        assert np.isfinite(env.obs.numpy()).all()
        assert np.isfinite(env.reward.numpy()).all()
    state = [env.position, env.velocity, env.orientation, env.rates, env.thrust]
    fly_drones(config, a, *state)
    ok = env.outputs.ok.numpy() != 0
    assert np.isfinite(env.position.numpy()[ok]).all()
