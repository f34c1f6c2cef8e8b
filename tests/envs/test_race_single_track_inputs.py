"""Hostile inputs of the single-track car: every VehicleSettings field (alone, as a mapping,
as a flat ``RaceConfig.vehicle_<field>`` keyword) fuzzed from its declaration, the new
RaceConfig fields (``unit``, ``vehicle``, ``dynamics``, ``generator``) and their rules
together, and accepted vehicles with any ``dt``: refused before anything is built, or driven
by hostile actions with every car state finite (the substeps keep every accepted vehicle
stable in float32).

Oracles: the declaration (kind, range, float32) of each field; the stability rule of the
linear single-track model, written here from its closed form (an oversteering vehicle,
``cornering_front > cornering_rear``, is unstable above ``v_crit^2 = mu g L Csf Csr / (Csf -
Csr)``); the unit rules of docs/training.md."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen import io
from track_gen.envs import RaceConfig, RaceEnv
from track_gen.envs.vehicles import F1TENTH, GT, VehicleSettings

from ..support.strategies import examples, expected_error, in_range, normalized, values

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

FIELDS = list(zip(VehicleSettings.__field_names__, VehicleSettings.__tunables__, strict=True))


def _unstable(v: dict) -> bool:
    """The closed form: the linear single-track model is unstable at max_speed iff it
    oversteers and its critical speed is below max_speed."""
    csf, csr = v["cornering_front"], v["cornering_rear"]
    if csf <= csr:
        return False
    crit2 = v["mu"] * 9.81 * (v["lf"] + v["lr"]) * csf * csr / (csf - csr)
    return crit2 <= v["max_speed"] ** 2 * (1 + 1e-9)


@pytest.mark.parametrize("name,t", FIELDS, ids=[n for n, _ in FIELDS])
@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_vehicle_fields_follow_their_declarations(name, t, data):
    """Each field alone on the GT (and on the F1TENTH car): refused naming the field, or
    stored as a Python float; the same through RaceConfig's mapping and flat keyword."""
    base = data.draw(st.sampled_from([GT, F1TENTH]), label="base")
    value = data.draw(values(t, None), label=name)
    err = expected_error(t, value, None)
    fields = {n: getattr(base, n) for n, _ in FIELDS}
    if err is None:
        fields[name] = normalized(t, value)
        err = ValueError if _unstable(fields) else None
    event(f"{name}: {err.__name__ if err else 'accepted'}")
    if err is not None:
        match = rf"VehicleSettings(\.{name}\b|: the single-track model)"
        with pytest.raises(err, match=match):
            base.replace(**{name: value})
        flat = rf"(RaceConfig\.vehicle_{name}\b|VehicleSettings: the single-track model)"
        with pytest.raises(err, match=flat):
            RaceConfig.for_vehicle(base, dynamics="kinematic", **{f"vehicle_{name}": value})
        return
    got = base.replace(**{name: value})
    assert getattr(got, name) == normalized(t, value) and type(getattr(got, name)) is float
    config = RaceConfig.for_vehicle(base, dynamics="kinematic", **{f"vehicle_{name}": value})
    assert getattr(config, f"vehicle_{name}") == getattr(got, name)


@settings(max_examples=examples(40), deadline=None)
@given(
    unit=st.sampled_from(["track units", "m", "metres", None, 1, "M"]),
    generator=st.sampled_from(["bezier", "circuit", "polar", "Circuit"]),
    dynamics=st.sampled_from(["kinematic", "single_track", "dynamic", None]),
    vehicle=st.sampled_from(["gt", "f1tenth", "kart", GT, F1TENTH, {"mass": 800.0}, 3, None]),
)
def test_unit_generator_dynamics_and_vehicle_together(unit, generator, dynamics, vehicle):
    """The new fields' kinds and choices first (TypeError / ValueError naming the field),
    then the rules between them: circuits and the single-track car are metre-only, a metre
    config draws circuits."""
    kw = {"unit": unit, "generator": generator, "dynamics": dynamics, "vehicle": vehicle}
    err, field = None, None
    if isinstance(vehicle, str) and vehicle not in ("gt", "f1tenth"):
        err, field = ValueError, "vehicle"  # a preset's name is read first
    generators = RaceConfig.__dataclass_fields__["generator"].metadata["tunable"].choices
    # then every field in declaration order: generator, unit, vehicle, dynamics
    for name, choices in (
        ("generator", generators),
        ("unit", ("track units", "m")),
        ("vehicle", None),
        ("dynamics", ("kinematic", "single_track")),
    ):
        if err is not None:
            break
        if choices is None:
            if not isinstance(vehicle, (str, dict, VehicleSettings)):
                err, field = TypeError, name
        elif not isinstance(kw[name], str):
            err, field = TypeError, name
        elif kw[name] not in choices:
            err, field = ValueError, name
    if err is None:
        metres = unit == "m"
        if (generator == "circuit") != metres or (dynamics == "single_track" and not metres):
            err = ValueError
            field = "generator" if (generator == "circuit") != metres else "dynamics"
            if metres and generator != "circuit":
                field = "unit"
    event(f"{err.__name__ if err else 'accepted'} {field}")
    if err is not None:
        with pytest.raises(err, match=rf"RaceConfig\.{field}\b"):
            RaceConfig(**kw)
        return
    c = RaceConfig(**kw)
    expect = {"gt": GT, "f1tenth": F1TENTH}.get(vehicle, vehicle)
    if isinstance(vehicle, dict):
        expect = VehicleSettings(**vehicle)
    assert c.vehicle == expect
    assert c.state_dim == 8 + 2 * len(c.lookahead) + (2 if dynamics == "single_track" else 0)


