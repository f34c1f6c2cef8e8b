"""Kernels of the circuit sampler (``stages/circuit.py`` holds its fields and its stage).

One thread per env builds a closed circuit in metres, in attempts (each one a fresh draw from
the env's stream), and writes the first attempt that passes its own clearance check:

1. **Layout.** A random polyomino of grid cells (simply connected, grown one cell at a time
   with the simple-point test, so its boundary is one simple loop) is traced into a
   rectilinear polygon (counter-clockwise). Columns and rows get random widths, vertices a
   random jitter, the layout a random squash (long, thin folds), some corners are cut into
   two, and the polygon is rotated and scaled to the drawn lap length.
2. **Features.** Until the polygon has the drawn number of corners, features are inserted
   into edges drawn by length: esses (2-4 alternating bends), jogs (a short lateral offset:
   a chicane), spikes (out to a hairpin and back) and single bends. An insertion is kept
   only when no turn exceeds ``THETA_MAX``, every changed corner still fits the least radius
   (:func:`corner_fits`) and its new edges keep the layout clearance from every other edge.
3. **Corners.** Every vertex becomes a symmetric corner: a clothoid ramp, a circular arc of
   radius ``R`` and a ramp back (curvature linear in arc length on the ramps, ``RAMP`` of
   the turn on them), turning by the vertex's angle. ``R`` is drawn around
   ``corner_radius_median * |turn|^-RADIUS_EXP`` (tight hairpins, medium corners, fast
   sweepers), kept in ``[corner_radius_min, corner_radius_max]``, above the least radius the
   road widths allow (:func:`least_radius`) and inside the room of the adjacent edges. The
   polygon is then scaled so that the lap has the drawn length, and the lap starts on the
   longest straight.
4. **Widths.** Each side's width varies smoothly along the lap (three sinusoids, narrowing by
   up to ``road_narrowing``); the start/finish straight is ``start_widening`` times wider;
   the lap mean is the drawn width; no width exceeds the config's ``half_width``.
5. **Check.** A coarse polyline of the circuit (straights in bowed pieces, corners in
   quarters) must keep every two pieces farther apart along the lap than the validity band
   at least the sum of their widths (plus margins) apart; else the next attempt runs. After
   ``layout_attempts`` failures the env gets a rounded rectangle of the drawn length.
6. **Emission.** ``num_points`` points at uniform arc spacing, from the start of the
   start/finish straight, and their left/right widths. The straights bow and wiggle gently
   (lateral offsets that vanish with their slope at both ends, curvature about
   ``straight_bend``).

Everything is float32 in metres; the only randomness is ``stage_rng(eff_seed, SALT)``.
"""

from __future__ import annotations

import warp as wp

from ..geometry import HALF_PI, PI, TWO_PI, cross2
from ..seeds import stage_rng

wp.set_module_options({"enable_backward": False})

SALT_CIRCUIT = wp.constant(wp.uint32(0xC1BC0175))

#: Cells per side of the layout grid.
GRID = 6
#: Most vertices of a circuit's polygon (the ``corners_max`` bound leaves room for the
#: layout's own vertices).
MAX_VERTICES = 64
#: Most pieces of a straight in the clearance check, and their longest length (m).
STRAIGHT_PIECES = 8
STRAIGHT_PIECE = wp.constant(100.0)
#: Coarse points per vertex in the clearance check (a straight's pieces, a corner's quarters).
CHECK_POINTS = STRAIGHT_PIECES + 4
#: Fewest and most cells of the layout polyomino.
CELLS_LO = wp.constant(4)
CELLS_HI = wp.constant(12)
#: Relative spread of the column widths / row heights of the layout grid.
CELL_SPREAD = wp.constant(0.6)
#: Least height / width ratio of a layout cell (each env draws its own in [SQUASH_LO, 1]).
SQUASH_LO = wp.constant(0.35)
#: Vertex jitter of the layout, in cells.
JITTER = wp.constant(0.3)
#: Chance that a layout corner is cut into two.
P_CUT = wp.constant(0.45)
#: Chances of the feature kinds (esses, jog, spike; the rest are single bends).
P_ESS = wp.constant(0.3)
P_JOG = wp.constant(0.25)
P_SPIKE = wp.constant(0.2)
#: Largest turn at one vertex, rad (a sharper hairpin is two vertices).
THETA_MAX = wp.constant(2.7)
#: Share of a corner's turn on its clothoid ramps (the rest on the arc).
RAMP = wp.constant(0.8)
#: Radius law: ``R = corner_radius * |turn|^-RADIUS_EXP * exp(RADIUS_SPREAD * N(0, 1))``.
RADIUS_EXP = wp.constant(1.1)
RADIUS_SPREAD = wp.constant(0.6)
#: Turns below this are gentle bends: their radius fills the room of their edges.
GENTLE = wp.constant(0.3)
#: Shortest straight between two corners, m.
STRAIGHT_MIN = wp.constant(12.0)
#: Extra clearance of the layout edges (m) over twice the widest half width.
LAYOUT_MARGIN = wp.constant(8.0)
#: Margin of the final clearance check, m, and the relative margin on the widths.
CHECK_MARGIN = wp.constant(2.0)
CHECK_REL = wp.constant(1.04)
#: Margin of the least corner radius over what the validity band needs (relative).
RADIUS_MARGIN = wp.constant(1.04)
#: Simpson panels of a unit corner (a multiple of 4: quarter points are panel ends).
PANELS = wp.constant(32)
#: Longest Simpson step along a corner while emitting, m.
EMIT_STEP = wp.constant(1.0)
#: Length of the width ramps at the ends of the start/finish straight, m (at most a third of
#: the straight).
WIDEN_RAMP = wp.constant(80.0)
#: Half-wave length of a straight's wiggle, m.
WIGGLE = wp.constant(120.0)
#: Radius of the fallback's corners, m.
FALLBACK_RADIUS = wp.constant(60.0)
vec8i = wp.types.vector(length=8, dtype=wp.int32)
#: Ring of the 8 neighbours (N, NE, E, SE, S, SW, W, NW) of a grid cell.
RING_DI = wp.constant(vec8i(0, 1, 1, 1, 0, -1, -1, -1))
RING_DJ = wp.constant(vec8i(1, 1, 0, -1, -1, -1, 0, 1))


# ----------------------------------------------------------------------------- small helpers
@wp.func
def param(x: float, lo: float, hi: float) -> float:
    """A per-env parameter kept inside its declared range (NaN: ``lo``); an out-of-range
    value marks the env PARAM_RANGE, but the kernel must stay safe for it."""
    if not (x == x):
        return lo
    return wp.clamp(x, lo, hi)


@wp.func
def uniform(st: wp.uint32, lo: float, hi: float):
    """A float uniform in ``[lo, hi)`` and the advanced state."""
    u = wp.randf(st)
    return lo + (hi - lo) * u, st


