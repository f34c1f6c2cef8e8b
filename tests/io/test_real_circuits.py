"""Real circuits through the whole library: read_tum -> tracks_spec -> TrackGenerator ->
write_tum / write_npz -> read_tum / rebuild (the CSV is the oracle)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from track_gen import TrackGenerator
from track_gen.io import (
    RealTrack,
    read_tum,
    rebuild,
    tracks_spec,
    write_json,
    write_npz,
    write_tum,
)

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


def _ring(width=3.0, n=24, r=30.0):
    th = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    xy = np.stack([r * np.cos(th), r * np.sin(th)], 1)
    return RealTrack("ring", xy, np.full(n, width), np.full(n, width))


@pytest.mark.parametrize("width", [1e-300, 1e-45, 1e-7])
@pytest.mark.parametrize("units", ["metres", "normalized"])
def test_widths_below_the_half_width_range_are_refused(width, units):
    # 1e-300 used to be a ZeroDivisionError (the float32 widths, and so the spacing, were 0)
    with pytest.raises(ValueError, match=r"tracks\[0\]: width .* is out of range: every width"):
        tracks_spec([_ring(width)], num_envs=1, device="cpu", units=units)


def test_widths_beyond_float32_after_normalizing_are_refused():
    # a 1e-200 m circuit scaled up to 1.44 units makes its 1 m widths 1e200
    tiny = RealTrack("tiny", _ring().xy * 1e-200, np.ones(24), np.ones(24))
    with pytest.raises(ValueError, match=r"tracks\[0\]: width .* is out of range"):
        tracks_spec([tiny], num_envs=1, device="cpu", units="normalized")


@pytest.mark.parametrize(
    "kw, error",
    [
        ({"half_width": "0.5"}, TypeError),
        ({"half_width": True}, TypeError),
        ({"half_width": None}, TypeError),
        ({"half_width": 1e-300}, ValueError),
        ({"spacing": "1"}, TypeError),
        ({"spacing": 1e-300}, ValueError),
        ({"spacing": float("nan")}, ValueError),
        ({"width_variation": "x"}, TypeError),
        ({"width_variation": 0.5}, ValueError),
        ({"units": ["metres"]}, TypeError),
        ({"assign": 0}, TypeError),
    ],
)
def test_tracks_spec_options_of_the_wrong_kind_or_value(kw, error):
    name = next(iter(kw))
    with pytest.raises(error, match=name):
        tracks_spec([_ring()], num_envs=1, device="cpu", **kw)


def test_complex_circuit_arrays_are_refused_for_any_duck_typed_circuit():
    import types

    ring = _ring()
    fake = types.SimpleNamespace(
        xy=ring.xy + 0j, width_left=ring.width_left, width_right=ring.width_right
    )
    with pytest.raises(TypeError, match=r"tracks\[0\].xy must be an array of real numbers"):
        tracks_spec([fake], num_envs=1, device="cpu")
