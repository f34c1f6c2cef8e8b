"""Shared strategies and oracles of the fuzz suite, drawn from the :class:`Tunable` declarations.

Each value strategy mixes fixed edge cases (the bounds, just outside them, far outside:
``2**31``, ``2**32 + 1``, ``10**9``, ``10**400`` (beyond float64), ``1e30``, NaN, inf,
``1e-30``, ``1e-50`` (0 in float32); wrong kinds: str, bool, None, a float for an int; NumPy
scalars, which must be accepted when in range) with values drawn inside the declared range,
outside it, within a few float32 steps of each bound, and the float32 extremes (denormals,
``1e-38``, ``3.4e38``, ``1e300``, ``-0.0``) for every float field.
:func:`expected_error` is the oracle of the one error rule (``track_gen/checks.py``):
TypeError for the wrong kind, ValueError for a value of the right kind outside its range (a
number beyond float64 included; a float field's value also as the float32 a kernel reads: 0
only where the value is 0, never a denormal), None for an accepted value.
:func:`expected_host_values` is the oracle of host value sequences (params arrays, seeds,
ids).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np
import warp as wp
from hypothesis import settings
from hypothesis import strategies as st

from track_gen import TRACK_GENERATORS, GateGenConfig, TrackGenConfig
from track_gen.core.tunable import Tunable
from track_gen.pipeline import presets
from track_gen.stages import BUILTIN_SAMPLERS

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

CONFIGS = (TrackGenConfig, GateGenConfig)

#: Samplers a config alone can build: the registry's built-in samplers (``TRACK_GENERATORS``),
#: never copied here; ``mix`` needs stage options, ``centerline`` and ``real_track`` an input.
SAMPLERS = TRACK_GENERATORS
#: The samplers a gate pipeline takes (``circuit`` draws tracks in metres only).
GATE_SAMPLERS = tuple(
    s for s in SAMPLERS if "gates" in (BUILTIN_SAMPLERS[s].families or ("gates",))
)
#: Samplers whose courses are in metres: a config of theirs comes from their preset.
METRE_SAMPLERS = {"circuit": presets.circuit}


def sampler_config(name: str, num_envs: int = 8, **config) -> TrackGenConfig:
    """The flat config of sampler ``name``: ``TrackGenConfig(generator=name, ...)``, or for a
    sampler in metres (``circuit``) its preset's config with ``config`` on top."""
    if name in METRE_SAMPLERS:
        return METRE_SAMPLERS[name](num_envs, **config).config
    return TrackGenConfig(generator=name, num_envs=num_envs, **config)


#: Examples per test in the "ci" profile (tests/conftest.py), the unit of :func:`examples`.
CI_EXAMPLES = 40


