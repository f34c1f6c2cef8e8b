"""One declaration per tunable: :class:`Tunable`, and what is derived from it.

A stage (or a course component) declares each field it reads once, beside its kernels:
name, default, kind, closed range, unit, doc, static or dynamic. Everything else is derived
from that row:

* the flat config classes (:class:`~track_gen.TrackGenConfig`, ...) get one dataclass field
  per declaration and check it with :meth:`Tunable.check` (:func:`config_class`); a class may
  override the default of a field it shares (``config_class(..., defaults=)``, read with
  :func:`class_default`): the gate config's sampler resolution;
* a stage's values (:func:`resolve_values`: config field, else stage option, else default);
* ``generator.params`` checks every scalar and array write with :meth:`Tunable.check` /
  :meth:`Tunable.check_host_array`, and the device re-checks every dynamic value at each
  regeneration against :meth:`Tunable.device_bounds`;
* randomizer ranges (``with_randomize``) are checked against the same range;
* the field tables of the docs (:func:`field_rows`, and ``docs/gen_fields.py`` for the
  course components, from ``surfaces`` and ``aliases``).

A public surface (a component, its utility, a preset, a config class) that takes a field under
another keyword than its name says so in the declaration (``aliases``: the band collider's
``method`` is ``collision=`` of ``Course.track`` and ``CourseConfig``): there is no second
table of names.

The ranges are closed where a kernel needs it: every int and float declares both bounds, ints
stay inside int32, so no accepted value can overflow a count, divide by zero, loop without
bound or allocate beyond the memory budget the program checks.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import difflib
import functools
import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from .checks import (
    INT32_MAX,
    INT32_MIN,
    as_float,
    check_bool,
    check_choice,
    check_float,
    check_int,
    is_number,
    range_text,
)

__all__ = [
    "F32_NORMAL_MIN",
    "F32_SAFE_MAX",
    "F32_SAFE_MIN",
    "Tunable",
    "Values",
    "class_default",
    "config_class",
    "config_label",
    "field_name",
    "field_rows",
    "float32_bound_problem",
    "labelled",
    "float32_value_problem",
    "resolve_values",
]

_KINDS = ("int", "float", "floats", "bool", "choice", "name", "device", "names", "settings")

#: Largest magnitude a float declaration may give a bound: the square of a bound, a product of
#: two bounds and a bound divided by the smallest one (:data:`F32_SAFE_MIN`) stay below 1e24,
#: far inside float32 (3.4e38), so what a kernel derives from any accepted value stays finite.
F32_SAFE_MAX = 1.0e12
#: Smallest magnitude of a nonzero float bound: a field whose values must be positive declares
#: its smallest physical value (``lo=1e-6`` closed), never ``lo=0`` exclusive, which would
#: admit 1e-38 and its float32 reciprocal of 1e38.
F32_SAFE_MIN = 1.0e-9
#: Smallest normal float32 (1.1754944e-38): a nonzero value below it is stored as a denormal
#: or 0 by a float32 kernel argument, so it is refused.
F32_NORMAL_MIN = float(np.finfo(np.float32).tiny)


@dataclass(frozen=True, eq=False)
class Tunable:
    """The declaration of one tunable field.

    Attributes:
        name: the field's name inside its stage or component (``"rad"``); a dynamic field is
            ``generator.params["<stage>.<name>"]``.
        default: the default value.
        lo, hi: closed bounds (required for ints and floats). A bound may be another
            :class:`Tunable` of the same owner (``max_corners >= min_corners``).
        lo_open, hi_open: make a bound exclusive.
        kind: ``"int"``, ``"float"``, ``"floats"`` (a tuple of ``length`` floats, each in the
            range), ``"bool"``, ``"choice"`` (one of ``choices``), ``"name"`` (a non-empty str),
            ``"device"`` (a device string or None), ``"names"`` (a tuple of ``length``
            distinct non-empty strs, each one of ``choices`` when given, else checked by
            ``rule``; a list is taken, and a str joined by ``+`` for ``"a+b"``) or
            ``"settings"`` (an instance of ``settings_class``, a settings class made by
            :func:`config_class`; a mapping of its fields is taken too); inferred from
            ``default`` when empty.
        choices: the allowed strings of a ``"choice"``; on an ``"int"``, strings allowed
            besides the range (``cpu_threads``: an int or ``"auto"``).
        dynamic: True for a per-env ``[E]`` float32 device array (``generator.params``) that
            kernels read at launch; False for a value fixed at construction.
        optional: None is allowed too (its meaning goes in ``doc``).
        config: the flat config field name (default: ``name``).
        unit: unit of the value (``"track units"``, ``"rad"``, ``"sweeps"``), or ``""``.
        doc: meaning, one sentence.
        write_lo_open: ``lo`` is exclusive for values written after construction (a gate width
            may start at 0, but one set later must be > 0).
        rule: extra check ``rule(value, lookup) -> error text or None``; ``lookup(tunable)``
            gives another field's value.
        renamed_from: earlier config names of this field (a call with one gets a TypeError
            naming the new name).
        length: ``(fewest, most)`` values of a ``"floats"`` field.
        surfaces: the public callables that take this field as a keyword, as paths below
            ``track_gen`` (``"tools.Checkpoints"``, ``"course.Course.track"``); the docs list
            them (the config classes made by :func:`config_class` need not be listed).
        aliases: ``{surface: keyword}`` where a surface takes the field under another keyword
            than ``name`` (``{"CourseConfig": "collision"}``); a surface is named by its label:
            its path without the module (``"Course.track"``, ``"CourseConfig"``). A config
            class made by :func:`config_class` names the field ``aliases[class name]``.
        settings_class: the class of a ``"settings"`` field.
        flat_prefix: a ``"settings"`` field's flat keywords in a config class: ``"lidar_"``
            makes ``lidar_num_beams=`` set ``lidar.num_beams`` (and read it back).
    """

    name: str
    default: Any
    lo: Any = None
    hi: Any = None
    lo_open: bool = False
    hi_open: bool = False
    kind: str = ""
    choices: tuple[str, ...] = ()
    dynamic: bool = False
    optional: bool = False
    config: str = ""
    unit: str = ""
    doc: str = ""
    write_lo_open: bool = False
    rule: Callable | None = None
    renamed_from: tuple[str, ...] = ()
    length: tuple[int, int] = (0, 0)
    surfaces: tuple[str, ...] = ()
    aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)
    settings_class: type | None = None
    flat_prefix: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise TypeError(f"Tunable.name must be an identifier, got {self.name!r}")
        kind = self.kind or _infer_kind(self.default, self.choices)
        if kind not in _KINDS:
            raise ValueError(f"Tunable {self.name!r}: kind {kind!r} must be one of {_KINDS}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "choices", tuple(self.choices))
        object.__setattr__(self, "surfaces", tuple(self.surfaces))
        object.__setattr__(self, "aliases", MappingProxyType(dict(self.aliases)))
        for keyword in self.aliases.values():
            if not isinstance(keyword, str) or not keyword.isidentifier():
                raise TypeError(f"Tunable {self.name!r}: alias {keyword!r} is not an identifier")
        if kind == "floats":
            a, b = self.length
            if not (is_number(a) and is_number(b) and 0 < a <= b):
                raise ValueError(f"Tunable {self.name!r}: floats declare length=(fewest, most)")
        if kind in ("int", "float", "floats"):
            if self.lo is None or self.hi is None:
                raise ValueError(
                    f"Tunable {self.name!r}: an {kind} field declares both bounds (lo and hi) "
                    "so that no value can drive a kernel out of bounds"
                )
            for b in (self.lo, self.hi):
                if isinstance(b, Tunable):
                    continue
                if not is_number(b) or not math.isfinite(float(b)):
                    raise ValueError(f"Tunable {self.name!r}: bound {b!r} must be a finite number")
                if kind == "int" and not (INT32_MIN <= b <= INT32_MAX):
                    raise ValueError(f"Tunable {self.name!r}: int bound {b} exceeds int32")
        if kind in ("float", "floats"):
            problem = float32_bound_problem(self)
            if problem:
                raise ValueError(f"Tunable {self.name!r}: {problem}")
        if kind == "names":
            a, b = self.length
            if not (is_number(a) and is_number(b) and 0 < a <= b):
                raise ValueError(f"Tunable {self.name!r}: names declare length=(fewest, most)")
        if kind == "settings" and not (
            isinstance(self.settings_class, type) and hasattr(self.settings_class, "__tunables__")
        ):
            raise TypeError(
                f"Tunable {self.name!r}: a settings field declares settings_class, a class made "
                "by config_class"
            )
        if kind == "choice" and not self.choices:
            raise ValueError(f"Tunable {self.name!r}: a choice declares its choices")
        if self.dynamic and kind != "float":
            raise ValueError(
                f"Tunable {self.name!r}: dynamic fields are floats (float32 on device)"
            )
        if self.dynamic and (isinstance(self.lo, Tunable) or isinstance(self.hi, Tunable)):
            raise ValueError(f"Tunable {self.name!r}: a dynamic field has numeric bounds")

    @property
    def field(self) -> str:
        """The flat config field name."""
        return self.config or self.name

    def keyword(self, surface: str) -> str:
        """The keyword ``surface`` (a label: ``"CourseConfig"``, ``"Course.track"``) takes this
        field under: its alias there, else :attr:`field`."""
        return self.aliases.get(surface, self.field)

    def _count_text(self) -> str:
        a, b = self.length
        return f"{a}" if a == b else f"{a} to {b}"

    # ------------------------------------------------------------------ checks
    def bounds(self, lookup: Callable | None = None) -> tuple[Any, Any]:
        """``(lo, hi)`` with field references resolved through ``lookup(tunable)``."""

        def res(b):
            if isinstance(b, Tunable):
                return None if lookup is None else lookup(b)
            return b

        return res(self.lo), res(self.hi)

    def _lo_open(self, write: bool) -> bool:
        return self.lo_open or (write and self.write_lo_open)

    def range_text(self, lookup: Callable | None = None, write: bool = False) -> str:
        """The allowed values, as text (``">= 0 and <= 2"``, ``"one of (...)"``)."""
        if self.kind == "choice":
            text = f"one of {self.choices}"
        elif self.kind == "bool":
            text = "True or False"
        elif self.kind == "name":
            text = "a non-empty str"
        elif self.kind == "device":
            text = "a device string ('cpu', 'cuda:0') or None"
        elif self.kind == "names":
            one = f"each one of {self.choices}" if self.choices else "each a registered name"
            text = f"{self._count_text()} distinct names, {one}"
        elif self.kind == "settings":
            text = f"a {self.settings_class.__name__}"
        else:
            lo, hi = self.bounds(lookup)
            if lookup is None:
                lo = self.lo.field if isinstance(self.lo, Tunable) else lo
                hi = self.hi.field if isinstance(self.hi, Tunable) else hi
            text = range_text(lo, hi, self._lo_open(write), self.hi_open)
            if self.kind == "int" and self.choices:
                text = f"an int {text}, or one of {self.choices}"
            if self.kind == "floats":
                text = f"{self._count_text()} numbers, each {text}"
        if self.optional and self.kind != "device":
            text += ", or None"
        return text

    def check(self, value, owner: str, lookup: Callable | None = None, write: bool = False):
        """``value`` normalized to its Python kind, or TypeError / ValueError naming ``owner``
        (``"TrackGenConfig.rad"``, ``"params['bezier.rad']"``), the value and the range.

        ``write=True`` checks a value written after construction (``write_lo_open``)."""
        if value is None and (self.optional or self.kind == "device"):
            return None
        kind = self.kind
        if kind == "bool":
            return check_bool(owner, value)
        if kind == "choice":
            return check_choice(owner, value, self.choices)
        if kind == "name":
            if not isinstance(value, str):
                raise TypeError(f"{owner} must be a non-empty str, got {value!r}")
            if not value:
                raise ValueError(f"{owner} = '' is out of range: must be a non-empty str")
            return str(value)  # np.str_ -> str
        if kind == "device":
            if not isinstance(value, str):
                raise TypeError(
                    f"{owner} must be a str such as 'cpu' or 'cuda:0', or None, got {value!r}"
                )
            return str(value)
        if kind == "floats":
            return self._check_floats(value, owner)
        if kind == "names":
            v = self._check_names(value, owner)
            if self.rule is not None and lookup is not None:
                err = self.rule(v, lookup)
                if err:
                    raise ValueError(f"{owner} = {value!r} is out of range: {err}")
            return v
        if kind == "settings":
            return self._check_settings(value, owner)
        lo, hi = self.bounds(lookup)
        if isinstance(self.lo, Tunable) and lo is not None:
            lo_text = f"{self.lo.field} = {lo}"
        else:
            lo_text = lo
        if isinstance(self.hi, Tunable) and hi is not None:
            hi_text = f"{self.hi.field} = {hi}"
        else:
            hi_text = hi
        if kind == "int":
            if self.choices and isinstance(value, str):
                if value not in self.choices:
                    raise ValueError(
                        f"{owner} = {value!r} is out of range: must be {self.range_text(lookup)}"
                    )
                return str(value)
            v = check_int(owner, value)
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                raise ValueError(
                    f"{owner} = {v!r} is out of range: must be {range_text(lo_text, hi_text)}"
                )
        else:
            v = as_float(owner, value)
            lo_open = self._lo_open(write)
            rule = range_text(lo_text, hi_text, lo_open, self.hi_open)
            if not math.isfinite(v):
                raise ValueError(f"{owner} = {value!r} is out of range: must be finite, {rule}")
            if _outside(v, lo, hi, lo_open, self.hi_open):
                raise ValueError(f"{owner} = {value!r} is out of range: must be {rule}")
            problem = float32_value_problem(v, lo, hi, lo_open, self.hi_open)
            if problem:
                raise ValueError(f"{owner} = {value!r} is out of range: {problem}, {rule}")
            v = v + 0.0  # -0.0 -> 0.0: a kernel reads a zero field as +0
        if self.rule is not None and lookup is not None:
            err = self.rule(v, lookup)
            if err:
                raise ValueError(f"{owner} = {value!r} is out of range: {err}")
        return v

    def _check_floats(self, value, owner: str) -> tuple:
        """A ``"floats"`` value as a tuple of Python floats: TypeError unless a tuple or list,
        ValueError for a count outside ``length`` or a value out of range (naming its index)."""
        a, b = self.length
        if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
            raise TypeError(
                f"{owner} must be a tuple of {self._count_text()} numbers, got "
                f"{type(value).__name__} {value!r}"
            )
        if not a <= len(value) <= b:
            raise ValueError(
                f"{owner} must hold {self._count_text()} numbers, got {len(value)}: {value!r}"
            )
        lo, hi = self.bounds()
        out = []
        for i, v in enumerate(value):
            name = f"{owner}[{i}]"
            x = check_float(name, v, lo, hi, self.lo_open, self.hi_open)
            problem = float32_value_problem(x, lo, hi, self.lo_open, self.hi_open)
            if problem:
                rule = range_text(lo, hi, self.lo_open, self.hi_open)
                raise ValueError(f"{name} = {v!r} is out of range: {problem}, {rule}")
            out.append(x + 0.0)
        return tuple(out)

    def _check_names(self, value, owner: str) -> tuple:
        """A ``"names"`` value as a tuple of str: TypeError unless a tuple, a list or a str
        (``"a+b"``) of strs, ValueError for a count outside ``length``, an empty name, a name
        twice or one outside ``choices``."""
        if isinstance(value, str):
            value = value.split("+")
        if not isinstance(value, (tuple, list)):
            raise TypeError(
                f"{owner} must be a tuple of names (or 'a+b'), got {type(value).__name__} {value!r}"
            )
        for v in value:
            if not isinstance(v, str):
                raise TypeError(f"{owner} must hold names (str), got {type(v).__name__} {v!r}")
        names = tuple(str(v) for v in value)
        a, b = self.length
        if not a <= len(names) <= b:
            raise ValueError(
                f"{owner} must hold {self._count_text()} names, got {len(names)}: {names!r}"
            )
        if any(not n for n in names):
            raise ValueError(f"{owner} = {names!r} holds an empty name")
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"{owner} = {names!r} names {twice} twice: name each term once")
        if self.choices:
            bad = [n for n in names if n not in self.choices]
            if bad:
                raise ValueError(
                    f"{owner} = {names!r} is out of range: {bad} not among {self.choices}"
                )
        return names

    def _check_settings(self, value, owner: str):
        """A ``"settings"`` value: an instance of ``settings_class`` as it is, a mapping of its
        fields made into one (checked by it), else TypeError."""
        cls = self.settings_class
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            try:
                return cls(**value)
            except (TypeError, ValueError) as err:
                raise type(err)(f"{owner}: {err}") from None
        raise TypeError(
            f"{owner} must be a {cls.__name__} (or a mapping of its fields), got "
            f"{type(value).__name__} {value!r:.80}"
        )

    def check_host_array(self, values: np.ndarray, owner: str, write: bool = True) -> None:
        """Vectorized :meth:`check` of a host float array (a per-env params write): names the
        first env whose value is NaN, inf or out of range, as float64 or as the float32 the
        device stores (the device check's view)."""
        lo, hi = self.bounds()
        lo_open = self._lo_open(write)
        v = np.asarray(values, dtype=np.float64)
        v32 = _float32(v).astype(np.float64)
        bad = ~np.isfinite(v) | ~np.isfinite(v32)
        with np.errstate(invalid="ignore"):
            bad |= _outside(v, lo, hi, lo_open, self.hi_open)
            bad |= _outside(v32, _f32(lo), _f32(hi), lo_open, self.hi_open)
            bad |= (v != 0) & ~(np.abs(v32) >= F32_NORMAL_MIN)
        if bad.any():
            e = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{owner}: env {e} has {float(v[e])!r} (float32 {float(v32[e])!r}), out of "
                "range: every "
                f"value must be a finite float32, 0 or normal (|x| >= {F32_NORMAL_MIN:.8g}), "
                f"{range_text(lo, hi, lo_open, self.hi_open)} "
                f"({int(bad.sum())} env(s) out of range; nothing was written)"
            )

    def device_bounds(self) -> tuple[float, float, int]:
        """``(lo, hi, open_flags)`` for the device check: bit 0 lo exclusive, bit 1 hi
        exclusive. The device check uses the construction range (``write_lo_open`` aside)."""
        flags = (1 if self.lo_open else 0) | (2 if self.hi_open else 0)
        return float(self.lo), float(self.hi), flags

    def __repr__(self) -> str:
        return f"Tunable({self.name!r}, {self.default!r}, {self.range_text()})"


