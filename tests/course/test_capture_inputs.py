"""Capture inputs: ``stream=`` of ``Course.step`` / ``reset`` / ``regenerate`` /
``enqueue_generate``, ``tools.check_component``, ``exec.conditional()`` / ``unconditional()`` /
``use_conditional``, and ``interop.torch.registered()`` / ``retain()``.

* ``stream=``: None is accepted; any other kind (numbers, strings, arrays, the device, a
  callable) is a TypeError, a ``wp.Stream`` on the CPU a ValueError, each naming ``stream``
  and checked after ``advance`` and ``mask``; a refused call changes no byte of the course's
  per-env arrays (result, every component's utility and result, seeds, epochs, the mask
  inputs), no component's bindings, no graph and no flag.
* ``check_component(component, course)``: a non-Course ``course`` is a TypeError naming
  ``course``; an unknown name or a component of no / another course a ValueError naming
  ``component``; a valid name or instance returns a list of ``CaptureProblem`` (empty for the
  built-in components, the two calls of a component that allocates and synchronizes, with
  their lines), and every outcome leaves both courses' bytes, Warp's patched entry points and
  the device's capture state as they were.
* ``registered(conditional, capture_mode)``: a refusal (TypeError / ValueError naming the
  argument) comes at the call, before torch is imported (a subprocess checks two values); an
  accepted call raises CaptureError when entered here (no torch capture: torch.cuda is
  unavailable on a CPU machine) and every ``track_gen.core.exec`` context variable is back to its
  previous value, whatever the surrounding mode (a pretended enclosing block: "do not nest").
* ``retain(graph, *objects)``: a weak-referenceable graph (or one that takes attributes) keeps
  the objects alive exactly as long as it lives; ints, None, strings, tuples, ... raise
  TypeError and keep nothing.
* Random nestings of ``conditional()`` / ``unconditional()`` (entered and exited in any order a
  ``with`` allows, exits with an exception included, CPU captures opened and closed between)
  always restore the mode, and ``use_conditional("cpu")`` is False in every state.

The tests at the end pin the bugs this suite found (each fixed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import importlib.util
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest
import warp as wp
from hypothesis import event, given, settings
from hypothesis import strategies as st

import track_gen.core.exec as tg_exec
import track_gen.interop.torch as tg_torch
from track_gen import CaptureError
from track_gen.core import capture_check as cc
from track_gen.course import Course
from track_gen.interop.torch import registered, retain
from track_gen.pipeline import presets
from track_gen.tools import CaptureProblem, Component, Progress, check_component

from ..support.course_state import course_rows
from ..support.invariants import check_result
from ..support.strategies import (
    any_scalar,
    examples,
    is_bool,
    other_objects,
    refused_masks,
    stream_cases,
)

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

E = 5
SEED = 2
BUILTIN = ("checkpoints", "progress", "collision")
HAS_TORCH = importlib.util.find_spec("torch") is not None
NO_CUDA = wp.get_cuda_device_count() == 0


# ------------------------------------------------------------------------------ shared state
class HostComponent(Component):
    """A component whose hooks a conditional body cannot hold: an allocation in
    ``on_generate``, a host synchronization in ``reset``."""

    name = "acme.host"

    def on_generate(self, ctx, mask) -> None:
        wp.zeros(1, dtype=wp.int32, device=ctx.device)  # HOST_ALLOC

    def reset(self, ctx, mask) -> None:
        wp.synchronize()  # HOST_SYNC


class CopyComponent(Component):
    """A device-to-device ``wp.copy`` in ``on_generate``: what a conditional body holds."""

    name = "acme.copy"

    def attach(self, ctx) -> None:
        super().attach(ctx)
        self.src = wp.zeros(E, dtype=wp.int32, device=ctx.device)
        self.dst = wp.zeros(E, dtype=wp.int32, device=ctx.device)

    def on_generate(self, ctx, mask) -> None:
        wp.copy(self.dst, self.src)


class ReadComponent(Component):
    """One host read (``mask.numpy()``) in ``reset``."""

    name = "acme.read"

    def reset(self, ctx, mask) -> None:
        mask.numpy()


def _bind_all(course) -> None:
    device = course.device
    quat = np.zeros((E, 4), np.float32)
    quat[:, 3] = 1.0
    course.bind(
        position=wp.zeros(E, dtype=wp.vec3f, device=device),
        orientation=wp.array(quat, dtype=wp.quatf, device=device),
        half_extents=wp.full(E, wp.vec2f(0.05, 0.05), dtype=wp.vec2f, device=device),
    )


_CACHE: dict = {}


def shared(device) -> dict:
    """Per device: ``course`` (a bound segments track course, the one the calls run on) and
    ``host`` (an unprepared course with :class:`HostComponent`, :class:`CopyComponent` and
    :class:`ReadComponent`, for check_component only)."""
    key = str(device)
    if key not in _CACHE:
        spec = presets.track(num_envs=E, device=device, num_points=64)
        course = Course.track(spec, checkpoint_spacing=0.6, collision="segments", seeds=SEED)
        assert tuple(course.components) == BUILTIN
        _bind_all(course)
        course.step()
        host = Course.track(
            presets.track(num_envs=E, device=device, num_points=64),
            checkpoint_spacing=0.6,
            seeds=SEED,
            extra=[HostComponent(), CopyComponent(), ReadComponent()],
            prepare=False,
        )
        _CACHE[key] = {
            "course": course,
            "host": host,
            "own mask": wp.zeros(E, dtype=wp.int32, device=device),
        }
    return _CACHE[key]


def names(err: BaseException, *words: str) -> None:
    text = str(err)
    assert any(w in text for w in words), f"{type(err).__name__} {text!r} names none of {words}"


def per_env_bytes(course) -> dict:
    """Every per-env array of the course (result, every component's utility and result, seeds,
    epochs, the mask inputs) as host bytes."""
    return {k: v.tobytes() for k, v in course_rows(course, seeds=True, inputs=True).items()}


def bindings(course) -> dict:
    return {name: dict(comp.bound) for name, comp in course.components.items()}


def same_bindings(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[c].keys() == b[c].keys() and all(a[c][k] is b[c][k] for k in a[c]) for c in a
    )


def state(course) -> tuple:
    """What a refused call must leave: bytes, bindings (by identity), graphs and flags."""
    return (
        per_env_bytes(course),
        bindings(course),
        dict(course._graphs.graphs),
        course._stale,
        course._prepared,
    )


def assert_same_state(course, before: tuple) -> None:
    now = state(course)
    changed = [k for k in before[0] if before[0][k] != now[0][k]]
    assert not changed, f"a refused call changed {changed}"
    assert same_bindings(now[1], before[1]), "a refused call changed a binding"
    assert now[2] == before[2], "a refused call recorded or dropped a graph"
    assert now[3:] == before[3:], "a refused call changed _stale / _prepared"


def context_vars() -> tuple:
    return (
        tg_exec.MODE.get(),
        tg_exec.REGISTERED_STREAM.get(),
        tg_exec.REGISTERED_KEEP.get(),
    )


# ------------------------------------------------------------------------------ stream=
CALLS = ("step", "reset", "regenerate", "enqueue_generate")


def _mask_values():
    return st.lists(
        st.sampled_from([0, 0, 1, -1, 7, 2**31 - 1, -(2**31)]), min_size=E, max_size=E
    ).map(lambda v: np.asarray(v, np.int32))


@settings(max_examples=examples(120))
@given(data=st.data())
def test_stream_argument_of_every_call(device, data):
    """Any ``stream=`` on any of the four calls (with a valid, refused or no mask and any
    ``advance``): None runs; anything else is refused naming ``stream`` (after ``advance`` and
    ``mask``, checked first) and changes nothing at all."""
    s = shared(device)
    course = s["course"]
    draw = data.draw
    call = draw(st.sampled_from(CALLS), label="call")
    cases = stream_cases(E, device)
    pick = draw(st.integers(0, 3), label="stream kind")  # None and the streams, often
    if pick == 0:
        cases = cases[:1]
    elif pick == 1:
        cases = [c for c in cases if "Stream" in c[0] or "stream of" in c[0]] or cases[:1]
    label, stream_err, make = draw(st.sampled_from(cases), label="stream")
    stream = make()

    # the masks the call may read hold arbitrary contents: a refused call that ran would show
    for arr in (course.inputs["regen_mask"], course.inputs["reset_mask"], s["own mask"]):
        arr.assign(draw(_mask_values(), label="mask contents"))

    err, words = None, ()
    kwargs = {"stream": stream}
    if call in ("regenerate", "enqueue_generate"):
        wrong = draw(st.integers(0, 7), label="wrong advance") == 0
        advance = draw(any_scalar if wrong else st.booleans(), label="advance")
        kwargs["advance"] = advance
        if not is_bool(advance):
            err, words = TypeError, ("advance",)
    if call != "step":
        how = draw(st.sampled_from(["none", "regen", "reset", "own", "refused"]), label="mask")
        if how == "refused":
            _l, mask_err, make_mask = draw(st.sampled_from(refused_masks(E, device)))
            kwargs["mask"] = make_mask()
            if err is None:
                err, words = mask_err, ("mask",)
        else:
            kwargs["mask"] = {
                "none": None,
                "regen": course.inputs["regen_mask"],
                "reset": course.inputs["reset_mask"],
                "own": s["own mask"],
            }[how]
    if err is None and stream_err is not None:
        err, words = stream_err, ("stream",)
    event(f"{call}: {err.__name__} {words[0]}" if err else f"{call}: accepted")

    before = state(course)
    if err is not None:
        with pytest.raises(err) as info:
            getattr(course, call)(**kwargs)
        names(info.value, *words)
        assert_same_state(course, before)
        return
    res = getattr(course, call)(**kwargs)
    if call == "step":
        assert res is not None and res.valid is course.generator.result.valid
    check_result(course.generator)
    assert same_bindings(bindings(course), before[1]), "a call changed a binding"


@pytest.mark.parametrize(
    "call, args",
    [
        ("step", (None,)),
        ("reset", (None, None)),
        ("regenerate", (None, False, None)),
        ("enqueue_generate", (None, False, None)),
    ],
)
def test_stream_is_keyword_only(device, call, args):
    course = shared(device)["course"]
    before = state(course)
    with pytest.raises(TypeError):
        getattr(course, call)(*args)
    assert_same_state(course, before)


# ------------------------------------------------------------------------------ check_component
#: Warp entry points check_component patches while it runs (all must be restored).
_PATCHED = [(wp, attr) for attr, _ in cc._MODULE_CALLS] + [(wp, "copy")]
_PATCHED += [(wp.array, attr) for attr, _ in cc._ARRAY_METHODS]


def _entry_points() -> tuple:
    return tuple(getattr(owner, attr, None) for owner, attr in _PATCHED), set(vars(wp.array))


def _component_arg(s, kind, value):
    """The ``component`` argument of one check_component call, from a drawn kind."""
    course, host = s["course"], s["host"]
    if kind == "name":
        return value
    if kind == "np name":
        return np.str_(value)
    if kind == "instance":
        return course.components[value]
    if kind == "host instance":
        return host.components[value]
    if kind == "fresh":
        return {"progress": Progress(), "acme.host": HostComponent()}.get(
            value, Component(name=value)
        )
    return value  # "unknown name", "object"


def _course_arg(s, kind, value):
    if kind in ("course", "host"):
        return s[kind]
    if kind == "generator":
        return s["course"].generator
    if kind == "spec":
        return s["course"].generator.spec
    if kind == "components":
        return s["course"].components
    return value


_HOST_PROBLEMS = [
    ("on_generate", "allocation wp.zeros()", "HOST_ALLOC"),
    ("reset", "host synchronization wp.synchronize()", "HOST_SYNC"),
]


def _source_line(marker: str) -> int:
    with open(__file__, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if f"# {marker}" in line)


def component_values():
    names_ = list(BUILTIN)
    return st.one_of(
        st.tuples(st.just("name"), st.sampled_from(names_)),
        st.tuples(st.just("name"), st.just("acme.host")),
        st.tuples(st.just("np name"), st.sampled_from(names_)),
        st.tuples(st.just("instance"), st.sampled_from(names_)),
        st.tuples(st.just("host instance"), st.sampled_from(["checkpoints", "acme.host"])),
        st.tuples(st.just("fresh"), st.sampled_from(["progress", "acme.host", "collision"])),
        st.tuples(
            st.just("unknown name"),
            st.one_of(
                st.sampled_from(["", "Progress", "progress ", "acme.none", "regen_mask"]),
                st.text(max_size=8),
            ),
        ),
        st.tuples(st.just("object"), st.sampled_from([None, *other_objects(E)])),
    )


def course_values():
    return st.one_of(
        st.tuples(st.sampled_from(["course", "host"]), st.none()),
        st.tuples(st.sampled_from(["course", "host"]), st.none()),
        st.tuples(st.sampled_from(["course", "host"]), st.none()),
        st.tuples(st.sampled_from(["generator", "spec", "components"]), st.none()),
        st.tuples(st.just("object"), st.sampled_from([None, *other_objects(E)])),
    )


def _check_component_oracle(course, component) -> tuple:
    """``(error, words)`` of ``check_component(component, course)``, or ``(None, expected)``
    with the expected problems as ``(hook, call)`` pairs."""
    if not isinstance(course, Course):
        return TypeError, ("course",)
    comps = course.components
    if isinstance(component, str):
        if component not in comps:
            return ValueError, ("component",)
        component = comps[component]
    elif not any(component is c for c in comps.values()):
        if isinstance(component, Component):
            return ValueError, ("component",)
        if not all(callable(getattr(component, h, None)) for h in ("on_generate", "reset")):
            return TypeError, ("component",)  # a wrong kind
        return ValueError, ("component",)
    if isinstance(component, HostComponent):
        return None, [(h, c) for h, c, _m in _HOST_PROBLEMS]
    return None, []


@settings(max_examples=examples(120))
@given(comp=component_values(), crs=course_values())
def test_check_component_arguments(device, comp, crs):
    s = shared(device)
    course = _course_arg(s, *crs)
    component = _component_arg(s, *comp)
    err, expected = _check_component_oracle(course, component)
    event(f"{err.__name__ if isinstance(err, type) else err} {expected}" if err else "accepted")

    targets = [s["course"], s["host"]]
    before = [state(c) for c in targets]
    points = _entry_points()
    if err is not None:
        with pytest.raises(err) as info:
            check_component(component, course)
        names(info.value, *expected)
    else:
        problems = check_component(component, course)
        assert isinstance(problems, list)
        assert all(isinstance(p, CaptureProblem) for p in problems), problems
        name = component if isinstance(component, str) else component.name
        assert all(p.component == name for p in problems), problems
        got = [(p.hook, p.call) for p in problems]
        if wp.get_device(device).is_cpu:
            assert got == expected, [str(p) for p in problems]
        else:  # in a CUDA capture a host call may also raise: reported after the call
            assert all(e in got for e in expected) and (expected or not got), got
        markers = {(h, c): m for h, c, m in _HOST_PROBLEMS}
        for p in problems:
            if (p.hook, p.call) in markers:
                line = _source_line(markers[p.hook, p.call])
                assert p.where == f"{__file__}:{line}", str(p)
            assert str(p) == f"{p.component}.{p.hook}: {p.call} at {p.where}"
    assert _entry_points() == points, "check_component left a Warp entry point patched"
    assert not tg_exec.is_capturing(device), "check_component left a capture open"
    for c, b in zip(targets, before, strict=True):
        assert_same_state(c, b)  # the test capture is discarded: nothing executed
    assert context_vars() == (None, None, None)


def test_check_component_inside_a_capture_is_refused(device):
    """Called inside a capture of the course's device: CaptureError, the capture intact."""
    if not wp.get_device(device).is_cpu:
        pytest.skip("a CPU capture needs no stream; CUDA capture rules: the unit tests")
    course = shared(device)["course"]
    before = state(course)
    wp.capture_begin(device=device)
    try:
        with pytest.raises(CaptureError, match="check_component"):
            check_component("progress", course)
        assert tg_exec.is_capturing(device)
    finally:
        wp.capture_end(device=device)
    assert_same_state(course, before)


