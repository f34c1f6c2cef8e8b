"""Props along the road borders: :class:`PropsResult`, :class:`PropsUtility` and :class:`Props`.

A prop is an instance pose for a renderer or an obstacle set: a cone standing on a border
point, or a wall segment spanning two consecutive border points. Per env and per border
(``side``: the inner border, the outer border or both), ``n`` props sit evenly along the
border's closed 3D polyline, the first at the border's bead 0 (the start line), with no gap
and no doubled prop at the seam.

Placement rules (one thread per env, :meth:`PropsUtility.place`):

* **Spacing.** A border of closed 3D length ``L`` (closing segment included) gets
  ``n = max(1, round(L / spacing))`` props (halves round up); prop ``k`` (``k = 0 .. n-1``)
  is the border point at arc ``k * L / n``, linearly interpolated on its polyline segment.
  Prop 0 is bead 0 of the border; the arc from the last prop back to prop 0 is ``L / n``,
  equal to every other step (seam-free).
* **Rows.** Env ``e`` owns rows ``e*M .. e*M + M - 1``: the inner border's props first, then
  the outer border's (``side="both"``); ``side`` tells which border a row belongs to. Rows
  past ``count[e]`` are NaN (``side = -1``).
* **Truncation.** When the borders need more than ``M`` props in all, ``count = M`` and
  ``truncated = 1``; each border keeps ``n' <= n`` props, spread evenly at ``k * L / n'``
  (so farther apart than ``spacing``). With both borders, the ``M`` rows are shared in
  proportion to the demands: ``n_inner' = floor(M * n_inner / (n_inner + n_outer))``,
  ``n_outer' = M - n_inner'`` (a border may get 0 props when ``M`` is tiny).
* **Invalid envs** (``valid == 0``), tracks of fewer than 3 or more than ``N_max`` beads,
  borders of non-finite or zero length and borders with a coordinate that is non-finite or
  beyond ``COORD_LIMIT`` (1e18 track units, :mod:`~track_gen.core.extents`) give
  ``count = 0`` (``truncated = 0``) and NaN rows: every placed prop is finite.
* **Masking.** Only the envs with ``mask[e] != 0`` are written (all ``M`` rows, count and
  flag); every other env stays bitwise unchanged.

Pose conventions (any z: the borders may be elevated):

* ``position`` is the prop's **base centre**: its local ``z = 0`` face rests there and the
  prop extends ``scale.z`` along its local +z.
* ``orientation`` (quaternion x, y, z, w) rotates the prop's local frame into the world. A
  cone stays upright: a pure yaw, its local x the plan-view direction of the border segment
  it stands on (``atan2(dy, dx)``; yaw 0 for a vertical or zero-length segment). A wall is
  roll-free: yaw from the plan-view direction of its chord, then pitched so that its local x
  is the 3D unit chord (climbing along a slope) and its local y stays horizontal.
* ``scale``: a cone is ``(diameter, diameter, height)``; a wall ``(chord length, thickness,
  height)``, its base centre at the chord's midpoint (a wall of a border with one prop, or of
  a zero chord, has length 0 and the border direction at its point).
"""

from ...core.deprecation import deprecated_names
from .component import BORDER_SLACK, Props, border_length_bound, declared_border_bound
from .fields import (
    CONE_DIAMETER,
    CONE_HEIGHT,
    KIND,
    MAX_PROPS,
    SIDE,
    SPACING,
    WALL_HEIGHT,
    WALL_THICKNESS,
    PropsSettings,
)
from .kernels import PropKind, PropSide
from .result import PropsResult
from .utility import PropsUtility, capacity_for

__all__ = [
    "BORDER_SLACK",
    "CONE_DIAMETER",
    "CONE_HEIGHT",
    "KIND",
    "MAX_PROPS",
    "PropKind",
    "PropsUtility",
    "PropsResult",
    "PropSide",
    "Props",
    "PropsSettings",
    "SIDE",
    "SPACING",
    "WALL_HEIGHT",
    "WALL_THICKNESS",
    "border_length_bound",
    "capacity_for",
    "declared_border_bound",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "PropPlacer": "PropsUtility",
    "PropSet": "PropsResult",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
