"""The prop placer utility."""

from __future__ import annotations

import math

import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_mask
from ...core.exec import require_not_capturing
from ...core.settings import resolve_settings
from ...results import Track
from ..shared import LoopCapacityUtility, optional_input
from .fields import _SIZE_FIELDS, MAX_PROPS, PropsSettings
from .kernels import PropKind, _place_kernel
from .result import PropsResult

_KIND_OF = {"cone": PropKind.CONE, "wall": PropKind.WALL}


_SIDES_OF = {"inner": (True, False), "outer": (False, True), "both": (True, True)}


def capacity_for(
    spacing: float,
    max_loop_length: float,
    sides: int,
    owner: str = "spacing",
    hint: str = "raise the spacing, lower max_loop_length or pass max_props",
) -> int:
    """``sides * max(1, ceil(max_loop_length / spacing))`` (a border of length ``L <= bound``
    needs ``round(L / spacing) <= ceil(bound / spacing)`` props), refused above
    ``MAX_PROPS.hi`` (``owner`` names the spacing, ``hint`` the fix a caller's user can
    apply)."""
    cap = int(sides) * max(1, math.ceil(max_loop_length / spacing))
    if cap > MAX_PROPS.hi:
        least = int(sides) * max_loop_length / MAX_PROPS.hi
        raise ValueError(
            f"{owner} = {spacing!r} gives {cap:,} props per env for borders up to "
            f"{max_loop_length:g} track units, more than {MAX_PROPS.hi}: {hint} (a spacing "
            f">= {least:.3g} fits)"
        )
    return cap


# ---------------------------------------------------------------------------------- placer
class PropsUtility(LoopCapacityUtility):
    """Props along the borders of a road-band :class:`~track_gen.Track` (the module docs
    give the placement rules and pose conventions).

    Args:
        track: the generator's :class:`~track_gen.Track` (read live by pointer: call
            :meth:`place` after every regeneration).
        settings: a :class:`PropsSettings` (positionally or as ``settings=``), or its first
            four fields by position (``kind``, ``spacing``, ``side``, ``max_props``: the
            per-env capacity M, all borders together; default: derived from
            ``max_loop_length``); every field by keyword (``**fields``).
        max_loop_length: keyword-only bound on any border's closed 3D length (track units,
            > 0; :func:`border_length_bound`): ``M = sides * max(1, ceil(max_loop_length /
            spacing))``. Ignored when ``max_props`` is given; one of the two is required.

    Attributes:
        props: the :class:`PropsResult` (allocated once, overwritten by :meth:`place`).

    Construction allocates (outside any capture) and places every env once; :meth:`place`
    is allocation-free, one launch, and capturable.
    """

    SETTINGS = PropsSettings

    def __init__(
        self,
        track: Track,
        *settings: PropsSettings | str | float | int | None,
        max_loop_length: float | None = None,
        **fields,
    ):
        for name in ("inner", "outer", "count", "valid"):
            if not isinstance(getattr(track, name, None), wp.array):
                raise TypeError(
                    f"PropsUtility(track): track must be a Track (a TrackGenerator's result), "
                    f"got {type(track).__name__} without a wp.array {name!r}"
                )
        self.settings = resolve_settings(
            PropsSettings, "PropsUtility", settings, fields, positional=4
        )
        use_inner, use_outer = _SIDES_OF[self.side]
        cap = self._capacity(self.settings, max_loop_length)
        device = track.inner.device
        require_not_capturing(device, "PropsUtility construction")
        self.track = track
        self.device = device
        E = track.count.shape[0]
        self._n_max = track.inner.shape[0] // E
        self._flags = (int(use_inner), int(use_outer), int(_KIND_OF[self.kind]))
        budget = AllocationBudget(device, "raise the spacing or lower max_props")
        self._allocate(self, budget, device, self.settings, E, cap)
        self.place()

    @property
    def sizes(self) -> tuple[float, float, float, float]:
        """``(cone_diameter, cone_height, wall_thickness, wall_height)``, track units."""
        return tuple(self.settings[t.name] for t in _SIZE_FIELDS)

    CAPACITY_FIELD = "max_props"
    CAPACITY_HINT = (
        "pass max_props (an int >= 1, the per-env prop capacity) or max_loop_length= (a bound "
        "on any border's length; capacity sides * max(1, ceil(max_loop_length / spacing)))"
    )

    @classmethod
    def _capacity_for(cls, s: PropsSettings, bound: float) -> int:
        return capacity_for(s.spacing, bound, sum(_SIDES_OF[s.side]))

    @staticmethod
    def _allocate(out, budget, device, s: PropsSettings, E: int, capacity: int) -> None:
        """Every array of a placer of ``E`` envs and ``capacity`` props per env, set on
        ``out`` (the placer, or a stand-in when :meth:`buffers` records a plan)."""
        out.props = PropsResult.allocate(E, capacity, device, budget, kind=s.kind)
        out._no_mask = budget.zeros(1, wp.int32, "empty mask")

    @property
    def num_envs(self) -> int:
        return self.props.num_envs

    @property
    def max_props(self) -> int:
        """Per-env capacity M."""
        return self.props.max_props

    def place(self, mask: wp.array | None = None) -> PropsResult:
        """Place the props of the envs with ``mask[e] != 0`` (None: every env) and return
        :attr:`props` (the same instance every call).

        ``mask`` is a contiguous ``[E]`` int32 array on the track's device; unmasked envs
        stay bitwise unchanged. One launch, no allocation, no host sync.
        """
        check_mask(mask, self.num_envs, self.device)
        t, ps = self.track, self.props
        use_inner, use_outer, kind = self._flags
        wp.launch(
            _place_kernel,
            self.num_envs,
            inputs=[
                t.inner,
                t.outer,
                t.count,
                t.valid,
                *optional_input(mask, self._no_mask),
                self._n_max,
                wp.float64(self.spacing),
                self.max_props,
                use_inner,
                use_outer,
                kind,
                wp.vec4f(*self.sizes),
            ],
            outputs=ps.arrays(),
            device=self.device,
        )
        return ps