def float32_value_problem(v: float, lo, hi, lo_open: bool, hi_open: bool) -> str | None:
    """Why the float ``v`` (already in ``[lo, hi]`` as a float64) is not a value a float32
    kernel can read as it is, or None: its float32 must be finite, 0 only where ``v`` is 0
    (``1e-300`` would become 0), normal (a denormal loses its precision and its reciprocal
    overflows) and still inside the bounds (rounded to float32)."""
    v32 = float(_float32(np.float64(v)))
    if not math.isfinite(v32):
        return f"a float32 kernel would read it as {v32!r}; it must be finite in float32"
    if v != 0 and not abs(v32) >= F32_NORMAL_MIN:
        return (
            f"a float32 kernel would read it as {v32!r}; it must be 0 or a normal float32 "
            f"(|x| >= {F32_NORMAL_MIN:.8g})"
        )
    if _outside(v32, _f32(lo), _f32(hi), lo_open, hi_open):
        return f"it is stored as float32 {v32!r}, which must be in range too"
    return None


def float32_bound_problem(t: Tunable) -> str | None:
    """Why the float declaration ``t`` does not have float32-safe bounds, or None.

    The rule every float field keeps: both bounds are finite numbers (or another field), each
    nonzero bound has a magnitude in ``[F32_SAFE_MIN, F32_SAFE_MAX]`` (1e-9 to 1e12), and no
    bound is an exclusive 0 (a positive field declares its smallest physical value as a closed
    ``lo`` instead). Every accepted value is then 0 or at least 1e-9 in magnitude and at most
    1e12, so a reciprocal, a square or a product with another field stays finite in float32.
    """
    for side, b, is_open in (("lo", t.lo, t.lo_open), ("hi", t.hi, t.hi_open)):
        if isinstance(b, Tunable):
            continue
        if b is None or not is_number(b) or not math.isfinite(float(b)):
            return f"float bound {side}={b!r} must be a finite number"
        b = float(b)
        if b == 0:
            if is_open:
                return (
                    f"bound {side}=0 is exclusive, which admits 1e-38 (a float32 reciprocal "
                    f"of 1e38): declare the smallest physical value as a closed {side} "
                    f"(magnitude >= {F32_SAFE_MIN:g})"
                )
        elif not F32_SAFE_MIN <= abs(b) <= F32_SAFE_MAX:
            return (
                f"bound {side}={b!r} is outside the float32-safe magnitudes "
                f"[{F32_SAFE_MIN:g}, {F32_SAFE_MAX:g}] (0 aside): choose a physical bound there"
            )
    return None


