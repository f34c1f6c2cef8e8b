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


def _rows(arr, E: int) -> np.ndarray:
    """``[E*N(, k)]`` device array -> host ``[E, N, k]`` float array."""
    host = arr.numpy()
    return host.reshape(E, host.shape[0] // E, -1)


def _check_common(result, E: int, n_max: int, rows: tuple[str, ...], min_count: int) -> dict:
    count = result.count.numpy()
    valid = result.valid.numpy()
    fail = result.fail_mask.numpy()
    assert count.shape == valid.shape == fail.shape == (E,)
    assert np.isin(valid, (0, 1)).all(), f"valid holds values other than 0/1: {valid}"
    assert ((fail & ~ALL_BITS) == 0).all(), f"unnamed fail bits: {fail}"
    assert (valid == (fail == 0)).all(), f"valid {valid} disagrees with fail_mask {fail}"
    assert ((count >= 0) & (count <= n_max)).all(), f"count {count} outside [0, {n_max}]"
    host = {name: _rows(getattr(result, name), E) for name in rows}
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
    """Every field of a Track / GateSequence / CheckpointSet / ProgressEvents as bytes."""
    return arrays_bytes(*(getattr(result, f.name) for f in dataclasses.fields(result)))
