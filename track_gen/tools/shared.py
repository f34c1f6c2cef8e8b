"""Plan-view helpers shared by the tools' folders (``@wp.func``, one kernel, host checks).

The box of the band and gate collisions (:func:`make_box`), the band's bead decision
(:func:`band_beads`), the even-odd rule's edge helpers (:func:`slope`, :func:`row_cross`,
:func:`quad_row_crosses`, :func:`crosses_right_of`), the square grid the SDF bake and the
height-field bake share (:func:`border_box`, :func:`square_grid`, :func:`fill_grid_kernel`),
the components' source check (:func:`generator_result`), the utilities' input checks
(:func:`check_rows`) and masks (:func:`mask_or`, :func:`optional_input` on the host,
:func:`switched_off` on the device): one home, below every folder that calls them.
"""

from __future__ import annotations

import warp as wp

from ..core.checks import check_array, check_float, check_mask
from ..core.component import InputSpec
from ..core.extents import clamp2, clamp_coord, in_range3, scaled_quat
from ..core.settings import SettingsUtility
from ..geometry import finite, plan_x_axis, unit_heading, xy  # finite, xy: re-exported
from ..results import GateSequence, Track

#: The agent's position, the course input of every per-step tool.
POSITION = InputSpec("position", wp.vec3f, doc="agent position per env, track units")
#: The agent's orientation: its heading is the yaw of the rotated body x about +z.
ORIENTATION = InputSpec(
    "orientation",
    wp.quatf,
    doc="agent orientation per env (x, y, z, w), world from body; the heading is the yaw about +z",
)
#: The course inputs of a sensor: the agent's pose.
POSE_INPUTS = (POSITION, ORIENTATION)

wp.set_module_options({"enable_backward": False})


