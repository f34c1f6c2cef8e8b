"""Old public names kept for one release: a module's ``__getattr__`` that answers each old
name with the new object and a :class:`DeprecationWarning` naming the new name."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping

__all__ = ["deprecated_names"]


def deprecated_names(
    module: str, renames: Mapping[str, str], namespace: Mapping
) -> Callable[[str], object]:
    """The ``__getattr__`` of ``module``: ``old`` (a key of ``renames``) gives
    ``namespace[renames[old]]`` and warns that the name is deprecated; any other name raises
    AttributeError as usual."""

    def getattr_(name: str):
        new = renames.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is deprecated and will be removed in the next release: use "
            f"{module}.{new} (the same class)",
            DeprecationWarning,
            stacklevel=2,
        )
        return namespace[new]

    return getattr_
