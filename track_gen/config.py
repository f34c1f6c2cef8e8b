"""Generator configuration: :class:`TrackGenConfig` and :class:`GateGenConfig`.

The flat, frozen front end of the generators. Every field is declared once, as a
:class:`~track_gen.pipeline.Tunable` beside the stage that reads it; these classes are
assembled from those declarations (one dataclass field each), and every value is checked on
construction: a bad value raises ValueError (TypeError for a wrong kind) naming the field, the
value and the allowed range. Coordinates are in ``unit``: "track units" (the normalized
courses, about 1.44 across) or "m" (``presets.circuit``, real circuits).
The field tables of ``docs/reference/fields.md`` are generated from the same declarations.
"""

from __future__ import annotations

from types import MappingProxyType

from .core.layout import KERNEL_LAYOUT
from .core.tunable import config_class
from .core.units import UNIT
from .engine.stage import LAYOUT_FIELDS, N_MAX, NUM_POINTS
from .stages import (
    BUILTIN_SAMPLERS,
    common,
    elevate,
    gate_anchors,
    gate_frames,
    gate_validate,
    inflate,
    relax,
    resample,
    road_width,
    validate,
    voronoi,
)

__all__ = [
    "GATE_ALIGNS",
    "GATE_ORDERINGS",
    "GATE_RESOLUTION",
    "GateGenConfig",
    "SamplerConfig",
    "TRACK_GENERATORS",
    "TrackGenConfig",
    "VORONOI_LAYOUTS",
    "Z_PROFILES",
]

#: Built-in sampler names (``generator=``), from the stage registry's built-in samplers.
TRACK_GENERATORS = tuple(sorted(BUILTIN_SAMPLERS))
#: Built-in samplers of tracks only (``families == ("track",)``: ``circuit``, in metres): their
#: fields are TrackGenConfig's, not SamplerConfig's.
_TRACK_ONLY = {n: c for n, c in BUILTIN_SAMPLERS.items() if c.families == ("track",)}
#: Site layouts of the voronoi sampler.
VORONOI_LAYOUTS = voronoi.SITE_LAYOUT.choices
#: Gate orderings: along the sampler's loop, or consecutive pairs shuffled as units.
GATE_ORDERINGS = gate_anchors.ORDERING.choices
#: Gate frame alignments: level gates (yaw only) or tilted with the 3D tangent.
GATE_ALIGNS = gate_frames.ALIGN.choices
#: Height profiles of tracks and altitude profiles of gates.
Z_PROFILES = elevate.Z_PROFILE.choices

_SAMPLER = "<sampler>"

SamplerConfig = config_class(
    "SamplerConfig",
    [
        ("Selection and batching", _SAMPLER, (*LAYOUT_FIELDS, UNIT, common.SCALE)),
        *(
            (f"{name.capitalize()} sampler (stage {name})", name, cls.FIELDS)
            for name, cls in BUILTIN_SAMPLERS.items()
            if name not in _TRACK_ONLY
        ),
    ],
    doc="Fields shared by every generator (tracks and gates): batching and the samplers.\n\n"
    "A field read by several stages is one config field, listed in each section that reads it "
    "(scale is dynamic in every sampler: ``params['<sampler>.scale']``; the corner grid "
    "serves bezier and hull).",
)

TrackGenConfig = config_class(
    "TrackGenConfig",
    [
        ("Road and output resolution", "resample", (inflate.HALF_WIDTH, resample.SPACING, N_MAX)),
        ("Road widths (stage road_width)", "road_width", (road_width.WIDTH_VARIATION,)),
        *(
            (f"{name.capitalize()} sampler (stage {name}, tracks only)", name, cls.FIELDS)
            for name, cls in _TRACK_ONLY.items()
        ),
        ("Thread layout", "resample", (KERNEL_LAYOUT,)),
        ("Relaxation (stage relax)", "relax", (relax.ENABLE, *relax.RelaxPBD.FIELDS)),
        ("Validity (stage validate)", "validate", validate.ValidateTrack.FIELDS),
        ("Elevation (stage elevate)", "elevate", elevate.Elevate.FIELDS),
    ],
    base=SamplerConfig,
    doc="Configuration of a batch of road-band tracks (frozen, checked on construction).\n\n"
    "Every SamplerConfig field, plus the road, the relaxation and the validity fields.",
    namespace={
        "family": "track",  # the pipeline family a config of this class builds
        "resolved_spacing": property(
            lambda self: resample.resolved_spacing(self.spacing, self.half_width),
            doc="Bead spacing in track units: ``spacing`` or ``0.6 * half_width``.",
        ),
    },
)

#: The sampler resolution of the gate pipeline: ``GateGenConfig``'s defaults of the shared
#: ``num_points`` and ``num_points_per_segment`` (``TrackGenConfig`` keeps the declarations'
#: 256 and 30). In a gate pipeline the bezier, hull, polar and checkpoint samplers write the
#: corner-cut polygon of their knots (``stages/common.emit_knots``, ``docs/gates.md``, "The gate
#: loop"): ``num_points`` is its row count (a longer knot polygon is resampled to it) and
#: ``num_points_per_segment`` is not read. The voronoi and repulsive samplers, plugins and the
#: ``"centerline"`` input write a ``num_points`` loop as for tracks. A value passed wins.
GATE_RESOLUTION = MappingProxyType({NUM_POINTS.field: 32, common.SEGMENT_POINTS.field: 2})

GateGenConfig = config_class(
    "GateGenConfig",
    [
        (
            "Sampler resolution (gate defaults, every sampler)",
            _SAMPLER,
            (NUM_POINTS, common.SEGMENT_POINTS),
        ),
        (
            "Gate count and placement (stage gate_anchors)",
            "gate_anchors",
            gate_anchors.GateAnchors.FIELDS,
        ),
        ("Frames (stage gate_frames)", "gate_frames", gate_frames.GateFrames.FIELDS),
        ("Validity (stage gate_validate)", "gate_validate", gate_validate.GateValidate.FIELDS),
    ],
    base=SamplerConfig,
    doc="Configuration of a batch of drone-racing gate courses (frozen, checked).\n\n"
    "Every SamplerConfig field (the gates are placed along loops the same samplers draw), plus "
    "the gate fields. The samplers run at gate resolution by default (``GATE_RESOLUTION``: "
    "num_points 32, num_points_per_segment 2, where tracks use 256 and 30; the knot samplers "
    "write the corner-cut polygon of their knots into those rows); pass either field to "
    "override it.",
    defaults=GATE_RESOLUTION,
    namespace={
        "family": "gates",
        "N_max": property(
            lambda self: self.max_gates,
            doc="The per-env stride of the gate arrays (``max_gates``).",
        ),
    },
)