def _outside(v, lo, hi, lo_open: bool, hi_open: bool):
    """True (elementwise for arrays) where ``v`` is outside the range; None bounds are open."""
    out = False
    if lo is not None:
        out = out | ((v <= lo) if lo_open else (v < lo))
    if hi is not None:
        out = out | ((v >= hi) if hi_open else (v > hi))
    return out


def _float32(v):
    with np.errstate(over="ignore"):
        return np.asarray(v, dtype=np.float64).astype(np.float32)


def _f32(b):
    return None if b is None else float(_float32(b))


def _infer_kind(default, choices) -> str:
    if choices:
        return "choice"
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    if isinstance(default, float):
        return "float"
    raise ValueError(f"cannot infer the kind of a Tunable with default {default!r}: pass kind=")


class Values(Mapping):
    """A stage's resolved field values: ``values.rad`` or ``values["rad"]`` (read-only)."""

    def __init__(self, data: dict):
        object.__setattr__(self, "_data", dict(data))

    def __getattr__(self, name):
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(f"no field {name!r}; fields: {sorted(self._data)}") from None

    def __setattr__(self, name, value):
        raise AttributeError("stage values are read-only")

    def __getitem__(self, name):
        return self._data[name]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Values({self._data})"


def resolve_values(
    fields: Iterable[Tunable], config, options: Mapping, owner: str, extra: Iterable[str] = ()
) -> Values:
    """Each field's value: ``options[name]`` when given (checked), else the config's field,
    else the declared default (checked). Unknown option names raise ValueError listing the
    accepted ones (``extra``: further option names the caller handles itself)."""
    fields = list(fields)
    by_name = {t.name: t for t in fields}
    known = set(by_name) | set(extra)
    unknown = [k for k in options if k not in known]
    if unknown:
        raise ValueError(
            f"{owner}: unknown option(s) {sorted(map(str, unknown))}; accepted options: "
            f"{sorted(known) or 'none'}"
        )
    items = []
    for t in fields:
        if t.name in options:
            items.append((t, options[t.name], f"{owner} option {t.name!r}"))
        elif config is not None and hasattr(config, t.field):
            where = f"{type(config).__name__}.{t.field} (with {owner}'s options)"
            items.append((t, getattr(config, t.field), where))
        else:
            items.append((t, t.default, f"{owner} default of {t.name!r}"))

    def outside(t: Tunable):
        return getattr(config, t.field) if hasattr(config, t.field) else t.default

    # an option may break a bound or a rule of another field (max_corners >= min_corners)
    values = check_together(items, outside)
    return Values({t.name: v for (t, _, _), v in zip(items, values, strict=True)})