@wp.func
def triangular(st: wp.uint32, lo: float, hi: float):
    """A float of the symmetric triangular law on ``[lo, hi]`` (the mean of two uniforms)."""
    u = 0.5 * (wp.randf(st) + wp.randf(st))
    return lo + (hi - lo) * u, st


@wp.func
def sign_draw(st: wp.uint32):
    s = float(1.0)
    if wp.randf(st) < 0.5:
        s = -1.0
    return s, st


@wp.func
def left_of(u: wp.vec2f) -> wp.vec2f:
    return wp.vec2f(-u[1], u[0])


@wp.func
def point_segment(p: wp.vec2f, a: wp.vec2f, b: wp.vec2f) -> float:
    d = b - a
    dd = wp.dot(d, d)
    t = float(0.0)
    if dd > 1.0e-12:
        t = wp.clamp(wp.dot(p - a, d) / dd, 0.0, 1.0)
    return wp.length(a + t * d - p)


@wp.func
def segment_distance(a: wp.vec2f, b: wp.vec2f, c: wp.vec2f, d: wp.vec2f) -> float:
    """Least distance between segments ab and cd (0 when they cross)."""
    o1 = cross2(b - a, c - a)
    o2 = cross2(b - a, d - a)
    o3 = cross2(d - c, a - c)
    o4 = cross2(d - c, b - c)
    if ((o1 > 0.0) != (o2 > 0.0)) and ((o3 > 0.0) != (o4 > 0.0)):
        return 0.0
    return wp.min(
        wp.min(point_segment(a, c, d), point_segment(b, c, d)),
        wp.min(point_segment(c, a, b), point_segment(d, a, b)),
    )


@wp.func
def turn_at(verts: wp.array(dtype=wp.vec2f), vb: int, m: int, k: int) -> float:
    """Signed turn of the polygon at vertex ``k`` (+ left), rad."""
    p = verts[vb + (k + m - 1) % m]
    c = verts[vb + k]
    n = verts[vb + (k + 1) % m]
    a = c - p
    b = n - c
    return wp.atan2(cross2(a, b), wp.dot(a, b))


@wp.func
def edge_length(verts: wp.array(dtype=wp.vec2f), vb: int, m: int, k: int) -> float:
    return wp.length(verts[vb + (k + 1) % m] - verts[vb + k])


@wp.func
def tangent_ratio(theta: float) -> float:
    """Tangent length of the unit-radius corner turning by ``theta`` (rad, >= 0): the
    distance from its start to the vertex, by 8 Simpson panels of its heading (see
    :func:`unit_corner`, which this matches to about 1e-4)."""
    th = wp.clamp(theta, 1.0e-3, THETA_MAX)
    total = (1.0 + RAMP) * th
    lr = RAMP * th
    p = wp.vec2f(0.0, 0.0)
    h = total / 8.0
    for q in range(8):
        s0 = float(q) * h
        a = ramp_heading(th, lr, total - lr, total, s0)
        b = ramp_heading(th, lr, total - lr, total, s0 + 0.5 * h)
        c = ramp_heading(th, lr, total - lr, total, s0 + h)
        p = p + (h / 6.0) * wp.vec2f(
            wp.cos(a) + 4.0 * wp.cos(b) + wp.cos(c), wp.sin(a) + 4.0 * wp.sin(b) + wp.sin(c)
        )
    return p[0] - p[1] * wp.cos(th) / wp.sin(th)


@wp.func
def ramp_heading(theta: float, lr: float, arc_end: float, total: float, s: float) -> float:
    """Heading at arc ``s`` of the unit corner turning by ``theta``: a ramp up to ``lr``, the
    arc up to ``arc_end``, a ramp down to ``total``."""
    h = float(0.0)
    if s <= lr:
        h = 0.5 * s * s / wp.max(lr, 1.0e-12)
    elif s <= arc_end:
        h = 0.5 * lr + (s - lr)
    else:
        r = wp.max(total - s, 0.0)
        h = theta - 0.5 * r * r / wp.max(lr, 1.0e-12)
    return h


@wp.func
def corner_fits(verts: wp.array(dtype=wp.vec2f), vb: int, m: int, k: int, r_need: float) -> bool:
    """Vertex ``k``'s corner of radius ``r_need`` (with 5% room) fits half of each adjacent
    edge less half the shortest straight."""
    th = wp.abs(turn_at(verts, vb, m, k))
    e_in = edge_length(verts, vb, m, (k + m - 1) % m)
    e_out = edge_length(verts, vb, m, k)
    room = 0.5 * (wp.min(e_in, e_out) - STRAIGHT_MIN)
    return room >= 1.05 * r_need * tangent_ratio(th)


@wp.func
def edge_clear(verts: wp.array(dtype=wp.vec2f), vb: int, m: int, i: int, clear: float) -> bool:
    """Edge ``i`` keeps ``clear`` from every edge that shares no vertex with it."""
    a = verts[vb + i]
    b = verts[vb + (i + 1) % m]
    for j in range(m):
        gap = (j - i + m) % m
        if gap > 1 and gap < m - 1:
            if segment_distance(a, b, verts[vb + j], verts[vb + (j + 1) % m]) < clear:
                return False
    return True


@wp.func
def polygon_ok(
    verts: wp.array(dtype=wp.vec2f), vb: int, m: int, clear: float, r_need: float
) -> bool:
    """No turn above THETA_MAX, every corner fits ``r_need`` (:func:`corner_fits`), and every
    pair of edges without a shared vertex at least ``clear`` apart."""
    for k in range(m):
        if wp.abs(turn_at(verts, vb, m, k)) > THETA_MAX:
            return False
        if not corner_fits(verts, vb, m, k, r_need):
            return False
    for i in range(m):
        if not edge_clear(verts, vb, m, i, clear):
            return False
    return True


@wp.func
def insertion_ok(
    verts: wp.array(dtype=wp.vec2f),
    vb: int,
    m: int,
    first: int,
    count: int,
    clear: float,
    r_need: float,
) -> bool:
    """After inserting ``count`` vertices at ``first``: the turns and corner fits of the
    vertices from ``first - 1`` to ``first + count``, the clearance of the edges from
    ``first - 1`` to ``first + count - 1``."""
    for q in range(-1, count + 1):
        k = (first + q + m) % m
        if wp.abs(turn_at(verts, vb, m, k)) > THETA_MAX:
            return False
        if not corner_fits(verts, vb, m, k, r_need):
            return False
    for q in range(-1, count):
        k = (first + q + m) % m
        if not edge_clear(verts, vb, m, k, clear):
            return False
    return True


