"""Every Warp kernel module of the package compiles for CUDA GPUs through NVRTC, with or without
a GPU (sm_90 at -O1 in the suite; sm_80 and sm_90 at Warp's default -O3 in the slow soak): a
CUDA-only code path that does not compile fails here, not on a user's first GPU run.

The warp-lang wheel ships NVRTC, so this runs on a CPU-only machine; where NVRTC is absent
(a build of Warp without CUDA) the tests are skipped and say so.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import pytest
import warp as wp

import track_gen

from .support import cuda_only_error  # noqa: F401 (imported for the guard test)

#: The GPU architectures every module must compile for (Ampere, Hopper): Hopper in the suite,
#: both in the slow soak (``-m slow``; a second architecture doubles the suite's cold NVRTC time
#: for code Warp generates the same way on both).
ARCHS = (80, 90)
SUITE_ARCH = 90
#: NVRTC's optimization level in the suite: the front end (what a CUDA-only code path gets
#: wrong: types, overloads, templates) is the same at every level, and -O1 compiles the largest
#: modules 2-3x faster than the default -O3, which the slow soak keeps.
SUITE_OPT_LEVEL = 1


@pytest.fixture
def suite_opt_level():
    """``wp.config.optimization_level`` at :data:`SUITE_OPT_LEVEL` for one test, restored after
    (the kernel cache keys on it, so no other test's modules are affected)."""
    saved = wp.config.optimization_level
    wp.config.optimization_level = SUITE_OPT_LEVEL
    try:
        yield
    finally:
        wp.config.optimization_level = saved


def _package_modules() -> list[str]:
    """Every module of the package except the ``__main__`` entry points."""
    return sorted(
        m.name
        for m in pkgutil.walk_packages(track_gen.__path__, "track_gen.")
        if not m.name.endswith("__main__")
    )


def _kernel_modules() -> list[str]:
    """The package modules that define Warp kernels (modules of ``@wp.func`` only compile as
    part of the kernel modules that call them)."""
    out = []
    for name in _package_modules():
        module = importlib.import_module(name)
        if any(isinstance(v, wp.Kernel) and v.module.name == name for v in vars(module).values()):
            out.append(name)
    return out


KERNEL_MODULES = _kernel_modules()


@wp.kernel
def _probe(a: wp.array(dtype=wp.float32)):
    a[wp.tid()] = 1.0


@pytest.fixture(scope="module")
def nvrtc(tmp_path_factory):
    """Skip when this Warp cannot compile for CUDA (no NVRTC): a trivial module is the probe."""
    try:
        wp.compile_aot_module(
            sys.modules[__name__],
            arch=ARCHS[-1],
            use_ptx=True,
            module_dir=tmp_path_factory.mktemp("probe"),
        )
    except Exception as exc:  # any failure of the trivial module means no CUDA compiler
        pytest.skip(f"this Warp build cannot compile for CUDA through NVRTC: {exc!r}")


def test_the_package_has_kernel_modules():
    assert "track_gen.stages.bezier" in KERNEL_MODULES
    assert "track_gen.tools.band_collision.segments" in KERNEL_MODULES


def test_a_cuda_only_error_fails_the_guard(nvrtc, suite_opt_level, tmp_path):
    with pytest.raises(Exception, match="CUDA kernel build failed"):
        wp.compile_aot_module(
            "tests.support.cuda_only_error", arch=ARCHS[-1], use_ptx=True, module_dir=tmp_path
        )


@pytest.mark.parametrize("name", KERNEL_MODULES)
def test_module_compiles_for_cuda(nvrtc, suite_opt_level, name, tmp_path):
    paths = wp.compile_aot_module(name, arch=[SUITE_ARCH], use_ptx=True, module_dir=tmp_path)
    assert len(paths) == 1 and all(p.stat().st_size > 0 for p in paths)


@pytest.mark.slow
@pytest.mark.parametrize("name", KERNEL_MODULES)
def test_module_compiles_for_every_arch(nvrtc, name, tmp_path):
    paths = wp.compile_aot_module(name, arch=list(ARCHS), use_ptx=True, module_dir=tmp_path)
    assert len(paths) == len(ARCHS) and all(p.stat().st_size > 0 for p in paths)