def examples(n: int) -> int:
    """``n`` examples under the "ci" profile, scaled with the loaded profile's budget (the
    "dev" profile, ``HYPOTHESIS_PROFILE=dev``, explores 7.5 times more)."""
    return max(1, n * settings().max_examples // CI_EXAMPLES)


# ------------------------------------------------------------------------------ declarations
def default_lookup(t: Tunable):
    """Another field's value when every field keeps its default."""
    return t.default


def bounds(t: Tunable, lookup=default_lookup) -> tuple:
    """Numeric ``(lo, hi)`` of ``t`` with field references resolved through ``lookup``."""
    return t.bounds(lookup)


def section_prefix(cls, field: str) -> str:
    """The stage name of the config section that first lists ``field``."""
    for _title, prefix, items in cls.__sections__:
        if any(t.field == field for t in items):
            return prefix
    raise KeyError(field)


def tunable(cls, field: str) -> Tunable:
    for t in cls.__tunables__:
        if t.field == field:
            return t
    raise KeyError(field)


# ------------------------------------------------------------------------------ oracle
def is_bool(v) -> bool:
    return isinstance(v, (bool, np.bool_))


def is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not is_bool(v)


def is_number(v) -> bool:
    return is_int(v) or isinstance(v, (float, np.floating))


def to_float(value) -> float | None:
    """``float(value)``, or None for a number beyond float64 (``10**400``)."""
    try:
        return float(value)
    except OverflowError:
        return None


def _inside(x: float, lo, hi, lo_open: bool, hi_open: bool) -> bool:
    if not math.isfinite(x):
        return False
    if lo is not None and (x <= lo if lo_open else x < lo):
        return False
    if hi is not None and (x >= hi if hi_open else x > hi):
        return False
    return True


def as_float32(x: float) -> float:
    """``x`` rounded to float32 (inf beyond the float32 range), as a Python float."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


#: The smallest normal float32 (1.1754944e-38).
F32_TINY = float(np.finfo(np.float32).tiny)


def in_float_range(t: Tunable, x: float, lo, hi, write: bool = False) -> bool:
    """``x`` inside ``t``'s range as float64 and as the float32 a kernel reads (rounded
    bounds, the same exclusive sides), and that float32 is 0 only where ``x`` is 0 and never
    a denormal: the rule of every float field (docs/reference/fields.md)."""
    lo_open = t.lo_open or (write and t.write_lo_open)
    if not _inside(x, lo, hi, lo_open, t.hi_open):
        return False
    x32 = as_float32(x)
    if x != 0 and not abs(x32) >= F32_TINY:
        return False
    lo32 = None if lo is None else as_float32(lo)
    hi32 = None if hi is None else as_float32(hi)
    return _inside(x32, lo32, hi32, lo_open, t.hi_open)


def normalized(t: Tunable, value):
    """The Python value an accepted ``value`` is stored as."""
    if value is None:
        return None
    if t.kind == "int":
        return value if isinstance(value, str) else int(value)  # a str: one of t.choices
    if t.kind == "float":
        return float(value) + 0.0  # -0.0 is stored as 0.0
    if t.kind == "bool":
        return bool(value)
    return value


def expected_error(t: Tunable, value, lookup=default_lookup, write: bool = False):
    """TypeError / ValueError a check of ``value`` against ``t`` must raise, or None.

    ``lookup(tunable)`` gives the other fields' values (their bounds and ``t``'s rule); None
    checks the kind and the numeric bounds only (a field reference is unbounded, no rule), as
    the first check of a stage option does. ``write=True``: a params write after construction
    (``write_lo_open``)."""
    kind = t.kind
    if value is None:
        return None if (t.optional or kind == "device") else TypeError
    if kind == "bool":
        return None if is_bool(value) else TypeError
    if kind in ("choice", "name", "device"):
        if not isinstance(value, str):
            return TypeError
        if kind == "choice":
            return None if value in t.choices else ValueError
        if kind == "name":
            return None if value else ValueError
        return None
    lo, hi = bounds(t, lookup)
    if kind == "int":
        if t.choices and isinstance(value, str):  # an int field that also takes names
            return None if value in t.choices else ValueError
        if not is_int(value):
            return TypeError
        v = int(value)
        if not ((lo is None or v >= lo) and (hi is None or v <= hi)):
            return ValueError
    else:
        if not is_number(value):
            return TypeError
        v = to_float(value)
        if v is None or not in_float_range(t, v, lo, hi, write):
            return ValueError
    if t.rule is not None and lookup is not None and t.rule(v, lookup):
        return ValueError
    return None


def expected_config_error(cls, kwargs: dict) -> tuple[type | None, str | None]:
    """``(error, field)`` of ``cls(**kwargs)``: every field is checked alone first (kind and
    numeric bounds, declaration order), then every field again with every other (normalized)
    value, for the bounds and rules that read another field."""
    checked: dict = {}
    for t in cls.__tunables__:
        value = kwargs.get(t.field, t.default)
        err = expected_error(t, value, None)
        if err is not None:
            return err, t.field
        checked[t.field] = normalized(t, value)

    def lookup(o: Tunable):
        return checked[o.field]

    for t in cls.__tunables__:
        err = expected_error(t, checked[t.field], lookup)
        if err is not None:
            return err, t.field
    return None, None


def expected_options_error(fields, options: dict, config) -> tuple[type | None, str | None]:
    """``(error, name)`` of a stage built with ``options`` over ``config``: every option is
    checked alone first (kind and numeric bounds), then every field of the stage with every
    other resolved value (option, else the config's field, else the default)."""
    raw: dict = {}
    for t in fields:
        if t.name in options:
            err = expected_error(t, options[t.name], None)
            if err is not None:
                return err, t.name
            raw[t.name] = normalized(t, options[t.name])
        elif hasattr(config, t.field):
            raw[t.name] = getattr(config, t.field)
        else:
            raw[t.name] = t.default

    def lookup(o: Tunable):
        if o.name in raw:
            return raw[o.name]
        return getattr(config, o.field) if hasattr(config, o.field) else o.default

    for t in fields:
        err = expected_error(t, raw[t.name], lookup)
        if err is not None:
            return err, t.name
    return None, None


def float32_survives(t: Tunable, value) -> bool:
    """True when the device check (its construction range, ``write_lo_open`` aside) passes
    ``value`` as the float32 the device stores."""
    if not t.dynamic or value is None:
        return True
    x = to_float(value)
    if x is None:
        return False
    lo, hi, flags = t.device_bounds()
    return _inside(as_float32(x), as_float32(lo), as_float32(hi), bool(flags & 1), bool(flags & 2))


def expected_host_values(values, kind: str) -> tuple[type | None, list | None]:
    """``(error, elements)`` of a host value sequence (a params array, seeds, ids) for
    ``kind="int"`` or ``"float"``: one value per env, each an int (``kind="int"``) or a number;
    a bool anywhere or an element of another kind is a TypeError, a nested or
    multi-dimensional value a ValueError, a number beyond float64 a ValueError; an empty
    sequence is empty; a mapping or a set (no env order) is a TypeError. A ``wp.array`` is read
    as its NumPy array."""
    if isinstance(values, wp.array):
        values = values.numpy()
    if isinstance(values, (str, bytes)) or is_bool(values) or is_number(values) or values is None:
        return TypeError, None
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            return ValueError, None
        if values.dtype.kind == "b" or (kind == "int" and values.dtype.kind not in "iu"):
            return TypeError, None
        if values.dtype.kind in "iuf":
            return None, [int(v) if kind == "int" else float(v) for v in values.tolist()]
        items = values.tolist()
    elif isinstance(values, (list, tuple, range)):
        items = list(values)
    else:
        return TypeError, None  # a mapping, a set or another iterable: no env order
    check = is_int if kind == "int" else is_number
    for v in items:
        if isinstance(v, (list, tuple, np.ndarray)):
            return ValueError, None
        if not check(v):
            return TypeError, None
    if kind == "int":
        return None, [int(v) for v in items]
    floats = [to_float(v) for v in items]
    if any(f is None for f in floats):
        return ValueError, None
    return None, floats


# ------------------------------------------------------------------------------ values
_FAR_INTS = (
    2**31,
    2**31 - 1,
    -(2**31),
    -(2**31) - 1,
    2**32,
    2**32 + 1,
    10**9,
    -(10**9),
    2**40,
    2**63,
    2**64 + 1,
    2**1024,  # the first int beyond float64
    10**400,
    -(10**400),
    -1,
    0,
)
_FAR_FLOATS = (
    1e30,
    -1e30,
    float("nan"),
    float("inf"),
    float("-inf"),
    1e-30,
    -1e-30,
    1e308,
    5e-324,
    0.0,
    -0.0,
    2.0**31,
    1e9,
    1e-50,  # 0.0 in float32
    -1e-50,
    7e-46,  # just under half the smallest float32 subnormal: 0.0 in float32
    1e-45,  # the smallest float32 subnormal (1.4e-45) in float32
    3.5e38,  # inf in float32
    # float32 extremes: denormals, the edge of the normals, the largest float32, far beyond
    1e-40,  # a float32 denormal
    -1e-40,
    1e-38,  # a float32 denormal (just under the smallest normal, 1.1754944e-38)
    1.1754944e-38,  # the smallest normal float32
    -1.1754944e-38,
    1e-37,
    3.4e38,  # the largest float32 magnitude region
    -3.4e38,
    3.4028235e38,  # the largest float32
    1e300,
    -1e300,
)
_WRONG_KINDS = (
    "",
    "5",
    "bezier",
    b"x",
    True,
    False,
    None,
    [1],
    [True, 1],
    [[1]],
    [],
    (1.0,),
    {"v": 1},
    1j,
    object(),
)


def _nudge(x: float, direction: float) -> float:
    return float(np.nextafter(float(x), direction))


def special_values(t: Tunable, lookup=default_lookup) -> list:
    """Fixed edge cases of ``t``: bounds, just outside, far outside, wrong kinds, NumPy."""
    out: list = list(_WRONG_KINDS) + list(_FAR_INTS) + list(_FAR_FLOATS)
    kind = t.kind
    if kind in ("int", "float"):
        lo, hi = bounds(t, lookup)
        if kind == "int":
            mid = (lo + hi) // 2
            out += [lo, hi, lo - 1, hi + 1, lo + 1, hi - 1, mid]
            out += [float(lo), float(mid), np.float32(mid), np.float64(mid)]
            u16 = np.uint16(min(max(mid, 0), 65535))  # a negative midpoint (int32 seeds) clamps
            out += [np.int64(lo), np.int32(mid), u16, np.int64(hi + 1)]
            out += [np.int8(min(max(lo, -128), 127)), np.bool_(True)]
            if t.choices:
                out += list(t.choices) + [np.str_(t.choices[0]), t.choices[0].upper(), "nope"]
        else:
            mid = (lo + hi) / 2.0
            out += [lo, hi, mid, _nudge(lo, -math.inf), _nudge(hi, math.inf)]
            out += [_nudge(lo, math.inf), _nudge(hi, -math.inf), lo - 1.0, hi + 1.0]
            out += [np.float32(mid), np.float64(mid), np.float16(0.5) if lo <= 0.5 <= hi else mid]
            out += [np.float64(np.nan), np.float32(np.inf), np.bool_(False)]
            if float(lo).is_integer() and float(hi).is_integer():
                out += [int(math.ceil(mid)), np.int64(math.ceil(mid))]
            if lo <= 1 <= hi:
                out += [1, np.int32(1)]
            out += float32_steps(t, lookup)
    elif kind == "bool":
        out += [True, False, np.bool_(True), np.bool_(False), 0, 1, 1.0, "True"]
    elif kind == "choice":
        out += list(t.choices) + [np.str_(t.choices[0]), t.choices[0].upper(), "nope", " "]
        out += [c + " " for c in t.choices[:1]]
    elif kind == "name":
        out += list(SAMPLERS) + ["nope", np.str_("polar"), "acme.none", 3]
    elif kind == "device":
        out += ["cpu", None, "tpu", "cuda:99", 0, np.str_("cpu")]
    if t.optional:
        out.append(None)
    return out


def float32_steps(t: Tunable, lookup=default_lookup) -> list[float]:
    """Floats around each bound of a float field as a float32 kernel sees it: the float32
    neighbours of the bound and the float64 values a quarter and a half float32 step from
    it (a tie rounds to even), on both sides."""
    out: list[float] = []
    for b in bounds(t, lookup):
        b32 = np.float32(b)
        for direction in (-np.inf, np.inf):
            n = float(np.nextafter(b32, np.float32(direction)))
            step = n - float(b32)
            out += [n, float(b32) + step / 2, float(b32) + step / 4, float(b) + step / 2]
    return out


def in_range(t: Tunable, lookup=default_lookup) -> st.SearchStrategy:
    """Values of the right kind inside the declared range (NumPy scalars included; a dynamic
    field's value inside as float32 too)."""
    kind = t.kind
    if kind == "bool":
        return st.sampled_from([True, False, np.bool_(True), np.bool_(False)])
    if kind == "choice":
        return st.sampled_from(list(t.choices))
    if kind == "name":
        return st.sampled_from(list(SAMPLERS))
    if kind == "device":
        return st.sampled_from(["cpu", None])
    lo, hi = bounds(t, lookup)
    if kind == "int":
        ints = st.integers(lo, hi)
        out = [ints, ints.map(np.int64), ints.map(np.int32)]
        if t.choices:  # an int field that also takes names ("auto")
            out.append(st.sampled_from(t.choices))
        return st.one_of(*out)
    floats = st.floats(
        lo, hi, exclude_min=t.lo_open, exclude_max=t.hi_open, allow_nan=False, allow_infinity=False
    )
    if lo > 0:  # log-uniform too, so tiny and huge magnitudes both appear
        logs = st.floats(math.log(lo), math.log(hi)).map(math.exp).filter(lambda x: lo <= x <= hi)
        floats = st.one_of(floats, logs)
    # inside as float32 too (an exclusive bound refuses what rounds onto it; a value that
    # becomes a denormal or 0 is refused)
    floats = floats.filter(lambda x: in_float_range(t, x, lo, hi))
    return st.one_of(floats, floats.map(np.float64))


def out_of_range(t: Tunable, lookup=default_lookup) -> st.SearchStrategy:
    """Values of the right kind outside the declared range."""
    beyond_float64 = st.tuples(st.integers(2**1024, 10**400), st.sampled_from([1, -1])).map(
        lambda p: p[0] * p[1]
    )
    if t.kind == "int":
        lo, hi = bounds(t, lookup)
        return st.one_of(
            st.integers(max_value=lo - 1), st.integers(min_value=hi + 1), beyond_float64
        )
    if t.kind == "float":
        lo, hi = bounds(t, lookup)
        below = st.floats(max_value=lo, exclude_max=not t.lo_open, allow_nan=False)
        above = st.floats(min_value=hi, exclude_min=not t.hi_open, allow_nan=False)
        return st.one_of(below, above, st.just(float("nan")), beyond_float64)
    if t.kind == "choice":
        return st.text(max_size=12).filter(lambda s: s not in t.choices)
    return st.nothing()


def float32_edges(t: Tunable, lookup=default_lookup) -> st.SearchStrategy:
    """For a float field: floats within a float32 step of each bound (in range as float64,
    on or past the bound as float32, or not), tiny magnitudes (denormals and 0.0 in float32)
    and magnitudes around the float32 maximum."""
    if t.kind != "float":
        return st.nothing()
    parts = [st.floats(3.0e38, 1e300), st.floats(-1e300, -3.0e38)]
    for b in bounds(t, lookup):
        b32 = np.float32(b)
        down = float(np.nextafter(b32, np.float32(-np.inf)))
        up = float(np.nextafter(b32, np.float32(np.inf)))
        parts.append(st.floats(down, up))
    parts.append(st.floats(-1e-40, 1e-40))
    return st.one_of(parts)


def values(t: Tunable, lookup=default_lookup) -> st.SearchStrategy:
    """Edge cases, in-range, out-of-range and float32-edge values of ``t``."""
    return st.one_of(
        st.sampled_from(special_values(t, lookup)),
        in_range(t, lookup),
        out_of_range(t, lookup),
        float32_edges(t, lookup),
    )


# ------------------------------------------------------------------------------ ints / seeds
#: Ints around every boundary a seed or an index can cross.
boundary_ints = st.one_of(
    st.sampled_from(
        [0, 1, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**32, 2**32 + 5, 2**40, -(2**40)]
        + [2**63, -(2**63) - 1, 2**64 + 1, 10**400, -(10**400)]
    ),
    st.integers(INT32_MIN - 3, INT32_MIN + 3),
    st.integers(INT32_MAX - 3, INT32_MAX + 3),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-1000, 1000),
)
#: Non-int scalars that must be refused with TypeError where ints are needed.
non_int_scalars = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [True, False, np.bool_(True), 1.0, 1.9, float("nan"), np.float32(3), "7", None, 1j]
    ),
)


