"""The invariant every accepted input must leave behind, and per-env snapshots for comparisons.

Invariant (tracks and gate courses): ``valid[e]`` is 0 or 1 and equals ``fail_mask[e] == 0``;
``fail_mask`` holds only named :class:`~track_gen.FailBit` bits; ``0 <= count[e] <= N_max``;
rows past ``count[e]`` are NaN; a valid env has finite rows for its first ``count[e]`` rows and
at least 4 beads (tracks) or ``min_gates`` gates (gate courses).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from track_gen import FailBit, GateSequence, Track

#: Every named fail bit.
ALL_BITS = 0
for _bit in FailBit:
    ALL_BITS |= int(_bit)

_TRACK_ROWS = ("outer", "center", "inner", "tangent", "normal", "arclen")
_GATE_ROWS = ("position", "tangent", "forward", "orientation", "half_size", "left", "right")


def _check_common(result, E: int, n_max: int, rows: tuple[str, ...], min_count: int) -> dict:
    count = result.count.numpy()
    valid = result.valid.numpy()
    fail = result.fail_mask.numpy()
    assert count.shape == valid.shape == fail.shape == (E,)
    assert np.isin(valid, (0, 1)).all(), f"valid holds values other than 0/1: {valid}"
    assert ((fail & ~ALL_BITS) == 0).all(), f"unnamed fail bits: {fail}"
    assert (valid == (fail == 0)).all(), f"valid {valid} disagrees with fail_mask {fail}"
    assert ((count >= 0) & (count <= n_max)).all(), f"count {count} outside [0, {n_max}]"
    host = {name: result.host(name) for name in rows}
    for e in range(E):
        c = int(count[e])
        for name, a in host.items():
            assert np.isnan(a[e, c:]).all(), f"env {e}: {name} rows past count {c} are not NaN"
            if valid[e]:
                assert np.isfinite(a[e, :c]).all(), f"valid env {e}: {name} has non-finite rows"
        if valid[e]:
            assert c >= min_count, f"valid env {e} has count {c} < {min_count}"
    return {"count": count, "valid": valid, "fail": fail}


def check_track(track: Track) -> dict:
    """Assert the invariant on a :class:`~track_gen.Track`; returns host count/valid/fail."""
    E = track.num_envs
    out = _check_common(track, E, track.N_max, _TRACK_ROWS, 4)
    length = track.length.numpy()
    for e in np.flatnonzero(out["valid"]):
        assert np.isfinite(length[e]) and length[e] > 0.0, f"valid env {e}: length {length[e]}"
    return out


def check_gates(seq: GateSequence, min_gates: int) -> dict:
    """Assert the invariant on a :class:`~track_gen.GateSequence`."""
    return _check_common(seq, seq.num_envs, seq.max_gates, _GATE_ROWS, min_gates)


def check_result(gen) -> dict:
    """The invariant on ``gen.result`` (a TrackGenerator or a GateGenerator)."""
    result = gen.result
    if isinstance(result, GateSequence):
        return check_gates(result, gen.spec.config.min_gates)
    return check_track(result)


def env_rows(result, E: int) -> list[bytes]:
    """One byte string per env holding every per-env field of ``result`` (NaN-exact)."""
    parts = [[] for _ in range(E)]
    for f in dataclasses.fields(result):
        host = getattr(result, f.name).numpy()
        per = host.reshape(E, -1)
        for e in range(E):
            parts[e].append(per[e].tobytes())
    return [b"".join(p) for p in parts]


def arrays_bytes(*arrays) -> bytes:
    """The concatenated host bytes of device arrays (for nothing-changed checks)."""
    return b"".join(a.numpy().tobytes() for a in arrays)


def result_bytes(result) -> bytes:
    """Every field of a Track / GateSequence / CheckpointsResult / ProgressEvents as bytes."""
    return arrays_bytes(*(getattr(result, f.name) for f in dataclasses.fields(result)))


def check_gate_step(course, res, position=None, boxes=None) -> None:
    """Assert what a gate course's ``step()`` answers, whatever the agents' state.

    ``res`` is the StepResult; ``position`` (host ``[E, 3]``) and ``boxes`` (host
    ``(box_position [E*B, 3], orientation [E*B, 4], half_extents [E*B, 2])``) are the bound
    inputs when known (their non-finite rows answer "no answer"). Every array has its
    documented shape; flags are 0/1; an invalid env answers NaN frame, segment -1, hit 0 and
    index -1; no index leaves its range (segment in ``[-1, line count)``, post in
    ``[-1, 2*count)``, gate in ``[-1, count)``, member in ``[-1, 4)``); an answered frame has
    ``0 <= s < length`` and no NaN offset; a hit has ``distance <= 0``; progress counters stay
    >= 0 with the target in ``[0, max_gates)``.
    """
    gates = course.result
    E, G = gates.num_envs, gates.max_gates
    valid = gates.valid.numpy() != 0
    count = gates.count.numpy()
    built = gates.generation.numpy() >= 0
    if built.all():
        check_gates(gates, course.generator.spec.config.min_gates)
    else:  # never generated (a course built with prepare=False): no course at all
        assert not valid[~built].any(), "a never-generated env is valid"
    assert np.array_equal(res.valid.numpy(), gates.valid.numpy()), "res.valid is not live"
    finite_pos = np.ones(E, bool) if position is None else np.isfinite(position).all(axis=1)

    ev = res.events
    if ev is not None:
        host = {f.name: getattr(ev, f.name).numpy() for f in dataclasses.fields(ev)}
        for name, a in host.items():
            assert a.shape == (E,), f"events.{name} shape {a.shape}"
        for name in ("passed", "wrong_way"):
            assert np.isin(host[name], (0, 1)).all(), f"events.{name}: {host[name]}"
        assert (host["laps"] >= 0).all() and (host["progress"] >= 0).all()
        assert (host["laps"] <= host["progress"]).all(), "more laps than checkpoints passed"
        nxt = host["next_index"]
        assert ((nxt >= 0) & (nxt < G)).all(), f"next_index {nxt} outside [0, {G})"
        d = host["dist_to_next"]
        assert not (d < 0).any(), f"negative dist_to_next {d}"
        assert (d[~valid] == 0).all(), "an invalid env has a dist_to_next"
        assert (host["passed"][~valid] == 0).all() and (host["wrong_way"][~valid] == 0).all()

    fr = res.frame
    if fr is not None:
        loc = course.localizer
        line = loc.line
        L = line.count.numpy()
        length = line.length.numpy()
        h = {f.name: getattr(fr, f.name).numpy() for f in dataclasses.fields(fr)}
        for name, a in h.items():
            assert a.shape[0] == E, f"frame.{name} shape {a.shape}"
        seg = h["segment"]
        assert ((seg == -1) | ((seg >= 0) & (seg < L))).all(), f"segment {seg}, count {L}"
        assert (seg < loc.N_max).all()
        none = seg == -1
        assert none[~valid].all(), f"invalid envs answered a segment: {seg}"
        assert none[~finite_pos].all(), f"non-finite positions answered a segment: {seg}"
        for name in ("s", "n", "n_up", "distance", "closest", "tangent"):
            a = h[name].reshape(E, -1)
            assert np.isnan(a[none]).all(), f"frame.{name} of an unanswered env is not NaN"
            assert not np.isnan(a[~none]).any(), f"frame.{name} of an answered env is NaN"
        on = ~none
        s = h["s"]
        assert ((s[on] >= 0) & (s[on] < length[on])).all(), f"s {s} outside [0, {length})"
        assert (h["distance"][on] >= 0).all()
        assert (seg[on] < L[on]).all(), f"segment {seg} >= line count {L}"

    ct = res.contacts
    if ct is None:
        return
    hit = ct.hit.numpy()
    assert np.isin(hit, (0, 1)).all(), f"hit {hit}"
    dist = ct.distance.numpy()
    assert not (hit.astype(bool) & ~(dist <= 0)).any(), "a hit with distance > 0"
    if hasattr(ct, "post"):  # posts
        B = course.collision.max_boxes
        assert hit.shape == ct.post.shape == dist.shape == (E * B,)
        assert ct.nearest.shape == (E * B,)
        post = ct.post.numpy().reshape(E, B)
        limit = np.where(valid, 2 * count, 0)[:, None]
        assert ((post >= -1) & (post < 2 * G)).all(), f"post {post} outside [-1, {2 * G})"
        assert ((post == -1) | (post < limit)).all(), f"post {post} past 2*count {limit}"
        assert (post[~valid] == -1).all() and (hit.reshape(E, B)[~valid] == 0).all()
        none = (post == -1).reshape(-1)
        assert np.isnan(dist[none]).all() and not np.isnan(dist[~none]).any()
        assert np.isnan(ct.nearest.numpy()[none]).all()
        assert (hit[none] == 0).all()
        if boxes is not None:
            ok = np.ones(E * B, bool)
            for a in boxes:
                ok &= np.isfinite(a).all(axis=1)
            assert none[~ok].all(), "a box with a non-finite input named a post"
    else:  # frames
        gate, member = ct.gate.numpy(), ct.member.numpy()
        for name in ("hit", "gate", "member", "distance", "nearest", "normal"):
            assert getattr(ct, name).shape == (E,), f"contacts.{name} shape"
        limit = np.where(valid, count, 0)
        assert ((gate >= -1) & (gate < G)).all(), f"gate {gate} outside [-1, {G})"
        assert ((gate == -1) | (gate < limit)).all(), f"gate {gate} past count {limit}"
        assert ((member >= -1) & (member < 4)).all(), f"member {member}"
        assert ((gate == -1) == (member == -1)).all()
        none = gate == -1
        assert none[~valid].all() and none[~finite_pos].all()
        assert (hit[none] == 0).all()
        assert np.isnan(dist[none]).all() and not np.isnan(dist[~none]).any()
        assert np.isnan(ct.nearest.numpy()[none]).all()
