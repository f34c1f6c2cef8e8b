"""The package's top level (``track_gen/__init__.py``): its public names load on first use."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import track_gen

REPO = Path(__file__).resolve().parents[1]


def test_every_public_name_resolves_from_its_module():
    assert set(track_gen.__all__) == {*track_gen._SOURCES, "__version__"}
    for name, source in track_gen._SOURCES.items():
        module = importlib.import_module(source, "track_gen")
        assert getattr(track_gen, name) is getattr(module, name)
    assert set(track_gen.__all__) <= set(dir(track_gen))


def test_subpackages_resolve_as_attributes_and_a_missing_name_is_an_attribute_error():
    assert track_gen.pipeline.presets is not None and track_gen.io.read_tum is not None
    for missing in ("nope", "_private"):
        try:
            getattr(track_gen, missing)
        except AttributeError as exc:
            assert repr(missing) in str(exc)
        else:  # pragma: no cover - the assertion explains
            raise AssertionError(f"track_gen.{missing} resolved")


def test_importing_the_package_alone_loads_no_warp():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    code = "import sys, track_gen; assert 'warp' not in sys.modules; print(track_gen.__version__)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert run.returncode == 0 and run.stdout.strip() == track_gen.__version__, run.stderr
