"""Where an agent is along a closed line: :class:`TrackLocalizer` and :class:`TrackFrame`.

The line is a polyline of beads per env: a :class:`~track_gen.results.Track`'s centerline or a
gate course's :class:`~track_gen.tools.course_line.CourseLine` (anything with the arrays
``center``, ``arclen``, ``length``, ``count``, ``valid``). Segment ``i`` runs from bead ``i``
to bead ``(i + 1) % count`` (the closing segment included). :meth:`TrackLocalizer.locate`
projects each env's position onto the closest segment in 3D and answers the arc length ``s``
of that point, the signed offsets ``n`` (left, horizontal) and ``n_up`` and the distance.

Full search and warm window
    A full search visits every segment (ties: the lowest index; zero-length segments are
    skipped, their one point belongs to their neighbours too). With ``warm_window = W`` a
    locate first visits only the ``2W + 1`` segments ``last - W .. last + W`` (mod ``count``)
    around the env's previous answer ``last`` (its *memory*), so a step costs O(W) instead of
    O(count). The warm answer is kept only when

    * the env has a memory (none after construction, :meth:`~TrackLocalizer.reset`,
      :meth:`~TrackLocalizer.refresh`, an invalid env or a non-finite position), and
      ``2W + 1 < count``;
    * its best segment is not one of the two window-end segments (there the distance may
      still decrease beyond the window: the agent moved farther than the window reaches); and
    * its distance is at most the *bound* ``W * length / count`` (W mean segment lengths,
      about the arc the window reaches on either side): farther from the line than that,
      parts of the loop outside the window may be as close, so the answer is not trusted.

    Otherwise the locate does a full search, in the same launch. The warm answer equals the
    full one whenever the closest segment lies inside the window; it can differ only where
    another part of the line comes within the bound of the agent (a hairpin or a pinch), and
    then the warm answer stays on the branch the agent travels (the continuous choice). After
    a teleport, :meth:`~TrackLocalizer.reset` the env to force a full search.

Frame axes (per segment, from its unit chord ``t``)
    ``left = normalize(cross(z, t)) = normalize(-t.y, t.x, 0)`` (the horizontal left normal;
    +y when the chord is vertical: plan-view length below 1e-6) and
    ``up = normalize(cross(t, left))`` (+z for a level chord). ``n = dot(p - closest, left)``,
    ``n_up = dot(p - closest, up)``; past a segment's end (the outside of a corner)
    ``distance`` exceeds ``hypot(n, n_up)``.

Curvature
    :meth:`~TrackLocalizer.refresh` derives a signed curvature per bead: the 3D turning angle
    between the chords into and out of the bead divided by the mean of their lengths, signed
    by the plan-view turn (left / counter-clockwise positive; positive when the plan-view turn
    is zero). A counter-clockwise circle of radius R reads about ``+1/R``.

Input range
    :meth:`~TrackLocalizer.locate` clamps a finite position to ``COORD_LIMIT`` (1e18 track
    units, :mod:`~track_gen.core.extents`; a position within it is used bit for bit), skips
    non-finite and zero-length segments and answers "no answer" rather than a non-finite
    value (:class:`TrackFrame`): every answer is finite. The curvature of a bead whose
    neighbourhood holds a non-finite coordinate is NaN (and so are ``curvature_at`` and
    ``speed_profile`` there).

Every per-step call is one launch, allocation-free and free of host synchronization (safe to
record into a graph); construction allocates every buffer once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array, check_float, check_mask
from ...core.component import Component, InputSpec, buffer_bytes
from ...core.exec import require_not_capturing
from ...core.tunable import Tunable
from ...results import GateSequence, Track
from ..course_line import CourseLine
from .kernels import (
    _curvature_at_kernel,
    _curvature_kernel,
    _locate_kernel,
    _reset_kernel,
    _speed_profile_kernel,
)

wp.set_module_options({"enable_backward": False})

__all__ = ["WARM_WINDOW", "Localizer", "TrackFrame", "TrackLocalizer"]

WARM_WINDOW = Tunable(
    "warm_window",
    None,
    kind="int",
    lo=1,
    hi=16384,
    optional=True,
    unit="segments",
    doc="half-width W of the warm search window (2W + 1 segments around the previous "
    "answer); None: a full search every locate.",
)

_LINE_ARRAYS = ("center", "arclen", "length", "count", "valid")
#: Bounds of speed_profile's arguments: the smallest positive normal float32 and a ceiling
#: whose square roots and ratios stay finite in float32.
_F32_TINY = float(np.finfo(np.float32).tiny)
_SPEED_HI = 1.0e30

_GATE_HINT = (
    "a gate course has no centerline of its own: add tools.CenterlineFromGates() and pass "
    "source='centerline'"
)


@dataclass
class TrackFrame:
    """Per-env answers of :meth:`TrackLocalizer.locate` (the same instance every call;
    :meth:`clone` for a snapshot). Lengths in track units.

    Attributes:
        s: float32 ``[E]``: arc length of the closest point along the line, in
            ``[0, length)`` (interpolated from ``arclen`` along its segment).
        n: float32 ``[E]``: signed lateral offset of the position from the closest point along
            the horizontal left axis ``normalize(cross(z, tangent))``: positive left.
        n_up: float32 ``[E]``: offset along ``cross(tangent, left)`` (upward for a level
            line).
        distance: float32 ``[E]``: ``|position - closest|``.
        segment: int32 ``[E]``: index ``i`` of the closest segment (bead ``i`` -> bead
            ``(i + 1) % count``); -1 for no answer.
        closest: vec3f ``[E]``: the closest point on the line.
        tangent: vec3f ``[E]``: unit chord of that segment.

    No answer (``valid == 0``, ``count < 2``, a non-finite position, a line whose ``length``
    is not finite and positive, a line without a usable segment, or line data so far out of
    range that an answer would not be finite: a non-finite ``arclen`` at the closest segment,
    coordinates near the float32 maximum): NaN floats and vectors, ``segment = -1``. A
    finite position is clamped to ``COORD_LIMIT`` (1e18 track units; within it, used as is),
    so every answer is finite.
    """

    s: wp.array
    n: wp.array
    n_up: wp.array
    distance: wp.array
    segment: wp.array
    closest: wp.array
    tangent: wp.array

    @staticmethod
    def buffers(num_envs: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array :meth:`allocate` makes."""
        return [(num_envs, wp.float32)] * 4 + [(num_envs, wp.int32)] + [(num_envs, wp.vec3f)] * 2

    @classmethod
    def allocate(cls, num_envs: int, device) -> TrackFrame:
        """Buffers for ``num_envs`` envs holding "no answer" (NaN, segment -1)."""
        nan = float("nan")

        def f32():
            return wp.full(num_envs, nan, dtype=wp.float32, device=device)

        def v3():
            return wp.full(num_envs, wp.vec3f(nan, nan, nan), dtype=wp.vec3f, device=device)

        return cls(
            s=f32(),
            n=f32(),
            n_up=f32(),
            distance=f32(),
            segment=wp.full(num_envs, -1, dtype=wp.int32, device=device),
            closest=v3(),
            tangent=v3(),
        )

    def clone(self) -> TrackFrame:
        """A detached deep copy (allocates: call it outside your graph)."""
        return TrackFrame(
            **{f.name: wp.clone(getattr(self, f.name)) for f in dataclasses.fields(self)}
        )


