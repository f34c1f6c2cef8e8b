"""The course component of the progress tracker."""

from __future__ import annotations

from ...core.component import Component, buffer_bytes
from ..shared import POSITION
from .utility import ProgressUtility


class Progress(Component):
    """Course component ``"progress"``: checkpoint passes, wrong-way crossings and laps of the
    agent at ``position`` (vec3f ``[E]``), read from the ``"checkpoints"`` component.

    ``step`` returns the :class:`ProgressEvents` (``res.events``); ``reset(mask)`` restarts the
    masked envs (no false crossing on the first step after a reset); an invalid env is frozen
    with ``dist_to_next = 0``. ``utility`` is the :class:`ProgressUtility`.
    """

    name = "progress"
    source = "checkpoints"
    INPUTS = (POSITION,)

    def attach(self, ctx) -> None:
        checkpoints = ctx.get(self.source).result
        self.utility = ProgressUtility(checkpoints, valid=ctx.generator.result.valid)
        self.result = self.utility.events

    def planned_bytes(self, layout, config) -> int:
        """The :class:`ProgressUtility`'s buffers (:meth:`ProgressUtility.buffers`)."""
        return buffer_bytes(ProgressUtility.buffers(layout.num_envs))

    def step(self, ctx):
        return self.utility.update(self.bound["position"])

    def reset(self, ctx, mask) -> None:
        self.utility.reset(mask)
