"""Voronoi sampler: anchors snapped to a random site field, Chaikin, Catmull-Rom.

Not a true Voronoi diagram: a site field plus an angular anchor snap. Per env (one thread):

1. ``S`` sites in a box of side ``L = 2`` centred on the origin, under a static layout:
   ``box`` (uniform fill), ``void_ring`` (area-uniform annulus ``r = sqrt(rmin^2 +
   u (rmax^2 - rmin^2))``, ``rmin = 0.14 L``, ``rmax = 0.52 L``), ``clustered`` (6 clusters
   at angles ``phase + 2 pi c / 6``, cluster radius ``U(0.24, 0.34) L * U(0.82, 1.12)``,
   scatter radius ``U(0.025, 0.105) L``, 22% of the sites in the annulus instead) or
   ``mixed`` (annulus with probability 0.65, else box). Every site is clipped to the box.
2. ``K`` anchors: target angle ``theta_i = rho + 2 pi i / K + U(-j, j)`` (``j`` =
   ``angular_jitter``), target radius ``clip(0.34 L (1 + A phi(theta_i)), 0.16 L, 0.52 L)``
   with ``phi`` a sum of four random-phase harmonics (orders 2, 3, 5, 7) and
   ``A = clip(radial_variation * boost, 0, 0.85)`` (boost 1.00 box, 1.10 void_ring,
   1.16 clustered, 1.06 mixed). Each anchor snaps to the unused site minimizing
   ``|d angle| / (2 pi / K) + |r_site - r_target| / (0.13 L)`` (ties to the lowest index).
   The search visits sites by angular bucket outward from the target and stops once the
   angle term alone exceeds the best cost, so it returns what a scan of every site would.
3. The snapped anchors are sorted counter-clockwise by angle around the origin. When a gap
   between consecutive anchor angles reaches ``pi`` (the polygon would not be star-shaped
   around the origin) the targets are used instead: sorted, their gaps stay below
   ``2 pi / K + 2 j < pi``. The anchor polygon is therefore simple.
4. One Chaikin pass (points at 1/4 and 3/4 of every edge: ``2K`` vertices, still
   star-shaped), a closed centripetal Catmull-Rom spline through them, arc-resampled to
   ``num_points``. A loop that crosses itself falls back to the straight Chaikin polygon,
   re-checked, then to the anchor polygon. Finally the longest bounding-box side is scaled
   to ``1.44 * scale``. Loops are counter-clockwise.
"""

from __future__ import annotations

import enum

import warp as wp

from ..core.extents import EXTENT
from ..core.tunable import Tunable
from ..engine.stage import Stage, Workspace
from ..geometry import PI, TWO_PI, atan2_estimate, sort_by_angle_keyed, wrap_angle
from ..seeds import stage_rng
from .common import SCALE, SEGMENT_POINTS, DenseLoop, DenseScratch, emit_spline, launch_sampler

wp.set_module_options({"enable_backward": False})

SALT_VORONOI = wp.constant(wp.uint32(0x7020A104))
BOX_L = wp.constant(2.0)
NUM_CLUSTERS = wp.constant(6)


class SiteLayout(enum.IntEnum):
    """Site layouts of the voronoi sampler (the kernel's ``layout`` code)."""

    BOX = 0
    VOID_RING = 1
    CLUSTERED = 2
    MIXED = 3


_LAYOUT_CODES = {
    "box": SiteLayout.BOX,
    "void_ring": SiteLayout.VOID_RING,
    "clustered": SiteLayout.CLUSTERED,
    "mixed": SiteLayout.MIXED,
}


@wp.func
def _annulus_site(u0: float, u1: float) -> wp.vec2f:
    """Area-uniform annulus point from two uniforms (rmin = 0.14 L, rmax = 0.52 L)."""
    rmin = 0.14 * BOX_L
    rmax = 0.52 * BOX_L
    r = wp.sqrt(rmin * rmin + u0 * (rmax * rmax - rmin * rmin))
    t = TWO_PI * u1
    return wp.vec2f(r * wp.cos(t), r * wp.sin(t))


@wp.func
def _box_site(u0: float, u1: float) -> wp.vec2f:
    return BOX_L * wp.vec2f(u0 - 0.5, u1 - 0.5)


