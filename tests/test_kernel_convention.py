"""Every ``@wp.kernel`` of the package follows one signature convention.

A kernel's parameters come in groups, in this order, each group introduced by a comment line
inside the signature whose first word is the group's name (text after it is free, e.g.
``# static: sizes and flags``); a group may be absent, none may repeat:

- ``# inputs``: arrays the kernel only reads (course data, workspace arrays, masks, seeds);
- ``# parameters``: per-env parameter arrays (the ``[E]`` arrays of ``generator.params``,
  per-env option arrays), only read;
- ``# static``: every scalar passed by value (sizes, counts, flags, constants frozen at
  launch); scalars only here, arrays never here;
- ``# scratch``: arrays used as per-call workspace, written and read;
- ``# outputs``: arrays the kernel writes, each named ``*_out`` (written only) or
  ``*_inout`` (read and written); a name with either suffix appears only here.

A parameter typed by a ``@wp.struct`` of the package counts as an array when every field of
the struct is an array (a struct of outputs sits in ``# outputs`` with an ``_out``/``_inout``
name, like an array), as a scalar when none is (``# static``); a struct mixing arrays and
scalars is refused (split it by role).

An array counts as written when the kernel assigns or augments a subscript of it
(``a[i] = ...``, ``a[i] += ...``; for a struct, of one of its fields: ``s.a[i] = ...``),
passes it as the first argument of a ``wp.atomic_*`` call, or passes it to a ``@wp.func`` of
the package that writes that parameter (followed through nested ``@wp.func`` calls). A
written array must be in ``outputs`` or ``scratch``; an ``_out`` array must not be read by
subscript in the kernel itself. Whether an array is an input or a per-env parameter, and
scratch or output, is the author's call. Warp binds ``wp.launch``
arguments positionally over ``inputs + outputs``, so the launch lists follow the signature.

The analyser parses every ``.py`` under ``track_gen`` with :mod:`ast` (no import, no Warp),
in the spirit of mujoco_warp's kernel analyzer.
"""

from __future__ import annotations

import ast
import pathlib
import re

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "track_gen"
GROUPS = ("inputs", "parameters", "static", "scratch", "outputs")
WRITABLE = ("scratch", "outputs")
SUFFIXES = ("_out", "_inout")
MIN_KERNELS = 50
#: Most parameters a kernel takes: a kernel past it does several jobs (split it by role).
MAX_PARAMETERS = 60


def _decorated(node: ast.FunctionDef, name: str) -> bool:
    """Whether ``node`` carries ``@wp.<name>`` (or ``@wp.<name>(...)``)."""
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Attribute) and target.attr == name:
            return True
        if isinstance(target, ast.Name) and target.id == name:
            return True
    return False


def _is_array(annotation: ast.expr | None) -> bool:
    """Whether a parameter annotation is a Warp array type (``wp.array``, ``wp.array2d``...)."""
    if annotation is None:
        return False
    target = annotation.func if isinstance(annotation, ast.Call) else annotation
    return isinstance(target, ast.Attribute) and target.attr.startswith("array")


def _struct_kinds(trees: list[ast.Module]) -> dict[str, str]:
    """Every ``@wp.struct`` class of ``trees`` by name: ``"arrays"`` (every field an array),
    ``"scalars"`` (none) or ``"mixed"``."""
    kinds = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and _decorated(node, "struct"):
                fields = [f for f in node.body if isinstance(f, ast.AnnAssign)]
                arrays = [_is_array(f.annotation) for f in fields]
                kinds[node.name] = (
                    "arrays" if all(arrays) else "scalars" if not any(arrays) else "mixed"
                )
    return kinds


def _struct_name(annotation: ast.expr | None) -> str | None:
    """The class name an annotation names (``S`` or ``mod.S``), None for anything else."""
    if isinstance(annotation, ast.Name):
        return annotation.id
    if isinstance(annotation, ast.Attribute):
        return annotation.attr
    return None


def _root(node: ast.expr) -> str | None:
    """The name an access starts from: ``a`` of ``a`` and of ``a.f`` (a struct's field)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _call_name(call: ast.Call) -> str | None:
    """The called function's bare name (``f`` of ``f(...)`` or ``mod.f(...)``)."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _direct_writes(func: ast.FunctionDef) -> set[str]:
    """Names written by subscript assignment or as the first argument of ``wp.atomic_*``."""
    written: set[str] = set()
    for sub in ast.walk(func):
        targets: list[ast.expr] = []
        if isinstance(sub, ast.Assign):
            targets = list(sub.targets)
        elif isinstance(sub, ast.AugAssign):
            targets = [sub.target]
        for target in targets:
            elements = target.elts if isinstance(target, ast.Tuple) else [target]
            for element in elements:
                if isinstance(element, ast.Subscript) and _root(element.value):
                    written.add(_root(element.value))
        if isinstance(sub, ast.Call) and (_call_name(sub) or "").startswith("atomic_"):
            if sub.args and _root(sub.args[0]):
                written.add(_root(sub.args[0]))
    return written


