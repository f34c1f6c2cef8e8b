"""The next-gates sensor utility."""

from __future__ import annotations

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array
from ...core.exec import require_not_capturing
from ...core.settings import SettingsUtility, resolve_settings
from ...results import GateSequence
from ..shared import mask_or
from .fields import NextGatesSettings
from .kernels import _clear_kernel, _nominal_kernel, _sense_kernel
from .result import NextGatesResult

_GATE_ARRAYS = ("position", "orientation", "half_size", "count", "valid", "generation")


class NextGatesUtility(SettingsUtility):
    """The poses of each env's next ``num_gates`` gates in the agent's body frame.

    Args:
        gates: the course's :class:`~track_gen.GateSequence` (a GateGenerator's ``result``),
            read live by pointer.
        next_index: int32 ``[E]``: each env's target gate (a
            :class:`~track_gen.tools.ProgressUtility`'s ``events.next_index``), read live.
        settings: a :class:`NextGatesSettings` (positionally or as ``settings=``), or
            ``num_gates`` (slots per env ``K``) by position; ``reveal_range`` (None: every
            slot answers the true pose) and ``nominal_noise`` (needs ``reveal_range``) by
            keyword (``**fields``).
        seeds: keyword-only int32 ``[E]``: the generator's per-env seeds
            (``generator.seeds.seeds``); with ``gates.generation`` they give each env's
            effective seed, the nominal poses' stream. Required when ``reveal_range`` is
            set.

    State (allocated once):

    * ``nominal_position`` vec3f / ``nominal_orientation`` quatf ``[E*max_gates]``: each
      gate's nominal pose, drawn by :meth:`refresh` (NaN past ``count`` and for an invalid
      env). Gate ``g`` of env ``e`` draws four uniform numbers in ``[-1, 1]`` from
      ``stage_rng(effective_seed(seeds[e], generation[e]), SALT_NOMINAL + g)``: the centre
      moves by ``nominal_noise`` times the first three (then clamped to ``COORD_LIMIT``), the
      frame turns about the world +z by ``atan2(nominal_noise * u4, half_size)`` (the yaw
      error of a bar whose end is ``nominal_noise * u4`` off along the gate's normal). A pure
      function of the env's course: the same (seed, epoch) gives the same bytes, on any
      thread count.
    * ``seen`` int32 ``[E*max_gates]``: 1 once the agent came within ``reveal_range`` of the
      gate's true centre (3D distance, checked at every :meth:`sense` before it answers,
      for every gate of the env); cleared by :meth:`reset` and :meth:`refresh`.

    Without ``reveal_range`` these are not allocated (``None``) and every slot answers the
    true pose. :meth:`sense`, :meth:`reset` and :meth:`refresh` are one launch each,
    allocation-free and free of host synchronization.
    """

    SETTINGS = NextGatesSettings

    def __init__(
        self,
        gates: GateSequence,
        next_index: wp.array,
        *settings: NextGatesSettings | int,
        seeds: wp.array | None = None,
        **fields,
    ):
        self.settings = resolve_settings(NextGatesSettings, "NextGatesUtility", settings, fields)
        reveal = self.reveal_range
        for name in _GATE_ARRAYS:
            if not isinstance(getattr(gates, name, None), wp.array):
                raise TypeError(
                    f"NextGatesUtility(gates): expected a GateSequence (a GateGenerator's result), "
                    f"got {type(gates).__name__} without a wp.array {name!r}"
                )
        E = gates.count.shape[0]
        device = gates.count.device
        check_array("next_index", next_index, wp.int32, E, device, "the progress target per env")
        if reveal is not None and seeds is None:
            raise TypeError(
                "NextGatesUtility(seeds=None): reveal_range needs the generator's seeds "
                "(generator.seeds.seeds, int32 [E]) for the nominal poses"
            )
        if seeds is not None:  # checked also when unused (no reveal_range): never ignored
            check_array("seeds", seeds, wp.int32, E, device, "the generator's seeds.seeds")
        require_not_capturing(device, "NextGatesUtility construction")
        self.gates = gates
        self.next_index = next_index
        self.seeds = seeds
        self.device = device
        self.num_envs = E
        self.max_gates = gates.position.shape[0] // E
        budget = AllocationBudget(device, "lower num_envs or num_gates")
        self._allocate(self, budget, device, self.settings, E, self.max_gates)
        self.refresh()

    @staticmethod
    def _allocate(out, budget, device, s: NextGatesSettings, E: int, max_gates: int) -> None:
        """Every array of a sensor of ``E`` envs of ``max_gates`` gates, set on ``out`` (the
        sensor, or a stand-in when :meth:`buffers` records a plan)."""
        out.poses = NextGatesResult.allocate(E, s.num_gates, device, budget)
        out._all = budget.full(E, 1, wp.int32, "all-envs mask")
        out.nominal_position = out.nominal_orientation = out.seen = None
        if s.reveal_range is not None:
            rows, nan = E * max_gates, float("nan")
            out.nominal_position = budget.full(
                rows, wp.vec3f(nan, nan, nan), wp.vec3f, "nominal gate poses"
            )
            out.nominal_orientation = budget.full(
                rows, wp.quatf(nan, nan, nan, nan), wp.quatf, "nominal gate poses"
            )
            out.seen = budget.zeros(rows, wp.int32, "revealed gates")

    def refresh(self, mask: wp.array | None = None) -> None:
        """Draw the nominal poses of the envs with ``mask[e] != 0`` (None: all) from their
        current course and clear their revealed flags; nothing without ``reveal_range``.
        Unmasked envs stay bitwise unchanged. Call it after every regeneration."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        if self.reveal_range is None:
            return
        g = self.gates
        wp.launch(
            _nominal_kernel,
            self.num_envs,
            inputs=[mask, self.seeds, g.generation, g.position, g.orientation, g.half_size]
            + [g.count, g.valid, self.max_gates, self.nominal_noise],
            outputs=[self.nominal_position, self.nominal_orientation, self.seen],
            device=self.device,
        )

    def reset(self, mask: wp.array | None = None) -> None:
        """Forget which gates the masked envs (None: all) have seen: their gates answer the
        nominal poses again until the agent comes within range."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        if self.reveal_range is None:
            return
        wp.launch(
            _clear_kernel,
            self.num_envs,
            inputs=[mask, self.max_gates],
            outputs=[self.seen],
            device=self.device,
        )

    def sense(self, position: wp.array, orientation: wp.array) -> NextGatesResult:
        """Answer every env's next gates for the agent at ``position`` (vec3f ``[E]``, track
        units) with ``orientation`` (quatf ``[E]``, x y z w, world-from-body; normalized
        here) and return :attr:`poses` (the same instance every call). With
        ``reveal_range``, first marks every gate within range as seen. A finite position
        beyond ``COORD_LIMIT`` is clamped; see :class:`NextGatesResult` for "no answer"."""
        E = self.num_envs
        check_array("position", position, wp.vec3f, E, self.device, "one agent per env")
        check_array("orientation", orientation, wp.quatf, E, self.device, "one agent per env")
        g, r = self.gates, self.poses
        reveal = self.reveal_range is not None
        nominal = (
            [self.nominal_position, self.nominal_orientation]
            if reveal
            else [
                g.position,
                g.orientation,
            ]
        )
        wp.launch(
            _sense_kernel,
            E,
            inputs=[position, orientation, self.next_index, g.position, g.orientation]
            + [g.count, g.valid, *nominal, self.max_gates, self.num_gates]
            + [int(reveal), float(self.reveal_range or 0.0)],
            outputs=[self.seen if reveal else self._all, *r.arrays()],
            device=self.device,
        )
        return r
