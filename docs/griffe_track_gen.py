"""Griffe extension of the docs site (``mkdocs.yml``): how track_gen's docstrings render.

Two things static analysis cannot see on its own:

1. The flat config classes (``SamplerConfig``, ``TrackGenConfig``, ``GateGenConfig``) are
   built at import time by ``track_gen.core.tunable.config_class``; the source only shows
   ``TrackGenConfig = config_class(...)``. Each is replaced by a class documented from the
   real class: its summary, its signature and an ``Attributes`` table of the fields it adds
   (generated from the same ``Tunable`` declarations as ``docs/reference/fields.md``).
2. Docstrings use Sphinx roles (``:class:`~track_gen.Track```, ``:meth:`generate```). Each
   becomes inline code, linked to the object's entry when the site documents it: the name is
   resolved in the docstring's scope, and an object the reference pages leave out stays
   plain code.

Nothing here reads the network or changes the package.
"""

from __future__ import annotations

import importlib
import re

import griffe

CONFIG_CLASSES = ("SamplerConfig", "TrackGenConfig", "GateGenConfig")
#: Packages whose public names a relative role target may name (``:class:`TrackGenConfig```).
PUBLIC_PACKAGES = (
    "track_gen",
    "track_gen.pipeline",
    "track_gen.course",
    "track_gen.tools",
    "track_gen.envs",
    "track_gen.io",
)

_ROLE = re.compile(r":(?:py:)?(class|meth|func|attr|mod|data|exc|obj):`(~?)([^`<>]+)`")
_CALLABLE_ROLES = ("meth", "func")


class TrackGenDocs(griffe.Extension):
    """Config classes from their declarations; Sphinx roles as (linked) inline code."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs) -> None:
        if pkg.path != "track_gen":
            return
        config = pkg.get_member("config")
        for name in CONFIG_CLASSES:
            config.set_member(name, _config_class(config, name))
        _rewrite_roles(pkg, pkg, seen=set())


# ------------------------------------------------------------------------- config classes
def _annotation(t) -> str:
    base = t.kind if t.kind in ("int", "float", "bool") else "str"
    return f"{base} | None" if (t.optional or t.kind == "device") else base


def _field_doc(t, prefix: str) -> str:
    parts = [t.doc.rstrip(".") + "."]
    parts.append(f"Default `{t.default!r}`; range: {t.range_text()}.")
    if t.unit:
        parts.append(f"Unit: {t.unit}.")
    if t.dynamic:
        parts.append(f'Dynamic: `generator.params["{prefix}.{t.name}"]`.')
    return " ".join(parts).replace("|", "&#124;")


def _config_class(module: griffe.Module, name: str) -> griffe.Class:
    real = getattr(importlib.import_module(module.path), name)
    static = module.members[name]
    base = real.__mro__[1]
    inherited = {id(t) for t in getattr(base, "__tunables__", ())}
    summary = real.__doc__.split("Fields (", 1)[0].strip()
    lines = [
        summary,
        "",
        f"Construct it with keywords (`{name}(num_envs=64)`); every value is checked on "
        "construction. `replace(**changes)` returns a checked copy.",
        "",
        "Attributes:",
    ]
    seen = set()
    for _title, prefix, items in real.__sections__:
        for t in items:
            if id(t) in inherited or id(t) in seen:
                continue
            seen.add(id(t))
            lines.append(f"    {t.field} ({_annotation(t)}): {_field_doc(t, prefix)}")
    for attr, value in vars(real).items():
        if isinstance(value, property) and not attr.startswith("_"):
            doc = (value.__doc__ or "").strip().replace("\n", " ")
            lines.append(f"    {attr} (property): {doc}")
    bases = [base.__name__] if base is not object else []
    cls = griffe.Class(
        name, lineno=static.lineno, endlineno=static.endlineno, bases=bases, parent=module
    )
    cls.docstring = griffe.Docstring("\n".join(lines), parent=cls)
    init = griffe.Function(
        "__init__",
        parameters=griffe.Parameters(
            griffe.Parameter("self", kind=griffe.ParameterKind.positional_or_keyword),
            griffe.Parameter("fields", kind=griffe.ParameterKind.var_keyword),
        ),
        lineno=static.lineno,
    )
    cls.set_member("__init__", init)
    replace = griffe.Function(
        "replace",
        parameters=griffe.Parameters(
            griffe.Parameter("self", kind=griffe.ParameterKind.positional_or_keyword),
            griffe.Parameter("changes", kind=griffe.ParameterKind.var_keyword),
        ),
        lineno=static.lineno,
    )
    replace.docstring = griffe.Docstring(
        "A copy with `changes` applied (checked again).", parent=replace
    )
    cls.set_member("replace", replace)
    return cls


# ---------------------------------------------------------------------------- Sphinx roles
def _target_path(obj: griffe.Object, target: str, pkg: griffe.Module) -> str:
    """The full path a role's target names: as written when absolute, else resolved in the
    docstring's scope (inherited members included), else a public name of a package."""
    if target.startswith("track_gen.") or target == "track_gen":
        return target
    head, _, rest = target.partition(".")
    scope = obj if obj.is_class or obj.is_module else obj.parent
    path = None
    while scope is not None and path is None:
        if scope.is_class and head in scope.all_members:
            path = scope.all_members[head].path
        scope = scope.parent
    if path is None:
        try:
            path = (obj if obj.is_class or obj.is_module else obj.parent).resolve(head)
        except griffe.NameResolutionError:
            for package in PUBLIC_PACKAGES:
                mod = pkg if package == pkg.path else pkg.get_member(package.split(".", 1)[1])
                if head in mod.members:
                    path = f"{package}.{head}"
                    break
    if path is None:
        return target
    return f"{path}.{rest}" if rest else path


def _rewrite(obj: griffe.Object, text: str, pkg: griffe.Module) -> str:
    def repl(m: re.Match) -> str:
        role, short, target = m.groups()
        path = _target_path(obj, target, pkg)
        label = target.rsplit(".", 1)[-1] if short else target
        if role in _CALLABLE_ROLES:
            label += "()"
        # an optional reference: a link where the site documents the object, else plain code
        return f'<autoref identifier="{path}" optional>`{label}`</autoref>'

    return _ROLE.sub(repl, text)


def _rewrite_roles(obj: griffe.Object, pkg: griffe.Module, seen: set) -> None:
    if obj.is_alias or id(obj) in seen:
        return
    seen.add(id(obj))
    if obj.docstring is not None and ":" in obj.docstring.value:
        obj.docstring.value = _rewrite(obj, obj.docstring.value, pkg)
    for member in obj.members.values():
        if not member.is_alias:
            _rewrite_roles(member, pkg, seen)
