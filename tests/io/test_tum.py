"""read_tum / RealTrack / write_tum: the TUM racetrack-database CSV layout, in and out."""

from __future__ import annotations

import numpy as np
import pytest

from track_gen import TrackGenConfig, TrackGenerator
from track_gen.io import TUM_HEADER, RealTrack, read_tum, write_tum

from . import CIRCUITS, HEADER, polyline_length, write_csv


@pytest.mark.parametrize("name", sorted(CIRCUITS))
def test_read_matches_the_csv_polyline(tmp_path, name):
    xy, wr, wl = CIRCUITS[name]()
    path = write_csv(tmp_path / f"{name}.csv", xy, wr, wl)
    oracle = np.loadtxt(path, delimiter=",", comments="#")
    t = read_tum(path)
    assert t.name == name
    assert t.xy.dtype == np.float64 and t.xy.shape == (len(xy), 2)
    np.testing.assert_array_equal(t.xy, oracle[:, :2])
    np.testing.assert_array_equal(t.width_right, oracle[:, 2])
    np.testing.assert_array_equal(t.width_left, oracle[:, 3])
    assert t.length == pytest.approx(polyline_length(oracle[:, :2]), rel=1e-12)
    assert not t.xy.flags.writeable


def test_oval_length_and_borders(tmp_path):
    xy, wr, wl = CIRCUITS["oval"](400)
    t = read_tum(write_csv(tmp_path / "oval.csv", xy, wr, wl))
    exact = 4 * 100.0 + 2 * np.pi * 60.0  # the stadium's perimeter; the polygon is inscribed
    assert exact * 0.995 < t.length <= exact
    left, right = t.borders()
    # counter-clockwise oval: the left border is inside, at the left width from the centre
    np.testing.assert_allclose(np.hypot(*(left - t.xy).T), wl, rtol=1e-12)
    np.testing.assert_allclose(np.hypot(*(right - t.xy).T), wr, rtol=1e-12)
    straight = np.abs(t.xy[:, 1] + 60.0) < 1e-9  # bottom straight, driven in +x
    straight[[0, -1]] = False
    assert np.allclose(left[straight, 1], -60.0 + 6.0) and np.allclose(right[straight, 1], -65.0)


def test_layout_variants_are_accepted(tmp_path):
    xy, wr, wl = CIRCUITS["variable"]()
    plain = read_tum(write_csv(tmp_path / "a.csv", xy, wr, wl))
    # closing duplicate dropped, no header, comments, spaces and blank lines tolerated
    p = write_csv(tmp_path / "b.csv", xy, wr, wl, header=False, close=True)
    lines = p.read_text().splitlines()
    lines = ["# a comment", *(f"  {ln.replace(',', ' , ')}  " for ln in lines), "", "  ", ""]
    lines.insert(3, "")
    p.write_text("\n".join(lines))
    other = read_tum(p)
    np.testing.assert_array_equal(other.xy, plain.xy)
    np.testing.assert_array_equal(other.width_left, plain.width_left)
    assert other.name == "b"


def _rows(n=6):
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return [f"{10 * np.cos(a):.3f},{10 * np.sin(a):.3f},2.0,2.5" for a in t]