# ------------------------------------------------------------------------------ registered()
_MODES = {"global", "thread_local", "relaxed"}
_BOOLS = st.sampled_from([True, False, np.bool_(True), np.bool_(False)])
conditional_values = st.one_of(
    _BOOLS,
    any_scalar,
    st.sampled_from(other_objects(E)),
)
capture_mode_values = st.one_of(
    st.sampled_from([None, "global", "thread_local", "relaxed", np.str_("relaxed")]),
    st.sampled_from(list(wp.CaptureMode)),
    st.sampled_from(["GLOBAL", "Global", "global ", "", "thread-local", "threadlocal", "None"]),
    st.sampled_from([b"global", 0, 1, 2, True, 1.0, ["global"], ("relaxed",)]),
    st.text(max_size=12),
    st.sampled_from(other_objects(E)),
)


def _registered_oracle(conditional, capture_mode) -> tuple:
    if not is_bool(conditional):
        return TypeError, "conditional"
    if capture_mode is None or isinstance(capture_mode, wp.CaptureMode):
        return None, None
    if isinstance(capture_mode, str):
        return (None, None) if capture_mode in _MODES else (ValueError, "capture_mode")
    return TypeError, "capture_mode"


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
@settings(max_examples=examples(80))
@given(
    conditional=st.integers(0, 3).flatmap(lambda i: conditional_values if i == 0 else _BOOLS),
    capture_mode=st.integers(0, 2).flatmap(
        lambda i: capture_mode_values if i else st.sampled_from([None, *_MODES])
    ),
    outer=st.sampled_from([None, "conditional", "unconditional"]),
    pretend_block=st.integers(0, 5).map(lambda i: i == 0),
    positional=st.booleans(),
)
def test_registered_arguments(conditional, capture_mode, outer, pretend_block, positional):
    """Refused at the call (naming the argument); accepted: entering raises CaptureError (no
    torch capture here; "do not nest" inside a pretended block) and every context variable is
    back to what it was."""
    err, word = _registered_oracle(conditional, capture_mode)
    event(f"{err.__name__} {word}" if err else "accepted")
    outer_cm = {
        None: contextlib.nullcontext(),
        "conditional": tg_exec.conditional(),
        "unconditional": tg_exec.unconditional(),
    }[outer]
    with outer_cm, contextlib.ExitStack() as stack:
        if pretend_block:
            for var, value in (
                (tg_exec.REGISTERED_STREAM, object()),
                (tg_exec.REGISTERED_KEEP, []),
            ):
                stack.callback(var.reset, var.set(value))
        previous = context_vars()
        args = (
            ((conditional, capture_mode), {})
            if positional
            else (
                (),
                {"conditional": conditional, "capture_mode": capture_mode},
            )
        )
        if err is not None:
            with pytest.raises(err) as info:
                registered(*args[0], **args[1])
            names(info.value, word)
        else:
            block = registered(*args[0], **args[1])
            assert context_vars() == previous, "registered() changed the context before entry"
            with pytest.raises(CaptureError) as info:
                with block:
                    pytest.fail("registered() was entered outside a torch capture")
            if pretend_block:
                names(info.value, "do not nest")
            elif not sys.modules["torch"].cuda.is_available():
                names(info.value, "torch.cuda is not available")
            else:
                names(info.value, "not capturing")
        assert context_vars() == previous, "registered() left a context variable changed"
    assert context_vars() == (None, None, None)


