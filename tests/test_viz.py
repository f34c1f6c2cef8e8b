"""track_gen.viz.plot_tracks: one axes per env, titles naming lengths or fail bits."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from track_gen import FailBit, TrackGenConfig, TrackGenerator  # noqa: E402
from track_gen.viz import describe_fail_mask, plot_tracks  # noqa: E402


def _titles(fig):
    return [ax.get_title() for ax in fig.axes]


def test_valid_batch_titles_and_axes(tmp_path):
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=5, device="cpu"), seeds=2)
    track = gen.generate()
    assert track.valid.numpy().all()
    path = tmp_path / "v.png"
    fig = plot_tracks(track, envs=[0, 3, 4], ncols=2, path=path, title="three")
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 3
    length = track.length.numpy()
    assert _titles(fig) == [f"env {e} (L={length[e]:.2f})" for e in (0, 3, 4)]
    ax = fig.axes[0]
    assert ax.get_xticks().size == 0 and ax.get_yticks().size == 0
    assert ax.get_aspect() == 1.0
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_default_envs_and_int_envs():
    gen = TrackGenerator(TrackGenConfig(generator="bezier", num_envs=3, device="cpu"))
    track = gen.generate()
    assert len(plot_tracks(track).axes) == 3
    assert len(plot_tracks(track, envs=2).axes) == 2
    with pytest.raises(ValueError, match="outside"):
        plot_tracks(track, envs=[3])


def test_invalid_env_title_names_fail_bits():
    # N_max=8 cannot hold a loop: every env is TRUNCATED (some also TURNING).
    cfg = TrackGenConfig(generator="bezier", num_envs=4, device="cpu", N_max=8)
    track = TrackGenerator(cfg, seeds=0).generate()
    fail = track.fail_mask.numpy()
    assert (track.valid.numpy() == 0).all()
    assert all(f & FailBit.TRUNCATED for f in fail)
    fig = plot_tracks(track)
    for e, (ax, f) in enumerate(zip(fig.axes, fail, strict=True)):
        assert ax.get_title() == f"env {e}: {describe_fail_mask(f)}"
        assert "TRUNCATED" in ax.get_title()


def test_unbuilt_batch_is_drawable():
    gen = TrackGenerator(TrackGenConfig(generator="polar", num_envs=2, device="cpu"))
    fig = plot_tracks(gen.result)  # construction builds nothing: NaN rows, generation -1
    assert _titles(fig) == ["env 0: not built", "env 1: not built"]


def test_describe_fail_mask():
    assert describe_fail_mask(0) == ""
    assert describe_fail_mask(FailBit.TURNING | FailBit.THICKNESS) == "TURNING|THICKNESS"
    assert describe_fail_mask(int(FailBit.DEGENERATE) | 1024) == "DEGENERATE|0x400"
    assert describe_fail_mask(int(FailBit.CROSSING_BARS)) == "CROSSING_BARS"


# ----------------------------------------------------------------------------- elevation
def _colorbars(fig):
    return [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]


def _artist_kinds(fig):
    return [sorted(type(a).__name__ for a in ax.get_children()) for ax in fig.axes]


def _elevated(num_envs=3, **kw):
    cfg = TrackGenConfig(
        generator="polar",
        num_envs=num_envs,
        device="cpu",
        z_profile="noise",
        z_min=0.1,
        z_max=0.6,
        **kw,
    )
    return TrackGenerator(cfg, seeds=1).generate()


def test_elevated_track_is_coloured_by_height(tmp_path):
    from matplotlib.collections import PolyCollection

    track = _elevated()
    assert track.valid.numpy().all()
    path = tmp_path / "z.png"
    fig = plot_tracks(track, path=path)
    assert path.read_bytes()[:4] == b"\x89PNG"
    bars = _colorbars(fig)
    assert len(bars) == 1 and len(fig.axes) == 4  # three envs and one colorbar
    assert bars[0].get_ylabel() == "height (track units)"
    E, n_max = track.num_envs, track.N_max
    z = track.center.numpy().reshape(E, n_max, 3)[..., 2]
    count = track.count.numpy()
    beads = np.concatenate([z[e, : count[e]] for e in range(E)])
    for e, ax in enumerate(fig.axes[:3]):
        bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
        assert len(bands) == 1
        heights = bands[0].get_array()
        assert len(heights) == count[e]  # one quad per bead, the closing quad included
        assert 0.1 - 1e-6 <= heights.min() and heights.max() <= 0.6 + 1e-6
    norm = bands[0].norm
    assert norm.vmin == pytest.approx(beads.min()) and norm.vmax == pytest.approx(beads.max())
    assert norm.vmin < norm.vmax
    assert all(ax.get_title().startswith(f"env {e} (L=") for e, ax in enumerate(fig.axes[:3]))


def test_flat_track_draws_the_same_artists_as_before():
    track = TrackGenerator(TrackGenConfig(generator="polar", num_envs=3, device="cpu")).generate()
    auto, plain = plot_tracks(track), plot_tracks(track, color_by=None)
    assert not _colorbars(auto) and len(auto.axes) == 3
    assert _artist_kinds(auto) == _artist_kinds(plain)
    assert all(
        "PathPatch" in kinds and "PolyCollection" not in kinds for kinds in _artist_kinds(auto)
    )
    # an elevated track without colouring draws the flat picture's artists
    assert _artist_kinds(plot_tracks(_elevated(), color_by=None)) == _artist_kinds(plain)
    # forced: a flat track gets one colour and a colorbar around its single height
    forced = plot_tracks(track, color_by="height")
    (bar,) = _colorbars(forced)
    lo, hi = bar.get_ylim()
    assert lo < 0.0 < hi


def test_color_by_is_checked_and_invalid_envs_stay_red():
    from matplotlib.collections import PolyCollection

    with pytest.raises(ValueError, match="color_by"):
        plot_tracks(_elevated(num_envs=1), color_by="z")
    # N_max=8: every env TRUNCATED, none valid: red bands, nothing coloured by height
    track = _elevated(num_envs=2, N_max=8)
    assert (track.valid.numpy() == 0).all()
    fig = plot_tracks(track, color_by="height")
    assert not _colorbars(fig)
    assert not any(isinstance(c, PolyCollection) for ax in fig.axes for c in ax.collections)


@pytest.fixture(scope="module")
def three():
    return TrackGenerator(TrackGenConfig(generator="polar", num_envs=3, device="cpu")).generate()


@pytest.mark.parametrize(
    "kw, error, needle",
    [
        ({"envs": "abc"}, TypeError, "envs must be None, an int or a list"),
        ({"envs": 2.0}, TypeError, "envs must be None"),
        ({"envs": {0, 1}}, TypeError, "envs must be None"),
        ({"envs": [1.5]}, TypeError, "envs must be integers"),  # used to truncate to 1
        ({"envs": [True]}, TypeError, "envs must be integers"),  # used to draw env 1
        ({"envs": ["0"]}, TypeError, "envs must be integers"),
        ({"envs": np.array([0.0, 1.0])}, TypeError, "envs must be integers"),
        ({"envs": [[0]]}, ValueError, "nested"),
        ({"envs": []}, ValueError, "no envs to draw"),
        ({"envs": [3]}, ValueError, r"outside \[0, 3\)"),
        ({"envs": [0] * 257}, ValueError, "at most 256"),
        ({"envs": 0}, ValueError, "envs = 0 is out of range"),
        ({"ncols": 2.0}, TypeError, "ncols must be an int"),
        ({"ncols": 0}, ValueError, "ncols = 0 is out of range"),
        ({"title": 3}, TypeError, "title must be a str"),
        ({"color_by": 3}, TypeError, "color_by must be a str"),
        ({"path": 3}, TypeError, "path must be a str or os.PathLike"),
        ({"path": b"x.png"}, TypeError, "path must be a str"),
    ],
)
def test_arguments_are_checked_with_the_librarys_message(three, kw, error, needle):
    with pytest.raises(error, match=needle):
        plot_tracks(three, **kw)


@pytest.mark.parametrize("track", [3, None, "track", np.zeros(3)])
def test_a_track_of_the_wrong_kind(track):
    # plot_tracks(3) used to be an AttributeError
    with pytest.raises(TypeError, match="plot_tracks track must be a track_gen.Track"):
        plot_tracks(track)


def test_a_gate_sequence_is_not_a_track():
    from track_gen import GateGenConfig, GateGenerator

    gates = GateGenerator(GateGenConfig(generator="polar", num_envs=1, device="cpu")).generate()
    with pytest.raises(TypeError, match="got GateSequence"):
        plot_tracks(gates)


def test_env_selections_still_drawn(three):
    assert _titles(plot_tracks(three, envs=range(1, 3)))[0].startswith("env 1 ")
    assert len(plot_tracks(three, envs=np.array([2, 2], np.int64)).axes) == 2
    assert len(plot_tracks(three, envs=10**30).axes) == 3  # the first min(n, E) envs
    assert len(plot_tracks(three, envs=(0,), ncols=np.int64(4)).axes) == 1