@wp.func
def _harmonics(t: float, p0: float, p1: float, p2: float, p3: float) -> float:
    return (
        0.62 * wp.sin(2.0 * t + p0)
        + 0.44 * wp.cos(3.0 * t + p1)
        + 0.26 * wp.sin(5.0 * t + p2)
        + 0.18 * wp.cos(7.0 * t + p3)
    ) / 1.5


@wp.func
def _max_angle_gap(
    pts: wp.array(dtype=wp.vec2f),
    base: int,
    n: int,
    angles: wp.array(dtype=wp.float32),
) -> float:
    """Largest angle step between consecutive (angle-sorted) points, closing gap included;
    ``2 pi`` when a point sits on the origin. ``angles[base + i]`` is ``atan2`` of point i
    (as :func:`sort_by_angle_keyed` around the origin leaves it)."""
    gap = float(0.0)
    for i in range(n):
        p = pts[base + i]
        if wp.length(p) < 1.0e-6:
            gap = TWO_PI
        d = angles[base + (i + 1) % n] - angles[base + i]
        if d < 0.0:
            d += TWO_PI
        gap = wp.max(gap, d)
    return gap


#: ``sites_polar[s][0]`` of a site whose polar coordinates are not computed yet (its
#: ``[1]`` then holds an estimate of its angle, within TURN_TOL).
POLAR_UNSET = wp.constant(-2.0)


@wp.func
def _site_polar(
    sites: wp.array(dtype=wp.vec2f), sites_polar: wp.array(dtype=wp.vec2f), i: int
) -> wp.vec2f:
    """Polar coordinates (radius, angle) of site row ``i``, computed on first use."""
    sp = sites_polar[i]
    if sp[0] == POLAR_UNSET:
        p = sites[i]
        sp = wp.vec2f(wp.length(p), wp.atan2(p[1], p[0]))
        sites_polar[i] = sp
    return sp


@wp.func
def _angle_bucket(a: float, nb: int) -> int:
    """Bucket of an angle in [-pi, pi] among ``nb`` equal angular buckets (clamped)."""
    q = int((a + PI) * (float(nb) / TWO_PI))
    return wp.clamp(q, 0, nb - 1)


@wp.func
def _bucket_sites(
    sites_polar: wp.array(dtype=wp.vec2f),
    sb: int,
    num_sites: int,
    nb: int,
    bucket_start: wp.array(dtype=wp.int32),
    bb: int,
    bucket_sites: wp.array(dtype=wp.int32),
):
    """Counting sort of the candidate sites (radius >= 0 or not computed yet) by angular
    bucket: bucket ``q`` holds ``bucket_sites[sb + bucket_start[bb + q] .. sb +
    bucket_start[bb + q + 1])``."""
    for q in range(nb + 1):
        bucket_start[bb + q] = 0
    for s in range(num_sites):
        sp = sites_polar[sb + s]
        if sp[0] >= 0.0 or sp[0] == POLAR_UNSET:
            q = _angle_bucket(sp[1], nb)
            bucket_start[bb + q + 1] = bucket_start[bb + q + 1] + 1
    for q in range(nb):
        bucket_start[bb + q + 1] = bucket_start[bb + q + 1] + bucket_start[bb + q]
    for s in range(num_sites):
        sp = sites_polar[sb + s]
        if sp[0] >= 0.0 or sp[0] == POLAR_UNSET:
            q = _angle_bucket(sp[1], nb)
            slot = bucket_start[bb + q]
            bucket_sites[sb + slot] = s
            bucket_start[bb + q] = slot + 1
    # bucket_start[q] now holds the end of bucket q: shift back to the starts
    for k in range(nb):
        q = nb - k
        bucket_start[bb + q] = bucket_start[bb + q - 1]
    bucket_start[bb] = 0


@wp.func
def _snap_cost(sp: wp.vec2f, th: float, rt: float, slot: float) -> float:
    """Snap cost of the site at polar ``sp = (radius, angle)`` for the target (th, rt)."""
    return wp.abs(wrap_angle(sp[1] - th)) / slot + wp.abs(sp[0] - rt) / (0.13 * BOX_L)