def _check_line(line):
    """``(num_envs, N_max, device)`` of a line, or TypeError / ValueError naming the array."""
    for name in _LINE_ARRAYS:
        if not isinstance(getattr(line, name, None), wp.array):
            hint = (
                _GATE_HINT
                if isinstance(line, GateSequence)
                else "pass a Track or a CourseLine (tools.CenterlineFromGates)"
            )
            raise TypeError(
                f"TrackLocalizer(line): {type(line).__name__} has no wp.array {name!r}; a line "
                f"has the arrays {', '.join(_LINE_ARRAYS)}: {hint}"
            )
    count = line.count
    E = count.shape[0] if count.ndim == 1 else 0
    rows = line.center.shape[0] if line.center.ndim == 1 else 0
    if E < 1 or rows == 0 or rows % E != 0:
        raise ValueError(
            f"line.center has shape {tuple(line.center.shape)} for {E} envs "
            f"(line.count shape {tuple(count.shape)}): expected a positive multiple of E rows"
        )
    device = line.center.device
    check_array("line.center", line.center, wp.vec3f, rows, device)
    check_array("line.arclen", line.arclen, wp.float32, rows, device)
    for name in ("length", "count", "valid"):
        dtype = wp.float32 if name == "length" else wp.int32
        check_array(f"line.{name}", getattr(line, name), dtype, E, device)
    return E, rows // E, device


