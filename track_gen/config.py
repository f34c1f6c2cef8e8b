"""Generator configuration: :class:`TrackGenConfig`.

Every field is validated on construction; a bad value raises :class:`ValueError`
(or :class:`TypeError` for a wrong type) naming the field, the value and the allowed range.
Coordinates are in "track units" (metres in most simulators).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

__all__ = [
    "GATE_ALIGNS",
    "GATE_ORDERINGS",
    "GateGenConfig",
    "SamplerConfig",
    "TRACK_GENERATORS",
    "TrackGenConfig",
    "VORONOI_LAYOUTS",
    "Z_PROFILES",
]

#: Built-in sampler names for tracks.
TRACK_GENERATORS = ("bezier", "checkpoint", "hull", "polar", "repulsive", "voronoi")
#: Site layouts of the voronoi sampler.
VORONOI_LAYOUTS = ("box", "void_ring", "clustered", "mixed")


def _fail(cls: str, name: str, value, rule: str) -> ValueError:
    return ValueError(f"{cls}.{name} = {value!r} is out of range: {rule}")


def _check_int(cls, name, value, lo=None, hi=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{cls}.{name} must be an int, got {type(value).__name__} {value!r}")
    if lo is not None and value < lo:
        raise _fail(cls, name, value, f"must be >= {lo}")
    if hi is not None and value > hi:
        raise _fail(cls, name, value, f"must be <= {hi}")


def _check_float(cls, name, value, lo=None, hi=None, lo_open=False, hi_open=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{cls}.{name} must be a number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise _fail(cls, name, value, "must be finite")
    if lo is not None and (v <= lo if lo_open else v < lo):
        raise _fail(cls, name, value, f"must be {'>' if lo_open else '>='} {lo}")
    if hi is not None and (v >= hi if hi_open else v > hi):
        raise _fail(cls, name, value, f"must be {'<' if hi_open else '<='} {hi}")


@dataclass(frozen=True)
class SamplerConfig:
    """Fields shared by every generator (tracks and gates): batching and the samplers.

    Dynamic fields (marked *) live on the device as ``generator.params["<sampler>.<field>"]``.

    Selection and batching:
        generator (str, default ``"bezier"``): centerline sampler, one of ``"bezier"``,
            ``"checkpoint"``, ``"hull"``, ``"polar"``, ``"repulsive"``, ``"voronoi"`` (or a
            name registered in a :class:`~track_gen.pipeline.Registry`).
        num_envs (int, default 1): batch size E (>= 1). Fixed for the generator's life.
        device (str | None, default None): Warp device (``"cpu"``, ``"cuda:0"``); None means
            Warp's preferred device (CUDA when present, else CPU).
        num_points (int, default 256): resolution of the sampler's closed centerline before
            constant-spacing resampling (>= 16).
        scale (float, default 1.0): isotropic course size; every sampler normalizes its loop
            so that the longest bounding-box side is ``1.44 * scale`` (> 0). Dynamic
            (``"<sampler>.scale"`` in ``generator.params``).

    Bezier sampler (corners on a grid, cubic segments; dynamic fields marked *):
        min_num_points (int, default 9): fewest corners (>= 3).
        max_num_points (int, default 13): most corners (>= min_num_points, <= 64).
        num_points_per_segment (int, default 30): dense samples per cubic (>= 2).
        min_point_distance (float, default 0.05): grid cell half-size in the unit square;
            ``num_cells = int(1 / (2 * value))`` per axis, in (0, 0.5]. Corners occupy
            distinct cells, so it sets the smallest corner spacing before normalization.
        rad* (float, default 0.4): handle length as a fraction of the chord (curviness), [0, 2].
        edgy* (float, default 0.0): tangent blend ``p = atan(edgy)/pi + 0.5``; 0 is the
            bisector, large values follow the outgoing edge. Any finite value.
        handle_clamp_frac* (float, default 0.4): handles are capped at this fraction of the
            shorter incident edge, [0, 1].

    Polar sampler (radius perturbations around a circle, centripetal Catmull-Rom):
        polar_num_knots (int, default 12): knots K (4..64).
        polar_radial_jitter* (float, default 0.6): knot radius ``1 + U(-j, j)``, [0, 0.85].
        polar_angular_jitter* (float, default 0.3): knot angle jitter as a fraction of a
            knot cell, [0, 0.45] (keeps the knots in angular order).

    Hull sampler (grid points, angle-sorted, midpoints pushed in or out, Catmull-Rom):
        hull_displacement* (float, default 0.15): edge midpoints move along the centroid ray by
            ``U(-d, d)`` times their distance to the centroid, [0, 0.9]. Uses the bezier
            ``min_num_points``/``max_num_points``/``min_point_distance`` grid.

    Voronoi sampler (anchors snapped to a random site field, Chaikin + Catmull-Rom):
        voronoi_num_sites (int, default 256): sites S (>= voronoi_control_points, <= 4096).
        voronoi_site_layout (str, default ``"void_ring"``): ``"box"``, ``"void_ring"``,
            ``"clustered"`` or ``"mixed"``.
        voronoi_control_points (int, default 18): anchors K (6..64).
        voronoi_radial_variation* (float, default 0.62): target-radius modulation, [0, 1].
        voronoi_angular_jitter* (float, default 0.08, rad): anchor angle jitter, [0, 0.5].

    Checkpoint sampler (steer a car through random checkpoints, best of K candidates):
        checkpoint_count (int, default 12): checkpoints C (3..64).
        checkpoint_radius_min_frac* (float, default 0.33): radius ~ U(frac, 1), [0, 1).
        checkpoint_angle_jitter* (float, default 0.55): angle jitter as a fraction of a
            checkpoint slot, [0, 1].
        checkpoint_turn_rate* (float, default 0.42, rad): largest heading change per step, (0, 3].
        checkpoint_steer_gain* (float, default 0.65): proportional steering gain, (0, 10].
        checkpoint_lookahead_frac* (float, default 0.16): advance to the next checkpoint inside
            this radius (fraction of the unit course radius), (0, 1].
        checkpoint_best_of_k (int, default 4): candidates per env; the one with the fewest
            self-crossings wins, ties to the lowest index (1..16).

    Repulsive sampler (self-repulsive curve growth among obstacles):
        repulsive_grow_mult_min, repulsive_grow_mult_max (float, defaults 4.5, 5.5): target
            perimeter ``U(min, max) * 2*pi*r_init`` (1 <= min <= max <= 20).
        repulsive_obstacle_count_min, repulsive_obstacle_count_max (int, defaults 8, 12):
            obstacle discs per env (0 <= min <= max <= 32).
        repulsive_iters (int, default 160): growth and settling iterations (>= 1).
    """

    generator: str = "bezier"
    num_envs: int = 1
    device: str | None = None
    num_points: int = 256
    scale: float = 1.0
    min_num_points: int = 9
    max_num_points: int = 13
    num_points_per_segment: int = 30
    min_point_distance: float = 0.05
    rad: float = 0.4
    edgy: float = 0.0
    handle_clamp_frac: float = 0.4
    polar_num_knots: int = 12
    polar_radial_jitter: float = 0.6
    polar_angular_jitter: float = 0.3
    hull_displacement: float = 0.15
    voronoi_num_sites: int = 256
    voronoi_site_layout: str = "void_ring"
    voronoi_control_points: int = 18
    voronoi_radial_variation: float = 0.62
    voronoi_angular_jitter: float = 0.08
    checkpoint_count: int = 12
    checkpoint_radius_min_frac: float = 0.33
    checkpoint_angle_jitter: float = 0.55
    checkpoint_turn_rate: float = 0.42
    checkpoint_steer_gain: float = 0.65
    checkpoint_lookahead_frac: float = 0.16
    checkpoint_best_of_k: int = 4
    repulsive_grow_mult_min: float = 4.5
    repulsive_grow_mult_max: float = 5.5
    repulsive_obstacle_count_min: int = 8
    repulsive_obstacle_count_max: int = 12
    repulsive_iters: int = 160

    def __post_init__(self):
        self._check_sampler_fields()

    def _check_sampler_fields(self) -> None:
        c = type(self).__name__
        if not isinstance(self.generator, str) or not self.generator:
            raise TypeError(f"{c}.generator must be a non-empty str, got {self.generator!r}")
        _check_int(c, "num_envs", self.num_envs, lo=1)
        if self.device is not None and not isinstance(self.device, str):
            raise TypeError(f"{c}.device must be a str such as 'cpu' or 'cuda:0', or None")
        _check_int(c, "num_points", self.num_points, lo=16)
        _check_float(c, "scale", self.scale, lo=0.0, lo_open=True)
        _check_int(c, "min_num_points", self.min_num_points, lo=3)
        _check_int(c, "max_num_points", self.max_num_points, lo=self.min_num_points, hi=64)
        _check_int(c, "num_points_per_segment", self.num_points_per_segment, lo=2)
        _check_float(c, "min_point_distance", self.min_point_distance, lo=0.0, hi=0.5, lo_open=True)
        cells = int(1.0 / (2.0 * self.min_point_distance))
        if cells * cells < self.max_num_points:
            raise _fail(
                c,
                "min_point_distance",
                self.min_point_distance,
                f"gives {cells}x{cells} grid cells, fewer than max_num_points="
                f"{self.max_num_points}; lower it",
            )
        _check_float(c, "rad", self.rad, lo=0.0, hi=2.0)
        _check_float(c, "edgy", self.edgy)
        _check_float(c, "handle_clamp_frac", self.handle_clamp_frac, lo=0.0, hi=1.0)
        _check_int(c, "polar_num_knots", self.polar_num_knots, lo=4, hi=64)
        _check_float(c, "polar_radial_jitter", self.polar_radial_jitter, lo=0.0, hi=0.85)
        _check_float(c, "polar_angular_jitter", self.polar_angular_jitter, lo=0.0, hi=0.45)
        _check_float(c, "hull_displacement", self.hull_displacement, lo=0.0, hi=0.9)
        _check_int(c, "voronoi_control_points", self.voronoi_control_points, lo=6, hi=64)
        _check_int(
            c, "voronoi_num_sites", self.voronoi_num_sites, lo=self.voronoi_control_points, hi=4096
        )
        if self.voronoi_site_layout not in VORONOI_LAYOUTS:
            raise _fail(
                c,
                "voronoi_site_layout",
                self.voronoi_site_layout,
                f"must be one of {VORONOI_LAYOUTS}",
            )
        _check_float(c, "voronoi_radial_variation", self.voronoi_radial_variation, lo=0.0, hi=1.0)
        _check_float(c, "voronoi_angular_jitter", self.voronoi_angular_jitter, lo=0.0, hi=0.5)
        _check_int(c, "checkpoint_count", self.checkpoint_count, lo=3, hi=64)
        _check_float(
            c,
            "checkpoint_radius_min_frac",
            self.checkpoint_radius_min_frac,
            lo=0.0,
            hi=1.0,
            hi_open=True,
        )
        _check_float(c, "checkpoint_angle_jitter", self.checkpoint_angle_jitter, lo=0.0, hi=1.0)
        _check_float(
            c, "checkpoint_turn_rate", self.checkpoint_turn_rate, lo=0.0, hi=3.0, lo_open=True
        )
        _check_float(
            c, "checkpoint_steer_gain", self.checkpoint_steer_gain, lo=0.0, hi=10.0, lo_open=True
        )
        _check_float(
            c,
            "checkpoint_lookahead_frac",
            self.checkpoint_lookahead_frac,
            lo=0.0,
            hi=1.0,
            lo_open=True,
        )
        _check_int(c, "checkpoint_best_of_k", self.checkpoint_best_of_k, lo=1, hi=16)
        _check_float(c, "repulsive_grow_mult_min", self.repulsive_grow_mult_min, lo=1.0, hi=20.0)
        _check_float(
            c,
            "repulsive_grow_mult_max",
            self.repulsive_grow_mult_max,
            lo=self.repulsive_grow_mult_min,
            hi=20.0,
        )
        _check_int(
            c, "repulsive_obstacle_count_min", self.repulsive_obstacle_count_min, lo=0, hi=32
        )
        _check_int(
            c,
            "repulsive_obstacle_count_max",
            self.repulsive_obstacle_count_max,
            lo=self.repulsive_obstacle_count_min,
            hi=32,
        )
        _check_int(c, "repulsive_iters", self.repulsive_iters, lo=1)

    def replace(self, **changes):
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class TrackGenConfig(SamplerConfig):
    """Configuration of a batch of road-band tracks (frozen, validated on construction).

    Every :class:`SamplerConfig` field (generator, num_envs, device, num_points, scale and the
    sampler fields), plus the fields below.

    Road and output resolution:
        half_width (float, default 0.1, track units): half the road width (> 0).
        spacing (float | None, default None -> ``0.6 * half_width``, track units): arc
            distance between output beads (> 0).
        N_max (int, default 384): per-env bead capacity (>= 8). A loop needing more beads is
            truncated and marked invalid with ``FailBit.TRUNCATED``.

    XPBD relaxation (makes the loop thick enough for a constant-width road):
        relax_enable (bool, default True): False inflates the resampled loop directly.
        relax_iters (int, default 100): maximum Jacobi sweeps (>= 1); most envs converge
            in 20 to 40 (``diagnostics["relax.sweeps"]``).
        relax_converge_tol (float, default 0.005, fraction of half_width): an env stops
            early once a sweep moves no bead farther than ``tol * half_width``; 0 disables
            the early exit (every env runs ``relax_iters`` sweeps), [0, 0.1].
        relax_accel (str, default ``"chebyshev"``): ``"chebyshev"`` or ``"none"``.
        relax_cheby_rho (float, default 0.98): spectral radius estimate, [0, 1).
        relax_cheby_gamma (float, default 0.9): blend under-relaxation, (0, 1].
        relax_cheby_start (int, default 8): first accelerated sweep (>= 1).
        relax_margin (float, default 0.15): separation target ``2*hw*(1+margin)`` and
            radius floor ``hw*(1+margin)``, [0, 1].
        relax_band (int | None, default None): index band excluded from separation; None
            means ``max(round(2*hw/L0), 1)`` per env (L0 the mean bead spacing).
        relax_sep_every (int, default 20): sweeps between separation-cache refreshes (>= 1).
        relax_sep_cache_slots (int, default 16): cached neighbour candidates per bead
            (0..64; 0 means a dense O(n^2) separation every sweep).
        relax_sep_cache_skin (float, default 0.25): cache radius ``target*(1+skin)`` (>= 0).
            A full list keeps the nearest candidates; the ones left out are counted per env
            in ``generator.diagnostics["relax.sep_overflow"]`` (raise the slots when high).
        relax_sep_relax*, relax_spc_relax*, relax_bend_relax* (float, defaults 1.0, 1.0, 1.5):
            separation, spacing and bending correction scales, [0, 2].
        relax_smooth_passes (int, default 5): Taubin smoothing passes after the solve (>= 0).
        relax_smooth_spacing_iters (int, default 10): spacing-only polish sweeps (>= 0).

    Validity (``valid[e] = fail_mask[e] == 0``):
        turning_tol* (float, default 0.1, rad): allowed ``| |total turning| - 2*pi |``, (0, 1].
        relax_tol* (float, default 0.02): thickness gate: the smallest curvature radius and
            half the smallest non-neighbour distance must be >= ``(1 - tol) * hw``, [0, 0.5].
    """

    half_width: float = 0.1
    spacing: float | None = None
    N_max: int = 384
    relax_enable: bool = True
    relax_iters: int = 100
    relax_converge_tol: float = 0.005
    relax_accel: str = "chebyshev"
    relax_cheby_rho: float = 0.98
    relax_cheby_gamma: float = 0.9
    relax_cheby_start: int = 8
    relax_margin: float = 0.15
    relax_band: int | None = None
    relax_sep_every: int = 20
    relax_sep_cache_slots: int = 16
    relax_sep_cache_skin: float = 0.25
    relax_sep_relax: float = 1.0
    relax_spc_relax: float = 1.0
    relax_bend_relax: float = 1.5
    relax_smooth_passes: int = 5
    relax_smooth_spacing_iters: int = 10
    turning_tol: float = 0.1
    relax_tol: float = 0.02

    def __post_init__(self):
        self._check_sampler_fields()
        c = type(self).__name__
        _check_float(c, "half_width", self.half_width, lo=0.0, lo_open=True)
        if self.spacing is not None:
            _check_float(c, "spacing", self.spacing, lo=0.0, lo_open=True)
        _check_int(c, "N_max", self.N_max, lo=8)
        if not isinstance(self.relax_enable, bool):
            raise TypeError(f"{c}.relax_enable must be a bool, got {self.relax_enable!r}")
        _check_int(c, "relax_iters", self.relax_iters, lo=1)
        _check_float(c, "relax_converge_tol", self.relax_converge_tol, lo=0.0, hi=0.1)
        if self.relax_accel not in ("chebyshev", "none"):
            raise _fail(c, "relax_accel", self.relax_accel, "must be 'chebyshev' or 'none'")
        _check_float(c, "relax_cheby_rho", self.relax_cheby_rho, lo=0.0, hi=1.0, hi_open=True)
        _check_float(c, "relax_cheby_gamma", self.relax_cheby_gamma, lo=0.0, hi=1.0, lo_open=True)
        _check_int(c, "relax_cheby_start", self.relax_cheby_start, lo=1)
        _check_float(c, "relax_margin", self.relax_margin, lo=0.0, hi=1.0)
        if self.relax_band is not None:
            _check_int(c, "relax_band", self.relax_band, lo=1)
        _check_int(c, "relax_sep_every", self.relax_sep_every, lo=1)
        _check_int(c, "relax_sep_cache_slots", self.relax_sep_cache_slots, lo=0, hi=64)
        _check_float(c, "relax_sep_cache_skin", self.relax_sep_cache_skin, lo=0.0)
        for name in ("relax_sep_relax", "relax_spc_relax", "relax_bend_relax"):
            _check_float(c, name, getattr(self, name), lo=0.0, hi=2.0)
        _check_int(c, "relax_smooth_passes", self.relax_smooth_passes, lo=0)
        _check_int(c, "relax_smooth_spacing_iters", self.relax_smooth_spacing_iters, lo=0)
        _check_float(c, "turning_tol", self.turning_tol, lo=0.0, hi=1.0, lo_open=True)
        _check_float(c, "relax_tol", self.relax_tol, lo=0.0, hi=0.5)

    @property
    def resolved_spacing(self) -> float:
        """Bead spacing in track units: ``spacing`` or ``0.6 * half_width``."""
        return float(self.spacing) if self.spacing is not None else 0.6 * float(self.half_width)


#: Gate orderings: along the sampler's loop, or consecutive pairs shuffled as units.
GATE_ORDERINGS = ("ccw", "random_pairs")
#: Gate frame alignments: level gates (yaw only) or tilted with the 3D tangent.
GATE_ALIGNS = ("yaw_only", "full_tangent")
#: Gate altitude profiles.
Z_PROFILES = ("flat", "uniform", "random_walk")


@dataclass(frozen=True)
class GateGenConfig(SamplerConfig):
    """Configuration of a batch of drone-racing gate courses (frozen, validated).

    Every :class:`SamplerConfig` field (generator, num_envs, device, num_points, scale and the
    sampler fields: the gates are placed along the same samplers' loops), plus the fields
    below. Dynamic fields (marked *) live in ``generator.params``.

    Gate count and placement (stage ``gate_anchors``):
        min_gates (int, default 4): validity floor on the gate count (>= 2).
        max_gates (int, default 32): per-env gate capacity, the stride of every gate array
            (>= num_gates_max, >= min_gates, <= 256).
        num_gates_min, num_gates_max (int, defaults 8, 12): each env draws its gate count
            uniformly in this range (min_gates <= min <= max), so no course is built with
            fewer gates than the validity floor.
        gate_jitter* (float, default 0.25): gate k sits at arc ``(k + 0.5 + U(-j, j)) * L / K``
            along the loop; ``j`` is a fraction of a gate slot, [0, 0.45].
        gate_ordering (str, default ``"ccw"``): ``"ccw"`` flies the gates in loop order
            (counter-clockwise for the built-in samplers); ``"random_pairs"`` shuffles
            consecutive pairs of gates as units (crossing courses).
        gate_radius (float, default 0.025, track units): gates are pushed apart until their
            centres are at least ``2 * gate_radius`` apart in plan view (>= 0).
        gate_solve_iters (int, default 8): Gauss-Seidel separation rounds (>= 0; 0 disables).

    Altitude:
        z_profile (str, default ``"flat"``): ``"flat"`` (``z_base``), ``"uniform"``
            (``U(z_min, z_max)`` per gate) or ``"random_walk"`` (from ``z_base``, steps of
            ``U(-1, 1) * z_max_step`` per unit of plan distance, clamped to [z_min, z_max]).
        z_base*, z_min*, z_max* (float, defaults 0.0, track units): levels (z_min <= z_max).
        z_max_step* (float, default 0.0): random-walk grade scale (>= 0).
        z_valid_grade (float, default 0.0): a course whose consecutive gates climb more than
            this grade (``|dz| / plan distance``) is invalid (``FailBit.GRADE``); 0 disables.

    Frames (stage ``gate_frames``):
        gate_width* (float, default 0.0, track units): full opening width; ``half_size =
            width / 2``. 0 makes point gates; a width set after construction must be > 0.
        gate_align (str, default ``"yaw_only"``): ``"yaw_only"`` (level gates, forward is the
            horizontal tangent) or ``"full_tangent"`` (forward is the 3D tangent).
    """

    min_gates: int = 4
    max_gates: int = 32
    num_gates_min: int = 8
    num_gates_max: int = 12
    gate_jitter: float = 0.25
    gate_ordering: str = "ccw"
    gate_radius: float = 0.025
    gate_solve_iters: int = 8
    z_profile: str = "flat"
    z_base: float = 0.0
    z_min: float = 0.0
    z_max: float = 0.0
    z_max_step: float = 0.0
    z_valid_grade: float = 0.0
    gate_width: float = 0.0
    gate_align: str = "yaw_only"

    def __post_init__(self):
        self._check_sampler_fields()
        c = type(self).__name__
        _check_int(c, "min_gates", self.min_gates, lo=2)
        # every course the sampler can place must be able to pass the count check
        _check_int(c, "num_gates_min", self.num_gates_min, lo=self.min_gates)
        _check_int(c, "num_gates_max", self.num_gates_max, lo=self.num_gates_min)
        _check_int(
            c, "max_gates", self.max_gates, lo=max(self.num_gates_max, self.min_gates), hi=256
        )
        _check_float(c, "gate_jitter", self.gate_jitter, lo=0.0, hi=0.45)
        if self.gate_ordering not in GATE_ORDERINGS:
            raise _fail(c, "gate_ordering", self.gate_ordering, f"must be one of {GATE_ORDERINGS}")
        _check_float(c, "gate_radius", self.gate_radius, lo=0.0)
        _check_int(c, "gate_solve_iters", self.gate_solve_iters, lo=0)
        if self.z_profile not in Z_PROFILES:
            raise _fail(c, "z_profile", self.z_profile, f"must be one of {Z_PROFILES}")
        for name in ("z_base", "z_min", "z_max"):
            _check_float(c, name, getattr(self, name))
        if self.z_min > self.z_max:
            raise _fail(c, "z_min", self.z_min, f"must be <= z_max = {self.z_max}")
        _check_float(c, "z_max_step", self.z_max_step, lo=0.0)
        _check_float(c, "z_valid_grade", self.z_valid_grade, lo=0.0)
        _check_float(c, "gate_width", self.gate_width, lo=0.0)
        if self.gate_align not in GATE_ALIGNS:
            raise _fail(c, "gate_align", self.gate_align, f"must be one of {GATE_ALIGNS}")

    @property
    def N_max(self) -> int:
        """The per-env stride of the gate arrays (``max_gates``)."""
        return self.max_gates
