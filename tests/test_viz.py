"""track_gen.viz.plot_tracks: one axes per env, titles naming lengths or fail bits."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

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
