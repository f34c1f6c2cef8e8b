"""The ``racing_line`` keyword of ``Course.track`` and ``CourseConfig``.

``racing_line`` is None (no ``racing_line`` component) or a mapping of ``tools.RacingLine``
keyword arguments; it adds the ``racing_line`` component after the collision and before
``extra``. A ``CourseConfig`` course is byte-identical to the preset's; a refused value raises
TypeError / ValueError naming the field (and the key) before any generator is built (a spy on
``GeneratorBase.__init__``); a gate course refuses it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import pickle

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen import GateGenConfig, TrackGenConfig, TrackGenerator, tools
from track_gen.course import Course, CourseConfig
from track_gen.generators import GeneratorBase
from track_gen.pipeline import presets
from track_gen.tools.racing_line import (
    A_LAT,
    A_LON,
    ITERATIONS,
    KAPPA_ITERATIONS,
    KAPPA_MAX,
    LINEARISATIONS,
    V_MAX,
    VEHICLE_WIDTH,
)

from ..support.strategies import any_scalar, examples, expected_error, in_range, normalized, values

E = 4
LINE = {"vehicle_width": 0.04, "a_lat": 8.0, "a_lon": 4.0, "v_max": 6.0}
FIELDS = (
    VEHICLE_WIDTH,
    A_LAT,
    A_LON,
    V_MAX,
    KAPPA_MAX,
    ITERATIONS,
    LINEARISATIONS,
    KAPPA_ITERATIONS,
)
KEYS = tuple(t.name for t in FIELDS)
REQUIRED = KEYS[:4]
DEFAULTS = {t.name: t.default for t in FIELDS}
RESULT_ARRAYS = ("offset", "position", "curvature", "speed", "lap_time", "length")


@contextlib.contextmanager
def spy_builds():
    """Records every generator construction (their base's ``__init__``)."""
    built: list[str] = []
    real = GeneratorBase.__init__

    def spy(obj, *a, **k):
        built.append(type(obj).__name__)
        real(obj, *a, **k)

    GeneratorBase.__init__ = spy
    try:
        yield built
    finally:
        GeneratorBase.__init__ = real


def refused(call, err, *words: str) -> None:
    with pytest.raises(err) as info:
        call()
    text = str(info.value)
    assert all(w in text for w in words), f"{type(info.value).__name__} {text!r} lacks {words}"


def line_bytes(course) -> dict[str, bytes]:
    line = course.components["racing_line"].result
    return {name: getattr(line, name).numpy().tobytes() for name in RESULT_ARRAYS}


# ------------------------------------------------------------------------- the keyword
def test_preset_adds_the_racing_line_after_the_collision(device):
    course = Course.track(
        presets.track(num_envs=E, device=device),
        checkpoint_spacing=0.6,
        collision="segments",
        racing_line={**LINE, "kappa_max": 20.0, "iterations": 12},
        extra=[tools.Localizer()],
        seeds=7,
    )
    assert list(course.components) == [
        "checkpoints",
        "progress",
        "collision",
        "racing_line",
        "localizer",
    ]
    comp = course.components["racing_line"]
    assert isinstance(comp, tools.RacingLine)
    assert comp.settings == {**DEFAULTS, **LINE, "kappa_max": 20.0, "iterations": 12}
    assert course.racing_line is comp.utility
    # the same line as the component built by hand over the same generator's course
    by_hand = Course(
        TrackGenerator(presets.track(num_envs=E, device=device), seeds=7),
        [
            tools.Checkpoints(0.6, max_checkpoints="auto"),
            tools.Progress(),
            tools.BandCollision("segments"),
            tools.RacingLine(0.04, a_lat=8.0, a_lon=4.0, v_max=6.0, kappa_max=20.0, iterations=12),
            tools.Localizer(),
        ],
    )
    assert line_bytes(course) == line_bytes(by_hand)
    valid = course.result.valid.numpy() != 0
    assert np.isfinite(comp.result.lap_time.numpy()[valid]).all()
    # without the keyword: the documented components, no racing line
    plain = Course.track(presets.track(num_envs=E, device=device), checkpoint_spacing=0.6)
    assert list(plain.components) == ["checkpoints", "progress"]
    assert plain.racing_line is None


def test_config_course_is_the_preset_byte_for_byte(device):
    cfg = CourseConfig(
        mode="track",
        gen=TrackGenConfig(num_envs=E, device=device),
        seeds=42,
        checkpoint_spacing=0.6,
        collision="segments",
        racing_line=LINE,
    )
    preset = Course.track(
        presets.track(num_envs=E, device=device),
        checkpoint_spacing=0.6,
        collision="segments",
        racing_line=LINE,
        seeds=42,
    )
    for course in (Course(cfg), Course.from_config(cfg)):
        assert list(course.components) == list(preset.components)
        assert course.result.center.numpy().tobytes() == preset.result.center.numpy().tobytes()
        assert line_bytes(course) == line_bytes(preset)
        assert course.components["racing_line"].settings == dict(cfg.racing_line)
    # a masked regeneration of the config course keeps the unmasked envs' lines
    course = Course(cfg)
    before = {k: np.frombuffer(v, np.uint8) for k, v in line_bytes(course).items()}
    mask = course.inputs["regen_mask"]
    mask.assign(np.array([0, 1, 0, 0], np.int32))
    course.regenerate(mask=mask, advance=True)
    line = course.components["racing_line"].result
    for name in ("offset", "speed"):
        rows = getattr(line, name).numpy().reshape(E, -1)
        old = before[name].view(rows.dtype).reshape(E, -1)
        for e in (0, 2, 3):
            assert rows[e].tobytes() == old[e].tobytes(), (name, e)


def test_config_keeps_every_key_checked_read_only_and_picklable():
    cfg = CourseConfig(
        mode="track",
        gen=TrackGenConfig(num_envs=2),
        checkpoint_spacing=0.6,
        racing_line={**LINE, "iterations": np.int64(9), "a_lat": np.float32(8.0)},
    )
    assert dict(cfg.racing_line) == {**DEFAULTS, **LINE, "iterations": 9}
    assert type(cfg.racing_line["iterations"]) is int and type(cfg.racing_line["a_lat"]) is float
    with pytest.raises(TypeError):
        cfg.racing_line["a_lat"] = 1.0
    again = pickle.loads(pickle.dumps(cfg))
    assert again == cfg and hash(again) == hash(cfg)
    assert dataclasses.replace(cfg, racing_line=None).racing_line is None
    assert CourseConfig(mode="track", gen=cfg.gen, checkpoint_spacing=0.6).racing_line is None
    # the field came last (then min_time): every earlier positional field keeps its place
    assert [f.name for f in dataclasses.fields(CourseConfig)][-2:] == ["racing_line", "min_time"]


BAD = [
    (5, TypeError, ("racing_line", "mapping", "got 5")),
    ([("vehicle_width", 0.04)], TypeError, ("racing_line", "mapping")),
    ({"vehicle_width": 0.04}, ValueError, ("racing_line", "missing", "a_lat")),
    ({**LINE, "vehicle_widht": 0.1}, ValueError, ("racing_line", "vehicle_widht", "did you mean")),
    ({**LINE, "name": "mine"}, ValueError, ("racing_line", "'name'")),
    ({**LINE, 3: 1.0}, ValueError, ("racing_line", "unknown keys [3]")),
    ({**LINE, "a_lat": 0.0}, ValueError, ("racing_line.a_lat = 0.0", ">= 1e-06")),
    ({**LINE, "v_max": math.nan}, ValueError, ("racing_line.v_max",)),
    ({**LINE, "vehicle_width": None}, TypeError, ("racing_line.vehicle_width is required",)),
    ({**LINE, "iterations": 1.5}, TypeError, ("racing_line.iterations",)),
    ({**LINE, "linearisations": 17}, ValueError, ("racing_line.linearisations = 17",)),
    ({**LINE, "kappa_max": "big"}, TypeError, ("racing_line.kappa_max",)),
]


@pytest.mark.parametrize("value, err, words", BAD)
def test_refused_before_any_generator_is_built(value, err, words):
    with spy_builds() as built:
        refused(
            lambda: Course.track(
                presets.track(num_envs=2, device="cpu"), checkpoint_spacing=0.6, racing_line=value
            ),
            err,
            *words,
        )
        refused(
            lambda: CourseConfig(
                mode="track",
                gen=TrackGenConfig(num_envs=2, device="cpu"),
                checkpoint_spacing=0.6,
                racing_line=value,
            ),
            err,
            *(("CourseConfig." + w if w.startswith("racing_line") else w) for w in words),
        )
    assert built == []


def test_a_component_goes_in_extra_and_gates_refuse_it():
    comp = tools.RacingLine(0.04, a_lat=8.0, a_lon=4.0, v_max=6.0)
    refused(
        lambda: Course.track(
            presets.track(num_envs=2, device="cpu"), checkpoint_spacing=0.6, racing_line=comp
        ),
        TypeError,
        "racing_line",
        "goes in extra=",
    )
    gates = GateGenConfig(num_envs=2, device="cpu", gate_width=0.1)
    refused(
        lambda: CourseConfig(mode="gates", gen=gates, racing_line=LINE),
        ValueError,
        "CourseConfig.racing_line",
        "does not apply to mode='gates'",
    )
    with pytest.raises(TypeError, match="racing_line"):
        Course.gates(gates, racing_line=LINE)


# ------------------------------------------------------------------------------ fuzz
def _expected(value):
    """``(error, words)`` of ``racing_line=value`` (the words without the field prefix)."""
    if value is None:
        return None, ()
    if not hasattr(value, "keys") or not hasattr(value, "__getitem__"):
        return TypeError, ("racing_line",)
    unknown = [k for k in value if not (isinstance(k, str) and k in KEYS)]
    if unknown:
        return ValueError, ("racing_line", "unknown keys")
    missing = [k for k in REQUIRED if k not in value]
    if missing:
        return ValueError, ("racing_line", "missing", missing[0])
    for t in FIELDS:
        err = expected_error(t, value.get(t.name, t.default))
        if err is not None:
            return err, (f"racing_line.{t.name}",)
    return None, ()


@st.composite
def racing_line_values(draw):
    kind = draw(st.sampled_from(["none", "scalar", "mapping"]), label="kind")
    if kind == "none":
        return None
    if kind == "scalar":
        return draw(st.one_of(any_scalar, st.just(("vehicle_width", 0.04))), label="scalar")
    out = {t.name: draw(in_range(t), label=t.name) for t in FIELDS[:4]}
    for t in FIELDS[4:]:
        if draw(st.integers(0, 2), label=f"set {t.name}") == 0:
            out[t.name] = draw(values(t), label=t.name)
    if draw(st.integers(0, 3), label="bad required value") == 0:
        t = draw(st.sampled_from(FIELDS[:4]), label="which")
        out[t.name] = draw(values(t), label=f"bad {t.name}")
    if draw(st.integers(0, 5), label="drop a key") == 0:
        del out[draw(st.sampled_from(REQUIRED), label="dropped")]
    if draw(st.integers(0, 5), label="unknown key") == 0:
        out[draw(st.sampled_from(["vehicle", "A_LAT", "name", 1, None]), label="key")] = 1.0
    return out


def _cheap(settings: dict) -> bool:
    work = settings["iterations"] * settings["linearisations"]
    if settings["kappa_max"] is not None:
        work += settings["kappa_iterations"] * settings["linearisations"]
    return work <= 2000


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(value=racing_line_values())
def test_fuzz_racing_line(value):
    err, words = _expected(value)
    event(f"{err.__name__} {words[:1]}" if err else "accepted")
    gen = TrackGenConfig(num_envs=2, device="cpu")
    with spy_builds() as built:
        if err is not None:
            refused(
                lambda: CourseConfig(
                    mode="track", gen=gen, checkpoint_spacing=0.6, racing_line=value
                ),
                err,
                *(("CourseConfig." + w if w.startswith("racing_line") else w) for w in words),
            )
            refused(
                lambda: Course.track(gen, checkpoint_spacing=0.6, racing_line=value), err, *words
            )
            assert built == []
            return
        cfg = CourseConfig(mode="track", gen=gen, checkpoint_spacing=0.6, racing_line=value)
    if value is None:
        assert cfg.racing_line is None
        return
    expected = {t.name: normalized(t, value.get(t.name, t.default)) for t in FIELDS}
    assert dict(cfg.racing_line) == expected
    for t in FIELDS:
        v = cfg.racing_line[t.name]
        assert v is None or type(v) is {"int": int, "float": float}[t.kind], (t.name, v)
    if _cheap(expected):
        course = Course(cfg, prepare=False)
        assert course.components["racing_line"].settings == expected
        lap = course.components["racing_line"].result.lap_time.numpy()
        valid = course.result.valid.numpy() != 0
        assert not np.isinf(lap).any() and np.isfinite(lap[valid]).all()