# ------------------------------------------------------------------------------ arrays
_OTHER_DTYPES = (
    wp.int32,
    wp.int64,
    wp.uint32,
    wp.int8,
    wp.float32,
    wp.float64,
    wp.vec2f,
    wp.vec3f,
    wp.vec3d,
    wp.vec4f,
    wp.quatf,
    wp.transformf,
)


def other_device(device):
    """A device other than ``device`` (None when this machine has only one)."""
    name = str(wp.get_device(device))
    for d in wp.get_devices():
        if str(d) != name:
            return str(d)
    return None


def wrong_arrays(E: int, dtype, device) -> list[tuple[str, type, Callable]]:
    """``(label, expected error, factory)`` of wp.arrays that are not a contiguous ``[E]``
    ``dtype`` array on ``device``: another dtype (TypeError), another shape, a non-contiguous
    view or another device (ValueError)."""
    cases: list[tuple[str, type, Callable]] = []
    for d in _OTHER_DTYPES:
        if d != dtype:
            cases.append(
                (f"dtype {wp.types.type_repr(d)}", TypeError, partial(wp.zeros, E, d, device))
            )
    for shape in ((E + 1,), (E - 1,), (0,), (2 * E,), (E, 1), (1, E), (E, 2)):
        cases.append((f"shape {shape}", ValueError, partial(wp.zeros, shape, dtype, device)))
    cases.append(
        ("non-contiguous", ValueError, lambda: wp.zeros(2 * E, dtype=dtype, device=device)[::2])
    )
    other = other_device(device)
    if other is not None:
        cases.append((f"device {other}", ValueError, partial(wp.zeros, E, dtype, other)))
    return cases


