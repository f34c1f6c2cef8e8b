"""track_gen.interop.torch: ``registered()`` and ``retain()``.

On the CPU: the lazy torch import, the argument checks (before torch is imported), the
CaptureError outside a torch capture, ``retain``'s lifetime rules, and the enter / exit logic of
``registered()`` with torch's and Warp's capture calls replaced by fakes. With torch and CUDA:
the "With torch.cuda.graph" recipe of the RL auto-reset guide (skipped without a device).
"""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest
import warp as wp

import track_gen.core.exec as tg_exec
import track_gen.interop.torch as tg_torch
from track_gen import CaptureError
from track_gen.course import Course
from track_gen.interop.torch import registered, retain
from track_gen.pipeline import presets

try:
    import torch
except ImportError:  # pragma: no cover - torch is a dev dependency
    torch = None

E = 64
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
TORCH_CUDA = torch is not None and torch.cuda.is_available() and wp.get_cuda_device_count() > 0
needs_torch_cuda = pytest.mark.skipif(not TORCH_CUDA, reason="torch with CUDA is needed")


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return out.stdout.strip().splitlines()[-1]


def _context_clear() -> bool:
    return (
        tg_exec.MODE.get() is None
        and tg_exec.REGISTERED_STREAM.get() is None
        and tg_exec.REGISTERED_KEEP.get() is None
    )


# ------------------------------------------------------------------ no torch on import
def test_importing_track_gen_does_not_import_torch():
    out = _run(
        """
        import sys
        import track_gen, track_gen.course, track_gen.core.exec
        import track_gen.interop
        import track_gen.interop.torch
        from track_gen.interop.torch import registered, retain
        print("torch" in sys.modules)
        """
    )
    assert out == "False"


def test_refused_arguments_are_checked_before_torch_is_imported():
    out = _run(
        """
        import sys
        from track_gen.interop.torch import registered
        refused = []
        for kw in [dict(conditional=1), dict(conditional="yes"), dict(conditional=None),
                   dict(capture_mode="GLOBAL"), dict(capture_mode="bogus"),
                   dict(capture_mode=0), dict(capture_mode=1.5)]:
            try:
                with registered(**kw):
                    pass
            except (TypeError, ValueError) as err:
                refused.append(type(err).__name__)
        print(len(refused), "torch" in sys.modules)
        """
    )
    assert out == "7 False"


# ------------------------------------------------------------------ argument checks
@pytest.mark.parametrize("value", [1, 0, "yes", None, 1.0])
def test_conditional_must_be_a_bool(value):
    with pytest.raises(TypeError, match="conditional must be a bool"):
        registered(conditional=value)  # refused at the call, before the block is entered
    assert _context_clear()


@pytest.mark.parametrize("value", ["GLOBAL", "bogus", "", "threadlocal"])
def test_capture_mode_string_must_be_torchs(value):
    with pytest.raises(ValueError, match="capture_mode"):
        registered(capture_mode=value)


@pytest.mark.parametrize("value", [0, 1.5, b"global", object()])
def test_capture_mode_type(value):
    with pytest.raises(TypeError, match="capture_mode"):
        registered(capture_mode=value)


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        (None, wp.CaptureMode.GLOBAL),
        ("global", wp.CaptureMode.GLOBAL),
        ("thread_local", wp.CaptureMode.THREAD_LOCAL),
        ("relaxed", wp.CaptureMode.RELAXED),
        (wp.CaptureMode.RELAXED, wp.CaptureMode.RELAXED),
    ],
)
def test_capture_mode_values(value, mode):
    assert tg_torch._check_capture_mode(value) is mode
    registered(True, value)  # accepted (not entered)


# ------------------------------------------------------------------ outside a torch capture
@needs_torch
def test_registered_outside_a_torch_capture_raises_capture_error():
    with pytest.raises(CaptureError, match=r"inside torch\.cuda\.graph"):
        with registered():
            pass
    assert _context_clear()


