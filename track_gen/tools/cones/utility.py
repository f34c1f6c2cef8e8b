"""The cone detector utility."""

from __future__ import annotations

import math

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array
from ...core.exec import require_not_capturing
from ...core.settings import SettingsUtility, resolve_settings
from ...results import Track
from ..props import PropsResult
from ..shared import mask_or
from .fields import ConeDetectionsSettings
from .kernels import _detect_kernel, _refresh_kernel, _reset_kernel
from .result import ConeDetectionsResult


class ConeDetectionsUtility(SettingsUtility):
    """The cones of a :class:`~track_gen.tools.PropsResult` of cones seen from each env's agent,
    in its frame, nearest first, with their colour (``docs/sensors/cones.md``).

    A cone (a prop row below ``PropsResult.count``) is seen when its true position in the agent's
    frame lies within ``max_range`` (3D distance) and within the field of view (``|atan2(y,
    x)| <= fov / 2``, tested as ``x >= hypot(x, y) * cos(fov / 2)``) and it is not dropped
    (probability ``dropout``). A seen cone is reported at its position plus Gaussian noise
    (deviation ``noise`` on each coordinate); detections are sorted by the reported distance
    (ties: the lower prop row) and cut to ``max_cones``, so a reported position may lie up to
    the noise beyond the range or the field of view.

    Random stream: a cone's dropout draw and noise come from a Warp RNG seeded by a hash of
    (the env's effective seed and epoch at its last :meth:`refresh`, the env's step counter,
    the prop row): a pure function of the env's course and of the number of :meth:`detect`
    calls since its last :meth:`reset`, the same on replay and for any thread count, and
    independent of every other env.

    Args:
        track: the generator's :class:`~track_gen.Track` (which border is the left one).
        props: the :class:`PropsResult` of the track's cones (``PropsResult.kind == "cone"``).
        seeds: int32 ``[E]``: the generator's per-env seeds (``generator.seeds.seeds``).
        settings: a :class:`ConeDetectionsSettings` (positionally or as ``settings=``), or
            ``max_cones`` (detections per env M) by position.
        **fields: any field of :class:`ConeDetectionsSettings` by keyword (``fov`` and
            ``max_range`` required), checked by it.

    Attributes:
        detections: the :class:`ConeDetectionsResult` every :meth:`detect` overwrites.
        step: int64 ``[E]``: each env's detect calls since its last reset.

    Construction checks every argument, allocates (outside any capture) and refreshes every
    env; :meth:`refresh`, :meth:`reset` and :meth:`detect` are one launch each,
    allocation-free, free of host synchronization and recordable.
    """

    SETTINGS = ConeDetectionsSettings

    def __init__(
        self,
        track: Track,
        props: PropsResult,
        seeds: wp.array,
        *settings: ConeDetectionsSettings | int,
        **fields,
    ):
        for name in ("center", "inner", "normal", "count", "valid", "generation"):
            if not isinstance(getattr(track, name, None), wp.array):
                raise TypeError(
                    "ConeDetectionsUtility(track): track must be a Track (a TrackGenerator's "
                    "result), "
                    f"got {type(track).__name__} without a wp.array {name!r}"
                )
        if not isinstance(props, PropsResult):
            raise TypeError(
                f"ConeDetectionsUtility(props) must be a PropsResult (tools.Props' result), got "
                f"{type(props).__name__}"
            )
        if props.kind != "cone":
            raise ValueError(
                f"ConeDetectionsUtility(props): the props are {props.kind!r}s: the detector sees "
                "cones: "
                "use tools.Props(kind='cone')"
            )
        self.settings = resolve_settings(
            ConeDetectionsSettings, "ConeDetectionsUtility", settings, fields
        )
        device = track.center.device
        E = track.count.shape[0]
        n_max = track.center.shape[0] // E
        if props.num_envs != E or props.device != device:
            raise ValueError(
                f"ConeDetectionsUtility(props): {props.num_envs} envs on {props.device} for a "
                "track of "
                f"{E} envs on {device}: place the props of this track"
            )
        check_array(
            "ConeDetectionsUtility seeds", seeds, wp.int32, E, device, "the generator's seeds"
        )
        require_not_capturing(device, "ConeDetectionsUtility construction")
        self.track = track
        self.props = props
        self.seeds = seeds
        self.device = device
        self._n_max = n_max
        budget = AllocationBudget(device, "lower max_cones or num_envs")
        self._allocate(self, budget, device, self.settings, E)
        self.refresh()

    @staticmethod
    def _allocate(out, budget, device, s: ConeDetectionsSettings, E: int) -> None:
        """Every array of a detector of ``E`` envs, set on ``out`` (the detector, or a
        stand-in when :meth:`buffers` records a plan)."""
        out.detections = ConeDetectionsResult.allocate(E, s.max_cones, device, budget)
        out.step = budget.zeros(E, wp.int64, "cone detector step counters")
        out._left = budget.full(E, -1, wp.int32, "cone detector left borders")
        out._key = budget.zeros(E, wp.int32, "cone detector stream keys")
        out._all = budget.full(E, 1, wp.int32, "all-envs mask")

    @property
    def num_envs(self) -> int:
        return self.detections.num_envs

    def refresh(self, mask: wp.array | None = None) -> None:
        """Derive the masked envs' (None: all) left border and random-stream key from their
        current course (call it after every regeneration, after the props' placement); the
        other envs keep every byte."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        t = self.track
        wp.launch(
            _refresh_kernel,
            self.num_envs,
            inputs=[t.center, t.inner, t.normal, t.count, t.valid, self.seeds, t.generation]
            + [mask, self._n_max],
            outputs=[self._left, self._key],
            device=self.device,
        )

    def reset(self, mask: wp.array | None = None) -> None:
        """Set the masked envs' (None: all) step counters to 0: their streams restart."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        wp.launch(_reset_kernel, self.num_envs, [mask], [self.step], device=self.device)

    def detect(self, position: wp.array, orientation: wp.array) -> ConeDetectionsResult:
        """The cones each env's agent sees; returns :attr:`detections` (the same instance).

        Args:
            position: vec3f ``[E]``: the agent's position (world, track units; a finite one
                is clamped to ``COORD_LIMIT``).
            orientation: quatf ``[E]`` (x, y, z, w): world-from-body; the plan-view heading
                of its local x axis is the frame's x (any scale).

        Both arrays are checked first (TypeError / ValueError naming them); one launch, no
        allocation, no host sync; every env's step counter advances by one.
        """
        E = self.num_envs
        check_array("position", position, wp.vec3f, E, self.device, "one per env")
        check_array("orientation", orientation, wp.quatf, E, self.device, "one per env")
        s, ps, d = self.settings, self.props, self.detections
        wp.launch(
            _detect_kernel,
            E,
            inputs=[ps.position, ps.side, ps.count, self._left, self._key, position, orientation]
            + [ps.max_props, self.max_cones, math.cos(0.5 * s["fov"]), s["max_range"]]
            + [s["dropout"], s["noise"]],
            outputs=[d.position, d.distance, d.colour, d.prop, d.count, d.valid, self.step],
            device=self.device,
        )
        return d
