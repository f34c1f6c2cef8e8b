"""The spec's in-graph auto-reset recipe ("RL auto-reset" -> "The recipe inside your graph"),
through examples/ingraph_autoreset.py: a replay equals the eager step bitwise, an all-zero
done mask changes nothing, and a CPU capture records the masked regeneration unconditionally.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import warp as wp

import track_gen.core.exec as tx

ROOT = Path(__file__).resolve().parents[2]
E = 16


def _load_example():
    name = "examples_ingraph_autoreset"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / "ingraph_autoreset.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


ex = _load_example()


def _record_skipping_last_reward(env):
    """The recipe with a bug: reward_and_done launched on E - 1 envs (the last env's
    outputs are never written)."""
    with wp.ScopedCapture(device=env.device) as cap:
        env.agents.sim_step(env.pos, env.quat)
        res = env.course.step()
        wp.launch(
            ex.reward_and_done,
            env.E - 1,
            [res.valid, res.contacts.oob, res.events.passed, res.events.dist_to_next]
            + [res.events.laps, 3, env.reward, env.obs_dist, env.done],
            device=env.device,
        )
        env.course.regenerate(mask=env.done, advance=True)
        env.agents.respawn(env.done, env.pos, env.quat)
    return cap.graph


def test_replay_equals_eager_bitwise_with_poisoned_outputs(device):
    live, twin = ex.build(E, device), ex.build(E, device)
    step = ex.record(live)
    pairs = ex.make_poison(ex.outputs(live))
    live_arrays, twin_arrays = ex.state_arrays(live), ex.state_arrays(twin)
    assert ex.differences(ex.snapshot(live_arrays), ex.snapshot(twin_arrays)) == []
    regenerations = passes = 0
    for n in range(60):
        ex.poison(pairs)
        wp.capture_launch(step)
        ex.eager_step(twin)
        live_now = ex.snapshot(live_arrays)
        assert ex.differences(live_now, ex.snapshot(twin_arrays)) == [], f"step {n}"
        assert np.isfinite(live_now["reward"]).all() and np.isfinite(live_now["obs_dist"]).all()
        regenerations += int((live_now["done"] != 0).sum())
        passes += int(live_now["events.passed"].sum())
    # the run exercised both the auto-reset and the progress events
    assert regenerations > 0 and passes > 0, (regenerations, passes)

    # negative control: a replay that skips a write leaves the poison, and it is caught
    bad = _record_skipping_last_reward(live)
    ex.poison(pairs)
    wp.capture_launch(bad)
    ex.eager_step(twin)
    diff = ex.differences(ex.snapshot(live_arrays), ex.snapshot(twin_arrays))
    assert any(d.startswith("reward ") for d in diff), diff


def test_example_run_checks_courses_change_exactly_where_done(device):
    # ex.run checks (a), (b) and (c) every step and raises ex.CheckError naming a failure
    out = ex.run(E, 30, device)
    assert out["regenerations"] > 0


def test_all_zero_done_replay_changes_nothing(device):
    env = ex.build(E, device)  # every agent on bead 0 of its course: on the road
    course, pos, quat = env.course, env.pos, env.quat
    reward, obs_dist, done = env.reward, env.obs_dist, env.done
    # the recipe without sim_step (the agents do not move) and with max_laps out of reach
    with wp.ScopedCapture(device=env.device) as cap:
        res = course.step()
        wp.launch(
            ex.reward_and_done,
            E,
            [res.valid, res.contacts.oob, res.events.passed, res.events.dist_to_next]
            + [res.events.laps, 1 << 30, reward, obs_dist, done],
            device=env.device,
        )
        course.regenerate(mask=done, advance=True)
        env.agents.respawn(done, pos, quat)
    wp.capture_launch(cap.graph)  # the first step after the reset records the position
    assert not done.numpy().any(), "precondition: every env valid and on the road"
    assert (course.result.valid.numpy() != 0).all()
    arrays = ex.state_arrays(env)
    before = ex.snapshot(arrays)
    active = course.generator._ws.active  # written by the generator's first kernel
    for _ in range(3):
        active.fill_(7)
        wp.capture_launch(cap.graph)
        assert ex.differences(before, ex.snapshot(arrays)) == []
        if wp.get_device(device).is_cpu:
            # a CPU capture records the body unconditionally: it ran, and changed nothing
            assert not active.numpy().any()
        elif wp.is_conditional_graph_supported():
            # behind a conditional node: the body was skipped on device
            assert (active.numpy() == 7).all()


def _record_regeneration(course, mask, scope=None):
    with wp.ScopedCapture(device="cpu") as cap:
        inside = (tx.is_capturing("cpu"), tx.use_conditional("cpu"))
        if scope is None:
            course.regenerate(mask=mask, advance=True)
        else:
            with scope():
                course.regenerate(mask=mask, advance=True)
    return cap.graph, inside


def _operations(graph):
    capture = getattr(graph, "_apic_capture", None)  # Warp's CPU recording (not public API)
    return None if capture is None else capture.operation_count


def test_cpu_capture_records_the_masked_body_unconditionally(monkeypatch):
    env = ex.build(E, "cpu")
    course, done = env.course, env.done
    graph, inside = _record_regeneration(course, done)
    assert inside == (True, False)  # capturing, and no conditional node on the cpu
    plain, _ = _record_regeneration(course, done, tx.unconditional)
    monkeypatch.setattr(tx, "_CPU_CONDITIONAL", True)  # the tests-only conditional recording
    gated, gated_inside = _record_regeneration(course, done)
    monkeypatch.setattr(tx, "_CPU_CONDITIONAL", False)
    assert gated_inside == (True, True)
    ops = [_operations(g) for g in (graph, plain, gated)]
    if ops[0] is not None:
        # the same body as inside unconditional(), and not the conditional node's few ops
        assert ops[0] == ops[1] and ops[0] > ops[2], ops

    arrays = ex.course_arrays(course)
    before = ex.snapshot(arrays)
    active = course.generator._ws.active
    done.zero_()
    active.fill_(7)
    wp.capture_launch(graph)  # all-zero mask: the body runs and restores every env
    assert not active.numpy().any()
    assert ex.differences(before, ex.snapshot(arrays)) == []
    active.fill_(7)
    wp.capture_launch(gated)  # the conditional recording skips it
    assert (active.numpy() == 7).all()
    done.assign(np.isin(np.arange(E), [2, 9]).astype(np.int32))
    wp.capture_launch(graph)
    gen = course.result.generation.numpy()
    np.testing.assert_array_equal(np.flatnonzero(gen), [2, 9])