def test_registered_refuses_before_torch_is_imported():
    code = """
        import sys
        from track_gen.interop.torch import registered
        out = []
        for kw in (dict(conditional="yes"), dict(capture_mode="bogus")):
            try:
                registered(**kw)
            except (TypeError, ValueError) as err:
                out.append(type(err).__name__)
        print(out, "torch" in sys.modules)
        """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    assert proc.stdout.strip().splitlines()[-1] == "['TypeError', 'ValueError'] False"


# ------------------------------------------------------------------------------ retain()
class _Graph:
    pass


class _ListGraph(list):
    pass


class _DictOnly:  # takes attributes, not weak-referenceable
    __slots__ = ("__dict__",)


class _SlotOnly:  # only the retain slot
    __slots__ = ("_track_gen_retained",)


class _NoSlots:  # neither
    __slots__ = ()


@dataclasses.dataclass(frozen=True, slots=True)
class _Frozen:
    x: int = 0


class _Kept:
    pass


def _fresh_function():
    def graph():
        return None

    return graph


#: kind -> (factory, how the objects are kept: "weak", "attr" or None for a TypeError)
GRAPHS = {
    "instance": (_Graph, "weak"),
    "function": (_fresh_function, "weak"),
    "class": (lambda: type("G", (), {}), "weak"),  # a class is a cycle: gc frees it
    "set": (set, "weak"),
    "list subclass": (_ListGraph, "weak"),
    "ndarray": (lambda: np.zeros(3), "weak"),
    "dict-only slots": (_DictOnly, "attr"),
    "retain slot": (_SlotOnly, "attr"),
    "no slots": (_NoSlots, None),
    "frozen slots dataclass": (_Frozen, None),
    "int": (lambda: 12345678901, None),
    "None": (lambda: None, None),
    "str": (lambda: "graph", None),
    "bytes": (lambda: b"g", None),
    "tuple": (lambda: (1, 2), None),
    "float": (lambda: 1.5, None),
    "list": (list, None),
    "dict": (dict, None),
    "numpy scalar": (lambda: np.float64(2.0), None),
    "bool": (lambda: True, None),
}
#: Graphs that keep by a weak reference or an attribute, a class (a cycle: a full gc) aside.
_ACYCLIC_KEEPERS = [k for k, (_f, how) in GRAPHS.items() if how and k != "class"]
#: object kind -> factory; "kept" objects are watched through a weak reference.
OBJECTS = {
    "kept": _Kept,
    "int": lambda: 7,
    "None": lambda: None,
    "str": lambda: "x",
    "graph-like": _Graph,
    "array": lambda: np.ones(2),
}


