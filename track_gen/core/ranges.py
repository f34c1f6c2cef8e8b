"""Contiguous env ranges on CPU threads: the split, the shared worker pool, and range views
of per-env objects (a course tool's utility cut to envs ``[lo, hi)``).

Warp runs each CPU launch on one thread and releases the GIL while the kernel runs, so the
launches of disjoint env ranges, each on its own Python thread, run at the same time. Every
kernel of a range reads and writes that range's rows only, so the bytes do not depend on the
split.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import warp as wp

from .exec import is_capturing
from .rows import RowBatch

__all__ = ["EnvSplit", "available_cores", "env_ranges", "range_view", "run_ranges"]


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


def env_ranges(num_envs: int, threads: int) -> list[tuple[int, int]]:
    """``threads`` contiguous ``(lo, hi)`` env ranges covering ``[0, num_envs)``, sizes
    differing by one at most (the first ones larger)."""
    base, extra = divmod(num_envs, threads)
    out, lo = [], 0
    for t in range(threads):
        hi = lo + base + (1 if t < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


#: Worker threads shared by every program and course (created as ranges need them).
_POOL_SIZE = 256
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _workers() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_POOL_SIZE, thread_name_prefix="track_gen-range")
        return _pool


def run_ranges(tasks: Sequence[Callable[[], None]]) -> None:
    """Run every task, the first on the calling thread and each other one on a worker
    thread, and wait for all of them; then re-raise the first exception any task raised
    (in task order), so no task is still running when this returns or raises."""
    futures = [_workers().submit(task) for task in tasks[1:]]
    first: BaseException | None = None
    try:
        tasks[0]()
    except BaseException as exc:  # re-raised once every range has finished
        first = exc
    errors = [first] + [f.exception() for f in futures]  # waits for each
    for exc in errors:
        if exc is not None:
            raise exc


def _cut(value, num_envs: int, lo: int, hi: int, seen: dict):
    if id(value) in seen:
        return seen[id(value)]
    out = value
    if isinstance(value, wp.array):
        if value.ndim == 1 and value.shape[0] % num_envs == 0:
            per_env = value.shape[0] // num_envs
            out = value[lo * per_env : hi * per_env]
        elif value.ndim > 1 and value.shape[0] == num_envs:
            out = value[lo:hi]
    elif isinstance(value, RowBatch):
        out = value.env_range(lo, hi)
    elif isinstance(value, (list, tuple)):  # a list of scratch arrays, say
        out = type(value)(_cut(v, num_envs, lo, hi, seen) for v in value)
    elif isinstance(value, dict):
        out = {k: _cut(v, num_envs, lo, hi, seen) for k, v in value.items()}
    seen[id(value)] = out
    return out


def range_view(obj, num_envs: int, lo: int, hi: int):
    """A shallow copy of ``obj`` cut to envs ``[lo, hi)``: every ``wp.array`` attribute
    whose length is a multiple of ``num_envs`` (env-major rows) is the matching slice, a
    :class:`~track_gen.core.rows.RowBatch` attribute its :meth:`~RowBatch.env_range` (in
    lists, tuples and dicts too), and ``num_envs`` is ``hi - lo``; anything else is
    shared. For the course tools, whose every per-env buffer is env-major; arrays share
    memory with ``obj``."""
    view = copy.copy(obj)
    seen: dict = {}
    for name, value in vars(obj).items():
        setattr(view, name, _cut(value, num_envs, lo, hi, seen))
    if "num_envs" in vars(obj):
        view.num_envs = hi - lo
    return view


class EnvSplit:
    """A per-generation refresh of a course tool run on the generator's env ranges.

    ``EnvSplit(utility, generator)`` builds one :func:`range_view` of ``utility`` per range
    of the generator's ``cpu_threads`` (none on one thread or on CUDA). ``run(call, None)``
    calls ``call(view, None)`` for every range on its own thread; a masked refresh (the
    auto-reset of a few envs: its cost follows them) and any call inside a capture (a
    recorded graph replays the whole batch's launches) is ``call(utility, mask)``, once, on
    the calling thread, as the generator does."""

    def __init__(self, utility, generator):
        self.utility = utility
        ranges = getattr(generator, "env_ranges", ())
        E = generator.num_envs
        self.ranges = list(ranges) if len(ranges) > 1 else []
        self.views = [range_view(utility, E, lo, hi) for lo, hi in self.ranges]
        self._device = generator.device

    def run(self, call: Callable, mask) -> None:
        if not self.views or mask is not None or is_capturing(self._device):
            call(self.utility, mask)
            return
        run_ranges([(lambda v=v: call(v, None)) for v in self.views])
