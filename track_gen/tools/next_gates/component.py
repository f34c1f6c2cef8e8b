"""The course component of the next-gates sensor (its Tunables: ``fields.py``)."""

from __future__ import annotations

import warp as wp

from ...core.component import Component, buffer_bytes
from ...core.ranges import EnvSplit
from ...core.settings import HasSettings, resolve_settings
from ...results import GateSequence
from ..shared import POSE_INPUTS, generator_result
from .fields import NextGatesSettings
from .utility import NextGatesUtility


class NextGates(HasSettings, Component):
    """Course component ``"next_gates"`` of a gate course: the poses of each env's next
    ``num_gates`` gates relative to the agent's body frame (:class:`NextGatesResult`,
    ``res["next_gates"]``).

    Args:
        settings: a :class:`NextGatesSettings` (positionally or as ``settings=``), or
            ``num_gates`` (slots per env; slot 0 is the progress target) by position.
        source: the component whose result holds the target gate (``next_index``):
            ``"progress"``.
        **fields: any field of :class:`NextGatesSettings` by keyword: ``num_gates``,
            ``reveal_range`` (with it, a gate answers its nominal pose, drawn at generation,
            until the agent comes within this distance of the gate's true centre, then its
            true pose until the env is reset or regenerated), ``nominal_noise`` (the error of
            the nominal poses).

    Reads the bound ``position`` (vec3f ``[E]``) and ``orientation`` (quatf ``[E]``,
    world-from-body). ``on_generate(mask)`` draws the regenerated envs' nominal poses (on the
    generator's env ranges) and clears their revealed flags; ``reset(mask)`` clears the
    flags. ``utility`` is the :class:`NextGatesUtility`. Gate courses only.
    """

    name = "next_gates"
    source = "progress"
    families = ("gates",)
    INPUTS = POSE_INPUTS

    SETTINGS = NextGatesSettings

    def __init__(
        self,
        *settings: NextGatesSettings | int,
        source: str | None = None,
        name: str | None = None,
        after=None,
        **fields,
    ):
        super().__init__(name=name, after=after, source=source)
        self.settings = resolve_settings(NextGatesSettings, "NextGates", settings, fields)

    def attach(self, ctx) -> None:
        why = "a track course has no gates"
        gates = generator_result(ctx, GateSequence, "NextGates", why)
        events = ctx.get(self.source).result
        next_index = getattr(events, "next_index", None)
        if not isinstance(next_index, wp.array):
            raise TypeError(
                f"NextGates(source={self.source!r}): that component's result has no wp.array "
                "'next_index' (the target gate per env): use source='progress'"
            )
        seeds = None
        if self.reveal_range is not None:
            seeds = getattr(getattr(ctx.generator, "seeds", None), "seeds", None)
            if not isinstance(seeds, wp.array):
                raise TypeError(
                    "NextGates(reveal_range=...): the generator has no seeds.seeds array for "
                    "the nominal poses' stream: use a GateGenerator"
                )
        self.utility = NextGatesUtility(gates, next_index, self.settings, seeds=seeds)
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.poses

    def planned_bytes(self, layout, config) -> int:
        """The :class:`NextGatesUtility`'s buffers (:meth:`NextGatesUtility.buffers`)."""
        return buffer_bytes(NextGatesUtility.buffers(self.settings, layout.num_envs, layout.N_max))

    def on_generate(self, ctx, mask) -> None:
        self._split.run(NextGatesUtility.refresh, mask)  # on the generator's env ranges

    def step(self, ctx):
        return self.utility.sense(self.bound["position"], self.bound["orientation"])

    def reset(self, ctx, mask) -> None:
        self.utility.reset(mask)
