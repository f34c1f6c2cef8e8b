"""One regression test per input known to have crashed, hung or answered silently wrong before
the Tunable refactor, and per problem the fuzz suite (`pytest -m fuzz`) found since. Inputs that
could kill the interpreter run in a subprocess; the rest run in-process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import warp as wp

from track_gen import (
    FailBit,
    GateGenConfig,
    GateGenerator,
    PerEnvSeededRNG,
    TrackGenConfig,
    TrackGenerator,
)
from track_gen.course import Course
from track_gen.pipeline import (
    PipelineSpec,
    Registry,
    Stage,
    StageSpec,
    default_registry,
    presets,
    register,
)
from track_gen.tools import BandCollisionUtility, Checkpoints

from .support.invariants import check_gates, check_track, result_bytes

ROOT = Path(__file__).resolve().parents[1]
E = 3
PARAM_RANGE = int(FailBit.PARAM_RANGE)
TIMEOUT = 300.0  # seconds, every wait of the threading tests: a hang guard, generous for a
# loaded CI machine (each wait ends on its event)


def small(device, **kw) -> TrackGenConfig:
    return TrackGenConfig(num_envs=E, device=device, num_points=64, **kw)


def run_isolated(code: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter at the repository root (a crash kills only it)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


# ------------------------------------------------------------------------------ config values
@pytest.mark.parametrize(
    "field, value",
    [
        ("scale", 3e7),
        ("spacing", 1e-9),
        ("half_width", 1e-9),
        ("relax_sep_every", 2**32),
        ("min_point_distance", 1e-30),
        ("relax_smooth_passes", 10**9),
        ("relax_smooth_passes", 2**32 + 1),
        ("relax_iters", 10**9),
    ],
)
def test_config_value_that_used_to_hang_or_wrap_is_refused_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        TrackGenConfig(**{field: value})


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("N_max", 65536, "<= 4096"),  # a filled loop costs O(N_max^2) per env
        ("N_max", 16384, "<= 4096"),  # 8 s per env: above the one-second work bound
        ("relax_iters", 10000, "bead-sweeps"),  # x N_max 384: 3.8e6, above 2**20
        ("num_points", 16385, "<= 16384"),
        ("relax_band", 65536, "<= 4096"),
        ("scale", 10**400, "beyond the float64 range"),  # not OverflowError
        ("scale", 1e-50, "must be >= 1e-06"),  # was > 0 as float64, 0 on the device
        ("turning_tol", 5e-324, "must be >= 1e-06"),
        ("thickness_tol", 1e-50, "must be 0 or a normal float32"),  # 0 in float32
        ("generator", "", "non-empty str"),  # the right kind (str), a wrong value
        ("scale", float("nan"), "must be finite, >= 1e-06 and <= 1000000.0"),
        ("scale", float("inf"), "must be finite, >= 1e-06 and <= 1000000.0"),
        ("half_width", float("-inf"), "must be finite, >= 1e-06 and <= 1000000.0"),
    ],
)
def test_config_value_found_by_fuzzing_is_a_value_error_stating_the_range(field, value, message):
    with pytest.raises(ValueError, match=field) as info:
        TrackGenConfig(**{field: value})
    assert message in str(info.value)


def test_nan_param_write_message_states_the_range(device):
    gen = TrackGenerator(small(device), seeds=1)
    with pytest.raises(ValueError, match="must be finite, >= 1e-06 and <= 1000000.0"):
        gen.params["bezier.scale"] = float("nan")
    with pytest.raises(ValueError, match="must be a finite float32.*>= 1e-06 and <= 1000000.0"):
        gen.params["bezier.scale"] = [1.0, float("nan"), 1.0]


def test_huge_batch_is_refused_before_allocating():
    cfg = TrackGenConfig(num_envs=2**24, N_max=4096, device="cpu")  # the largest of each
    start = time.perf_counter()
    with pytest.raises(ValueError, match="int32|budget"):
        TrackGenerator(cfg)
    assert time.perf_counter() - start < 5.0


def test_numpy_scalars_are_accepted_as_python_values(device):
    cfg = TrackGenConfig(num_envs=np.int64(4), half_width=np.float32(0.1), device=device)
    assert type(cfg.num_envs) is int and cfg.num_envs == 4
    assert type(cfg.half_width) is float and cfg.half_width == float(np.float32(0.1))
    gen = TrackGenerator(cfg.replace(num_points=64), seeds=1)
    gen.generate(advance=np.bool_(True))
    np.testing.assert_array_equal(gen.seeds.epochs.numpy(), 1)
    check_track(gen.result)


# ------------------------------------------------------------------------------ user centerline
def test_user_centerline_of_huge_coordinates_is_invalid_not_a_crash(device):
    proc = run_isolated(
        f"""
        import json
        import numpy as np
        import warp as wp
        wp.config.log_level = wp.LOG_WARNING
        from track_gen import TrackGenConfig, TrackGenerator
        from tests.support.invariants import check_track

        gen = TrackGenerator(
            TrackGenConfig(generator="centerline", num_envs=2, device={str(device)!r},
                           num_points=64),
            seeds=1,
        )
        th = np.linspace(0.0, 2.0 * np.pi, 64, endpoint=False)
        circle = np.stack([np.cos(th), np.sin(th)], 1)
        xy = np.concatenate([circle * 1e8, circle * 1e38]).astype(np.float32)
        gen.inputs["centerline.xy"].assign(xy)
        for _ in range(2):
            out = check_track(gen.generate())
        print(json.dumps({{k: v.tolist() for k, v in out.items()}}))
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["valid"] == [0, 0]
    assert out["fail"][0] & int(FailBit.TRUNCATED)
    assert out["fail"][1] & int(FailBit.TRUNCATED | FailBit.DEGENERATE | FailBit.NONFINITE)


