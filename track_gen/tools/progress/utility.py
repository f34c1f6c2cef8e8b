"""Checkpoint progress of one agent per env: :class:`ProgressTracker` and
:class:`ProgressEvents`.

Each :meth:`ProgressTracker.update` sweeps the agent's motion since the previous update
(a segment) through the plane of its next target checkpoint: landing on or past the plane
from its negative side, inside the opening, passes the checkpoint; going back through it,
inside the opening, is a wrong-way event. Checkpoint 0 is the start line, so spawn agents just
behind it; a lap is counted when the last checkpoint is passed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import warp as wp

from ...core.checks import check_array, check_mask
from ...core.component import Component, InputSpec, buffer_bytes
from ...core.exec import require_not_capturing
from ...core.extents import clamp3, in_range3
from ..checkpoints import CheckpointSet

wp.set_module_options({"enable_backward": False})

__all__ = ["Progress", "ProgressEvents", "ProgressTracker"]

_NAN = wp.constant(float("nan"))


@dataclass
class ProgressEvents:
    """Per-env progress after the last update (the same instance every call; ``clone()`` for
    a snapshot).

    Attributes:
        passed: int32 ``[E]``: 1 on the update that passed the target checkpoint forward.
        wrong_way: int32 ``[E]``: 1 on the update that crossed the target's plane backward
            inside its opening (no state change).
        laps: int32 ``[E]``: laps completed since the last reset (a lap completes when the
            last checkpoint is passed).
        progress: int32 ``[E]``: checkpoints passed since the last reset.
        next_index: int32 ``[E]``: index of the target checkpoint.
        dist_to_next: float32 ``[E]``: 3D distance from the agent to the target's
            ``position``, track units (the agent's position clamped to ``COORD_LIMIT``,
            1e18: finite for any finite position); 0 for an env that is invalid or has no
            checkpoints (its progress is frozen), right after a reset and while the target's
            position is non-finite or beyond ``COORD_LIMIT`` (a hand-made CheckpointSet);
            NaN for a non-finite position (no crossing is counted then).
    """

    passed: wp.array
    wrong_way: wp.array
    laps: wp.array
    progress: wp.array
    next_index: wp.array
    dist_to_next: wp.array

    @staticmethod
    def buffers(num_envs: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array :meth:`allocate` makes."""
        return [(num_envs, wp.int32)] * 5 + [(num_envs, wp.float32)]

    @classmethod
    def allocate(cls, num_envs: int, device) -> ProgressEvents:
        def i32():
            return wp.zeros(num_envs, dtype=wp.int32, device=device)

        return cls(
            passed=i32(),
            wrong_way=i32(),
            laps=i32(),
            progress=i32(),
            next_index=i32(),
            dist_to_next=wp.zeros(num_envs, dtype=wp.float32, device=device),
        )

    def clone(self) -> ProgressEvents:
        """A detached deep copy (allocates: call it outside your graph)."""
        return ProgressEvents(
            **{f.name: wp.clone(getattr(self, f.name)) for f in dataclasses.fields(self)}
        )


