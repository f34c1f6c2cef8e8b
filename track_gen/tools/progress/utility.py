"""The progress tracker utility."""

from __future__ import annotations

from types import SimpleNamespace

import warp as wp

from ...core.budget import AllocationBudget, planned_buffers
from ...core.checks import check_array, check_mask
from ...core.exec import require_not_capturing
from ..checkpoints import CheckpointsResult
from ..shared import check_rows, optional_input
from .kernels import _reset_kernel, _update_kernel
from .result import ProgressEvents


class ProgressUtility:
    """Counts one agent's passes through its checkpoints, per env.

    Args:
        checkpoints: a :class:`~track_gen.tools.checkpoints.CheckpointsResult` (a
            :class:`~track_gen.tools.checkpoints.CheckpointsUtility`'s result, or
            ``CheckpointsResult.from_gates(seq)``), read live by pointer.
        valid: optional int32 ``[E]`` array on the same device (the generator's
            ``result.valid``), read live: an env with ``valid[e] == 0`` is frozen like an env
            without checkpoints. None: only ``count`` decides.

    :meth:`update` is one launch, allocation-free and capturable; :meth:`reset` likewise.
    After a regeneration, :meth:`reset` the regenerated envs (a stale target index is
    clamped to checkpoint 0). Construction allocates (outside any capture) and leaves every
    env reset.
    """

    def __init__(self, checkpoints: CheckpointsResult, valid: wp.array | None = None):
        if not isinstance(checkpoints, CheckpointsResult):
            raise TypeError(
                "ProgressUtility(checkpoints): expected a CheckpointsResult (CheckpointsUtility("
                "...).checkpoints or CheckpointsResult.from_gates(seq)), got "
                f"{type(checkpoints).__name__}"
            )
        cs = checkpoints
        v3 = wp.vec3f
        rows_of = {"position": v3, "left": v3, "right": v3, "tangent": v3, "up_half": wp.float32}
        E, rows = check_rows("checkpoints", cs, rows_of, {"count": wp.int32}, "CheckpointsResult")
        device = cs.position.device
        if valid is not None:
            check_array(
                "valid", valid, wp.int32, E, device, "pass the generator's result.valid or None"
            )
        require_not_capturing(device, "ProgressUtility construction")
        self.checkpoints = cs
        self.valid = valid
        self.device = device
        self._cap = rows // E
        budget = AllocationBudget(device, "lower num_envs")
        self._allocate(self, budget, device, E)
        self._update_key: tuple | None = None  # (position, valid) the launch was recorded on
        self._update_launch = None

    @staticmethod
    def _allocate(out, budget, device, E: int) -> None:
        """Every array of a tracker of ``E`` envs, set on ``out`` (the tracker, or a stand-in
        when :meth:`buffers` records a plan): its :class:`ProgressEvents`, the previous
        positions and an empty array."""
        nan = float("nan")
        out.events = ProgressEvents.allocate(E, device, budget)
        out._prev = budget.full(E, wp.vec3f(nan, nan, nan), wp.vec3f, "previous positions")
        out._no_array = budget.zeros(1, wp.int32, "empty mask")

    @classmethod
    def buffers(cls, num_envs: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a tracker of ``num_envs`` envs allocates (its
        allocation run through a plan, nothing allocated)."""
        return planned_buffers(lambda b: cls._allocate(SimpleNamespace(), b, "cpu", num_envs))

    @property
    def num_envs(self) -> int:
        return self.events.passed.shape[0]

    def _state(self) -> list[wp.array]:
        """What the update and the reset write, in their kernels' output order: the previous
        positions, then every array of :attr:`events`."""
        return [self._prev, *self.events.arrays()]

    def _check_position(self, position) -> None:
        check_array("position", position, wp.vec3f, self.num_envs, self.device, "one agent per env")

    def update(self, position: wp.array) -> ProgressEvents:
        """Advance every env by the agent's move from the previous update to ``position``
        (vec3f ``[E]``) and return :attr:`events` (the same instance every call).

        Per env: an invalid env or one without checkpoints (``count`` clamped to the
        capacity) is frozen (``passed = wrong_way = 0``, ``dist_to_next = 0``). Otherwise the
        segment from the previous position (none right after a reset: no crossing) to
        ``position`` is tested against the target's plane: forward (``d0 < 0 <= d1``) inside
        the opening passes it (``passed = 1``, target + 1, ``progress`` + 1, and ``laps`` + 1
        when the target wraps to 0); backward (``d0 > 0 >= d1``) inside the opening sets
        ``wrong_way``. At most one checkpoint per update.

        A finite position is clamped to ``COORD_LIMIT`` (1e18 track units; within it, used
        as is), so every output of a live env is finite; a non-finite position counts no
        crossing and reads ``dist_to_next = NaN`` (the next update counts none either).
        """
        key = (position, self.valid)
        if self._update_key is None or any(
            a is not b for a, b in zip(key, self._update_key, strict=True)
        ):
            # a new array: check it, then record the launch on it once (the same array is
            # read by pointer and neither checked nor packed again: ~0.04 ms per call saved)
            self._check_position(position)
            self._update_launch = self._record_update(position)
            self._update_key = key
        self._update_launch.launch()
        return self.events

    def _record_update(self, position: wp.array):
        cs = self.checkpoints
        return wp.launch(
            _update_kernel,
            self.num_envs,
            inputs=[
                position,
                *cs.arrays(exclude=("truncated",)),
                *optional_input(self.valid, self._no_array),
                self._cap,
            ],
            outputs=self._state(),
            device=self.device,
            record_cmd=True,
        )

    def reset(self, mask: wp.array | None = None) -> None:
        """Reset the envs with ``mask[e] != 0`` (None: every env): target 0, laps, progress,
        events and ``dist_to_next`` 0, and no previous position, so the first update after
        a reset or teleport never counts a crossing. Unmasked envs stay bitwise unchanged.
        """
        check_mask(mask, self.num_envs, self.device)
        wp.launch(
            _reset_kernel,
            self.num_envs,
            inputs=optional_input(mask, self._no_array),
            outputs=self._state(),
            device=self.device,
        )