@wp.func
def shift_up(verts: wp.array(dtype=wp.vec2f), vb: int, m: int, at: int, count: int):
    """Open ``count`` slots at index ``at`` (rows ``at ..`` move up by ``count``)."""
    k = m - 1
    while k >= at:
        verts[vb + k + count] = verts[vb + k]
        k = k - 1


@wp.func
def shift_down(verts: wp.array(dtype=wp.vec2f), vb: int, m: int, at: int, count: int):
    """Close the ``count`` slots at index ``at`` (undo :func:`shift_up`)."""
    for k in range(at, m - count):
        verts[vb + k] = verts[vb + k + count]


# ----------------------------------------------------------------------------- layout
@wp.func
def occupied(occ: wp.array(dtype=wp.int32), ob: int, i: int, j: int) -> int:
    if i < 0 or j < 0 or i >= GRID or j >= GRID:
        return 0
    return occ[ob + i * GRID + j]


@wp.func
def simple_addition(occ: wp.array(dtype=wp.int32), ob: int, i: int, j: int) -> bool:
    """Adding cell (i, j) keeps the polyomino simply connected with a simple boundary: its
    occupied 8-neighbours form one circular run that holds an edge neighbour."""
    runs = int(0)
    edge = int(0)
    prev = occupied(occ, ob, i + RING_DI[7], j + RING_DJ[7])
    for q in range(8):
        b = occupied(occ, ob, i + RING_DI[q], j + RING_DJ[q])
        if b != 0 and prev == 0:
            runs = runs + 1
        if b != 0 and q % 2 == 0:
            edge = 1
        prev = b
    return edge != 0 and runs == 1


@wp.func
def grow_polyomino(st: wp.uint32, occ: wp.array(dtype=wp.int32), ob: int, cells: int):
    """A random simply connected polyomino of up to ``cells`` cells in the grid."""
    for q in range(GRID * GRID):
        occ[ob + q] = 0
    i0 = wp.min(int(wp.randf(st) * float(GRID)), GRID - 1)
    j0 = wp.min(int(wp.randf(st) * float(GRID)), GRID - 1)
    occ[ob + i0 * GRID + j0] = 1
    count = int(1)
    tries = int(0)
    while count < cells and tries < 40 * cells:
        tries = tries + 1
        i = wp.min(int(wp.randf(st) * float(GRID)), GRID - 1)
        j = wp.min(int(wp.randf(st) * float(GRID)), GRID - 1)
        if occ[ob + i * GRID + j] == 0:
            if simple_addition(occ, ob, i, j):
                occ[ob + i * GRID + j] = 1
                count = count + 1
    return st


