"""One settings class per tool: the fields its component, its utility and an env's config
share, declared once (the tool's ``FIELDS``) and checked in one place.

:func:`settings_class` makes the class (a frozen dataclass from :func:`config_class`, one
field per declaration); :func:`resolve_settings` turns the arguments of a component or a
utility (a settings object, positional field values, field keywords) into one checked
settings object, so that ``Lidar(64, fov=1.0)``, ``Lidar(LidarSettings(num_beams=64),
fov=1.0)`` and ``Lidar(settings=LidarSettings(num_beams=64, fov=1.0))`` are the same call
and every value goes through the settings class's checks, under the name of the call the
user made (``Lidar.fov = -1 is out of range ...``).

A settings object is also a read-only mapping of its fields (``dict(settings)``,
``**settings``, ``settings["fov"]``).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import SimpleNamespace
from typing import Any

from .budget import planned_buffers
from .tunable import Tunable, config_class, labelled

__all__ = ["HasSettings", "Settings", "SettingsUtility", "resolve_settings", "settings_class"]


class Settings(Mapping):
    """The base of every tool's settings class (made by :func:`settings_class`): a frozen,
    checked dataclass that reads as a mapping of its fields too."""

    __field_names__: tuple[str, ...] = ()

    def __getitem__(self, key: str):
        if key not in self.__field_names__:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.__field_names__)

    def __len__(self) -> int:
        return len(self.__field_names__)

    def _equals(self, other) -> bool:
        """Equal to a settings object of the same class with the same fields, and to a
        mapping with the same items (``settings == {"num_beams": 64, ...}``)."""
        if isinstance(other, Settings):
            return type(self) is type(other) and tuple(self.values()) == tuple(other.values())
        if isinstance(other, Mapping):
            return dict(self) == dict(other)
        return NotImplemented


def settings_class(
    name: str,
    fields: Iterable[Tunable],
    *,
    doc: str,
    module: str,
    title: str = "",
    check: Callable | None = None,
    defaults: Mapping[str, Any] | None = None,
    keywords_of: str | None = None,
    deprecated: Mapping[str, str] | None = None,
) -> type:
    """The settings class ``name`` of a tool: one field per declaration of ``fields`` (its
    ``FIELDS``, in keyword order), checked by the declarations (and ``check(settings)``, the
    rules between fields), a :class:`Settings` (a read-only mapping of its fields). A field is
    named by its keyword for the surface ``keywords_of`` (the component's label, e.g.
    ``"DiscCollision"``: ``post_radius`` is its ``radius``; default ``name`` less
    ``Settings``)."""
    cls = config_class(
        name,
        [(title or name.removesuffix("Settings"), "", tuple(fields))],
        base=Settings,
        doc=doc,
        module=module,
        check=check,
        defaults=defaults,
        keywords_of=keywords_of or name.removesuffix("Settings"),
    )
    cls.__eq__ = Settings._equals  # the dataclass's hash (of the fields) is kept
    cls.__deprecated_fields__ = dict(deprecated or {})
    if deprecated:
        _deprecate_fields(cls)
    return cls


def deprecated_field(cls: type, old: str, stacklevel: int = 3) -> str:
    """The field ``old`` (a deprecated field name of the settings class ``cls``) was renamed
    to, after a :class:`DeprecationWarning` saying so."""
    new = cls.__deprecated_fields__[old]
    warnings.warn(
        f"{cls.__name__}.{old} is deprecated and will be removed in the next release: use "
        f"{new} (the same field)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return new


def _deprecate_fields(cls: type) -> None:
    """``cls(old=...)`` and ``settings.old`` for each deprecated field name, with a warning."""
    init = cls.__init__

    @functools.wraps(init)
    def init_(self, *args, **kwargs):
        for old in cls.__deprecated_fields__:
            if old in kwargs:
                kwargs[deprecated_field(cls, old)] = kwargs.pop(old)
        init(self, *args, **kwargs)

    cls.__init__ = init_
    for old, new in cls.__deprecated_fields__.items():

        def get(self, old=old, new=new):
            deprecated_field(type(self), old)
            return getattr(self, new)

        setattr(cls, old, property(get, doc=f"Deprecated name of ``{new}``."))


def resolve_settings(
    cls: type,
    owner: str,
    args: tuple = (),
    fields: Mapping[str, Any] | None = None,
    *,
    positional: int = 1,
) -> Settings:
    """The checked ``cls`` instance of a call ``owner(*args, **fields)``.

    Args:
        cls: the tool's settings class.
        owner: the call's name in messages (``"Lidar"``, ``"LidarUtility"``).
        args: the call's positional arguments: one ``cls`` instance, or the values of the
            first ``positional`` fields of ``cls`` in their order (``Lidar(64)``:
            ``num_beams``).
        fields: the call's field keywords (a ``settings=`` keyword holds a ``cls`` instance);
            applied over the settings object when one is given.
        positional: how many fields the call takes by position.

    Raises TypeError for a settings object of another class, too many positional values or a
    field given twice, and the settings class's TypeError / ValueError (naming
    ``owner.<field>``, the value and the range) for a field's value, before anything is
    built.
    """
    fields = dict(fields or {})
    settings = fields.pop("settings", None)
    args = tuple(args)
    if args and isinstance(args[0], Settings):
        if settings is not None:
            raise TypeError(f"{owner}: pass the settings once (positionally or as settings=)")
        settings, args = args[0], args[1:]
        if args:
            raise TypeError(f"{owner}: after a {cls.__name__}, pass fields by keyword only")
    if settings is not None and not isinstance(settings, cls):
        raise TypeError(
            f"{owner} settings must be a {cls.__name__}, got {type(settings).__name__} {settings!r}"
        )
    names = cls.__field_names__
    if len(args) > positional:
        raise TypeError(
            f"{owner} takes at most {positional} field(s) by position "
            f"({', '.join(names[:positional])}), got {len(args)}: pass the others by keyword"
        )
    for name, value in zip(names, args, strict=False):
        if name in fields:
            raise TypeError(f"{owner} got {name} twice (by position and by keyword)")
        fields[name] = value
    with labelled(owner):
        if settings is None:
            return cls(**fields)
        return dataclasses.replace(settings, **fields) if fields else settings


class HasSettings:
    """A component or a utility that holds its checked settings in ``self.settings``: each
    field of the settings reads as an attribute too (``lidar.fov`` is
    ``lidar.settings.fov``)."""

    #: The settings class of the tool (``**fields`` of the constructor are its fields).
    SETTINGS: type | None = None
    settings: Settings | None = None

    def __getattr__(self, name: str):
        settings = self.__dict__.get("settings")
        if settings is not None and name in type(settings).__field_names__:
            return getattr(settings, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class SettingsUtility(HasSettings):
    """The base of a tool's utility: :class:`HasSettings`, and one allocation.

    A utility allocates every array in one static method, ``_allocate(out, budget, device,
    settings, num_envs, *sizes, **options)``, which sets them on ``out`` through ``budget``;
    :meth:`buffers` runs it through a :class:`~track_gen.core.budget.BufferPlan`, so the plan
    a course counts before it builds is the allocation itself."""

    @classmethod
    def buffers(cls, settings, num_envs: int, *sizes, **options) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array an instance with ``settings`` allocates for
        ``num_envs`` envs (``sizes`` and ``options``: the rest of what its ``_allocate``
        takes, the rows per env of its course and its flags), in order: its allocation run
        through a plan, nothing allocated."""
        return planned_buffers(
            lambda plan: cls._allocate(
                SimpleNamespace(), plan, "cpu", settings, num_envs, *sizes, **options
            )
        )
