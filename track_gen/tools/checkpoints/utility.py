"""The checkpoint placer utility."""

from __future__ import annotations

import math

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_mask
from ...core.exec import require_not_capturing
from ...core.settings import resolve_settings
from ...results import Track
from ..shared import LoopCapacityUtility, optional_input
from .fields import MAX_CHECKPOINTS, CheckpointsSettings
from .kernels import _sample_kernel
from .result import CheckpointsResult


def capacity_for(
    spacing: float,
    max_loop_length: float,
    owner: str = "spacing",
    hint: str = "raise the spacing or pass max_checkpoints",
) -> int:
    """``max(3, ceil(max_loop_length / spacing))``, refused above ``MAX_CHECKPOINTS.hi``
    (``owner`` names the spacing, ``hint`` the fix a caller's user can apply)."""
    cap = max(3, math.ceil(max_loop_length / spacing))
    if cap > MAX_CHECKPOINTS.hi:
        least = max_loop_length / MAX_CHECKPOINTS.hi
        raise ValueError(
            f"{owner} = {spacing!r} gives {cap:,} checkpoints per env for loops up to "
            f"{max_loop_length:g} track units, more than {MAX_CHECKPOINTS.hi}: {hint} (a "
            f"spacing >= {least:.3g} fits)"
        )
    return cap


# ---------------------------------------------------------------------------------- sampler
class CheckpointsUtility(LoopCapacityUtility):
    """Evenly spaced cross-sections of a road-band :class:`~track_gen.Track`.

    Per env, ``n = clamp(round(length / spacing), 3, M)`` checkpoints sit at arc
    ``k * length / n`` (k = 0 .. n-1) along the closed centerline: checkpoint 0 is the
    start line at bead 0, there is no seam gap and no doubled checkpoint. Each one
    interpolates the centerline, inner and outer borders on the same segment with the same
    parameter (``left`` = inner, ``right`` = outer), its tangent is the horizontal unit chord
    of that centerline segment (the checkpoint planes are vertical through the 3D centerline
    of an elevated track) and ``up_half = 1e30`` (any height above or below the road counts).
    Invalid envs (``valid == 0``), tracks of fewer than 3 or more than ``N_max`` beads, a
    ``length`` that is not finite and positive, and beads with a centerline or border
    coordinate that is non-finite or beyond ``COORD_LIMIT`` (1e18 track units,
    :mod:`~track_gen.core.extents`) get ``count = 0`` and NaN rows: every placed checkpoint
    is finite.

    Args:
        track: the generator's :class:`~track_gen.Track` (read live by pointer: call
            :meth:`sample` after every regeneration).
        settings: a :class:`CheckpointsSettings` (positionally or as ``settings=``), or its
            fields by position or keyword: ``spacing``, the target arc distance between
            checkpoints, track units (``SPACING``); ``max_checkpoints``, the per-env capacity
            M (``MAX_CHECKPOINTS``; default: derived from ``max_loop_length``).
        max_loop_length: keyword-only bound on any track's perimeter (track units, >= 1e-6):
            ``M = max(3, ceil(max_loop_length / spacing))``. Ignored when ``max_checkpoints``
            is given; one of the two is required.

    Attributes:
        checkpoints: the :class:`CheckpointsResult` (allocated once, overwritten by
            :meth:`sample`).
        clipped: int32 ``[E]``: 1 when ``round(length / spacing)`` exceeded M at the last
            sample of the env (its checkpoints are then farther apart than ``spacing``).
        step: float32 ``[E]``: arc between consecutive checkpoints, track units (0 for an
            env without checkpoints).

    Construction allocates (outside any capture) and samples once; :meth:`sample` is
    allocation-free, one launch, and capturable.
    """

    SETTINGS = CheckpointsSettings

    def __init__(
        self,
        track: Track,
        *settings: CheckpointsSettings | float | int | None,
        max_loop_length: float | None = None,
        **fields,
    ):
        for name in ("center", "inner", "outer", "arclen", "length", "count", "valid"):
            if not isinstance(getattr(track, name, None), wp.array):
                raise TypeError(
                    f"CheckpointsUtility(track): track must be a Track (a TrackGenerator's "
                    f"result), got {type(track).__name__} without a wp.array {name!r}"
                )
        self.settings = resolve_settings(
            CheckpointsSettings, "CheckpointsUtility", settings, fields, positional=2
        )
        cap = self._capacity(self.settings, max_loop_length)
        device = track.center.device
        require_not_capturing(device, "CheckpointsUtility construction")
        self.track = track
        self.device = device
        E = track.count.shape[0]
        self._n_max = track.center.shape[0] // E
        budget = AllocationBudget(device, "raise the spacing or lower max_checkpoints")
        self._allocate(self, budget, device, self.settings, E, cap)
        self.sample()

    CAPACITY_FIELD = "max_checkpoints"
    CAPACITY_HINT = (
        "pass max_checkpoints (an int >= 3, the per-env checkpoint capacity) or "
        "max_loop_length= (a bound on any track's perimeter; capacity max(3, "
        "ceil(max_loop_length / spacing)))"
    )

    @classmethod
    def _capacity_for(cls, s: CheckpointsSettings, bound: float) -> int:
        return capacity_for(s.spacing, bound)

    @staticmethod
    def _allocate(out, budget, device, s, E: int, capacity: int) -> None:
        """Every array of a placer of ``E`` envs and ``capacity`` checkpoints per env, set on
        ``out`` (the placer, or a stand-in when :meth:`buffers` records a plan)."""
        out.checkpoints = CheckpointsResult.allocate(E, capacity, device, budget)
        out.clipped = None if out.checkpoints is None else out.checkpoints.truncated
        out.step = budget.zeros(E, wp.float32, "checkpoint steps")
        out._no_mask = budget.zeros(1, wp.int32, "empty mask")

    @property
    def num_envs(self) -> int:
        return self.checkpoints.num_envs

    @property
    def max_checkpoints(self) -> int:
        """Per-env capacity M."""
        return self.checkpoints.max_checkpoints

    def sample(self, mask: wp.array | None = None) -> CheckpointsResult:
        """Place the checkpoints of the envs with ``mask[e] != 0`` (None: every env) and
        return :attr:`checkpoints` (the same instance every call).

        ``mask`` is a contiguous ``[E]`` int32 array on the track's device; unmasked envs
        stay bitwise unchanged. One launch, no allocation, no host sync.
        """
        check_mask(mask, self.num_envs, self.device)
        t, cs = self.track, self.checkpoints
        wp.launch(
            _sample_kernel,
            self.num_envs,
            inputs=[
                t.center,
                t.inner,
                t.outer,
                t.arclen,
                t.length,
                t.count,
                t.valid,
                *optional_input(mask, self._no_mask),
                self._n_max,
                self.spacing,
                self.max_checkpoints,
            ],
            outputs=[*cs.arrays(), self.step],  # cs.truncated is self.clipped
            device=self.device,
        )
        return cs
