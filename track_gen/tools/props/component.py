"""The course component of the prop placer (its Tunables: ``fields.py``)."""

from __future__ import annotations

import math

import numpy as np

from ...core.component import Component, buffer_bytes
from ...core.ranges import EnvSplit
from ...core.settings import HasSettings, resolve_settings
from ...results import Track
from ..checkpoints import construction_result
from ..shared import generator_result
from .fields import _SIZE_FIELDS, PropsSettings
from .utility import PropsUtility, capacity_for

#: Relative margin of :func:`border_length_bound`.
BORDER_SLACK = 1.01


def border_length_bound(centerline_bound: float, half_width: float, grade: float = 0.0) -> float:
    """A bound on the closed 3D length of either border of a valid track:
    ``BORDER_SLACK * ((1 + grade) * centerline_bound + 2 * pi * half_width)``.

    A border offset by ``half_width`` from a closed centerline of plan length ``Lc`` whose
    curvature radius stays >= ``half_width`` is ``Lc + 2*pi*half_width`` long on the outside
    (the plan integral of ``1 + half_width * curvature``) and ``Lc - 2*pi*half_width`` on the
    inside; elevation adds at most ``sum |dz| <= grade * Lc`` when every centerline step
    climbs at most ``grade`` (the generator's grade check). ``BORDER_SLACK`` (1%) covers the
    polyline offsets and the validation's thickness tolerance (a curvature radius a little
    under ``half_width``; measured excess below 0.02% of a border). ``centerline_bound``: a
    bound on ``Lc``, track units.
    """
    plan = (1.0 + float(grade)) * float(centerline_bound) + 2.0 * math.pi * float(half_width)
    return BORDER_SLACK * plan


def declared_border_bound(config, n_max: int) -> float | None:
    """The bound :func:`border_length_bound` gives every border of a track generator's valid
    courses, from its flat ``config`` (``resolved_spacing``, ``half_width``, ``z_valid_grade``)
    and ``n_max`` beads: None for an elevated config without a grade check (no declared bound:
    the capacity reads the first batch) or a config without a bead spacing and half width."""
    bead = getattr(config, "resolved_spacing", None)
    half_width = getattr(config, "half_width", None)
    if bead is None or half_width is None:
        return None
    grade = getattr(config, "z_valid_grade", None) or 0.0
    if getattr(config, "z_profile", "flat") != "flat" and not grade > 0.0:
        return None
    return border_length_bound((int(n_max) + 1) * float(bead), float(half_width), float(grade))


def _longest_border(track) -> float:
    """``BORDER_SLACK`` times the longest closed 3D border of a valid env of ``track`` (read
    back): the capacity rule of an elevated config without a grade limit."""
    E, n_max = track.num_envs, track.N_max
    count = np.clip(track.count.numpy(), 0, n_max)
    ok = (track.valid.numpy() != 0) & (count >= 3)
    longest = 0.0
    for name in ("inner", "outer"):
        pts = getattr(track, name).numpy().reshape(E, n_max, 3).astype(np.float64)
        for e in np.flatnonzero(ok):
            p = pts[e, : count[e]]
            longest = max(longest, float(np.linalg.norm(np.roll(p, -1, 0) - p, axis=1).sum()))
    return BORDER_SLACK * max(longest, 1.0e-6)


# ---------------------------------------------------------------------------------- component
class Props(HasSettings, Component):
    """Course component ``"props"``: cones or wall segments every ``spacing`` along the
    borders of each env, refreshed for the regenerated envs (``on_generate``).

    Args:
        settings: a :class:`PropsSettings` (positionally or as ``settings=``), or its first
            four fields by position (``kind``, ``spacing``, ``side``, ``max_props``); every
            field by keyword (``**fields``; :class:`PropsSettings` gives each one). Here
            ``max_props`` may be ``"auto"`` (None): ``sides * max(1, ceil(B / spacing))``
            with ``B = border_length_bound((N_max + 1) * bead spacing, half_width, grade)``:
            the centerline of a valid track is at most ``(N_max + 1)`` bead spacings long (a
            longer loop is TRUNCATED and invalid), a border at most ``2 * pi * half_width``
            longer, and elevation adds at most ``grade`` times the centerline when the
            generator checks grades (``z_valid_grade > 0``; otherwise a steep border may be
            truncated, flagged in ``truncated``).
        name: component name (default ``"props"``).

    ``result`` is the :class:`PropsResult`; ``utility`` the :class:`PropsUtility`. Track courses
    only (a gate course is refused with a TypeError).
    """

    name = "props"
    families = ("track",)

    SETTINGS = PropsSettings

    def __init__(
        self, *settings: PropsSettings | str | float | int | None, name: str | None = None, **fields
    ):
        super().__init__(name=name)
        # "auto": None, the capacity the course chooses
        settings = tuple(None if i == 3 and v == "auto" else v for i, v in enumerate(settings))
        if isinstance(fields.get("max_props"), str) and fields["max_props"] == "auto":
            fields["max_props"] = None
        self.settings = resolve_settings(PropsSettings, "Props", settings, fields, positional=4)

    @property
    def sizes(self) -> dict[str, float]:
        """The prop sizes by field name (``cone_diameter``, ..., track units)."""
        return {t.name: self.settings[t.name] for t in _SIZE_FIELDS}

    def attach(self, ctx) -> None:
        track = generator_result(ctx, Track, "Props", "props stand on road borders")
        bound = None
        if self.max_props is None:
            cfg = getattr(ctx.generator, "config", None)
            sized = all(
                getattr(cfg, k, None) is not None for k in ("resolved_spacing", "half_width")
            )
            if not sized:
                raise ValueError(
                    "Props(max_props='auto') needs a generator with a bead spacing and a "
                    "half_width (a TrackGenerator); pass max_props=<int >= 1>"
                )
            bound = declared_border_bound(cfg, ctx.layout.N_max)
            if bound is None:
                bound = _longest_border(construction_result(ctx))  # no declared bound
            sides = 2 if self.side == "both" else 1
            capacity_for(self.spacing, bound, sides, "Props spacing")
        self.utility = PropsUtility(track, self.settings, max_loop_length=bound)
        self._split = EnvSplit(self.utility, ctx.generator)
        self.result = self.utility.props

    def planned_bytes(self, layout, config) -> int:
        """The :class:`PropsUtility`'s buffers at the capacity ``attach`` chooses: the explicit
        ``max_props``, else the declared border bound (a lower bound for an elevated config
        without a grade check, whose capacity reads its first batch)."""
        bound = None
        if self.max_props is None:
            bead = getattr(config, "resolved_spacing", None)
            half_width = getattr(config, "half_width", None)
            if bead is None or half_width is None:
                return 0  # attach refuses this generator
            grade = getattr(config, "z_valid_grade", None) or 0.0
            # the declared bound, without the elevated case's read-back (a lower bound there)
            bound = border_length_bound(
                (layout.N_max + 1) * float(bead), float(half_width), float(grade)
            )
            sides = 2 if self.side == "both" else 1
            capacity_for(self.spacing, bound, sides, "Props spacing")
        return buffer_bytes(
            PropsUtility.buffers(self.settings, layout.num_envs, max_loop_length=bound)
        )

    def on_generate(self, ctx, mask) -> None:
        self._split.run(PropsUtility.place, mask)  # on the generator's env ranges
