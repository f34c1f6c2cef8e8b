"""One checker per input kind: numbers, bools, choices, arrays, masks, seeds and env ids.

Every public call validates its inputs here, on the host, before anything launches. One rule
decides the exception type everywhere:

* :class:`TypeError`: the object, or its element type, is the wrong kind: not a ``wp.array``
  where one is needed, an array of another dtype, a float (or a bool) where an int is
  needed, a bool where a number is needed, a non-str where a name is needed.
* :class:`ValueError`: the kind is right but the value is not: out of range, NaN or inf, a
  wrong shape or length, another device, a non-contiguous array, a duplicate env id.

NumPy scalars count as their Python kind (``np.int64`` is an int, ``np.float32`` a number,
``np.bool_`` a bool, ``np.str_`` a str) and are returned as Python values. Messages name the
argument, the value and the fix.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "as_float",
    "check_array",
    "check_bool",
    "check_choice",
    "check_env_ids",
    "check_float",
    "check_int",
    "check_mask",
    "check_seed_values",
    "host_values",
    "is_bool",
    "is_int",
    "is_number",
    "range_text",
]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
_I64 = 2**63 - 1  # the largest int64: a uint64 above it does not fit int64


def is_bool(value) -> bool:
    """True for ``bool`` and ``np.bool_``."""
    return isinstance(value, (bool, np.bool_))


def is_int(value) -> bool:
    """True for ``int`` and NumPy integer scalars (not bools)."""
    return isinstance(value, (int, np.integer)) and not is_bool(value)


def is_number(value) -> bool:
    """True for ints and floats, Python or NumPy (not bools)."""
    return is_int(value) or isinstance(value, (float, np.floating))


def _tail(hint: str) -> str:
    return f"; {hint}" if hint else ""


def range_text(lo, hi, lo_open: bool = False, hi_open: bool = False) -> str:
    """``">= 0 and <= 1"`` style text of a range (None: unbounded on that side)."""
    parts = []
    if lo is not None:
        parts.append(f"{'>' if lo_open else '>='} {lo}")
    if hi is not None:
        parts.append(f"{'<' if hi_open else '<='} {hi}")
    return " and ".join(parts) if parts else "any value"


def check_bool(name: str, value, hint: str = "") -> bool:
    """``value`` as a Python bool (TypeError for anything but ``bool`` / ``np.bool_``)."""
    if not is_bool(value):
        raise TypeError(
            f"{name} must be a bool (True or False), got {type(value).__name__} {value!r}"
            f"{_tail(hint)}"
        )
    return bool(value)


def check_int(name: str, value, lo=None, hi=None, hint: str = "") -> int:
    """``value`` as a Python int in ``[lo, hi]`` (None: unbounded on that side)."""
    if not is_int(value):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}{_tail(hint)}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(
            f"{name} = {v!r} is out of range: must be {range_text(lo, hi)}{_tail(hint)}"
        )
    return v


def as_float(name: str, value, hint: str = "") -> float:
    """``value`` (a number) as a Python float; a number beyond float64 (``10**400``) is a
    ValueError, a non-number a TypeError."""
    if not is_number(value):
        raise TypeError(
            f"{name} must be a number, got {type(value).__name__} {value!r}{_tail(hint)}"
        )
    try:
        return float(value)
    except OverflowError:
        raise ValueError(
            f"{name} = {value!r} is out of range: beyond the float64 range{_tail(hint)}"
        ) from None


def check_float(
    name: str, value, lo=None, hi=None, lo_open=False, hi_open=False, hint: str = ""
) -> float:
    """``value`` as a finite Python float in the range (ints are accepted)."""
    v = as_float(name, value, hint)
    rule = range_text(lo, hi, lo_open, hi_open)
    if not math.isfinite(v):
        raise ValueError(f"{name} = {value!r} is out of range: must be finite, {rule}{_tail(hint)}")
    if lo is not None and (v <= lo if lo_open else v < lo):
        raise ValueError(f"{name} = {value!r} is out of range: must be {rule}{_tail(hint)}")
    if hi is not None and (v >= hi if hi_open else v > hi):
        raise ValueError(f"{name} = {value!r} is out of range: must be {rule}{_tail(hint)}")
    return v


def check_choice(name: str, value, choices, hint: str = "") -> str:
    """``value`` as one of the str ``choices``, a Python ``str`` (``np.str_`` normalized)."""
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a str, one of {tuple(choices)}, got {type(value).__name__} "
            f"{value!r}{_tail(hint)}"
        )
    if value not in choices:
        raise ValueError(
            f"{name} = {value!r} is out of range: must be one of {tuple(choices)}{_tail(hint)}"
        )
    return str(value)


def check_array(name: str, arr, dtype, rows: int, device, hint: str = "") -> wp.array:
    """``arr`` as a contiguous 1-D ``[rows]`` array of ``dtype`` on ``device``."""
    dev = wp.get_device(device)
    dname = wp.types.type_repr(dtype)
    if not isinstance(arr, wp.array):
        raise TypeError(
            f"{name} must be a contiguous [{rows}] {dname} wp.array on {dev}, got "
            f"{type(arr).__name__}{_tail(hint)}"
        )
    if arr.dtype != dtype:
        raise TypeError(
            f"{name} has dtype {wp.types.type_repr(arr.dtype)}, expected {dname}: pass a "
            f"[{rows}] {dname} array{_tail(hint)}"
        )
    if arr.ndim != 1 or arr.shape[0] != rows:
        raise ValueError(
            f"{name} has shape {tuple(arr.shape)}, expected ({rows},): pass a [{rows}] {dname} "
            f"array{_tail(hint)}"
        )
    if arr.device != dev:
        raise ValueError(
            f"{name} is on {arr.device}, expected {dev}: pass an array on {dev}{_tail(hint)}"
        )
    if not arr.is_contiguous:
        raise ValueError(
            f"{name} must be contiguous: pass a contiguous [{rows}] {dname} array{_tail(hint)}"
        )
    return arr


def check_mask(mask, num_envs: int, device, name: str = "mask", hint: str = "") -> None:
    """None (every env) or a contiguous ``[num_envs]`` int32 array on ``device``."""
    if mask is None:
        return
    check_array(name, mask, wp.int32, num_envs, device, hint)


def host_values(name: str, values, kind: str) -> np.ndarray:
    """A 1-D host array of ``values`` (a list, tuple, range, NumPy array or ``wp.array``; a
    mapping, set or other iterable is a TypeError), element by element: ``kind="int"``
    gives int64 (object for ints beyond int64: the caller's range
    check refuses them), ``kind="float"`` gives float64.

    Refused: bools anywhere (TypeError, even mixed with numbers), elements of another kind
    (floats where ints are needed: TypeError), nested or multi-dimensional values
    (ValueError: one value per env), numbers beyond float64 (ValueError).
    """
    want = "integers" if kind == "int" else "numbers"
    if isinstance(values, wp.array):
        values = values.numpy()
    if isinstance(values, (str, bytes)) or is_bool(values) or is_number(values) or values is None:
        raise TypeError(
            f"{name} must be a sequence of {want} (one per env), got {type(values).__name__} "
            f"{values!r}"
        )
    if not isinstance(values, (list, tuple, range, np.ndarray)):
        raise TypeError(
            f"{name} must be a list, tuple, NumPy array or wp.array of {want} (one per env), "
            f"got {type(values).__name__}"
        )
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(
                f"{name} has shape {values.shape}: pass a 1-D sequence (one value per env)"
            )
        if values.dtype.kind == "b" or (kind == "int" and values.dtype.kind not in "iu"):
            raise TypeError(f"{name} must be {want}, got {values.dtype} values")
        if values.dtype.kind not in "iuf":
            items = values.tolist()
        elif (
            kind == "int" and values.dtype.kind == "u" and values.size and int(values.max()) > _I64
        ):
            # a uint64 beyond int64 would wrap to a negative int64: read it as the int it is
            # (object) so the caller's range check refuses it
            return np.array(values.tolist(), dtype=object)
        else:
            return values.astype(np.int64 if kind == "int" else np.float64)
    else:
        items = list(values)
    check = is_int if kind == "int" else is_number
    for v in items:
        if isinstance(v, (list, tuple, np.ndarray)):
            raise ValueError(f"{name} holds a nested value {v!r}: pass one value per env")
        if not check(v):
            raise TypeError(f"{name} must be {want}, got {type(v).__name__} {v!r}")
    if kind == "int":
        ints = [int(v) for v in items]
        if all(-(2**63) <= v < 2**63 for v in ints):
            return np.array(ints, dtype=np.int64)
        return np.array(ints, dtype=object)
    return np.array([as_float(name, v) for v in items], dtype=np.float64)


def check_seed_values(name: str, values, count: int) -> np.ndarray:
    """``values`` (a sequence, NumPy array or ``wp.array`` of ints) as ``[count]`` int32.

    Seeds are integers in the int32 range: floats, bools, NaN and values that would wrap
    (``2**32 + 5``, a uint64 ``2**64 - 5``) are refused rather than coerced; every value is
    read as the integer it is (never through a narrower type) before the range check.
    """
    host = host_values(name, values, "int")
    if host.shape[0] != count:
        raise ValueError(f"{name} has {host.shape[0]} entries, expected {count} (one per env)")
    if host.size:
        lo, hi = int(min(host.tolist())), int(max(host.tolist()))
        if lo < INT32_MIN or hi > INT32_MAX:
            bad = lo if lo < INT32_MIN else hi
            raise ValueError(
                f"{name} holds {bad}, outside the int32 range [{INT32_MIN}, {INT32_MAX}]: "
                "seeds are int32 values"
            )
    return host.astype(np.int32)  # every value in int32 now: exact


def check_env_ids(name: str, ids, num_envs: int) -> np.ndarray:
    """``ids`` as unique int64 env indices in ``[0, num_envs)``."""
    host = host_values(name, ids, "int")
    if host.size:
        lo, hi = int(min(host.tolist())), int(max(host.tolist()))
        if lo < 0 or hi >= num_envs:
            raise ValueError(f"{name} must be env indices in [0, {num_envs}), got {lo}..{hi}")
    host = host.astype(np.int64)
    if np.unique(host).size != host.size:
        dup = sorted({int(v) for v in host if (host == v).sum() > 1})
        raise ValueError(f"{name} lists env(s) {dup} more than once: each id once")
    return host