@pytest.mark.parametrize(
    "edit, needles",
    [
        (lambda r: r.__setitem__(3, "1.0,2.0,3.0,abc"), ["line 4", "w_tr_left_m", "'abc'"]),
        (lambda r: r.__setitem__(1, "x,2.0,3.0,1.0"), ["line 2", "x_m", "'x'"]),
        (lambda r: r.__setitem__(2, "1.0,2.0,3.0"), ["line 3", "expected 4 columns", "got 3"]),
        (lambda r: r.__setitem__(2, "1,2,3,4,5"), ["line 3", "got 5"]),
        (lambda r: r.__setitem__(4, "1.0,nan,3.0,1.0"), ["line 5", "y_m", "'nan'", "finite"]),
        (lambda r: r.__setitem__(4, "1.0,2.0,inf,1.0"), ["line 5", "w_tr_right_m", "'inf'"]),
        (lambda r: r.__setitem__(5, "1.0,2.0,0,1.0"), ["line 6", "w_tr_right_m", "'0'", "> 0"]),
        (lambda r: r.__setitem__(5, "1.0,2.0,1,-2"), ["line 6", "w_tr_left_m", "'-2'"]),
        (lambda r: r.insert(3, r[2]), ["line 4", "repeats the point of line 3"]),
        (lambda r: r.__delitem__(slice(4, None)), ["3 distinct points", "at least 4"]),
        (lambda r: r.__delitem__(slice(2, None)), ["1 distinct points"]),
        (lambda r: r.__delitem__(slice(1, None)), ["no data rows"]),
        (lambda r: r.__setitem__(0, "# y_m,x_m,w_tr_right_m,w_tr_left_m"), ["line 1", "header"]),
    ],
)
def test_malformed_files_name_line_column_value(tmp_path, edit, needles):
    rows = [HEADER, *_rows()]
    edit(rows)
    p = tmp_path / "track.csv"
    p.write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError) as info:
        read_tum(p)
    msg = str(info.value)
    assert "track.csv" in msg
    for needle in needles:
        assert needle in msg, (needle, msg)


def test_missing_file_folder_and_binary(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        read_tum(tmp_path / "nope.csv")
    with pytest.raises(IsADirectoryError):
        read_tum(tmp_path)
    p = tmp_path / "bin.csv"
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match="UTF-8"):
        read_tum(p)
    with pytest.raises(TypeError, match="path"):
        read_tum(3)


def test_realtrack_checks_its_fields():
    xy = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    w = np.ones(4)
    t = RealTrack("sq", xy, w, 2 * w)
    assert t.length == 4.0 and t.num_points == 4
    with pytest.raises(ValueError, match=r"shape \[N, 2\]"):
        RealTrack("x", xy[:, 0], w, w)
    with pytest.raises(ValueError, match=r"width_left must have shape \[4\]"):
        RealTrack("x", xy, w, w[:3])
    with pytest.raises(ValueError, match="at least 4"):
        RealTrack("x", xy[:3], w[:3], w[:3])
    with pytest.raises(ValueError, match=r"width_right\[2\]"):
        RealTrack("x", xy, np.array([1.0, 1.0, 0.0, 1.0]), w)
    with pytest.raises(ValueError, match="not finite"):
        RealTrack("x", np.where(xy == 1.0, np.nan, xy), w, w)
    with pytest.raises(ValueError, match="same point"):
        RealTrack("x", np.concatenate([xy, xy[:1]]), np.ones(5), np.ones(5))
    with pytest.raises(TypeError, match="name"):
        RealTrack(None, xy, w, w)


@pytest.mark.parametrize("field", ["xy", "width_right", "width_left"])
@pytest.mark.parametrize(
    "cast",
    [
        lambda a: a + 0.5j,  # complex: used to lose the imaginary part silently
        lambda a: a.astype(np.complex64),
        lambda a: a > 0,  # bool
        lambda a: a.astype(str),
        lambda a: np.full(a.shape, None),  # object elements that are not numbers
        lambda a: a.astype("datetime64[s]"),
    ],
)
def test_realtrack_refuses_non_real_arrays(field, cast):
    xy = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    fields = {"xy": xy, "width_right": np.ones(4), "width_left": np.full(4, 2.0)}
    fields[field] = cast(fields[field])
    with pytest.raises(TypeError, match=f"RealTrack.{field} must be an array of real numbers"):
        RealTrack("x", **fields)


def test_realtrack_takes_ints_and_number_objects():
    xy = [[0, 0], [1, 0], [1, 1], [0, 1]]
    t = RealTrack("x", np.array(xy, dtype=object), [1, 1, 1, 1], np.ones(4, np.float32))
    assert t.xy.dtype == np.float64 and t.xy.tolist() == [
        [0.0, 0.0],
        [1.0, 0.0],
        [1.0, 1.0],
        [0.0, 1.0],
    ]
    with pytest.raises(ValueError, match="real numbers"):
        RealTrack("x", xy, [1, 1, 1, 10**400], np.ones(4))


