"""TrackGenConfig validation: errors name the field, the value and the allowed range."""

from __future__ import annotations

import dataclasses

import pytest

from track_gen import TrackGenConfig


def test_defaults():
    c = TrackGenConfig()
    assert c.half_width == 0.1 and c.N_max == 384 and c.generator == "bezier"
    assert c.device is None
    assert c.resolved_spacing == pytest.approx(0.06)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.half_width = 0.2


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("num_envs", 0, r"num_envs = 0 .*>= 1"),
        ("half_width", 0.0, r"half_width = 0.0 .*>= 1e-06"),
        ("half_width", float("nan"), r"half_width = nan .*finite"),
        ("spacing", -1.0, r"spacing = -1.0 .*>= 1e-06"),
        ("N_max", 4, r"N_max = 4 .*>= 8"),
        ("max_corners", 5, r"max_corners = 5 .*>= min_corners = 9"),
        ("min_point_distance", 0.6, r"min_point_distance = 0.6 .*<= 0.5"),
        ("min_point_distance", 0.2, r"min_point_distance = 0.2 .*grid cells"),
        ("polar_radial_jitter", 0.9, r"polar_radial_jitter = 0.9 .*<= 0.85"),
        ("relax_accel", "fast", r"relax_accel = 'fast' .*chebyshev"),
        ("relax_cheby_rho", 1.0, r"relax_cheby_rho = 1.0 .*< 1.0"),
        ("relax_sep_cache_slots", 65, r"relax_sep_cache_slots = 65 .*<= 64"),
        ("turning_tol", 0.0, r"turning_tol = 0.0 .*> 0"),
    ],
)
def test_out_of_range_values_name_field_value_and_range(field, value, match):
    with pytest.raises(ValueError, match=match) as info:
        TrackGenConfig(**{field: value})
    assert f"TrackGenConfig.{field}" in str(info.value)


@pytest.mark.parametrize(
    "field, value",
    [("num_envs", 2.5), ("num_envs", True), ("half_width", "0.1"), ("relax_enable", 1)],
)
def test_wrong_types_raise_type_error(field, value):
    with pytest.raises(TypeError, match=field):
        TrackGenConfig(**{field: value})


def test_replace_revalidates():
    with pytest.raises(ValueError, match="half_width"):
        TrackGenConfig().replace(half_width=-1.0)
