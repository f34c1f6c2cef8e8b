"""A kernel that compiles for the CPU and fails for CUDA (its native snippet is invalid only
under ``__CUDA_ARCH__``): ``tests/test_cuda_compile.py`` proves with it that the CUDA compile
guard catches a CUDA-only error."""

import warp as wp

_SNIPPET = """
#if defined(__CUDA_ARCH__)
    this line is not valid cuda;
#endif
    out[tid] = 1.0f;
"""


@wp.func_native(_SNIPPET)
def _write_one(out: wp.array(dtype=wp.float32), tid: int): ...


@wp.kernel
def write_one(out: wp.array(dtype=wp.float32)):
    tid = wp.tid()
    _write_one(out, tid)
