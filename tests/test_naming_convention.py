"""The names of the tools follow one convention: one suffix per role (CONTRIBUTING.md).

Each folder ``track_gen/tools/<tool>/`` exports, from its ``__init__``:

- components (``Component`` subclasses): the tool's name, a plain noun phrase with no role
  suffix (``Lidar``, ``Checkpoints``, ``CenterlineFromGates``);
- its settings class (made by ``settings_class``): ``<stem>Settings``;
- utilities (the classes of ``utility.py``): ``<stem>Utility``;
- results (the ``RowBatch`` classes of ``result.py``): ``<stem>Result``, except the four
  names the user's specification fixes (:data:`SPEC_RESULTS`);

where ``<stem>`` is the folder's name in CamelCase (``course_line``: ``CourseLine``) or the
name of one of the folder's components (``DiscCollision``). A component and a utility that
take settings name their settings class in ``SETTINGS``. Old names are deprecated aliases
(``RENAMED`` of the folder), never exported. Every ``@wp.kernel`` of the package is named
``<name>_kernel`` (``_<name>_kernel`` when private to its module).

Like ``tests/test_kernel_convention.py``, the analyser reads the sources with :mod:`ast`.
"""

from __future__ import annotations

import ast
import pathlib
import re
import warnings

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "track_gen"
TOOLS = PACKAGE / "tools"
ROLE_SUFFIXES = ("Settings", "Utility", "Result")
#: Result names the user's specification fixes (composing-a-course, rl-auto-reset): kept.
SPEC_RESULTS = {"DiscContact", "FrameContact", "ProgressEvents", "TrackFrame"}
#: Kernel modules whose kernels are being renamed elsewhere (the env's).
KERNEL_NAMES_PENDING = ("envs/",)
KERNEL_NAME = re.compile(r"^_?[a-z][a-z0-9_]*_kernel$")


def _folders() -> list[pathlib.Path]:
    return sorted(p for p in TOOLS.iterdir() if (p / "__init__.py").is_file())