@wp.func
def _snap_scan(
    sites: wp.array(dtype=wp.vec2f),
    sites_polar: wp.array(dtype=wp.vec2f),
    sb: int,
    bucket_start: wp.array(dtype=wp.int32),
    bb: int,
    bucket_sites: wp.array(dtype=wp.int32),
    q: int,
    th: float,
    rt: float,
    slot: float,
    best_in: wp.vec2f,
) -> wp.vec2f:
    """Fold bucket ``q``'s unused sites into ``best_in = (cost, index)``: lowest cost, ties
    to the lowest index (the order a scan by index keeps)."""
    best_cost = best_in[0]
    best = int(best_in[1])
    for m in range(bucket_start[bb + q], bucket_start[bb + q + 1]):
        s = bucket_sites[sb + m]
        sp = _site_polar(sites, sites_polar, sb + s)
        if sp[0] >= 0.0:
            cost = _snap_cost(sp, th, rt, slot)
            if cost < best_cost or (cost == best_cost and s < best):
                best_cost = cost
                best = s
    return wp.vec2f(best_cost, float(best))


@wp.func
def _snap(
    sites: wp.array(dtype=wp.vec2f),
    sites_polar: wp.array(dtype=wp.vec2f),
    sb: int,
    num_sites: int,
    nb: int,
    bucket_start: wp.array(dtype=wp.int32),
    bb: int,
    bucket_sites: wp.array(dtype=wp.int32),
    th: float,
    rt: float,
    slot: float,
) -> int:
    """Index of the unused site of least snap cost below 1e30 (ties to the lowest index),
    -1 when none: the result of a scan of every site by index.

    Buckets are visited outward from the target angle and the search stops once the next
    bucket on either side is farther in angle alone (less a 1e-4 rad margin for rounding)
    than the best cost, since the radial term is >= 0 and float rounding is monotone.
    """
    best_cost = float(1.0e30)
    best = int(-1)
    if not (wp.isfinite(th) and wp.isfinite(rt)):
        for s in range(num_sites):
            sp = _site_polar(sites, sites_polar, sb + s)
            if sp[0] >= 0.0:
                cost = _snap_cost(sp, th, rt, slot)
                if cost < best_cost:
                    best_cost = cost
                    best = s
        return best
    bw = TWO_PI / float(nb)
    thw = wrap_angle(th)
    bt = _angle_bucket(thw, nb)
    # site indices < 2^24 are exact in the float32 slot of the pair
    acc = _snap_scan(
        sites,
        sites_polar,
        sb,
        bucket_start,
        bb,
        bucket_sites,
        bt,
        th,
        rt,
        slot,
        wp.vec2f(1.0e30, -1.0),
    )
    right = int(1)
    left = int(1)
    for _v in range(nb - 1):
        d_right = float(bt + right) * bw - PI - thw
        d_left = thw - (float(bt - left + 1) * bw - PI)
        lb_right = (d_right - 1.0e-4) / slot
        lb_left = (d_left - 1.0e-4) / slot
        if lb_right > acc[0] and lb_left > acc[0]:
            break
        q = int(0)
        if lb_right <= lb_left:
            q = (bt + right) % nb
            right += 1
        else:
            q = ((bt - left) % nb + nb) % nb
            left += 1
        acc = _snap_scan(
            sites, sites_polar, sb, bucket_start, bb, bucket_sites, q, th, rt, slot, acc
        )
    return int(acc[1])


