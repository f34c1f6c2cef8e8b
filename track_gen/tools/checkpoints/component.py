"""The course component of the checkpoint placer (its Tunables: ``fields.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import warp as wp

from ...core.component import Component, buffer_bytes
from ...core.ranges import EnvSplit
from ...core.settings import HasSettings, resolve_settings
from ...results import GateSequence
from ..shared import generator_result
from .fields import CheckpointsSettings
from .result import CheckpointsResult
from .utility import CheckpointsUtility, capacity_for


def _is_auto(value) -> bool:
    return isinstance(value, str) and value == "auto"


def construction_result(ctx):
    """The generator's result holding the construction batch, built now (eagerly, through
    the course's context) when the generator has none yet; the course's ``prepare`` then keeps
    it. For components whose capacity reads the first batch back (elevated configs declare no
    length bound)."""
    result = ctx.generator.result
    if not (result.generation.numpy() >= 0).any():
        ctx.generator.enqueue(ctx)
    return result


class Checkpoints(HasSettings, Component):
    """Course component ``"checkpoints"``: checkpoints every ``spacing`` along each env's
    centerline, refreshed for the regenerated envs (``on_generate``).

    Args:
        settings: a :class:`CheckpointsSettings` (positionally or as ``settings=``), or
            ``spacing`` and ``max_checkpoints`` by position (or by keyword):
        spacing: track units between checkpoints (``SPACING``; required).
        max_checkpoints: per-env capacity (``MAX_CHECKPOINTS``), or ``"auto"`` (None): the longest
            track the generator can produce, ``max(3, ceil(max_loop_length / spacing))`` with
            ``max_loop_length = (N_max + 1) * bead spacing`` (a longer loop is TRUNCATED and
            invalid), so no valid env is ever clipped; an elevated config (``z_profile`` not
            flat) declares no such bound, so the longest valid loop of the construction batch
            (read back; built at attach when the generator has none yet). When a capacity the
            course chose clips a valid env of the first batch, construction warns once.

    ``result`` is the :class:`CheckpointsResult` (a per-generation result: read it through
    ``course.checkpoints``); ``utility`` the :class:`CheckpointsUtility`
    (``course.checkpoint_sampler``).
    """

    name = "checkpoints"
    families = ("track",)

    SETTINGS = CheckpointsSettings

    def __init__(
        self, *settings: CheckpointsSettings | float | int | str, name: str | None = None, **fields
    ):
        # "auto": None, the capacity the course chooses
        settings = tuple(None if _is_auto(v) else v for v in settings)
        fields = {
            k: None if k == "max_checkpoints" and _is_auto(v) else v for k, v in fields.items()
        }
        super().__init__(name=name)
        self.settings = resolve_settings(
            CheckpointsSettings, "Checkpoints", settings, fields, positional=2
        )

    def attach(self, ctx) -> None:
        track = ctx.generator.result
        bound = None
        chosen = self.max_checkpoints is None
        if chosen:
            bound = self._longest_loop(ctx)
            capacity_for(self.spacing, bound, "checkpoint_spacing")
        self.utility = CheckpointsUtility(track, self.settings, max_loop_length=bound)
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.checkpoints
        if chosen:
            clipped = (self.utility.clipped.numpy() != 0) & (track.valid.numpy() != 0)
            if clipped.any():
                warnings.warn(
                    f"Checkpoints: the capacity the course chose ({self.utility.max_checkpoints} "
                    f"per env) clips {int(clipped.sum())} valid env(s) of the first batch "
                    "(their checkpoints are farther apart than the spacing; "
                    "checkpoints.truncated says which): pass a larger max_checkpoints",
                    RuntimeWarning,
                    stacklevel=2,
                )

    def planned_bytes(self, layout, config) -> int:
        """The :class:`CheckpointsUtility`'s buffers at the capacity ``attach`` chooses: the
        explicit ``max_checkpoints``, else ``capacity_for(spacing, (N_max + 1) * bead
        spacing)`` (the flat bound; an elevated config's capacity reads its first batch, so
        this plan is a lower bound there and ``attach`` checks the rest as it allocates)."""
        bound = None
        if self.max_checkpoints is None:
            bead = getattr(config, "resolved_spacing", None)
            if bead is None:
                return 0  # attach refuses this generator
            bound = (layout.N_max + 1) * float(bead)
            capacity_for(self.spacing, bound, "checkpoint_spacing")
        return buffer_bytes(
            CheckpointsUtility.buffers(self.settings, layout.num_envs, max_loop_length=bound)
        )

    def _longest_loop(self, ctx) -> float:
        """The longest loop the generator can produce: ``(N_max + 1) * bead spacing`` for a
        flat track config; an elevated config declares no bound (its 3D length exceeds the
        plan-view one), so the readback of the construction batch (built here when the
        generator has none yet)."""
        cfg = getattr(ctx.generator, "config", None)
        bead = getattr(cfg, "resolved_spacing", None)
        if bead is None:
            raise ValueError(
                "Checkpoints(max_checkpoints='auto') needs a generator with a bead spacing "
                "(a TrackGenerator); pass max_checkpoints=<int >= 3>"
            )
        if getattr(cfg, "z_profile", "flat") == "flat":
            return (ctx.layout.N_max + 1) * float(bead)
        track = construction_result(ctx)
        length = track.length.numpy()
        ok = (track.valid.numpy() != 0) & np.isfinite(length)
        longest = float(length[ok].max()) if ok.any() else 0.0
        return max(longest, 3.0 * self.spacing)

    def on_generate(self, ctx, mask) -> None:
        self._split.run(CheckpointsUtility.sample, mask)  # on the generator's env ranges


class GateCheckpoints(Component):
    """Course component ``"checkpoints"`` of a gate course: one checkpoint per gate, the gate
    itself (its plane, its square opening of half-size ``half_size`` in both axes of the
    plane, passed along ``forward``).

    ``result`` is :meth:`CheckpointsResult.from_gates` of the generator's result: it aliases the
    gate arrays (no copy), so every regeneration, masked or not, is seen at once and an
    unmasked env's checkpoints stay bitwise its gates. ``utility`` is None (nothing is
    placed). :class:`~track_gen.tools.progress.Progress` reads it as in track mode, counting
    a pass only through the opening.
    """

    name = "checkpoints"
    families = ("gates",)

    def attach(self, ctx) -> None:
        why = "a track course places its checkpoints with tools.Checkpoints(spacing)"
        result = generator_result(ctx, GateSequence, "GateCheckpoints", why)
        self.result = CheckpointsResult.from_gates(result)

    def planned_bytes(self, layout, config) -> int:
        """The ``truncated`` flags of :meth:`CheckpointsResult.from_gates` (the rest aliases the
        gates)."""
        return buffer_bytes([(layout.num_envs, wp.int32)])