# ------------------------------------------------------------------------------ seeds
@pytest.mark.parametrize(
    "seeds, err",
    [
        ([1.9, float("nan"), 2**40 + 5], TypeError),
        ([1.9, 2, 3], TypeError),
        ([float("nan"), 2, 3], TypeError),
        ([1, 2, 2**40 + 5], ValueError),
    ],
)
def test_bad_seeds_after_construction_are_refused_and_change_nothing(device, seeds, err):
    gen = TrackGenerator(small(device), seeds=1)
    gen.generate(advance=True)
    rng = PerEnvSeededRNG(10, E, device)
    on_rng = TrackGenerator(small(device), seeds=rng)
    for state, call in (
        (gen.seeds, lambda: gen.seeds.set(seeds)),
        (gen.seeds, lambda: gen.generate(seeds=seeds)),
        (on_rng.seeds, lambda: rng.set_seeds_warp(seeds)),
        (on_rng.seeds, lambda: on_rng.generate(seeds=seeds)),
    ):
        before = state.seeds.numpy().tobytes() + state.epochs.numpy().tobytes()
        with pytest.raises(err):
            call()
        assert state.seeds.numpy().tobytes() + state.epochs.numpy().tobytes() == before


def test_seed_2_pow_32_is_refused_not_wrapped_to_0(device):
    with pytest.raises(ValueError, match="int32"):
        TrackGenerator(small(device), seeds=2**32)
    with pytest.raises(ValueError, match="int32"):
        PerEnvSeededRNG(2**32, E, device)
    gen = TrackGenerator(small(device), seeds=1)
    with pytest.raises(ValueError, match="int32"):
        gen.generate(seeds=2**32)
    np.testing.assert_array_equal(gen.seeds.seeds.numpy(), 1 + np.arange(E))


def test_float_ids_in_set_seeds_warp_are_a_type_error(device):
    rng = PerEnvSeededRNG(3, E, device)
    with pytest.raises(TypeError, match="ids"):
        rng.set_seeds_warp([7, 8], ids=[0.0, 1.0])
    np.testing.assert_array_equal(rng.seeds_warp.numpy(), 3 + np.arange(E))


def test_seed_state_of_a_live_generator_is_refused(device):
    first = TrackGenerator(small(device), seeds=1)
    with pytest.raises(ValueError, match="SeedState"):
        TrackGenerator(small(device), seeds=first.seeds)


