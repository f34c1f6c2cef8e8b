"""Warp building blocks shared by stages, tools and envs, one module per topic.

- :mod:`.vectors`: the pi constants, ``NAN``, :func:`wrap_angle`, :func:`cross2`,
  :func:`safe_normalize`, :func:`xy`,
  :func:`finite`, :func:`finite3`.
- :mod:`.polylines`: perimeter, arc-uniform resampling of a closed loop, centroid and angle
  sort, bounding-box scaling, Menger curvature, the samplers' tail
  (:func:`resample_first_simple`, :func:`resample_scaled`).
- :mod:`.splines`: closed centripetal Catmull-Rom loops.
- :mod:`.crossings`: the one crossing counter :func:`count_crossings` (with
  :func:`has_self_crossing` on top of it), its scratch :class:`CrossingScratch` and the
  segment test :func:`segments_cross`.
- :mod:`.arcs`: :func:`bead_at_arc` (and :func:`bead_at_arc64`), the binary search of an
  arc position in a row of cumulative arc lengths; :func:`arc_ahead` (an arc ahead on a
  closed line), :func:`bead_fraction` and :func:`point_at_arc` (a closed polyline at an arc):
  the one look-ahead of the sensors and the envs.
- :mod:`.frames`: the plan-view heading of a quaternion (:func:`plan_x_axis`,
  :func:`unit_heading`, :func:`heading_of`) and back (:func:`yaw_quat`).
- :mod:`.buckets`: the uniform bucket grid packed as compressed rows
  (:func:`bucket_clear`, :func:`bucket_count`, :func:`bucket_scan`, :func:`bucket_fill`).

Each ``@wp.func`` is defined once here and imported from ``track_gen.geometry``.
"""

from __future__ import annotations

from .arcs import arc_ahead, bead_at_arc, bead_at_arc64, bead_fraction, point_at_arc
from .buckets import bucket_clear, bucket_count, bucket_fill, bucket_scan
from .crossings import (
    CHUNK,
    TURN_TOL,
    CrossingScratch,
    atan2_estimate,
    count_crossings,
    has_self_crossing,
    ring_neighbours,
    segments_cross,
)
from .frames import heading_of, plan_x_axis, unit_heading, yaw_quat
from .polylines import (
    all_finite,
    arc_fraction,
    bbox_normalize,
    bbox_scale,
    centroid,
    closed_length,
    emit_along_loop,
    lerp_on_edge,
    menger_curvature,
    resample_closed,
    resample_closed_box,
    resample_first_simple,
    resample_scaled,
    sort_by_angle,
    sort_by_angle_keyed,
)
from .splines import catmull_rom_centripetal, catmull_rom_closed
from .vectors import (
    FLOAT32_MAX,
    HALF_PI,
    NAN,
    PI,
    TWO_PI,
    cross2,
    finite,
    finite3,
    nan_vec2,
    safe_normalize,
    wrap_angle,
    xy,
)

__all__ = [
    "CHUNK",
    "CrossingScratch",
    "FLOAT32_MAX",
    "HALF_PI",
    "NAN",
    "PI",
    "TURN_TOL",
    "TWO_PI",
    "all_finite",
    "arc_ahead",
    "arc_fraction",
    "atan2_estimate",
    "bbox_normalize",
    "bbox_scale",
    "bead_at_arc",
    "bead_at_arc64",
    "bead_fraction",
    "bucket_clear",
    "bucket_count",
    "bucket_fill",
    "bucket_scan",
    "catmull_rom_centripetal",
    "catmull_rom_closed",
    "centroid",
    "closed_length",
    "count_crossings",
    "cross2",
    "emit_along_loop",
    "finite",
    "finite3",
    "has_self_crossing",
    "heading_of",
    "lerp_on_edge",
    "menger_curvature",
    "nan_vec2",
    "plan_x_axis",
    "point_at_arc",
    "resample_closed",
    "resample_closed_box",
    "resample_first_simple",
    "resample_scaled",
    "ring_neighbours",
    "safe_normalize",
    "segments_cross",
    "sort_by_angle",
    "sort_by_angle_keyed",
    "unit_heading",
    "wrap_angle",
    "xy",
    "yaw_quat",
]
