"""The course line builder utility."""

from __future__ import annotations

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_mask
from ...core.exec import require_not_capturing
from ...results import GateSequence
from ..shared import check_rows, optional_input
from .fields import SAMPLES_PER_GATE
from .kernels import _build_kernel
from .result import CourseLine


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
        rows_of = {"position": wp.vec3f, "tangent": wp.vec3f}
        envs_of = {"count": wp.int32, "valid": wp.int32}
        E, rows = check_rows("gates", gates, rows_of, envs_of, "GateSequence")
        device = gates.position.device
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
                *optional_input(mask, self._no_mask),
                self._max_gates,
                self.samples_per_gate,
            ],
            outputs=ln.arrays(exclude=("valid",)),  # valid: the gates' (aliased)
            device=self.device,
        )
        return ln