def non_array_objects(E: int) -> list:
    """Objects that are not wp.arrays (TypeError wherever a wp.array is required)."""
    return [
        None,
        0,
        1,
        True,
        1.5,
        "mask",
        b"\x01" * E,
        [1] * E,
        [0] * E,
        tuple([1] * E),
        np.ones(E, np.int32),
        np.zeros((E, 3), np.float32),
        {"e": 1},
        object(),
    ]


# ------------------------------------------------------------------------------ gate courses
#: Float32 values an agent's state may hold: any float32, and the edges drawn often (NaN,
#: +-inf, +-1e38, +-the float32 max, -0.0, the smallest subnormal).
agent_floats = st.one_of(
    st.floats(width=32, allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [float("nan"), float("inf"), float("-inf"), 1e38, -1e38, 3.4028235e38, -3.4028235e38]
        + [-0.0, 0.0, 1e-45, -1e-45, 0.05, -0.05]
    ),
)


def agent_rows(rows: int, width: int) -> st.SearchStrategy:
    """``[rows, width]`` float32 host arrays of :data:`agent_floats` (a vec3f / quatf / vec2f
    input of ``rows`` entries)."""
    row = st.tuples(*([agent_floats] * width))
    return st.lists(row, min_size=rows, max_size=rows).map(
        lambda r: np.asarray(r, np.float32).reshape(rows, width)
    )