@pytest.fixture(scope="module")
def batch():
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=4, device="cpu"), seeds=3)
    gen.generate()
    return gen.result


def _oracle_widths(track, e):
    n_max, n = track.N_max, int(track.count.numpy()[e])
    rows = slice(e * n_max, e * n_max + n)
    c, o, i = (
        getattr(track, k).numpy()[rows].astype(np.float64) for k in ("center", "outer", "inner")
    )
    nrm = track.normal.numpy()[rows].astype(np.float64)
    outer_is_left = np.sum((o - c)[:, :2] * nrm[:, :2]) > 0
    left, right = (o, i) if outer_is_left else (i, o)
    return c, np.linalg.norm((right - c)[:, :2], axis=1), np.linalg.norm((left - c)[:, :2], axis=1)


def test_write_tum_round_trips(tmp_path, batch):
    for e in range(batch.num_envs):
        path = tmp_path / f"env{e}.csv"
        write_tum(batch, e, path)
        assert path.read_text().splitlines()[0] == TUM_HEADER
        t = read_tum(path)
        c, wr, wl = _oracle_widths(batch, e)
        assert t.num_points == int(batch.count.numpy()[e])
        np.testing.assert_array_equal(t.xy.astype(np.float32), c[:, :2].astype(np.float32))
        np.testing.assert_array_equal(t.xy, c[:, :2])  # exact: float32 values written in full
        np.testing.assert_allclose(t.width_right, wr, rtol=1e-6)
        np.testing.assert_allclose(t.width_left, wl, rtol=1e-6)
        np.testing.assert_allclose(t.width_left, 0.1, rtol=1e-3)  # the config's half width
        assert t.length == pytest.approx(float(batch.length.numpy()[e]), rel=1e-5)


def test_write_tum_refuses_bad_envs(tmp_path, batch):
    path = tmp_path / "x.csv"
    with pytest.raises(ValueError, match="out of range"):
        write_tum(batch, 4, path)
    with pytest.raises(ValueError, match="out of range"):
        write_tum(batch, -1, path)
    with pytest.raises(TypeError, match="env must be an int"):
        write_tum(batch, True, path)
    with pytest.raises(TypeError, match="env must be an int"):
        write_tum(batch, 1.0, path)
    with pytest.raises(TypeError, match="Track"):
        write_tum(batch.center, 0, path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_tum(batch, 0, tmp_path / "no" / "x.csv")
    with pytest.raises(IsADirectoryError):
        write_tum(batch, 0, tmp_path)
    truncated = TrackGenerator(
        TrackGenConfig(generator="polar", num_envs=2, device="cpu", N_max=64), seeds=0
    )
    with pytest.raises(ValueError, match="env 1 is invalid .*never generated"):
        write_tum(truncated.result, 1, path)
    truncated.generate()
    with pytest.raises(ValueError, match="env 0 is invalid .*TRUNCATED"):
        write_tum(truncated.result, 0, path)
    assert not path.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args, kw, error, needle",
    [
        ((3,), {}, TypeError, "tracks must be a RealTrack or a list"),  # used: raw TypeError
        (("Monza.csv",), {}, TypeError, "tracks must be a RealTrack or a list"),
        (([None],), {}, TypeError, "RealTracks only, got a NoneType"),
        (([],), {}, ValueError, "0 circuits"),
        ((None,), {"columns": 0}, ValueError, "columns = 0 is out of range"),
        ((None,), {"columns": 2.5}, TypeError, "columns must be an int"),
        ((None,), {"title": 3}, TypeError, "title must be a str"),
    ],
)
def test_plot_real_tracks_checks_its_arguments(tmp_path, args, kw, error, needle):
    pytest.importorskip("matplotlib")
    from track_gen.io import plot_real_tracks

    xy = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    square = RealTrack("sq", xy, np.full(4, 0.1), np.full(4, 0.1))
    tracks = square if args[0] is None else args[0]
    with pytest.raises(error, match=needle):
        plot_real_tracks(tracks, tmp_path / "x.png", **kw)
    with pytest.raises(ValueError, match="at most|1 to 256"):
        plot_real_tracks([square] * 257, None)
    assert list(tmp_path.iterdir()) == []
