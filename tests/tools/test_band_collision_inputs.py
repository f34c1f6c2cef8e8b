"""``kernel_layout=`` of ``BandCollisionUtility`` and ``BandCollision``: the thread layout of the
SDF bake and of the segments refresh and query.

The value is ``"auto"``, ``"per_env"`` or ``"per_item"``; any other object is refused at
construction, before anything is allocated or launched: a non-str a TypeError, another str a
ValueError, each naming ``kernel_layout`` and the accepted values (a ValueError also the
value). A collider resolves ``"auto"`` by device (``per_env`` on the CPU, ``per_item`` on
CUDA); the component stores the value it was given.

An accepted layout answers like ``per_env`` byte for byte, for both methods: the refresh data
(SDF grids and frames, border strips and chunk boxes) after any masked regeneration and
refresh (any mask contents, the all-zero mask included), and the contacts of any box state
(NaN, inf, 1e38, -0.0 coordinates and half extents, boxes at a bead centre).
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.core.layout import KERNEL_LAYOUT
from track_gen.tools import BandCollision, BandCollisionUtility

from ..support.strategies import (
    agent_rows,
    examples,
    expected_error,
    mask_contents,
    other_objects,
    values,
)

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 4
RES = 24  # texels per side: small grids, the bake's every branch still taken
ACCEPTED = "'auto', 'per_env', 'per_item'"
#: Any kernel_layout argument: the Tunable's edge cases, near-miss strings, other objects.
LAYOUT_VALUES = st.one_of(
    st.sampled_from(KERNEL_LAYOUT.choices),
    values(KERNEL_LAYOUT),
    st.sampled_from(["per_env ", "Per_Item", "per-item", "PER_ENV", "", "cpu", "cuda", "gpu"]),
    st.sampled_from(other_objects(E)),
    st.text(max_size=8),
)


@pytest.fixture(scope="module")
def shared():
    """One generator (its result regenerated under masks by the examples) and a cache of
    colliders, ``(method, boxes, layout) -> BandCollisionUtility``, every one refreshed with the
    mask of every regeneration (so each holds the data of the current result)."""
    gen = TrackGenerator(TrackGenConfig(generator="bezier", num_envs=E, device="cpu"), seeds=9)
    gen.generate()
    return {"gen": gen, "colliders": {}}


def collider(s, method: str, boxes: int, layout: str) -> BandCollisionUtility:
    key = (method, boxes, layout)
    if key not in s["colliders"]:
        s["colliders"][key] = BandCollisionUtility(
            s["gen"].result,
            method=method,
            max_boxes=boxes,
            sdf_resolution=RES,
            kernel_layout=layout,
        )
    return s["colliders"][key]


def derived(col: BandCollisionUtility) -> dict:
    names = ("sdf", "sdf_border", "sdf_frame", "sdf_aabb") if col.method == "sdf" else ()
    names += ("strip", "chunk_box") if col.method == "segments" else ()
    return {k: getattr(col, k).numpy().tobytes() for k in ("beads", *names)}


def answers(contact) -> dict:
    return {
        k: getattr(contact, k).numpy().tobytes()
        for k in ("oob", "distance", "nearest", "normal", "boundary")
    }


@settings(max_examples=examples(40), deadline=None)
@given(value=LAYOUT_VALUES, method=st.sampled_from(["segments", "sdf"]))
def test_kernel_layout_is_checked_before_anything_runs(shared, value, method):
    track = shared["gen"].result
    err = expected_error(KERNEL_LAYOUT, value)
    event(f"{err.__name__}" if err else "accepted")
    if err is None:
        col = BandCollisionUtility(track, method=method, sdf_resolution=RES, kernel_layout=value)
        assert col.kernel_layout == ("per_env" if value == "auto" else value)
        assert BandCollision(method, kernel_layout=value).kernel_layout == value
        return
    before = track.center.numpy().tobytes()
    for make in (
        lambda: BandCollisionUtility(track, method=method, sdf_resolution=RES, kernel_layout=value),
        lambda: BandCollision(method, kernel_layout=value),
    ):
        with pytest.raises(err) as info:
            make()
        text = str(info.value)
        assert "kernel_layout" in text and ACCEPTED in text, text
        if err is ValueError:
            assert repr(value) in text, text
    assert track.center.numpy().tobytes() == before


@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_layouts_answer_alike_after_masked_refreshes(shared, data):
    gen = shared["gen"]
    method = data.draw(st.sampled_from(["segments", "sdf"]), label="method")
    boxes = data.draw(st.integers(1, 3), label="max_boxes")
    layout = data.draw(st.sampled_from(["per_item", "auto"]), label="layout")
    reference = collider(shared, method, boxes, "per_env")
    other = collider(shared, method, boxes, layout)
    mask = gen.inputs["regen_mask"]
    contents = data.draw(mask_contents(E), label="mask")
    event(f"{method}, {int((contents != 0).sum())} masked")
    mask.assign(contents)
    gen.generate(mask=mask, advance=data.draw(st.booleans(), label="advance"))
    for col in shared["colliders"].values():
        col.refresh(mask)
    assert derived(other) == derived(reference)
    rows = E * boxes
    k = data.draw(st.integers(1, min(rows, 6)), label="distinct rows")
    pos, ori, half = (
        np.resize(data.draw(agent_rows(k, w), label=name), (rows, w))
        for name, w in (("position", 3), ("orientation", 4), ("half_extents", 2))
    )
    if data.draw(st.booleans(), label="at bead centres"):
        n_max = gen.result.N_max
        center = gen.result.center.numpy().reshape(E, n_max, 3)
        bead = data.draw(st.integers(0, n_max - 1), label="bead")
        pos = np.nan_to_num(np.repeat(center[:, bead], boxes, axis=0)).astype(np.float32)
    arrays = [
        wp.array(a, dtype=dt, device="cpu")
        for a, dt in ((pos, wp.vec3f), (ori, wp.quatf), (half, wp.vec2f))
    ]
    assert answers(other.query(*arrays)) == answers(reference.query(*arrays))