# ------------------------------------------------------------------------------ params
def test_nan_array_write_to_turning_tol_is_refused_and_writes_nothing(device):
    gen = TrackGenerator(small(device), seeds=1)
    before = gen.params.block.numpy().tobytes()
    nan = wp.array(np.full(E, np.nan, np.float32), dtype=wp.float32, device=device)
    with pytest.raises(ValueError, match="turning_tol"):
        gen.params["validate.turning_tol"] = nan
    assert gen.params.block.numpy().tobytes() == before


def test_nan_written_into_the_params_array_marks_the_env_param_range(device):
    gen = TrackGenerator(small(device), seeds=1)
    host = gen.params["validate.turning_tol"].numpy()
    host[1] = np.nan
    gen.params["validate.turning_tol"].assign(host)  # directly: no host check
    out = check_track(gen.generate())
    assert out["valid"][1] == 0 and out["fail"][1] & PARAM_RANGE
    assert not (out["fail"][[0, 2]] & PARAM_RANGE).any()
    gen.params["validate.turning_tol"].fill_(float("nan"))
    out = check_track(gen.generate())
    assert (out["fail"] & PARAM_RANGE).all() and not out["valid"].any()


def test_gate_width_writes_are_refused_or_marked_never_valid(device):
    cfg = GateGenConfig(num_envs=E, device=device, num_points=64, gate_width=0.1)
    gen = GateGenerator(cfg, seeds=1)
    gen.generate()
    name = "gate_frames.gate_width"
    for value in (-1, 0, -1.0, 0.0):
        before = gen.params.block.numpy().tobytes()
        with pytest.raises(ValueError, match="gate_width"):
            gen.params[name] = value
        assert gen.params.block.numpy().tobytes() == before
    for value in (1e20, -1.0):
        gen.params[name].fill_(value)
        out = check_gates(gen.generate(advance=True), cfg.min_gates)
        assert not out["valid"].any() and (out["fail"] & PARAM_RANGE).all(), value


# ------------------------------------------------------------------------------ stages
def test_unknown_stage_option_is_refused():
    """An unknown option is refused when the spec is made (before any build)."""
    with pytest.raises(ValueError, match="unknown option.*radd.*accepted options"):
        PipelineSpec(
            small("cpu"),
            (
                StageSpec("bezier", options={"radd": 0.3}),
                StageSpec("resample"),
                StageSpec("inflate"),
                StageSpec("validate"),
            ),
        )


class _Noop(Stage):
    role = "process"

    def enqueue(self, ws, params):
        pass


def test_register_refuses_a_non_bool_capturable():
    with pytest.raises(TypeError, match="capturable"):
        Registry().register("acme.x", _Noop, capturable="no")
    try:
        with pytest.raises(TypeError, match="capturable"):
            register("acme.x", _Noop, capturable="no")
    finally:
        if "acme.x" in default_registry():
            default_registry().unregister("acme.x")
            pytest.fail("register() registered acme.x despite capturable='no'")


def _plugin_pipeline(device, kind: str, cls, **cfg):
    """bezier -> resample -> <plugin> -> inflate -> validate, on a fresh registry."""
    reg = Registry()
    reg.register(kind, cls, capturable=False)  # eager: the plugin's enqueue runs every call
    stages = ("bezier", "resample", kind, "inflate", "validate")
    spec = PipelineSpec(small(device, **cfg), tuple(StageSpec(k) for k in stages))
    return TrackGenerator(spec, registry=reg, seeds=1)


class _Boom(Stage):
    """Raises in enqueue while armed (after the sampler and resample ran)."""

    role = "process"
    armed = False

    def enqueue(self, ws, params):
        if type(self).armed:
            raise RuntimeError("boom")


@pytest.fixture
def boom():
    cls = type("Boom", (_Boom,), {"armed": False})
    yield cls
    cls.armed = False


def _everything(gen) -> bytes:
    return (
        result_bytes(gen.result)
        + gen.seeds.seeds.numpy().tobytes()
        + gen.seeds.epochs.numpy().tobytes()
    )