def _wide_circle_spec(E: int):
    t = np.linspace(0.0, 2.0 * np.pi, 48, endpoint=False)
    r = 5000.0
    xy = np.column_stack([r * np.sin(t), r - r * np.cos(t)])
    w = np.full(48, 1500.0)
    return io.tracks_spec([io.RealTrack("field", xy, w, w)], num_envs=E, units="metres")


def _vehicle_fields():
    return st.fixed_dictionaries({n: in_range(t, None).map(float) for n, t in FIELDS})


@settings(max_examples=examples(25), deadline=None)
@given(
    fields=_vehicle_fields(),
    dt=st.one_of(st.sampled_from([1e-6, 0.001, 0.05, 0.1, 0.5, 1.0]), st.floats(1e-6, 1.0)),
    seed=st.integers(0, 2**16),
)
def test_accepted_vehicles_stay_finite_under_hostile_actions(fields, dt, seed):
    """Any accepted vehicle and step: RaceConfig refuses it (an unstable vehicle, or a step
    that needs more than 64 substeps, naming the field), or 30 steps of hostile actions
    (full-range bangs, NaN, inf) keep every car state finite, the speed in [0, max_speed]
    and the observation finite."""
    E = 6
    try:
        vehicle = VehicleSettings(**fields)
    except ValueError as e:
        assert _unstable(fields) and "VehicleSettings: the single-track model" in str(e)
        event("unstable vehicle refused")
        return
    try:
        config = RaceConfig.for_vehicle(
            vehicle, dt=dt, max_episode_steps=10**6, checkpoint_spacing=100.0
        )
    except ValueError as e:
        assert "RaceConfig.dt = " in str(e) and "substeps" in str(e)
        event("dt refused: too many substeps")
        return
    event(f"driven with {config.car.substeps} substep(s)")
    env = RaceEnv(E, seeds=0, config=config, spec=_wide_circle_spec(E), new_course_on_reset=False)
    rng = np.random.default_rng(seed)
    for _ in range(30):
        a = rng.choice([-1.0, 1.0, 0.0, 5.0, -1e30, np.nan, np.inf, 0.3], size=(E, 2))
        env.step(wp.array(a.astype(np.float32), device=env.device))
        for arr in (env.position, env.yaw, env.lateral_speed, env.yaw_rate, env.steer, env.obs):
            assert np.isfinite(arr.numpy()).all()
        speed = env.speed.numpy()
        assert np.all((speed >= 0.0) & (speed <= np.float32(vehicle.max_speed)))
        assert np.all(np.abs(env.steer.numpy()) <= np.float32(vehicle.max_steer) * (1 + 1e-6))


@settings(max_examples=examples(30), deadline=None)
@given(
    kind=st.sampled_from(["gt", "f1tenth"]),
    overrides=st.fixed_dictionaries(
        {},
        optional={
            "dt": st.sampled_from([0.0, -0.1, math.nan, 2.0, 0.02, "0.1"]),
            "lookahead": st.sampled_from([(), (1e5,), (5.0, 10.0), "far"]),
            "spawn_back": st.sampled_from([0.0, 2000.0, 3.0]),
        },
    ),
)
def test_for_vehicle_fields_are_checked(kind, overrides):
    """``RaceConfig.for_vehicle``'s derived values are RaceConfig fields like any other: an
    override out of range is refused naming it; otherwise it wins over the derived value."""
    bad = {
        "dt": lambda v: isinstance(v, str) or not (1e-6 <= v <= 1.0),
        "lookahead": lambda v: isinstance(v, str) or not v or max(v) > 1e4,
        "spawn_back": lambda v: not (1e-6 <= v <= 1000.0),
    }
    wrong = [k for k, v in overrides.items() if bad[k](v)]
    if wrong:
        with pytest.raises((TypeError, ValueError), match=r"RaceConfig\.(dt|lookahead|spawn_back)"):
            RaceConfig.for_vehicle(kind, **overrides)
        return
    c = RaceConfig.for_vehicle(kind, **overrides)
    for k, v in overrides.items():
        assert getattr(c, k) == (tuple(v) if isinstance(v, tuple) else v)