@needs_torch
@pytest.mark.skipif(torch is not None and torch.cuda.is_available(), reason="torch has CUDA")
def test_registered_without_torch_cuda_says_so():
    with pytest.raises(CaptureError, match="torch.cuda is not available"):
        with registered(conditional=True):
            pass


@needs_torch
def test_a_refused_enter_leaves_the_context_as_it_was():
    with tg_exec.conditional():
        with pytest.raises(CaptureError):
            with registered(conditional=False):
                pass
        assert tg_exec.MODE.get() == "conditional"
        assert tg_exec.REGISTERED_STREAM.get() is None
        assert tg_exec.REGISTERED_KEEP.get() is None
    assert _context_clear()


# ------------------------------------------------------------------ retain
class _Graph:
    """A weak-referenceable stand-in for a torch.cuda.CUDAGraph."""


class _Obj:
    pass


def test_retain_keeps_objects_alive_as_long_as_the_graph():
    g, a, b = _Graph(), _Obj(), _Obj()
    ra, rb = weakref.ref(a), weakref.ref(b)
    assert retain(g, a) is g
    assert retain(g, b) is g  # a second call adds
    del a, b
    gc.collect()
    assert ra() is not None and rb() is not None
    assert tg_torch._KEPT[id(g)][1] == [ra(), rb()]
    key = id(g)
    del g
    gc.collect()
    assert ra() is None and rb() is None
    assert key not in tg_torch._KEPT


def test_retain_with_nothing_and_with_a_graph_that_takes_attributes_only():
    g = _Graph()
    assert retain(g) is g

    class Slotted:  # not weak-referenceable, but takes the attribute
        __slots__ = ("_track_gen_retained",)

    s, a = Slotted(), _Obj()
    ra = weakref.ref(a)
    assert retain(s, a) is s and retain(s, _Obj()) is s
    assert len(s._track_gen_retained) == 2
    del a
    gc.collect()
    assert ra() is not None
    del s
    gc.collect()
    assert ra() is None


@pytest.mark.parametrize("graph", [3, "g", (1, 2), None])
def test_retain_refuses_what_it_cannot_attach_to(graph):
    with pytest.raises(TypeError, match="retain"):
        retain(graph, _Obj())


# ------------------------------------------------------------------ registered(), faked capture
class _TorchStream:
    def __init__(self, handle):
        self.cuda_stream = handle


class _WarpStream:
    def __init__(self, device, handle):
        self.device = device
        self.cuda_stream = handle


class _Device:
    def __init__(self):
        self.captures = {}


class _PendingGraph:
    def pool(self):
        raise RuntimeError("Called CUDAGraph::pool() without a preceding successful capture.")


class _EndedGraph:
    def pool(self):
        return (1, 0)


@pytest.fixture
def fake_capture(monkeypatch):
    """torch "capturing" on stream 0x1234 (torch.cuda.CUDAGraph / torch.cuda.graph replaced by
    fakes without a capture), Warp's capture calls recorded; yields the record."""
    if torch is None:
        pytest.skip("torch is not installed")
    rec = {"begin": [], "end": [], "device": wp.get_device("cpu"), "handle": 0x1234}

    class NoGraph:  # a CUDAGraph class without get_currently_capturing_graph
        pass

    class NoCM:
        pass

    def stream_from_torch(ts):
        return _WarpStream(rec["device"], ts.cuda_stream)

    def capture_begin(stream=None, external=False, capture_mode=None, **kw):
        rec["begin"].append((stream, external, capture_mode))
        rec["inside"] = (tg_exec.MODE.get(), tg_exec.REGISTERED_STREAM.get())

    def capture_end(stream=None, **kw):
        rec["end"].append(stream)

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda *a: _TorchStream(rec["handle"]))
    monkeypatch.setattr(torch.cuda, "CUDAGraph", NoGraph)
    monkeypatch.setattr(torch.cuda, "graph", NoCM)
    monkeypatch.setattr(wp, "stream_from_torch", stream_from_torch)
    monkeypatch.setattr(wp, "capture_begin", capture_begin)
    monkeypatch.setattr(wp, "capture_end", capture_end)
    monkeypatch.setattr(tg_torch, "_FOREVER", [])
    rec["monkeypatch"] = monkeypatch
    return rec