#: Any scalar argument: the fixed wrong kinds, far ints and floats, NumPy scalars.
any_scalar = st.sampled_from(
    list(_WRONG_KINDS)
    + list(_FAR_INTS)
    + list(_FAR_FLOATS)
    + [np.float32(0.5), np.float64(2.0), np.int64(3), np.int32(0), np.bool_(True)]
    + [np.float64(np.nan), np.float32(np.inf), np.float16(0.25)]
)


def mask_contents(E: int) -> st.SearchStrategy:
    """``[E]`` int32 mask contents: zeros and arbitrary values (negative, huge) in every
    proportion (the all-zero mask included)."""
    item = st.one_of(
        st.just(0),
        st.integers(INT32_MIN, INT32_MAX),
        st.sampled_from([1, -1, INT32_MIN, INT32_MAX]),
    )
    return st.lists(item, min_size=E, max_size=E).map(lambda v: np.asarray(v, np.int32))


def refused_masks(E: int, device) -> list[tuple[str, type, Callable]]:
    """``(label, expected error, factory)`` of every kind of refused ``[E]`` int32 mask (None,
    meaning every env, is not among them)."""
    objects = [o for o in non_array_objects(E) if o is not None]
    cases = [(f"{type(o).__name__} {o!r:.20}", TypeError, lambda o=o: o) for o in objects]
    return cases + wrong_arrays(E, wp.int32, device)


# ------------------------------------------------------------------------------ streams, objects
class SpoofStream:
    """Claims to be a ``wp.Stream`` through ``__class__`` (``isinstance`` says yes) without
    being one: no device, no handle."""

    @property
    def __class__(self):  # isinstance() reads it
        return wp.Stream


class StreamSubclass(wp.Stream):
    """A subclass of ``wp.Stream`` (instances made bare, without a device)."""


def bare_stream(cls=wp.Stream):
    """A ``wp.Stream`` made without ``__init__`` (no device, no handle; safe to collect): the
    only ``wp.Stream`` a CPU-only machine can hold."""
    return cls.__new__(cls)


def other_objects(E: int) -> list:
    """Objects of every kind no argument of the library takes (None excluded): the fixed wrong
    kinds, far ints and floats, NumPy scalars and arrays, non-array objects, callables,
    classes, containers."""
    out: list = list(_WRONG_KINDS) + list(_FAR_INTS) + list(_FAR_FLOATS)
    out += [o for o in non_array_objects(E) if o is not None]
    out += [np.float32(0.5), np.int64(3), np.bool_(False), np.str_("cpu"), np.zeros(0)]
    out += ["cpu", "cuda:0", "stream", "none", "None", "\x00", "é" * 3, " " * 2]
    out += [0x1234, -(2**63), 2**64, range(3), {1, 2}, frozenset(), bytearray(b"s")]
    out += [len, lambda: None, type, wp.Stream, wp.array, Ellipsis, NotImplemented, slice(1)]
    return [o for o in out if o is not None]  # None means "the default" almost everywhere


