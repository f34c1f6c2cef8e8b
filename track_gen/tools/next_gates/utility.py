"""The next-gates sensor utility."""

from __future__ import annotations

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array
from ...core.exec import require_not_capturing
from ...results import GateSequence
from ..shared import mask_or
from .fields import NOMINAL_NOISE, NUM_GATES, REVEAL_RANGE
from .kernels import _clear_kernel, _nominal_kernel, _sense_kernel
from .result import NextGatePoses

_GATE_ARRAYS = ("position", "orientation", "half_size", "count", "valid", "generation")


def check_settings(
    owner: str, num_gates, reveal_range, nominal_noise
) -> tuple[int, float | None, float]:
    """The three settings checked by their declarations (``owner`` names them in errors),
    and ``nominal_noise > 0`` refused without a ``reveal_range`` (it would never be seen)."""
    if num_gates is None:
        raise TypeError(
            f"{owner}.num_gates is required: pass the number of upcoming gates to answer "
            f"({NUM_GATES.range_text()})"
        )
    k = NUM_GATES.check(num_gates, f"{owner}.num_gates")
    reveal = REVEAL_RANGE.check(reveal_range, f"{owner}.reveal_range")
    noise = NOMINAL_NOISE.check(nominal_noise, f"{owner}.nominal_noise")
    if noise > 0.0 and reveal is None:
        raise ValueError(
            f"{owner}.nominal_noise = {nominal_noise!r} needs reveal_range: without it every "
            "gate answers its true pose, so the nominal poses would never be seen; pass "
            "reveal_range=<a distance, track units> or nominal_noise=0"
        )
    return k, reveal, noise


class NextGateSensor:
    """The poses of each env's next ``num_gates`` gates in the agent's body frame.

    Args:
        gates: the course's :class:`~track_gen.GateSequence` (a GateGenerator's ``result``),
            read live by pointer.
        next_index: int32 ``[E]``: each env's target gate (a
            :class:`~track_gen.tools.ProgressTracker`'s ``events.next_index``), read live.
        num_gates: slots per env ``K`` (``NUM_GATES``).
        seeds: int32 ``[E]``: the generator's per-env seeds (``generator.seeds.seeds``); with
            ``gates.generation`` they give each env's effective seed, the nominal poses'
            stream. Required when ``reveal_range`` is set.
        reveal_range: ``REVEAL_RANGE`` (None: every slot answers the true pose).
        nominal_noise: ``NOMINAL_NOISE`` (needs ``reveal_range``).

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

    def __init__(
        self,
        gates: GateSequence,
        next_index: wp.array,
        num_gates: int,
        *,
        seeds: wp.array | None = None,
        reveal_range: float | None = None,
        nominal_noise: float = 0.0,
    ):
        k, reveal, noise = check_settings("NextGateSensor", num_gates, reveal_range, nominal_noise)
        for name in _GATE_ARRAYS:
            if not isinstance(getattr(gates, name, None), wp.array):
                raise TypeError(
                    f"NextGateSensor(gates): expected a GateSequence (a GateGenerator's result), "
                    f"got {type(gates).__name__} without a wp.array {name!r}"
                )
        E = gates.count.shape[0]
        device = gates.count.device
        check_array("next_index", next_index, wp.int32, E, device, "the progress target per env")
        if reveal is not None and seeds is None:
            raise TypeError(
                "NextGateSensor(seeds=None): reveal_range needs the generator's seeds "
                "(generator.seeds.seeds, int32 [E]) for the nominal poses"
            )
        if seeds is not None:  # checked also when unused (no reveal_range): never ignored
            check_array("seeds", seeds, wp.int32, E, device, "the generator's seeds.seeds")
        require_not_capturing(device, "NextGateSensor construction")
        self.gates = gates
        self.next_index = next_index
        self.seeds = seeds
        self.device = device
        self.num_envs = E
        self.num_gates = k
        self.reveal_range = reveal
        self.nominal_noise = noise
        self.max_gates = gates.position.shape[0] // E
        budget = AllocationBudget(device, "lower num_envs or num_gates")
        self.poses = NextGatePoses.allocate(E, k, device, budget)
        self._all = budget.full(E, 1, wp.int32, "all-envs mask")
        self.nominal_position = self.nominal_orientation = self.seen = None
        if reveal is not None:
            rows = E * self.max_gates
            nan = float("nan")
            self.nominal_position = budget.full(
                rows, wp.vec3f(nan, nan, nan), wp.vec3f, "nominal gate poses"
            )
            self.nominal_orientation = budget.full(
                rows, wp.quatf(nan, nan, nan, nan), wp.quatf, "nominal gate poses"
            )
            self.seen = budget.zeros(rows, wp.int32, "revealed gates")
        # the buffers above are NextGateSensor.buffers(E, max_gates, k, reveal is not None)
        self.refresh()

    @staticmethod
    def buffers(num_envs: int, max_gates: int, num_gates: int, reveal: bool):
        """``(count, dtype)`` of every array a sensor allocates."""
        out = NextGatePoses.buffers(num_envs, num_gates) + [(num_envs, wp.int32)]
        if reveal:
            rows = num_envs * max_gates
            out += [(rows, wp.vec3f), (rows, wp.quatf), (rows, wp.int32)]
        return out

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

    def sense(self, position: wp.array, orientation: wp.array) -> NextGatePoses:
        """Answer every env's next gates for the agent at ``position`` (vec3f ``[E]``, track
        units) with ``orientation`` (quatf ``[E]``, x y z w, world-from-body; normalized
        here) and return :attr:`poses` (the same instance every call). With
        ``reveal_range``, first marks every gate within range as seen. A finite position
        beyond ``COORD_LIMIT`` is clamped; see :class:`NextGatePoses` for "no answer"."""
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
