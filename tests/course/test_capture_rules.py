"""Capture rules of a course: the conditional regeneration (its CPU meaning, and the node
itself through Warp's CPU ``capture_if``), ``exec.conditional`` / ``unconditional``, the
prepare=False and stream= errors, and ``tools.check_component``. CUDA-only rules are marked and
skipped without a device."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import track_gen.core.exec as tg_exec
from track_gen import CaptureError
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import Component, check_component

E = 8
CUDA = wp.get_cuda_device_count() > 0
needs_cuda = pytest.mark.skipif(not CUDA, reason="a CUDA device is needed")
needs_conditional = pytest.mark.skipif(
    not (CUDA and wp.is_conditional_graph_supported()),
    reason="CUDA conditional graph nodes (driver and toolkit >= 12.4) are needed",
)


@wp.kernel
def _count(counter: wp.array(dtype=wp.int32)):
    counter[0] = counter[0] + 1


class Counter(Component):
    """Counts the regeneration bodies that ran (one launch in on_generate)."""

    name = "acme.counter"

    def attach(self, ctx):
        self.counter = wp.zeros(1, dtype=wp.int32, device=ctx.device)

    def on_generate(self, ctx, mask):
        wp.launch(_count, 1, inputs=[self.counter], device=ctx.device)


class HostReader(Component):
    """Breaks the rules of a conditional body: reads on the host, allocates, synchronizes."""

    name = "acme.host_reader"

    def attach(self, ctx):
        self.buf = wp.zeros(ctx.num_envs, dtype=wp.int32, device=ctx.device)

    def on_generate(self, ctx, mask):
        self.seen = self.buf.numpy().sum()  # a host read

    def reset(self, ctx, mask):
        scratch = wp.zeros(4, dtype=wp.float32, device=ctx.device)  # an allocation
        wp.synchronize()
        del scratch


class Raiser(Component):
    name = "acme.raiser"

    def on_generate(self, ctx, mask):
        if tg_exec.is_capturing(ctx.device):
            raise RuntimeError("no events in a conditional body")


def course(device, extra=(), **kw):
    return Course.track(
        presets.track(num_envs=E, device=device), checkpoint_spacing=0.6, seeds=5, extra=extra, **kw
    )


def _record(c, mask, **kw):
    with wp.ScopedCapture(device=c.device) as cap:
        c.regenerate(mask=mask, advance=True, **kw)
    return cap.graph


def _course_bytes(c) -> bytes:
    r = c.result
    return b"".join(
        a.numpy().tobytes() for a in (r.center, r.generation, r.valid, c.checkpoints.position)
    )


# ------------------------------------------------------------------ the CPU cost table
def test_cpu_capture_records_the_body_unconditionally(device):
    if device != "cpu":
        pytest.skip("the CPU row of the cost table")
    c = course(device, extra=[Counter()])
    counter = c.components["acme.counter"].counter
    mask = c.inputs["regen_mask"]
    with wp.ScopedCapture(device=device) as cap:
        assert not tg_exec.use_conditional(device)
        c.regenerate(mask=mask, advance=True)
    before, n0 = _course_bytes(c), int(counter.numpy()[0])
    wp.capture_launch(cap.graph)  # all-zero mask: a full body, an exact no-op
    assert int(counter.numpy()[0]) == n0 + 1
    assert _course_bytes(c) == before


@pytest.mark.parametrize("mode", ["default", "unconditional"])
def test_conditional_node_skips_the_body_on_an_all_zero_mask(device, mode, monkeypatch):
    """The node's logic, recorded by Warp's CPU capture_if (a test switch: the documented CPU
    behaviour records unconditionally) and on CUDA where conditional nodes exist."""
    if device == "cpu":
        monkeypatch.setattr(tg_exec, "_CPU_CONDITIONAL", True)
    elif not wp.is_conditional_graph_supported():
        pytest.skip("no conditional graph nodes on this CUDA")
    a, b = course(device, extra=[Counter()]), course(device)
    counter = a.components["acme.counter"].counter
    mask = a.inputs["regen_mask"]
    scope = tg_exec.unconditional() if mode == "unconditional" else tg_exec.conditional()
    with wp.ScopedCapture(device=device) as cap, scope:
        assert tg_exec.use_conditional(device) == (mode == "default")
        a.regenerate(mask=mask, advance=True)
    before, n0 = _course_bytes(a), int(counter.numpy()[0])
    wp.capture_launch(cap.graph)
    assert _course_bytes(a) == before  # an exact no-op either way
    assert int(counter.numpy()[0]) == n0 + (0 if mode == "default" else 1)
    m = np.zeros(E, np.int32)
    m[[2, 6]] = 1
    mask.assign(m)
    b.inputs["regen_mask"].assign(m)
    wp.capture_launch(cap.graph)
    b.regenerate(mask=b.inputs["regen_mask"], advance=True)
    assert int(counter.numpy()[0]) == n0 + (1 if mode == "default" else 2)
    assert (
        _course_bytes(a)[: a.result.center.numpy().nbytes]
        == (_course_bytes(b)[: b.result.center.numpy().nbytes])
    )
    np.testing.assert_array_equal(a.result.generation.numpy(), b.result.generation.numpy())


def test_a_hook_the_node_cannot_hold_is_named(device, monkeypatch):
    if device == "cpu":
        monkeypatch.setattr(tg_exec, "_CPU_CONDITIONAL", True)
    elif not wp.is_conditional_graph_supported():
        pytest.skip("no conditional graph nodes on this CUDA")
    c = course(device, extra=[Raiser()])
    with pytest.raises(CaptureError, match="'acme.raiser'.*on_generate.*check_component"):
        with wp.ScopedCapture(device=device):
            c.regenerate(mask=c.inputs["regen_mask"], advance=True)
    # outside the node the same error is the component's own
    with pytest.raises(RuntimeError, match="no events") as info:
        with wp.ScopedCapture(device=device), tg_exec.unconditional():
            c.regenerate(mask=c.inputs["regen_mask"], advance=True)
    assert not isinstance(info.value, CaptureError)


def test_use_conditional_outside_a_capture_is_false(device):
    assert not tg_exec.use_conditional(device)
    with tg_exec.conditional():
        assert not tg_exec.use_conditional(device)


# ------------------------------------------------------------------ prepare=False
def test_prepare_false_refuses_a_capture_until_prepared(device):
    c = course(device, prepare=False)
    mask = c.inputs["regen_mask"]
    for call in (
        lambda: c.regenerate(mask=mask, advance=True),
        lambda: c.enqueue_generate(mask=mask),
        lambda: c.regenerate(),
    ):
        with pytest.raises(CaptureError, match="built with prepare=False"):
            with wp.ScopedCapture(device=device):
                call()
    c.prepare()
    graph = _record(c, mask)  # now it records
    before = _course_bytes(c)
    wp.capture_launch(graph)
    assert _course_bytes(c) == before


def test_prepare_false_regenerates_eagerly_outside_a_capture(device):
    c = course(device, prepare=False)
    assert (c.result.generation.numpy() == -1).all()
    c.regenerate()  # prepares
    assert (c.result.generation.numpy() == 0).all()
    _record(c, c.inputs["regen_mask"])  # no error


# ------------------------------------------------------------------ stream=
def test_stream_must_be_a_warp_stream(device):
    c = course(device)
    with pytest.raises(TypeError, match="stream must be a wp.Stream"):
        c.step(stream=object())
    with pytest.raises(TypeError, match="stream must be a wp.Stream"):
        c.regenerate(stream="cuda")


@needs_cuda
def test_a_course_built_with_stream_refuses_another_capturing_stream():
    device = "cuda:0"
    s, other = wp.Stream(device), wp.Stream(device)
    c = course(device, stream=s)
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    c.bind(position=pos)
    with pytest.raises(CaptureError, match="built with stream="):
        with wp.ScopedCapture(device=device, stream=other):
            c.step()
    with pytest.raises(CaptureError, match="built with stream="):
        with wp.ScopedCapture(device=device, stream=other):
            c.regenerate(mask=c.inputs["regen_mask"], advance=True)
    with wp.ScopedCapture(device=device, stream=other) as cap:  # passing it works
        c.step(stream=other)
        c.regenerate(mask=c.inputs["regen_mask"], advance=True, stream=other)
    wp.capture_launch(cap.graph, stream=other)
    with wp.ScopedCapture(device=device, stream=s):  # its own stream records: fine
        c.step()


@needs_conditional
def test_own_graph_variants_and_the_eager_warning():
    device = "cuda:0"
    c = course(device)
    masks = [wp.zeros(E, dtype=wp.int32, device=device) for _ in range(17)]
    for m in masks[:16]:
        c.regenerate(mask=m, advance=True)  # one graph per (advance, mask)
    assert len(c._graphs.graphs) == 16
    with pytest.warns(RuntimeWarning, match="run eagerly"):
        c.regenerate(mask=masks[16], advance=True)
    before = _course_bytes(c)
    c.regenerate(mask=masks[0], advance=True)  # all zero: skipped on device
    assert _course_bytes(c) == before


@needs_conditional
def test_an_open_side_stream_needs_unconditional():
    device = "cuda:0"
    c = course(device)
    main, side = wp.get_stream(device), wp.Stream(device)
    with wp.ScopedCapture(device=device) as cap:
        side.wait_stream(main)  # fork
        with wp.ScopedStream(side):
            wp.zeros(1, device=device).zero_()
        with tg_exec.unconditional():  # the fork is still open: no node
            c.regenerate(mask=c.inputs["regen_mask"], advance=True)
        main.wait_stream(side)  # join
    wp.capture_launch(cap.graph)


# ------------------------------------------------------------------ check_component
def test_check_component_names_the_offending_calls(device):
    c = course(device, extra=[HostReader(), Counter()])
    problems = check_component("acme.host_reader", c)
    calls = {(p.hook, p.call.split(" ")[0]) for p in problems}
    assert ("on_generate", "host") in calls  # .numpy()
    assert ("reset", "allocation") in calls
    assert ("reset", "host") in calls  # wp.synchronize()
    assert all(p.component == "acme.host_reader" for p in problems)
    assert all("test_capture_rules.py" in p.where for p in problems if p.where != "?")
    assert "acme.host_reader.on_generate" in str(problems[0])
    assert check_component(c.components["acme.counter"], c) == []
    for name in c.components:
        if not name.startswith("acme."):
            assert check_component(name, c) == [], name
    # nothing executed: the course is as it was, and the patched Warp calls are restored
    assert wp.zeros.__module__.startswith("warp")


def test_built_in_components_of_every_course_pass_the_check(device):
    from track_gen import tools

    sdf = Course.track(
        presets.track(num_envs=E, device=device),
        checkpoint_spacing=0.6,
        collision="sdf",
        extra=[tools.Localizer(warm_window=4)],
        seeds=1,
    )
    posts = Course.gates(presets.gates(num_envs=E, device=device, gate_width=0.1), collision=0.02)
    frames = Course.gates(
        presets.gates(num_envs=E, device=device, gate_width=0.1),
        collision=tools.FrameCollision(0.02, 0.02, 0.05),
    )
    for c in (sdf, posts, frames):
        for name in c.components:
            assert check_component(name, c) == [], name


def test_check_component_arguments(device):
    c = course(device)
    with pytest.raises(TypeError, match="course must be a Course"):
        check_component("progress", object())
    with pytest.raises(ValueError, match="not a component of this course"):
        check_component("acme.nope", c)
    with pytest.raises(ValueError, match="not a component of this course"):
        check_component(Counter(), c)
    with pytest.raises(CaptureError):
        with wp.ScopedCapture(device=device):
            check_component("progress", c)
