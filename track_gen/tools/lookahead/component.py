"""The course component of the lookahead sampler (its Tunables: ``fields.py``)."""

from __future__ import annotations

import warnings

from ...core.component import Component, buffer_bytes
from ...core.settings import HasSettings, resolve_settings
from ...results import Track
from ..shared import POSE_INPUTS, generator_result
from .fields import LookaheadSettings
from .utility import LookaheadUtility

#: The localizer whose arc position the points start from.
LOCALIZER = "localizer"


class Lookahead(HasSettings, Component):
    """Course component ``"lookahead"``: the ``num_points`` points ahead of the agent's arc
    position on the centre line (or the racing line), in the agent's frame, with the left and
    right widths and the curvature at each point (:class:`LookaheadUtility`; the racing line
    adds its target speeds).

    The arc position is the course's localizer's (component ``"localizer"``,
    ``TrackFrame.s``): the component runs after it and requires it (add
    ``tools.Localizer()`` to the course), so the two agree on where the agent is and the
    closest-point search runs once per step. The centre line's curvature is the localizer's
    per-bead curvature (:attr:`LocalizerUtility.curvature`).

    Args:
        settings: a :class:`LookaheadSettings` (positionally or as ``settings=``), or
            ``num_points`` (K points per env) and ``spacing`` (arc distance along the centre
            line between points, track units) by position.
        name: component name (default ``"lookahead"``).
        after: more names to run after (the localizer and the racing line always are).
        **fields: any field of :class:`LookaheadSettings` by keyword: ``num_points``,
            ``spacing`` (both required), ``along``: ``"center"`` (the centre line) or
            ``"racing_line"`` (the racing line of the component ``"racing_line"``,
            :class:`~track_gen.tools.RacingLine`, which the course then orders before this
            one). ``source=`` is the deprecated name of ``along=``.

    Inputs: ``position`` vec3f ``[E]`` and ``orientation`` quatf ``[E]`` (world from body,
    the yaw about +z is used). ``step`` returns the :class:`LookaheadResult`
    (``res["lookahead"]``). Track courses only.
    """

    name = "lookahead"
    families = ("track",)
    requires = (LOCALIZER,)
    INPUTS = POSE_INPUTS

    SETTINGS = LookaheadSettings

    def __init__(
        self,
        *settings: LookaheadSettings | int | float,
        name: str | None = None,
        after: tuple[str, ...] | None = None,
        **fields,
    ):
        if "source" in fields:
            warnings.warn(
                "Lookahead(source=...) is deprecated: pass along=... (source names a component "
                "everywhere else)",
                DeprecationWarning,
                stacklevel=2,
            )
            fields["along"] = fields.pop("source")
        super().__init__(name=name, after=after)
        self.settings = resolve_settings(
            LookaheadSettings, "Lookahead", settings, fields, positional=2
        )
        reads = (LOCALIZER,) + (("racing_line",) if self.along == "racing_line" else ())
        self.after = tuple(self.after) + tuple(r for r in reads if r not in self.after)
        if self.along == "racing_line":
            self.requires = (LOCALIZER, "racing_line")

    def attach(self, ctx) -> None:
        track = generator_result(ctx, Track, "Lookahead", "the points follow a road's centre line")
        localizer = ctx.get(LOCALIZER)
        if getattr(localizer.utility, "line", None) is not track:
            raise TypeError(
                "Lookahead reads the arc position of the course's 'localizer' on the track's "
                f"own centre line; {localizer!r} locates on another line: use "
                "tools.Localizer() (source=None)"
            )
        line = None
        curvature = localizer.utility.curvature
        if self.along == "racing_line":
            line = ctx.get("racing_line").result
            curvature = line.curvature
        self._frame = localizer.utility.frame
        self.utility = LookaheadUtility(track, curvature, self.settings, line=line)
        self.result = self.utility.points

    def planned_bytes(self, layout, config) -> int:
        """The :class:`LookaheadUtility`'s buffers (:meth:`LookaheadUtility.buffers`)."""
        return buffer_bytes(LookaheadUtility.buffers(self.settings, layout.num_envs))

    def step(self, ctx):
        b = self.bound
        return self.utility.sample(self._frame.s, b["position"], b["orientation"])
