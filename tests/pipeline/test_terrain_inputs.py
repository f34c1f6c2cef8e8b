"""Elevation and terrain inputs: the elevation fields of an elevated generator (``z_profile``,
``z_base``, ``z_min``, ``z_max``, ``z_max_step``, ``z_knots``, ``z_valid_grade``), their
per-env ``params["elevate.*"]`` writes and randomizers, ``GateGenConfig.z_knots``, and every
constructor argument of ``HeightFieldBake`` / ``HeightFieldUtility``, ``Props`` /
``PropsUtility``, ``BandCollisionUtility`` / ``BandCollision`` (``clearance``, ``size_hi``),
``CourseConfig(heightfield_resolution=...)``, and the accepted arguments of
``check_grid_resolution``.

``test_config_fields.py`` fuzzes each elevation field alone on the default (flat) profile,
where the track pipeline has no ``elevate`` stage: what it misses is fuzzed here. An
accepted elevated config, randomizer or params write generates batches where every valid
env (and every env failing GRADE alone) has finite rows, a level road and heights inside its
``[min(z_min, z_max), max(z_min, z_max)]``, and ``FailBit.GRADE`` is set exactly when the
steepest bead-to-bead grade ``|dz| / plan distance`` exceeds ``z_valid_grade > 0``.

A constructor call either succeeds, storing Python values, or raises the documented error of
its first refused argument (in the constructor's check order), naming it; an accepted
baker / placer / collider answers: a valid env's height field is finite with its fill off the
road, an invalid env's is NaN with nothing on the road; a valid env's props are finite and an
invalid env has none; box queries of an elevated track with any agent state answer ``oob`` in
{0, 1} and a ``height`` NaN or finite. Masked bakes / placements leave the unmasked envs
bitwise, an all-zero mask changes nothing, a refused mask changes nothing.

The tests at the end pin the bugs this suite found (each fixed).
"""

from __future__ import annotations

import math
import types
import warnings
from typing import NamedTuple

import numpy as np
import pytest
import warp as wp
from hypothesis import event, given, settings
from hypothesis import strategies as st

from track_gen import FailBit, GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from track_gen.core.extents import EXTENT
from track_gen.core.tunable import Tunable
from track_gen.course import Course, CourseConfig
from track_gen.pipeline import presets
from track_gen.stages.elevate import (
    Z_BASE,
    Z_KNOTS,
    Z_MAX,
    Z_MAX_STEP,
    Z_MIN,
    Z_VALID_GRADE,
)
from track_gen.tools import (
    BandCollision,
    BandCollisionUtility,
    GridResolutionWarning,
    HeightFieldBake,
    HeightFieldUtility,
    Props,
    PropsUtility,
    check_grid_resolution,
)
from track_gen.tools.band_collision import (
    CLEARANCE,
    MAX_BOXES,
    METHOD,
    SDF_PADDING,
    SDF_RESOLUTION,
)
from track_gen.tools.heightfield import FILL, MARGIN, MIN_TEXELS_ACROSS, RESOLUTION, SIZE_HI
from track_gen.tools.props import (
    CONE_DIAMETER,
    CONE_HEIGHT,
    KIND,
    MAX_PROPS,
    SIDE,
    SPACING,
    WALL_HEIGHT,
    WALL_THICKNESS,
    border_length_bound,
)

from ..support.invariants import check_gates, check_track
from ..support.strategies import (
    agent_rows,
    examples,
    expected_config_error,
    expected_error,
    in_float_range,
    in_range,
    mask_contents,
    refused_masks,
    values,
)

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

#: Envs of the shared course: an elevated ``noise`` course whose ``z_valid_grade`` lies
#: between the envs' steepest grades, so some envs are valid and some fail GRADE.
E = 6
SEED = 0
Z_RANGE = {"z_min": -0.3, "z_max": 0.4}
HF_RES = 64
CLEAR = 0.05
GRADE = int(FailBit.GRADE)
PARAM_RANGE = int(FailBit.PARAM_RANGE)
#: Envs of the fuzzed generators.
GEN_E = 4
PROFILES = ("uniform", "random_walk", "noise")
#: Largest grid side baked per example (an accepted larger one is checked without a bake).
CHEAP_RES = 256
#: PropsUtility's ``max_loop_length`` (checked by ``check_float``, not a Tunable).
MAX_LOOP = Tunable("max_loop_length", 1.0, kind="float", lo=1e-6, hi=1.0e12)
#: Component names: None (the default), accepted strs, and refused values.
NAMES = [None, "acme.terrain", "collision", "x", np.str_("acme.np"), "", 3, b"name", ["a"]]


# ------------------------------------------------------------------------------ shared state
def steepest_grades(track) -> np.ndarray:
    """Per env, the steepest ``|dz| / plan distance`` between consecutive beads (closing pair
    included) in float32, as the elevate kernel computes it; -inf for an env of fewer than 4
    beads (never elevated), NaN where a row is not finite (no oracle)."""
    n_env, n_max = track.num_envs, track.N_max
    center = track.center.numpy().reshape(n_env, n_max, 3)
    count = track.count.numpy()
    out = np.full(n_env, np.nan)
    for e in range(n_env):
        n = int(count[e])
        if n < 4:
            out[e] = -np.inf
            continue
        p = center[e, :n]
        if not np.isfinite(p).all():
            continue
        d = np.roll(p, -1, axis=0) - p
        plan = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
        ok = plan > 0
        grades = np.abs(d[ok, 2]) / plan[ok]
        out[e] = float(grades.max()) if grades.size else 0.0
    return out


_CACHE: dict = {}


