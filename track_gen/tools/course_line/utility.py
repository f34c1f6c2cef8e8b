"""A smooth closed line through the gates of a gate course: :class:`CourseLine`,
:class:`CourseLineBuilder` and the :class:`CenterlineFromGates` component.

A gate course has no centerline of its own. :class:`CourseLineBuilder` samples one, shaped
like a :class:`~track_gen.Track`'s centerline arrays (``center``, ``tangent``, ``normal``,
``arclen``, ``length``, ``count``, ``valid``), so a localizer reads either.

The curve is the closed cubic Hermite spline through the gate centres: span ``g -> g+1``
(mod ``count``) runs from ``P0 = position[g]`` to ``P1 = position[g+1]`` with the
chord-scaled gate tangents ``m0 = T_g * d`` and ``m1 = T_{g+1} * d`` (``d = |P1 - P0|``,
``T`` the gate's unit ``tangent``)::

    c(u) = (2u^3 - 3u^2 + 1) P0 + (u^3 - 2u^2 + u) m0 + (-2u^3 + 3u^2) P1 + (u^3 - u^2) m1

sampled at ``u = k / K``, ``k = 0 .. K-1`` (``K = samples_per_gate``): bead ``g*K + k``. Bead
``g*K`` is gate ``g``'s centre exactly (the gate position itself is written there) and the
curve leaves it along the gate's tangent; the spline is C1 (one tangent per gate shared by
both spans).

Hairpins: the line passes every gate along the gate's tangent (so it crosses every gate
forward, through the centre of its opening). Where a gate's tangent points away from the next
gate (a hairpin: about 3% of spans of the default bezier gate courses), no curve leaving along
that tangent can reach the next gate without turning around, and the spline turns tightly
near the gate, in a small loop at the sharpest ones. The curvature there is high (a
curvature-limited speed profile slows down) but the line stays continuous and C1 in its
parameter; more ``samples_per_gate`` resolve the turn, they do not remove it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array, check_mask
from ...core.component import Component, buffer_bytes
from ...core.exec import require_not_capturing
from ...core.extents import in_range3
from ...core.tunable import Tunable
from ...results import GateSequence

wp.set_module_options({"enable_backward": False})

__all__ = ["SAMPLES_PER_GATE", "CenterlineFromGates", "CourseLine", "CourseLineBuilder"]

SAMPLES_PER_GATE = Tunable(
    "samples_per_gate",
    8,
    kind="int",
    lo=2,
    hi=256,
    unit="beads per gate",
    doc="beads K sampled on each span between consecutive gates (bead g*K is gate g).",
)

#: Below this plan-view length a unit tangent counts as vertical (normal ``(0, 1, 0)``).
VERTICAL_EPS = 1.0e-6

_NAN = wp.constant(float("nan"))
_VERTICAL_EPS = wp.constant(VERTICAL_EPS)


@dataclass
class CourseLine:
    """A batch of closed sampled lines, flat and NaN-padded (env ``e`` owns rows
    ``e*L .. e*L + L - 1``, ``L = max_gates * samples_per_gate``; rows past ``count[e]`` are
    NaN). Shaped like a :class:`~track_gen.Track`'s centerline arrays. Units: track units.

    Attributes:
        center: vec3f ``[E*L]``: beads along the line (bead ``g*K`` is gate ``g``'s centre).
        tangent: vec3f ``[E*L]``: unit central difference of the neighbouring beads
            (``normalize(center[i+1] - center[i-1])``, indices mod ``count``); ``(0, 0, 0)``
            where that difference is zero.
        normal: vec3f ``[E*L]``: plan-view left normal ``normalize(-t.y, t.x, 0)``; ``(0, 1, 0)``
            where the tangent's plan-view part is shorter than :data:`VERTICAL_EPS` (a
            vertical or zero tangent).
        arclen: float32 ``[E*L]``: arc length before bead ``i`` (0 at ``i = 0``), the sum of
            the chords ``|center[j+1] - center[j]|``, ``j < i``.
        length: float32 ``[E]``: closed perimeter, the closing chord ``count-1 -> 0``
            included (0 for an env without a line).
        count: int32 ``[E]``: beads, ``gates * K`` (0: no line).
        valid: int32 ``[E]``: the gate generator's ``result.valid`` (aliased, not copied).
    """

    center: wp.array
    tangent: wp.array
    normal: wp.array
    arclen: wp.array
    length: wp.array
    count: wp.array
    valid: wp.array

    @classmethod
    def buffers(cls, num_envs: int, n_max: int, own_valid: bool = True) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array :meth:`allocate` makes (``own_valid``: no
        ``valid`` array is given to alias)."""
        rows, E = num_envs * n_max, num_envs
        out = [(E, wp.int32)] if own_valid else []
        return out + [(rows, wp.vec3f)] * 3 + [(rows, wp.float32), (E, wp.float32), (E, wp.int32)]

    @classmethod
    def allocate(
        cls, num_envs: int, n_max: int, device, budget=None, valid: wp.array | None = None
    ) -> CourseLine:
        """NaN rows, ``length = 0`` and ``count = 0`` (each array checked against ``budget``
        first). ``valid`` is aliased when given, else a zero ``[E]`` int32 array."""
        budget = budget or AllocationBudget(device, "lower max_gates or samples_per_gate")
        nan = float("nan")
        rows = int(num_envs) * int(n_max)

        def v3():
            return budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "course line")

        if valid is None:
            valid = budget.zeros(int(num_envs), wp.int32, "course line valid")
        return cls(
            center=v3(),
            tangent=v3(),
            normal=v3(),
            arclen=budget.full(rows, nan, wp.float32, "course line arclen"),
            length=budget.zeros(int(num_envs), wp.float32, "course line length"),
            count=budget.zeros(int(num_envs), wp.int32, "course line count"),
            valid=valid,
        )

    @property
    def num_envs(self) -> int:
        return self.count.shape[0]

    @property
    def N_max(self) -> int:
        """Per-env capacity L (the row stride)."""
        return self.center.shape[0] // self.count.shape[0]

    @property
    def device(self):
        return self.center.device

    def clone(self) -> CourseLine:
        """A detached deep copy, ``valid`` included (allocates: call it outside your graph)."""
        return CourseLine(
            **{f.name: wp.clone(getattr(self, f.name)) for f in dataclasses.fields(self)}
        )


