"""Execution helpers shared by generators and courses: capture state, the one graph-variant
cache, and the one-thread-at-a-time guard."""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Hashable

import warp as wp

from .errors import CaptureError

__all__ = [
    "GraphCache",
    "UseGuard",
    "check_stream",
    "is_capturing",
    "require_not_capturing",
    "stream_scope",
]


def is_capturing(device) -> bool:
    """True while a graph capture records on ``device`` (CPU captures included)."""
    return bool(wp.get_device(device).is_capturing)


def require_not_capturing(device, what: str) -> None:
    """Raise :class:`CaptureError` when a capture records on ``device``."""
    if is_capturing(device):
        raise CaptureError(
            f"{what} cannot run inside a graph capture on {wp.get_device(device)}: it "
            "allocates buffers or reads the device. Call it before wp.ScopedCapture / "
            "torch.cuda.graph."
        )


def check_stream(stream, device, name: str = "stream"):
    """``stream`` as a default stream for work on ``device``: None, or a ``wp.Stream`` of that
    CUDA device (TypeError for another kind, ValueError on the CPU or another device)."""
    if stream is None:
        return None
    if not isinstance(stream, wp.Stream):
        raise TypeError(f"{name} must be a wp.Stream or None, got {type(stream).__name__}")
    device = wp.get_device(device)
    if device.is_cpu:
        raise ValueError(f"{name}= is only meaningful on a CUDA device; the CPU has no streams")
    if stream.device != device:
        raise ValueError(
            f"{name} belongs to {stream.device}, the generator runs on {device}: pass a stream "
            "of that device"
        )
    return stream


def stream_scope(stream):
    """``wp.ScopedStream(stream)``, or a no-op for None (the device's current stream)."""
    return wp.ScopedStream(stream) if stream is not None else contextlib.nullcontext()


class GraphCache:
    """One recorded graph per variant of a body, recorded on first use and replayed after.

    Used by both generators and courses (their own graphs on CUDA). ``max_graphs`` graphs at
    most; a further variant runs eagerly with one RuntimeWarning. A variant whose recording
    raises caches nothing (the capture is ended and discarded).
    """

    def __init__(self, owner: str, max_graphs: int):
        self.owner = owner
        self.max_graphs = max_graphs
        self.graphs: dict = {}
        self._warned = False

    @staticmethod
    def variant(advance: bool, mask) -> tuple:
        """The key of a regeneration variant: ``advance`` and the mask's address (a recorded
        graph reads the mask by pointer); ``variant(False, None)`` is the full regeneration."""
        return (advance, None if mask is None else mask.ptr)

    def run(self, key: Hashable, body: Callable[[], None], device, stream=None):
        """Replay the graph of ``key`` (recording ``body`` first); returns it, or None when
        ``body`` ran eagerly because the cache is full."""
        graph = self.graphs.get(key)
        if graph is None:
            if len(self.graphs) >= self.max_graphs:
                if not self._warned:
                    self._warned = True
                    warnings.warn(
                        f"{self.owner}: more than {self.max_graphs - 1} regeneration variants "
                        "besides the full one: further variants run eagerly; keep using one "
                        "mask array (inputs['regen_mask'])",
                        RuntimeWarning,
                        stacklevel=4,
                    )
                with stream_scope(stream):
                    body()
                return None
            with wp.ScopedCapture(device=device, stream=stream) as cap:
                body()
            graph = self.graphs[key] = cap.graph
        wp.capture_launch(graph, stream=stream)
        return graph


class UseGuard:
    """Refuses a call while another thread is inside a call of the same object.

    A generator or course is used by one thread at a time; a second thread calling in while
    the first is working gets a RuntimeError instead of corrupting the batch. Calls from the
    thread already inside (a stage or component calling back) pass through.
    """

    def __init__(self, owner: str):
        self.owner = owner
        self._lock = threading.Lock()
        self._thread: int | None = None
        self._depth = 0

    @contextlib.contextmanager
    def __call__(self, call: str):
        me = threading.get_ident()
        with self._lock:
            if self._thread is not None and self._thread != me:
                raise RuntimeError(
                    f"{self.owner}.{call}: another thread is inside a call of this object: a "
                    f"{self.owner} serves one thread at a time; build one per thread or "
                    "serialize the calls"
                )
            self._thread = me
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    self._thread = None