def _calls_with_names(func: ast.FunctionDef):
    """Every ``(callee name, position, argument name)`` where a bare name is passed."""
    for sub in ast.walk(func):
        if isinstance(sub, ast.Call):
            name = _call_name(sub)
            for position, arg in enumerate(sub.args):
                if name and isinstance(arg, ast.Name):
                    yield name, position, arg.id


def _func_write_positions(funcs: dict[str, list[ast.FunctionDef]]) -> dict[str, set[int]]:
    """For every ``@wp.func`` name, the parameter positions some overload of it writes.

    Overloads and same-named functions of different modules are merged (a position written by
    any of them counts), and writes through nested ``@wp.func`` calls are followed to a fixpoint.
    """
    writes = {name: set() for name in funcs}
    changed = True
    while changed:
        changed = False
        for name, defs in funcs.items():
            for func in defs:
                params = [a.arg for a in func.args.args]
                written = _direct_writes(func)
                for callee, position, arg in _calls_with_names(func):
                    if position in writes.get(callee, ()):
                        written.add(arg)
                positions = {i for i, p in enumerate(params) if p in written}
                if not positions <= writes[name]:
                    writes[name] |= positions
                    changed = True
    return writes


def _kernel_writes(kernel: ast.FunctionDef, func_writes: dict[str, set[int]]) -> set[str]:
    """Names the kernel writes, directly or through a writing ``@wp.func``."""
    written = _direct_writes(kernel)
    for callee, position, arg in _calls_with_names(kernel):
        if position in func_writes.get(callee, ()):
            written.add(arg)
    return written


def _subscript_reads(kernel: ast.FunctionDef) -> set[str]:
    """Names read by subscript (``a[i]``, ``s.a[i]`` in a load), augmented assignments
    included."""
    read: set[str] = set()
    for sub in ast.walk(kernel):
        if isinstance(sub, ast.Subscript) and _root(sub.value):
            if isinstance(sub.ctx, ast.Load):
                read.add(_root(sub.value))
        if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Subscript):
            if _root(sub.target.value):
                read.add(_root(sub.target.value))
    return read


def _group_comments(kernel: ast.FunctionDef, lines: list[str]) -> list[tuple[int, str]]:
    """``(line, first word)`` of each comment line between ``def`` and the body."""
    comments = []
    for number in range(kernel.lineno, kernel.body[0].lineno):
        text = lines[number - 1].strip()
        if text.startswith("#"):
            match = re.match(r"#\s*([A-Za-z_]+)", text)
            comments.append((number, match.group(1) if match else ""))
    return comments


def _kernel_violations(
    kernel: ast.FunctionDef,
    lines: list[str],
    func_writes: dict[str, set[int]],
    structs: dict[str, str] | None = None,
) -> list[str]:
    """Every way ``kernel``'s signature breaks the convention, as readable sentences
    (``structs``: :func:`_struct_kinds` of the package)."""
    structs = structs or {}
    problems = []
    comments = _group_comments(kernel, lines)
    for number, word in comments:
        if word not in GROUPS:
            problems.append(f"comment line {number} names no group ({word!r}; use one of {GROUPS})")
    groups: dict[str, str] = {}
    order: list[str] = []
    for arg in kernel.args.args:
        above = [word for number, word in comments if number < arg.lineno]
        group = above[-1] if above else None
        if group not in GROUPS:
            problems.append(f"{arg.arg}: under no group comment")
            continue
        groups[arg.arg] = group
        if not order or order[-1] != group:
            order.append(group)
        kind = structs.get(_struct_name(arg.annotation))
        if kind == "mixed":
            problems.append(f"{arg.arg}: a struct mixing arrays and scalars (split it by role)")
            continue
        array = _is_array(arg.annotation) or kind == "arrays"
        if group == "static" and array:
            problems.append(f"{arg.arg}: an array in static")
        if group != "static" and not array:
            problems.append(f"{arg.arg}: a scalar outside static (in {group})")
        suffixed = arg.arg.endswith(SUFFIXES)
        if group == "outputs" and not suffixed:
            problems.append(f"{arg.arg}: in outputs without an _out/_inout suffix")
        if group != "outputs" and suffixed:
            problems.append(f"{arg.arg}: _out/_inout suffix outside outputs (in {group})")
    ranks = [GROUPS.index(g) for g in order]
    if ranks != sorted(set(ranks)):
        problems.append(f"groups out of order or repeated: {order} (order is {GROUPS})")
    for name in sorted(_kernel_writes(kernel, func_writes)):
        if name in groups and groups[name] not in WRITABLE:
            problems.append(f"{name}: written but in {groups[name]}")
    for name in sorted(_subscript_reads(kernel)):
        if groups.get(name) == "outputs" and name.endswith("_out"):
            problems.append(f"{name}: read in the kernel, so it is _inout, not _out")
    return problems


def _modules() -> list[tuple[pathlib.Path, ast.Module, list[str]]]:
    """Every module of the package: path, tree and source lines."""
    modules = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text()
        modules.append((path, ast.parse(source), source.splitlines()))
    return modules