@wp.kernel
def _update_kernel(
    # inputs
    position: wp.array(dtype=wp.vec3f),
    cp_position: wp.array(dtype=wp.vec3f),
    cp_left: wp.array(dtype=wp.vec3f),
    cp_right: wp.array(dtype=wp.vec3f),
    cp_tangent: wp.array(dtype=wp.vec3f),
    cp_up_half: wp.array(dtype=wp.float32),
    cp_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    # static
    use_valid: int,
    cap: int,
    # outputs
    prev_inout: wp.array(dtype=wp.vec3f),
    passed_out: wp.array(dtype=wp.int32),
    wrong_way_out: wp.array(dtype=wp.int32),
    laps_inout: wp.array(dtype=wp.int32),
    progress_inout: wp.array(dtype=wp.int32),
    next_inout: wp.array(dtype=wp.int32),
    dist_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    n = wp.min(cp_count[e], cap)
    live = int(0)
    if n > 0:
        live = 1
    if use_valid != 0:
        if valid[e] == 0:
            live = 0
    passed_out[e] = 0
    wrong_way_out[e] = 0
    if live == 0:
        # frozen: laps / progress / target unchanged, no crossing on the next live update
        prev_inout[e] = wp.vec3f(_NAN, _NAN, _NAN)
        dist_out[e] = 0.0
        return
    g = next_inout[e]
    if g < 0 or g >= n:
        g = 0  # regenerated without a reset
    base = e * cap
    p1 = position[e]
    finite = wp.isfinite(p1[0]) and wp.isfinite(p1[1]) and wp.isfinite(p1[2])
    if finite:
        p1 = clamp3(p1)  # core/extents.py: the crossing test and the distance stay finite
    p0 = prev_inout[e]
    step = int(0)  # +1 forward pass, -1 wrong way
    if wp.isfinite(p0[0]) and wp.isfinite(p0[1]) and wp.isfinite(p0[2]):
        left = cp_left[base + g]
        right = cp_right[base + g]
        nrm = cp_tangent[base + g]
        mid = 0.5 * (left + right)
        d0 = wp.dot(p0 - mid, nrm)
        d1 = wp.dot(p1 - mid, nrm)
        direction = int(0)
        if d0 < 0.0 and d1 >= 0.0:
            direction = 1
        elif d0 > 0.0 and d1 <= 0.0:
            direction = -1
        if direction != 0:
            across = right - left
            width = wp.length(across)
            if width > 0.0:
                u_axis = across / width
                vc = wp.cross(u_axis, nrm)
                vlen = wp.length(vc)
                if vlen > 1.0e-12:
                    v_axis = vc / vlen
                    x = p0 + (d0 / (d0 - d1)) * (p1 - p0)
                    u = wp.dot(x - mid, u_axis)
                    v = wp.dot(x - mid, v_axis)
                    if wp.abs(u) <= 0.5 * width and wp.abs(v) <= cp_up_half[base + g]:
                        step = direction
    if step > 0:
        passed_out[e] = 1
        progress_inout[e] = progress_inout[e] + 1
        g = g + 1
        if g >= n:
            g = 0
            laps_inout[e] = laps_inout[e] + 1
    elif step < 0:
        wrong_way_out[e] = 1
    next_inout[e] = g
    prev_inout[e] = p1
    target = cp_position[base + g]
    dist = float(_NAN)  # a non-finite position: no distance
    if finite:
        dist = 0.0  # a target out of range: none either
        if in_range3(target):
            dist = wp.length(p1 - target)
    dist_out[e] = dist


@wp.kernel
def _reset_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    # static
    use_mask: int,
    # outputs
    prev_out: wp.array(dtype=wp.vec3f),
    passed_out: wp.array(dtype=wp.int32),
    wrong_way_out: wp.array(dtype=wp.int32),
    laps_out: wp.array(dtype=wp.int32),
    progress_out: wp.array(dtype=wp.int32),
    next_out: wp.array(dtype=wp.int32),
    dist_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    if use_mask != 0:
        if mask[e] == 0:
            return
    prev_out[e] = wp.vec3f(_NAN, _NAN, _NAN)
    passed_out[e] = 0
    wrong_way_out[e] = 0
    laps_out[e] = 0
    progress_out[e] = 0
    next_out[e] = 0
    dist_out[e] = 0.0


class ProgressTracker:
    """Counts one agent's passes through its checkpoints, per env.

    Args:
        checkpoints: a :class:`~track_gen.tools.checkpoints.CheckpointSet` (a
            :class:`~track_gen.tools.checkpoints.CheckpointPlacer`'s result, or
            ``CheckpointSet.from_gates(seq)``), read live by pointer.
        valid: optional int32 ``[E]`` array on the same device (the generator's
            ``result.valid``), read live: an env with ``valid[e] == 0`` is frozen like an env
            without checkpoints. None: only ``count`` decides.

    :meth:`update` is one launch, allocation-free and capturable; :meth:`reset` likewise.
    After a regeneration, :meth:`reset` the regenerated envs (a stale target index is
    clamped to checkpoint 0). Construction allocates (outside any capture) and leaves every
    env reset.
    """

    @staticmethod
    def buffers(num_envs: int) -> list[tuple[int, type]]:
        """``(count, dtype)`` of every array a tracker of ``num_envs`` envs allocates (its
        :class:`ProgressEvents`, the previous positions and an empty array)."""
        return ProgressEvents.buffers(num_envs) + [(num_envs, wp.vec3f), (1, wp.int32)]

    def __init__(self, checkpoints: CheckpointSet, valid: wp.array | None = None):
        if not isinstance(checkpoints, CheckpointSet):
            raise TypeError(
                "ProgressTracker(checkpoints): expected a CheckpointSet (CheckpointPlacer("
                "...).checkpoints or CheckpointSet.from_gates(seq)), got "
                f"{type(checkpoints).__name__}"
            )
        cs = checkpoints
        for name in ("position", "left", "right", "tangent", "up_half", "count"):
            if not isinstance(getattr(cs, name), wp.array):
                raise TypeError(f"checkpoints.{name} must be a wp.array")
        E = cs.count.shape[0] if cs.count.ndim == 1 else 0
        device = cs.position.device
        rows = cs.position.shape[0]
        if E < 1 or rows == 0 or rows % E != 0:
            raise ValueError(
                f"checkpoints.position has {rows} rows for {E} envs: expected a positive "
                "multiple of E (a CheckpointSet)"
            )
        check_array("checkpoints.count", cs.count, wp.int32, E, device)
        for name in ("position", "left", "right", "tangent", "up_half"):
            dtype = wp.float32 if name == "up_half" else wp.vec3f
            check_array(f"checkpoints.{name}", getattr(cs, name), dtype, rows, device)
        if valid is not None:
            check_array(
                "valid", valid, wp.int32, E, device, "pass the generator's result.valid or None"
            )
        require_not_capturing(device, "ProgressTracker construction")
        self.checkpoints = cs
        self.valid = valid
        self.device = device
        self._cap = rows // E
        self.events = ProgressEvents.allocate(E, device)
        nan = float("nan")
        self._prev = wp.full(E, wp.vec3f(nan, nan, nan), dtype=wp.vec3f, device=device)
        self._no_array = wp.zeros(1, dtype=wp.int32, device=device)
        # the buffers above are ProgressTracker.buffers(E)
        self._update_key: tuple | None = None  # (position, valid) the launch was recorded on
        self._update_launch = None

    @property
    def num_envs(self) -> int:
        return self.events.passed.shape[0]

    def _check_position(self, position) -> None:
        check_array("position", position, wp.vec3f, self.num_envs, self.device, "one agent per env")

    def update(self, position: wp.array) -> ProgressEvents:
        """Advance every env by the agent's move from the previous update to ``position``
        (vec3f ``[E]``) and return :attr:`events` (the same instance every call).

        Per env: an invalid env or one without checkpoints (``count`` clamped to the
        capacity) is frozen (``passed = wrong_way = 0``, ``dist_to_next = 0``). Otherwise the
        segment from the previous position (none right after a reset: no crossing) to
        ``position`` is tested against the target's plane: forward (``d0 < 0 <= d1``) inside
        the opening passes it (``passed = 1``, target + 1, ``progress`` + 1, and ``laps`` + 1
        when the target wraps to 0); backward (``d0 > 0 >= d1``) inside the opening sets
        ``wrong_way``. At most one checkpoint per update.

        A finite position is clamped to ``COORD_LIMIT`` (1e18 track units; within it, used
        as is), so every output of a live env is finite; a non-finite position counts no
        crossing and reads ``dist_to_next = NaN`` (the next update counts none either).
        """
        key = (position, self.valid)
        if self._update_key is None or any(
            a is not b for a, b in zip(key, self._update_key, strict=True)
        ):
            # a new array: check it, then record the launch on it once (the same array is
            # read by pointer and neither checked nor packed again: ~0.04 ms per call saved)
            self._check_position(position)
            self._update_launch = self._record_update(position)
            self._update_key = key
        self._update_launch.launch()
        return self.events

    def _record_update(self, position: wp.array):
        cs, ev = self.checkpoints, self.events
        return wp.launch(
            _update_kernel,
            self.num_envs,
            inputs=[
                position,
                cs.position,
                cs.left,
                cs.right,
                cs.tangent,
                cs.up_half,
                cs.count,
                self._no_array if self.valid is None else self.valid,
                0 if self.valid is None else 1,
                self._cap,
            ],
            outputs=[
                self._prev,
                ev.passed,
                ev.wrong_way,
                ev.laps,
                ev.progress,
                ev.next_index,
                ev.dist_to_next,
            ],
            device=self.device,
            record_cmd=True,
        )

    def reset(self, mask: wp.array | None = None) -> None:
        """Reset the envs with ``mask[e] != 0`` (None: every env): target 0, laps, progress,
        events and ``dist_to_next`` 0, and no previous position, so the first update after
        a reset or teleport never counts a crossing. Unmasked envs stay bitwise unchanged.
        """
        check_mask(mask, self.num_envs, self.device)
        ev = self.events
        wp.launch(
            _reset_kernel,
            self.num_envs,
            inputs=[self._no_array if mask is None else mask, 0 if mask is None else 1],
            outputs=[
                self._prev,
                ev.passed,
                ev.wrong_way,
                ev.laps,
                ev.progress,
                ev.next_index,
                ev.dist_to_next,
            ],
            device=self.device,
        )


class Progress(Component):
    """Course component ``"progress"``: checkpoint passes, wrong-way crossings and laps of the
    agent at ``position`` (vec3f ``[E]``), read from the ``"checkpoints"`` component.

    ``step`` returns the :class:`ProgressEvents` (``res.events``); ``reset(mask)`` restarts the
    masked envs (no false crossing on the first step after a reset); an invalid env is frozen
    with ``dist_to_next = 0``. ``utility`` is the :class:`ProgressTracker`.
    """

    name = "progress"
    source = "checkpoints"
    INPUTS = (InputSpec("position", wp.vec3f, doc="agent position per env, track units"),)

    def attach(self, ctx) -> None:
        checkpoints = ctx.get(self.source).result
        self.utility = ProgressTracker(checkpoints, valid=ctx.generator.result.valid)
        self.result = self.utility.events

    def planned_bytes(self, layout, config) -> int:
        """The :class:`ProgressTracker`'s buffers (:meth:`ProgressTracker.buffers`)."""
        return buffer_bytes(ProgressTracker.buffers(layout.num_envs))

    def step(self, ctx):
        return self.utility.update(self.bound["position"])

    def reset(self, ctx, mask) -> None:
        self.utility.reset(mask)
