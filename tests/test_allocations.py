"""Every allocation of the package goes through the allocation budget .

The test parses every ``.py`` under ``track_gen`` with :mod:`ast` (no import, no Warp) and
lists the calls of Warp's allocating functions (``wp.zeros``, ``wp.full``, ``wp.empty``,
``wp.ones``, ``wp.array`` and their ``*_like`` twins), whatever name ``warp`` is imported
under, ``from warp import zeros`` included. A ``wp.array(dtype=...)`` in an annotation (a
kernel signature, a struct field) is a type, not a call, and does not count. Only
``core/budget.py`` (the budget itself: :class:`~track_gen.core.budget.AllocationBudget`)
allocates directly; every other module allocates through a budget (``budget.zeros``,
``budget.full``, ``budget.array``). ``wp.clone`` (a result's ``clone()``, the copy a caller
asks for) and ``wp.copy`` (no allocation) are out of scope.

The exceptions left are listed below, each with its count and its reason; the test fails when
a listed module allocates more or fewer times than listed (a stale line goes too).
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "track_gen"
ALLOCATING = {"zeros", "full", "empty", "ones", "array"}
ALLOCATING |= {f"{n}_like" for n in ("zeros", "full", "empty", "ones")}
#: The module that allocates for everyone.
BUDGET = "core/budget.py"
#: ``{module: (direct allocations, why)}``: modules outside the files this rule has reached
#: yet, each to be routed through a budget by its owner (then its line goes).
EXCEPTIONS = {
    "core/capture_check.py": (
        1,
        "check_component's one-int flag of a diagnosis run (no construction to budget)",
    ),
    "seeds.py": (
        4,
        "PerEnvSeededRNG's and SeedState's [E] int32 seeds and epochs (the generator's plan "
        "counts them), and effective_seeds()'s host-copy scratch",
    ),
}
MIN_FILES = 100


def _annotation_nodes(tree: ast.AST) -> set[int]:
    """ids of every node inside an annotation (a parameter's, a return's, a field's)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        annotations = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            params = args.posonlyargs + args.args + args.kwonlyargs
            params += [a for a in (args.vararg, args.kwarg) if a is not None]
            annotations = [a.annotation for a in params] + [node.returns]
        elif isinstance(node, ast.AnnAssign):
            annotations = [node.annotation]
        for annotation in annotations:
            if annotation is not None:
                out.update(id(n) for n in ast.walk(annotation))
    return out


def _warp_names(tree: ast.AST) -> tuple[set[str], dict[str, str]]:
    """The names ``warp`` is bound to, and ``{local name: warp function}`` of the allocating
    functions imported by name."""
    modules, functions = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "warp":
                    modules.add(alias.asname or "warp")
        elif isinstance(node, ast.ImportFrom) and node.module == "warp" and node.level == 0:
            for alias in node.names:
                if alias.name in ALLOCATING:
                    functions[alias.asname or alias.name] = alias.name
    return modules, functions


def direct_allocations(path: pathlib.Path) -> list[tuple[int, str]]:
    """``(line, "wp.<function>")`` of each direct allocation call in the module at ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = _annotation_nodes(tree)
    modules, functions = _warp_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in skip:
            continue
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and f.attr in ALLOCATING
            and isinstance(f.value, ast.Name)
            and f.value.id in modules
        ):
            found.append((node.lineno, f"wp.{f.attr}"))
        elif isinstance(f, ast.Name) and f.id in functions:
            found.append((node.lineno, f"wp.{functions[f.id]}"))
    return sorted(found)


def _package_allocations() -> dict[str, list[tuple[int, str]]]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) >= MIN_FILES, f"only {len(files)} modules found under {PACKAGE}"
    out = {}
    for path in files:
        found = direct_allocations(path)
        if found:
            out[path.relative_to(PACKAGE).as_posix()] = found
    return out


def test_every_allocation_goes_through_the_budget():
    found = _package_allocations()
    assert BUDGET in found, "the scan no longer sees the budget's own allocations"
    outside = {
        module: calls
        for module, calls in found.items()
        if module != BUDGET and module not in EXCEPTIONS
    }
    lines = [
        f"track_gen/{m}:{line}: {call}" for m, calls in outside.items() for line, call in calls
    ]
    assert not lines, "direct allocations outside core/budget.py:\n" + "\n".join(lines)


def test_the_listed_exceptions_are_exact():
    found = _package_allocations()
    counts = {module: len(found.get(module, ())) for module in EXCEPTIONS}
    expected = {module: n for module, (n, _why) in EXCEPTIONS.items()}
    assert counts == expected, (
        "an exception's count changed: route the new allocation through a budget, or lower "
        "(or remove) the line once its owner has"
    )


def test_the_scan_sees_calls_and_skips_annotations(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        "import warp as w\n"
        "from warp import zeros as z\n"
        "def f(a: w.array(dtype=w.int32)) -> w.array(dtype=w.int32):\n"
        "    b: w.array(dtype=w.float32) = w.empty(3)\n"
        "    return w.full(3, 1), z(2), w.zeros_like(a), w.clone(a)\n"
    )
    assert direct_allocations(src) == [
        (4, "wp.empty"),
        (5, "wp.full"),
        (5, "wp.zeros"),
        (5, "wp.zeros_like"),
    ]
