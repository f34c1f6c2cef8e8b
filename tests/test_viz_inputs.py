"""``viz.plot_tracks`` and ``io.plot_real_tracks``: every argument of every kind is refused
with the library's TypeError / ValueError (checks.py's rule) before anything is drawn, or
draws one axes per env / circuit. One argument varies at a time, the others valid."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytest.importorskip("matplotlib")

from track_gen import TrackGenConfig, TrackGenerator  # noqa: E402
from track_gen.io import RealTrack, plot_real_tracks  # noqa: E402
from track_gen.io.tum import MAX_PANELS  # noqa: E402
from track_gen.viz import MAX_SHOWN, plot_tracks  # noqa: E402

from .io import oval  # noqa: E402
from .support.strategies import (  # noqa: E402
    boundary_ints,
    examples,
    expected_host_values,
    is_int,
    non_int_scalars,
    other_objects,
)

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 3
FIXTURE_OK = [HealthCheck.function_scoped_fixture]


@pytest.fixture(scope="module")
def track():
    return TrackGenerator(TrackGenConfig(generator="polar", num_envs=E, device="cpu")).generate()


def expected_envs(envs):
    """``(error, number of envs drawn)`` of ``plot_tracks(envs=envs)``."""
    if envs is None:
        return None, E
    if is_int(envs):
        return (None, min(int(envs), E)) if envs >= 1 else (ValueError, 0)
    if not isinstance(envs, (list, tuple, range, np.ndarray)):
        return TypeError, 0
    err, items = expected_host_values(envs, "int")
    if err is not None:
        return err, 0
    if not items or any(not 0 <= v < E for v in items) or len(items) > MAX_SHOWN:
        return ValueError, 0
    return None, len(items)


def expected_count(value, lo, hi=None):
    if value is None:
        return None
    if not is_int(value):
        return TypeError
    return None if lo <= value and (hi is None or value <= hi) else ValueError


def expected_choice(value, choices):
    if value is None:
        return None
    if not isinstance(value, str):
        return TypeError
    return None if value in choices else ValueError


ENVS = st.one_of(
    st.none(),
    boundary_ints,
    non_int_scalars,
    st.lists(st.one_of(st.integers(-1, E), non_int_scalars), max_size=4),
    st.lists(st.integers(0, E - 1), min_size=MAX_SHOWN, max_size=MAX_SHOWN + 1),
    st.sampled_from([range(1, 3), (0, 2), np.array([1, 2]), np.array([0.0]), np.zeros((1, 1))]),
    st.sampled_from(other_objects(E)),
)
COUNTS = st.one_of(st.none(), boundary_ints, non_int_scalars, st.sampled_from(other_objects(E)))
TEXTS = st.one_of(
    st.none(),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=8),  # glyphs we have
    st.sampled_from(other_objects(E)),
)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    which=st.sampled_from(["track", "envs", "ncols", "title", "color_by"]),
    data=st.data(),
)
def test_plot_tracks_arguments(track, which, data):
    kw = {"envs": None, "ncols": None, "title": None, "color_by": "auto"}
    target, want, shown = track, None, E
    if which == "track":
        target = data.draw(st.sampled_from(other_objects(E)))
        want = TypeError
    elif which == "envs":
        kw["envs"] = data.draw(ENVS)
        want, shown = expected_envs(kw["envs"])
    elif which == "ncols":
        kw["ncols"] = data.draw(COUNTS)
        want = expected_count(kw["ncols"], 1)
    elif which == "title":
        kw["title"] = data.draw(TEXTS)
        want = None if kw["title"] is None or isinstance(kw["title"], str) else TypeError
    else:
        kw["color_by"] = data.draw(st.one_of(st.sampled_from(["auto", "height", "z", ""]), TEXTS))
        want = expected_choice(kw["color_by"], ("auto", "height"))
    event(f"{which}: {'drawn' if want is None else want.__name__}")
    if want is not None:
        with pytest.raises(want, match=which if which != "track" else "track_gen.Track"):
            plot_tracks(target, **kw)
        return
    if shown > 16:
        return  # accepted; hundreds of panels are slow to lay out
    fig = plot_tracks(target, **kw)
    colorbar = kw["color_by"] == "height"  # a flat track: one colour, one colorbar
    assert len(fig.axes) == shown + colorbar


def _square(name="sq"):
    xy, wr, wl = oval(12)
    return RealTrack(name, xy, wr, wl)


@settings(max_examples=examples(40), deadline=None)
@given(
    which=st.sampled_from(["tracks", "columns", "title"]),
    data=st.data(),
)
def test_plot_real_tracks_arguments(which, data):
    tracks, kw, want = [_square()], {"columns": None, "title": None}, None
    if which == "tracks":
        tracks = data.draw(
            st.one_of(
                st.sampled_from(other_objects(2)),
                st.lists(st.sampled_from([_square(), None, 3, "x"]), max_size=3),
                st.integers(0, MAX_PANELS + 1).map(lambda n: [_square()] * n),
                st.just(_square()),
                st.just((_square(), _square("b"))),
            )
        )
        if isinstance(tracks, RealTrack):
            want = None
        elif not isinstance(tracks, (list, tuple)):
            want = TypeError
        elif not all(isinstance(t, RealTrack) for t in tracks):
            want = TypeError
        else:
            want = None if 1 <= len(tracks) <= MAX_PANELS else ValueError
        if want is None and not isinstance(tracks, RealTrack) and len(tracks) > 8:
            return  # accepted; many panels are slow to lay out
    elif which == "columns":
        kw["columns"] = data.draw(COUNTS)
        want = expected_count(kw["columns"], 1, MAX_PANELS)
    else:
        kw["title"] = data.draw(TEXTS)
        want = None if kw["title"] is None or isinstance(kw["title"], str) else TypeError
    event(f"{which}: {'drawn' if want is None else want.__name__}")
    if want is not None:
        with pytest.raises(want, match=which):
            plot_real_tracks(tracks, None, **kw)
        return
    fig = plot_real_tracks(tracks, None, **kw)
    assert len(fig.axes) == (1 if isinstance(tracks, RealTrack) else len(tracks))
