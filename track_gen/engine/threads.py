"""CPU threads: the ``cpu_threads`` field, contiguous env ranges, and the buffers of a range.

Warp runs each CPU launch on one thread, and a CPU launch releases the GIL while its kernel
runs. A program on the CPU therefore splits its batch into ``T`` contiguous env ranges and
runs each range's stages on its own Python thread (:func:`run_ranges`); every kernel of a
range reads and writes only that range's rows, so the output is bitwise identical for every
thread count.

A range's stages are fresh instances of the program's stages, allocated through a
:class:`RangeBudget`: each buffer the stage asks for is the matching buffer of the whole
batch, cut to the range. A buffer of ``c * E`` elements becomes the range's
``[lo * c, hi * c)`` slice (so a user-visible per-env input or diagnostic is the same memory);
a buffer whose size does not depend on E (a table) is allocated again for the range (so no
two threads share scratch). A stage whose allocation is anything else (``a + b * E``) is not
range-safe, and the program runs on one thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import warp as wp

from ..core.budget import AllocationBudget
from ..core.ranges import available_cores, env_ranges, run_ranges
from ..core.tunable import Tunable

__all__ = [
    "CPU_THREADS",
    "MIN_ENVS_PER_THREAD",
    "MIN_GATE_ENVS_PER_THREAD",
    "NotRangeSafeError",
    "RangeBudget",
    "RecordingBudget",
    "available_cores",
    "cpu_threads_values",
    "env_ranges",
    "resolve_cpu_threads",
    "run_ranges",
]

#: Fewest envs each thread keeps under ``cpu_threads="auto"`` (below that a thread's launch
#: overhead outweighs its share of the work).
MIN_ENVS_PER_THREAD = 64
#: The same for gate courses, whose kernels are short: at E=1024 a gate course costs ~2 ms on
#: one thread, and a second thread gained 0.86-1.36x (benchmarks/generate.py --family gates).
MIN_GATE_ENVS_PER_THREAD = 2048

CPU_THREADS = Tunable(
    "cpu_threads",
    "auto",
    kind="int",
    lo=1,
    hi=1024,
    choices=("auto",),
    unit="threads",
    doc="CPU threads a regeneration runs on: the batch is split into contiguous env ranges, "
    "one per thread, with bitwise-identical output for every count. 'auto' takes the cores "
    f"this process may use, capped so each thread keeps at least {MIN_ENVS_PER_THREAD} envs "
    f"({MIN_GATE_ENVS_PER_THREAD} for gate courses); 1 runs on one thread; CUDA devices "
    "ignore it.",
)


class NotRangeSafeError(Exception):
    """A stage's allocation does not split by env (raised inside the program, which then
    runs on one thread)."""


def cpu_threads_values(texts, owner: str = "--cpu-threads") -> list:
    """Command-line ``cpu_threads`` values (``"auto"`` or an int, as text) checked against
    the one declaration, ``CPU_THREADS`` (TypeError / ValueError naming ``owner``, the value
    and the range)."""
    out = []
    for text in texts:
        value = int(text) if text.lstrip("+-").isdigit() else text
        out.append(CPU_THREADS.check(value, owner))
    return out


def resolve_cpu_threads(value, num_envs: int, device, family: str = "track") -> int:
    """Threads a program of ``num_envs`` envs of ``family`` (``"track"`` or ``"gates"``) on
    ``device`` runs on: 1 on CUDA; ``"auto"``: :func:`available_cores` capped to
    ``num_envs // MIN_ENVS_PER_THREAD`` (``MIN_GATE_ENVS_PER_THREAD`` for gates); an int:
    itself, capped to ``num_envs`` (every thread keeps one env at least)."""
    if wp.get_device(device).is_cuda:
        return 1
    if value == "auto":
        least = MIN_GATE_ENVS_PER_THREAD if family == "gates" else MIN_ENVS_PER_THREAD
        return max(1, min(available_cores(), num_envs // least))
    return max(1, min(int(value), num_envs))


class RecordingBudget:
    """An :class:`AllocationBudget` front that records every array it hands out, in order
    (the whole batch's allocation of one stage, which a :class:`RangeBudget` replays)."""

    def __init__(self, budget: AllocationBudget):
        self._budget = budget
        self.log: list[tuple[int, object, str, wp.array]] = []

    def __getattr__(self, name):  # take, take_bytes, device, hint, used, ...
        return getattr(self._budget, name)

    def _keep(self, count: int, dtype, what: str, arr: wp.array) -> wp.array:
        self.log.append((int(count), dtype, what, arr))
        return arr

    def zeros(self, count: int, dtype, what: str) -> wp.array:
        return self._keep(count, dtype, what, self._budget.zeros(count, dtype, what))

    def full(self, count: int, value, dtype, what: str) -> wp.array:
        return self._keep(count, dtype, what, self._budget.full(count, value, dtype, what))

    def array(self, host: np.ndarray, dtype, what: str) -> wp.array:
        return self._keep(len(host), dtype, what, self._budget.array(host, dtype, what))


class RangeBudget:
    """The allocations of one env range ``[lo, hi)`` of a batch of ``num_envs`` envs: the
    ``k``-th request is answered from the ``k``-th record of the whole batch's allocation
    (``log``, from a :class:`RecordingBudget`). Raises :class:`NotRangeSafeError` for a request
    that does not match its record or splits neither per env nor as a constant."""

    def __init__(self, budget: AllocationBudget, log, num_envs: int, lo: int, hi: int):
        self._budget = budget
        self._log = list(log)
        self._next = 0
        self._E, self._lo, self._hi = num_envs, lo, hi

    def __getattr__(self, name):
        return getattr(self._budget, name)

    def _record(self, count: int, dtype, what: str):
        if self._next >= len(self._log):
            raise NotRangeSafeError(f"{what}: allocated for a range but not for the batch")
        rec = self._log[self._next]
        self._next += 1
        if rec[1] is not dtype or rec[2] != what:
            raise NotRangeSafeError(f"{what}: allocated in another order for a range")
        return rec

    def _cut(self, count: int, dtype, what: str, again: Callable[[], wp.array]) -> wp.array:
        whole, _, _, arr = self._record(count, dtype, what)
        n = self._hi - self._lo
        count = int(count)
        if count == whole:  # a size that does not depend on E: the range's own copy
            return again()
        per_env, rest = divmod(whole, self._E)
        if rest or count != per_env * n or arr.ndim != 1:
            raise NotRangeSafeError(f"{what}: {whole} elements for {self._E} envs, {count} for {n}")
        return arr[self._lo * per_env : self._hi * per_env]

    def zeros(self, count: int, dtype, what: str) -> wp.array:
        return self._cut(count, dtype, what, lambda: self._budget.zeros(count, dtype, what))

    def full(self, count: int, value, dtype, what: str) -> wp.array:
        return self._cut(count, dtype, what, lambda: self._budget.full(count, value, dtype, what))

    def array(self, host: np.ndarray, dtype, what: str) -> wp.array:
        return self._cut(len(host), dtype, what, lambda: self._budget.array(host, dtype, what))

    def done(self) -> None:
        if self._next != len(self._log):
            raise NotRangeSafeError("a range allocated fewer buffers than the batch")
