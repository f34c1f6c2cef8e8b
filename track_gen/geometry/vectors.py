"""Angles and small vector helpers: the pi constants, NaN, wrap_angle, cross2, safe_normalize."""

from __future__ import annotations

import warp as wp

wp.set_module_options({"enable_backward": False})

PI = wp.constant(3.14159265358979)
TWO_PI = wp.constant(6.28318530717959)
HALF_PI = wp.constant(1.5707963267949)
NAN = wp.constant(float("nan"))
FLOAT32_MAX = wp.constant(3.4028234663852886e38)


@wp.func
def wrap_angle(a: float) -> float:
    """Wrap an angle in radians to [-pi, pi)."""
    return a - TWO_PI * wp.floor((a + PI) / TWO_PI)


@wp.func
def cross2(a: wp.vec2f, b: wp.vec2f) -> float:
    return a[0] * b[1] - a[1] * b[0]


@wp.func
def nan_vec2() -> wp.vec2f:
    return wp.vec2f(NAN, NAN)


@wp.func
def safe_normalize(v: wp.vec2f) -> wp.vec2f:
    return v / wp.max(wp.length(v), 1.0e-8)


@wp.func
def xy(p: wp.vec3f) -> wp.vec2f:
    """The ground-plane part ``(x, y)`` of a point."""
    return wp.vec2f(p[0], p[1])


@wp.func
def finite(x: float) -> bool:
    """``x`` is finite (a NaN fails the comparison; inline, unlike ``wp.isfinite`` on the CPU,
    which calls into the runtime)."""
    return wp.abs(x) <= FLOAT32_MAX


@wp.func
def finite3(p: wp.vec3f) -> bool:
    """Every coordinate of ``p`` is :func:`finite`."""
    return finite(p[0]) and finite(p[1]) and finite(p[2])
