"""A course's per-generation tools (SDF bake, segments, height field, checkpoints, props,
racing line, course line) split their work on the generator's env ranges: every component's
arrays are bitwise identical for 1, 2 and 3 CPU threads through full and masked
regenerations."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import warp as wp

from track_gen import tools
from track_gen.course import Course
from track_gen.pipeline import presets

E = 67  # splits unevenly in 2 and 3 ranges


def _arrays(obj) -> dict[str, np.ndarray]:
    out = {}
    for name, value in sorted(vars(obj).items()):
        if isinstance(value, wp.array):
            out[name] = value.numpy().copy()
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            out.update({f"{name}.{k}": v for k, v in _arrays(value).items()})
    return out


def _course_bytes(course) -> list[dict[str, np.ndarray]]:
    out = []
    for comp in course.components.values():
        got = {}
        for part in ("utility", "result"):
            obj = getattr(comp, part, None)
            if obj is not None:
                got.update({f"{part}.{k}": v for k, v in _arrays(obj).items()})
        out.append(got)
    return out


def _drive(course) -> list:
    steps = [_course_bytes(course)]
    course.regenerate(advance=True)
    steps.append(_course_bytes(course))
    mask = course.generator.inputs["regen_mask"]
    mask.assign((np.arange(E) % 3 == 2).astype(np.int32))
    course.regenerate(mask, advance=True)
    steps.append(_course_bytes(course))
    mask.zero_()
    course.regenerate(mask, advance=True)  # an all-zero mask: nothing moves
    steps.append(_course_bytes(course))
    return steps


def _assert_same(runs) -> None:
    for other in runs[1:]:
        for a_step, b_step in zip(runs[0], other, strict=True):
            for a, b in zip(a_step, b_step, strict=True):
                assert a.keys() == b.keys()
                for name in a:
                    assert np.array_equal(a[name], b[name], equal_nan=True), name


@pytest.mark.parametrize("collision", ["sdf", "segments"])
def test_track_course_tools_are_bitwise_identical_for_every_thread_count(collision):
    runs = []
    for t in (1, 2, 3):
        course = Course.track(
            presets.track(num_envs=E, device="cpu", cpu_threads=t),
            checkpoint_spacing=0.1,
            collision=collision,
            extra=(
                tools.HeightFieldBake(48),
                tools.Props("cone", spacing=0.2),
                tools.RacingLine(0.05, a_lat=4.0, a_lon=3.0, v_max=3.0),
            ),
            seeds=4,
        )
        assert course.generator.cpu_threads == t
        assert len(course.generator.env_ranges) == (t if t > 1 else 0)
        runs.append(_drive(course))
    _assert_same(runs)


def test_gate_course_tools_are_bitwise_identical_for_every_thread_count():
    runs = []
    for t in (1, 2, 3):
        course = Course.gates(
            presets.gates(num_envs=E, device="cpu", gate_width=0.1, cpu_threads=t),
            collision=0.02,
            localize_window=8,
            seeds=4,
        )
        runs.append(_drive(course))
    _assert_same(runs)
