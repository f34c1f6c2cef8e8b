"""The conditional regeneration of a recorded step (public path of the spec):
``conditional()``, ``unconditional()`` and ``use_conditional()``, defined in
``track_gen.core.exec``."""

from .core.exec import conditional, unconditional, use_conditional

__all__ = ["conditional", "unconditional", "use_conditional"]