def _exports(folder: pathlib.Path) -> list[str]:
    tree = ast.parse((folder / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return [ast.literal_eval(e) for e in node.value.elts]
    raise AssertionError(f"{folder.name}/__init__.py has no __all__")


def _renamed(folder: pathlib.Path) -> dict[str, str]:
    tree = ast.parse((folder / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "RENAMED" for t in node.targets
        ):
            return ast.literal_eval(node.value)
    return {}


def _base_names(node: ast.ClassDef) -> set[str]:
    out = set()
    for b in node.bases:
        if isinstance(b, ast.Name):
            out.add(b.id)
        elif isinstance(b, ast.Attribute):
            out.add(b.attr)
    return out


def _roles(folder: pathlib.Path) -> dict[str, tuple[str, ast.AST]]:
    """``{name: (role, node)}`` of the folder's public classes and settings classes."""
    out: dict[str, tuple[str, ast.AST]] = {}
    for path in sorted(folder.glob("*.py")):
        if path.name == "term.py":  # an observation term's settings: the env's, not the tool's
            continue
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = _base_names(node)
                if "Component" in bases:
                    out[node.name] = ("component", node)
                elif path.name == "utility.py" and not bases & {"UserWarning", "Warning"}:
                    out[node.name] = ("utility", node)
                elif bases & {"RowBatch", "BoxRowBatch"}:
                    out[node.name] = ("result", node)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                func = node.value.func
                if isinstance(func, ast.Name) and func.id == "settings_class":
                    out[node.targets[0].id] = ("settings", node)
    return out


def _stems(folder: pathlib.Path, roles) -> set[str]:
    camel = "".join(w.capitalize() for w in folder.name.split("_"))
    return {camel.lower()} | {n.lower() for n, (r, _) in roles.items() if r == "component"}


def _violations(folder: pathlib.Path) -> list[str]:
    roles = _roles(folder)
    stems = _stems(folder, roles)
    exports = set(_exports(folder))
    out = []
    for name, (role, node) in sorted(roles.items()):
        where = f"tools/{folder.name}: {name} ({role})"
        if role == "component":
            if name.endswith(ROLE_SUFFIXES):
                out.append(f"{where}: a component's name carries no role suffix")
            continue
        if role == "result" and name in SPEC_RESULTS:
            continue
        suffix = role.capitalize()
        if not name.endswith(suffix) or name.removesuffix(suffix).lower() not in stems:
            out.append(f"{where}: expected <stem>{suffix}, stem one of {sorted(stems)}")
        if name not in exports:
            out.append(f"{where}: not exported by the folder's __all__")
        if role == "settings":
            given = node.value.args[0]
            if not (isinstance(given, ast.Constant) and given.value == name):
                out.append(f"{where}: settings_class names it {ast.unparse(given)}")
    for cls_name, (role, node) in roles.items():
        if role in ("component", "utility") and any(
            isinstance(s, ast.Assign) and s.targets[0].id == "SETTINGS" for s in node.body
        ):
            setting = next(
                s.value.id
                for s in node.body
                if isinstance(s, ast.Assign) and s.targets[0].id == "SETTINGS"
            )
            if roles.get(setting, ("",))[0] != "settings":
                out.append(f"tools/{folder.name}: {cls_name}.SETTINGS names {setting}")
    for old, new in _renamed(folder).items():
        if new not in exports or old in exports:
            out.append(f"tools/{folder.name}: RENAMED {old} -> {new} (new exported, old not)")
    return out


def test_every_tool_folder_follows_the_naming_convention():
    problems = [p for folder in _folders() for p in _violations(folder)]
    assert not problems, "\n".join(problems)


def test_the_analyser_sees_every_role():
    roles = {}
    for folder in _folders():
        for name, (role, _) in _roles(folder).items():
            roles.setdefault(role, set()).add(name)
    assert {"Lidar", "Checkpoints", "CenterlineFromGates"} <= roles["component"]
    assert {"LidarUtility", "CheckpointsUtility", "CourseLineUtility"} <= roles["utility"]
    assert {"LidarResult", "CourseLineResult", "TrackFrame"} <= roles["result"]
    assert {"LidarSettings", "DiscCollisionSettings"} <= roles["settings"]
    assert len(roles["component"]) == 18 and len(roles["utility"]) == 17


def test_the_analyser_catches_a_bad_name(tmp_path):
    folder = tmp_path / "lidar"
    folder.mkdir()
    (folder / "__init__.py").write_text(
        '__all__ = ["Lidar", "LidarScanner", "LidarSettings"]\nRENAMED = {"Old": "Gone"}\n'
    )
    (folder / "component.py").write_text("class LidarResult(Component):\n    pass\n")
    (folder / "utility.py").write_text("class LidarScanner:\n    pass\n")
    (folder / "result.py").write_text("class Scan(RowBatch):\n    pass\n")
    (folder / "fields.py").write_text('LidarSettings = settings_class("Other", ())\n')
    problems = "\n".join(_violations(folder))
    for text in (
        "LidarResult (component): a component's name carries no role suffix",
        "LidarScanner (utility): expected <stem>Utility",
        "Scan (result): expected <stem>Result",
        "LidarSettings (settings): settings_class names it 'Other'",
        "RENAMED Old -> Gone",
    ):
        assert text in problems


def test_the_old_names_are_deprecated_aliases():
    import track_gen.tools as tools

    for folder in _folders():
        module = __import__(f"track_gen.tools.{folder.name}", fromlist=["RENAMED"])
        for old, new in _renamed(folder).items():
            for where in (module, tools):
                with pytest.warns(DeprecationWarning, match=new):
                    assert getattr(where, old) is getattr(where, new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError):
            tools.NoSuchTool  # noqa: B018


def _kernels():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                for dec in node.decorator_list:
                    target = dec.func if isinstance(dec, ast.Call) else dec
                    if isinstance(target, ast.Attribute) and target.attr == "kernel":
                        yield path.relative_to(PACKAGE).as_posix(), node.name


def test_every_kernel_is_named_kernel():
    bad = [
        f"{path}: {name}"
        for path, name in _kernels()
        if not KERNEL_NAME.match(name) and not path.startswith(KERNEL_NAMES_PENDING)
    ]
    assert not bad, "kernels are named <name>_kernel (_<name>_kernel when private):\n" + "\n".join(
        bad
    )
