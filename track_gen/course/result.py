"""StepResult: what ``course.step()`` returns (the same instance every call)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import warp as wp

__all__ = ["StepResult"]

#: StepResult field -> the component name whose result it is.
FIELD_ENTRIES = {"events": "progress", "contacts": "collision", "frame": "localizer"}


@dataclass
class StepResult:
    """The per-step results of a course, the same instance every ``step()``.

    Attributes:
        events: the ``"progress"`` entry (ProgressEvents) or None.
        contacts: the ``"collision"`` entry (a contact result) or None.
        frame: the ``"localizer"`` entry (TrackFrame) or None.
        valid: the generator result's ``valid`` (int32 ``[E]``): generator state, live (a
            regeneration rewrites it: read it before regenerating), never write it.

    Besides its four fields it gives read-only mapping access to the result of every
    per-step component by name: ``res["progress"]``, ``"collision" in res``, ``res.keys()``,
    ``res.get(name)``, ``res.items()``, ``dict(res)``. It is not a ``Mapping``: ``iter(res)``
    raises TypeError (use ``keys()``), ``bool(res)`` is True, and it stays a dataclass.
    Assigning a field updates its entry on that instance only (None removes it).
    """

    events: Any = None
    contacts: Any = None
    frame: Any = None
    valid: Any = None

    def __post_init__(self):
        entries = {}
        for field, name in FIELD_ENTRIES.items():
            value = getattr(self, field)
            if value is not None:
                entries[name] = value
        object.__setattr__(self, "_entries", entries)

    def __setattr__(self, key, value):
        object.__setattr__(self, key, value)
        name = FIELD_ENTRIES.get(key)
        if name is not None and "_entries" in self.__dict__:
            if value is None:
                self._entries.pop(name, None)
            else:
                self._entries[name] = value

    # read-only mapping access ---------------------------------------------------------
    def __getitem__(self, name: str):
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(
                f"{name!r} is not a per-step entry; entries: {list(self._entries)}"
            ) from None

    def __contains__(self, name) -> bool:
        return name in self._entries

    __iter__ = None  # not iterable: use keys() / items()

    def __bool__(self) -> bool:
        return True

    def keys(self):
        return self._entries.keys()

    def items(self):
        return self._entries.items()

    def values(self):
        return self._entries.values()

    def get(self, name: str, default=None):
        return self._entries.get(name, default)

    def _set_entries(self, entries: dict) -> None:
        """Called by the course: every per-step component's result, in execution order."""
        self._entries.clear()
        self._entries.update(entries)
        for field, name in FIELD_ENTRIES.items():
            object.__setattr__(self, field, entries.get(name))

    def clone(self) -> StepResult:
        """Deep copy of every entry and of ``valid`` (allocates: call it outside a graph)."""
        copies = {name: _copy(name, value) for name, value in self._entries.items()}
        out = StepResult(valid=_copy("valid", self.valid) if self.valid is not None else None)
        out._set_entries(copies)
        return out


def _copy(name: str, value):
    if isinstance(value, wp.array):
        return wp.clone(value)
    if hasattr(value, "clone") and callable(value.clone):
        return value.clone()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: wp.clone(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if isinstance(getattr(value, f.name), wp.array)
        }
        return dataclasses.replace(value, **changes)
    raise TypeError(
        f"StepResult.clone(): cannot copy the result of component {name!r} "
        f"({type(value).__name__}); give it a clone() method"
    )
