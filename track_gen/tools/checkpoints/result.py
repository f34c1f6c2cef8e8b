"""The result class of the checkpoint placer."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_int
from ...core.exec import as_device
from ...core.rows import RowBatch
from ...results import GateSequence
from .fields import MAX_CHECKPOINTS


@dataclass
class CheckpointsResult(RowBatch):
    """A batch of checkpoint openings, flat and NaN-padded (env ``e`` owns rows
    ``e*M .. e*M + M - 1``; rows past ``count[e]`` are NaN). Units are track units.

    Attributes:
        position: vec3f ``[E*M]``: checkpoint centre (centerline point, or gate centre).
        left: vec3f ``[E*M]``: one end of the opening (the inner border point for tracks,
            the gate's left bar end for gates).
        right: vec3f ``[E*M]``: the other end (outer border point, or right bar end).
        tangent: vec3f ``[E*M]``: unit normal of the checkpoint plane, pointing in the
            direction of travel (a checkpoint is passed going from its negative to its
            positive side).
        up_half: float32 ``[E*M]``: vertical half-opening, measured along
            ``normalize((right - left) x tangent)`` from the midpoint of ``left``/``right``
            (``1e30`` for track cross-sections, the gate's ``half_size`` for gates).
        count: int32 ``[E]``: real checkpoints (0: the env has none).
        truncated: int32 ``[E]``: 1 when the env needed more checkpoints than the capacity at
            its last placement (they are then farther apart than the spacing); always 0 for
            gates. (The placer's ``clipped`` array.)
    """

    position: wp.array
    left: wp.array
    right: wp.array
    tangent: wp.array
    up_half: wp.array
    count: wp.array
    truncated: wp.array | None = None

    _row_arrays = ("position", "left", "right", "tangent", "up_half")
    _env_arrays = ("count", "truncated")

    @classmethod
    def allocate(
        cls,
        num_envs: int,
        max_checkpoints: int,
        device: wp.context.Device | str,
        budget: AllocationBudget | None = None,
    ) -> CheckpointsResult:
        """NaN rows and ``count = 0`` (each array checked against ``budget`` first).

        Args:
            num_envs: envs E, an int >= 1.
            max_checkpoints: per-env capacity M (``MAX_CHECKPOINTS``: an int in
                ``[3, 65536]``).
            device: a ``wp.Device`` or a device name this machine has (``"cpu"``,
                ``"cuda:0"``).
            budget: an :class:`~track_gen.engine.stage.AllocationBudget` to allocate
                through, or None for a fresh one on ``device``.

        The arguments are checked before anything is allocated (TypeError for the wrong
        kind, ValueError for a value out of range or a device this machine lacks)."""
        num_envs = check_int("CheckpointsResult.allocate num_envs", num_envs, lo=1)
        max_checkpoints = MAX_CHECKPOINTS.check(
            max_checkpoints, "CheckpointsResult.allocate max_checkpoints"
        )
        if max_checkpoints is None:
            raise TypeError(
                "CheckpointsResult.allocate max_checkpoints must be an int, got None: pass the "
                f"per-env capacity ({MAX_CHECKPOINTS.range_text().removesuffix(', or None')})"
            )
        device = as_device(device, "CheckpointsResult.allocate device")
        budget = budget or AllocationBudget(device, "lower max_checkpoints")
        nan = float("nan")
        rows = num_envs * max_checkpoints

        def v3():
            return budget.full(rows, wp.vec3f(nan, nan, nan), wp.vec3f, "checkpoints")

        return cls(
            position=v3(),
            left=v3(),
            right=v3(),
            tangent=v3(),
            up_half=budget.full(rows, nan, wp.float32, "checkpoints"),
            count=budget.zeros(num_envs, wp.int32, "checkpoint counts"),
            truncated=budget.zeros(num_envs, wp.int32, "checkpoint truncation flags"),
        )

    @classmethod
    def from_gates(cls, seq: GateSequence) -> CheckpointsResult:
        """The gates of ``seq`` as checkpoints, aliasing its arrays (no copy: every
        regeneration of the gate generator is seen at once).

        ``position``, ``left``, ``right`` and ``count`` are the gate arrays, ``tangent`` is
        ``seq.forward`` and ``up_half`` is ``seq.half_size`` (square openings). A gate of width
        0 can never be passed.
        """
        for name in ("position", "left", "right", "forward", "half_size", "count"):
            if not isinstance(getattr(seq, name, None), wp.array):
                raise TypeError(
                    f"from_gates(seq): seq must be a GateSequence (a GateGenerator's result), "
                    f"got {type(seq).__name__} without a wp.array {name!r}"
                )
        return cls(
            position=seq.position,
            left=seq.left,
            right=seq.right,
            tangent=seq.forward,
            up_half=seq.half_size,
            count=seq.count,
            truncated=AllocationBudget(seq.count.device, "lower num_envs").zeros(
                seq.count.shape[0], wp.int32, "checkpoint truncation flags"
            ),
        )

    @property
    def max_checkpoints(self) -> int:
        """Per-env capacity M (the row stride, :attr:`rows_per_env`)."""
        return self.rows_per_env
