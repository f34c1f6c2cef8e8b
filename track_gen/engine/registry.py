"""Stage registry: names -> stage classes, with capturable and range-safe flags."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.checks import check_bool
from .stage import Stage

__all__ = ["Registry", "StageEntry", "add_builtins", "default_registry", "register"]

#: The built-in stage kinds every fresh Registry holds: ``track_gen.stages`` adds them when it
#: is imported (``track_gen`` imports it first, through its configs), so the engine never
#: imports the stages above it.
_BUILTINS: dict[str, type] = {}


def add_builtins(stages: dict[str, type]) -> None:
    """Declare built-in stage kinds (called by ``track_gen.stages`` only)."""
    _BUILTINS.update(stages)


@dataclass(frozen=True)
class StageEntry:
    """A registered stage: its class, whether it may be recorded into a graph, and whether
    it may run on an env range of the batch (``range_safe``: CPU threads)."""

    name: str
    cls: type
    capturable: bool = True
    range_safe: bool = False


class Registry:
    """Maps stage kind names to stage classes.

    A fresh ``Registry()`` holds the built-in stages; ``register()`` adds plugins.
    """

    def __init__(self, builtins: bool = True):
        self._entries: dict[str, StageEntry] = {}
        if builtins:
            for name, cls in _BUILTINS.items():
                self._entries[name] = StageEntry(name, cls, True, True)

    def register(
        self,
        name: str,
        cls: type,
        *,
        capturable: bool = True,
        replace: bool = False,
        range_safe: bool = False,
    ) -> StageEntry:
        """Register ``cls`` (a :class:`Stage` subclass) under ``name``.

        Args:
            name: kind name used in :class:`StageSpec` and ``TrackGenConfig.generator``; a new
                name must be namespaced (``"acme.spiral"``); ``replace=True`` may replace any
                registered stage, built-ins included.
            cls: the stage class.
            capturable: False when the stage's ``enqueue`` needs host control flow; such a
                pipeline runs eagerly and refuses to be recorded into a capture.
            replace: allow replacing an existing registration.
            range_safe: True when the stage may run on a contiguous env range of the batch
                on its own CPU thread (``cpu_threads``): its kernels use an env's index only
                to index the workspace's arrays (``ws.env_lo`` gives the global index), its
                ``allocate`` asks for ``c * E`` elements or a size independent of E, and
                ``enqueue`` touches no host state shared between ranges. False (the
                default) runs every pipeline holding the stage on one thread.
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"stage name must be a non-empty str, got {name!r}")
        name = str(name)  # np.str_ -> str
        if not (isinstance(cls, type) and issubclass(cls, Stage)):
            raise TypeError(f"register({name!r}, ...): cls must subclass track_gen.pipeline.Stage")
        if cls.enqueue is Stage.enqueue:
            raise TypeError(f"register({name!r}, ...): {cls.__name__} must implement enqueue()")
        if cls.role not in ("sampler", "process"):
            raise ValueError(
                f"register({name!r}, ...): {cls.__name__}.role = {cls.role!r} must be "
                "'sampler' or 'process'"
            )
        capturable = check_bool(f"register({name!r}, ...): capturable", capturable)
        replace = check_bool(f"register({name!r}, ...): replace", replace)
        range_safe = check_bool(f"register({name!r}, ...): range_safe", range_safe)
        if name in self._entries and not replace:
            raise ValueError(f"stage {name!r} is already registered; pass replace=True")
        if name not in self._entries and "." not in name.strip("."):
            raise ValueError(
                f"register({name!r}, ...): third-party stages use a namespaced name such as "
                f"'acme.{name}', so they never collide with a built-in stage"
            )
        entry = StageEntry(name, cls, capturable, range_safe)
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove a registration (KeyError when ``name`` is not registered)."""
        self.get(name)
        del self._entries[name]

    def get(self, name: str) -> StageEntry:
        """The entry of ``name`` (KeyError listing the registered names when there is none;
        a pipeline naming an unknown kind is refused with ValueError instead)."""
        try:
            return self._entries[name]
        except KeyError:
            known = sorted(self._entries)
            raise KeyError(f"no stage named {name!r}; registered: {known}") from None

    def kinds(self) -> list[str]:
        """Every registered stage kind name, sorted."""
        return sorted(self._entries)

    def samplers(self) -> list[str]:
        """Names of registered sampler stages (usable as ``TrackGenConfig.generator``)."""
        return sorted(n for n, e in self._entries.items() if e.cls.role == "sampler")

    def __contains__(self, name: str) -> bool:
        return name in self._entries


_default: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry used when ``registry=None``."""
    global _default
    if _default is None:
        _default = Registry()
    return _default


def register(
    name: str,
    cls: type,
    *,
    capturable: bool = True,
    replace: bool = False,
    range_safe: bool = False,
):
    """Register a stage in the default registry (see :meth:`Registry.register`)."""
    return default_registry().register(
        name, cls, capturable=capturable, replace=replace, range_safe=range_safe
    )
