"""The component lists of the course presets, with every check made before building."""

from __future__ import annotations

from collections.abc import Sequence

from .component import Component, order_components

__all__ = ["track_components"]


def _check_sequence(name: str, value) -> list:
    if (
        isinstance(value, Component)
        or isinstance(value, (str, bytes))
        or not isinstance(value, Sequence)
    ):
        raise TypeError(
            f"{name} must be a sequence of components (a list or tuple), got {type(value).__name__}"
        )
    return list(value)


def track_components(*, checkpoint_spacing, collision=None, max_checkpoints=None, extra=()):
    """``checkpoints``, ``progress``, ``collision`` (when given), then ``extra``, ordered.

    Raises before anything is built: ``checkpoint_spacing`` must be a number in the range of
    ``tools.checkpoints.SPACING``;
    ``collision`` None, ``"segments"``, ``"sdf"`` or a component named ``"collision"`` (a
    bool or another string is refused; a collision under another name goes in ``extra``);
    ``max_checkpoints`` None / ``"auto"`` or an int >= 3; ``extra`` a sequence; duplicate
    names, unknown reads, cycles and attached components.
    """
    from ..tools.band_collision import METHOD
    from ..tools.checkpoints import MAX_CHECKPOINTS, SPACING, Checkpoints
    from ..tools.progress import Progress

    SPACING.check(checkpoint_spacing, "checkpoint_spacing")
    if isinstance(max_checkpoints, str) and max_checkpoints == "auto":
        max_checkpoints = None
    MAX_CHECKPOINTS.check(max_checkpoints, "max_checkpoints")
    extra = _check_sequence("extra", extra)
    comps = [
        Checkpoints(float(checkpoint_spacing), max_checkpoints=max_checkpoints or "auto"),
        Progress(),
    ]
    if collision is None:
        pass
    elif isinstance(collision, bool):
        raise TypeError(
            f"collision = {collision!r}: pass None, 'segments', 'sdf' or a "
            "component named 'collision'"
        )
    elif isinstance(collision, str):
        if collision not in METHOD.choices:
            raise ValueError(
                f"collision = {collision!r} must be one of {METHOD.choices}, None or a component"
            )
        from ..tools.band_collision import BandCollision

        comps.append(BandCollision(collision))
    elif isinstance(collision, Component) or hasattr(collision, "step"):
        if getattr(collision, "name", None) != "collision":
            raise ValueError(
                f"the collision slot takes a component named 'collision', got "
                f"{getattr(collision, 'name', None)!r}: put a collision under "
                "another name in extra="
            )
        comps.append(collision)
    else:
        raise TypeError(
            f"collision = {collision!r}: pass None, 'segments', 'sdf' or a "
            "component named 'collision'"
        )
    return order_components(comps + extra)