class LoopCapacityUtility(SettingsUtility):
    """A utility whose per-env capacity is a settings field (``CAPACITY_FIELD``) or, when
    that is None, follows from a bound on a loop's length (``max_loop_length``): the
    checkpoints' and the props' placers. A subclass states its rule as
    ``_capacity_for(settings, bound)``: the capacity a loop of at most ``bound`` track units
    needs."""

    #: The settings field that holds the capacity (None: derive it from the loop bound).
    CAPACITY_FIELD = ""
    #: What the refusal asks for when neither is given (after "<Utility> needs a capacity: ").
    CAPACITY_HINT = ""

    @classmethod
    def _capacity(cls, settings, max_loop_length: float | None) -> int:
        """The per-env capacity: the settings' ``CAPACITY_FIELD``, else the one
        ``max_loop_length`` needs (one of the two is required)."""
        given = getattr(settings, cls.CAPACITY_FIELD)
        if given is not None:
            return given
        if max_loop_length is None:
            raise ValueError(f"{cls.__name__} needs a capacity: {cls.CAPACITY_HINT}")
        bound = check_float("max_loop_length", max_loop_length, lo=1.0e-6, hi=1.0e12)
        return cls._capacity_for(settings, bound)

    @classmethod
    def buffers(
        cls, settings, num_envs: int, *, max_loop_length: float | None = None
    ) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array an instance with ``settings`` (and
        ``max_loop_length`` when its capacity field is None) allocates for ``num_envs`` envs:
        its allocation run through a plan, nothing allocated."""
        return super().buffers(settings, num_envs, cls._capacity(settings, max_loop_length))


_FAMILY = {Track: "track", GateSequence: "gate"}


def generator_result(ctx, kind: type, component: str, why: str):
    """The course generator's result, a ``kind`` (:class:`~track_gen.Track` or
    :class:`~track_gen.GateSequence`); else a TypeError: ``component`` needs that generator,
    ``why`` (what the other family does instead)."""
    result = ctx.generator.result
    if not isinstance(result, kind):
        raise TypeError(
            f"{component} needs a {_FAMILY[kind]} generator (its result a {kind.__name__}), got "
            f"a {type(result).__name__}: {why}"
        )
    return result


def mask_or(mask: wp.array | None, default: wp.array, num_envs: int, device) -> wp.array:
    """The mask a utility's launch reads: ``mask`` once checked (a contiguous ``[num_envs]``
    int32 array on ``device``), or ``default`` (the utility's all-envs mask) for None."""
    check_mask(mask, num_envs, device)
    return default if mask is None else mask


def check_rows(what: str, batch, rows_of: dict, envs_of: dict, kind: str) -> tuple[int, int]:
    """Check a row batch a utility reads (``what`` names it in errors, ``kind`` is the class
    it should be): every array of ``rows_of`` (``[E*M]``) and ``envs_of`` (``[E]``, ``E`` the
    first one's length), by name and dtype, is a ``wp.array`` on the first row array's device,
    and that array's rows are a positive multiple of ``E``. Returns ``(E, rows)``."""
    for name in (*rows_of, *envs_of):
        if not isinstance(getattr(batch, name), wp.array):
            raise TypeError(f"{what}.{name} must be a wp.array")
    first = getattr(batch, next(iter(rows_of)))
    env = getattr(batch, next(iter(envs_of)))
    E = env.shape[0] if env.ndim == 1 else 0
    rows = first.shape[0]
    if E < 1 or rows == 0 or rows % E != 0:
        raise ValueError(
            f"{what}.{next(iter(rows_of))} has {rows} rows for {E} envs: expected a positive "
            f"multiple of E (a {kind})"
        )
    for name, dtype in envs_of.items():
        check_array(f"{what}.{name}", getattr(batch, name), dtype, E, first.device)
    for name, dtype in rows_of.items():
        check_array(f"{what}.{name}", getattr(batch, name), dtype, rows, first.device)
    return E, rows


def optional_input(array: wp.array | None, empty: wp.array) -> list:
    """The two kernel arguments of an optional int32 array (a mask, a validity): ``[array,
    1]``, or ``[empty, 0]`` for None (the kernel reads the array only when the flag is 1)."""
    return [empty, 0] if array is None else [array, 1]


#: Larger than any distance the tools compute (a finite "infinity" for float32 folds).
BIG = wp.constant(3.0e38)


@wp.func
def switched_off(flags: wp.array(dtype=wp.int32), use: int, e: int) -> bool:
    """Whether env ``e`` is off in an optional int32 array (a mask, a validity): ``use`` set
    and ``flags[e] == 0``; ``flags`` is not read when ``use`` is 0 (the device side of
    :func:`optional_input`, whose empty array has one row)."""
    if use != 0:
        if flags[e] == 0:
            return True
    return False


@wp.struct
class Box:
    p: wp.vec2f  # centre
    ax: wp.vec2f  # unit local x (yaw)
    ay: wp.vec2f  # unit local y
    h: wp.vec2f  # half extents (>= 0)
    ext: wp.vec2f  # half extents of the world-axis bounding box
    ok: int  # 0: inactive slot (non-finite input)


@wp.func
def finite2(v: wp.vec2f) -> bool:
    return finite(v[0]) and finite(v[1])


@wp.func
def make_box(pos: wp.vec3f, rot: wp.quatf, he: wp.vec2f) -> Box:
    """Plan-view box: centre, yaw axes from the quaternion's rotated local x, half extents.

    A non-finite input gives ``ok = 0`` (an inactive slot). Otherwise the centre and the half
    extents are clamped to ``COORD_LIMIT`` and the quaternion is scaled by its largest
    component first when that is huge or tiny (:mod:`~track_gen.core.extents`), so the box is
    finite and its arithmetic cannot overflow; inputs within those ranges are used bit for
    bit."""
    b = Box()
    axis = plan_x_axis(scaled_quat(rot))  # geometry/frames.py: the rotated local x
    ax = unit_heading(axis)
    ha = wp.vec2f(wp.abs(he[0]), wp.abs(he[1]))
    h = wp.vec2f(clamp_coord(ha[0]), clamp_coord(ha[1]))
    p = xy(pos)
    b.p = clamp2(p)
    b.ax = ax
    b.ay = wp.vec2f(-ax[1], ax[0])
    b.h = h
    b.ext = wp.vec2f(
        wp.abs(ax[0]) * h[0] + wp.abs(ax[1]) * h[1], wp.abs(ax[1]) * h[0] + wp.abs(ax[0]) * h[1]
    )
    b.ok = 0
    if finite2(p) and finite(pos[2]) and finite2(axis) and finite2(ha):
        b.ok = 1
    return b


@wp.func
def slope(u: wp.vec2f, v: wp.vec2f) -> float:
    """dx/dy of the edge u -> v (0 for a horizontal edge)."""
    dy = v[1] - u[1]
    if dy != 0.0:
        return (v[0] - u[0]) / dy
    return 0.0


@wp.func
def next_bead(i: int, n: int) -> int:
    j = i + 1
    if j == n:
        j = 0
    return j


@wp.func
def band_beads(
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    inner: wp.array(dtype=wp.vec3f),
    outer: wp.array(dtype=wp.vec3f),
    center: wp.array(dtype=wp.vec3f),
    use_center: int,
    e: int,
    n_max: int,
) -> int:
    """The beads of env ``e``'s band: ``count[e]`` clamped to ``[0, n_max]`` for a valid env
    (``valid != 0``) with at least 3 beads whose inner and outer borders (and centerline,
    with ``use_center``) are in range (finite, ``|x| <= COORD_LIMIT``); else 0 (the env
    answers as invalid)."""
    n = wp.clamp(count[e], 0, n_max)
    if valid[e] == 0 or n < 3:
        return 0
    base = e * n_max
    for i in range(n):
        if not (in_range3(inner[base + i]) and in_range3(outer[base + i])):
            return 0
        if use_center != 0:
            if not in_range3(center[base + i]):
                return 0
    return n


@wp.func
def border_box(
    inner: wp.array(dtype=wp.vec3f), outer: wp.array(dtype=wp.vec3f), base: int, n: int
) -> wp.vec4f:
    """Plan-view bounding box ``(x0, y0, x1, y1)`` of beads ``base .. base+n`` of both
    borders."""
    lo = xy(outer[base])
    hi = lo
    for i in range(n):
        po = xy(outer[base + i])
        pi = xy(inner[base + i])
        lo = wp.min(lo, wp.min(po, pi))
        hi = wp.max(hi, wp.max(po, pi))
    return wp.vec4f(lo[0], lo[1], hi[0], hi[1])


@wp.func
def square_grid(bb: wp.vec4f, res: int, padding: float) -> wp.vec3f:
    """``(x0, y0, cell)`` of the ``res x res`` square grid centred on the box ``bb``, its side
    the box's larger extent plus ``padding`` on each side (``padding < 0``: 10% of that
    extent); shared by the SDF bake and the height-field bake, so their grids coincide."""
    ext = wp.max(bb[2] - bb[0], bb[3] - bb[1])
    pad = padding
    if pad < 0.0:
        pad = 0.1 * ext
    side = ext + 2.0 * pad
    cell = wp.max(side / float(res), 1.0e-12)
    half = 0.5 * cell * float(res)
    return wp.vec3f(0.5 * (bb[0] + bb[2]) - half, 0.5 * (bb[1] + bb[3]) - half, cell)


@wp.func
def row_cross(y: float, u: wp.vec2f, v: wp.vec2f, k: float) -> float:
    """x where the row y crosses the edge u -> v (slope k) by :func:`_edge_flip`'s rule,
    or -BIG (no crossing)."""
    above_u = u[1] > y
    above_v = v[1] > y
    if above_u != above_v:
        return u[0] + (y - u[1]) * k
    return -BIG


@wp.func
def quad_row_crosses(
    y: float,
    a: wp.vec2f,
    b: wp.vec2f,
    c: wp.vec2f,
    d: wp.vec2f,
    kab: float,
    kbc: float,
    kdc: float,
    kda: float,
) -> wp.vec4f:
    """Where row ``y`` crosses the edges ``a -> b``, ``b -> c``, ``d -> c`` and ``d -> a`` of
    the quad ``(a, b, c, d)`` (their slopes ``k``), as the even-odd quad test sees them
    (:func:`row_cross`; ``-BIG``: no crossing)."""
    return wp.vec4f(
        row_cross(y, a, b, kab),
        row_cross(y, b, c, kbc),
        row_cross(y, d, c, kdc),
        row_cross(y, d, a, kda),
    )


@wp.func
def crosses_right_of(x: float, crosses: wp.vec4f) -> int:
    """How many of a row's quad crossings lie right of ``x`` (odd: ``x`` is in the quad)."""
    flips = int(0)
    for k in range(4):
        if x < crosses[k]:
            flips += 1
    return flips


@wp.kernel
def fill_grid_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    frame: wp.array(dtype=wp.vec4f),
    # static
    res: int,
    negate: int,
    label: wp.int8,
    # outputs
    values_out: wp.array(dtype=wp.float32),
    labels_out: wp.array(dtype=wp.int8),
):
    """Clear row ``r`` of env ``e``'s ``res x res`` grid (one thread per masked env and row):
    every value to the frame's fill ``frame[e][3]`` (negated with ``negate != 0``: the SDF's
    far field), every label to ``label``. The SDF bake (-fill, border -1) and the height-field
    bake (fill, off road 0) both start from it."""
    e, r = wp.tid()
    if mask[e] == 0:
        return
    v = frame[e][3]
    if negate != 0:
        v = -v
    k0 = (e * res + r) * res
    for i in range(res):
        values_out[k0 + i] = v
        labels_out[k0 + i] = label