def _cpu_course():
    return Course.track(presets.track(num_envs=8, device="cpu"), checkpoint_spacing=0.6, seeds=3)


@pytest.mark.parametrize("conditional", [True, False])
def test_registered_sets_and_resets_the_context(fake_capture, conditional):
    with registered(conditional=conditional, capture_mode="relaxed") as s:
        assert tg_exec.REGISTERED_STREAM.get() is s
        assert s.cuda_stream == 0x1234
        assert tg_exec.MODE.get() == ("conditional" if conditional else "unconditional")
        assert tg_exec.REGISTERED_KEEP.get() == []
        assert fake_capture["begin"] == [(s, True, wp.CaptureMode.RELAXED)]
        assert fake_capture["end"] == []
        with pytest.raises(CaptureError, match="do not nest"):
            with registered():
                pass
    assert fake_capture["end"] == [s]
    assert _context_clear()


def test_registered_default_capture_mode_is_global(fake_capture):
    with registered() as s:
        pass
    assert fake_capture["begin"] == [(s, True, wp.CaptureMode.GLOBAL)]


def test_an_error_in_the_block_ends_warps_registration_and_resets(fake_capture):
    with pytest.raises(ZeroDivisionError):
        with registered(conditional=True) as s:
            tg_exec.REGISTERED_KEEP.get().append(_Obj())
            1 / 0  # noqa: B018
    assert fake_capture["end"] == [s]
    assert _context_clear()
    assert tg_torch._FOREVER == []  # nothing kept, no warning


def test_a_capture_warp_already_knows_is_refused(fake_capture):
    device = _Device()
    device.captures[_WarpStream(device, 0x1234)] = object()
    fake_capture["device"] = device
    with pytest.raises(CaptureError, match="already knows"):
        with registered():
            pass
    assert fake_capture["begin"] == [] and _context_clear()


def test_courses_are_kept_alive_with_the_graph_torch_reports(fake_capture):
    class FakeCUDAGraph:
        current = None

        @staticmethod
        def get_currently_capturing_graph():
            return FakeCUDAGraph.current

    g = FakeCUDAGraph.current = FakeCUDAGraph()
    fake_capture["monkeypatch"].setattr(torch.cuda, "CUDAGraph", FakeCUDAGraph)
    course = _cpu_course()
    with registered(conditional=True) as s:
        FakeCUDAGraph.current = None  # a conditional node changed the capture id
        assert course._stream_for(None, "step()") is s  # adopts the block's stream
        course._stream_for(None, "regenerate()")
        assert tg_exec.REGISTERED_KEEP.get() == [course]  # once
    ref = weakref.ref(course)
    del course
    gc.collect()
    assert ref() is not None
    assert tg_torch._KEPT[id(g)][1] == [ref()]
    del g
    gc.collect()
    assert ref() is None


def test_the_graph_is_found_through_torch_cuda_graph(fake_capture):
    class FakeCM:  # torch.cuda.graph: capture_stream, cuda_graph
        def __init__(self, handle, graph):
            self.capture_stream = _TorchStream(handle)
            self.cuda_graph = graph

    fake_capture["monkeypatch"].setattr(torch.cuda, "graph", FakeCM)
    live = FakeCM(0x1234, _PendingGraph())
    stale = FakeCM(0x1234, _EndedGraph())  # an earlier capture on the same stream
    other = FakeCM(0x9999, _PendingGraph())  # another stream
    obj = _Obj()
    with registered():
        tg_exec.REGISTERED_KEEP.get().append(obj)
    assert tg_torch._KEPT[id(live.cuda_graph)][1] == [obj]
    assert id(stale.cuda_graph) not in tg_torch._KEPT
    assert id(other.cuda_graph) not in tg_torch._KEPT
    assert tg_torch._FOREVER == []