def _collect(graph_kind: str) -> None:
    """Free what died: reference counting does it but for a class (a reference cycle); a full
    collection costs ~50 ms once torch is imported."""
    if graph_kind == "class":
        gc.collect()


def _fresh(kinds: list[str]) -> tuple[list, list]:
    """Fresh objects of ``kinds`` and weak references to those that take one."""
    objs = [OBJECTS[k]() for k in kinds]
    refs = []
    for o in objs:
        with contextlib.suppress(TypeError):
            refs.append(weakref.ref(o))
    return objs, refs


def _retain_all(graph, kinds: list[str], cuts: list[int]) -> list:
    """Retain fresh objects of ``kinds`` on ``graph`` in calls cut at ``cuts``; returns weak
    references to the objects that take one (the objects themselves are not held)."""
    objs, refs = _fresh(kinds)
    bounds = [0, *sorted(c % (len(objs) + 1) for c in cuts), len(objs)]
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        assert retain(graph, *objs[lo:hi]) is graph
    return refs


def _refuse(graph, kinds: list[str]) -> list:
    """``retain(graph, *fresh objects)`` must raise TypeError naming retain; returns weak
    references to the objects."""
    objs, refs = _fresh(kinds)
    with pytest.raises(TypeError) as info:
        retain(graph, *objs)
    names(info.value, "retain")
    info = None  # the traceback holds retain's frame, and this frame the traceback: a cycle
    return refs


