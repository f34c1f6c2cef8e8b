"""The lookahead sampler utility."""

from __future__ import annotations

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array
from ...core.exec import require_not_capturing
from ...core.settings import SettingsUtility, resolve_settings
from ...results import Track
from ..racing_line import RacingLineResult
from .fields import LookaheadSettings
from .kernels import _lookahead_kernel
from .result import LookaheadResult


class LookaheadUtility(SettingsUtility):
    """The ``num_points`` points ahead of each env's agent on the centre line or the racing
    line, in the agent's frame, with the road's left and right widths, the line's curvature
    (and the racing line's target speed) at each point (``docs/sensors/lookahead.md``).

    Point ``k`` (``k = 1 .. K``) lies at centre-line arc ``s + k * spacing`` (float64, modulo
    the loop's length ``length``), where ``s`` is the agent's arc position (a
    :class:`~track_gen.tools.LocalizerUtility`'s ``TrackFrame.s``); between the two beads
    around that arc (``Track.arclen``; the closing segment runs from bead ``count - 1`` to
    bead 0) every quantity is linear in the arc: the centre line's point, or the racing
    line's point (``RacingLineResult.position``) at the same fraction of the segment, so the
    racing line's points are spaced by the centre line's arc.

    Args:
        track: the generator's :class:`~track_gen.Track` (read live by pointer).
        curvature: float32 ``[E*N_max]`` per-bead signed curvature of the line (the
            localizer's ``LocalizerUtility.curvature`` for the centre line; for the racing
            line pass its ``RacingLineResult.curvature``), read live.
        settings: a :class:`LookaheadSettings` (positionally or as ``settings=``), or
            ``num_points`` (K) and ``spacing`` (arc distance between points, track units) by
            position; further fields by keyword. Its ``along`` follows ``line``.
        line: keyword-only: the :class:`RacingLineResult` of the track (the points then lie
            ``along="racing_line"``), or None for the centre line.

    Attributes:
        points: the :class:`LookaheadResult` every :meth:`sample` overwrites.

    Construction checks every argument, then allocates (outside any capture); :meth:`sample`
    is one launch, allocation-free, free of host synchronization and recordable.
    """

    SETTINGS = LookaheadSettings

    def __init__(
        self,
        track: Track,
        curvature: wp.array,
        *settings: LookaheadSettings | int | float,
        line: RacingLineResult | None = None,
        **fields,
    ):
        for name in ("center", "inner", "outer", "normal", "arclen", "length", "count", "valid"):
            if not isinstance(getattr(track, name, None), wp.array):
                raise TypeError(
                    f"LookaheadUtility(track): track must be a Track (a TrackGenerator's "
                    f"result), got {type(track).__name__} without a wp.array {name!r}"
                )
        fields["along"] = "center" if line is None else "racing_line"
        self.settings = resolve_settings(
            LookaheadSettings, "LookaheadUtility", settings, fields, positional=2
        )
        device = track.center.device
        E = track.count.shape[0]
        n_max = track.center.shape[0] // E
        check_array("LookaheadUtility curvature", curvature, wp.float32, E * n_max, device)
        if line is not None:
            if not isinstance(line, RacingLineResult):
                raise TypeError(
                    f"LookaheadUtility line must be a RacingLineResult (tools.RacingLine's "
                    f"result) or None, got {type(line).__name__}"
                )
            if line.num_envs != E or line.N_max != n_max or line.device != device:
                raise ValueError(
                    f"LookaheadUtility line: a RacingLineResult of {line.num_envs} envs x "
                    f"{line.N_max} rows on {line.device} for a track of {E} x {n_max} on "
                    f"{device}: plan the racing line of this track"
                )
        require_not_capturing(device, "LookaheadUtility construction")
        self.track = track
        self.curvature = curvature
        self.line = line
        self.device = device
        self._n_max = n_max
        budget = AllocationBudget(device, "lower num_points or num_envs")
        self._allocate(self, budget, device, self.settings, E)

    @staticmethod
    def _allocate(out, budget, device, s: LookaheadSettings, E: int) -> None:
        """Every array of a sampler of ``E`` envs, set on ``out`` (the sampler, or a stand-in
        when :meth:`buffers` records a plan): its :class:`LookaheadResult` and, for the
        centre line, a one-row stand-in for the racing line's arrays (never read)."""
        racing = s.along == "racing_line"
        out.points = LookaheadResult.allocate(E, s.num_points, racing, device, budget)
        out._spare = None if racing else budget.zeros(1, wp.float32, "spare row")

    @property
    def num_envs(self) -> int:
        return self.points.num_envs

    def sample(self, s: wp.array, position: wp.array, orientation: wp.array) -> LookaheadResult:
        """The points ahead of each env's agent; returns :attr:`points` (the same instance).

        Args:
            s: float32 ``[E]``: the agent's arc position on the centre line, track units
                (``TrackFrame.s``; NaN: no answer for the env).
            position: vec3f ``[E]``: the agent's position (world, track units; a finite one
                is clamped to ``COORD_LIMIT``).
            orientation: quatf ``[E]`` (x, y, z, w): world-from-body; the plan-view heading
                of its local x axis is the frame's x (any scale).

        Every array is checked first (TypeError / ValueError naming it); one launch, no
        allocation, no host sync.
        """
        E = self.num_envs
        check_array("LookaheadUtility.sample s", s, wp.float32, E, self.device)
        check_array("position", position, wp.vec3f, E, self.device, "one per env")
        check_array("orientation", orientation, wp.quatf, E, self.device, "one per env")
        t, ln, pts = self.track, self.line, self.points
        if ln is None:
            line = [t.center, self._spare, self._spare, t.length]
            speed = self._spare
        else:
            line = [ln.position, ln.offset, ln.speed, ln.length]
            speed = pts.speed
        wp.launch(
            _lookahead_kernel,
            E,
            inputs=[t.center, t.inner, t.outer, t.normal, t.arclen, t.length, t.count, t.valid]
            + line
            + [self.curvature, s, position, orientation]
            + [self._n_max, self.num_points, wp.float64(self.spacing), int(ln is not None)],
            outputs=[
                pts.position,
                pts.width_left,
                pts.width_right,
                pts.curvature,
                speed,
                pts.arc,
                pts.valid,
            ],
            device=self.device,
        )
        return pts
