"""Write a course component of your own: "acme.lookahead", the centerline point ahead.

Run:  python examples/custom_component.py --device cpu --steps 20 --num-envs 32

For each env, the component finds the centerline bead nearest to the agent's position and
answers the bead a fixed number of beads further along the loop, in world coordinates (NaN
for an invalid env or a non-finite position). It declares its input (``position``), allocates
once in ``attach``, refreshes what it derives from a course in ``on_generate`` for the masked
envs only, answers in ``step`` (``res["acme.lookahead"]``), clears its answer in ``reset``
and plans its bytes for the course's memory budget. The script checks every answer against a
NumPy oracle, the masked-regeneration contract and the capture rules
(``tools.check_component``). See docs/writing-a-component.md.
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import warp as wp

from track_gen import tools
from track_gen.course import Course
from track_gen.pipeline import Tunable, presets

_NAN = wp.constant(float("nan"))

#: The component's one setting, declared once: default, closed range, unit, meaning.
BEADS_AHEAD = Tunable(
    "beads_ahead",
    8,
    kind="int",
    lo=0,
    hi=65536,
    unit="beads",
    doc="how many beads past the agent's nearest bead the answered point lies",
)


@wp.kernel
def usable_beads_kernel(
    # inputs
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    # outputs
    beads_out: wp.array(dtype=wp.int32),
):
    """Per regenerated env: its bead count, or 0 for an invalid env (answered NaN)."""
    e = wp.tid()
    if mask[e] == 0:
        return  # an env that was not regenerated keeps every byte
    n = count[e]
    if valid[e] == 0 or n < 3:
        n = 0  # an invalid env: step answers NaN
    beads_out[e] = n


@wp.kernel
def lookahead_kernel(
    # inputs
    center: wp.array(dtype=wp.vec3f),
    beads: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    # static
    n_max: int,
    ahead: int,
    # outputs
    point_out: wp.array(dtype=wp.vec3f),
    nearest_out: wp.array(dtype=wp.int32),
):
    """Nearest bead by brute force (first minimum of the squared distance), then the bead
    ``ahead`` beads further along the closed loop."""
    e = wp.tid()
    n = beads[e]
    p = position[e]
    finite = wp.isfinite(p[0]) and wp.isfinite(p[1]) and wp.isfinite(p[2])
    if n == 0 or not finite:
        point_out[e] = wp.vec3f(_NAN, _NAN, _NAN)
        nearest_out[e] = -1
        return
    base = e * n_max
    best = int(0)
    d = center[base] - p
    best_d2 = wp.dot(d, d)
    for i in range(1, n):
        d = center[base + i] - p
        d2 = wp.dot(d, d)
        if d2 < best_d2:
            best_d2 = d2
            best = i
    nearest_out[e] = best
    point_out[e] = center[base + (best + ahead) % n]


@wp.kernel
def clear_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    # outputs
    point_out: wp.array(dtype=wp.vec3f),
    nearest_out: wp.array(dtype=wp.int32),
):
    """Per masked env: no answer until its next step."""
    e = wp.tid()
    if mask[e] != 0:
        point_out[e] = wp.vec3f(_NAN, _NAN, _NAN)
        nearest_out[e] = -1


@dataclasses.dataclass
class Lookahead:
    """The answer of ``acme.lookahead`` (the same instance every step).

    Attributes:
        point: vec3f ``[E]``: the centerline bead ``beads_ahead`` beads past the nearest one,
            world coordinates, track units; NaN for an invalid env, a non-finite position,
            or after a reset until the next step.
        nearest: int32 ``[E]``: index of the agent's nearest bead; -1 where ``point`` is NaN.
    """

    point: wp.array
    nearest: wp.array

    @staticmethod
    def buffers(num_envs: int) -> list[tuple[int, type]]:
        return [(num_envs, wp.vec3f), (num_envs, wp.int32)]


class LookaheadComponent(tools.Component):
    """Course component ``"acme.lookahead"``: the centerline point ``beads_ahead`` beads
    past the agent's nearest bead (``res["acme.lookahead"]``, a :class:`Lookahead`)."""

    name = "acme.lookahead"  # namespaced: never collides with a built-in component
    families = ("track",)  # it reads Track.center: a gate course is refused before building
    INPUTS = (tools.InputSpec("position", wp.vec3f, doc="agent position per env, track units"),)

    def __init__(self, beads_ahead: int = BEADS_AHEAD.default, *, name=None, after=None):
        super().__init__(name=name, after=after)
        # checked here, before any course is built (TypeError / ValueError naming the value)
        self.beads_ahead = BEADS_AHEAD.check(beads_ahead, "LookaheadComponent.beads_ahead")

    @staticmethod
    def buffers(num_envs: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array :meth:`attach` allocates."""
        own = [(num_envs, wp.int32), (num_envs, wp.int32)]  # usable beads, all-envs mask
        return own + Lookahead.buffers(num_envs)

    def planned_bytes(self, layout, config) -> int:
        """Bytes :meth:`attach` allocates, counted by the course before anything is built."""
        return sum(n * wp.types.type_size_in_bytes(d) for n, d in self.buffers(layout.num_envs))

    def attach(self, ctx) -> None:
        E, dev = ctx.num_envs, ctx.device
        self.track = ctx.generator.result  # stable buffers: the same arrays every generation
        self.n_max = ctx.layout.N_max
        self.beads = wp.zeros(E, dtype=wp.int32, device=dev)
        self.everyone = wp.ones(E, dtype=wp.int32, device=dev)  # mask=None: every env
        self.result = Lookahead(
            point=wp.full(E, wp.vec3f(np.nan, np.nan, np.nan), dtype=wp.vec3f, device=dev),
            nearest=wp.full(E, -1, dtype=wp.int32, device=dev),
        )

    def on_generate(self, ctx, mask) -> None:
        mask = self.everyone if mask is None else mask
        t = self.track
        wp.launch(
            usable_beads_kernel,
            ctx.num_envs,
            [t.count, t.valid, mask],
            [self.beads],
            device=ctx.device,
        )

    def step(self, ctx):
        r = self.result
        wp.launch(
            lookahead_kernel,
            ctx.num_envs,
            [self.track.center, self.beads, self.bound["position"], self.n_max, self.beads_ahead],
            [r.point, r.nearest],
            device=ctx.device,
        )
        return r

    def reset(self, ctx, mask) -> None:
        mask = self.everyone if mask is None else mask
        r = self.result
        wp.launch(clear_kernel, ctx.num_envs, [mask], [r.point, r.nearest], device=ctx.device)


# --- the NumPy oracle and the checks -----------------------------------------------------


def oracle(center, count, valid, pos, n_max: int, ahead: int):
    """``(point [E, 3], nearest [E])`` computed on the host in float64, and the squared
    distances ``[E, N_max]`` (inf past each env's count) to judge ties."""
    E = len(count)
    rows = center.reshape(E, n_max, 3).astype(np.float64)
    d2 = ((rows - pos.astype(np.float64)[:, None, :]) ** 2).sum(-1)
    n = np.where((valid != 0) & (count >= 3), count, 0)
    d2[np.arange(n_max)[None, :] >= n[:, None]] = np.inf
    live = (n > 0) & np.isfinite(pos).all(1)
    nearest = np.where(live, np.argmin(np.where(live[:, None], d2, 0.0), axis=1), -1)
    point = np.full((E, 3), np.nan, np.float32)
    for e in np.flatnonzero(live):
        point[e] = center[e * n_max + (nearest[e] + ahead) % n[e]]
    return point, nearest, d2


def check_step(course, comp, pos_np) -> int:
    """Compare the component's answer with the oracle; the number of live envs."""
    res = course.step()
    got = res["acme.lookahead"]
    assert got is comp.result
    r = course.result
    center, count, valid = r.center.numpy(), r.count.numpy(), r.valid.numpy()
    want_point, want_nearest, d2 = oracle(
        center, count, valid, pos_np, comp.n_max, comp.beads_ahead
    )
    nearest, point = got.nearest.numpy(), got.point.numpy()
    live = want_nearest >= 0
    assert np.array_equal(nearest < 0, ~live), "NaN answers where the oracle has none"
    assert np.isnan(point[~live]).all()
    for e in np.flatnonzero(live):
        i = nearest[e]
        # the nearest bead (up to float32 rounding of near ties), and exactly its bead ahead
        assert d2[e, i] <= d2[e, want_nearest[e]] * (1 + 1e-5) + 1e-12, (e, i, want_nearest[e])
        n = int(count[e])
        assert np.array_equal(point[e], center[e * comp.n_max + (i + comp.beads_ahead) % n])
    return int(live.sum())


def buffers_of(comp) -> list[np.ndarray]:
    return [a.numpy().copy() for a in (comp.beads, comp.result.point, comp.result.nearest)]


def same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.tobytes() == b.tobytes()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--num-envs", type=int, default=32)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--beads-ahead", type=int, default=8)
    ap.add_argument("--headless", action="store_true", help="accepted for uniformity")
    args = ap.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    E = args.num_envs
    comp = LookaheadComponent(args.beads_ahead)
    course = Course.track(
        presets.track(num_envs=E, device=args.device),
        checkpoint_spacing=0.6,
        extra=[comp],
        seeds=42,
    )
    device = course.device
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)  # the "sim": a stable buffer
    course.bind(position=pos)
    allocated = sum(a.capacity for a in (comp.beads, comp.everyone, *vars(comp.result).values()))
    assert comp.planned_bytes(course.generator.layout, None) == allocated

    # the capture rules: on_generate and reset only launch kernels
    problems = tools.check_component("acme.lookahead", course)
    assert problems == [], problems

    rng = np.random.default_rng(0)
    live_steps = 0
    for step in range(args.steps):
        r = course.result
        center, count = r.center.numpy(), r.count.numpy()
        n_max = comp.n_max
        k = rng.integers(0, np.maximum(count, 1))  # a random bead of each env, plus noise
        pos_np = center[np.arange(E) * n_max + k] + rng.normal(0.0, 0.05, (E, 3))
        pos_np = np.nan_to_num(pos_np.astype(np.float32), nan=0.0)
        if step == 1:
            pos_np[0] = np.nan  # a non-finite position answers NaN
        pos.assign(pos_np)
        live_steps += check_step(course, comp, pos_np)

        if step % 5 == 4:  # regenerate half the envs: the others keep every byte
            before = buffers_of(comp)
            mask_np = (np.arange(E) % 2 == (step // 5) % 2).astype(np.int32)
            regen = course.inputs["regen_mask"]
            regen.assign(mask_np)
            course.regenerate(mask=regen, advance=True)
            beads, point, nearest = buffers_of(comp)
            keep = mask_np == 0
            assert same_bytes(beads[keep], before[0][keep])
            assert same_bytes(point[keep], before[1][keep])
            assert same_bytes(nearest[keep], before[2][keep])
            assert np.isnan(point[~keep]).all() and (nearest[~keep] == -1).all()  # reset
            want = np.where((r.valid.numpy() != 0) & (r.count.numpy() >= 3), r.count.numpy(), 0)
            assert np.array_equal(beads, want)

            regen.zero_()  # an all-zero mask is an exact no-op
            before = buffers_of(comp)
            course.regenerate(mask=regen, advance=True)
            assert all(same_bytes(a, b) for a, b in zip(before, buffers_of(comp), strict=True))

    invalid = int((course.result.valid.numpy() == 0).sum())
    print(
        f"{args.steps} steps x {E} envs: {live_steps} answers checked against the oracle, "
        f"{invalid} invalid envs now, {comp.planned_bytes(course.generator.layout, None)} "
        "bytes planned"
    )
    print("ok: acme.lookahead matches the NumPy oracle and keeps the component contract")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