@settings(max_examples=examples(60))
@given(
    graph_kind=st.integers(0, 2).flatmap(
        lambda i: st.sampled_from(list(GRAPHS) if i == 0 else _ACYCLIC_KEEPERS)
    ),
    kinds=st.lists(st.sampled_from(list(OBJECTS)), max_size=6),
    cuts=st.lists(st.integers(0, 6), max_size=2),
)
def test_retain_keeps_objects_exactly_as_long_as_the_graph(graph_kind, kinds, cuts):
    make, how = GRAPHS[graph_kind]
    graph = make()
    event(f"kept by {how}" if how else "TypeError")
    kept_before = dict(tg_torch._KEPT)
    if how is None:
        refs = _refuse(graph, kinds)
        _collect(graph_kind)
        assert all(r() is None for r in refs), "a refused retain kept an object alive"
        assert tg_torch._KEPT == kept_before
        return
    refs = _retain_all(graph, kinds, cuts)
    _collect(graph_kind)
    assert all(r() is not None for r in refs), "an object died while its graph lives"
    if how == "weak":
        assert id(graph) in tg_torch._KEPT
        assert len(tg_torch._KEPT[id(graph)][1]) == len(kinds)
    else:
        assert len(graph._track_gen_retained) == len(kinds)
    key = id(graph)
    del graph
    _collect(graph_kind)
    assert all(r() is None for r in refs), "an object outlived its graph"
    entry = tg_torch._KEPT.get(key)
    assert entry is None or entry[0]() is not None, "a dead graph's entry is still kept"