def analyse() -> tuple[int, list[str]]:
    """The number of kernels found and every violation as ``file:line kernel: problem``."""
    modules = _modules()
    structs = _struct_kinds([tree for _, tree, _ in modules])
    funcs: dict[str, list[ast.FunctionDef]] = {}
    for _, tree, _ in modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and _decorated(node, "func"):
                funcs.setdefault(node.name, []).append(node)
    func_writes = _func_write_positions(funcs)
    count = 0
    violations = []
    for path, tree, lines in modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and _decorated(node, "kernel"):
                count += 1
                where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}"
                for problem in _kernel_violations(node, lines, func_writes, structs):
                    violations.append(f"{where}: {problem}")
    return count, violations


def test_the_analyser_finds_the_kernels():
    count, _ = analyse()
    assert count > MIN_KERNELS, f"found only {count} kernels under {PACKAGE}"


def test_every_kernel_follows_the_signature_convention():
    _, violations = analyse()
    assert not violations, "\n".join(violations)


def test_no_kernel_takes_more_than_the_largest_parameter_count():
    too_many = []
    for path, tree, _ in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and _decorated(node, "kernel"):
                n = len(node.args.args)
                if n > MAX_PARAMETERS:
                    too_many.append(f"{path.relative_to(PACKAGE.parent)} {node.name}: {n}")
    assert not too_many, f"kernels over {MAX_PARAMETERS} parameters: {too_many}"


def test_the_analyser_catches_each_kind_of_violation():
    source = """
import warp as wp

@wp.func
def _store(a: wp.array(dtype=float), i: int):
    a[i] = 1.0

@wp.kernel
def _bad(
    # outputs
    result_out: wp.array(dtype=float),
    # inputs
    written: wp.array(dtype=float),
    through_func: wp.array(dtype=float),
    n: int,
    flag_out: wp.array(dtype=float),
    # static
    table: wp.array(dtype=float),
    # wrong
    loose: wp.array(dtype=float),
):
    i = wp.tid()
    written[i] = result_out[i]
    _store(through_func, i)
"""
    tree = ast.parse(source)
    nodes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    func_writes = _func_write_positions({"_store": [nodes["_store"]]})
    problems = "\n".join(_kernel_violations(nodes["_bad"], source.splitlines(), func_writes))
    for expected in (
        "names no group ('wrong'",
        "loose: under no group comment",
        "n: a scalar outside static",
        "flag_out: _out/_inout suffix outside outputs",
        "table: an array in static",
        "groups out of order",
        "written: written but in inputs",
        "through_func: written but in inputs",
        "result_out: read in the kernel",
    ):
        assert expected in problems, f"{expected!r} not reported in:\n{problems}"


def test_the_analyser_applies_the_rules_to_struct_parameters():
    """A struct of arrays is an array (writes through its fields and through a ``@wp.func``
    count), a struct of scalars a scalar, a mixed struct is refused; the episode kernels'
    form (``rules`` in static, ``episode_inout`` in outputs) passes."""
    source = """
import warp as wp

@wp.struct
class Arrays:
    a: wp.array(dtype=float)
    b: wp.array(dtype=int)

@wp.struct
class Rules:
    dt: float
    n: int

@wp.struct
class Mixed:
    a: wp.array(dtype=float)
    n: int

@wp.func
def _close(i: int, rules: Rules, ep: Arrays):
    ep.b[i] = rules.n

@wp.kernel
def _good(
    # inputs
    x: wp.array(dtype=float),
    # static
    rules: Rules,
    # outputs
    episode_inout: Arrays,
):
    i = wp.tid()
    episode_inout.a[i] = episode_inout.a[i] + x[i] * rules.dt
    _close(i, rules, episode_inout)

@wp.kernel
def _bad(
    # inputs
    field_written: Arrays,
    func_written: Arrays,
    # static
    arrays_static: Arrays,
    mixed: Mixed,
    # outputs
    rules_out: Rules,
    read_out: Arrays,
):
    i = wp.tid()
    field_written.a[i] = read_out.a[i]
    wp.atomic_add(read_out.a, i, 1.0)
    _close(i, rules_out, func_written)
"""
    tree = ast.parse(source)
    nodes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    structs = _struct_kinds([tree])
    assert structs == {"Arrays": "arrays", "Rules": "scalars", "Mixed": "mixed"}
    func_writes = _func_write_positions({"_close": [nodes["_close"]]})
    assert func_writes["_close"] == {2}
    lines = source.splitlines()
    assert _kernel_violations(nodes["_good"], lines, func_writes, structs) == []
    problems = "\n".join(_kernel_violations(nodes["_bad"], lines, func_writes, structs))
    for expected in (
        "field_written: written but in inputs",
        "func_written: written but in inputs",
        "arrays_static: an array in static",
        "mixed: a struct mixing arrays and scalars",
        "rules_out: a scalar outside static",
        "read_out: read in the kernel",
    ):
        assert expected in problems, f"{expected!r} not reported in:\n{problems}"
