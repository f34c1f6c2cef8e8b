"""What every batched env of :mod:`track_gen.envs` shares.

:class:`FixedArrays`: the public device arrays of an env are allocated once and read by
pointer (by every step, and by a recorded graph): rebinding one (``env.actions = new``) would
be ignored silently, so it raises, naming the way to write into it.
"""

from __future__ import annotations

import warp as wp

__all__ = ["FixedArrays"]


class FixedArrays:
    """A mixin: after :meth:`_seal`, assigning any public attribute that holds a ``wp.array``
    (or was None where an array lives when enabled, listed in ``_FIXED``) raises
    AttributeError; private attributes and non-array attributes are unaffected."""

    #: Public names that are fixed even while they hold None (an optional array).
    _FIXED: tuple[str, ...] = ()
    _sealed = False

    def _seal(self) -> None:
        object.__setattr__(self, "_sealed", True)

    def __setattr__(self, name: str, value) -> None:
        if self._sealed and not name.startswith("_"):
            current = getattr(self, name, None)
            if isinstance(current, wp.array) or name in self._FIXED:
                what = type(self).__name__
                if current is None:
                    raise AttributeError(
                        f"{what}.{name} is None in this env (it was not enabled at "
                        "construction) and cannot be set afterwards: enable it when building "
                        "the env"
                    )
                raise AttributeError(
                    f"{what}.{name} is read by every step (and a recorded graph) from the "
                    f"array allocated at construction, so it cannot be rebound: write into it, "
                    f"env.{name}.assign(values) or wp.copy(env.{name}, src)"
                )
        object.__setattr__(self, name, value)
