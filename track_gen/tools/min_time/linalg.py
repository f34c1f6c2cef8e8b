"""Float64 linear algebra ``@wp.func`` s of the minimum-time planner (one thread per env, on
flat scratch arrays: a matrix is row-major at a base index)."""

from __future__ import annotations

import inspect

import warp as wp

wp.set_module_options({"enable_backward": False, "max_unroll": 1})

# ``@wp.func(inline=False)`` (one out-of-line copy of a function called from several places or
# loops, which keeps the planner's CUDA small) exists from warp-lang 1.18; on older Warp, which
# has no inline hint, the compiler decides and the result is the same.
noinline_func = (
    wp.func(inline=False) if "inline" in inspect.signature(wp.func).parameters else wp.func
)

_ZERO = wp.constant(wp.float64(0.0))


@wp.func
def get3(a: wp.array(dtype=wp.float64), i: int) -> wp.vec3d:
    return wp.vec3d(a[i], a[i + 1], a[i + 2])


@wp.func
def set3(a: wp.array(dtype=wp.float64), i: int, v: wp.vec3d):
    a[i] = v[0]
    a[i + 1] = v[1]
    a[i + 2] = v[2]


@wp.func
def add3(a: wp.array(dtype=wp.float64), i: int, v: wp.vec3d):
    set3(a, i, get3(a, i) + v)


@wp.func
def get33(a: wp.array(dtype=wp.float64), i: int) -> wp.mat33d:
    return wp.mat33d(
        a[i], a[i + 1], a[i + 2], a[i + 3], a[i + 4], a[i + 5], a[i + 6], a[i + 7], a[i + 8]
    )


@wp.func
def set33(a: wp.array(dtype=wp.float64), i: int, m: wp.mat33d):
    for r in range(3):
        for c in range(3):
            a[i + 3 * r + c] = m[r, c]


@wp.func
def add33(a: wp.array(dtype=wp.float64), i: int, m: wp.mat33d):
    set33(a, i, get33(a, i) + m)


@wp.func
def col3(b: wp.mat33d, c: int) -> wp.vec3d:
    """Column ``c`` of ``b``."""
    return wp.vec3d(b[0, c], b[1, c], b[2, c])


@wp.func
def chol3(m: wp.mat33d) -> tuple[wp.mat33d, int]:
    """Lower Cholesky factor of the symmetric 3x3 ``m`` and 1, or (zero, 0) when ``m`` is not
    positive definite (a pivot <= 0 or not finite)."""
    out = wp.mat33d()
    ok = int(1)
    a = m[0, 0]
    if not (a > _ZERO and wp.isfinite(a)):
        ok = 0
    else:
        l00 = wp.sqrt(a)
        l10 = m[1, 0] / l00
        l20 = m[2, 0] / l00
        b = m[1, 1] - l10 * l10
        if not (b > _ZERO and wp.isfinite(b)):
            ok = 0
        else:
            l11 = wp.sqrt(b)
            l21 = (m[2, 1] - l20 * l10) / l11
            c = m[2, 2] - l20 * l20 - l21 * l21
            if not (c > _ZERO and wp.isfinite(c)):
                ok = 0
            else:
                out = wp.mat33d(l00, _ZERO, _ZERO, l10, l11, _ZERO, l20, l21, wp.sqrt(c))
    return out, ok


@wp.func
def fwd3(lo: wp.mat33d, v: wp.vec3d) -> wp.vec3d:
    """``L^-1 v`` for a lower-triangular ``L``."""
    x0 = v[0] / lo[0, 0]
    x1 = (v[1] - lo[1, 0] * x0) / lo[1, 1]
    x2 = (v[2] - lo[2, 0] * x0 - lo[2, 1] * x1) / lo[2, 2]
    return wp.vec3d(x0, x1, x2)


@wp.func
def bwd3(lo: wp.mat33d, v: wp.vec3d) -> wp.vec3d:
    """``L^-T v`` for a lower-triangular ``L``."""
    x2 = v[2] / lo[2, 2]
    x1 = (v[1] - lo[2, 1] * x2) / lo[1, 1]
    x0 = (v[0] - lo[1, 0] * x1 - lo[2, 0] * x2) / lo[0, 0]
    return wp.vec3d(x0, x1, x2)


@wp.func
def fwd33(lo: wp.mat33d, b: wp.mat33d) -> wp.mat33d:
    """``L^-1 B`` (column by column)."""
    return wp.matrix_from_cols(fwd3(lo, col3(b, 0)), fwd3(lo, col3(b, 1)), fwd3(lo, col3(b, 2)))


@wp.func
def chol_solve3(lo: wp.mat33d, v: wp.vec3d) -> wp.vec3d:
    """``(L L^T)^-1 v`` for the lower Cholesky factor ``L`` (:func:`chol3`)."""
    return bwd3(lo, fwd3(lo, v))


@noinline_func
def dense_chol(a: wp.array(dtype=wp.float64), base: int, n: int, shift: wp.float64) -> int:
    """In-place lower Cholesky factor of the symmetric ``n x n`` matrix at ``a[base]``
    (row-major; only the lower triangle is read and written) plus ``shift`` on its diagonal.
    Returns 1, or 0 at the first pivot that is not > 0 (the factor is then incomplete)."""
    ok = int(1)
    for j in range(n):
        if ok == 1:
            d = a[base + j * n + j] + shift
            for k in range(j):
                ljk = a[base + j * n + k]
                d -= ljk * ljk
            if not (d > _ZERO and wp.isfinite(d)):
                ok = 0
            else:
                ljj = wp.sqrt(d)
                a[base + j * n + j] = ljj
                for i in range(j + 1, n):
                    s = a[base + i * n + j]
                    for k in range(j):
                        s -= a[base + i * n + k] * a[base + j * n + k]
                    a[base + i * n + j] = s / ljj
    return ok


@noinline_func
def dense_solve(
    a: wp.array(dtype=wp.float64), base: int, n: int, b: wp.array(dtype=wp.float64), bb: int
):
    """``b[bb : bb + n] <- (L L^T)^-1 b`` with the factor :func:`dense_chol` left at ``a``."""
    for i in range(n):
        s = b[bb + i]
        for k in range(i):
            s -= a[base + i * n + k] * b[bb + k]
        b[bb + i] = s / a[base + i * n + i]
    for t in range(n):
        i = n - 1 - t
        s = b[bb + i]
        for k in range(i + 1, n):
            s -= a[base + k * n + i] * b[bb + k]
        b[bb + i] = s / a[base + i * n + i]
