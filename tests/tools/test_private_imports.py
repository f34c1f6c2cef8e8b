"""An underscore name is private to its folder (style item 22).

The test parses every ``.py`` under ``track_gen`` with :mod:`ast` (no import, no Warp) and
counts the statements ``from X import _name`` (at any depth, function-local ones too) where
``X`` resolves to a module outside the importing module's own folder (its package
directory). ``import X`` followed by ``X._name`` is out of scope. The count must be 0; the
test also checks that it saw enough import statements to mean something.
"""

from __future__ import annotations

import ast
import pathlib
import sys

PACKAGE = pathlib.Path(__file__).resolve().parent.parent.parent / "track_gen"
MIN_IMPORTS = 100


def _module_path(parts: list[str]) -> pathlib.Path | None:
    """The file of the dotted module ``parts`` (``track_gen.a.b``), or None outside the package."""
    if not parts or parts[0] != PACKAGE.name:
        return None
    base = PACKAGE.parent.joinpath(*parts)
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


def _dotted(path: pathlib.Path) -> list[str]:
    """The dotted name of the module in ``path``, as a list (a package's ``__init__`` is it)."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _target(path: pathlib.Path, node: ast.ImportFrom) -> pathlib.Path | None:
    """The file that ``node`` (inside the module at ``path``) imports from."""
    if node.level == 0:
        parts = (node.module or "").split(".")
    else:
        package = _dotted(path)[: len(_dotted(path)) - (path.name != "__init__.py")]
        if node.level > 1:
            package = package[: -(node.level - 1)]
        parts = package + (node.module.split(".") if node.module else [])
    return _module_path(parts)


def private_imports() -> tuple[int, list[str]]:
    """(import statements seen, offenders as ``file:line: from X import _name``)."""
    seen = 0
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                seen += 1
            if not isinstance(node, ast.ImportFrom):
                continue
            seen += 1
            target = _target(path, node)
            if target is None or target.parent == path.parent:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    where = path.relative_to(PACKAGE.parent)
                    source = "." * node.level + (node.module or "")
                    offenders.append(f"{where}:{node.lineno}: from {source} import {alias.name}")
    return seen, offenders


def test_no_private_name_crosses_a_folder():
    seen, offenders = private_imports()
    assert seen > MIN_IMPORTS, f"only {seen} import statements found under {PACKAGE}"
    assert not offenders, f"{len(offenders)} cross-folder private imports:\n" + "\n".join(offenders)


def test_the_counter_sees_a_cross_folder_private_import(tmp_path, monkeypatch):
    """Self-test: a planted ``from ..a import _x`` in a sibling folder counts, a same-folder one
    does not."""
    root = tmp_path / PACKAGE.name
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    for file in ("__init__.py", "a/__init__.py", "b/__init__.py"):
        (root / file).write_text("")
    (root / "a" / "m.py").write_text("_x = 1\n")
    (root / "a" / "n.py").write_text("from .m import _x\n")
    (root / "b" / "k.py").write_text("from ..a.m import _x\nfrom track_gen.a import m\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", root)
    seen, offenders = private_imports()
    assert seen == 3
    assert offenders == ["track_gen/b/k.py:1: from ..a.m import _x"]