@wp.func
def trace_boundary(
    occ: wp.array(dtype=wp.int32),
    ob: int,
    nxt: wp.array(dtype=wp.int32),
    nb: int,
    verts: wp.array(dtype=wp.vec2f),
    vb: int,
    maxv: int,
) -> int:
    """The polyomino's boundary, counter-clockwise, as grid-corner vertices ``(i, j)`` with
    the collinear ones dropped; returns the vertex count (0 when it does not fit ``maxv``)."""
    G1 = GRID + 1
    for q in range(G1 * G1):
        nxt[nb + q] = -1
    start = int(-1)
    for i in range(GRID):
        for j in range(GRID):
            if occ[ob + i * GRID + j] != 0:
                # boundary edges with the cell on their left
                if occupied(occ, ob, i, j - 1) == 0:
                    nxt[nb + i * G1 + j] = (i + 1) * G1 + j
                    start = i * G1 + j
                if occupied(occ, ob, i + 1, j) == 0:
                    nxt[nb + (i + 1) * G1 + j] = (i + 1) * G1 + j + 1
                if occupied(occ, ob, i, j + 1) == 0:
                    nxt[nb + (i + 1) * G1 + j + 1] = i * G1 + j + 1
                if occupied(occ, ob, i - 1, j) == 0:
                    nxt[nb + i * G1 + j + 1] = i * G1 + j
    if start < 0:
        return 0
    m = int(0)
    v = start
    prev_d = int(-1)
    steps = int(0)
    while steps < G1 * G1:
        steps = steps + 1
        w = nxt[nb + v]
        if w < 0:
            return 0
        d = w - v  # the step's direction code
        if d != prev_d:
            if m >= maxv:
                return 0
            verts[vb + m] = wp.vec2f(float(v // G1), float(v % G1))
            m = m + 1
        prev_d = d
        v = w
        if v == start:
            break
    # the first vertex is collinear when the last step runs on in its direction
    if m > 0 and nxt[nb + start] - start == prev_d:
        for k in range(m - 1):
            verts[vb + k] = verts[vb + k + 1]
        m = m - 1
    return m


@wp.func
def perimeter(verts: wp.array(dtype=wp.vec2f), vb: int, m: int) -> float:
    p = float(0.0)
    for k in range(m):
        p = p + edge_length(verts, vb, m, k)
    return p


@wp.func
def scale_polygon(verts: wp.array(dtype=wp.vec2f), vb: int, m: int, s: float):
    for k in range(m):
        verts[vb + k] = s * verts[vb + k]


@wp.func
def draw_layout(
    st: wp.uint32,
    occ: wp.array(dtype=wp.int32),
    ob: int,
    nxt: wp.array(dtype=wp.int32),
    nb: int,
    verts: wp.array(dtype=wp.vec2f),
    tmp: wp.array(dtype=wp.vec2f),
    vb: int,
    lines: wp.array(dtype=wp.vec2f),
    lb: int,
    target: int,
    length: float,
):
    """Steps 1 of the module doc: the layout polygon in ``verts`` (perimeter ``length``, m);
    returns its vertex count (0: no usable layout) and the state."""
    cells = CELLS_LO + int(wp.randf(st) * float(CELLS_HI - CELLS_LO + 1))
    cells = wp.clamp(cells, CELLS_LO, wp.max(CELLS_LO, wp.min(CELLS_HI, (2 * target) // 3)))
    st = grow_polyomino(st, occ, ob, cells)
    m = trace_boundary(occ, ob, nxt, nb, tmp, vb, MAX_VERTICES)
    if m < 4:
        return 0, st
    # grid line positions: columns and rows of random widths (cumulative sums, in cells;
    # grid line q of both axes in lines[lb + q] = (x, y))
    lines[lb] = wp.vec2f(0.0, 0.0)
    for q in range(GRID):
        dx = 1.0 + CELL_SPREAD * (2.0 * wp.randf(st) - 1.0)
        dy = 1.0 + CELL_SPREAD * (2.0 * wp.randf(st) - 1.0)
        lines[lb + q + 1] = lines[lb + q] + wp.vec2f(dx, dy)
    for k in range(m):
        g = tmp[vb + k]
        jx = JITTER * (2.0 * wp.randf(st) - 1.0)
        jy = JITTER * (2.0 * wp.randf(st) - 1.0)
        tmp[vb + k] = wp.vec2f(lines[lb + int(g[0])][0] + jx, lines[lb + int(g[1])][1] + jy)
    # corner cuts (each cut adds a vertex), while the polygon stays below the target
    out = int(0)
    room = target - m
    for k in range(m):
        a = tmp[vb + (k + m - 1) % m]
        b = tmp[vb + k]
        c = tmp[vb + (k + 1) % m]
        if room > 0 and wp.randf(st) < P_CUT:
            f1 = 0.1 + 0.3 * wp.randf(st)
            f2 = 0.1 + 0.3 * wp.randf(st)
            verts[vb + out] = b + f1 * (a - b)
            verts[vb + out + 1] = b + f2 * (c - b)
            out = out + 2
            room = room - 1
        else:
            verts[vb + out] = b
            out = out + 1
    m = out
    # a squashed layout (long, thin folds), then rotation and scale to the lap length
    squash = SQUASH_LO + (1.0 - SQUASH_LO) * wp.randf(st)
    for k in range(m):
        verts[vb + k] = wp.vec2f(verts[vb + k][0], squash * verts[vb + k][1])
    ang = TWO_PI * wp.randf(st)
    ca = wp.cos(ang)
    sa = wp.sin(ang)
    per = perimeter(verts, vb, m)
    s = length / wp.max(per, 1.0e-6)
    for k in range(m):
        p = verts[vb + k]
        verts[vb + k] = wp.vec2f(s * (ca * p[0] - sa * p[1]), s * (sa * p[0] + ca * p[1]))
    return m, st


@wp.func
def insert_features(
    st: wp.uint32,
    verts: wp.array(dtype=wp.vec2f),
    vb: int,
    m_in: int,
    target: int,
    clear: float,
    r_need: float,
):
    """Step 2 of the module doc: esses, jogs and bends until ``target`` vertices (or the
    tries run out); returns the vertex count and the state."""
    m = m_in
    tries = int(0)
    while m < target and tries < 4 * target and m + 4 <= MAX_VERTICES:
        tries = tries + 1
        # an edge drawn by length
        per = perimeter(verts, vb, m)
        pick = wp.randf(st) * per
        i = int(0)
        acc = float(0.0)
        for k in range(m):
            el = edge_length(verts, vb, m, k)
            if acc + el <= pick:
                acc = acc + el
                i = k + 1
        i = wp.min(i, m - 1)
        a = verts[vb + i]
        b = verts[vb + (i + 1) % m]
        el = wp.length(b - a)
        u = (b - a) / wp.max(el, 1.0e-6)
        n = left_of(u)
        kind = wp.randf(st)
        count = int(0)
        if kind < P_ESS:
            # esses: 2-4 alternating offsets over part of the edge
            count = 2 + wp.min(int(wp.randf(st) * 3.0), 2)
            span = (0.35 + 0.45 * wp.randf(st)) * el
            f0 = (0.05 * el + wp.randf(st) * wp.max(0.9 * el - span, 0.0)) / wp.max(el, 1.0e-6)
            amp, st = uniform(st, 0.08, 0.22)
            sg, st = sign_draw(st)
            amp = amp * span * sg
            shift_up(verts, vb, m, i + 1, count)
            for q in range(count):
                off = amp
                if q % 2 == 1:
                    off = -amp
                at = f0 * el + span * (float(q) + 0.5) / float(count)
                verts[vb + i + 1 + q] = a + at * u + off * n
        elif kind < P_ESS + P_JOG:
            # a jog: the road steps sideways over a short stretch (a chicane)
            count = 2
            f = 0.15 + 0.6 * wp.randf(st)
            dl, st = uniform(st, 20.0, 70.0)
            d, st = uniform(st, 10.0, 35.0)
            sg, st = sign_draw(st)
            if f * el + dl > 0.85 * el:
                count = 0
            else:
                shift_up(verts, vb, m, i + 1, count)
                p1 = a + (f * el) * u
                verts[vb + i + 1] = p1
                verts[vb + i + 2] = p1 + dl * u + (sg * d) * n
        elif kind < P_ESS + P_JOG + P_SPIKE:
            # a spike: out to a hairpin and back (the legs diverge from its tip)
            count = 3
            d, st = uniform(st, 60.0, 160.0)
            depth, st = uniform(st, 0.8, 1.6)
            sg, st = sign_draw(st)
            f = (0.1 * el + wp.randf(st) * wp.max(0.8 * el - d, 0.0)) / wp.max(el, 1.0e-6)
            if f * el + d > 0.9 * el:
                count = 0
            else:
                shift_up(verts, vb, m, i + 1, count)
                p1 = a + (f * el) * u
                verts[vb + i + 1] = p1
                verts[vb + i + 2] = p1 + (0.5 * d) * u + (sg * depth * d) * n
                verts[vb + i + 3] = p1 + d * u
        else:
            # a bend: the middle of the edge pushed sideways
            count = 1
            f = 0.3 + 0.4 * wp.randf(st)
            eps, st = uniform(st, 0.12, 0.45)
            sg, st = sign_draw(st)
            shift_up(verts, vb, m, i + 1, count)
            verts[vb + i + 1] = a + (f * el) * u + (sg * eps * el) * n
        if count > 0:
            m = m + count
            if not insertion_ok(verts, vb, m, i + 1, count, clear, r_need):
                shift_down(verts, vb, m, i + 1, count)
                m = m - count
    return m, st


# ----------------------------------------------------------------------------- corners
@wp.func
def unit_heading(theta: float, s: float) -> float:
    """Heading at arc ``s`` of the unit-radius corner turning by ``theta >= 0`` (ramps of
    length ``RAMP * theta``, arc of ``(1 - RAMP) * theta``, total ``(1 + RAMP) * theta``)."""
    lr = RAMP * theta
    la = theta - lr
    return ramp_heading(theta, lr, lr + la, la + 2.0 * lr, s)


@wp.func
def simpson(theta: float, s0: float, s1: float) -> wp.vec2f:
    """Displacement of the unit corner from arc ``s0`` to ``s1`` (one Simpson panel)."""
    h0 = unit_heading(theta, s0)
    hm = unit_heading(theta, 0.5 * (s0 + s1))
    h1 = unit_heading(theta, s1)
    c = wp.cos(h0) + 4.0 * wp.cos(hm) + wp.cos(h1)
    s = wp.sin(h0) + 4.0 * wp.sin(hm) + wp.sin(h1)
    return ((s1 - s0) / 6.0) * wp.vec2f(c, s)


@wp.func
def unit_corner(theta: float, qp: wp.array(dtype=wp.vec2f), qb: int) -> wp.vec2f:
    """The unit-radius corner turning by ``theta`` in ``[0, THETA_MAX]``: writes its quarter
    points (local frame: start at the origin heading +x) to ``qp[qb .. qb + 3)``; returns
    (tangent length t: start to the vertex, corner length)."""
    total = (1.0 + RAMP) * theta
    p = wp.vec2f(0.0, 0.0)
    h = total / float(PANELS)
    for q in range(PANELS):
        p = p + simpson(theta, float(q) * h, float(q + 1) * h)
        if (q + 1) % (PANELS // 4) == 0 and q + 1 < PANELS:
            qp[qb + (q + 1) // (PANELS // 4) - 1] = p
    t = float(0.0)
    if theta > 1.0e-4:
        t = p[0] - p[1] * wp.cos(theta) / wp.sin(theta)
    return wp.vec2f(t, total)


@wp.func
def least_radius(w_in: float, w_max: float) -> float:
    """Least corner radius (m) that validity accepts with inner width ``w_in`` and the env's
    widest half width ``w_max`` (m): the curvature radius above the inner width, and two
    points of the arc farther apart along it than the validity band (``2 * w_max``) at
    least ``2 * w_in`` apart, i.e. ``R sin(w_max / R) >= w_in`` (with ``RADIUS_MARGIN``)."""
    c = RADIUS_MARGIN * w_in
    rho = wp.min(c / wp.max(w_max, 1.0e-6), 0.999)
    # sin(x) = rho * x: Newton from the Taylor start, x in (0, pi/2]
    x = wp.sqrt(6.0 * (1.0 - rho))
    for _q in range(8):
        g = wp.sin(x) - rho * x
        dg = wp.cos(x) - rho
        if wp.abs(dg) > 1.0e-6:
            x = x - g / dg
        x = wp.clamp(x, 0.05, HALF_PI)
    return wp.max(w_max / x, c)


@wp.func
def choose_radii(
    st: wp.uint32,
    verts: wp.array(dtype=wp.vec2f),
    vb: int,
    m: int,
    qp: wp.array(dtype=wp.vec2f),
    qb: int,
    rad: wp.array(dtype=wp.float32),
    tang: wp.array(dtype=wp.float32),
    clen: wp.array(dtype=wp.float32),
    turn: wp.array(dtype=wp.float32),
    r1: float,
    r_lo: float,
    r_hi: float,
    r_need: float,
    draw: int,
):
    """Step 3 of the module doc: each vertex's turn, radius (drawn when ``draw``, else the
    one in ``rad`` kept), tangent length and corner length; returns (ok, state): ok is 0
    when a corner cannot fit ``r_need``."""
    ok = int(1)
    for k in range(m):
        th = turn_at(verts, vb, m, k)
        turn[vb + k] = th
        shape = unit_corner(wp.abs(th), qp, qb + 3 * k)
        tau = wp.max(shape[0], 1.0e-6)
        e_in = edge_length(verts, vb, m, (k + m - 1) % m)
        e_out = edge_length(verts, vb, m, k)
        room = 0.5 * (wp.min(e_in, e_out) - STRAIGHT_MIN)
        r = rad[vb + k]
        if draw != 0:
            z = wp.randn(st)
            r = r1 * wp.pow(wp.max(wp.abs(th), 0.05), -RADIUS_EXP) * wp.exp(RADIUS_SPREAD * z)
            r = wp.clamp(r, r_lo, r_hi)
            if wp.abs(th) < GENTLE:
                r = wp.max(r, 0.8 * room / tau)
        r = wp.min(wp.max(r, r_need), room / tau)
        if r < r_need:
            ok = 0
        rad[vb + k] = r
        tang[vb + k] = r * shape[0]
        clen[vb + k] = r * shape[1]
    return ok, st


# ----------------------------------------------------------------------------- widths
@wp.struct
class Widths:
    """An env's road widths: base half width ``half``, the start straight's half width
    ``start`` and its length ``straight`` (m), the lap length ``lap`` (m), ``narrowing``,
    the start ramp length, and both sides' sinusoid amplitudes and phases."""

    half: float
    start: float
    straight: float
    ramp: float
    lap: float
    narrowing: float
    cap: float
    amp_l: wp.vec3f
    phase_l: wp.vec3f
    amp_r: wp.vec3f
    phase_r: wp.vec3f


@wp.func
def smooth01(x: float) -> float:
    y = wp.clamp(x, 0.0, 1.0)
    return y * y * (3.0 - 2.0 * y)


@wp.func
def wave(u: float, amp: wp.vec3f, phase: wp.vec3f) -> float:
    a = TWO_PI * u
    f = amp[0] * wp.sin(a + phase[0]) + amp[1] * wp.sin(2.0 * a + phase[1])
    return wp.clamp(f + amp[2] * wp.sin(3.0 * a + phase[2]), -1.0, 1.0)


@wp.func
def widths_at(w: Widths, s: float) -> wp.vec2f:
    """Left and right width (m) at lap arc ``s`` (0: the start of the start straight)."""
    g = float(0.0)
    if s < w.straight:
        g = smooth01(s / w.ramp) * smooth01((w.straight - s) / w.ramp)
    u = s / w.lap
    nl = 1.0 - w.narrowing * (0.5 + 0.5 * wave(u, w.amp_l, w.phase_l))
    nr = 1.0 - w.narrowing * (0.5 + 0.5 * wave(u, w.amp_r, w.phase_r))
    wl = w.half * ((1.0 - g) * nl + g * (w.start / w.half))
    wr = w.half * ((1.0 - g) * nr + g * (w.start / w.half))
    return wp.vec2f(wp.min(wl, w.cap), wp.min(wr, w.cap))


@wp.func
def draw_wave(st: wp.uint32):
    amp = wp.vec3f(wp.randf(st), wp.randf(st), wp.randf(st))
    phase = TWO_PI * wp.vec3f(wp.randf(st), wp.randf(st), wp.randf(st))
    amp = amp / wp.max(amp[0] + amp[1] + amp[2], 1.0e-6)
    return amp, phase, st


# ----------------------------------------------------------------------------- geometry
@wp.func
def straight(
    verts: wp.array(dtype=wp.vec2f),
    tang: wp.array(dtype=wp.float32),
    vb: int,
    m: int,
    k: int,
):
    """Straight ``k``, from vertex ``k``'s corner to vertex ``k + 1``'s: its start and end
    (m), its length (m), its unit direction and its left normal."""
    k1 = (k + 1) % m
    a = verts[vb + k]
    b = verts[vb + k1]
    u = (b - a) / wp.max(wp.length(b - a), 1.0e-6)
    p0 = a + tang[vb + k] * u
    p1 = b - tang[vb + k1] * u
    ls = wp.length(p1 - p0)
    d = (p1 - p0) / wp.max(ls, 1.0e-6)
    return p0, p1, ls, d, left_of(d)


@wp.func
def corner_point(
    verts: wp.array(dtype=wp.vec2f),
    tang: wp.array(dtype=wp.float32),
    rad: wp.array(dtype=wp.float32),
    turn: wp.array(dtype=wp.float32),
    vb: int,
    m: int,
    k: int,
    local: wp.vec2f,
) -> wp.vec2f:
    """A point of vertex ``k``'s corner given in the unit corner's local frame."""
    a = verts[vb + (k + m - 1) % m]
    v = verts[vb + k]
    u = (v - a) / wp.max(wp.length(v - a), 1.0e-6)
    n = left_of(u)
    start = v - tang[vb + k] * u
    sg = float(1.0)
    if turn[vb + k] < 0.0:
        sg = -1.0
    r = rad[vb + k]
    return start + (r * local[0]) * u + (sg * r * local[1]) * n


@wp.func
def rotate_to_start(
    verts: wp.array(dtype=wp.vec2f),
    tmp: wp.array(dtype=wp.vec2f),
    rad: wp.array(dtype=wp.float32),
    vb: int,
    m: int,
    k0: int,
):
    """Renumber the vertices (and their radii) so that vertex ``k0`` becomes vertex 0."""
    for k in range(m):
        tmp[vb + k] = verts[vb + (k + k0) % m]
    for k in range(m):
        verts[vb + k] = tmp[vb + k]
    for k in range(m):
        tmp[vb + k] = wp.vec2f(rad[vb + (k + k0) % m], 0.0)
    for k in range(m):
        rad[vb + k] = tmp[vb + k][0]


@wp.func
def bow(q: float, amp: wp.vec3f) -> float:
    """Lateral offset of a straight at fraction ``q``: ``amp[0] sin(pi q)^2 + amp[1]
    sin(pi q) sin(h pi q)`` with ``h = amp[2]`` half waves; zero with zero slope at both
    ends."""
    s1 = wp.sin(PI * q)
    return amp[0] * s1 * s1 + amp[1] * s1 * wp.sin(amp[2] * PI * q)


@wp.func
def coarse_loop(
    verts: wp.array(dtype=wp.vec2f),
    tang: wp.array(dtype=wp.float32),
    rad: wp.array(dtype=wp.float32),
    clen: wp.array(dtype=wp.float32),
    turn: wp.array(dtype=wp.float32),
    bump: wp.array(dtype=wp.vec3f),
    qp: wp.array(dtype=wp.vec2f),
    vb: int,
    m: int,
    w: Widths,
    cpts: wp.array(dtype=wp.vec2f),
    carc: wp.array(dtype=wp.float32),
    cwid: wp.array(dtype=wp.float32),
    cb: int,
) -> int:
    """The coarse polyline of the circuit for the clearance check: straight k in up to
    ``STRAIGHT_PIECES`` bowed pieces, then corner k + 1 in quarters; per point its arc and
    the half width its segment needs (the widest side there, plus the chord's sagitta);
    returns the point count."""
    c = int(0)
    s = float(0.0)
    for k in range(m):
        k1 = (k + 1) % m
        p0, p1, ls, u, n = straight(verts, tang, vb, m, k)
        b = bump[vb + k]
        pieces = wp.clamp(int(wp.ceil(ls / STRAIGHT_PIECE)), 1, STRAIGHT_PIECES)
        # the bow's sagitta over a piece and the wiggle's full swing
        sag = 2.5 * wp.abs(b[0]) / float(pieces * pieces) + 2.0 * wp.abs(b[1])
        for q in range(pieces):
            f = float(q) / float(pieces)
            f1 = float(q + 1) / float(pieces)
            wa = widths_at(w, s + f * ls)
            wb = widths_at(w, s + f1 * ls)
            cpts[cb + c] = p0 + (f * ls) * u + bow(f, b) * n
            carc[cb + c] = s + f * ls
            cwid[cb + c] = wp.max(wp.max(wa[0], wa[1]), wp.max(wb[0], wb[1])) + sag
            c = c + 1
        s = s + ls
        # the corner at k1: its start and three quarter points
        lc = clen[vb + k1]
        wc = widths_at(w, s + 0.5 * lc)
        half_c = wp.max(wc[0], wc[1]) + 0.02 * rad[vb + k1] * wp.abs(turn[vb + k1])
        cpts[cb + c] = p1
        carc[cb + c] = s
        cwid[cb + c] = half_c
        c = c + 1
        for q in range(3):
            cpts[cb + c] = corner_point(verts, tang, rad, turn, vb, m, k1, qp[vb * 3 + 3 * k1 + q])
            carc[cb + c] = s + 0.25 * float(q + 1) * lc
            cwid[cb + c] = half_c
            c = c + 1
        s = s + lc
    return c


@wp.func
def coarse_clear(
    cpts: wp.array(dtype=wp.vec2f),
    carc: wp.array(dtype=wp.float32),
    cwid: wp.array(dtype=wp.float32),
    cb: int,
    c: int,
    lap: float,
    skip: float,
) -> bool:
    """Every two segments of the coarse loop farther apart along the lap than ``skip`` are
    at least ``CHECK_REL * (w_a + w_b) + CHECK_MARGIN`` apart (segment ``i`` runs from point
    ``i`` to ``i + 1``; bounding boxes prune far pairs)."""
    for i in range(c):
        a0 = cpts[cb + i]
        a1 = cpts[cb + (i + 1) % c]
        s0 = carc[cb + i]
        s1 = lap
        if i + 1 < c:
            s1 = carc[cb + i + 1]
        for j in range(i + 2, c):
            t0 = carc[cb + j]
            t1 = lap
            if j + 1 < c:
                t1 = carc[cb + j + 1]
            gap = wp.min(t0 - s1, lap - t1 + s0)
            if gap > skip:
                b0 = cpts[cb + j]
                b1 = cpts[cb + (j + 1) % c]
                need = CHECK_REL * (cwid[cb + i] + cwid[cb + j]) + CHECK_MARGIN
                lo_a = wp.min(a0, a1)
                hi_a = wp.max(a0, a1)
                lo_b = wp.min(b0, b1)
                hi_b = wp.max(b0, b1)
                far = (
                    lo_b[0] - hi_a[0] >= need
                    or lo_a[0] - hi_b[0] >= need
                    or lo_b[1] - hi_a[1] >= need
                    or lo_a[1] - hi_b[1] >= need
                )
                if not far:
                    if segment_distance(a0, a1, b0, b1) < need:
                        return False
    return True


@wp.func
def fallback_radius(length: float) -> float:
    """Corner radius of the fallback rectangle: ``FALLBACK_RADIUS``, less on a short lap."""
    return wp.min(FALLBACK_RADIUS, length / 20.0)


@wp.func
def fallback_layout(verts: wp.array(dtype=wp.vec2f), vb: int, length: float) -> int:
    """A rectangle of aspect 2 whose filleted lap is about ``length`` m (4 vertices)."""
    r = fallback_radius(length)
    # filleted perimeter of a (2b x b) rectangle with corner radius r: 6b - 8r + 2 pi r
    b = wp.max((length + 8.0 * r - TWO_PI * r) / 6.0, 3.0 * r)
    verts[vb + 0] = wp.vec2f(-b, -0.5 * b)
    verts[vb + 1] = wp.vec2f(b, -0.5 * b)
    verts[vb + 2] = wp.vec2f(b, 0.5 * b)
    verts[vb + 3] = wp.vec2f(-b, 0.5 * b)
    return 4


# ----------------------------------------------------------------------------- the lap
@wp.func
def finish_lap(
    st: wp.uint32,
    verts: wp.array(dtype=wp.vec2f),
    tmp: wp.array(dtype=wp.vec2f),
    vb: int,
    m: int,
    qp: wp.array(dtype=wp.vec2f),
    rad: wp.array(dtype=wp.float32),
    tang: wp.array(dtype=wp.float32),
    clen: wp.array(dtype=wp.float32),
    turn: wp.array(dtype=wp.float32),
    bump: wp.array(dtype=wp.vec3f),
    length: float,
    r_need: float,
    kb: float,
):
    """Steps 3 (end) and 4 of the module doc on a polygon with radii: scale it to the lap
    length, start the lap on the longest straight, refit the corners, draw the straights'
    bows; returns (ok: every corner still fits ``r_need``, the lap length, the start
    straight's length, the state)."""
    lap = float(0.0)
    for k in range(m):
        lap = lap + edge_length(verts, vb, m, k) - 2.0 * tang[vb + k] + clen[vb + k]
    sc = (length - lap) / wp.max(perimeter(verts, vb, m), 1.0e-6) + 1.0
    scale_polygon(verts, vb, m, wp.clamp(sc, 0.5, 2.0))
    k0 = int(0)
    best = float(-1.0e30)
    for k in range(m):
        ls = edge_length(verts, vb, m, k) - tang[vb + k] - tang[vb + (k + 1) % m]
        if ls > best:
            best = ls
            k0 = k
    rotate_to_start(verts, tmp, rad, vb, m, k0)
    ok, st = choose_radii(
        st, verts, vb, m, qp, vb * 3, rad, tang, clen, turn, 1.0, 1.0, 1.0, r_need, 0
    )
    lap = float(0.0)
    for k in range(m):
        ls = wp.max(edge_length(verts, vb, m, k) - tang[vb + k] - tang[vb + (k + 1) % m], 0.0)
        lap = lap + ls + clen[vb + (k + 1) % m]
        # the straight's bow (peak curvature about `bend`, at most 1.5% of its length) and
        # its wiggle (half waves of about WIGGLE metres, about half that curvature)
        z0 = wp.randn(st)
        z1 = wp.randn(st)
        a0 = wp.clamp(kb * z0 * ls * ls / (2.0 * PI * PI), -0.015 * ls, 0.015 * ls)
        h = wp.max(wp.round(ls / WIGGLE), 2.0)
        a1 = 0.5 * kb * z1 * ls * ls / (PI * PI * (h * h + 1.0))
        a1 = wp.clamp(a1, -0.008 * ls, 0.008 * ls)
        bump[vb + k] = wp.vec3f(a0, a1, h)
    straight0 = wp.max(edge_length(verts, vb, m, 0) - tang[vb] - tang[vb + 1], 0.0)
    return ok, wp.max(lap, 1.0), straight0, st


@wp.func
def lap_widths(
    width: float,
    nar: float,
    widen: float,
    cap: float,
    lap: float,
    straight0: float,
    amp_l: wp.vec3f,
    phase_l: wp.vec3f,
    amp_r: wp.vec3f,
    phase_r: wp.vec3f,
) -> Widths:
    """Step 4 of the module doc: the widths whose lap mean is about ``width``."""
    w = Widths()
    frac = straight0 / lap
    w.half = 0.5 * width / wp.max((1.0 - frac) * (1.0 - 0.5 * nar) + frac * widen, 0.05)
    w.start = w.half * widen
    w.straight = straight0
    w.ramp = wp.max(wp.min(WIDEN_RAMP, straight0 / 3.0), 1.0e-3)
    w.lap = lap
    w.narrowing = nar
    w.cap = cap
    w.amp_l = amp_l
    w.phase_l = phase_l
    w.amp_r = amp_r
    w.phase_r = phase_r
    return w


@wp.func
def emit_lap(
    verts: wp.array(dtype=wp.vec2f),
    vb: int,
    m: int,
    rad: wp.array(dtype=wp.float32),
    tang: wp.array(dtype=wp.float32),
    clen: wp.array(dtype=wp.float32),
    turn: wp.array(dtype=wp.float32),
    bump: wp.array(dtype=wp.vec3f),
    w: Widths,
    line_out: wp.array(dtype=wp.vec2f),
    width_out: wp.array(dtype=wp.vec2f),
    lb: int,
    num_points: int,
):
    """Step 6 of the module doc: ``num_points`` points at uniform arc spacing from the start
    of straight 0, and their widths."""
    step = w.lap / float(num_points)
    j = int(0)
    s_piece = float(0.0)
    for k in range(m):
        k1 = (k + 1) % m
        p0, p1, ls, u, n = straight(verts, tang, vb, m, k)
        b = bump[vb + k]
        while j < num_points and float(j) * step < s_piece + ls:
            q = (float(j) * step - s_piece) / wp.max(ls, 1.0e-6)
            line_out[lb + j] = p0 + (q * ls) * u + bow(q, b) * n
            width_out[lb + j] = widths_at(w, float(j) * step)
            j = j + 1
        s_piece = s_piece + ls
        # the corner at k1, integrated from its start (the last corner takes every point left)
        lc = clen[vb + k1]
        r = wp.max(rad[vb + k1], 1.0e-6)
        th = wp.abs(turn[vb + k1])
        sg = float(1.0)
        if turn[vb + k1] < 0.0:
            sg = -1.0
        pos = wp.vec2f(0.0, 0.0)
        sl = float(0.0)  # arc reached on the unit corner
        while j < num_points and (float(j) * step < s_piece + lc or k1 == 0):
            target_s = wp.min((float(j) * step - s_piece) / r, (1.0 + RAMP) * th)
            panels = wp.clamp(int(wp.ceil((target_s - sl) * r / EMIT_STEP)), 1, 64)
            h = (target_s - sl) / float(panels)
            for _q in range(panels):
                pos = pos + simpson(th, sl, sl + h)
                sl = sl + h
            sl = target_s
            line_out[lb + j] = p1 + (r * pos[0]) * u + (sg * r * pos[1]) * n
            width_out[lb + j] = widths_at(w, float(j) * step)
            j = j + 1
        s_piece = s_piece + lc


# ----------------------------------------------------------------------------- the kernel
@wp.kernel
def circuit_kernel(
    # inputs
    eff_seed: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    bounds: wp.array(dtype=wp.vec2f),
    # parameters
    length_min: wp.array(dtype=wp.float32),
    length_max: wp.array(dtype=wp.float32),
    width_min: wp.array(dtype=wp.float32),
    width_max: wp.array(dtype=wp.float32),
    narrowing: wp.array(dtype=wp.float32),
    start_widening: wp.array(dtype=wp.float32),
    corners_min: wp.array(dtype=wp.float32),
    corners_max: wp.array(dtype=wp.float32),
    corner_radius: wp.array(dtype=wp.float32),
    radius_min: wp.array(dtype=wp.float32),
    radius_max: wp.array(dtype=wp.float32),
    bend: wp.array(dtype=wp.float32),
    # static
    num_points: int,
    hw_cap: float,
    attempts: int,
    # scratch
    occ: wp.array(dtype=wp.int32),
    nxt: wp.array(dtype=wp.int32),
    lines: wp.array(dtype=wp.vec2f),
    verts: wp.array(dtype=wp.vec2f),
    tmp: wp.array(dtype=wp.vec2f),
    rad: wp.array(dtype=wp.float32),
    tang: wp.array(dtype=wp.float32),
    clen: wp.array(dtype=wp.float32),
    turn: wp.array(dtype=wp.float32),
    bump: wp.array(dtype=wp.vec3f),
    qp: wp.array(dtype=wp.vec2f),
    cpts: wp.array(dtype=wp.vec2f),
    carc: wp.array(dtype=wp.float32),
    cwid: wp.array(dtype=wp.float32),
    # outputs
    line_out: wp.array(dtype=wp.vec2f),
    width_out: wp.array(dtype=wp.vec2f),
    attempts_out: wp.array(dtype=wp.int32),
):
    """One thread per env: the module doc's steps; ``attempts_out[e]`` is the attempt that
    passed (1 ..), or ``attempts + 1`` for the fallback."""
    e = wp.tid()
    if active[e] == 0:
        return
    st = stage_rng(eff_seed[e], SALT_CIRCUIT)
    # the parameters, inside their declared ranges (bounds[i] = (lo, hi) of parameter i)
    l_lo = param(length_min[e], bounds[0][0], bounds[0][1])
    l_hi = param(length_max[e], bounds[1][0], bounds[1][1])
    w_lo = param(width_min[e], bounds[2][0], bounds[2][1])
    w_hi = param(width_max[e], bounds[3][0], bounds[3][1])
    nar = param(narrowing[e], bounds[4][0], bounds[4][1])
    widen = param(start_widening[e], bounds[5][0], bounds[5][1])
    c_lo = param(corners_min[e], bounds[6][0], bounds[6][1])
    c_hi = param(corners_max[e], bounds[7][0], bounds[7][1])
    r1 = param(corner_radius[e], bounds[8][0], bounds[8][1])
    r_lo = param(radius_min[e], bounds[9][0], bounds[9][1])
    r_hi = param(radius_max[e], bounds[10][0], bounds[10][1])
    kb = param(bend[e], bounds[11][0], bounds[11][1])
    # a pair given the wrong way round is read as (min, max)
    length, st = triangular(st, wp.min(l_lo, l_hi), wp.max(l_lo, l_hi))
    width, st = uniform(st, wp.min(w_lo, w_hi), wp.max(w_lo, w_hi))
    ca = int(wp.round(wp.min(c_lo, c_hi)))
    cz = int(wp.round(wp.max(c_lo, c_hi)))
    target = ca + wp.min(int(wp.randf(st) * float(cz - ca + 1)), cz - ca)
    target = wp.clamp(target, 4, MAX_VERTICES - 4)
    rr_lo = wp.min(r_lo, r_hi)
    rr_hi = wp.max(r_lo, r_hi)
    amp_l, phase_l, st = draw_wave(st)
    amp_r, phase_r, st = draw_wave(st)

    vb = e * MAX_VERTICES
    ob = e * GRID * GRID
    nb = e * (GRID + 1) * (GRID + 1)
    lb = e * (GRID + 1)
    cb = e * MAX_VERTICES * CHECK_POINTS
    # the widest half widths the lap can have: at the corners (the base, narrowed nowhere)
    # and on the start straight; the least corner radius and the layout clearance follow
    half0 = 0.5 * width / wp.max(1.0 - 0.5 * nar, 0.05)
    w_in = wp.min(half0, hw_cap)
    w_max = wp.max(wp.min(half0 * widen, hw_cap), w_in)
    r_need = least_radius(w_in, w_max)
    clear = 2.0 * w_max + LAYOUT_MARGIN
    skip = 2.0 * w_max + 4.0
    m = int(0)
    lap = float(0.0)
    straight0 = float(0.0)
    used = attempts + 1
    w = Widths()
    # attempts 0 .. attempts - 1 draw a layout; the last pass is the fallback
    for attempt in range(attempts + 1):
        if used > attempts:
            fallback = attempt == attempts
            ok = int(0)
            need = r_need
            draw = int(1)
            if fallback:
                m = fallback_layout(verts, vb, length)
                for k in range(m):
                    rad[vb + k] = fallback_radius(length)
                ok = 1
                need = 0.0
                draw = 0
            else:
                m, st = draw_layout(st, occ, ob, nxt, nb, verts, tmp, vb, lines, lb, target, length)
                if m >= 4:
                    if polygon_ok(verts, vb, m, clear, r_need):
                        m, st = insert_features(st, verts, vb, m, target, clear, r_need)
                        ok = 1
            if ok != 0:
                ok, st = choose_radii(
                    st, verts, vb, m, qp, vb * 3, rad, tang, clen, turn, r1, rr_lo, rr_hi, need,
                    draw,
                )  # fmt: skip
            if ok != 0:
                ok, lap, straight0, st = finish_lap(
                    st, verts, tmp, vb, m, qp, rad, tang, clen, turn, bump, length, need, kb
                )
            if ok != 0:
                w = lap_widths(
                    width, nar, widen, hw_cap, lap, straight0, amp_l, phase_l, amp_r, phase_r
                )
                if fallback:
                    used = attempt + 1
                else:
                    c = coarse_loop(
                        verts, tang, rad, clen, turn, bump, qp, vb, m, w, cpts, carc, cwid, cb
                    )
                    if coarse_clear(cpts, carc, cwid, cb, c, lap, skip):
                        used = attempt + 1
    attempts_out[e] = used
    emit_lap(verts, vb, m, rad, tang, clen, turn, bump, w, line_out, width_out, e * num_points,
             num_points)  # fmt: skip