def stream_cases(E: int, device) -> list[tuple[str, type | None, Callable]]:
    """``(label, expected error, factory)`` of ``stream=`` values for work on ``device``: None
    (accepted), every other kind (TypeError), arrays and devices included; on the CPU any
    ``wp.Stream`` (bare, a subclass, a spoof) is a ValueError; on CUDA the device's streams
    are accepted and another device's refused with ValueError."""
    dev = wp.get_device(device)
    cases: list[tuple[str, type | None, Callable]] = [("None", None, lambda: None)]
    for o in other_objects(E):
        cases.append((f"{type(o).__name__} {o!r:.24}", TypeError, lambda o=o: o))
    cases += [
        ("wp.array int32", TypeError, partial(wp.zeros, E, wp.int32, device)),
        ("wp.array vec3f", TypeError, partial(wp.zeros, E, wp.vec3f, device)),
        ("empty wp.array", TypeError, partial(wp.zeros, 0, wp.float32, device)),
        ("numpy [E]", TypeError, partial(np.ones, E, np.int32)),
        ("the device", TypeError, lambda: dev),
        ("the device name", TypeError, lambda: str(dev)),
        ("a wp.Stream factory", TypeError, lambda: wp.get_stream),
    ]
    if dev.is_cpu:
        cases += [
            ("bare wp.Stream", ValueError, bare_stream),
            ("bare wp.Stream subclass", ValueError, partial(bare_stream, StreamSubclass)),
            ("spoofed wp.Stream", ValueError, SpoofStream),
        ]
    else:
        cases += [
            ("the device's stream", None, lambda: wp.get_stream(dev)),
            ("a new stream of the device", None, partial(wp.Stream, dev)),
        ]
        for other in wp.get_cuda_devices():
            if other != dev:
                cases.append((f"a stream of {other}", ValueError, partial(wp.Stream, other)))
                break
    return cases


# ------------------------------------------------------------------------------ specs
# Oracles of what a PipelineSpec checks when it is made: randomizers and the mix's samplers.
def expected_range_error(lo_hi) -> type | None:
    """TypeError / ValueError of a ``(lo, hi)`` randomizer range on its own, or None: a pair
    (anything with a length of 2 that is not a str) of numbers, finite as floats, lo <= hi."""
    if isinstance(lo_hi, (str, bytes)) or not hasattr(lo_hi, "__len__") or len(lo_hi) != 2:
        return TypeError
    lo, hi = lo_hi
    if not (is_number(lo) and is_number(hi)):
        return TypeError
    flo, fhi = to_float(lo), to_float(hi)
    if flo is None or fhi is None:
        return ValueError
    if not (math.isfinite(flo) and math.isfinite(fhi)) or flo > fhi:
        return ValueError
    return None


def expected_randomizer_error(declarations: dict, name, lo_hi) -> type | None:
    """The error of ``spec.with_randomize({name: lo_hi})`` over a spec whose dynamic fields
    are ``declarations`` (public name -> Tunable), or None: a non-str name is a TypeError, a
    name without a dot a ValueError, then the range alone, then an unknown name a KeyError,
    then each end against the field's own range (as a construction value, float32 included)."""
    if not isinstance(name, str):
        return TypeError
    if "." not in name:
        return ValueError
    err = expected_range_error(lo_hi)
    if err is not None:
        return err
    if name not in declarations:
        return KeyError
    t = declarations[name]
    lo, hi = lo_hi
    return expected_error(t, float(lo), None) or expected_error(t, float(hi), None)


def range_pairs(t: Tunable) -> st.SearchStrategy:
    """``(lo, hi)`` ranges of a dynamic field: both ends from :func:`values` (so inside, at,
    just outside and far outside its range, wrong kinds too), sorted or not, and malformed
    pairs (a str, one or three numbers, a list, a NumPy array)."""
    ends = values(t)
    pair = st.tuples(ends, ends)
    return st.one_of(
        pair,
        pair.map(lambda p: tuple(sorted(p)) if all(is_number(v) for v in p) else p),
        in_range(t).map(lambda v: (v, v)),
        st.sampled_from(["ab", (1.0,), (0.1, 0.2, 0.3), 3, None, {"lo": 0.1}]),
        st.tuples(in_range(t), in_range(t)).map(list),
        st.tuples(in_range(t), in_range(t)).map(lambda p: np.asarray(sorted(p), np.float64)),
    )


def expected_mix_error(
    generators, samplers, registered, metres: bool = False
) -> tuple[type | None, type | None]:
    """``(error of presets.track_mix(generators, ...), error when its spec is built)``.
    ``samplers``: the registered samplers that can be mixed; ``registered``: every registered
    kind. A name that is neither is refused with ValueError, when the spec is made, or, for a
    namespaced name not registered yet (a plugin), when it is built. Order: the argument's
    kind (None, a str or bytes, a non-iterable: a TypeError), the entries (a mapping's items,
    or each element of a sequence as a name with weight 1): none (ValueError), more than 64
    (ValueError), then entry by entry a name that is no non-empty str (TypeError), a weight
    that is no number (TypeError) or is not finite, <= 0 or > 1e6 (ValueError); a name twice
    (ValueError); then each name in order: not registered or not a sampler that can be mixed
    (ValueError); then a sampler in metres (``circuit``) in a mix whose config is not a
    metre config (``metres``): ValueError when the spec is made."""
    if generators is None or isinstance(generators, (str, bytes)):
        return TypeError, None
    if not hasattr(generators, "__iter__"):
        return TypeError, None
    if hasattr(generators, "items"):
        items = list(generators.items())
    else:
        items = [(g, 1.0) for g in generators]
    if not items:
        return ValueError, None
    if len(items) > 64:
        return ValueError, None
    for name, w in items:
        if not isinstance(name, str) or not name:
            return TypeError, None
        if not is_number(w):
            return TypeError, None
        x = to_float(w)
        if x is None or not math.isfinite(x) or not (0.0 < x <= 1.0e6):
            return ValueError, None
    names = [name for name, _ in items]
    if len(set(names)) != len(names):
        return ValueError, None
    if any(n not in registered and "." in n.strip(".") for n in names):
        return None, ValueError  # a plugin name: every check of the mix waits for the build
    for name in names:
        if name not in samplers:
            return ValueError, None
    if not metres and any(n in METRE_SAMPLERS for n in names):
        return ValueError, None
    return None, None


