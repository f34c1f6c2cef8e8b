"""The repository's own layout rules (no import of the package, no Warp):

* every repository path the docs name (``docs/**/*.md``, README.md, CONTRIBUTING.md, in
  backticks, links or commands: ``track_gen/...``, ``benchmarks/...``, ``studies/...``,
  ``examples/...``, ``tests/...``, ``docs/...``) exists, and so does every dotted
  ``track_gen.*`` name they give;
* tests mirror the package and are named after what they test: no test file's name, docstring
  or comment cites a work batch (an issue number);
* code beside the package (tests, studies, examples, benchmarks) imports shared code as
  packages (``examples.train_ppo``, ``studies.generalization``, ``tests.io``), never by
  editing ``sys.path``.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]

#: a repository path: one of the top-level folders, then path characters
_PATH = re.compile(
    r"(?<![\w./\-])((?:track_gen|benchmarks|studies|examples|tests|docs|\.ci)/[\w./\-]*)"
)
#: a dotted name of the package (not inside a quoted string such as a file's format tag)
_DOTTED = re.compile(r"(?<![\w./\-\"'])(track_gen(?:\.\w+)+)")
_ISSUE = re.compile(r"\bissues?\s*#?\d+", re.I)
_SYS_PATH = re.compile(r"sys\.path\.(insert|append|extend)|sys\.path\s*(\+=|=)")


def repository_paths(text: str) -> list[str]:
    """The repository paths ``text`` names; placeholders (``examples/*.py``,
    ``tools/<tool>/``) are not paths and are left out."""
    out = []
    for m in _PATH.finditer(text):
        rest = re.match(r"[^\s`'\")\]]*", text[m.end() :]).group(0)
        if any(c in m.group(1) + rest for c in "*<>{}"):
            continue
        out.append(m.group(1).rstrip(".-"))
    return out


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_path_finder_sees_paths():
    text = (
        "See `track_gen/core/checks.py`, [ex](../examples/custom_component.py), "
        "`python -m studies.curriculum`, `PYTHONPATH=. python benchmarks/course.py --E 8`, "
        "tests/tools/, `examples/*.py` and `track_gen/tools/<tool>/component.py`."
    )
    assert repository_paths(text) == [
        "track_gen/core/checks.py",
        "benchmarks/course.py",
        "tests/tools/",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_the_docs_name_exists(page):
    text = page.read_text(encoding="utf-8")
    missing = sorted({p for p in repository_paths(text) if not (ROOT / p).exists()})
    assert not missing, f"{page.relative_to(ROOT)} names paths that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_dotted_name_the_docs_give_resolves(page):
    text = page.read_text(encoding="utf-8")
    missing = sorted({n for n in _DOTTED.findall(text) if not _resolves(n)})
    assert not missing, f"{page.relative_to(ROOT)} names what the package lacks: {missing}"


def _test_files() -> list[Path]:
    return sorted((ROOT / "tests").rglob("*.py"))


def test_no_test_cites_an_issue():
    named = [p for p in _test_files() if "issue" in p.stem]
    assert not named, f"test files named after a work batch: {named}"
    cited = []
    for path in _test_files():
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _ISSUE.search(line):
                cited.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not cited, "tests cite issue numbers (say what is tested instead):\n" + "\n".join(cited)


def test_code_beside_the_package_imports_packages_not_paths():
    edits = []
    for folder in ("tests", "studies", "examples", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _SYS_PATH.search(line) and "_SYS_PATH" not in line:
                    edits.append(f"{rel}:{i}: {line.strip()}")
    assert not edits, "sys.path edits (import the package instead):\n" + "\n".join(edits)
