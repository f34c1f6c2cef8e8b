"""The specification's course examples, run verbatim (only the arrays they assume are made
here: ``pos``, ``quat``, ``he``).

Sources: "Composing a course" -> "Binding inputs" and "Reading results"; "RL auto-reset" ->
"Gates mode".
"""

# ruff: noqa: B018  (the examples evaluate expressions for show, as the spec writes them)
from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import tools
from track_gen.course import Course
from track_gen.pipeline import presets


def _arrays(E, device):
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)
    he = wp.full(E, wp.vec2f(0.02, 0.01), dtype=wp.vec2f, device=device)
    return pos, quat, he


def test_binding_inputs_and_reading_results(device):
    E = 64
    pos, quat, he = _arrays(E, device)

    # fmt: off
    # --- "Binding inputs", verbatim
    course = Course.track(presets.track(num_envs=E, device=device), checkpoint_spacing=0.6,
                          extra=[tools.Localizer()], seeds=42)     # no collision
    course.bind(position=pos)          # Progress and Localizer both read it

    boxed = Course.track(presets.track(num_envs=E, device=device), checkpoint_spacing=0.6,
                         collision="segments", seeds=42)
    boxed.bind(position=pos, orientation=quat, half_extents=he)    # + a box collision

    # --- "Reading results", verbatim
    res = course.step()
    res["progress"]                    # ProgressEvents (the same object as res.events)
    res["localizer"].s                 # the Localizer's TrackFrame
    "collision" in res, list(res.keys()), dict(res)
    res.get("collision")               # None: this course has no collision
    res.valid                          # the generator result's [E] int32 valid
    course.components["checkpoints"].result   # a per-generation result: not an entry
    # fmt: on

    # what the comments state
    assert res["progress"] is res.events
    assert res["localizer"] is res.frame and isinstance(res.frame, tools.TrackFrame)
    assert list(res.keys()) == ["progress", "localizer"] and "collision" not in res
    assert res.get("collision") is None and res.contacts is None
    assert res.valid is course.result.valid
    with pytest.raises(KeyError, match="entries"):
        res["checkpoints"]
    s = res["localizer"].s.numpy()
    valid = res.valid.numpy() != 0
    assert np.isfinite(s[valid]).all() and np.isnan(s[~valid]).all()
    bres = boxed.step()
    assert list(bres.keys()) == ["progress", "collision"] and bres.frame is None


def test_gates_mode(device):
    E = 64
    # fmt: off
    # --- "Gates mode", verbatim
    gates = Course.gates(presets.gates(num_envs=E, device=device, gate_width=0.1),
                         collision=0.02, seeds=7)          # posts of radius 0.02
    invalid = (gates.result.valid.numpy() == 0).mean()
    # fmt: on

    assert 0.0 <= invalid < 0.5
    pos, quat, he = _arrays(E, device)
    gates.bind(position=pos, orientation=quat, half_extents=he)
    res = gates.step()
    assert isinstance(res.contacts, tools.DiscContact)
    assert isinstance(res.frame, tools.TrackFrame)
    assert list(res.keys()) == ["progress", "collision", "localizer"]
