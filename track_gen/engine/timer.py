"""Per-stage wall time of a program's regenerations, without a synchronization per stage.

A :class:`StageTimer` marks the boundaries between a regeneration's parts: ``setup`` (the
begin kernel, randomizers and parameter checks), one part per stage, and ``commit`` (the
masked copy into the result and the epochs). On CUDA each mark records a timing event on the
launch stream, so the marks are asynchronous and also land in a graph being recorded: every
replay of that graph re-times it. On the CPU, Warp runs each launch to completion before it
returns, so a mark is a host clock read; inside a CPU capture (a recording, not a run) no mark
is taken and the reading is NaN.

Reading (:meth:`StageTimer.read`) waits for the last mark once; the regeneration itself never
waits for the device.
"""

from __future__ import annotations

import math
import time

import warp as wp

__all__ = ["StageTimer"]


class StageTimer:
    """Boundary marks of one program's regenerations, read as milliseconds per part.

    Built by :meth:`~track_gen.pipeline.Program.time_stages` (its events are allocated then,
    never in the hot path).

    Attributes:
        parts: the timed parts, in order: ``"setup"``, each stage's name, ``"commit"``.
        device: the program's Warp device.
    """

    def __init__(self, device, stage_names):
        self.device = wp.get_device(device)
        self.parts = ("setup", *stage_names, "commit")
        n = len(self.parts) + 1
        if self.device.is_cuda:
            self._events = [wp.Event(self.device, enable_timing=True) for _ in range(n)]
        else:
            self._events = None
        self._host = [math.nan] * n
        self._marked = False

    def mark(self, i: int) -> None:
        """Mark boundary ``i`` (0 before setup, ``len(parts)`` after commit) on the current
        stream; asynchronous on CUDA, recorded into a graph while capturing."""
        if self._events is not None:
            wp.record_event(self._events[i])
        elif self.device.is_capturing:
            self._host[i] = math.nan  # a recording: nothing runs now
        else:
            self._host[i] = time.perf_counter()
        self._marked = True

    def read(self) -> dict[str, float]:
        """Milliseconds of each part in the last timed regeneration (waits for it to finish;
        call outside any capture). All NaN before the first timed regeneration, or when the
        last one was a CPU recording."""
        if not self._marked:
            return {p: math.nan for p in self.parts}
        if self._events is not None:
            wp.synchronize_event(self._events[-1])
            return {
                p: float(wp.get_event_elapsed_time(a, b, synchronize=False))
                for p, a, b in zip(self.parts, self._events[:-1], self._events[1:], strict=True)
            }
        h = self._host
        return {p: (b - a) * 1e3 for p, a, b in zip(self.parts, h[:-1], h[1:], strict=True)}

    def __repr__(self) -> str:
        return f"StageTimer(parts={self.parts!r}, device={str(self.device)!r})"
