"""The ``.pyi`` stubs of the config classes built at import (``docs/gen_stubs.py``): current,
true to the runtime classes, and read by a type checker.

``TrackGenConfig``, ``CourseConfig`` and every tool's settings class are made from their
declarations at import, so static tools see their fields only through the stubs. A stale stub
fails here (run ``python docs/gen_stubs.py``); each stubbed class must declare the runtime
class's fields, in order, with its defaults; mypy (a dev extra) must see a misspelled keyword
and a wrong type through them.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _gen():
    spec = importlib.util.spec_from_file_location("gen_stubs", ROOT / "docs" / "gen_stubs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _gen()


@pytest.mark.parametrize("name", GEN.MODULES)
def test_stub_is_current(name):
    path = GEN.stub_path(name)
    assert path.exists(), f"{path} is missing: run python docs/gen_stubs.py"
    assert path.read_text() == GEN.render(name), f"{path} is stale: run python docs/gen_stubs.py"


def _stub_classes(path: pathlib.Path) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef)}


def _fields_of(node: ast.ClassDef) -> list[tuple[str, str | None]]:
    return [
        (s.target.id, None if s.value is None else ast.unparse(s.value))
        for s in node.body
        if isinstance(s, ast.AnnAssign) and not ast.unparse(s.annotation).startswith("ClassVar")
    ]


@pytest.mark.parametrize("name", GEN.MODULES)
def test_stub_declares_every_runtime_field(name):
    module = importlib.import_module(name)
    classes = _stub_classes(GEN.stub_path(name))
    source = ast.parse(pathlib.Path(module.__file__).read_text())
    assigned = {
        t.id
        for n in source.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    built = {k: getattr(module, k) for k in assigned if GEN.is_config_class(getattr(module, k))}
    assert built, f"{name} builds no config class"
    for cls_name, cls in built.items():
        assert cls_name in classes, f"{name}: the stub lacks {cls_name}"
        declared = dict(_fields_of(classes[cls_name]))
        own = [f for f in dataclasses.fields(cls) if f.name in declared]
        inherited = {f.name for f in dataclasses.fields(cls)} - set(declared)
        bases = [b for b in cls.__bases__ if GEN.is_config_class(b)]
        assert inherited <= {f.name for b in bases for f in dataclasses.fields(b)}, cls_name
        for f in own:
            default = declared[f.name]
            if default is not None:  # a required field has none in the stub
                assert ast.literal_eval(default) == f.default, (cls_name, f.name)
        stub_order = [n for n, _ in _fields_of(classes[cls_name])]
        assert stub_order == [f.name for f in own], cls_name


def test_the_package_ships_its_stubs():
    assert (ROOT / "track_gen" / "py.typed").exists()
    text = (ROOT / "pyproject.toml").read_text()
    assert '"*" = ["*.pyi"]' in text and '"track_gen" = ["py.typed"]' in text


SAMPLE = """\
from track_gen.config import TrackGenConfig
from track_gen.course.config import CourseConfig
from track_gen.tools.lidar.fields import LidarSettings
from track_gen.tools.racing_line.fields import RacingLineSettings

cfg = TrackGenConfig(num_envs=8, half_width=0.12)
width: float = cfg.half_width
lidar = LidarSettings(num_beams=64, fov=3.0)
beams: int = lidar.num_beams
line = RacingLineSettings(vehicle_width=0.04, a_lat=8.0, a_lon=4.0, v_max=6.0)
course = CourseConfig(mode="track", gen=cfg, checkpoint_spacing=0.3, racing_line=line)
wrong: str = lidar.num_beams
TrackGenConfig(num_envz=8)
"""


def test_mypy_reads_the_fields_through_the_stubs(tmp_path):
    pytest.importorskip("mypy", reason="mypy (a dev extra) is not installed")
    sample = tmp_path / "sample.py"
    sample.write_text(SAMPLE)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    stubs = [str(GEN.stub_path(name)) for name in GEN.MODULES]
    done = subprocess.run(  # the stubs and the sample only: every other import is Any
        [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=skip"]
        + ["--cache-dir", str(tmp_path / "cache"), str(sample), *stubs],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 2, done.stdout
    assert "sample.py:12" in errors[0] and 'variable has type "str"' in errors[0]
    assert "sample.py:13" in errors[1] and '"num_envz"' in errors[1]
