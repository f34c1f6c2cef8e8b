"""Observation terms (``track_gen.tools.terms``) and how an env assembles them: a toy sensor
in one folder (``examples/sensor_start_gap``) plus one registration line becomes an
observation of a RaceEnv, eager == recorded; the registry's refusals."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import warp as wp

from track_gen import tools
from track_gen.envs import RaceConfig, RaceEnv

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "sensor_start_gap"
TOY = "acme.start_gap"


def _load_toy():
    """The toy sensor's folder, imported as the package ``sensor_start_gap``."""
    if "sensor_start_gap" in sys.modules:
        return sys.modules["sensor_start_gap"]
    spec = importlib.util.spec_from_file_location(
        "sensor_start_gap", FOLDER / "__init__.py", submodule_search_locations=[str(FOLDER)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["sensor_start_gap"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def toy():
    module = _load_toy()
    added = TOY not in tools.observation_terms()
    if added:
        tools.register_term(module.StartGapTerm())  # the one line
    yield module
    if added and TOY in tools.observation_terms():
        tools.unregister_term(TOY)  # no term leaks into another test of this worker


def test_a_toy_sensor_is_observed_after_one_registration_line(toy):
    config = RaceConfig(observations=("state", TOY, "lidar"), lidar_num_beams=4)
    assert config.sensor_dims == {TOY: 2, "lidar": 4}
    assert config.term_settings(TOY) == toy.StartGapSettings()  # not a field: its defaults
    E = 4
    eager = RaceEnv(E, "cpu", 3, config=config)
    graph = RaceEnv(E, "cpu", 3, config=config, captured=True)
    assert eager.term_slices() == {"state": (0, 18), TOY: (18, 20), "lidar": (20, 24)}
    assert eager.term_bounds(TOY) == (-1.0, 1.0)
    assert TOY in eager.course.components and isinstance(eager.sensors[TOY], toy.StartGapResult)
    rng = np.random.default_rng(1)
    for t in range(30):
        actions = wp.array(rng.uniform(-1, 1, (E, 2)).astype(np.float32), device="cpu")
        graph.obs.fill_(np.nan)  # poisoned: a stale column cannot pass
        eager.step(actions)
        graph.step(actions)
        for name in ("obs", "final_obs", "reward", "done"):
            a, b = getattr(eager, name).numpy(), getattr(graph, name).numpy()
            assert a.tobytes() == b.tobytes(), (t, name)
        cols = eager.obs.numpy()[:, 18:20]
        assert np.isfinite(cols).all() and (np.abs(cols) <= 1.0).all()


def test_a_term_reads_its_own_settings_and_the_env_context():
    lidar = tools.observation_term("lidar")
    assert lidar.default_settings() == tools.LidarSettings(num_beams=64)
    ctx = tools.TermContext(observed=("raster", "cones"), speed_scale=0.5)
    raster = tools.observation_term("raster")
    assert raster.dim(raster.default_settings(), ctx) == 3 * 16 * 16
    ctx = tools.TermContext(observed=("raster",), speed_scale=0.5)
    assert raster.dim(raster.default_settings(), ctx) == 2 * 16 * 16
    look = tools.observation_term("lookahead")
    assert look.field == "lookahead_points"  # RaceConfig.lookahead: the car's distances
    on_line = tools.LookaheadSettings(num_points=3, spacing=0.1, source="racing_line")
    assert look.needs_racing_line(on_line) and look.dim(on_line, ctx) == 18


class _NoSettings(tools.ObservationTerm):
    name = "acme.none"
    settings = int

    def components(self, settings, ctx):
        return []

    def dim(self, settings, ctx):
        return 1

    def write(self, settings, ctx, res, col, mask, write_final, out):
        return None


def test_register_term_refuses_before_anything_changes():
    before = tools.observation_terms()
    with pytest.raises(TypeError, match="ObservationTerm"):
        tools.register_term("lidar")
    with pytest.raises(ValueError, match="already registered"):
        tools.register_term(tools.observation_term("lidar"))
    for bad in ("Acme.sonar", "acme..sonar", "", "acme sonar"):
        term = _NoSettings()
        term.name = bad
        with pytest.raises(ValueError, match="lowercase identifier"):
            tools.register_term(term)
    with pytest.raises(TypeError, match="settings must be a config_class"):
        tools.register_term(_NoSettings())
    with pytest.raises(TypeError, match="abstract"):
        tools.ObservationTerm()
    assert tools.observation_terms() == before
    with pytest.raises(ValueError, match="not a registered observation term.*lidar"):
        tools.observation_term("sonar")
    with pytest.raises(ValueError, match="not a registered observation term"):
        tools.unregister_term("sonar")


def test_unregister_removes_a_term_and_keeps_configs_made_with_it(toy):
    config = RaceConfig(observations=("state", TOY))
    term = tools.unregister_term(TOY)
    try:
        assert TOY not in tools.observation_terms()
        with pytest.raises(ValueError, match=r"\['acme.start_gap'\] is not an observation"):
            RaceConfig(observations=("state", TOY))
        assert config.observations == ("state", TOY)
    finally:
        tools.register_term(term)
