"""Real circuits through the whole library: read_tum -> tracks_spec -> TrackGenerator ->
write_tum / write_npz -> read_tum / rebuild (the CSV is the oracle)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from track_gen import TrackGenerator
from track_gen.io import read_tum, rebuild, tracks_spec, write_json, write_npz, write_tum

from . import CIRCUITS, polyline_length, write_csv


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    d = tmp_path_factory.mktemp("circuits")
    names = ("oval", "variable", "sample")
    tracks = [read_tum(write_csv(d / f"{n}.csv", *CIRCUITS[n](), fmt="{:.3f}")) for n in names]
    gen = TrackGenerator(tracks_spec(tracks, num_envs=3, device="cpu"), seeds=0)
    gen.generate()
    return tracks, gen


def test_exported_course_keeps_the_real_length_and_widths(tmp_path, imported):
    tracks, gen = imported
    assert gen.result.valid.numpy().tolist() == [1, 1, 1]
    for e, src in enumerate(tracks):
        write_tum(gen.result, e, tmp_path / f"{src.name}.csv")
        out = read_tum(tmp_path / f"{src.name}.csv")
        assert out.length == pytest.approx(polyline_length(src.xy), rel=0.005)
        # each exported bead's widths match the source widths interpolated at its projection
        # onto the CSV polyline
        wr, wl = _widths_at(src, out.xy)
        np.testing.assert_allclose(out.width_right, wr, rtol=0.01)
        np.testing.assert_allclose(out.width_left, wl, rtol=0.01)


def _widths_at(src, pts):
    """Source widths linearly interpolated at the closest point of the closed CSV polyline."""
    a, b = src.xy, np.roll(src.xy, -1, axis=0)
    ab = b - a
    t = np.clip(np.einsum("pkj,kj->pk", pts[:, None] - a[None], ab) / np.sum(ab * ab, 1), 0, 1)
    d = np.linalg.norm(a[None] + t[..., None] * ab[None] - pts[:, None], axis=2)
    k = np.argmin(d, axis=1)
    tk = t[np.arange(len(pts)), k]
    j = (k + 1) % len(a)
    return tuple((1 - tk) * w[k] + tk * w[j] for w in (src.width_right, src.width_left))


@pytest.mark.parametrize("writer", [write_npz, write_json])
def test_real_circuit_batch_rebuilds_bit_for_bit(tmp_path, imported, writer):
    _, gen = imported
    path = tmp_path / ("b.npz" if writer is write_npz else "b.json")
    writer(gen.result, path, generator=gen)
    again = rebuild(path)
    for f in dataclasses.fields(gen.result):
        a, b = getattr(gen.result, f.name).numpy(), getattr(again.result, f.name).numpy()
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), f.name