@wp.kernel
def _voronoi_kernel(
    # inputs
    eff_seed: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    # parameters
    radial_variation: wp.array(dtype=wp.float32),
    angular_jitter: wp.array(dtype=wp.float32),
    scale: wp.array(dtype=wp.float32),
    # static
    layout: int,
    num_sites: int,
    k: int,
    npseg: int,
    num_points: int,
    nb: int,
    cross_nch: int,
    # scratch
    sites: wp.array(dtype=wp.vec2f),
    sites_polar: wp.array(dtype=wp.vec2f),
    bucket_start: wp.array(dtype=wp.int32),
    bucket_sites: wp.array(dtype=wp.int32),
    clusters: wp.array(dtype=wp.vec3f),
    anchors: wp.array(dtype=wp.vec2f),
    anchor_angles: wp.array(dtype=wp.float32),
    verts: wp.array(dtype=wp.vec2f),
    loop: DenseScratch,
    # outputs
    line_out: wp.array(dtype=wp.vec2f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    st = stage_rng(eff_seed[e], SALT_VORONOI)
    half = 0.5 * BOX_L
    # ---- site field (per-env scratch; polar coordinates kept for the snap)
    # layout codes are SiteLayout: 0 box, 1 void_ring, 2 clustered, 3 mixed
    sb = e * num_sites
    cb = e * NUM_CLUSTERS
    if layout == 2:
        # cluster centres and scatter radii
        c_phase = TWO_PI * wp.randf(st)
        c_base = (0.24 + 0.10 * wp.randf(st)) * BOX_L
        for c in range(NUM_CLUSTERS):
            ca = c_phase + TWO_PI * float(c) / float(NUM_CLUSTERS)
            cr = c_base * (0.82 + 0.30 * wp.randf(st))
            clusters[cb + c] = wp.vec3f(
                cr * wp.cos(ca), cr * wp.sin(ca), (0.025 + 0.08 * wp.randf(st)) * BOX_L
            )
    for s in range(num_sites):
        p = wp.vec2f(0.0, 0.0)
        if layout == 0:
            p = _box_site(wp.randf(st), wp.randf(st))
        elif layout == 1:
            p = _annulus_site(wp.randf(st), wp.randf(st))
        elif layout == 2:
            if wp.randf(st) < 0.22:
                p = _annulus_site(wp.randf(st), wp.randf(st))
            else:
                cl = clusters[cb + s % NUM_CLUSTERS]
                rr = cl[2] * wp.sqrt(wp.randf(st))
                tt = TWO_PI * wp.randf(st)
                p = wp.vec2f(cl[0] + rr * wp.cos(tt), cl[1] + rr * wp.sin(tt))
        else:
            if wp.randf(st) < 0.65:
                p = _annulus_site(wp.randf(st), wp.randf(st))
            else:
                p = _box_site(wp.randf(st), wp.randf(st))
        p = wp.vec2f(wp.clamp(p[0], -half, half), wp.clamp(p[1], -half, half))
        sites[sb + s] = p
        # polar coordinates on first use by the snap; an angle estimate buckets the site
        if wp.isfinite(p[0]) and wp.isfinite(p[1]) and (p[0] != 0.0 or p[1] != 0.0):
            sites_polar[sb + s] = wp.vec2f(POLAR_UNSET, atan2_estimate(p[1], p[0]))
        else:
            sites_polar[sb + s] = wp.vec2f(wp.length(p), wp.atan2(p[1], p[0]))
    # ---- anchor targets and snap
    boost = 1.0
    if layout == 1:
        boost = 1.10
    elif layout == 2:
        boost = 1.16
    elif layout == 3:
        boost = 1.06
    amp = wp.clamp(radial_variation[e] * boost, 0.0, 0.85)
    jit = angular_jitter[e]
    rho = TWO_PI * wp.randf(st)
    ph0 = TWO_PI * wp.randf(st)
    ph1 = TWO_PI * wp.randf(st)
    ph2 = TWO_PI * wp.randf(st)
    ph3 = TWO_PI * wp.randf(st)
    slot = TWO_PI / float(k)
    bb = e * (nb + 1)
    _bucket_sites(sites_polar, sb, num_sites, nb, bucket_start, bb, bucket_sites)
    ab = e * k
    vb = e * 2 * k
    for i in range(k):
        th = rho + slot * float(i) + (2.0 * wp.randf(st) - 1.0) * jit
        rt = wp.clamp(
            0.34 * BOX_L * (1.0 + amp * _harmonics(th, ph0, ph1, ph2, ph3)),
            0.16 * BOX_L,
            0.52 * BOX_L,
        )
        # keep the target (in the Chaikin buffer) for the order fallback
        verts[vb + i] = wp.vec2f(rt * wp.cos(th), rt * wp.sin(th))
        # unused sites only (a used site's radius is set to -1)
        best = _snap(
            sites, sites_polar, sb, num_sites, nb, bucket_start, bb, bucket_sites, th, rt, slot
        )
        if best < 0:
            best = 0  # no finite cost (a non-finite field value): keep the index in bounds
        anchors[ab + i] = sites[sb + best]
        sites_polar[sb + best] = wp.vec2f(-1.0, 0.0)
    # ---- angular order: star-shaped around the origin, hence simple
    sort_by_angle_keyed(anchors, ab, k, wp.vec2f(0.0, 0.0), anchor_angles, ab)
    if _max_angle_gap(anchors, ab, k, anchor_angles) >= PI - 1.0e-3:
        for i in range(k):
            anchors[ab + i] = verts[vb + i]
        sort_by_angle_keyed(anchors, ab, k, wp.vec2f(0.0, 0.0), anchor_angles, ab)
    # ---- one Chaikin pass -> 2K vertices
    for i in range(k):
        a = anchors[ab + i]
        b = anchors[ab + (i + 1) % k]
        verts[vb + 2 * i] = 0.75 * a + 0.25 * b
        verts[vb + 2 * i + 1] = 0.25 * a + 0.75 * b
    nv = 2 * k
    # the spline, else the Chaikin polygon, else the anchor polygon
    emit_spline(verts, vb, nv, npseg, anchors, ab, k, loop, cross_nch, e, num_points,
                EXTENT * scale[e], line_out)  # fmt: skip


CONTROL_POINTS = Tunable(
    "control_points",
    18,
    lo=6,
    hi=64,
    config="voronoi_control_points",
    unit="anchors",
    doc="anchors K snapped to the site field.",
)
NUM_SITES = Tunable(
    "num_sites",
    256,
    lo=CONTROL_POINTS,
    hi=4096,
    config="voronoi_num_sites",
    unit="sites",
    doc="sites S of the random site field (at least one per anchor).",
)
SITE_LAYOUT = Tunable(
    "site_layout",
    "void_ring",
    choices=tuple(_LAYOUT_CODES),
    config="voronoi_site_layout",
    doc="site layout: box (uniform), void_ring (annulus), clustered (6 clusters) or mixed.",
)
RADIAL_VARIATION = Tunable(
    "radial_variation",
    0.62,
    lo=0.0,
    hi=1.0,
    dynamic=True,
    config="voronoi_radial_variation",
    doc="amplitude of the anchor target-radius modulation.",
)
ANGULAR_JITTER = Tunable(
    "angular_jitter",
    0.08,
    lo=0.0,
    hi=0.5,
    dynamic=True,
    config="voronoi_angular_jitter",
    unit="rad",
    doc="anchor target angle jitter U(-j, j).",
)


def _num_buckets(num_sites: int) -> int:
    """Angular buckets of the snap search: about four sites each."""
    return max(8, min(1024, num_sites // 4))


class SamplerVoronoi(Stage):
    """Voronoi site-field sampler (``generator="voronoi"``); loops are counter-clockwise."""

    role = "sampler"
    FIELDS = (
        CONTROL_POINTS,
        NUM_SITES,
        SITE_LAYOUT,
        SEGMENT_POINTS,
        RADIAL_VARIATION,
        ANGULAR_JITTER,
        SCALE,
    )

    def allocate(self, ws: Workspace) -> None:
        v, E = self.values, ws.layout.num_envs
        self.layout_code = int(_LAYOUT_CODES[v.site_layout])
        S, K = v.num_sites, v.control_points
        self.sites = ws.zeros(E * S, wp.vec2f, f"{self.name} sites")
        self.sites_polar = ws.zeros(E * S, wp.vec2f, f"{self.name} sites (polar)")
        self.num_buckets = _num_buckets(S)
        self.bucket_start = ws.zeros(
            E * (self.num_buckets + 1), wp.int32, f"{self.name} site bucket starts"
        )
        self.bucket_sites = ws.zeros(E * S, wp.int32, f"{self.name} sites by bucket")
        self.clusters = ws.zeros(E * NUM_CLUSTERS, wp.vec3f, f"{self.name} clusters")
        self.anchors = ws.zeros(E * K, wp.vec2f, f"{self.name} anchors")
        self.anchor_angles = ws.zeros(E * K, wp.float32, f"{self.name} anchor angles")
        self.verts = ws.zeros(E * 2 * K, wp.vec2f, f"{self.name} vertices")
        self.loop = DenseLoop(ws, 2 * K, v.num_points_per_segment, self.name)

    def enqueue(self, ws: Workspace, params: dict) -> None:
        v = self.values
        launch_sampler(
            ws,
            _voronoi_kernel,
            parameters=[params["radial_variation"], params["angular_jitter"], params["scale"]],
            static=[
                self.layout_code,
                v.num_sites,
                v.control_points,
                v.num_points_per_segment,
                ws.layout.num_points,
                self.num_buckets,
                self.loop.nch,
            ],
            scratch=[
                self.sites,
                self.sites_polar,
                self.bucket_start,
                self.bucket_sites,
                self.clusters,
                self.anchors,
                self.anchor_angles,
                self.verts,
                self.loop.scratch,
            ],
        )


__all__ = ["SamplerVoronoi", "SiteLayout"]