# ------------------------------------------------------------------------------ modes
_CPU_FORMS = ("cpu", np.str_("cpu"), wp.get_device("cpu"))
OPS = st.sampled_from(["conditional", "unconditional", "exit", "raise", "capture"])


class _Boom(Exception):
    pass


def _check_mode(expected, capturing: bool) -> None:
    assert tg_exec.MODE.get() == expected
    assert tg_exec.REGISTERED_STREAM.get() is None and tg_exec.REGISTERED_KEEP.get() is None
    assert tg_exec.is_capturing("cpu") == capturing
    for form in _CPU_FORMS:
        assert tg_exec.use_conditional(form) is False, (form, expected, capturing)


@settings(max_examples=examples(80))
@given(
    ops=st.lists(OPS, max_size=30), outer=st.sampled_from([None, "conditional", "unconditional"])
)
def test_nested_modes_restore_and_cpu_never_conditional(ops, outer):
    """A drawn sequence of enters (``conditional()`` / ``unconditional()``), exits (plain or
    with an exception thrown through), CPU capture begins and ends: after each step the mode
    is the innermost open one (else the outer one) and ``use_conditional`` on the CPU is
    False; when everything is closed the mode is the outer one again."""
    assert tg_exec._CPU_CONDITIONAL is False  # the documented CPU behaviour
    factories = {"conditional": tg_exec.conditional, "unconditional": tg_exec.unconditional}
    outer_cm = factories[outer]() if outer else contextlib.nullcontext()
    with outer_cm:
        stack: list = []
        capturing = False
        try:
            _check_mode(outer, capturing)
            for op in ops:
                if op in factories:
                    cm = factories[op]()
                    assert cm.__enter__() is None
                    stack.append((cm, op))
                elif op == "exit" and stack:
                    assert not stack.pop()[0].__exit__(None, None, None)
                elif op == "raise" and stack:
                    boom = _Boom()
                    assert not stack.pop()[0].__exit__(_Boom, boom, None), "swallowed an error"
                elif op == "capture":
                    if capturing:
                        wp.capture_end(device="cpu")
                    else:
                        wp.capture_begin(device="cpu")
                    capturing = not capturing
                _check_mode(stack[-1][1] if stack else outer, capturing)
        finally:
            while stack:
                stack.pop()[0].__exit__(None, None, None)
            if capturing:
                wp.capture_end(device="cpu")
        _check_mode(outer, False)
    _check_mode(None, False)


