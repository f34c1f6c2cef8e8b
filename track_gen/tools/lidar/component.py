"""The course component of the lidar (its Tunables: ``fields.py``)."""

from __future__ import annotations

import warp as wp

from ...core.component import Component, buffer_bytes
from ...core.exec import is_capturing
from ...core.ranges import EnvSplit, range_view, run_ranges
from ...core.settings import HasSettings, resolve_settings
from ...results import GateSequence, Track
from ..props import PropsResult
from ..shared import POSE_INPUTS
from .fields import LidarSettings
from .utility import LidarUtility

_AUTO = "auto"


def _props_name(value) -> str | None:
    if value is None or value == _AUTO:
        return value
    if not isinstance(value, str) or not value:
        raise TypeError(
            f"Lidar props must be 'auto', None or the name of a props component, got {value!r}"
        )
    return value


# ---------------------------------------------------------------------------------- component
class Lidar(HasSettings, Component):
    """Course component ``"lidar"``: ``num_beams`` planar range beams per env and step from
    the agent's pose against the road borders (and props) of a track course or the gates
    (posts or frames) of a gate course. ``res["lidar"]`` is the :class:`LidarResult`.

    Args:
        settings: a :class:`LidarSettings` (positionally or as ``settings=``), or
            ``num_beams`` by position.
        props: keyword-only: ``"auto"`` (the component named ``"props"`` when the course
            attached one before this one, as ``Course.track(..., extra=[Props(...),
            Lidar(...)])`` does), the name of a props component (this one then runs after
            it; a course without it is refused), or None (props are not seen).
        name: component name (default ``"lidar"``).
        after: names this component runs after.
        **fields: any field of :class:`LidarSettings` by keyword (``num_beams``, ``fov``,
            ``max_range``, ``gate_model``, ...; over the settings given), checked by it.

    Inputs: ``position`` vec3f ``[E]`` (agent positions, track units) and ``orientation``
    quatf ``[E]`` (world from body; the heading is the yaw about +z). The noise key of an env
    is refreshed with its course, its step counter restarts at every reset of the env.
    ``utility`` is the :class:`LidarUtility`.
    """

    name = "lidar"
    INPUTS = POSE_INPUTS

    SETTINGS = LidarSettings

    def __init__(
        self,
        *settings: LidarSettings | int,
        props: str | None = _AUTO,
        name: str | None = None,
        after: tuple[str, ...] | None = None,
        **fields,
    ):
        self.props_name = _props_name(props)
        super().__init__(name=name, after=after)
        self.settings = resolve_settings(LidarSettings, "Lidar", settings, fields)
        if self.props_name not in (None, _AUTO) and self.props_name not in self.after:
            self.after = (*self.after, self.props_name)
        self._views: list = []

    def _prop_set(self, ctx) -> PropsResult | None:
        name = self.props_name
        if name is None or not isinstance(ctx.generator.result, Track):
            return None
        if name == _AUTO:
            comp = ctx.components.get("props")
            if comp is None:
                return None
        else:
            comp = ctx.get(name)
        result = getattr(comp, "result", None)
        if not isinstance(result, PropsResult):
            raise TypeError(
                f"Lidar props={name!r}: component {comp!r} has no PropsResult result; name a "
                "tools.Props component or pass props=None"
            )
        return result

    def attach(self, ctx) -> None:
        result = ctx.generator.result
        if not isinstance(result, (Track, GateSequence)):
            raise TypeError(
                f"Lidar needs a track or gate generator, got a {type(result).__name__} result"
            )
        seeds = getattr(getattr(ctx.generator, "seeds", None), "seeds", None)
        ok = isinstance(seeds, wp.array) and seeds.dtype == wp.int32
        self.utility = LidarUtility(
            result,
            self.settings,
            props=self._prop_set(ctx),
            seeds=seeds if ok and seeds.shape == (ctx.num_envs,) else None,
        )
        self._split = EnvSplit(self.utility, ctx.generator)
        self._ranges = self._split.ranges
        self.result = self.utility.scan_result

    def planned_bytes(self, layout, config) -> int:
        """The :class:`LidarUtility`'s buffers (:meth:`LidarUtility.buffers`)."""
        gates = getattr(layout, "family", "track") == "gates"
        return buffer_bytes(
            LidarUtility.buffers(self.settings, layout.num_envs, layout.N_max, gates=gates)
        )

    def on_bind(self, arrays) -> None:
        u = self.utility
        u.check_pose(arrays["position"], arrays["orientation"])
        E = u.num_envs
        # one scanner view per CPU env range, its inputs cut to the range
        self._views = [
            (
                range_view(u, E, lo, hi),
                arrays["position"][lo:hi],
                arrays["orientation"][lo:hi],
            )
            for lo, hi in self._ranges
        ]

    def on_generate(self, ctx, mask) -> None:
        self._split.run(LidarUtility.refresh, mask)

    def step(self, ctx):
        b = self.bound
        if self._views and not is_capturing(ctx.device):
            run_ranges([(lambda v=v: v[0]._launch(v[1], v[2])) for v in self._views])
        else:
            self.utility._launch(b["position"], b["orientation"])
        return self.result

    def reset(self, ctx, mask) -> None:
        self.utility.reset(mask)
