"""RowBatch, the one base of the per-env results: num_envs, rows_per_env, device, clone() and
the host view, checked against the flat arrays read directly."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from track_gen import GateSequence, Track
from track_gen.core.budget import AllocationBudget
from track_gen.tools.band_collision import BandCollisionResult
from track_gen.tools.checkpoints import CheckpointsResult
from track_gen.tools.gate_collision import DiscContact, FrameContact
from track_gen.tools.localizer import TrackFrame
from track_gen.tools.progress import ProgressEvents

E, M = 3, 5


def _filled(arr: wp.array) -> wp.array:
    """Distinct values in every element, so a wrong reshape is seen."""
    host = arr.numpy()
    arr.assign(np.arange(host.size, dtype=host.dtype).reshape(host.shape))
    return arr


def test_track_host_view_matches_the_flat_rows():
    track = Track.allocate(E, M, "cpu")
    assert (track.num_envs, track.rows_per_env, track.N_max) == (E, M, M)
    assert track.device == wp.get_device("cpu")
    flat = _filled(track.center).numpy()
    view = track.host("center")
    assert view.shape == (E, M, 3)
    for e in range(E):
        np.testing.assert_array_equal(view[e], flat[e * M : (e + 1) * M])
    assert track.host("arclen").shape == (E, M)
    assert track.host("count").shape == (E,)


def test_gates_and_checkpoints_keep_their_stride_names():
    seq = GateSequence.allocate(E, M, "cpu")
    assert seq.max_gates == seq.rows_per_env == M
    assert seq.host("orientation").shape == (E, M, 4)
    cs = CheckpointsResult.from_gates(seq)
    assert (cs.num_envs, cs.max_checkpoints) == (E, M)
    assert cs.host("up_half").shape == (E, M)


def test_per_env_only_batches_have_one_row_per_env():
    for batch in (TrackFrame.allocate(E, "cpu"), ProgressEvents.allocate(E, "cpu")):
        assert (batch.num_envs, batch.rows_per_env) == (E, 1)
    frame = FrameContact.allocate(E, "cpu")
    assert frame.host("nearest").shape == (E, 3)


@pytest.mark.parametrize("height", [False, True])
def test_box_contacts_know_their_boxes_per_env(height):
    band = BandCollisionResult.allocate(E * M, "cpu", height, max_boxes=M)
    assert (band.num_envs, band.max_boxes, band.rows_per_env) == (E, M, M)
    assert band.host("nearest").shape == (E, M, 2)
    assert (band.host("height") is None) is (not height)
    copy = band.clone()
    assert (copy.num_envs, copy.max_boxes) == (E, M)
    disc = DiscContact.allocate(E * M, "cpu", max_boxes=M)
    assert disc.clone().host("post").shape == (E, M)
    # a hand-made batch without its stride is one env's rows
    bare = DiscContact(disc.hit, disc.post, disc.distance, disc.nearest)
    assert (bare.num_envs, bare.rows_per_env) == (1, E * M)


def test_clone_is_detached():
    track = Track.allocate(E, M, "cpu")
    _filled(track.arclen)
    copy = track.clone()
    track.arclen.fill_(-1.0)
    np.testing.assert_array_equal(copy.host("arclen").ravel(), np.arange(E * M))


def test_host_refuses_a_name_that_is_not_an_array():
    track = Track.allocate(E, M, "cpu")
    with pytest.raises(ValueError, match=r"Track.host name = 'N_max'.*'center'"):
        track.host("N_max")
    with pytest.raises(TypeError, match="Track.host name must be a str"):
        track.host(3)


def test_result_allocation_refused_past_the_budget_is_a_value_error():
    budget = AllocationBudget("cpu", "lower max_boxes")
    budget.limit = 64  # bytes
    with pytest.raises(ValueError, match=r"box contacts \(E \* max_boxes\).*lower max_boxes"):
        BandCollisionResult.allocate(E * M, "cpu", budget=budget, max_boxes=M)