# ------------------------------------------------------------------------------ tool inputs
# (hand-made courses and out-of-range poses; tests/tools/test_tool_inputs.py)
_F32_MAX = float(np.finfo(np.float32).max)
_HUGE_FINITE = [1e18, -1e18, 1.5e18, 1e19, -1e19, 1e30, -1e30, 3e38, _F32_MAX, -_F32_MAX]
_TINY = [0.0, -0.0, 1e-45, -1e-45, 1e-30, 1e-19]

#: Values a hand-made course array may hold: NaN, +-inf, huge finite (around ``COORD_LIMIT`` =
#: 1e18, beyond it, up to the float32 maximum), tiny, and any float32.
poison_floats = st.one_of(
    st.sampled_from([float("nan"), float("inf"), float("-inf"), 9.9e17, *_HUGE_FINITE, *_TINY]),
    st.floats(width=32),
)

#: Finite float32 pose components: ordinary values most of the time, and the huge and tiny
#: edges (up to the float32 maximum) often.
finite_pose_floats = st.one_of(
    st.floats(-3.0, 3.0, width=32),
    st.sampled_from(_HUGE_FINITE + _TINY),
    st.floats(width=32, allow_nan=False, allow_infinity=False),
)


def _quaternion_rows(rows: int, component) -> st.SearchStrategy:
    """``[rows, 4]`` quaternions: unit ones, unit ones scaled by a huge or tiny factor
    (1e30, 1e19, 1e-19, 1e-30), zero, and rows of ``component`` values."""
    unit = st.tuples(st.floats(-math.pi, math.pi), st.sampled_from([1.0, 1e30, 1e19, 1e-19, 1e-30]))

    def yaw_row(p):
        yaw, scale = p
        return (0.0, 0.0, scale * math.sin(yaw / 2), scale * math.cos(yaw / 2))

    row = st.one_of(
        unit.map(yaw_row),
        st.just((0.0, 0.0, 0.0, 0.0)),
        st.tuples(component, component, component, component),
    )
    return st.lists(row, min_size=rows, max_size=rows).map(
        lambda r: np.asarray(r, np.float64).astype(np.float32).reshape(rows, 4)
    )


def pose_rows(rows: int, width: int, quaternion: bool = False) -> st.SearchStrategy:
    """``[rows, width]`` float32 host arrays of any pose: ordinary, huge-but-finite, tiny,
    NaN and +-inf components (``quaternion=True``: also scaled unit quaternions)."""
    component = st.one_of(
        finite_pose_floats, st.sampled_from([float("nan"), float("inf"), -math.inf])
    )
    if quaternion:
        return _quaternion_rows(rows, component)
    row = st.tuples(*([component] * width))
    return st.lists(row, min_size=rows, max_size=rows).map(
        lambda r: np.asarray(r, np.float64).astype(np.float32).reshape(rows, width)
    )


def finite_pose_rows(rows: int, width: int, quaternion: bool = False) -> st.SearchStrategy:
    """:func:`pose_rows` without NaN or inf (every component finite, up to the float32
    maximum)."""
    if quaternion:
        return _quaternion_rows(rows, finite_pose_floats)
    row = st.tuples(*([finite_pose_floats] * width))
    return st.lists(row, min_size=rows, max_size=rows).map(
        lambda r: np.asarray(r, np.float64).astype(np.float32).reshape(rows, width)
    )


# ------------------------------------------------------------------------------ files and paths
# (track_gen.io batch files, output paths, picture writers)

#: One value a per-env entry of a batch file may hold: ints around every int32 / int64 /
#: uint64 edge, floats (NaN, inf, beyond float32, fractions), strings, bools and JSON nulls.
file_scalars = st.one_of(
    boundary_ints,
    st.sampled_from([2**64 - 3, 2**64, 2**40 + 1, 255, 256, -129, 127]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 3.7, -1.0, 1e9, 1e39, -1e39, 5e-324, 0.3, 0.45]),
    st.sampled_from(["7", "a", "", "nan", True, False, None]),
)

#: dtype names a JSON batch entry may declare (and ones it may not).
JSON_DTYPES = (
    "int32",
    "int64",
    "uint64",
    "int8",
    "uint8",
    "float32",
    "float64",
    "float16",
    "bool",
    "complex64",
    "<U3",
    "object",
    "datetime64[s]",
    "no-such-dtype",
)

#: NumPy dtypes an npz batch entry may hold.
NPZ_DTYPES = (
    np.int32,
    np.int64,
    np.uint64,
    np.int8,
    np.uint32,
    np.float32,
    np.float64,
    np.float16,
    np.bool_,
    np.complex64,
    np.str_,
    np.bytes_,
)


def per_env_lists(E: int) -> st.SearchStrategy:
    """Lists of ``E`` file values (sometimes ``E - 1`` or ``E + 1``): one kind throughout, or
    mixed."""
    sizes = st.sampled_from([E, E, E, E - 1, E + 1])
    same = st.tuples(file_scalars, sizes).map(lambda p: [p[0]] * p[1])
    mixed = sizes.flatmap(lambda n: st.lists(file_scalars, min_size=n, max_size=n))
    return st.one_of(same, mixed)


