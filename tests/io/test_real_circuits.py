"""Real circuits through the whole library: read_tum -> tracks_spec -> TrackGenerator ->
write_tum / write_npz -> read_tum / rebuild (the CSV is the oracle)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

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


# ------------------------------------------------------------------------ whole circuits
#: The ten TUM circuits beside the checkout (``../shared/data/tum``); the tests below skip
#: when it is absent.
SHARED_TUM = Path(__file__).resolve().parents[3] / "shared" / "data" / "tum"


def _shared_circuits() -> list[RealTrack]:
    paths = sorted(SHARED_TUM.glob("*.csv"))
    if not paths:
        pytest.skip(f"no circuits at {SHARED_TUM}")
    return [read_tum(p) for p in paths]


@pytest.mark.parametrize("spacing", [None, 3.0], ids=["default", "3m"])
def test_every_shared_circuit_is_valid_on_import(spacing):
    """Suzuka's figure eight crosses on a bridge (an overpass), Spa's La Source is tighter
    than its inner width at 3 m beads (narrowed there): both import whole, and say so."""
    tracks = _shared_circuits()
    kw = {} if spacing is None else {"spacing": spacing}
    gen = TrackGenerator(tracks_spec(tracks, num_envs=len(tracks), device="cpu", **kw), seeds=0)
    t = gen.generate()
    names = [x.name for x in tracks]
    assert t.valid.numpy().all(), [n for n, v in zip(names, t.valid.numpy(), strict=True) if not v]
    assert t.unit == "m"
    over = dict(zip(names, gen.diagnostics["real_track.overpasses"].numpy(), strict=True))
    narrowed = dict(zip(names, gen.diagnostics["real_track.narrowed"].numpy(), strict=True))
    if "Suzuka" in over:
        assert over["Suzuka"] == 1
    assert sum(over.values()) == over.get("Suzuka", 0)
    if spacing == 3.0 and "Spa" in narrowed:
        assert 0.5 < narrowed["Spa"] < 5.0
    for name, length in zip(names, t.length.numpy(), strict=True):
        want = next(x for x in tracks if x.name == name).length
        assert abs(length - want) / want < 0.01, name


def test_overpass_and_hairpin_repairs_can_be_switched_off():
    tracks = [t for t in _shared_circuits() if t.name == "Suzuka"]
    if not tracks:
        pytest.skip("Suzuka is not among the shared circuits")
    spec = tracks_spec(tracks, num_envs=1, device="cpu", overpasses=False)
    t = TrackGenerator(spec).generate()
    assert t.valid.numpy()[0] == 0  # the figure eight as a flat loop crosses itself


def _figure_eight(n=400, a=300.0, w=6.0) -> RealTrack:
    """A lemniscate of Gerono (one crossing at the origin, at 90 degrees, inside a segment
    of each pass)."""
    th = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False) + np.pi / n
    xy = np.stack([a * np.sin(th), a * np.sin(th) * np.cos(th)], axis=1)
    return RealTrack("eight", xy, np.full(n, w), np.full(n, w))


def test_a_figure_eight_is_an_overpass():
    eight = _figure_eight()
    gen = TrackGenerator(tracks_spec([eight], num_envs=2, device="cpu"))
    t = gen.generate()
    assert t.valid.numpy().tolist() == [1, 1]
    assert gen.diagnostics["real_track.overpasses"].numpy().tolist() == [1, 1]
    flat = TrackGenerator(tracks_spec([eight], num_envs=1, device="cpu", overpasses=False))
    assert flat.generate().valid.numpy()[0] == 0
    with pytest.raises(TypeError, match="overpasses"):
        tracks_spec([eight], num_envs=1, device="cpu", overpasses="yes")
    with pytest.raises(TypeError, match="narrow"):
        tracks_spec([eight], num_envs=1, device="cpu", narrow=1)


def test_tum_round_trip_in_metres_keeps_the_length(tmp_path):
    """A circuit in metres exports under the TUM headers as it is and reads back at its
    length; a track-unit course says so in the file and reads back in track units."""
    from track_gen import TrackGenConfig
    from track_gen.pipeline import presets

    gen = TrackGenerator(presets.circuit(2, device="cpu"), seeds=4)
    t = gen.generate()
    for e in range(2):
        path = tmp_path / f"c{e}.csv"
        write_tum(t, e, path)
        assert path.read_text().splitlines()[1][0] != "#"  # metres: the layout as it is
        back = read_tum(path)
        assert back.unit == "m"
        assert back.length == pytest.approx(float(t.length.numpy()[e]), rel=1e-5)
        again = TrackGenerator(tracks_spec([back], num_envs=1, device="cpu", spacing=4.0))
        t2 = again.generate()
        assert t2.valid.numpy()[0] == 1 and t2.unit == "m"
        assert t2.length.numpy()[0] == pytest.approx(back.length, rel=2e-3)
    small = TrackGenerator(TrackGenConfig(num_envs=1, device="cpu"), seeds=1).generate()
    write_tum(small, 0, tmp_path / "b.csv")
    assert (tmp_path / "b.csv").read_text().splitlines()[1] == "# unit: track units"
    back = read_tum(tmp_path / "b.csv")
    assert back.unit == "track units"
    assert back.length == pytest.approx(float(small.length.numpy()[0]), rel=1e-5)
    assert (
        TrackGenerator(tracks_spec([back], num_envs=1, device="cpu")).result.unit == "track units"
    )
