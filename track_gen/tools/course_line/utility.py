"""The course line builder utility."""

from __future__ import annotations

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_mask
from ...core.exec import require_not_capturing
from ...core.settings import SettingsUtility, resolve_settings
from ...results import GateSequence
from ..shared import check_rows, optional_input
from .fields import CourseLineSettings
from .kernels import _build_kernel
from .result import CourseLineResult


# ---------------------------------------------------------------------------------- builder
class CourseLineUtility(SettingsUtility):
    """Samples the closed Hermite line through the gates of a :class:`~track_gen.GateSequence`
    (see the module docstring for the formula) into a :class:`CourseLineResult`.

    Args:
        gates: the gate generator's result (read live by pointer: call :meth:`build` after
            every regeneration, with the same mask).
        settings: a :class:`CourseLineSettings` (positionally or as ``settings=``), or
            ``samples_per_gate`` (beads K per span, ``SAMPLES_PER_GATE``: an int in
            ``[2, 256]``) by position or keyword.

    Per env: ``count = gates * K`` beads (``gates`` the gate count clamped to
    ``[0, max_gates]``); an env with ``valid == 0``, fewer than 3 gates, a gate position or
    tangent that is non-finite or beyond ``COORD_LIMIT`` (1e18 track units,
    :mod:`~track_gen.core.extents`), or geometry whose length overflows float32 or vanishes
    (gates so close that every chord rounds to 0) gets ``count = 0``, ``length = 0`` and NaN
    rows.

    Attributes:
        line: the :class:`CourseLineResult` (allocated once, ``L = max_gates * K`` rows per env;
            ``line.valid`` aliases ``gates.valid``).
        samples_per_gate: K.

    Construction checks its arguments, allocates (outside any capture) and builds every env;
    :meth:`build` is one launch (one thread per env), allocation-free and capturable.
    """

    SETTINGS = CourseLineSettings

    def __init__(self, gates: GateSequence, *settings: CourseLineSettings | int, **fields):
        if not isinstance(gates, GateSequence):
            raise TypeError(
                "CourseLineUtility(gates): expected a GateSequence (a GateGenerator's result), "
                f"got {type(gates).__name__}; a Track has its own centerline"
            )
        self.settings = resolve_settings(CourseLineSettings, "CourseLineUtility", settings, fields)
        K = self.samples_per_gate
        rows_of = {"position": wp.vec3f, "tangent": wp.vec3f}
        envs_of = {"count": wp.int32, "valid": wp.int32}
        E, rows = check_rows("gates", gates, rows_of, envs_of, "GateSequence")
        device = gates.position.device
        require_not_capturing(device, "CourseLineUtility construction")
        max_gates = rows // E
        hint = f"lower max_gates ({max_gates}) or samples_per_gate ({K})"
        what = f"the course line ({E} envs x {max_gates} gates x {K} beads per gate)"
        precheck = AllocationBudget(device, hint)  # the whole footprint, before allocating
        for count, dtype in self.buffers(self.settings, E, max_gates):
            precheck.take(count, dtype, what)
        budget = AllocationBudget(device, hint)
        self.gates = gates
        self.device = device
        self._max_gates = max_gates
        self._allocate(self, budget, device, self.settings, E, max_gates, gates.valid)
        self.build()

    @staticmethod
    def _allocate(out, budget, device, s: CourseLineSettings, E: int, max_gates: int, valid):
        """Every array of a builder of ``E`` envs of ``max_gates`` gates, set on ``out`` (the
        builder, or a stand-in when :meth:`buffers` records a plan): its :class:`CourseLineResult`,
        whose ``valid`` aliases the gates' ``valid``, and an empty mask."""
        rows = max_gates * s.samples_per_gate
        out.line = CourseLineResult.allocate(E, rows, device, budget, valid=valid)
        out._no_mask = budget.zeros(1, wp.int32, "empty mask")

    @classmethod
    def buffers(
        cls, settings: CourseLineSettings, num_envs: int, max_gates: int
    ) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a builder with ``settings`` allocates for
        ``num_envs`` envs of ``max_gates`` gates (its allocation run through a plan, nothing
        allocated; the line's ``valid`` is the gates')."""
        return super().buffers(settings, num_envs, max_gates, object())

    @property
    def num_envs(self) -> int:
        return self.line.num_envs

    def build(self, mask: wp.array | None = None) -> CourseLineResult:
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