def test_without_a_graph_the_courses_live_for_good_with_a_warning(fake_capture):
    obj = _Obj()
    with pytest.warns(RuntimeWarning, match=r"retain\(g, course\)"):
        with registered():
            tg_exec.REGISTERED_KEEP.get().append(obj)
    assert tg_torch._FOREVER == [obj]


def test_no_course_no_warning(fake_capture, recwarn):
    with registered():
        pass
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_the_hook_keeps_nothing_outside_a_registered_block():
    course = _cpu_course()
    keep = []
    t1 = tg_exec.REGISTERED_KEEP.set(keep)
    try:
        assert course._stream_for(None, "step()") is None  # no registered stream: no keep
    finally:
        tg_exec.REGISTERED_KEEP.reset(t1)
    assert keep == []


# ------------------------------------------------------------------ torch.cuda.graph (CUDA)
if TORCH_CUDA:

    @wp.kernel
    def _sim_step(pos: wp.array(dtype=wp.vec3f)):
        e = wp.tid()
        pos[e] = pos[e] + wp.vec3f(0.0, 0.0, 0.0)  # stands in for your physics

    @wp.kernel
    def _reward(
        valid: wp.array(dtype=wp.int32),
        oob: wp.array(dtype=wp.int32),
        reward: wp.array(dtype=wp.float32),
    ):
        e = wp.tid()
        reward[e] = wp.where(valid[e] != 0, 1.0 - float(oob[e]), 0.0)

    @wp.kernel
    def _respawn(done: wp.array(dtype=wp.int32), pos: wp.array(dtype=wp.vec3f)):
        e = wp.tid()
        if done[e] != 0:
            pos[e] = wp.vec3f(0.0, 0.0, 0.0)


def _torch_course():
    device = "cuda:0"
    course = Course.track(
        presets.track(num_envs=E, device=device),
        checkpoint_spacing=0.6,
        collision="segments",
        seeds=42,
    )
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)
    he = wp.full(E, wp.vec2f(0.02, 0.01), dtype=wp.vec2f, device=device)
    course.bind(position=pos, orientation=quat, half_extents=he)
    return course, pos


def _record(course, pos, force, conditional, capture_mode=None):
    """The guide's torch.cuda.graph recipe; ``force`` (a torch int32 [E]) is copied into the
    done mask by a torch op before the regeneration."""
    device = "cuda:0"
    done = course.inputs["regen_mask"]
    done_t = wp.to_torch(done)
    reward = wp.zeros(E, dtype=wp.float32, device=device)
    # warm-up outside the capture: load the modules, run the torch op once
    wp.launch(_sim_step, E, [pos], device=device)
    res = course.step()
    wp.launch(_reward, E, [res.valid, res.contacts.oob, reward], device=device)
    wp.launch(_respawn, E, [done, pos], device=device)
    wp.synchronize_device(device)
    done_t.copy_(force)
    torch.cuda.synchronize()

    seen = {}
    g = torch.cuda.CUDAGraph()
    kw = {} if capture_mode is None else {"capture_error_mode": capture_mode}
    with torch.cuda.graph(g, **kw):
        seen["torch_graph"] = tg_torch._current_graph(torch)
        seen["scanned_graph"] = tg_torch._scan_for_graph(torch, torch.cuda.current_stream())
        with registered(conditional=conditional, capture_mode=capture_mode) as s:
            seen["stream"] = s
            seen["is_torch_stream"] = s.cuda_stream == torch.cuda.current_stream().cuda_stream
            seen["use_conditional"] = tg_exec.use_conditional(device, s)
            wp.launch(_sim_step, E, [pos], stream=s)  # your own Warp launches go to s
            res = course.step()  # adopts s
            wp.launch(_reward, E, [res.valid, res.contacts.oob, reward], stream=s)
            done_t.copy_(force)  # a torch op before the regeneration, no allocation
            course.regenerate(mask=done, advance=True)
            wp.launch(_respawn, E, [done, pos], stream=s)  # Warp only after it
        seen["warp_captures"] = [
            st.cuda_stream for st in wp.get_device(device).captures if st.cuda_stream
        ]
    return g, seen


