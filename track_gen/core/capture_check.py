"""``check_component``: which call of a component a conditional regeneration body cannot hold.

A masked regeneration recorded behind a conditional node (see the capture guide) records each
component's ``on_generate`` and ``reset`` inside the node's body. A body holds kernel launches,
device-to-device copies and memsets; it cannot hold a host synchronization, a copy to or from
host memory, an event, another stream, or an allocation (and on the CPU a read of ``.numpy()``
inside a capture silently returns stale data). :func:`check_component` runs the two hooks of
one component under a test capture that is discarded (nothing executes) and reports every such
call, with the line of the component's code that made it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import warp as wp

from .component import Component, ComponentContext
from .exec import require_not_capturing

__all__ = ["CaptureProblem", "CourseLike", "check_component"]

_WARP_DIR = os.path.dirname(wp.__file__)
_HERE = os.path.abspath(__file__)


@dataclass(frozen=True)
class CaptureProblem:
    """One call a conditional body cannot hold.

    Attributes:
        component: the component's name.
        hook: ``"on_generate"`` or ``"reset"``.
        call: what it did (``"wp.synchronize()"``, ``"allocation wp.zeros()"``,
            ``"host read wp.array.numpy()"``, ``"raised RuntimeError: ..."``, ...).
        where: ``file:line`` of the component's code that made the call.
    """

    component: str
    hook: str
    call: str
    where: str

    def __str__(self) -> str:
        return f"{self.component}.{self.hook}: {self.call} at {self.where}"


class CourseLike(Protocol):
    """What :func:`check_component` reads of a course (a :class:`track_gen.course.Course` has
    it all; the contract lives on the ground floor, below the course, so it names the
    attributes instead of the class).

    Attributes:
        components: the course's components by name, in their order.
        inputs: the course's stable arrays by name; ``inputs["regen_mask"]`` is the int32
            ``[E]`` mask a masked regeneration reads.
        device: the Warp device of the course.
        stream: the course's stream (None: the device's current stream).
    """

    components: Mapping[str, Component]
    inputs: Mapping[str, Any]
    device: Any
    stream: Any
    _ctx: ComponentContext


def _caller() -> str:
    """``file:line`` of the innermost frame outside Warp and this module."""
    frame = sys._getframe(2)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_WARP_DIR) and path != _HERE:
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


#: (owner, attribute, description) of every Warp entry point a conditional body cannot hold.
_MODULE_CALLS = (
    ("synchronize", "host synchronization wp.synchronize()"),
    ("synchronize_device", "host synchronization wp.synchronize_device()"),
    ("synchronize_stream", "host synchronization wp.synchronize_stream()"),
    ("synchronize_event", "host synchronization wp.synchronize_event()"),
    ("record_event", "event wp.record_event()"),
    ("wait_event", "event wp.wait_event()"),
    ("wait_stream", "another stream wp.wait_stream()"),
    ("Event", "event wp.Event()"),
    ("Stream", "another stream wp.Stream()"),
    ("ScopedStream", "another stream wp.ScopedStream()"),
    ("empty", "allocation wp.empty()"),
    ("zeros", "allocation wp.zeros()"),
    ("ones", "allocation wp.ones()"),
    ("full", "allocation wp.full()"),
    ("clone", "allocation wp.clone()"),
    ("empty_like", "allocation wp.empty_like()"),
    ("zeros_like", "allocation wp.zeros_like()"),
    ("ones_like", "allocation wp.ones_like()"),
    ("full_like", "allocation wp.full_like()"),
)
_ARRAY_METHODS = (
    ("numpy", "host read wp.array.numpy()"),
    ("list", "host read wp.array.list()"),
    ("assign", "host copy wp.array.assign()"),
)


@contextlib.contextmanager
def _watch(report, device):
    """Wrap every listed Warp entry point so a call appends ``(description, where)`` to
    ``report`` and then proceeds; restore them on exit."""
    saved = []
    depth = [0]  # calls Warp makes inside a watched call are its own: not reported

    def note(what):
        if depth[0] == 0:
            report.append((what, _caller()))

    def wrap(owner, attr, what):
        original = getattr(owner, attr, None)
        if original is None:
            return

        def watched(*args, **kwargs):
            note(what)
            depth[0] += 1
            try:
                return original(*args, **kwargs)
            finally:
                depth[0] -= 1

        saved.append((owner, attr, original))
        setattr(owner, attr, watched)

    def copy_watch(original):
        def watched(dest, src, *args, **kwargs):
            devices = [getattr(a, "device", None) for a in (dest, src)]
            if any(d is not None and d != device for d in devices):
                note("host copy wp.copy() to or from another device")
            depth[0] += 1
            try:
                return original(dest, src, *args, **kwargs)
            finally:
                depth[0] -= 1

        return watched

    try:
        for attr, what in _MODULE_CALLS:
            wrap(wp, attr, what)
        for attr, what in _ARRAY_METHODS:
            wrap(wp.array, attr, what)
        saved.append((wp, "copy", wp.copy))
        wp.copy = copy_watch(wp.copy)
        yield
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)


def check_component(component: Component | str, course: CourseLike) -> list[CaptureProblem]:
    """The calls of ``component``'s ``on_generate`` and ``reset`` that a conditional
    regeneration body cannot hold (an empty list: none).

    Args:
        component: a component of ``course`` (the instance, or its name).
        course: the :class:`~track_gen.course.Course` it belongs to.

    The two hooks run with the course's ``regen_mask`` under a test capture on the course's
    device (on CUDA with conditional nodes, inside a conditional node, as a masked
    regeneration records them); the capture is discarded, so nothing executes. Each Warp call
    listed in the module docs is reported with the line that made it, and so is an exception
    a hook raises. Call it outside any capture.
    """
    # a course is what has these (CourseLike: the contract lives below the course)
    if not all(hasattr(course, a) for a in ("components", "inputs", "device", "stream", "_ctx")):
        raise TypeError(f"course must be a Course, got {type(course).__name__}")
    comps = course.components
    if not isinstance(component, str) and not isinstance(component, Component):
        if not all(callable(getattr(component, h, None)) for h in ("on_generate", "reset")):
            raise TypeError(
                f"component must be a component of the course or its name (a str), got "
                f"{type(component).__name__}"
            )
    if isinstance(component, str):
        if component not in comps:
            raise ValueError(
                f"component = {component!r} is not a component of this course "
                f"(components: {list(comps)})"
            )
        component = comps[component]
    elif not any(component is c for c in comps.values()):
        raise ValueError(
            f"component = {component!r} is not a component of this course: pass one of "
            f"course.components ({list(comps)}) or its name"
        )
    device = course.device
    require_not_capturing(device, "check_component")
    mask, ctx = course.inputs["regen_mask"], course._ctx
    problems: list[CaptureProblem] = []
    for hook in ("on_generate", "reset"):
        report: list[tuple[str, str]] = []
        fn = getattr(component, hook)

        def run(fn=fn, report=report):
            try:
                with _watch(report, device):
                    fn(ctx, mask)
            except Exception as err:  # reported, not raised: the check is a diagnosis
                report.append((f"raised {type(err).__name__}: {err}", "?"))

        flag = wp.zeros(1, dtype=wp.int32, device=device)
        try:
            with wp.ScopedCapture(device=device, stream=course.stream):
                if device.is_cuda and wp.is_conditional_graph_supported():
                    wp.capture_if(flag, on_true=run, stream=course.stream)
                else:
                    run()
        except Exception as err:  # the capture itself was invalidated by the hook
            report.append((f"the capture failed: {type(err).__name__}: {err}", "?"))
        problems += [CaptureProblem(component.name, hook, what, where) for what, where in report]
    return problems
