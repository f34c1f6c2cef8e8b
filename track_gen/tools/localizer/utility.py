"""The track localizer utility."""

from __future__ import annotations

import numpy as np
import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array, check_float
from ...core.exec import require_not_capturing
from ...core.settings import SettingsUtility, resolve_settings
from ...results import GateSequence, Track
from ..course_line import CourseLineResult
from ..shared import mask_or
from .fields import LocalizerSettings
from .kernels import (
    _curvature_at_kernel,
    _curvature_kernel,
    _locate_kernel,
    _reset_kernel,
    _speed_profile_kernel,
)
from .result import TrackFrame

_LINE_ARRAYS = ("center", "arclen", "length", "count", "valid")


#: Bounds of speed_profile's arguments: the smallest positive normal float32 and a ceiling
#: whose square roots and ratios stay finite in float32.
_F32_TINY = float(np.finfo(np.float32).tiny)


_SPEED_HI = 1.0e30


_GATE_HINT = (
    "a gate course has no centerline of its own: add tools.CenterlineFromGates() and pass "
    "source='centerline'"
)


def _check_line(line):
    """``(num_envs, N_max, device)`` of a line, or TypeError / ValueError naming the array."""
    for name in _LINE_ARRAYS:
        if not isinstance(getattr(line, name, None), wp.array):
            hint = (
                _GATE_HINT
                if isinstance(line, GateSequence)
                else "pass a Track or a CourseLineResult (tools.CenterlineFromGates)"
            )
            raise TypeError(
                f"LocalizerUtility(line): {type(line).__name__} has no wp.array {name!r}; a line "
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


class LocalizerUtility(SettingsUtility):
    """Projects one position per env onto a closed line (see the module docstring for the
    search, the warm window and its bound, and the frame axes).

    Args:
        line: a :class:`~track_gen.results.Track` or a
            :class:`~track_gen.tools.course_line.CourseLineResult` (any object with the wp.arrays
            ``center`` vec3f ``[E*N]``, ``arclen`` float32 ``[E*N]``, ``length`` float32
            ``[E]``, ``count`` int32 ``[E]``, ``valid`` int32 ``[E]``), read live by pointer:
            a generator's stable ``result`` works across regenerations (:meth:`refresh` the
            regenerated envs).
        settings: a :class:`LocalizerSettings` (positionally or as ``settings=``), or
            ``warm_window`` by position or keyword: the half-width ``W`` of the warm window
            in segments (``WARM_WINDOW``: int in ``[1, 16384]``), or None for a full search
            on every locate.

    Construction allocates every buffer and refreshes every env. Attributes (read-only):

    * ``frame``: the :class:`TrackFrame` every :meth:`locate` overwrites.
    * ``curvature``: float32 ``[E*N]``: signed curvature per bead at the env's last refresh,
      1 / track units (NaN past ``count`` and for an invalid env).
    * ``memory``: int32 ``[E]``: the segment the next warm locate centres its window on
      (the last answer), -1 for none (the next locate is a full search).
    """

    SETTINGS = LocalizerSettings

    def __init__(
        self, line: Track | CourseLineResult, *settings: LocalizerSettings | int | None, **fields
    ):
        E, n_max, device = _check_line(line)
        self.settings = resolve_settings(LocalizerSettings, "LocalizerUtility", settings, fields)
        require_not_capturing(device, "LocalizerUtility construction")
        self.line = line
        self.device = device
        self.num_envs = E
        self.N_max = n_max
        budget = AllocationBudget(device, "lower num_envs or N_max")
        self._allocate(self, budget, device, self.settings, E, n_max)
        self.refresh()

    @staticmethod
    def _allocate(out, budget, device, s, E: int, n_max: int) -> None:
        """Every array of a localizer of ``E`` envs on a line of ``n_max`` rows per env, set
        on ``out`` (the localizer, or a stand-in when :meth:`buffers` records a plan)."""
        out.frame = TrackFrame.allocate(E, device, budget)
        out.curvature = budget.zeros(E * n_max, wp.float32, "bead curvature (E * N_max)")
        out.memory = budget.full(E, -1, wp.int32, "warm memory")
        out._all = budget.full(E, 1, wp.int32, "all-envs mask")

    # ------------------------------------------------------------------ derived data

    def refresh(self, mask: wp.array | None = None) -> None:
        """Recompute :attr:`curvature` of the envs with ``mask[e] != 0`` (None: all) from the
        line, and forget their warm memory (their next locate is a full search).

        ``mask`` is a contiguous ``[E]`` int32 array on the line's device, read by pointer.
        Unmasked envs' curvature and memory stay bitwise unchanged (an all-zero mask is an
        exact no-op). One launch, allocation-free; call it after every regeneration."""
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        line = self.line
        wp.launch(
            _curvature_kernel,
            (self.num_envs, self.N_max),
            inputs=[mask, line.center, line.count, line.valid, self.N_max],
            outputs=[self.curvature, self.memory],
            device=self.device,
        )

    def reset(self, mask: wp.array | None = None) -> None:
        """Forget the warm memory of the envs with ``mask[e] != 0`` (None: all): their next
        locate is a full search. Nothing else changes (the frame keeps its last answer)."""
        wp.launch(
            _reset_kernel,
            self.num_envs,
            inputs=[mask_or(mask, self._all, self.num_envs, self.device)],
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
            outputs=[self.memory, *f.arrays()],
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
