"""Every module of the package sits in one import-linter layer (``[tool.importlinter]`` in
pyproject.toml, the table of docs/architecture.md), annotation-only imports count, and each
layer's modules are named once. ``lint-imports`` (CI) then checks that every import points
down."""

from __future__ import annotations

import pkgutil
import re
from pathlib import Path

import pytest

import track_gen

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]


def _importlinter() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "importlinter"
    ]


def _layer_modules() -> list[str]:
    (layers,) = [c for c in _importlinter()["contracts"] if c["type"] == "layers"]
    return [m.strip() for layer in layers["layers"] for m in re.split(r"[:|]", layer)]


def _package_modules() -> set[str]:
    return {f"track_gen.{m.name}" for m in pkgutil.iter_modules(track_gen.__path__)}


def test_every_module_of_the_package_is_in_a_layer():
    named = _layer_modules()
    missing = sorted(_package_modules() - set(named))
    assert not missing, f"modules in no import-linter layer (add them to pyproject.toml): {missing}"


def test_every_layer_name_is_a_module_named_once():
    named = _layer_modules()
    assert len(named) == len(set(named)), sorted(m for m in named if named.count(m) > 1)
    unknown = sorted(set(named) - _package_modules())
    assert not unknown, f"layers name modules the package does not have: {unknown}"


def test_annotation_imports_count():
    # an import under `if TYPE_CHECKING:` points up as much as any other
    assert _importlinter()["exclude_type_checking_imports"] is False


def test_architecture_table_names_every_layer():
    """docs/architecture.md's layer table names each module of the contract."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    cells = set(re.findall(r"`([a-z_]+)`", table))
    missing = sorted(m for m in _layer_modules() if m.removeprefix("track_gen.") not in cells)
    assert not missing, f"docs/architecture.md's layer table does not name {missing}"
