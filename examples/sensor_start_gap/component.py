"""The start-gap course component: where the start line lies in the agent's frame."""

from __future__ import annotations

import dataclasses

import warp as wp

from track_gen import tools

from .fields import MAX_RANGE

_NAN = wp.constant(float("nan"))


@wp.kernel
def start_gap_kernel(
    # inputs
    center: wp.array(dtype=wp.vec3f),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    orientation: wp.array(dtype=wp.quatf),
    # static
    n_max: int,
    # outputs
    gap_out: wp.array(dtype=wp.vec3f),
):
    """Bead 0 of env ``e``'s centerline (its start line) in the agent's frame (the inverse
    rotation of the normalized orientation); NaN without a valid course or a finite pose."""
    e = wp.tid()
    q = orientation[e]
    p = position[e]
    ln = wp.length(wp.vec4f(q[0], q[1], q[2], q[3]))
    ok = valid[e] != 0 and count[e] >= 3 and ln > 0.0 and wp.isfinite(ln)
    ok = ok and wp.isfinite(p[0]) and wp.isfinite(p[1]) and wp.isfinite(p[2])
    if not ok:
        gap_out[e] = wp.vec3f(_NAN, _NAN, _NAN)
        return
    unit = wp.quatf(q[0] / ln, q[1] / ln, q[2] / ln, q[3] / ln)
    gap_out[e] = wp.quat_rotate_inv(unit, center[e * n_max] - p)


@dataclasses.dataclass
class StartGapResult:
    """The answer of ``acme.start_gap`` (the same instance every step).

    Attributes:
        gap: vec3f ``[E]``: the start line (bead 0 of the centerline) in the agent's frame,
            track units; NaN for an invalid env or a non-finite pose.
    """

    gap: wp.array


class StartGap(tools.Component):
    """Course component ``"acme.start_gap"``: where each env's start line lies from its agent
    (``res["acme.start_gap"]``, a :class:`StartGapResult`)."""

    name = "acme.start_gap"  # namespaced: never collides with a built-in component
    families = ("track",)
    INPUTS = (
        tools.InputSpec("position", wp.vec3f, doc="agent position per env, track units"),
        tools.InputSpec("orientation", wp.quatf, doc="agent orientation (world from body)"),
    )

    def __init__(self, max_range: float = MAX_RANGE.default, *, name=None, after=None):
        super().__init__(name=name, after=after)
        self.max_range = MAX_RANGE.check(max_range, "StartGap.max_range")  # before anything

    def planned_bytes(self, layout, config) -> int:
        return layout.num_envs * wp.types.type_size_in_bytes(wp.vec3f)

    def attach(self, ctx) -> None:
        self.track = ctx.generator.result  # stable buffers: the same arrays every generation
        self.n_max = ctx.layout.N_max
        nan = wp.vec3f(float("nan"), float("nan"), float("nan"))
        self.result = StartGapResult(gap=wp.full(ctx.num_envs, nan, wp.vec3f, ctx.device))

    def step(self, ctx):
        t = self.track
        wp.launch(
            start_gap_kernel,
            ctx.num_envs,
            [t.center, t.count, t.valid, self.bound["position"], self.bound["orientation"]]
            + [self.n_max],
            [self.result.gap],
            device=ctx.device,
        )
        return self.result
