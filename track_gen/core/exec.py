"""Execution helpers shared by generators and courses: capture state, the conditional
regeneration (``conditional()`` / ``unconditional()``), the one graph-variant cache, and the
one-thread-at-a-time guard."""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import warnings
from collections.abc import Callable, Hashable

import warp as wp

from .errors import CaptureError

__all__ = [
    "MODE",
    "REGISTERED_KEEP",
    "REGISTERED_STREAM",
    "GraphCache",
    "UseGuard",
    "as_device",
    "check_stream",
    "conditional",
    "is_capturing",
    "load_masked",
    "record_masked",
    "require_not_capturing",
    "stream_scope",
    "unconditional",
    "use_conditional",
]

wp.set_module_options({"enable_backward": False})

#: ``"conditional"`` inside :func:`conditional` (and ``registered(conditional=True)``),
#: ``"unconditional"`` inside :func:`unconditional` (and ``registered()``), else None.
MODE: contextvars.ContextVar[str | None] = contextvars.ContextVar("track_gen_mode", default=None)
#: The Warp stream of an active ``track_gen.interop.torch.registered()`` block, else None.
REGISTERED_STREAM: contextvars.ContextVar = contextvars.ContextVar(
    "track_gen_registered_stream", default=None
)
#: The keep-alive list of an active ``registered()`` block (the courses that recorded on its
#: stream, kept alive with the torch graph when the block ends), else None.
REGISTERED_KEEP: contextvars.ContextVar[list | None] = contextvars.ContextVar(
    "track_gen_registered_keep", default=None
)
#: Tests only: let a CPU capture record the conditional node (Warp records ``capture_if`` on
#: the CPU too); the documented behaviour is an unconditional recording on the CPU.
_CPU_CONDITIONAL = False


@contextlib.contextmanager
def conditional():
    """Record masked regenerations behind a conditional node where a capture could not be
    recognized as Warp's own (your ``wp.ScopedCapture`` of torch's current stream). Under
    ``torch.cuda.graph`` use ``track_gen.interop.torch.registered(conditional=True)``.
    Needs CUDA with ``wp.is_conditional_graph_supported()``; elsewhere it changes nothing."""
    token = MODE.set("conditional")
    try:
        yield
    finally:
        MODE.reset(token)


@contextlib.contextmanager
def unconditional():
    """Record masked regenerations without a conditional node: a full body per replay. Use it
    when the graph must become a CUDA child graph, while a side stream forked in your capture
    is still open, or around a component whose hooks a conditional body cannot hold."""
    token = MODE.set("unconditional")
    try:
        yield
    finally:
        MODE.reset(token)


def _torch_capture_stream(device):
    """torch's current stream as a Warp stream when torch is imported and that stream is
    capturing on ``device`` (no import of torch otherwise), else None."""
    torch = sys.modules.get("torch")
    if torch is None or not device.is_cuda:
        return None
    try:
        if not torch.cuda.is_current_stream_capturing():
            return None
        return wp.stream_from_torch(torch.cuda.current_stream(device.ordinal))
    except Exception:  # a torch without CUDA, or another device: not a torch capture here
        return None


def capture_stream(device, stream=None):
    """The stream a library call records on: ``stream`` when given, else an active
    ``registered()`` block's stream, else torch's capturing stream (calls adopt it on their
    own), else None (the device's current stream)."""
    if stream is not None:
        return stream
    device = wp.get_device(device)
    registered = REGISTERED_STREAM.get()
    if registered is not None and registered.device == device:
        return registered
    return _torch_capture_stream(device)


def use_conditional(device, stream=None) -> bool:
    """Whether a masked regeneration recorded now on ``stream`` goes behind a conditional node
    (the cost table of the capture guide): only while a capture that Warp knows records on a
    CUDA device with ``wp.is_conditional_graph_supported()``, outside :func:`unconditional`,
    and, on torch's current stream, only inside :func:`conditional` (or
    ``registered(conditional=True)``)."""
    device = as_device(device)
    if stream is not None and not isinstance(stream, wp.Stream):
        raise TypeError(f"stream must be a wp.Stream or None, got {type(stream).__name__}")
    mode = MODE.get()
    if mode == "unconditional" or not device.is_capturing:
        return False
    if device.is_cpu:
        return _CPU_CONDITIONAL
    if not wp.is_conditional_graph_supported():
        return False
    stream = stream if stream is not None else device.stream
    if device.captures.get(stream) is None:
        return False  # a capture Warp does not know (a plain torch.cuda.graph)
    if mode == "conditional":
        return True
    torch_stream = _torch_capture_stream(device)
    return torch_stream is None or torch_stream.cuda_stream != stream.cuda_stream


@wp.kernel
def _any_set_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    # outputs
    flag_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if mask[e] != 0:
        flag_out[0] = 1  # every writer writes the same value: the result is deterministic


def load_masked(mask, flag, device) -> None:
    """Launch the mask reduction once, outside any capture, so its module is loaded before a
    capture records it (``flag`` is left holding whether ``mask`` has a nonzero entry)."""
    flag.zero_()
    wp.launch(_any_set_kernel, mask.shape[0], inputs=[mask], outputs=[flag], device=device)


def record_masked(body: Callable[[], None], mask, flag, device, stream=None) -> bool:
    """Run (or record) ``body``, a masked regeneration, behind a conditional node when
    :func:`use_conditional` says so: two small launches reduce ``mask`` to ``flag`` (int32
    ``[1]``) and ``wp.capture_if`` skips ``body`` on device when no env is masked. Otherwise
    ``body`` runs (or is recorded) as is. Returns True when the node was recorded."""
    if mask is None or not use_conditional(device, stream):
        body()
        return False
    flag.zero_()
    wp.launch(
        _any_set_kernel, mask.shape[0], inputs=[mask], outputs=[flag], device=device, stream=stream
    )
    wp.capture_if(flag, on_true=body, stream=stream)
    return True


def is_capturing(device) -> bool:
    """True while a graph capture records on ``device`` (CPU captures included): a capture
    Warp knows, the device's current stream capturing, or torch's current stream capturing
    there (checked only when torch is already imported)."""
    device = wp.get_device(device)
    if device.is_capturing:
        return True
    return device.is_cuda and _torch_capture_stream(device) is not None


def require_not_capturing(device, what: str) -> None:
    """Raise :class:`CaptureError` when a capture records on ``device``."""
    if is_capturing(device):
        raise CaptureError(
            f"{what} cannot run inside a graph capture on {wp.get_device(device)}: it "
            "allocates buffers or reads the device. Call it before wp.ScopedCapture / "
            "torch.cuda.graph."
        )


def as_device(device, name: str = "device"):
    """``device`` (a ``wp.Device`` or a device name such as ``"cpu"`` / ``"cuda:0"``) as a
    Warp device: TypeError for another kind, ValueError for a device this machine lacks."""
    if isinstance(device, wp.Device):
        return device
    if not isinstance(device, str):
        raise TypeError(
            f"{name} must be a wp.Device or a device name (str), got {type(device).__name__}"
        )
    try:
        return wp.get_device(device)
    except (RuntimeError, ValueError) as err:
        known = ", ".join(str(d) for d in wp.get_devices())
        raise ValueError(f"{name} = {device!r} is not available here; use one of: {known}") from err


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