def check_together(items, outside: Callable | None = None) -> list:
    """Check ``(tunable, value, owner)`` items as one set of fields: each value alone first
    (its kind and own bounds; NumPy scalars become Python values), then each again with every
    other (normalized) value, for the bounds and rules that read another field. ``outside(t)``
    gives a field the items do not hold. Returns the normalized values, in order."""
    alone = {id(t): t.check(value, owner) for t, value, owner in items}

    def lookup(t: Tunable):
        return alone[id(t)] if id(t) in alone else outside(t)

    return [t.check(alone[id(t)], owner, lookup) for t, _, owner in items]


#: The label a config class's messages name it by while :func:`labelled` is active (a
#: component building its settings names itself: ``Lidar.num_beams``, not
#: ``LidarSettings.num_beams``).
_LABEL: contextvars.ContextVar[str | None] = contextvars.ContextVar("config_label", default=None)


@contextlib.contextmanager
def labelled(label: str):
    """Within the block, a config class made by :func:`config_class` names itself ``label`` in
    its messages (``"Lidar.fov = -1 is out of range ..."``): the class's one check path, with
    the name of the call the user made."""
    token = _LABEL.set(label)
    try:
        yield
    finally:
        _LABEL.reset(token)


def config_label(config) -> str:
    """The name ``config`` (a config class instance) goes by in messages: the active
    :func:`labelled` label, else its class name (for a ``check=`` rule's message)."""
    return _LABEL.get() or type(config).__name__