# ------------------------------------------------------------------------------ fixed findings
# Each test below pins a bug this suite found (now fixed).
@pytest.mark.parametrize("component", [5, None, b"progress", ["progress"], 1.5])
def test_check_component_wrong_kind_is_a_type_error(device, component):
    course = shared(device)["course"]
    with pytest.raises(TypeError, match="component"):
        check_component(component, course)


def test_check_component_passes_a_device_copy(device):
    host = shared(device)["host"]
    problems = check_component("acme.copy", host)
    assert problems == [], [str(p) for p in problems]


def test_check_component_reports_a_host_read_once(device):
    host = shared(device)["host"]
    calls = [(p.hook, p.call) for p in check_component("acme.read", host)]
    assert calls == [("reset", "host read wp.array.numpy()")], calls


@pytest.mark.parametrize(
    "device_arg, err",
    [
        pytest.param(
            "cuda",
            ValueError,
            marks=pytest.mark.skipif(not NO_CUDA, reason="'cuda' is a device of this machine"),
        ),
        pytest.param(
            ["cpu"],
            TypeError,
        ),
        pytest.param(
            1.5,
            TypeError,
        ),
        ("tpu", ValueError),
        ("cuda:99", ValueError),
    ],
)
def test_use_conditional_refuses_what_is_not_a_device(device_arg, err):
    with pytest.raises(err) as info:
        tg_exec.use_conditional(device_arg)
    names(info.value, "device")
    assert context_vars() == (None, None, None)
