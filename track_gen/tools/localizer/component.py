"""The course component of the track localizer (its Tunables: ``fields.py``)."""

from __future__ import annotations

from ...core.component import Component, buffer_bytes
from ...core.settings import HasSettings, Settings, resolve_settings
from ...results import GateSequence, Track
from ..shared import POSITION
from .fields import LocalizerSettings
from .utility import _GATE_HINT, LocalizerUtility


class Localizer(HasSettings, Component):
    """Course component ``"localizer"``: the :class:`TrackFrame` of the agent at ``position``
    (vec3f ``[E]``) along the course's line.

    Args:
        settings: a :class:`LocalizerSettings` (positionally or as ``settings=``), or
            ``warm_window`` (see :class:`LocalizerUtility`; ``WARM_WINDOW``; None: full
            search) by position or keyword; a second positional value is ``source``.
        source: None reads the generator's result (a Track); else the name of the component
            whose result is the line (``"centerline"`` for a gate course), which the course
            orders before this one.

    ``on_generate(mask)`` refreshes the regenerated envs (curvature, and a full search next);
    ``step`` returns the frame (``res.frame``, ``res["localizer"]``); ``reset(mask)`` forgets
    the masked envs' warm memory. ``utility`` is the :class:`LocalizerUtility`.
    """

    name = "localizer"
    INPUTS = (POSITION,)

    SETTINGS = LocalizerSettings

    def __init__(
        self,
        *settings: LocalizerSettings | int | str | None,
        source: str | None = None,
        name: str | None = None,
        **fields,
    ):
        if len(settings) == 2 and not isinstance(settings[0], Settings):
            settings, source = settings[:1], settings[1]  # Localizer(warm_window, source)
        super().__init__(name=name, source=source)
        self.settings = resolve_settings(LocalizerSettings, "Localizer", settings, fields)

    def check_family(self, family: str) -> None:
        """Without a ``source`` the localizer reads the generator's own centerline, which a
        gate course does not have (ValueError naming the fix)."""
        if self.source is None and family == "gates":
            raise ValueError(f"Localizer(): {_GATE_HINT}")

    def attach(self, ctx) -> None:
        if self.source is None:
            line = ctx.generator.result
            if isinstance(line, GateSequence):
                raise ValueError(f"Localizer(): {_GATE_HINT}")
            if not isinstance(line, Track):
                raise TypeError(
                    f"Localizer(): the generator's result is a {type(line).__name__}, not a "
                    "Track: pass source=<the name of a component whose result is a line>"
                )
        else:
            line = ctx.get(self.source).result
        self.utility = LocalizerUtility(line, self.settings)
        self.result = self.utility.frame

    def planned_bytes(self, layout, config) -> int:
        """The :class:`LocalizerUtility`'s buffers: on the generator's centerline
        (``layout.N_max`` rows per env), or on the line of the ``source`` component (its
        ``planned_line_rows(layout)``, else ``layout.N_max``)."""
        rows = layout.N_max
        line_rows = getattr(self.planned_source, "planned_line_rows", None)
        if self.source is not None and callable(line_rows):
            rows = int(line_rows(layout))
        return buffer_bytes(LocalizerUtility.buffers(self.settings, layout.num_envs, rows))

    def on_generate(self, ctx, mask) -> None:
        self.utility.refresh(mask)

    def step(self, ctx):
        return self.utility.locate(self.bound["position"])

    def reset(self, ctx, mask) -> None:
        self.utility.reset(mask)