# ---------------------------------------------------------------------------------- kernel
@wp.func
def _hermite(p0: wp.vec3f, m0: wp.vec3f, p1: wp.vec3f, m1: wp.vec3f, u: float) -> wp.vec3f:
    u2 = u * u
    u3 = u2 * u
    h00 = 2.0 * u3 - 3.0 * u2 + 1.0
    h10 = u3 - 2.0 * u2 + u
    h01 = -2.0 * u3 + 3.0 * u2
    h11 = u3 - u2
    return h00 * p0 + h10 * m0 + h01 * p1 + h11 * m1


@wp.kernel
def _build_kernel(
    # inputs
    gate_position: wp.array(dtype=wp.vec3f),
    gate_tangent: wp.array(dtype=wp.vec3f),
    gate_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    mask: wp.array(dtype=wp.int32),
    # static
    use_mask: int,
    max_gates: int,
    samples: int,
    # outputs
    center_inout: wp.array(dtype=wp.vec3f),
    tangent_out: wp.array(dtype=wp.vec3f),
    normal_out: wp.array(dtype=wp.vec3f),
    arclen_out: wp.array(dtype=wp.float32),
    length_out: wp.array(dtype=wp.float32),
    count_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if use_mask != 0:
        if mask[e] == 0:
            return
    cap = max_gates * samples
    gb = e * max_gates
    base = e * cap
    m = wp.clamp(gate_count[e], 0, max_gates)
    ok = int(1)
    if valid[e] == 0 or m < 3:
        ok = 0
    for g in range(m):
        # non-finite or beyond COORD_LIMIT (core/extents.py): no line
        if not (in_range3(gate_position[gb + g]) and in_range3(gate_tangent[gb + g])):
            ok = 0
    n = m * ok
    nb = n * samples
    inv_k = 1.0 / float(samples)
    # beads: the gate centre itself at k = 0, the Hermite span at u = k / K after it
    for g in range(n):
        g1 = g + 1
        if g1 == n:
            g1 = 0
        p0 = gate_position[gb + g]
        p1 = gate_position[gb + g1]
        d = wp.length(p1 - p0)
        m0 = d * gate_tangent[gb + g]
        m1 = d * gate_tangent[gb + g1]
        row = base + g * samples
        center_inout[row] = p0
        for k in range(1, samples):
            center_inout[row + k] = _hermite(p0, m0, p1, m1, float(k) * inv_k)
    # frames and cumulative chord lengths (float64 sum)
    run = wp.float64(0.0)
    for i in range(nb):
        c = center_inout[base + i]
        ip = i + 1
        if ip == nb:
            ip = 0
        im = i - 1
        if i == 0:
            im = nb - 1
        cp = center_inout[base + ip]
        diff = cp - center_inout[base + im]
        dl = wp.length(diff)
        t = wp.vec3f(0.0, 0.0, 0.0)
        if dl > 0.0:
            t = diff / dl
        h = wp.sqrt(t[0] * t[0] + t[1] * t[1])
        nrm = wp.vec3f(0.0, 1.0, 0.0)
        if h > _VERTICAL_EPS:
            nrm = wp.vec3f(-t[1] / h, t[0] / h, 0.0)
        tangent_out[base + i] = t
        normal_out[base + i] = nrm
        arclen_out[base + i] = float(run)
        run += wp.float64(wp.length(cp - c))
    total = float(run)
    if not (wp.isfinite(total) and total > 0.0):
        nb = 0  # overflowing (or vanishing: chords that underflow to 0) geometry: no line
        total = 0.0
    nan3 = wp.vec3f(_NAN, _NAN, _NAN)
    for i in range(nb, cap):
        center_inout[base + i] = nan3
        tangent_out[base + i] = nan3
        normal_out[base + i] = nan3
        arclen_out[base + i] = _NAN
    length_out[e] = total
    count_out[e] = nb


# ---------------------------------------------------------------------------------- builder
class CourseLineBuilder:
    """Samples the closed Hermite line through the gates of a :class:`~track_gen.GateSequence`
    (see the module docstring for the formula) into a :class:`CourseLine`.

    Args:
        gates: the gate generator's result (read live by pointer: call :meth:`build` after
            every regeneration, with the same mask).
        samples_per_gate: beads K per span (``SAMPLES_PER_GATE``: an int in ``[2, 256]``).

    Per env: ``count = gates * K`` beads (``gates`` the gate count clamped to
    ``[0, max_gates]``); an env with ``valid == 0``, fewer than 3 gates, a gate position or
    tangent that is non-finite or beyond ``COORD_LIMIT`` (1e18 track units,
    :mod:`~track_gen.core.extents`), or geometry whose length overflows float32 or vanishes
    (gates so close that every chord rounds to 0) gets ``count = 0``, ``length = 0`` and NaN
    rows.

    Attributes:
        line: the :class:`CourseLine` (allocated once, ``L = max_gates * K`` rows per env;
            ``line.valid`` aliases ``gates.valid``).
        samples_per_gate: K.

    Construction checks its arguments, allocates (outside any capture) and builds every env;
    :meth:`build` is one launch (one thread per env), allocation-free and capturable.
    """

    def __init__(self, gates: GateSequence, samples_per_gate: int = 8):
        if not isinstance(gates, GateSequence):
            raise TypeError(
                "CourseLineBuilder(gates): expected a GateSequence (a GateGenerator's result), "
                f"got {type(gates).__name__}; a Track has its own centerline"
            )
        K = SAMPLES_PER_GATE.check(samples_per_gate, "CourseLineBuilder samples_per_gate")
        for name in ("position", "tangent", "count", "valid"):
            if not isinstance(getattr(gates, name), wp.array):
                raise TypeError(f"gates.{name} must be a wp.array")
        E = gates.count.shape[0] if gates.count.ndim == 1 else 0
        device = gates.position.device
        rows = gates.position.shape[0]
        if E < 1 or rows == 0 or rows % E != 0:
            raise ValueError(
                f"gates.position has {rows} rows for {E} envs: expected a positive multiple of "
                "E (a GateSequence)"
            )
        check_array("gates.count", gates.count, wp.int32, E, device)
        check_array("gates.valid", gates.valid, wp.int32, E, device)
        check_array("gates.position", gates.position, wp.vec3f, rows, device)
        check_array("gates.tangent", gates.tangent, wp.vec3f, rows, device)
        require_not_capturing(device, "CourseLineBuilder construction")
        max_gates = rows // E
        hint = f"lower max_gates ({max_gates}) or samples_per_gate ({K})"
        rows_line = E * max_gates * K
        what = f"the course line ({E} envs x {max_gates} gates x {K} beads per gate)"
        precheck = AllocationBudget(device, hint)  # the whole footprint, before allocating
        for dtype in (wp.vec3f, wp.vec3f, wp.vec3f, wp.float32):
            precheck.take(rows_line, dtype, what)
        budget = AllocationBudget(device, hint)
        self.gates = gates
        self.samples_per_gate = K
        self.device = device
        self._max_gates = max_gates
        self.line = CourseLine.allocate(E, max_gates * K, device, budget, valid=gates.valid)
        self._no_mask = budget.zeros(1, wp.int32, "empty mask")
        self.build()

    @staticmethod
    def buffers(num_envs: int, max_gates: int, samples_per_gate: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a builder allocates (its :class:`CourseLine`,
        whose ``valid`` aliases the gates', and an empty mask)."""
        line = CourseLine.buffers(num_envs, max_gates * samples_per_gate, own_valid=False)
        return line + [(1, wp.int32)]

    @property
    def num_envs(self) -> int:
        return self.line.num_envs

    def build(self, mask: wp.array | None = None) -> CourseLine:
        """Sample the line of the envs with ``mask[e] != 0`` (None: every env) and return
        :attr:`line` (the same instance every call).

        ``mask`` is a contiguous ``[E]`` int32 array on the gates' device; unmasked envs stay
        bitwise unchanged. One launch, no allocation, no host sync.
        """
        check_mask(mask, self.num_envs, self.device)
        g, ln = self.gates, self.line
        wp.launch(
            _build_kernel,
            self.num_envs,
            inputs=[
                g.position,
                g.tangent,
                g.count,
                g.valid,
                self._no_mask if mask is None else mask,
                0 if mask is None else 1,
                self._max_gates,
                self.samples_per_gate,
            ],
            outputs=[ln.center, ln.tangent, ln.normal, ln.arclen, ln.length, ln.count],
            device=self.device,
        )
        return ln


class CenterlineFromGates(Component):
    """Course component ``"centerline"`` of a gate course: the closed Hermite line through the
    gates (:class:`CourseLineBuilder`), rebuilt for the regenerated envs (``on_generate``).

    Args:
        samples_per_gate: beads K per span (``SAMPLES_PER_GATE``).

    ``result`` is the :class:`CourseLine`, ``utility`` the :class:`CourseLineBuilder`
    (``course.course_line``). A :class:`~track_gen.tools.localizer.Localizer` reads it with
    ``source="centerline"``.
    """

    name = "centerline"
    families = ("gates",)

    def __init__(self, samples_per_gate: int = 8, *, name: str | None = None):
        super().__init__(name=name)
        self.samples_per_gate = SAMPLES_PER_GATE.check(
            samples_per_gate, "CenterlineFromGates samples_per_gate"
        )

    def attach(self, ctx) -> None:
        result = ctx.generator.result
        if not isinstance(result, GateSequence):
            raise TypeError(
                "CenterlineFromGates needs a gate generator; a track has its own centerline: "
                f"Localizer() reads it (got a {type(result).__name__})"
            )
        self.utility = CourseLineBuilder(result, self.samples_per_gate)
        self.result = self.utility.line

    def planned_line_rows(self, layout) -> int:
        """Rows per env of the line (``max_gates * samples_per_gate``)."""
        return layout.N_max * self.samples_per_gate

    def planned_bytes(self, layout, config) -> int:
        """The :class:`CourseLineBuilder`'s buffers (:meth:`CourseLineBuilder.buffers`)."""
        E, K = layout.num_envs, self.samples_per_gate
        return buffer_bytes(CourseLineBuilder.buffers(E, layout.N_max, K))

    def on_generate(self, ctx, mask) -> None:
        self.utility.build(mask)