def test_stage_raising_mid_generation_leaves_result_and_epochs_unchanged(device, boom):
    gen = _plugin_pipeline(device, "test.boom", boom)
    gen.generate()
    gen.generate(advance=True)
    before = _everything(gen)
    generation = gen.result.generation.numpy().copy()
    boom.armed = True
    mask = gen.inputs["regen_mask"]
    mask.assign(np.array([1, 0, 1], np.int32))
    for call in (
        lambda: gen.generate(advance=True),
        lambda: gen.generate(),
        lambda: gen.generate(advance=True, mask=mask),
        lambda: gen.enqueue(advance=True),
    ):
        with pytest.raises(RuntimeError, match="boom"):
            call()
        assert _everything(gen) == before
        np.testing.assert_array_equal(gen.result.generation.numpy(), generation)
    boom.armed = False
    gen.generate(advance=True)
    np.testing.assert_array_equal(gen.seeds.epochs.numpy(), generation + 1)
    check_track(gen.result)


def test_generate_with_seeds_restores_seeds_and_epochs_when_a_stage_raises(device, boom):
    gen = _plugin_pipeline(device, "test.boom", boom)
    gen.generate(advance=True)
    gen.generate(advance=True)
    before = _everything(gen)
    boom.armed = True
    with pytest.raises(RuntimeError, match="boom"):
        gen.generate(seeds=5)
    assert _everything(gen) == before
    np.testing.assert_array_equal(gen.seeds.seeds.numpy(), 1 + np.arange(E))
    np.testing.assert_array_equal(gen.seeds.epochs.numpy(), 2)


def test_generator_used_from_two_threads_refuses_the_second(device):
    entered, release = threading.Event(), threading.Event()

    class Hold(Stage):
        role = "process"
        hold = True

        def enqueue(self, ws, params):
            if Hold.hold:
                entered.set()
                if not release.wait(TIMEOUT):
                    raise RuntimeError("test: never released")

    gen = _plugin_pipeline(device, "test.hold", Hold)
    first, second = [], []

    def run(into, call):
        try:
            call()
            into.append(None)
        except BaseException as exc:  # noqa: BLE001 - reported by the asserts below
            into.append(exc)

    a = threading.Thread(target=run, args=(first, gen.generate), daemon=True)
    try:
        a.start()
        assert entered.wait(TIMEOUT), "the first generate never reached the plugin stage"
        b = threading.Thread(target=run, args=(second, gen.generate), daemon=True)
        b.start()
        b.join(TIMEOUT)
        assert not b.is_alive(), "the second thread blocked instead of raising"
        c = threading.Thread(
            target=run,
            args=(second, lambda: gen.params.__setitem__("bezier.rad", 0.3)),
            daemon=True,
        )
        c.start()
        c.join(TIMEOUT)
        assert not c.is_alive()
    finally:
        release.set()
        a.join(TIMEOUT)
    assert not a.is_alive() and first == [None], first
    assert len(second) == 2
    for exc in second:
        assert isinstance(exc, RuntimeError) and "another thread" in str(exc), exc
    Hold.hold = False
    gen.generate()  # usable again once the first call returned
    check_track(gen.result)


# ------------------------------------------------------------------------------ courses
def _course(device):
    return Course.track(
        presets.track(num_envs=E, device=device, num_points=64),
        checkpoint_spacing=0.6,
        collision="segments",
        seeds=1,
    )


def test_generator_driven_by_a_course_refuses_direct_calls(device):
    course = _course(device)
    before = _everything(course.generator)
    for call in (course.generator.generate, course.generator.enqueue):
        with pytest.raises(RuntimeError, match="Course"):
            call()
    assert _everything(course.generator) == before
    course.regenerate()  # through the course it works


def test_bind_on_a_course_taken_over_by_a_newer_one_raises(device):
    old = _course(device)
    Course(old.generator, [])
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    with pytest.raises(RuntimeError, match="another Course"):
        old.bind(position=pos)
    with pytest.raises(RuntimeError, match="another Course"):
        old.regenerate()


def test_checkpoint_spacing_1e_9_is_refused(device):
    with pytest.raises(ValueError, match="spacing"):
        Checkpoints(1e-9)
    with pytest.raises(ValueError, match="checkpoint_spacing"):
        Course.track(presets.track(num_envs=E, device=device), checkpoint_spacing=1e-9, seeds=1)


def test_sdf_resolution_beyond_its_range_is_refused(device):
    gen = TrackGenerator(small(device), seeds=1)
    gen.generate()
    with pytest.raises(ValueError, match="sdf_resolution"):
        BandCollisionUtility(gen.result, method="sdf", sdf_resolution=10**6)
