"""The rules a course checks on its source before anything is built: the checkpoint
capacity a track course would choose, the gate-width rule of a gate course. Read by the
presets, by ``CourseConfig`` and by ``RaceEnv``."""

from __future__ import annotations

from ..config import GateGenConfig
from ..engine.spec import PipelineSpec
from ..tools.checkpoints import capacity_for
from ..tools.props import capacity_for as props_capacity_for
from ..tools.props import declared_border_bound

__all__ = ["check_checkpoint_capacity", "check_gate_width", "check_props_capacity"]


def check_checkpoint_capacity(
    config,
    spacing: float,
    max_checkpoints: int | None,
    owner: str = "checkpoint_spacing",
    hint: str = "raise the spacing or pass max_checkpoints",
) -> None:
    """The capacity ``tools.Checkpoints(spacing, "auto")`` chooses for a generator of the flat
    track ``config``, checked before the generator is built: ``max(3, ceil(max_loop_length /
    spacing))`` with ``max_loop_length = (N_max + 1) * bead spacing`` (the rule of
    ``Checkpoints.attach``, the same ValueError), at most ``MAX_CHECKPOINTS.hi``. An elevated
    config has no such bound (the component reads its construction batch) and an explicit
    ``max_checkpoints`` needs none. ``owner`` names the spacing in the refusal, ``hint`` the
    fix the caller's user can apply."""
    if max_checkpoints is not None or getattr(config, "z_profile", "flat") != "flat":
        return
    bound = (config.N_max + 1) * float(config.resolved_spacing)
    capacity_for(spacing, bound, owner, hint)


def check_props_capacity(config, spacing: float, sides: int, owner: str, hint: str) -> None:
    """The capacity ``tools.Props(spacing=spacing, max_props="auto")`` chooses for a generator
    of the flat track ``config`` on ``sides`` borders, checked before anything is built
    (``tools.props.capacity_for``: at most ``MAX_PROPS.hi`` props per env for the declared
    border bound); an elevated config without a grade check declares no bound (the
    component reads its first batch)."""
    bound = declared_border_bound(config, config.N_max)
    if bound is not None:
        props_capacity_for(spacing, bound, sides, owner, hint)


def check_gate_width(source) -> None:
    """Course.gates' width rule on the construction ``gate_frames.gate_width``: > 0, or a
    randomizer's construction lo > 0 when one draws it (ValueError otherwise)."""
    if isinstance(source, GateGenConfig):
        config, stages, randomize = source, None, {}
    else:
        spec = source if isinstance(source, PipelineSpec) else getattr(source, "spec", None)
        if not isinstance(spec, PipelineSpec):
            return  # a producer of your own: no gate_frames stage to read
        config, stages, randomize = spec.config, spec.stages, dict(spec.randomize)
    options = {}
    name = "gate_frames"
    if stages is not None:
        frames = [st for st in stages if st.kind == "gate_frames"]
        if not frames:
            return  # no gate_frames stage: the widths come from elsewhere
        name, options = frames[0].name, frames[0].options
    key = f"{name}.gate_width"
    if key in randomize:
        lo, hi = randomize[key]
        if not lo > 0.0:
            raise ValueError(
                f"with_randomize({{{key!r}: ({lo!r}, {hi!r})}}): Course.gates needs the "
                "randomized gate width's construction lo > 0 (a width-0 gate can never be "
                "passed): raise lo"
            )
        return
    width = options.get("gate_width", getattr(config, "gate_width", None))
    if width is not None and not float(width) > 0.0:
        raise ValueError(
            f"gate_width = {width!r}: Course.gates refuses a construction gate width of 0 (a "
            "width-0 gate can never be passed): pass one, e.g. presets.gates(..., "
            f"gate_width=0.1), or randomize it with with_randomize({{{key!r}: (lo, hi)}}), "
            "lo > 0"
        )
