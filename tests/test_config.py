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
        ("turning_tol", 0.0, r"turning_tol = 0.0 .*>= 1e-06"),
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


# ------------------------------------------------------------ aliases, floats, narrowed ranges
def _tunable():
    from track_gen.core.tunable import Tunable, config_class

    return Tunable, config_class


def test_a_config_class_names_a_field_by_its_alias_for_the_class():
    Tunable, config_class = _tunable()
    width = Tunable("width", 1.0, lo=0.0, hi=2.0, aliases={"Box": "box_width"}, doc="w.")
    Box = config_class("Box", [("Size", "", (width,))])
    assert Box().box_width == 1.0 and width.keyword("Box") == "box_width"
    assert width.keyword("Other") == "width"
    with pytest.raises(ValueError, match=r"Box\.box_width = 3 is out of range"):
        Box(box_width=3)
    with pytest.raises(TypeError, match="no field 'width'"):
        Box(width=1.0)


def test_floats_kind_checks_count_kind_and_each_value():
    Tunable, config_class = _tunable()
    pair = Tunable("pair", (0.5, 0.5), kind="floats", length=(2, 2), lo=1e-6, hi=1.0)
    assert pair.check([0.25, 1], "pair") == (0.25, 1.0)
    with pytest.raises(TypeError, match="pair must be a tuple of 2 numbers"):
        pair.check("ab", "pair")
    with pytest.raises(ValueError, match="pair must hold 2 numbers, got 3"):
        pair.check((0.1, 0.2, 0.3), "pair")
    with pytest.raises(ValueError, match=r"pair\[1\] = 0.0 is out of range: must be >= 1e-06"):
        pair.check((0.1, 0.0), "pair")
    with pytest.raises(TypeError, match=r"pair\[0\] must be a number"):
        pair.check((None, 0.2), "pair")
    with pytest.raises(ValueError, match="length"):
        Tunable("bad", (1.0,), kind="floats", lo=0.0, hi=1.0)


def test_narrow_checks_the_declaration_first_then_the_class_range():
    Tunable, config_class = _tunable()
    gap = Tunable("gap", None, kind="float", lo=1.0, hi=1e6, doc="g.")
    Cfg = config_class(
        "Cfg", [("G", "", (gap,))], defaults={"gap": 2.0}, narrow={"gap": {"hi": 10.0}}
    )
    assert Cfg().gap == 2.0 and Cfg(gap=10).gap == 10.0
    with pytest.raises(
        ValueError, match=r"Cfg\.gap = 0.5 is out of range: must be >= 1.0 and <= 1000000.0"
    ):
        Cfg(gap=0.5)
    with pytest.raises(
        ValueError, match=r"Cfg\.gap = 11.0 is out of range: must be >= 1.0 and <= 10.0"
    ):
        Cfg(gap=11.0)
    assert gap.hi == 1e6  # the declaration keeps its range
    assert "<= 10.0" in Cfg.__doc__


def test_race_config_reuses_the_checkpoints_spacing_declaration():
    from track_gen.envs import RaceConfig
    from track_gen.tools.checkpoints import SPACING

    by_name = dict(zip(RaceConfig.__field_names__, RaceConfig.__tunables__, strict=True))
    assert by_name["checkpoint_spacing"] is SPACING
    assert RaceConfig().checkpoint_spacing == 0.6
    with pytest.raises(ValueError, match=r"checkpoint_spacing = 100.5 is out of range"):
        RaceConfig(checkpoint_spacing=100.5)