def _required(t: Tunable, value) -> bool:
    """Whether ``value`` is a missing required field: None where the declaration has no
    default and None is not a value of the field."""
    return value is None and not (t.optional or t.kind == "device")


def _annotation(t: Tunable):
    if t.kind == "settings":
        return t.settings_class
    base = {"int": int, "float": float, "floats": tuple, "names": tuple, "bool": bool}.get(
        t.kind, str
    )
    if t.kind == "int" and t.choices:
        base = int | str
    return base | None if (t.optional or t.kind == "device") else base


def config_class(
    name: str,
    groups: Iterable[tuple[str, str, Iterable[Tunable]]],
    *,
    base: type | None = None,
    doc: str = "",
    namespace: dict | None = None,
    defaults: Mapping[str, Any] | None = None,
    narrow: Mapping[str, Mapping[str, Any]] | None = None,
    check: Callable | None = None,
    module: str = "track_gen.config",
    keywords_of: str | None = None,
) -> type:
    """A frozen dataclass with one field per declaration of ``groups``.

    Args:
        name: class name.
        groups: ``(title, prefix, tunables)`` sections, in field order: ``prefix`` is the stage
            name of the section's dynamic fields (``"bezier"`` -> ``params["bezier.rad"]``); a
            tunable listed twice (a field shared by several stages) becomes one field.
        base: a config class made by this function whose fields come first.
        doc: the class docstring's summary; the field list is appended from the declarations.
        namespace: methods and properties of the class.
        defaults: per-class default overrides, ``{field name: value}``, for fields of this
            class (its own or inherited from ``base``): the class's default of that field is
            ``value`` instead of the declaration's ``default`` (the declaration, its range and
            every other class keep theirs). ``GateGenConfig`` uses it to run the shared
            samplers at a coarser resolution than ``TrackGenConfig``. Each value is checked
            against its declaration; a subclass inherits its base's overrides; the class
            docstring and :func:`field_rows` show the class's default (:func:`class_default`).
            A value the user passes always wins over the override.
        narrow: per-class narrower bounds, ``{field name: {"lo": ..., "hi": ...}}``, for a
            shared declaration whose kernels allow more than this class's users may pass
            (``RaceConfig.checkpoint_spacing``): a value is checked against the declaration
            first (its message), then against the narrowed range; the docs show the narrowed
            range.
        check: the rules between fields that no single declaration states (a capacity two
            fields and the generator decide together): ``check(config)`` runs after every
            field is checked and raises ValueError naming the class's own field names and a
            fix a user can apply in the class; a subclass keeps its base's.
        module: the ``__module__`` of the class.
        keywords_of: the surface label whose keywords name the fields (default: ``name``): a
            tool's settings class takes its fields under its component's keywords.

    A field's name in the class is the declaration's keyword for ``keywords_of`` (the class
    name by default; :meth:`Tunable.keyword`: ``aliases[label]``, else ``field``).

    The class checks and normalizes every field in ``__post_init__`` (NumPy scalars become
    Python values), refuses unknown keywords with a TypeError naming close matches (and the
    new name of a renamed field), and has ``replace(**changes)``.
    """
    own: list[Tunable] = []
    own_names: list[str] = []
    seen = {id(t) for t in getattr(base, "__tunables__", ())}
    sections = list(getattr(base, "__sections__", ()))
    for title, prefix, items in groups:
        listed = []
        for t in items:
            if id(t) not in seen:
                seen.add(id(t))
                own.append(t)
                own_names.append(t.keyword(keywords_of or name))
            listed.append(t)
        sections.append((title, prefix, tuple(listed)))
    tunables = tuple(getattr(base, "__tunables__", ())) + tuple(own)
    names = [*getattr(base, "__field_names__", ()), *own_names]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"{name}: fields {sorted(dup)} are declared by two tunables")
    renamed = {old: n for t, n in zip(tunables, names, strict=True) for old in t.renamed_from}
    by_field = dict(zip(names, tunables, strict=True))
    overrides = dict(getattr(base, "__default_overrides__", {}))
    for key, value in (defaults or {}).items():
        if key not in by_field:
            raise ValueError(f"{name}: default override for unknown field {key!r}")
        overrides[key] = by_field[key].check(value, f"{name} default of {key!r}")
    narrowed = dict(getattr(base, "__narrowed__", {}))
    for key, bounds in (narrow or {}).items():
        if key not in by_field or by_field[key].kind not in ("int", "float"):
            raise ValueError(f"{name}: narrow names {key!r}, not a number field of the class")
        narrowed[key] = dataclasses.replace(by_field[key], **bounds)

    def post_init(self):
        cls = type(self)
        label = _LABEL.get() or cls.__name__
        items = [
            (t, getattr(self, n), f"{label}.{n}")
            for t, n in zip(cls.__tunables__, cls.__field_names__, strict=True)
        ]
        for t, value, owner in items:
            if _required(t, value) and class_default(cls, t) is None:
                unit = f" ({t.unit})" if t.unit else ""
                kind = {"int": "an int", "float": "a number"}.get(t.kind, f"a {t.kind}")
                raise TypeError(f"{owner} is required{unit}: pass {kind} {t.range_text()}")
        for (_, _, owner), n, v in zip(
            items, cls.__field_names__, check_together(items), strict=True
        ):
            if n in cls.__narrowed__:
                v = cls.__narrowed__[n].check(v, owner)
            object.__setattr__(self, n, v)
        if cls.__cross_check__ is not None:
            cls.__cross_check__(self)

    def replace(self, **changes):
        """A copy with ``changes`` applied (checked again)."""
        return dataclasses.replace(self, **changes)

    ns = dict(namespace or {})
    ns.update(
        __post_init__=post_init,
        replace=replace,
        __tunables__=tunables,
        __field_names__=tuple(names),
        __narrowed__=MappingProxyType(narrowed),
        __sections__=tuple(sections),
        __default_overrides__=MappingProxyType(overrides),
        __cross_check__=check if check is not None else getattr(base, "__cross_check__", None),
    )
    # own fields, then inherited fields whose default this class overrides (a dataclass field
    # redeclared in a subclass keeps its place in the field order)
    own_ids = {id(t) for t in own}
    redeclared = [
        (t, n)
        for t, n in zip(tunables, names, strict=True)
        if n in overrides and id(t) not in own_ids
    ]
    fields = [
        (
            n,
            _annotation(t),
            dataclasses.field(default=overrides.get(n, t.default), metadata={"tunable": t}),
        )
        for t, n in (*zip(own, own_names, strict=True), *redeclared)
    ]
    cls = dataclasses.make_dataclass(
        name, fields, bases=(base,) if base else (), frozen=True, namespace=ns
    )
    cls.__module__ = module
    cls.__doc__ = _class_doc(doc, cls)
    init = cls.__init__

    @functools.wraps(init)
    def checked_init(self, *args, **kwargs):
        valid = {f.name for f in dataclasses.fields(cls)}
        label = _LABEL.get() or name
        _fold_flat(cls, label, kwargs)
        for key in kwargs:
            if key in valid:
                continue
            if key in renamed:
                raise TypeError(f"{label}.{key} was renamed {renamed[key]!r}: pass {renamed[key]}=")
            flat = [
                t.flat_prefix + sub
                for t in cls.__tunables__
                if t.kind == "settings" and t.flat_prefix
                for sub in t.settings_class.__field_names__
            ]
            close = difflib.get_close_matches(key, sorted(valid) + flat, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise TypeError(f"{label} has no field {key!r}{hint}")
        init(self, *args, **kwargs)

    cls.__init__ = checked_init
    for t, n in zip(tunables, names, strict=True):
        if t.kind == "settings" and t.flat_prefix:
            for sub in t.settings_class.__field_names__:
                setattr(cls, t.flat_prefix + sub, _flat_property(n, sub))
            for former in getattr(t.settings_class, "__deprecated_fields__", {}):
                setattr(cls, t.flat_prefix + former, _flat_property(n, former))  # it warns
    return cls


def _flat_property(field: str, sub: str) -> property:
    def get(self):
        return getattr(getattr(self, field), sub)

    get.__doc__ = f"``{field}.{sub}`` (read-only)."
    return property(get)


def _fold_flat(cls, name: str, kwargs: dict) -> None:
    """Fold the flat keywords of ``cls``'s settings fields (``lidar_num_beams=``) into their
    nested value (``lidar=``: the given one, else the class default), each checked by its
    declaration under the flat name (``RaceConfig.lidar_num_beams``)."""
    for t, n in zip(cls.__tunables__, cls.__field_names__, strict=True):
        if t.kind != "settings" or not t.flat_prefix:
            continue
        sub_cls = t.settings_class
        flat = {}
        formers = {
            sub: former for former, sub in getattr(sub_cls, "__deprecated_fields__", {}).items()
        }
        for t_sub, sub in zip(sub_cls.__tunables__, sub_cls.__field_names__, strict=True):
            key = t.flat_prefix + sub
            if sub in formers and t.flat_prefix + formers[sub] in kwargs and key not in kwargs:
                key = t.flat_prefix + formers[sub]  # an earlier flat keyword: warn, then fold
                warnings.warn(
                    f"{name}.{key} is deprecated and will be removed in the next release: use "
                    f"{t.flat_prefix}{sub} (the same field)",
                    DeprecationWarning,
                    stacklevel=4,
                )
            if key in kwargs:
                flat[sub] = t_sub.check(kwargs.pop(key), f"{name}.{key}")
        if flat:
            nested = kwargs.get(n, class_default(cls, t))
            kwargs[n] = t.check(nested, f"{name}.{n}").replace(**flat)


def field_name(config_cls, t: Tunable) -> str:
    """The name of ``t``'s field in ``config_cls`` (its alias for the class, else ``field``)."""
    for u, n in zip(config_cls.__tunables__, config_cls.__field_names__, strict=True):
        if u is t:
            return n
    raise KeyError(f"{config_cls.__name__} has no field declared by {t!r}")


def class_default(config_cls, t: Tunable):
    """The default of ``t``'s field in ``config_cls``: the class's override (``config_class(...,
    defaults=)``), else the declaration's ``default``."""
    overrides = getattr(config_cls, "__default_overrides__", {})
    return overrides.get(field_name(config_cls, t), t.default)


def _class_range(config_cls, t: Tunable) -> str:
    """``t``'s range in ``config_cls`` (narrowed by ``config_class(..., narrow=)``)."""
    return config_cls.__narrowed__.get(field_name(config_cls, t), t).range_text()


def _default_text(value) -> str:
    return "None" if value is None else repr(value)


def _class_doc(summary: str, config_cls) -> str:
    lines = [summary.rstrip(), ""]
    lines.append("Fields (``*``: dynamic, a per-env ``generator.params`` array):")
    lines.append("")
    for title, rows in field_rows(config_cls):
        lines.append(f"{title}:")
        for row in rows:
            star = f" (* ``{row['param']}``)" if row["param"] else ""
            unit = f", {row['unit']}" if row["unit"] else ""
            lines.append(
                f"    {row['field']}{star} ({row['kind']}, default {row['default']}{unit}): "
                f"{row['doc']} Range: {row['range']}."
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def field_rows(config_cls) -> list[tuple[str, list[dict]]]:
    """``(section title, rows)`` of a config class, one row dict per field (``field``,
    ``param``, ``kind``, ``default``, ``range``, ``unit``, ``doc``, and its ``tunable``; a
    ``"settings"`` field gives one row per field of its settings), for the docs tables
    (``default``: the class's, :func:`class_default`; ``range``: the class's)."""
    out = []
    for title, prefix, items in config_cls.__sections__:
        rows = []
        for t in items:
            if t.kind == "settings":  # one row per field of the nested settings
                rows.extend(_settings_rows(config_cls, t))
                continue
            rows.append(
                {
                    "field": field_name(config_cls, t),
                    "param": f"{prefix}.{t.name}" if t.dynamic else "",
                    "kind": t.kind,
                    "default": _default_text(class_default(config_cls, t)),
                    "range": _class_range(config_cls, t),
                    "unit": t.unit,
                    "doc": t.doc,
                    "tunable": t,
                }
            )
        out.append((title, rows))
    return out


def _settings_rows(config_cls, t: Tunable) -> list[dict]:
    """The rows of a ``"settings"`` field: one per field of its settings class, named
    ``field.sub`` (and its flat keyword), with the class's default settings' values."""
    name = field_name(config_cls, t)
    nested = class_default(config_cls, t)
    sub_cls = t.settings_class
    rows = []
    for u, sub in zip(sub_cls.__tunables__, sub_cls.__field_names__, strict=True):
        flat = f"flat keyword {t.flat_prefix}{sub}; " if t.flat_prefix else ""
        rows.append(
            {
                "field": f"{name}.{sub}",
                "param": "",
                "kind": u.kind,
                "default": _default_text(getattr(nested, sub)),
                "range": _class_range(sub_cls, u),
                "unit": u.unit,
                "doc": f"{flat}{sub_cls.__name__}: {u.doc}",
                "tunable": u,
            }
        )
    return rows