def shared(device) -> dict:
    """Built once per device: the elevated course (collision with a clearance, height field,
    props), a generator of the same spec that the component tests attach to, a one-env
    track, and the bakers / placers the mask tests poison and rebake."""
    key = str(device)
    if key not in _CACHE:
        probe = TrackGenerator(
            presets.track(num_envs=E, device=device, z_profile="noise", **Z_RANGE), seeds=SEED
        ).generate()
        steep = np.sort(steepest_grades(probe))
        limit = float(0.5 * (steep[E // 2 - 1] + steep[E // 2]))
        spec = presets.track(
            num_envs=E, device=device, z_profile="noise", z_valid_grade=limit, **Z_RANGE
        )
        course = Course.track(
            spec,
            checkpoint_spacing=0.6,
            collision=BandCollision(clearance=CLEAR),
            extra=[HeightFieldBake(HF_RES), Props("cone", spacing=0.2)],
            seeds=SEED,
        )
        track = course.result
        valid = track.valid.numpy() != 0
        assert valid.any() and not valid.all(), f"the shared course needs both kinds: {valid}"
        assert (track.fail_mask.numpy()[~valid] == GRADE).all()
        attach = TrackGenerator(spec, seeds=SEED)
        attach.generate()
        one = TrackGenerator(
            presets.track(num_envs=1, device=device, z_profile="noise", **Z_RANGE), seeds=SEED
        ).generate()
        _CACHE[key] = {
            "course": course,
            "track": track,
            "attach": attach,
            "one": one,
            "baker": HeightFieldUtility(track, resolution=32),
            "placers": {
                k: PropsUtility(track, k, 0.15, "both", max_props=96) for k in ("cone", "wall")
            },
        }
    return _CACHE[key]


# ------------------------------------------------------------------------------ helpers
def names(err: BaseException, *words: str) -> None:
    text = str(err)
    assert any(w in text for w in words), f"{type(err).__name__} {text!r} names none of {words}"


def name_error(value):
    """The Component rule: None or a non-empty str, else TypeError (an empty str included,
    as ``tests/tools/test_props.py`` pins)."""
    return None if value is None or (isinstance(value, str) and value) else TypeError


class Arg(NamedTuple):
    """An argument's strategies: ``any`` value (refused ones mostly) and ``ok`` (accepted)."""

    any: st.SearchStrategy
    ok: st.SearchStrategy


def fuzzed(t: Tunable, extra: st.SearchStrategy | None = None) -> Arg:
    """:func:`values` and :func:`in_range` of ``t``, with ``extra`` accepted values (small,
    cheap ones)."""
    if extra is not None:  # what the declaration accepts (no float32 denormal or 0)
        extra = extra.filter(lambda v: expected_error(t, v) is None)
    ok = in_range(t) if extra is None else st.one_of(in_range(t), extra)
    return Arg(st.one_of(values(t), ok), ok)


NAME = Arg(st.sampled_from(NAMES), st.sampled_from([n for n in NAMES if name_error(n) is None]))


def draw_args(data, fields: dict[str, Arg]) -> dict:
    """Each argument left out (2 in 5), drawn accepted (2 in 5) or drawn from any value (1 in
    5): a call of many arguments is often accepted, each argument often refused."""
    kw = {}
    for name, arg in fields.items():
        mode = data.draw(st.integers(0, 4), label=f"mode {name}")
        if mode >= 2:
            kw[name] = data.draw(arg.ok if mode < 4 else arg.any, label=name)
    return kw


def first_refusal(kw: dict, order) -> tuple[type | None, str | None]:
    """The error of the first refused argument of ``kw`` in check ``order`` (``(name,
    tunable)`` pairs; tunable None: a component name)."""
    for name, t in order:
        if name not in kw:
            continue
        err = name_error(kw[name]) if t is None else expected_error(t, kw[name])
        if err is not None:
            return err, name
    return None, None


def stored(t: Tunable, value, got) -> None:
    """An accepted value is stored as its Python kind."""
    if value is None:
        assert got is None
    elif t.kind == "int":
        assert type(got) is int and got == int(value), (t.name, value, got)
    elif t.kind == "float":
        assert type(got) is float and got == float(value), (t.name, value, got)
    else:
        assert got == value


def grid_warns(generator, resolution: int, size_hi=None, margin=None) -> bool:
    """The documented rule of ``check_grid_resolution``: the largest course's borders span at
    most ``EXTENT * scale + 2 * half_width``, plus the margin (10% each side when None); warn
    when the road gets fewer than ``MIN_TEXELS_ACROSS`` texels across."""
    cfg = generator.spec.config
    scale = float(cfg.scale) if size_hi is None else float(size_hi)
    hw = float(cfg.half_width)
    extent = EXTENT * scale + 2.0 * hw
    side = extent * (1.0 + 2.0 * 0.1) if margin is None else extent + 2.0 * float(margin)
    cell = side / int(resolution)
    return 2.0 * hw / cell < MIN_TEXELS_ACROSS


def attached(generator, components):
    """``Course(generator, components)`` and the GridResolutionWarning messages it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        course = Course(generator, components)
    return course, grid_warnings(caught)


def grid_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, GridResolutionWarning)]


def track_rows(track, name: str) -> np.ndarray:
    a = getattr(track, name).numpy()
    return a.reshape(track.num_envs, track.N_max, -1)


def usable(track) -> np.ndarray:
    """Envs a tool answers for: valid, with at least 3 beads."""
    return (track.valid.numpy() != 0) & (track.count.numpy() >= 3)


# ------------------------------------------------------------------------------ answers
def check_field(field, track, resolution: int, fill=None, margin=None) -> None:
    """A height field of ``track``: a valid env's frame and heights finite, the off-road
    texels at the fill (``fill``, else the env's lowest border height), the on-road ones
    within the borders' heights; an invalid env NaN with nothing on the road."""
    n_env = track.num_envs
    h = field.height.numpy().reshape(n_env, -1)
    road = field.on_road.numpy().reshape(n_env, -1)
    frame = field.frame.numpy()
    assert h.shape[1] == resolution * resolution and field.resolution == resolution
    assert np.isin(road, (0, 1)).all(), "on_road holds values other than 0/1"
    ok = usable(track)
    count = track.count.numpy()
    inner, outer = track_rows(track, "inner"), track_rows(track, "outer")
    for e in range(n_env):
        if not ok[e]:
            assert np.isnan(frame[e]).all(), f"invalid env {e}: frame {frame[e]}"
            assert np.isnan(h[e]).all(), f"invalid env {e} has heights"
            assert not road[e].any(), f"invalid env {e} has road texels"
            continue
        n = int(count[e])
        z = np.concatenate([inner[e, :n, 2], outer[e, :n, 2]])
        xy = np.concatenate([inner[e, :n, :2], outer[e, :n, :2]])
        assert np.isfinite(frame[e]).all() and frame[e, 2] > 0, f"env {e}: frame {frame[e]}"
        assert np.isfinite(h[e]).all(), f"valid env {e}: non-finite heights"
        want_fill = np.float32(z.min()) if fill is None else np.float32(fill)
        assert frame[e, 3] == want_fill, f"env {e}: fill {frame[e, 3]}, expected {want_fill}"
        assert (h[e][road[e] == 0] == frame[e, 3]).all(), f"env {e}: off-road != fill"
        on = h[e][road[e] == 1].astype(np.float64)
        tol = 1e-5 * float(np.abs(z).max()) + 1e-6
        assert (on >= z.min() - tol).all() and (on <= z.max() + tol).all(), f"env {e}"
        ext = float((xy.max(0) - xy.min(0)).max())
        side = ext * 1.2 if margin is None else ext + 2.0 * float(margin)
        want_cell = max(side / resolution, 1e-12)
        assert math.isclose(frame[e, 2], want_cell, rel_tol=1e-5), (frame[e], want_cell)


def _demand(length: float, spacing: float) -> tuple[int, bool]:
    """``(max(1, round(length / spacing)), near a rounding tie)``, halves up."""
    r = length / spacing
    n = max(1, math.floor(r + 0.5))
    frac = (r + 0.5) - math.floor(r + 0.5)
    return n, min(frac, 1.0 - frac) < 1e-6 * max(1.0, r)


def check_props(ps, track, kind: str, spacing: float, side: str, sizes) -> None:
    """A PropsResult of ``track``: counts within the capacity, rows past ``count`` NaN with side
    -1; an invalid env has none; a valid env's rows are finite, inner rows first, sizes as
    given, unit quaternions, and its count the documented demand (or the capacity, with
    ``truncated``)."""
    n_env, cap = ps.num_envs, ps.max_props
    assert ps.kind == kind
    count, trunc = ps.count.numpy(), ps.truncated.numpy()
    pos = ps.position.numpy().reshape(n_env, cap, 3)
    ori = ps.orientation.numpy().reshape(n_env, cap, 4)
    scl = ps.scale.numpy().reshape(n_env, cap, 3)
    sd = ps.side.numpy().reshape(n_env, cap)
    assert ((count >= 0) & (count <= cap)).all(), f"count {count} outside [0, {cap}]"
    assert np.isin(trunc, (0, 1)).all(), f"truncated {trunc}"
    ok = usable(track)
    beads = track.count.numpy()
    borders = {0: track_rows(track, "inner"), 1: track_rows(track, "outer")}
    used = {"both": (0, 1), "inner": (0,), "outer": (1,)}[side]
    d, ch, wt, wh = (np.float32(s) for s in sizes)
    for e in range(n_env):
        n = int(count[e])
        for a in (pos, ori, scl):
            assert np.isnan(a[e, n:]).all(), f"env {e}: rows past count {n} are not NaN"
        assert (sd[e, n:] == -1).all()
        if not ok[e]:
            assert n == 0 and trunc[e] == 0, f"invalid env {e}: count {n}, truncated {trunc[e]}"
            continue
        assert n >= 1, f"valid env {e} has no prop"
        for a in (pos, ori, scl):
            assert np.isfinite(a[e, :n]).all(), f"valid env {e}: non-finite prop rows"
        assert np.isin(sd[e, :n], used).all() and (np.diff(sd[e, :n]) >= 0).all()
        np.testing.assert_allclose(np.linalg.norm(ori[e, :n], axis=1), 1.0, atol=1e-5)
        if kind == "cone":
            assert (scl[e, :n] == np.array([d, d, ch], np.float32)).all()
        else:
            assert (scl[e, :n, 0] >= 0).all() and (scl[e, :n, 1:] == (wt, wh)).all()
        want, tie = 0, False
        for s in used:
            p = borders[s][e, : int(beads[e])]
            seg = np.sqrt(((np.roll(p, -1, axis=0) - p) ** 2).sum(axis=1))
            k, t = _demand(math.fsum(seg.astype(np.float64)), spacing)
            want, tie = want + k, tie or t
        if tie:
            continue
        if want > cap:
            assert trunc[e] == 1 and n == cap, f"env {e}: demand {want} > {cap}, count {n}"
        else:
            assert trunc[e] == 0 and n == want, f"env {e}: count {n}, demand {want}"


def check_contact(contact, track, boxes: int, pos, ori, half, clearance) -> None:
    """Box answers on an elevated track: ``oob`` 0/1 and ``height`` NaN or finite (None
    without a clearance); an invalid
    env answers oob 1 and NaN; a non-finite position an inactive slot (oob 0, NaN); an active
    slot of a valid env has a finite height (unless farther than 1e18 in plan view: the
    overflow ``test_far_box_height_is_finite`` pins), beyond the clearance it is oob."""
    rows = track.num_envs * boxes
    oob = contact.oob.numpy()
    dist = contact.distance.numpy()
    boundary = contact.boundary.numpy()
    if clearance is None:
        assert contact.height is None, "a collider without clearance holds heights"
        height = np.full(rows, np.nan, np.float32)
    else:
        height = contact.height.numpy()
    assert oob.shape == height.shape == dist.shape == boundary.shape == (rows,)
    assert np.isin(oob, (0, 1)).all(), f"oob {oob}"
    assert not np.isinf(height).any(), f"infinite height {height}"
    assert ((boundary >= -1) & (boundary <= 1)).all(), f"boundary {boundary}"
    env_ok = np.repeat(usable(track), boxes)
    pos_ok = np.isfinite(pos).all(axis=1)
    slot_ok = pos_ok & np.isfinite(ori).all(axis=1) & np.isfinite(half).all(axis=1)
    bad = ~env_ok
    assert (oob[bad] == 1).all() and np.isnan(height[bad]).all() and np.isnan(dist[bad]).all()
    assert (boundary[bad] == -1).all()
    idle = env_ok & ~pos_ok
    assert (oob[idle] == 0).all() and np.isnan(height[idle]).all() and np.isnan(dist[idle]).all()
    if clearance is None:  # the non-finite orientation / half extents case: a fixed finding below
        idle = env_ok & ~slot_ok
        assert (oob[idle] == 0).all() and np.isnan(dist[idle]).all()
        return
    near = env_ok & slot_ok & (np.abs(pos[:, :2]).max(axis=1, initial=0) < 1e18)
    assert np.isfinite(height[near]).all(), f"active slots without a height: {height[near]}"
    steep = near & (np.abs(height) > clearance)
    assert (oob[steep] == 1).all(), "a box beyond the clearance is on the road"
    # the height is the box's z minus a road height between the env's lowest and highest bead
    center = track_rows(track, "center")[..., 2]
    count = track.count.numpy()
    for r in np.flatnonzero(near & (np.abs(pos[:, 2]) < 1e3)):
        e = r // boxes
        z = center[e, : int(count[e])]
        road = float(pos[r, 2]) - float(height[r])
        tol = 1e-5 + 1e-6 * abs(float(pos[r, 2]))
        assert z.min() - tol <= road <= z.max() + tol, (r, road, z.min(), z.max())


# ------------------------------------------------------------------------------ elevation
def z_values(t: Tunable) -> st.SearchStrategy:
    """Accepted heights: anywhere in the range, small ones (grades on both sides of a limit)
    and the edges."""
    lo, hi = t.bounds()
    # a float32 denormal or a value that is 0 in float32 is refused (tests/core)
    small = st.floats(max(lo, -2.0), min(hi, 2.0), allow_nan=False).filter(
        lambda x: in_float_range(t, x, lo, hi)
    )
    edges = [lo, hi, 0.0, -0.0, 1.1754944e-38, 0.5]
    return st.one_of(in_range(t), small, st.sampled_from(edges))


def _nonzero_in_float32(g: float) -> bool:
    """False for a positive grade stored as float32 0 or a denormal (refused:
    ``test_z_valid_grade_...`` pins it)."""
    return g == 0 or np.float32(g) >= np.finfo(np.float32).tiny


grades = st.one_of(
    st.just(0.0), st.floats(0.01, 20.0), in_range(Z_VALID_GRADE), st.sampled_from([1e-37, 1e6])
).filter(_nonzero_in_float32)

DYNAMIC = {"z_base": Z_BASE, "z_min": Z_MIN, "z_max": Z_MAX, "z_max_step": Z_MAX_STEP}


def check_elevated(gen, grade: float) -> None:
    """The invariant, no PARAM_RANGE, a level road inside each env's height range for every
    valid env (and every env failing GRADE alone), and the GRADE oracle."""
    track = gen.result
    out = check_track(track)
    fail = out["fail"]
    assert not (fail & PARAM_RANGE).any(), f"an accepted value failed the device check: {fail}"
    lo_hi = np.stack([gen.params["elevate.z_min"].numpy(), gen.params["elevate.z_max"].numpy()])
    lo, hi = lo_hi.min(0).astype(np.float64), lo_hi.max(0).astype(np.float64)
    rows = {k: track_rows(track, k) for k in ("center", "inner", "outer", "tangent", "arclen")}
    count = out["count"]
    for e in np.flatnonzero((fail == 0) | (fail == GRADE)):
        n = int(count[e])
        for k, a in rows.items():
            assert np.isfinite(a[e, :n]).all(), f"env {e} (fail {fail[e]}): {k} not finite"
        z = rows["center"][e, :n, 2].astype(np.float64)
        assert (rows["inner"][e, :n, 2] == rows["center"][e, :n, 2]).all(), "road not level"
        assert (rows["outer"][e, :n, 2] == rows["center"][e, :n, 2]).all(), "road not level"
        tol = 1e-6 * max(abs(lo[e]), abs(hi[e])) + 1e-30
        assert (z >= lo[e] - tol).all() and (z <= hi[e] + tol).all(), (
            f"env {e}: heights [{z.min()}, {z.max()}] outside [{lo[e]}, {hi[e]}]"
        )
    bits = (fail & GRADE) != 0
    if grade == 0:
        assert not bits.any(), f"GRADE without a limit: {fail}"
        return
    steep = steepest_grades(track)
    g32 = float(np.float32(grade))
    for e in range(len(fail)):
        s = steep[e]
        if np.isnan(s):
            continue
        if s > g32 * (1 + 1e-5):
            assert bits[e], f"env {e}: steepest grade {s} > {grade} without GRADE"
        elif s < g32 * (1 - 1e-5):
            assert not bits[e], f"env {e}: GRADE with steepest grade {s} <= {grade}"


@settings(max_examples=examples(40))
@given(data=st.data())
def test_elevated_generation_params_and_randomizers(device, data):
    """An accepted elevated config (every elevation field drawn in range together), an
    optional randomizer of one elevation field and per-env params writes generate batches
    satisfying the invariant, heights inside each env's range and the GRADE rule."""
    draw = data.draw
    grade = draw(grades, label="z_valid_grade")
    kw = {
        "num_envs": GEN_E,
        "device": device,
        "num_points": 64,
        "z_profile": draw(st.sampled_from(PROFILES), label="z_profile"),
        "z_knots": draw(in_range(Z_KNOTS), label="z_knots"),
        "z_valid_grade": grade,
    }
    for name in ("z_base", "z_max_step"):
        if draw(st.booleans(), label=f"set {name}"):
            kw[name] = draw(z_values(DYNAMIC[name]), label=name)
    pair = sorted([draw(z_values(Z_MIN), label="z a"), draw(z_values(Z_MAX), label="z b")])
    kw["z_min"], kw["z_max"] = pair
    err, culprit = expected_config_error(TrackGenConfig, kw)
    assert err is None, (err, culprit)
    spec = presets.track(**kw)
    if draw(st.booleans(), label="randomize"):
        name = draw(st.sampled_from(["z_max", "z_max", *sorted(DYNAMIC)]), label="randomized")
        ends = sorted([draw(z_values(DYNAMIC[name])), draw(z_values(DYNAMIC[name]))])
        spec = spec.with_randomize({f"elevate.{name}": tuple(ends)})
        event(f"randomized {name}")
    gen = TrackGenerator(spec, seeds=draw(st.integers(0, 10**6), label="seed"))
    gen.generate()
    check_elevated(gen, grade)
    for name in draw(
        st.lists(st.sampled_from(sorted(DYNAMIC)), min_size=1, max_size=4, unique=True)
    ):
        per_env = draw(st.lists(z_values(DYNAMIC[name]), min_size=GEN_E, max_size=GEN_E))
        gen.params[f"elevate.{name}"] = per_env
        if f"elevate.{name}" not in gen.randomizers:
            got = gen.params[f"elevate.{name}"].numpy()
            assert got.tobytes() == np.asarray(per_env, np.float32).tobytes()
    gen.generate(advance=draw(st.booleans(), label="advance"))
    check_elevated(gen, grade)
    event("GRADE set" if (gen.result.fail_mask.numpy() & GRADE).any() else "no GRADE")


@settings(max_examples=examples(30))
@given(data=st.data())
def test_gate_z_knots_and_altitude_ranges(device, data):
    """GateGenConfig.z_knots fuzzed on an elevated gate profile: refused naming z_knots, or a
    batch satisfying the invariant with every valid gate inside ``[z_min, z_max]``."""
    draw = data.draw
    kw = {
        "num_envs": GEN_E,
        "device": device,
        "gate_width": 0.1,
        "z_profile": draw(st.sampled_from(PROFILES), label="z_profile"),
        "z_knots": draw(fuzzed(Z_KNOTS).any, label="z_knots"),
        "z_max_step": draw(z_values(Z_MAX_STEP), label="z_max_step"),
    }
    kw["z_min"], kw["z_max"] = sorted([draw(z_values(Z_MIN)), draw(z_values(Z_MAX))])
    err, culprit = expected_config_error(GateGenConfig, kw)
    event(f"{err.__name__} {culprit}" if err else "accepted")
    if err is not None:
        assert culprit == "z_knots"
        with pytest.raises(err, match="z_knots"):
            GateGenConfig(**kw)
        return
    cfg = GateGenConfig(**kw)
    assert type(cfg.z_knots) is int and cfg.z_knots == int(kw["z_knots"])
    seq = GateGenerator(cfg, seeds=draw(st.integers(0, 10**6), label="seed")).generate()
    out = check_gates(seq, cfg.min_gates)
    assert not (out["fail"] & PARAM_RANGE).any()
    z = seq.position.numpy().reshape(GEN_E, seq.max_gates, 3)[..., 2].astype(np.float64)
    lo, hi = float(np.float32(cfg.z_min)), float(np.float32(cfg.z_max))
    tol = 1e-6 * max(abs(lo), abs(hi)) + 1e-30
    for e in np.flatnonzero(out["valid"]):
        ze = z[e, : int(out["count"][e])]
        assert (ze >= lo - tol).all() and (ze <= hi + tol).all(), (e, ze, lo, hi)


# ------------------------------------------------------------------------------ height fields
_SMALL_RES = st.integers(RESOLUTION.lo, 128)
RES_ARGS = Arg(
    st.one_of(values(RESOLUTION), _SMALL_RES), st.one_of(_SMALL_RES, in_range(RESOLUTION))
)
SIZE_HI_ARG = fuzzed(SIZE_HI, st.floats(0.1, 4.0))
BAKER_ORDER = [("resolution", RESOLUTION), ("margin", MARGIN), ("fill", FILL)]
BAKE_ORDER = [("name", None), *BAKER_ORDER, ("size_hi", SIZE_HI)]  # the settings, then size_hi
BAKER_FIELDS = {
    "resolution": RES_ARGS,
    "margin": fuzzed(MARGIN, st.floats(0.0, 1.0)),
    "fill": fuzzed(FILL, st.floats(-1.0, 1.0)),
}


def track_sources(s) -> dict:
    """``track=`` values: the elevated Track (most often) and objects that are not one."""
    track = s["track"]
    return {
        "track": track,
        "generator": s["attach"],
        "center array": track.center,
        "None": None,
        "str": "track",
        "namespace": types.SimpleNamespace(count=track.count),
    }


track_kinds = st.one_of(
    st.just("track"),
    st.just("track"),
    st.just("track"),
    st.sampled_from(["generator", "center array", "None", "str", "namespace"]),
)


@settings(max_examples=examples(40))
@given(data=st.data())
def test_heightfield_baker_arguments(device, data):
    s = shared(device)
    kind = data.draw(track_kinds, label="track")
    kw = draw_args(data, BAKER_FIELDS)
    err, culprit = (TypeError, "track") if kind != "track" else first_refusal(kw, BAKER_ORDER)
    event(f"{err.__name__} {culprit}" if err else "accepted")
    track = track_sources(s)[kind]
    if err is not None:
        with pytest.raises(err) as info:
            HeightFieldUtility(track, **kw)
        names(info.value, culprit)
        return
    if int(kw.get("resolution", 128)) > CHEAP_RES:
        event("accepted, too large to bake here")
        return
    baker = HeightFieldUtility(track, **kw)
    for name, t in BAKER_ORDER:
        stored(t, kw.get(name, t.default), getattr(baker, name))
    assert baker.track is track and baker.num_envs == E
    check_field(baker.field, track, baker.resolution, baker.fill, baker.margin)


@settings(max_examples=examples(40))
@given(data=st.data())
def test_heightfield_bake_component_arguments(device, data):
    """HeightFieldBake(resolution, size_hi, *, margin, fill, name): refused naming the
    argument, or a component that attaches (warning exactly by the grid rule) and bakes."""
    s = shared(device)
    fields = {"name": NAME, **BAKER_FIELDS}
    fields["size_hi"] = SIZE_HI_ARG
    kw = draw_args(data, fields)
    err, culprit = first_refusal(kw, BAKE_ORDER)
    event(f"{err.__name__} {culprit}" if err else "accepted")
    if err is not None:
        with pytest.raises(err) as info:
            HeightFieldBake(**kw)
        names(info.value, culprit)
        return
    comp = HeightFieldBake(**kw)
    for name, t in BAKE_ORDER[1:]:
        stored(t, kw.get(name, t.default), getattr(comp, name))
    assert comp.name == (kw.get("name") or "heightfield")
    if comp.resolution > CHEAP_RES:
        event("accepted, too large to bake here")
        return
    course, msgs = attached(s["attach"], [comp])
    want = grid_warns(s["attach"], comp.resolution, comp.size_hi, comp.margin)
    assert len(msgs) == int(want), f"warnings {msgs}, rule says {want}"
    assert comp.utility is course.components[comp.name].utility and comp.result is not None
    check_field(comp.result, s["attach"].result, comp.resolution, comp.fill, comp.margin)


def _scale_generators(s) -> dict:
    """Generators ``check_grid_resolution`` reads: a spec's construction scale, a scale
    randomizer's hi, and objects whose size cannot be told (no check)."""
    if "randomized" not in s:
        spec = presets.track(num_envs=2, device=str(s["track"].count.device))
        s["randomized"] = TrackGenerator(spec.with_randomize({"bezier.scale": (0.5, 2.5)}))
    return {
        "spec": (s["attach"], float(s["attach"].spec.config.scale)),
        "randomized": (s["randomized"], 2.5),
        "None": (None, None),
        "namespace": (types.SimpleNamespace(spec=None, params={}), None),
    }


@settings(max_examples=examples(40))
@given(data=st.data())
def test_check_grid_resolution_accepted_arguments(device, data):
    """Accepted values (by the declarations its callers check them with): the predicted cell
    of the documented rule, a warning exactly when the road gets fewer than 4 texels; None
    (no warning) when the generator's size cannot be told."""
    draw = data.draw
    gen, scale = _scale_generators(shared(device))[
        draw(st.sampled_from(["spec", "spec", "randomized", "None", "namespace"]), label="gen")
    ]
    res = draw(RES_ARGS.ok, label="resolution")
    size_hi = draw(st.one_of(st.none(), SIZE_HI_ARG.ok), label="size_hi")
    margin = draw(st.one_of(st.none(), BAKER_FIELDS["margin"].ok), label="margin")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cell = check_grid_resolution("owner", gen, res, size_hi=size_hi, margin=margin)
    msgs = grid_warnings(caught)
    if gen is None or getattr(gen, "spec", None) is None:
        assert cell is None and msgs == []  # no config, no half_width: no check
        return
    scale = float(size_hi) if size_hi is not None else scale
    hw = float(gen.spec.config.half_width)
    extent = EXTENT * scale + 2.0 * hw
    side = extent * 1.2 if margin is None else extent + 2.0 * float(margin)
    assert cell == pytest.approx(side / int(res), rel=1e-12)
    want = 2.0 * hw / cell < MIN_TEXELS_ACROSS
    assert len(msgs) == int(want), (msgs, want)
    event(f"warned {want}")


def test_heightfield_at_the_largest_resolution(device):
    """RESOLUTION.hi (4096) bakes a one-env elevated track without overflow (the lowest fill)."""
    one = shared(device)["one"]
    baker = HeightFieldUtility(one, resolution=RESOLUTION.hi, margin=0.0, fill=-1.0e6)
    check_field(baker.field, one, RESOLUTION.hi, -1.0e6, 0.0)
    assert (baker.field.on_road.numpy() == 1).any()


@settings(max_examples=examples(25))
@given(data=st.data())
def test_course_config_heightfield_resolution(device, data):
    """CourseConfig(heightfield_resolution=...): refused naming it (any value but None in
    gates mode), or a course with a ``heightfield`` component of that resolution."""
    draw = data.draw
    value = draw(st.one_of(RES_ARGS.any, st.just(None)), label="heightfield_resolution")
    mode = draw(st.sampled_from(["track", "track", "gates"]), label="mode")
    if mode == "gates":
        gen = GateGenConfig(num_envs=GEN_E, device=device, gate_width=0.1)
        kw = {"mode": "gates", "gen": gen, "heightfield_resolution": value}
        err = None if value is None else ValueError
    else:
        gen = TrackGenConfig(num_envs=GEN_E, device=device, z_profile="noise", **Z_RANGE)
        kw = {"mode": "track", "gen": gen, "checkpoint_spacing": 0.6}
        kw["heightfield_resolution"] = value
        err = None if value is None else expected_error(RESOLUTION, value)
    event(f"{mode} {err.__name__ if err else 'accepted'}")
    if err is not None:
        with pytest.raises(err) as info:
            CourseConfig(**kw)
        names(info.value, "heightfield_resolution")
        return
    cc = CourseConfig(**kw)
    if value is None:
        assert cc.heightfield_resolution is None
    else:
        stored(RESOLUTION, value, cc.heightfield_resolution)
    if mode == "gates" or (value is not None and int(value) > CHEAP_RES):
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        course = Course(cc)
    if value is None:
        assert "heightfield" not in course.components
        return
    want = grid_warns(course.generator, int(value))
    assert len(grid_warnings(caught)) == int(want)
    baker = course.heightfield
    assert baker.resolution == int(value)
    check_field(baker.field, course.result, int(value))


# ------------------------------------------------------------------------------ props
SIZE_TUNABLES = (CONE_DIAMETER, CONE_HEIGHT, WALL_THICKNESS, WALL_HEIGHT)
SIZE_FIELDS = {t.name: fuzzed(t, st.floats(0.001, 0.5)) for t in SIZE_TUNABLES}
PROP_FIELDS = {
    "kind": fuzzed(KIND),
    "spacing": fuzzed(SPACING, st.floats(0.01, 2.0)),
    "side": fuzzed(SIDE),
}
MAX_PROPS_ARG = fuzzed(MAX_PROPS, st.integers(1, 200))
AUTO = st.sampled_from(["auto", np.str_("auto")])
_SIZES_ORDER = [(t.name, t) for t in SIZE_TUNABLES]
PLACER_ORDER = [("kind", KIND), ("spacing", SPACING), ("side", SIDE)] + _SIZES_ORDER


def _sizes(kw) -> tuple:
    return tuple(float(kw.get(t.name, t.default)) for t in SIZE_TUNABLES)


def _placer_error(kw) -> tuple[type | None, tuple]:
    """PropsUtility's checks in order: its settings (kind, spacing, side, max_props, the
    sizes), then without max_props, max_loop_length (its capacity refused above
    MAX_PROPS.hi, naming the spacing), else the missing capacity."""
    order = PLACER_ORDER[:3] + [("max_props", MAX_PROPS)] + _SIZES_ORDER
    err, culprit = first_refusal(kw, order)
    if err is not None:
        return err, (culprit,)
    mp, mll = kw.get("max_props"), kw.get("max_loop_length")
    if mp is not None:
        return None, ()
    if mll is not None:
        err = expected_error(MAX_LOOP, mll)
        if err is not None:
            return err, ("max_loop_length",)
        sides = 2 if kw.get("side", "both") == "both" else 1
        cap = sides * max(1, math.ceil(float(mll) / float(kw["spacing"])))
        return (ValueError, ("spacing",)) if cap > MAX_PROPS.hi else (None, ())
    return ValueError, ("max_props", "max_loop_length")


@settings(max_examples=examples(40))
@given(data=st.data())
def test_prop_placer_arguments(device, data):
    s = shared(device)
    draw = data.draw
    kind = draw(track_kinds, label="track")
    fields = {
        **PROP_FIELDS,
        "max_props": MAX_PROPS_ARG,
        "max_loop_length": fuzzed(MAX_LOOP, st.floats(1.0, 20.0)),
        **SIZE_FIELDS,
    }
    kw = draw_args(data, fields)
    kw.setdefault("spacing", draw(st.floats(0.05, 1.0), label="default spacing"))
    if "max_props" not in kw and "max_loop_length" not in kw and draw(st.booleans()):
        kw["max_props"] = draw(st.integers(1, 300), label="capacity")
    if kind != "track":
        err, words = TypeError, ("track", "Track")
    else:
        err, words = _placer_error(kw)
    event(f"{err.__name__} {words[0]}" if err else "accepted")
    track = track_sources(s)[kind]
    if err is not None:
        with pytest.raises(err) as info:
            PropsUtility(track, **kw)
        names(info.value, *words)
        return
    placer = PropsUtility(track, **kw)
    for name, t in PLACER_ORDER[:3]:
        stored(t, kw.get(name, t.default), getattr(placer, name))
    assert placer.sizes == _sizes(kw)
    check_props(placer.props, track, placer.kind, placer.spacing, placer.side, placer.sizes)


@settings(max_examples=examples(40))
@given(data=st.data())
def test_props_component_arguments(device, data):
    """Props(kind, spacing, side, max_props, *, sizes, name): refused naming the argument,
    or a component that attaches (auto capacity from the declared border bound, refused
    above MAX_PROPS.hi naming the spacing) and places props."""
    s = shared(device)
    draw = data.draw
    fields = {
        "name": NAME,
        **PROP_FIELDS,
        "max_props": Arg(st.one_of(MAX_PROPS_ARG.any, AUTO), st.one_of(MAX_PROPS_ARG.ok, AUTO)),
        **SIZE_FIELDS,
    }
    kw = draw_args(data, fields)
    kw.setdefault("spacing", draw(st.floats(0.05, 1.0), label="default spacing"))
    mp = kw.get("max_props", "auto")
    auto = isinstance(mp, str) and mp == "auto"
    order = [("name", None)] + PLACER_ORDER[:3] + [("max_props", MAX_PROPS)] + _SIZES_ORDER
    err, culprit = first_refusal({**kw, "max_props": None if auto else mp}, order)
    event(f"{err.__name__} {culprit}" if err else "accepted")
    if err is not None:
        with pytest.raises(err) as info:
            Props(**kw)
        names(info.value, culprit)
        return
    comp = Props(**kw)
    assert comp.max_props == (None if auto else int(mp))
    assert comp.sizes == {t.name: float(kw.get(t.name, t.default)) for t in SIZE_TUNABLES}
    gen = s["attach"]
    cap = comp.max_props
    if auto:
        cfg = gen.config
        bound = border_length_bound(
            (gen.result.N_max + 1) * float(cfg.resolved_spacing),
            float(cfg.half_width),
            float(cfg.z_valid_grade),
        )
        sides = 2 if comp.side == "both" else 1
        cap = sides * max(1, math.ceil(bound / comp.spacing))
        if cap > MAX_PROPS.hi:
            with pytest.raises(ValueError, match="spacing"):
                Course(gen, [comp])
            return
    Course(gen, [comp])
    assert comp.utility.max_props == cap and comp.result is comp.utility.props
    sizes = tuple(comp.sizes[t.name] for t in SIZE_TUNABLES)
    check_props(comp.result, gen.result, comp.kind, comp.spacing, comp.side, sizes)


# ------------------------------------------------------------------------------ collision
#: The check order: BandCollisionSettings' fields (then the component's size_hi).
COLLIDER_ORDER = [
    ("method", METHOD),
    ("max_boxes", MAX_BOXES),
    ("sdf_resolution", SDF_RESOLUTION),
    ("sdf_padding", SDF_PADDING),
    ("clearance", CLEARANCE),
]
COLLISION_ORDER = [
    ("method", METHOD),
    ("max_boxes", MAX_BOXES),
    ("sdf_resolution", SDF_RESOLUTION),
    ("clearance", CLEARANCE),
    ("size_hi", SIZE_HI),
]


CLEARANCES = fuzzed(CLEARANCE, st.one_of(st.floats(0.0, 0.5), st.just(None)))
COLLIDER_FIELDS = {
    "method": fuzzed(METHOD),
    "clearance": CLEARANCES,
    "max_boxes": fuzzed(MAX_BOXES, st.integers(1, 3)),
    "sdf_resolution": fuzzed(SDF_RESOLUTION, st.integers(8, 96)),
    "sdf_padding": fuzzed(SDF_PADDING, st.floats(0.0, 1.0)),
}


def box_rows(data, track, boxes: int):
    """``[E*B]`` box rows: a few drawn rows of any agent state (NaN, inf, 1e38, -0.0) or
    boxes at a bead centre at a drawn height above it, tiled over every slot."""
    rows = track.num_envs * boxes
    k = data.draw(st.integers(1, min(rows, 8)), label="distinct rows")
    pos = data.draw(agent_rows(k, 3), label="position")
    ori = data.draw(agent_rows(k, 4), label="orientation")
    half = data.draw(agent_rows(k, 2), label="half_extents")
    pos, ori, half = (np.resize(a, (rows, a.shape[1])) for a in (pos, ori, half))
    if data.draw(st.booleans(), label="on the road"):
        center = track_rows(track, "center")
        count = track.count.numpy()
        bead = data.draw(st.integers(0, 10**6), label="bead")
        dz = data.draw(st.lists(st.floats(-1.0, 1.0), min_size=rows, max_size=rows))
        for r in range(rows):
            e = r // boxes
            n = max(int(count[e]), 1)
            pos[r] = center[e, bead % n] + np.array([0.0, 0.0, dz[r]], np.float32)
        ori[:] = (0.0, 0.0, 0.0, 1.0)
        half[:] = (0.01, 0.01)
    return pos, ori, half


def query(collider, pos, ori, half):
    dev = collider.device
    return collider.query(
        wp.array(pos, dtype=wp.vec3f, device=dev),
        wp.array(ori, dtype=wp.quatf, device=dev),
        wp.array(half, dtype=wp.vec2f, device=dev),
    )


@settings(max_examples=examples(40))
@given(data=st.data())
def test_band_collider_arguments_and_queries(device, data):
    """BandCollisionUtility(track, *, method, max_boxes, sdf_resolution, sdf_padding, clearance):
    refused naming the argument, or a collider whose queries of the elevated track answer
    any box state."""
    s = shared(device)
    kind = data.draw(track_kinds, label="track")
    kw = draw_args(data, COLLIDER_FIELDS)
    err, culprit = (TypeError, "track") if kind != "track" else first_refusal(kw, COLLIDER_ORDER)
    event(f"{err.__name__} {culprit}" if err else "accepted")
    track = track_sources(s)[kind]
    if err is not None:
        with pytest.raises(err) as info:
            BandCollisionUtility(track, **kw)
        names(info.value, culprit)
        return
    if kw.get("method") == "sdf" and int(kw.get("sdf_resolution", 128)) > CHEAP_RES:
        event("accepted, too large to bake here")
        return
    collider = BandCollisionUtility(track, **kw)
    for name, t in COLLIDER_ORDER:
        stored(t, kw.get(name, t.default), getattr(collider, name))
    boxes = collider.max_boxes
    pos, ori, half = box_rows(data, track, boxes)
    contact = query(collider, pos, ori, half)
    check_contact(contact, track, boxes, pos, ori, half, collider.clearance)


@settings(max_examples=examples(40))
@given(data=st.data())
def test_queries_of_the_elevated_track_with_any_clearance(device, data):
    """Any accepted clearance (None included), either method, any box state: the answers
    keep their ranges; a box at a bead centre gets its height above the road, exactly, and
    is off the road (segments: exactly) when that height exceeds the clearance."""
    s = shared(device)
    track = s["track"]
    clearance = data.draw(
        st.one_of(
            in_range(CLEARANCE),
            st.just(None),
            st.floats(0, 0.5).filter(lambda c: expected_error(CLEARANCE, c) is None),
        )
    )
    method = data.draw(st.sampled_from(METHOD.choices), label="method")
    boxes = data.draw(st.integers(1, 3), label="max_boxes")
    collider = BandCollisionUtility(
        track, method=method, max_boxes=boxes, sdf_resolution=HF_RES, clearance=clearance
    )
    pos, ori, half = box_rows(data, track, boxes)
    on_road = bool((ori == (0, 0, 0, 1)).all())
    event(f"{method}, clearance {'None' if clearance is None else 'set'}, on road {on_road}")
    contact = query(collider, pos, ori, half)
    check_contact(contact, track, boxes, pos, ori, half, collider.clearance)
    if clearance is None or not on_road:
        return
    ok = np.repeat(usable(track), boxes)  # the boxes sit on bead centres (box_rows)
    height = contact.height.numpy()
    oob = contact.oob.numpy()
    dz = np.empty(len(pos))
    c = track_rows(track, "center")
    count = track.count.numpy()
    for r in np.flatnonzero(ok):
        e = r // boxes
        beads = c[e, : int(count[e])]
        i = int(np.argmin(np.linalg.norm(beads[:, :2] - pos[r, :2], axis=1)))
        dz[r] = float(pos[r, 2]) - float(beads[i, 2])
    np.testing.assert_allclose(height[ok], dz[ok], atol=1e-6)
    above = ok & (np.abs(dz) > float(clearance) + 1e-6)
    assert (oob[above] == 1).all()
    if method == "segments":
        inside = ok & (np.abs(dz) < float(clearance) - 1e-6)
        assert (oob[inside] == 0).all(), f"a box on a bead within the clearance is oob: {oob}"


@settings(max_examples=examples(30))
@given(data=st.data())
def test_band_collision_component_arguments(device, data):
    """BandCollision(method, *, max_boxes, sdf_resolution, clearance, size_hi, name):
    refused naming the argument, or a component that attaches (an SDF warns exactly by the
    grid rule, read at size_hi when given) and answers a course step."""
    s = shared(device)
    fields = {
        "name": NAME,
        "method": fuzzed(METHOD),
        "max_boxes": fuzzed(MAX_BOXES, st.integers(1, 3)),
        "sdf_resolution": fuzzed(SDF_RESOLUTION, st.integers(8, 96)),
        "clearance": CLEARANCES,
        "size_hi": SIZE_HI_ARG,
    }
    kw = draw_args(data, fields)
    err, culprit = first_refusal(kw, [("name", None), *COLLISION_ORDER])
    event(f"{err.__name__} {culprit}" if err else "accepted")
    if err is not None:
        with pytest.raises(err) as info:
            BandCollision(**kw)
        names(info.value, culprit)
        return
    comp = BandCollision(**kw)
    for name, t in COLLISION_ORDER:
        stored(t, kw.get(name, t.default), getattr(comp, name))
    if comp.method == "sdf" and comp.sdf_resolution > CHEAP_RES:
        event("accepted, too large to bake here")
        return
    gen = s["attach"]
    course, msgs = attached(gen, [comp])
    want = comp.method == "sdf" and grid_warns(gen, comp.sdf_resolution, comp.size_hi)
    assert len(msgs) == int(want), f"warnings {msgs}, rule says {want}"
    assert comp.utility.clearance == comp.clearance
    pos, ori, half = box_rows(data, gen.result, comp.max_boxes)
    dev = gen.layout.device
    course.bind(
        box_position=wp.array(pos, dtype=wp.vec3f, device=dev),
        orientation=wp.array(ori, dtype=wp.quatf, device=dev),
        half_extents=wp.array(half, dtype=wp.vec2f, device=dev),
    )
    res = course.step()
    assert res.contacts is None or res.contacts is comp.result
    check_contact(comp.result, gen.result, comp.max_boxes, pos, ori, half, comp.clearance)


@settings(max_examples=examples(20))
@given(data=st.data())
def test_shared_course_steps_any_agent_state(device, data):
    """The shared elevated course (collision with a clearance, height field, props) steps
    any agent state; its contacts keep their ranges."""
    s = shared(device)
    course, track = s["course"], s["track"]
    pos = data.draw(agent_rows(E, 3), label="position")
    ori = data.draw(agent_rows(E, 4), label="orientation")
    half = data.draw(agent_rows(E, 2), label="half_extents")
    dev = track.count.device
    course.bind(
        position=wp.array(pos, dtype=wp.vec3f, device=dev),
        orientation=wp.array(ori, dtype=wp.quatf, device=dev),
        half_extents=wp.array(half, dtype=wp.vec2f, device=dev),
    )
    res = course.step()
    check_contact(res.contacts, track, 1, pos, ori, half, CLEAR)


# ------------------------------------------------------------------------------ masks
def _field_bytes(field) -> list[bytes]:
    return [getattr(field, k).numpy().tobytes() for k in ("height", "on_road", "frame")]


def _props_bytes(ps) -> list[bytes]:
    keys = ("position", "orientation", "scale", "side", "count", "truncated")
    return [getattr(ps, k).numpy().tobytes() for k in keys]


def _per_env(arrays: dict, n_env: int) -> dict:
    return {k: a.reshape(n_env, -1) for k, a in arrays.items()}


def _poison_field(field) -> None:
    field.height.fill_(123.0)
    field.on_road.fill_(7)
    field.frame.fill_(wp.vec4f(1.0, 2.0, 3.0, 4.0))


def _poison_props(ps) -> None:
    ps.position.fill_(wp.vec3f(5.0, 6.0, 7.0))
    ps.orientation.fill_(wp.quatf(1.0, 2.0, 3.0, 4.0))
    ps.scale.fill_(wp.vec3f(8.0, 8.0, 8.0))
    ps.side.fill_(9)
    ps.count.fill_(-5)
    ps.truncated.fill_(3)


def _host(obj, keys) -> dict:
    """Host copies (on the CPU ``numpy()`` is a view of the live buffer)."""
    return {k: getattr(obj, k).numpy().copy() for k in keys}


@settings(max_examples=examples(40))
@given(data=st.data())
def test_masked_bake_and_place_touch_only_the_masked_envs(device, data):
    """Any int32 mask: the masked envs become exactly a full bake / placement, the others
    stay bitwise (poisoned beforehand, so a write would show); an all-zero mask is a no-op."""
    s = shared(device)
    mask_host = data.draw(mask_contents(E), label="mask")
    kind = data.draw(st.sampled_from(["cone", "wall"]), label="props kind")
    mask = wp.array(mask_host, dtype=wp.int32, device=device)
    baker, placer = s["baker"], s["placers"][kind]
    hf_keys = ("height", "on_road", "frame")
    ps_keys = ("position", "orientation", "scale", "side", "count", "truncated")
    baker.bake()
    placer.place()
    full_field = _per_env(_host(baker.field, hf_keys), E)
    full_props = _per_env(_host(placer.props, ps_keys), E)
    _poison_field(baker.field)
    _poison_props(placer.props)
    poisoned_field = _per_env(_host(baker.field, hf_keys), E)
    poisoned_props = _per_env(_host(placer.props, ps_keys), E)
    assert baker.bake(mask) is baker.field
    assert placer.place(mask) is placer.props
    got_field = _per_env(_host(baker.field, hf_keys), E)
    got_props = _per_env(_host(placer.props, ps_keys), E)
    on = mask_host != 0
    event("all-zero mask" if not on.any() else f"{int(on.sum())} masked")
    for got, full, poisoned in (
        (got_field, full_field, poisoned_field),
        (got_props, full_props, poisoned_props),
    ):
        for k in got:
            for e in range(E):
                want = full[k][e] if on[e] else poisoned[k][e]
                assert got[k][e].tobytes() == want.tobytes(), (k, e, bool(on[e]))
    baker.bake()
    placer.place()
    check_field(baker.field, s["track"], baker.resolution)
    check_props(placer.props, s["track"], kind, placer.spacing, "both", placer.sizes)


def test_refused_masks_change_nothing(device):
    s = shared(device)
    baker, placer = s["baker"], s["placers"]["wall"]
    for label, err, make in refused_masks(E, device):
        bad = make()
        before = _field_bytes(baker.field), _props_bytes(placer.props)
        for call in (baker.bake, placer.place):
            with pytest.raises(err) as info:
                call(bad)
            names(info.value, "mask")
        after = _field_bytes(baker.field), _props_bytes(placer.props)
        assert after == before, f"a refused mask ({label}) wrote"


# ------------------------------------------------------------------------------ fixed findings
# Each test below pins a bug this suite found (now fixed).
@pytest.mark.parametrize("method", METHOD.choices)
def test_inactive_slot_with_clearance_answers_no_contact(device, method):
    s = shared(device)
    track = s["track"]
    collider = BandCollisionUtility(track, method=method, sdf_resolution=HF_RES, clearance=CLEAR)
    e = int(np.flatnonzero(usable(track))[0])
    pos = np.zeros((E, 3), np.float32)
    pos[:] = track_rows(track, "center")[e, 0] + np.array([0.0, 0.0, 5.0], np.float32)
    ori = np.tile(np.array([0.0, 0.0, 0.0, 1.0], np.float32), (E, 1))
    half = np.full((E, 2), 0.01, np.float32)
    ori[e] = np.nan  # slot e: inactive (orientation)
    contact = query(collider, pos, ori, half)
    assert contact.oob.numpy()[e] == 0 and np.isnan(contact.height.numpy()[e])


def test_far_box_height_is_finite(device):
    s = shared(device)
    track = s["track"]
    collider = BandCollisionUtility(track, clearance=CLEAR)
    pos = np.tile(np.array([1.0e20, 0.0, 0.0], np.float32), (E, 1))
    ori = np.tile(np.array([0.0, 0.0, 0.0, 1.0], np.float32), (E, 1))
    half = np.full((E, 2), 0.01, np.float32)
    contact = query(collider, pos, ori, half)
    ok = usable(track)
    assert np.isfinite(contact.height.numpy()[ok]).all()


@pytest.mark.parametrize("value", [1e-46, 1e-50])
@pytest.mark.parametrize("family", ["track", "gates"])
def test_z_valid_grade_that_is_zero_in_float32(device, family, value):
    kw = {"num_envs": GEN_E, "device": device, "z_profile": "noise", **Z_RANGE}
    try:
        if family == "track":
            result = TrackGenerator(presets.track(z_valid_grade=value, **kw), seeds=SEED).generate()
        else:
            result = GateGenerator(
                presets.gates(gate_width=0.1, z_valid_grade=value, **kw), seeds=SEED
            ).generate()
    except ValueError as err:
        names(err, "z_valid_grade")
        return
    climbs = (result.fail_mask.numpy() & GRADE) != 0
    assert climbs.all(), f"z_valid_grade={value} flagged {climbs} on climbing courses"


_GRID_CASES = {
    "resolution=0": ({"resolution": 0}, ValueError, "resolution"),  # ZeroDivisionError
    "resolution=-8": ({"resolution": -8}, ValueError, "resolution"),  # a negative cell
    "resolution=7.5": ({"resolution": 7.5}, TypeError, "resolution"),  # read as 7
    "resolution=True": ({"resolution": True}, TypeError, "resolution"),  # read as 1
    "resolution='64'": ({"resolution": "64"}, TypeError, "resolution"),  # read as 64
    "resolution=None": ({"resolution": None}, TypeError, "resolution"),  # int()'s message
    "size_hi=-1": ({"size_hi": -1.0}, ValueError, "size_hi"),  # a negative cell
    "size_hi=nan": ({"size_hi": float("nan")}, ValueError, "size_hi"),  # cell NaN, no check
    "size_hi='x'": ({"size_hi": "x"}, TypeError, "size_hi"),  # float()'s ValueError
    "size_hi=1e400": ({"size_hi": 10**400}, ValueError, "size_hi"),  # OverflowError
    "margin=-1": ({"margin": -1.0}, ValueError, "margin"),  # a negative cell
    "margin=inf": ({"margin": float("inf")}, ValueError, "margin"),  # OverflowError
    "margin='1'": ({"margin": "1"}, TypeError, "margin"),  # str * float
}


@pytest.mark.parametrize("case", list(_GRID_CASES), ids=list(_GRID_CASES))
def test_check_grid_resolution_refuses_bad_arguments(device, case):
    kw, err, word = _GRID_CASES[case]
    kw = {"resolution": 64, **kw}
    res = kw.pop("resolution")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(err) as info:
            check_grid_resolution("owner", shared(device)["attach"], res, **kw)
    names(info.value, word)