def _course_bytes(course) -> bytes:
    r = course.result
    return b"".join(
        a.numpy().tobytes() for a in (r.center, r.generation, r.valid, course.checkpoints.position)
    )


def _replay_and_check(g, course, force):
    torch.cuda.synchronize()
    force.zero_()
    before = _course_bytes(course)
    for _ in range(3):
        g.replay()  # an all-zero done: every course byte unchanged
    torch.cuda.synchronize()
    assert _course_bytes(course) == before

    center0 = course.result.center.numpy().reshape(E, -1, 3).copy()
    gen0 = course.result.generation.numpy().copy()
    picked = [0, 5]
    force[picked] = 1
    g.replay()  # regenerates exactly envs 0 and 5
    torch.cuda.synchronize()
    center1 = course.result.center.numpy().reshape(E, -1, 3)
    gen1 = course.result.generation.numpy()
    others = np.setdiff1d(np.arange(E), picked)
    assert (gen1[picked] == gen0[picked] + 1).all()
    assert (gen1[others] == gen0[others]).all()
    assert np.array_equal(center1[others], center0[others])  # bitwise
    assert not np.array_equal(center1[picked], center0[picked], equal_nan=True)

    force.zero_()
    before = _course_bytes(course)
    g.replay()
    torch.cuda.synchronize()
    assert _course_bytes(course) == before


@needs_torch_cuda
def test_registered_conditional_records_the_guide_recipe():
    course, pos = _torch_course()
    force = torch.zeros(E, dtype=torch.int32, device="cuda:0")
    g, seen = _record(course, pos, force, conditional=True)
    assert seen["torch_graph"] is g and seen["scanned_graph"] is g  # torch's attributes
    assert seen["is_torch_stream"]
    assert seen["use_conditional"] == wp.is_conditional_graph_supported()
    assert seen["stream"].cuda_stream not in seen["warp_captures"]  # Warp's part ended
    assert _context_clear()
    assert course in tg_torch._KEPT[id(g)][1]  # registered() retained it with g
    _replay_and_check(g, course, force)


@needs_torch_cuda
def test_the_course_lives_as_long_as_the_torch_graph():
    course, pos = _torch_course()
    force = torch.zeros(E, dtype=torch.int32, device="cuda:0")
    g, _ = _record(course, pos, force, conditional=True)
    ref = weakref.ref(course)
    del course
    gc.collect()
    assert ref() is not None  # kept by g
    force[3] = 1
    g.replay()
    torch.cuda.synchronize()
    assert ref().result.generation.numpy()[3] == 1


@needs_torch_cuda
def test_registered_unconditional_records_without_a_conditional_node():
    course, pos = _torch_course()
    force = torch.zeros(E, dtype=torch.int32, device="cuda:0")
    g, seen = _record(course, pos, force, conditional=False)
    assert seen["use_conditional"] is False  # recorded unconditionally
    assert course in tg_torch._KEPT[id(g)][1]
    _replay_and_check(g, course, force)  # a full body per replay, still an exact no-op


@needs_torch_cuda
def test_a_non_default_capture_error_mode_passed_to_both():
    course, pos = _torch_course()
    force = torch.zeros(E, dtype=torch.int32, device="cuda:0")
    g, seen = _record(course, pos, force, conditional=True, capture_mode="thread_local")
    assert seen["use_conditional"] == wp.is_conditional_graph_supported()
    _replay_and_check(g, course, force)


@needs_torch_cuda
def test_registered_outside_a_torch_capture_on_cuda():
    with pytest.raises(CaptureError, match="not capturing"):
        with registered(conditional=True):
            pass
    assert _context_clear()
