"""Courses inside ``torch.cuda.graph``: :func:`registered` and :func:`retain`.

Inside ``torch.cuda.graph(g)`` library calls adopt torch's capture stream on their own, and
record into ``g``. Two helpers make that recording complete::

    import torch
    from track_gen.interop.torch import registered, retain

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        with registered(conditional=True) as s:  # torch's capture stream, known to Warp
            sim_step(pos, quat, stream=s)       # your own Warp launches go to s
            res = course.step()                 # library calls adopt it on their own
            wp.launch(reward_and_done, E, [...], stream=s)
            course.regenerate(mask=done, advance=True)
            respawn(done, pos, quat, stream=s)  # Warp only: no torch allocation after it
    retain(g, course)                           # the course now lives as long as g

:func:`registered` (``conditional: bool = False``, ``capture_mode=None``) is entered INSIDE
``torch.cuda.graph(g)``. It registers torch's capture with Warp
(``wp.capture_begin(stream=s, external=True, ...)``), so that Warp knows the capture, and
yields ``s``, torch's capture stream as a ``wp.Stream``, for your own Warp launches. Library
calls in the block record on ``s``; every course that records on it is kept alive as long as
``g`` when the block ends (:func:`retain`; when ``g`` cannot be found, for the rest of the
process, with one ``RuntimeWarning`` recommending ``retain(g, course)``). On exit it ends
Warp's registration (``wp.capture_end(stream=s)``); torch ends its own capture when
``torch.cuda.graph`` exits.

:func:`retain` (``graph, *objects``) keeps ``objects`` alive as long as ``graph`` and returns
``graph``; calling it again adds to what is kept. The objects must not refer to the graph
themselves (they would keep it alive for good).

The rules:

* ``registered(conditional=True)``: a masked regeneration (``course.regenerate(mask=...)``)
  goes behind a conditional node that skips it on device when no env is masked, where
  ``wp.is_conditional_graph_supported()`` is true (CUDA driver and toolkit >= 12.4). The
  conditional node ends and restarts the stream's capture, which gives it a new capture id,
  and torch's caching allocator routes a graph's allocations by the id it saw when the
  capture began: NO torch allocation after a conditional regeneration, in the block or after
  it. Compute torch observations and rewards before the regeneration, or into preallocated
  tensors (``out=``, in-place ops).
* Without ``conditional=True``, ``registered()`` only registers the capture (the courses are
  kept alive with the graph) and the regeneration is recorded unconditionally, a full
  generation per replay, with no such rule.
* ``registered()`` raises :class:`track_gen.CaptureError` outside a torch capture (and where
  torch has no CUDA); its blocks do not nest.
* If you capture with a non-default ``torch.cuda.graph(g, capture_error_mode=...)``, pass the
  same mode as ``registered(capture_mode=...)`` (``"global"``, ``"thread_local"``,
  ``"relaxed"``, or a ``wp.CaptureMode``; None is torch's default, ``"global"``): Warp
  restarts the capture after a conditional node in that mode.
* Without ``registered()`` at all the block still records (unconditionally); keep the course
  alive yourself with ``retain(g, course)``.

Importing ``track_gen`` (or this module) does not import torch; these functions import it
when called.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import warnings
import weakref

import warp as wp

from ..core.checks import check_bool
from ..core.errors import CaptureError
from ..core.exec import MODE, REGISTERED_KEEP, REGISTERED_STREAM

__all__ = ["registered", "retain"]

#: torch.cuda.graph's ``capture_error_mode`` strings, as Warp capture modes.
_CAPTURE_MODES = {
    "global": wp.CaptureMode.GLOBAL,
    "thread_local": wp.CaptureMode.THREAD_LOCAL,
    "relaxed": wp.CaptureMode.RELAXED,
}

#: ``id(graph) -> (weakref to graph, kept objects)`` for weak-referenceable graphs.
_KEPT: dict[int, tuple[weakref.ref, list]] = {}
#: The attribute that holds the kept objects on a graph that is not weak-referenceable.
_ATTR = "_track_gen_retained"
#: Courses of ``registered()`` blocks whose torch graph could not be found: kept for good.
_FOREVER: list = []


# ------------------------------------------------------------------ retain
def _forget(key: int, ref: weakref.ref) -> None:
    entry = _KEPT.get(key)
    if entry is not None and entry[0] is ref:
        del _KEPT[key]


def retain(graph, *objects):
    """Keep ``objects`` alive as long as ``graph`` (a ``torch.cuda.CUDAGraph``, or any object)
    lives; returns ``graph``. A second call adds to what the first kept.

    A weak-referenceable graph is tracked by a weak reference (the objects are released when
    it is collected); another graph gets a list attribute. TypeError when neither works (an
    ``int``, say). ``objects`` must not refer to ``graph`` themselves: they would keep it
    alive for good."""
    key = id(graph)
    entry = _KEPT.get(key)
    if entry is not None and entry[0]() is graph:
        entry[1].extend(objects)
        return graph
    try:
        ref = weakref.ref(graph, functools.partial(_forget, key))
    except TypeError:
        ref = None
    if ref is not None:
        _KEPT[key] = (ref, list(objects))
        return graph
    kept = getattr(graph, _ATTR, None)
    if isinstance(kept, list):
        kept.extend(objects)
        return graph
    try:
        setattr(graph, _ATTR, list(objects))
    except (AttributeError, TypeError):
        raise TypeError(
            f"retain(): cannot keep objects alive with a {type(graph).__name__}: it is neither "
            "weak-referenceable nor takes attributes (pass the torch.cuda.CUDAGraph)"
        ) from None
    return graph


# ------------------------------------------------------------------ registered
def _check_capture_mode(capture_mode) -> wp.CaptureMode:
    if capture_mode is None:
        return wp.CaptureMode.GLOBAL  # torch.cuda.graph's default capture_error_mode
    if isinstance(capture_mode, wp.CaptureMode):
        return capture_mode
    if isinstance(capture_mode, str):
        try:
            return _CAPTURE_MODES[capture_mode]
        except KeyError:
            raise ValueError(
                "capture_mode must be torch.cuda.graph's capture_error_mode: 'global', "
                f"'thread_local' or 'relaxed' (or a wp.CaptureMode), got {capture_mode!r}"
            ) from None
    raise TypeError(
        "capture_mode must be None, 'global', 'thread_local', 'relaxed' or a wp.CaptureMode, "
        f"got {type(capture_mode).__name__} {capture_mode!r}"
    )


def _pending(graph) -> bool:
    """Whether a torch CUDAGraph has not finished a capture (its ``pool()`` raises until
    ``capture_end()`` succeeded)."""
    try:
        graph.pool()
    except Exception:
        return True
    return False


def _current_graph(torch):
    """The ``torch.cuda.CUDAGraph`` capturing on torch's current stream, from torch's own
    registry (``CUDAGraph.get_currently_capturing_graph()``, keyed by the capture id: call it
    before a conditional node restarts the capture), else None."""
    cls = getattr(torch.cuda, "CUDAGraph", None)
    getter = getattr(cls, "get_currently_capturing_graph", None)
    if getter is None:
        return None
    try:
        graph = getter()
    except Exception:
        return None
    # A torch.cuda.CUDAGraph is the Python object the user made; a bare base-class wrapper
    # would be a temporary that nothing else holds.
    return graph if isinstance(graph, cls) else None


def _scan_for_graph(torch, torch_stream):
    """The ``cuda_graph`` of the one ``torch.cuda.graph`` context manager that captures on
    ``torch_stream`` and has not finished its capture (one pass over ``gc.get_objects()``),
    else None (none, or more than one)."""
    cm_type = getattr(torch.cuda, "graph", None)
    target = getattr(torch_stream, "cuda_stream", None)
    if not isinstance(cm_type, type) or target is None:
        return None
    found = []
    for obj in gc.get_objects():
        if not issubclass(type(obj), cm_type):  # no __class__ lookups on foreign objects
            continue
        stream = getattr(obj, "capture_stream", None)
        graph = getattr(obj, "cuda_graph", None)
        if graph is None or getattr(stream, "cuda_stream", None) != target:
            continue
        if _pending(graph) and all(graph is not g for g in found):
            found.append(graph)
    return found[0] if len(found) == 1 else None


def _keep(torch, torch_stream, graph, courses: list) -> None:
    if not courses:
        return
    if graph is None:
        graph = _scan_for_graph(torch, torch_stream)
    if graph is not None:
        try:
            retain(graph, *courses)
            return
        except TypeError:
            pass
    _FOREVER.extend(courses)
    warnings.warn(
        "registered(): could not find the torch.cuda.CUDAGraph being captured, so the courses "
        "recorded in this block are kept alive for the rest of the process; call "
        "track_gen.interop.torch.retain(g, course) after the capture to tie them to g",
        RuntimeWarning,
        stacklevel=4,
    )


def registered(conditional: bool = False, capture_mode=None):
    """Register the ``torch.cuda.graph`` capture this block runs in with Warp; yields torch's
    capture stream as a ``wp.Stream``.

    ``conditional=True`` records masked regenerations behind a conditional node (no torch
    allocation after one); otherwise they are recorded unconditionally. ``capture_mode``: the
    ``capture_error_mode`` you passed to ``torch.cuda.graph`` (None: its default,
    ``"global"``). Courses recorded in the block live as long as the torch graph. Raises
    :class:`~track_gen.CaptureError` outside a torch capture; see the module documentation for
    the rules."""
    conditional = check_bool("conditional", conditional)
    mode = _check_capture_mode(capture_mode)
    return _registered(conditional, mode)


@contextlib.contextmanager
def _registered(conditional: bool, mode: wp.CaptureMode):
    if REGISTERED_STREAM.get() is not None:
        raise CaptureError("registered() blocks do not nest: one block per torch.cuda.graph")
    try:
        import torch  # on first use only: importing this module does not import torch
    except ImportError as err:
        raise ImportError("track_gen.interop.torch.registered() needs torch") from err
    where = "registered() must be entered inside torch.cuda.graph(...)"
    if not torch.cuda.is_available():
        raise CaptureError(
            f"{where}: torch.cuda is not available here (no CUDA device, or a torch build "
            "without CUDA), so no torch capture can be running"
        )
    if not torch.cuda.is_current_stream_capturing():
        raise CaptureError(f"{where}: torch's current stream is not capturing")
    torch_stream = torch.cuda.current_stream()
    stream = wp.stream_from_torch(torch_stream)
    if any(s.cuda_stream == stream.cuda_stream for s in stream.device.captures):
        raise CaptureError(
            f"{where}, not inside a Warp capture of torch's stream (wp.ScopedCapture / "
            "wp.capture_begin): Warp already knows this capture"
        )
    graph = _current_graph(torch)  # before a conditional node changes the capture id
    try:
        wp.capture_begin(stream=stream, external=True, capture_mode=mode)
    except Exception as err:
        raise CaptureError(f"registered(): Warp could not register torch's capture: {err}") from err
    courses: list = []
    tokens = [
        (REGISTERED_STREAM, REGISTERED_STREAM.set(stream)),
        (MODE, MODE.set("conditional" if conditional else "unconditional")),
        (REGISTERED_KEEP, REGISTERED_KEEP.set(courses)),
    ]
    ok = False
    try:
        yield stream
        ok = True
    finally:
        for var, token in reversed(tokens):
            var.reset(token)
        if ok:
            wp.capture_end(stream=stream)  # Warp's registration only: torch ends the capture
        else:
            with contextlib.suppress(Exception):  # the block's own error is the one to see
                wp.capture_end(stream=stream)
    _keep(torch, torch_stream, graph, courses)
