"""The allocation budget: every construction-time allocation is counted (and a whole
construction planned) against int32 indexing and the memory the device has free."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import warp as wp

__all__ = [
    "MAX_ELEMENTS",
    "MAX_PLAN_BYTES",
    "AllocationBudget",
    "BufferPlan",
    "memory_budget",
    "planned_buffers",
]

#: Kernels index flat arrays with int32: no array may hold more elements than this.
MAX_ELEMENTS = 2**31 - 1


def memory_budget(device) -> int:
    """Bytes a generator may allocate on ``device``: what the device has free now (CUDA: its
    free memory; the CPU: ``MemAvailable`` of ``/proc/meminfo``), at most its total (the GPU's
    memory, the machine's physical memory)."""
    dev = wp.get_device(device)
    if dev.is_cuda:
        return int(min(dev.total_memory, dev.free_memory))
    try:
        total = int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        total = 2**40
    return min(total, _available_host_memory(total))


def _available_host_memory(default: int) -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return default


class AllocationBudget:
    """Checks every construction-time allocation before it happens.

    Each array must index with int32 (at most ``MAX_ELEMENTS`` elements) and the running total
    must stay within :func:`memory_budget` (read when the budget is made); otherwise a
    ValueError names the array, the sizes and the fields that set them (``hint``). A
    construction counts its buffers first with :meth:`plan`, so a batch too large is refused
    before its first array is allocated; an allocation the device still refuses (its memory
    taken meanwhile) raises the same ValueError instead of Warp's error.
    """

    def __init__(
        self,
        device,
        hint: str = "lower num_envs, N_max or num_points",
        owner: str = "this generator's",
    ):
        self.device = wp.get_device(device)
        self.limit = memory_budget(self.device)
        self.used = 0
        self.hint = hint
        self.owner = owner  # whose buffers the refusal names ("this course's")
        self.taken: list[tuple[str, int, int]] = []  # (what, elements, bytes) of each take
        self.planned: int | None = None  # bytes :meth:`plan` counted (None: no plan made)

    def _check_elements(self, count: int, what: str) -> None:
        if count > MAX_ELEMENTS:
            raise ValueError(
                f"{what} would hold {count:,} elements, more than {MAX_ELEMENTS:,} (kernels "
                f"index with int32): {self.hint}"
            )

    def _check_total(self, total: int, what: str) -> None:
        if total > self.limit:
            raise ValueError(
                f"{what} would bring {self.owner} buffers to {total / 2**30:.1f} GiB, more "
                f"than the {self.limit / 2**30:.1f} GiB budget of {self.device} (its free "
                f"memory): {self.hint}"
            )

    def take(self, count: int, dtype, what: str) -> None:
        count = int(count)
        self._check_elements(count, what)
        nbytes = count * wp.types.type_size_in_bytes(dtype)
        self._check_total(self.used + nbytes, what)
        self.used += nbytes
        self.taken.append((what, count, nbytes))

    def take_bytes(self, nbytes: int, what: str) -> None:
        """Count ``nbytes`` planned elsewhere (a generator's plan, a component's
        ``planned_bytes``) against the total: ValueError naming ``what`` past the budget."""
        nbytes = int(nbytes)
        self._check_total(self.used + nbytes, what)
        self.used += nbytes
        self.taken.append((what, 0, nbytes))

    def plan(self, allocate: Callable[[int, AllocationBudget], Any], num_envs: int) -> None:
        """Count a whole construction before its first allocation.

        ``allocate(n, budget)`` makes every buffer of the construction for ``n`` envs through
        ``budget``. It runs for one and for two envs (tiny allocations, dropped at once); each
        array's element count and the total bytes are extrapolated linearly to ``num_envs``
        (every buffer is a per-env size times E, or a constant) and checked against this
        budget: ValueError naming the first array or the total out of bounds."""
        probes = []
        for n in (1, 2):
            probe = AllocationBudget(self.device, self.hint)
            probe.limit = MAX_PLAN_BYTES
            allocate(n, probe)
            probes.append(probe)
        one, two = probes
        extra = num_envs - 1
        for (what, c1, _), (_, c2, _) in zip(one.taken, two.taken, strict=False):
            self._check_elements(c1 + extra * max(c2 - c1, 0), what)
        total = one.used + extra * max(two.used - one.used, 0)
        self._check_total(self.used + total, "the construction")
        self.planned = total

    def _allocated(self, make: Callable[[], wp.array], what: str) -> wp.array:
        try:
            return make()
        except RuntimeError as exc:
            if "Failed to allocate" not in str(exc):
                raise
            raise ValueError(
                f"{what}: {self.device} refused the allocation ({exc}; this generator's "
                f"buffers would come to {self.used / 2**30:.1f} GiB): {self.hint}"
            ) from None

    def zeros(self, count: int | tuple[int, ...], dtype, what: str) -> wp.array:
        """A zero-filled ``[count]`` array, checked first (``count`` 0 allocates one element);
        a shape tuple (``(E, D)``) gives an array of that shape, each side at least 1."""
        shape, n = _shape(count)
        self.take(n, dtype, what)
        return self._allocated(lambda: wp.zeros(shape, dtype=dtype, device=self.device), what)

    def full(self, count: int | tuple[int, ...], value, dtype, what: str) -> wp.array:
        """A ``[count]`` array (or one of a shape tuple) filled with ``value``, checked first."""
        shape, n = _shape(count)
        self.take(n, dtype, what)
        return self._allocated(lambda: wp.full(shape, value, dtype=dtype, device=self.device), what)

    def array(self, host: np.ndarray, dtype, what: str) -> wp.array:
        self.take(max(len(host), 1), dtype, what)
        return self._allocated(lambda: wp.array(host, dtype=dtype, device=self.device), what)


class BufferPlan:
    """A stand-in for :class:`AllocationBudget` that allocates nothing: it records the
    ``(elements, dtype)`` of every array a construction asks for (in order, in
    :attr:`buffers`) and hands back None. Running a tool's allocation code through it gives
    the tool's buffer plan (what a course counts before it builds) from the same code that
    allocates, so the two cannot drift."""

    def __init__(self):
        self.buffers: list[tuple[int, type]] = []

    def zeros(self, count: int | tuple[int, ...], dtype, what: str) -> None:
        self.buffers.append((_shape(count)[1], dtype))

    def full(self, count: int | tuple[int, ...], value, dtype, what: str) -> None:
        self.buffers.append((_shape(count)[1], dtype))

    def array(self, host: np.ndarray, dtype, what: str) -> None:
        self.buffers.append((max(len(host), 1), dtype))


def planned_buffers(allocate: Callable[[BufferPlan], Any]) -> list[tuple[int, type]]:
    """``(elements, dtype)`` of every array ``allocate(budget)`` makes through its budget,
    recorded by a :class:`BufferPlan` (nothing is allocated)."""
    plan = BufferPlan()
    allocate(plan)
    return plan.buffers


def _shape(count: int | tuple[int, ...]) -> tuple[int | tuple[int, ...], int]:
    """``(shape, elements)`` of a count or a shape tuple, each side at least 1."""
    if isinstance(count, tuple):
        shape = tuple(max(int(c), 1) for c in count)
        return shape, math.prod(shape)
    n = max(int(count), 1)
    return n, n


#: A probe of :meth:`AllocationBudget.plan` allocates for one or two envs; its own limit only
#: guards against a runaway plugin.
MAX_PLAN_BYTES = 2**34
