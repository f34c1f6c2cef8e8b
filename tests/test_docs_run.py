"""Every ```python block of the docs runs on the CPU, as a user who pastes it would run it.

The blocks of one page run in order in one fresh namespace (a later block may use what an
earlier one built), in a temporary working folder (beside a link to the workplace's
``shared/``, so ``../shared/data/...`` reads as from the repository root), on the CPU
(``device=None`` and Warp's default device resolve to ``"cpu"`` here even where a GPU is
present). A block may be marked on the line directly above its fence:

    <!-- docs-run: skip reason="cuda only" -->

and the reason must be one of :data:`SKIP_REASONS`, each with a check that the block really
is of that kind (a CUDA-only block names CUDA). Where a CUDA device is present, every page
also runs on it, CUDA-only blocks included. No other marker exists.

A statement followed by a comment ``# SomeError: message`` must raise ``SomeError`` with that
message (the comment lines joined; ``...`` stands for any text), so an error a page shows is
the error the library gives. A page whose block imports a package of an optional extra that is
not installed (``newton``, ``trimesh``, ...) is skipped from that block on.
"""

from __future__ import annotations

import ast
import contextlib
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
import warp as wp

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md")) + [ROOT / "README.md"]
#: the workplace's data beside the repository, read by pages as ``../shared/data/...``
SHARED = ROOT.parent / "shared"

#: packages of the optional extras: a page whose block imports one that is not installed is
#: skipped from that block on, as the tests of those extras skip (``pytest.importorskip``)
OPTIONAL = {"newton", "trimesh", "pxr", "torch", "rsl_rl", "tensordict", "gymnasium", "matplotlib"}

#: the reasons a block may not run on the CPU, each with the check that the block is of that kind
SKIP_REASONS = {"cuda only": lambda source: re.search(r"\bcuda\b", source, re.I) is not None}

_FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.S | re.M
)
_MARKER = re.compile(r"<!--\s*docs-run:(?P<text>.*?)-->", re.S)
_SKIP = re.compile(r'^\s*skip\s+reason="(?P<reason>[^"]+)"\s*$')
_ERROR = re.compile(r"^#\s*(?P<name>[A-Z]\w*(?:Error|Exception)):\s*(?P<text>.*)$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    source: str
    skip: str | None  # the skip reason, or None


def _rel(page: Path) -> str:
    return str(page.relative_to(ROOT)) if ROOT in page.parents else str(page)


def blocks(page: Path) -> list[Block]:
    """The ```python blocks of ``page`` with their markers (markers elsewhere: ValueError)."""
    text = page.read_text(encoding="utf-8")
    out, used = [], set()
    for m in _FENCE.finditer(text):
        if m.group("lang") != "python":
            continue
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip(" ").rsplit("\n", 2)
        above = before[-2] if len(before) >= 2 else ""
        skip = None
        marker = _MARKER.fullmatch(above.strip())
        if marker:
            used.add(text.count("\n", 0, m.start()) - 1)
            found = _SKIP.match(marker.group("text"))
            if not found:
                raise ValueError(
                    f"{_rel(page)}:{line - 1}: unknown docs-run marker {above.strip()}"
                )
            skip = found.group("reason")
        body = textwrap.dedent(m.group("body"))
        out.append(Block(page, line, body, skip))
    for m in _MARKER.finditer(text):
        if text.count("\n", 0, m.start()) not in used:
            where = f"{_rel(page)}:{text.count(chr(10), 0, m.start()) + 1}"
            raise ValueError(f"{where}: a docs-run marker not directly above a ```python fence")
    return out


def _expected_errors(source: str, tree: ast.Module) -> dict[int, tuple[str, str]]:
    """Statement index -> (exception name, documented message) for every top-level statement
    followed by an ``# XError: message`` comment (continuation comment lines joined)."""
    lines = source.splitlines()
    out = {}
    for i, stmt in enumerate(tree.body):
        k = stmt.end_lineno  # 0-based index of the line after the statement
        if k >= len(lines):
            continue
        m = _ERROR.match(lines[k].strip())
        if not m:
            continue
        text = [m.group("text")]
        k += 1
        while k < len(lines) and lines[k].strip().startswith("#"):
            if _ERROR.match(lines[k].strip()):
                break
            text.append(lines[k].strip()[1:].strip())
            k += 1
        out[i] = (m.group("name"), " ".join(text))
    return out


def _matches(documented: str, actual: str) -> bool:
    """The documented message, whitespace-normalized, is the actual one with each ``...``
    standing for any text."""
    norm = lambda s: " ".join(s.split())  # noqa: E731
    pattern = ".*?".join(re.escape(part) for part in norm(documented).split("..."))
    return re.search(pattern, norm(actual)) is not None


def run_block(block: Block, namespace: dict, folder: Path, index: int) -> None:
    """Run one block in ``namespace`` from a file of its own (Warp reads kernel sources)."""
    path = folder / f"block_{index:02d}_line{block.line}.py"
    path.write_text(block.source, encoding="utf-8")
    where = f"{_rel(block.page)}:{block.line}"
    tree = ast.parse(block.source, str(path))
    errors = _expected_errors(block.source, tree)
    namespace["__file__"] = str(path)
    for i, stmt in enumerate(tree.body):
        code = compile(ast.Module([stmt], []), str(path), "exec")
        if i not in errors:
            exec(code, namespace)
            continue
        name, text = errors[i]
        try:
            exec(code, namespace)
        except Exception as exc:  # the documented error, checked below
            got = exc
        else:
            raise AssertionError(
                f"{where}, line {stmt.lineno} of the block: documented {name}, nothing raised"
            )
        assert type(got).__name__ == name or name in [c.__name__ for c in type(got).__mro__], (
            f"{where}, line {stmt.lineno} of the block: documented {name}, raised "
            f"{type(got).__name__}: {got}"
        )
        assert _matches(text, str(got)), (
            f"{where}, line {stmt.lineno} of the block: the documented message\n  {text}\n"
            f"is not the library's\n  {got}"
        )


@contextlib.contextmanager
def _cpu_only():
    """``device=None`` (Warp's preferred device) and Warp's default device are the CPU."""
    cpu, preferred = wp.get_device("cpu"), wp.get_preferred_device
    wp.get_preferred_device = lambda: cpu
    try:
        with wp.ScopedDevice(cpu):
            yield
    finally:
        wp.get_preferred_device = preferred


@contextlib.contextmanager
def _restored_globals():
    """What a page may change for the process: the default stage registry, the registered
    observation terms, Warp's config, matplotlib's figures."""
    from track_gen.pipeline import default_registry
    from track_gen.tools import terms

    kinds = set(default_registry().kinds())
    registered = terms.observation_terms()
    for name, term in registered.items():  # a page starts from the library's own terms
        if not type(term).__module__.startswith("track_gen."):
            terms.unregister_term(name)
    config = dict(vars(wp.config))
    try:
        yield
    finally:
        for name in set(default_registry().kinds()) - kinds:
            default_registry().unregister(name)
        for name in set(terms.observation_terms()) - set(registered):
            terms.unregister_term(name)
        for name, term in registered.items():
            if name not in terms.observation_terms():
                terms.register_term(term)
        for name, value in config.items():
            setattr(wp.config, name, value)
        with contextlib.suppress(ImportError):
            import matplotlib.pyplot as plt

            plt.close("all")


#: pages that build a Newton model are marked ``newton`` (tests/conftest.py runs them on one
#: worker with the other Newton tests: Newton's kernels compile once on a cold cache)
_RUN_PAGES = [
    pytest.param(p, marks=pytest.mark.newton) if "import newton" in p.read_text("utf-8") else p
    for p in PAGES
    if blocks(p)
]


@pytest.mark.parametrize("page", _RUN_PAGES, ids=_rel)
def test_page_runs(page, device, tmp_path, monkeypatch):
    """On ``cpu`` every block but the CUDA-only ones runs with the CPU as the only device a
    snippet gets; on ``cuda`` (where present) every block runs with Warp's own defaults."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    work = tmp_path / "work"  # ``../shared/data`` there is the workplace's data, as from the root
    work.mkdir()
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED, target_is_directory=True)
    elif "../shared/" in page.read_text(encoding="utf-8"):
        pytest.skip(f"{SHARED} (the data the page reads) is absent")
    monkeypatch.chdir(work)
    namespace = {"__name__": "docs_run_" + re.sub(r"\W", "_", _rel(page)[:-3])}
    on_cpu = device == "cpu"
    with _restored_globals(), _cpu_only() if on_cpu else contextlib.nullcontext():
        for i, block in enumerate(blocks(page)):
            if block.skip is None or not on_cpu:
                try:
                    run_block(block, namespace, tmp_path, i)
                except ModuleNotFoundError as err:
                    if (err.name or "").split(".")[0] not in OPTIONAL:
                        raise
                    pytest.skip(f"{_rel(page)}:{block.line} needs {err.name} (an optional extra)")


def test_every_skip_marker_is_of_an_allowed_kind():
    marked = [b for p in PAGES for b in blocks(p) if b.skip is not None]
    for b in marked:
        where = f"{_rel(b.page)}:{b.line}"
        assert b.skip in SKIP_REASONS, (
            f"{where}: skip reason {b.skip!r} not in {list(SKIP_REASONS)}"
        )
        assert SKIP_REASONS[b.skip](b.source), f"{where}: marked {b.skip!r} but is not"


def test_block_finder(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        'text\n```python\na = 1\n```\n\n<!-- docs-run: skip reason="cuda only" -->\n'
        '```python\nb = wp.zeros(1, device="cuda:0")\n```\n```bash\nls\n```\n'
        "- item:\n\n    ```python\n    c = 3\n    ```\n",
        encoding="utf-8",
    )
    found = [(b.line, b.source, b.skip) for b in blocks(page)]
    assert found == [
        (2, "a = 1\n", None),
        (7, 'b = wp.zeros(1, device="cuda:0")\n', "cuda only"),
        (15, "c = 3\n", None),
    ]
    page.write_text('<!-- docs-run: skip reason="slow" -->\n\n```python\nx\n```\n')
    with pytest.raises(ValueError, match="not directly above"):
        blocks(page)


def test_documented_errors_must_be_raised(tmp_path):
    page = tmp_path / "e.md"
    ok = Block(page, 1, "int(\"x\")\n# ValueError: invalid literal ... base 10: 'x'\n", None)
    run_block(ok, {}, tmp_path, 0)
    wrong = Block(page, 1, 'int("x")\n# TypeError: invalid literal\n', None)
    with pytest.raises(AssertionError, match="documented TypeError"):
        run_block(wrong, {}, tmp_path, 1)
    silent = Block(page, 1, "int('1')\n# ValueError: invalid literal\n", None)
    with pytest.raises(AssertionError, match="nothing raised"):
        run_block(silent, {}, tmp_path, 2)