def json_array_oracle(dtype, data: list) -> np.ndarray | None:
    """The array a JSON entry ``{"dtype", "shape": [len(data)], "data"}`` loads as, or None
    when it must be refused: a dtype that is not an int or float type; an element of another
    kind (a bool, a str, a float in an int array), an int beyond the dtype's range, a number
    beyond float64 or beyond a float dtype's range (null is NaN)."""
    if not isinstance(dtype, str):
        return None
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError):
        return None
    if dt.kind in "iu":
        if not all(type(v) is int for v in data):
            return None
        info = np.iinfo(dt)
        if any(v < info.min or v > info.max for v in data):
            return None
        return np.array(data, dtype=dt)
    if dt.kind != "f":
        return None
    if not all(v is None or type(v) in (int, float) for v in data):
        return None
    try:
        wide = np.array([math.nan if v is None else float(v) for v in data], dtype=np.float64)
    except OverflowError:
        return None
    with np.errstate(over="ignore"):
        arr = wide.astype(dt)
    if np.any(np.isinf(arr) & np.isfinite(wide)):
        return None
    return arr


def expected_int_entry(values, count: int, lo: int, hi: int) -> list[int] | None:
    """The ints a seeds / epochs entry holds (one per env, each in ``[lo, hi]``, never cast),
    or None when it must be refused (:func:`expected_host_values` of ``kind="int"``, a uint64
    value read as the int it is)."""
    if isinstance(values, np.ndarray) and values.dtype == np.uint64:
        values = values.tolist()
    err, items = expected_host_values(values, "int")
    if err is not None or len(items) != count or any(not lo <= v <= hi for v in items):
        return None
    return items


#: Output names for the path rule: '', folders, separators, names at and beyond 255 bytes, no
#: or a wrong suffix, a file used as a folder, dots, unicode; each joined to a test folder
#: holding a folder ``DIR`` and a file ``FILE``.
def out_names(suffix: str) -> st.SearchStrategy:
    fixed = [
        "",
        ".",
        "..",
        "DIR",
        "DIR/",
        "DIR/x" + suffix,
        "FILE",
        "FILE/x" + suffix,
        "missing/x" + suffix,
        "x",
        "x.txt",
        "x" + suffix + ".bak",
        "x" + suffix.upper(),
        suffix,
        "a" * (255 - len(suffix)) + suffix,
        "a" * (256 - len(suffix)) + suffix,
        "a" * 300 + suffix,
        "é" * 127 + suffix,
        "x\x00" + suffix,
        "x" + suffix + "/",
    ]
    text = st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), max_size=20
    )
    return st.one_of(st.sampled_from(fixed), text, text.map(lambda s: s + suffix))


def expected_path_error(folder: str, name: str, suffixes) -> type | None:
    """The error writing ``folder/name`` must raise under the rule of
    ``track_gen.io.paths`` (``suffixes``: the accepted endings, None any), or None."""
    import os

    if name == "" or "\x00" in name:
        return ValueError
    path = os.path.join(folder, name)
    if path.endswith("/"):
        return ValueError
    raw = os.fsencode(path)
    if len(raw) > 4095 or any(len(p) > 255 for p in raw.split(b"/")):
        return ValueError
    if os.path.isdir(path):
        return IsADirectoryError
    base = os.path.basename(path)
    if suffixes is not None and not base.lower().endswith(tuple(suffixes)):
        return ValueError
    parent = os.path.dirname(path)
    if not os.path.exists(parent):
        return FileNotFoundError
    if not os.path.isdir(parent):
        return NotADirectoryError
    return None


# ------------------------------------------------------------------------------ RaceConfig
def race_capacity_min() -> dict[str, float]:
    """The smallest ``checkpoint_spacing`` and ``cones_spacing`` (both borders) whose
    checkpoints / cones fit their capacity (65536) on the longest loop the default track
    config allows: RaceConfig's rules between fields, restated from the capacity rules of
    docs/course.md (``(N_max + 1) * bead spacing``; a border ``1.01 * (loop + 2 pi half
    width)``)."""
    cfg = TrackGenConfig()
    loop = (cfg.N_max + 1) * cfg.resolved_spacing
    border = 1.01 * (loop + 2.0 * math.pi * cfg.half_width)
    return {"checkpoint_spacing": loop / 65536, "cones_spacing": 2 * border / 65536}


def expected_race_config_error(name: str, t: Tunable, value, observations: str = "state"):
    """The error ``RaceConfig(**{name: value}, observations=observations)`` must raise, or
    None: the declaration's oracle (kind, range, the float32 a kernel reads), then
    RaceConfig's narrower range, then the capacity rule of the spacings (the cones' only
    when observed)."""
    from track_gen.envs import RaceConfig

    err = expected_error(t, value, None)
    narrowed = RaceConfig.__narrowed__.get(name)
    if err is None and narrowed is not None:
        err = expected_error(narrowed, value, None)
    least = race_capacity_min().get(name)
    if err is None and least is not None:
        if name == "checkpoint_spacing" or "cones" in observations.split("+"):
            err = ValueError if float(value) < least * (1 - 1e-9) else None
    # the car's rules on the default (track-unit) config: circuits and the single-track car
    # are metre-only, and a metre config draws circuits
    metre_only = {"generator": "circuit", "unit": "m", "dynamics": "single_track"}
    if err is None and name in metre_only and value == metre_only[name]:
        err = ValueError
    return err