class TrackLocalizer:
    """Projects one position per env onto a closed line (see the module docstring for the
    search, the warm window and its bound, and the frame axes).

    Args:
        line: a :class:`~track_gen.results.Track` or a
            :class:`~track_gen.tools.course_line.CourseLine` (any object with the wp.arrays
            ``center`` vec3f ``[E*N]``, ``arclen`` float32 ``[E*N]``, ``length`` float32
            ``[E]``, ``count`` int32 ``[E]``, ``valid`` int32 ``[E]``), read live by pointer:
            a generator's stable ``result`` works across regenerations (:meth:`refresh` the
            regenerated envs).
        warm_window: half-width ``W`` of the warm window in segments (``WARM_WINDOW``: int in
            ``[1, 16384]``), or None for a full search on every locate.

    Construction allocates every buffer and refreshes every env. Attributes (read-only):

    * ``frame``: the :class:`TrackFrame` every :meth:`locate` overwrites.
    * ``curvature``: float32 ``[E*N]``: signed curvature per bead at the env's last refresh,
      1 / track units (NaN past ``count`` and for an invalid env).
    * ``memory``: int32 ``[E]``: the segment the next warm locate centres its window on
      (the last answer), -1 for none (the next locate is a full search).
    """

    def __init__(self, line: Track | CourseLine, *, warm_window: int | None = None):
        E, n_max, device = _check_line(line)
        self.warm_window = WARM_WINDOW.check(warm_window, "TrackLocalizer warm_window")
        require_not_capturing(device, "TrackLocalizer construction")
        self.line = line
        self.device = device
        self.num_envs = E
        self.N_max = n_max
        budget = AllocationBudget(device, "lower num_envs or N_max")
        budget.take(E * 10, wp.float32, "track frames")
        self.frame = TrackFrame.allocate(E, device)
        self.curvature = budget.zeros(E * n_max, wp.float32, "bead curvature (E * N_max)")
        self.memory = budget.full(E, -1, wp.int32, "warm memory")
        self._all = budget.full(E, 1, wp.int32, "all-envs mask")
        self.refresh()

    @staticmethod
    def buffers(num_envs: int, n_max: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a localizer of ``num_envs`` envs on a line of
        ``n_max`` rows per env allocates."""
        E = num_envs
        return TrackFrame.buffers(E) + [(E * n_max, wp.float32), (E, wp.int32), (E, wp.int32)]

    # ------------------------------------------------------------------ derived data

    def refresh(self, mask: wp.array | None = None) -> None:
        """Recompute :attr:`curvature` of the envs with ``mask[e] != 0`` (None: all) from the
        line, and forget their warm memory (their next locate is a full search).

        ``mask`` is a contiguous ``[E]`` int32 array on the line's device, read by pointer.
        Unmasked envs' curvature and memory stay bitwise unchanged (an all-zero mask is an
        exact no-op). One launch, allocation-free; call it after every regeneration."""
        check_mask(mask, self.num_envs, self.device)
        line = self.line
        wp.launch(
            _curvature_kernel,
            (self.num_envs, self.N_max),
            inputs=[self._all if mask is None else mask, line.center, line.count, line.valid]
            + [self.N_max],
            outputs=[self.curvature, self.memory],
            device=self.device,
        )

    def reset(self, mask: wp.array | None = None) -> None:
        """Forget the warm memory of the envs with ``mask[e] != 0`` (None: all): their next
        locate is a full search. Nothing else changes (the frame keeps its last answer)."""
        check_mask(mask, self.num_envs, self.device)
        wp.launch(
            _reset_kernel,
            self.num_envs,
            inputs=[self._all if mask is None else mask],
            outputs=[self.memory],
            device=self.device,
        )

    # ------------------------------------------------------------------ per step

    def locate(self, position: wp.array) -> TrackFrame:
        """Project ``position`` (vec3f ``[E]``, track units) onto each env's line and return
        :attr:`frame` (the same instance every call); the answer's segment becomes the env's
        memory. One launch, no allocation, no host synchronization."""
        check_array("position", position, wp.vec3f, self.num_envs, self.device, "one per env")
        line, f = self.line, self.frame
        wp.launch(
            _locate_kernel,
            self.num_envs,
            inputs=[position, line.center, line.arclen, line.length, line.count, line.valid]
            + [self.N_max, self.warm_window or 0],
            outputs=[
                self.memory,
                f.s,
                f.n,
                f.n_up,
                f.distance,
                f.segment,
                f.closest,
                f.tangent,
            ],
            device=self.device,
        )
        return f

    def curvature_at(self, s: wp.array, out: wp.array) -> wp.array:
        """Curvature at arc lengths ``s`` (float32 ``[E*K]``, ``K >= 1`` queries per env, row
        ``e*K + k``, track units; wrapped into ``[0, length)``), linearly interpolated between
        the beads around it (the closing segment interpolates bead ``count - 1`` -> bead 0),
        written to ``out`` (float32 ``[E*K]``, 1 / track units) and returned. NaN for an
        invalid env or a non-finite ``s``. One launch, allocation-free."""
        E = self.num_envs
        hint = "K queries per env, row e*K + k"
        if not isinstance(s, wp.array) or s.dtype != wp.float32:
            check_array("s", s, wp.float32, E, self.device, hint)  # raises the TypeError
        rows = s.shape[0] if s.ndim == 1 else 0
        if rows == 0 or rows % E != 0:
            raise ValueError(
                f"s has shape {tuple(s.shape)}: expected [E*K] = a positive multiple of "
                f"{E} rows (K queries per env)"
            )
        check_array("s", s, wp.float32, rows, self.device, hint)
        check_array("out", out, wp.float32, rows, self.device, "the same rows as s")
        line = self.line
        wp.launch(
            _curvature_at_kernel,
            (E, rows // E),
            inputs=[s, self.curvature, line.arclen, line.length, line.count, line.valid]
            + [self.N_max, rows // E],
            outputs=[out],
            device=self.device,
        )
        return out

    def speed_profile(self, max_lateral_accel: float, max_speed: float, out: wp.array) -> wp.array:
        """Per-bead speed limit ``min(max_speed, sqrt(max_lateral_accel / |curvature|))``
        (``max_speed`` where the curvature is 0) from :attr:`curvature`, written to ``out``
        (float32 ``[E*N]``) and returned; NaN past ``count`` and for an invalid env.

        Args:
            max_lateral_accel: track units / s^2, in ``[1.18e-38, 1e30]`` (positive as the
                float32 the kernel reads; larger values would overflow it).
            max_speed: track units / s, in the same range.
        """
        a = check_float("max_lateral_accel", max_lateral_accel, lo=_F32_TINY, hi=_SPEED_HI)
        v = check_float("max_speed", max_speed, lo=_F32_TINY, hi=_SPEED_HI)
        rows = self.num_envs * self.N_max
        check_array("out", out, wp.float32, rows, self.device, "one row per bead (E * N_max)")
        wp.launch(
            _speed_profile_kernel,
            rows,
            inputs=[self.curvature, a, v],
            outputs=[out],
            device=self.device,
        )
        return out


class Localizer(Component):
    """Course component ``"localizer"``: the :class:`TrackFrame` of the agent at ``position``
    (vec3f ``[E]``) along the course's line.

    Args:
        warm_window: see :class:`TrackLocalizer` (``WARM_WINDOW``; None: full search).
        source: None reads the generator's result (a Track); else the name of the component
            whose result is the line (``"centerline"`` for a gate course), which the course
            orders before this one.

    ``on_generate(mask)`` refreshes the regenerated envs (curvature, and a full search next);
    ``step`` returns the frame (``res.frame``, ``res["localizer"]``); ``reset(mask)`` forgets
    the masked envs' warm memory. ``utility`` is the :class:`TrackLocalizer`.
    """

    name = "localizer"
    INPUTS = (InputSpec("position", wp.vec3f, doc="agent position per env, track units"),)

    def __init__(
        self, warm_window: int | None = None, source: str | None = None, *, name: str | None = None
    ):
        super().__init__(name=name, source=source)
        self.warm_window = WARM_WINDOW.check(warm_window, "Localizer warm_window")

    def check_family(self, family: str) -> None:
        """Without a ``source`` the localizer reads the generator's own centerline, which a
        gate course does not have (ValueError naming the fix)."""
        if self.source is None and family == "gates":
            raise ValueError(f"Localizer(): {_GATE_HINT}")

    def attach(self, ctx) -> None:
        if self.source is None:
            line = ctx.generator.result
            if isinstance(line, GateSequence):
                raise ValueError(f"Localizer(): {_GATE_HINT}")
            if not isinstance(line, Track):
                raise TypeError(
                    f"Localizer(): the generator's result is a {type(line).__name__}, not a "
                    "Track: pass source=<the name of a component whose result is a line>"
                )
        else:
            line = ctx.get(self.source).result
        self.utility = TrackLocalizer(line, warm_window=self.warm_window)
        self.result = self.utility.frame

    def planned_bytes(self, layout, config) -> int:
        """The :class:`TrackLocalizer`'s buffers: on the generator's centerline
        (``layout.N_max`` rows per env), or on the line of the ``source`` component (its
        ``planned_line_rows(layout)``, else ``layout.N_max``)."""
        rows = layout.N_max
        line_rows = getattr(self.planned_source, "planned_line_rows", None)
        if self.source is not None and callable(line_rows):
            rows = int(line_rows(layout))
        return buffer_bytes(TrackLocalizer.buffers(layout.num_envs, rows))

    def on_generate(self, ctx, mask) -> None:
        self.utility.refresh(mask)

    def step(self, ctx):
        return self.utility.locate(self.bound["position"])

    def reset(self, ctx, mask) -> None:
        self.utility.reset(mask)
