"""Newton timings: the car example's step split into physics and course, and the in-place write.

Run from the repository root (needs newton: pip install 'track_gen[newton]'):

    PYTHONPATH=. python benchmarks/newton_course.py --device cpu --E 4 32
    WARP_CACHE_PATH=$(mktemp -d) PYTHONPATH=. python benchmarks/newton_course.py --E 4

For each E, the scene of ``examples/newton_car.py`` (E worlds: a course's height field and 48
cone slots per world, a 4-wheel car, XPBD with 8 substeps per 1/60 s step) is built, then:

* ``build s``: course, Newton model (finalize), solver and the recorded graph; with an empty
  kernel cache (WARP_CACHE_PATH above) it includes every kernel's compilation;
* ``physics``: one recorded collide + 8 XPBD substeps;
* ``course``: the recorded rest of the step: poses, course.step(), control, done, the masked
  regeneration (a CPU capture records it unconditionally: a full body over the E envs, each
  returning at once when unmasked), shapes.write(done) and the respawn, no env done;
* ``step``: both, as the example replays them, and eagerly (``eager step``);
* ``write 1`` / ``write E``: one shapes.write(mask) with 1 or E worlds masked, eager, after a
  regeneration of those worlds.

Each figure is the median of --calls synchronized calls after a warm-up, wall ms and process
CPU ms (the machine's load average is printed: on a shared machine the CPU column is the
better estimate of an idle machine's wall time).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import warp as wp

ROOT = Path(__file__).resolve().parents[1]


def load_example():
    spec = importlib.util.spec_from_file_location("newton_car", ROOT / "examples" / "newton_car.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["newton_car"] = module
    spec.loader.exec_module(module)
    return module


def timed(fn, device, calls: int) -> tuple[float, float]:
    """Median wall and process CPU ms of ``fn()`` over ``calls`` synchronized calls."""
    fn()
    wp.synchronize_device(device)
    wall, cpu = [], []
    for _ in range(calls):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wp.synchronize_device(device)
        wall.append(1e3 * (time.perf_counter() - t0))
        cpu.append(1e3 * (time.process_time() - c0))
    return statistics.median(wall), statistics.median(cpu)


def capture(fn, device):
    with wp.ScopedCapture(device=device) as cap:
        fn()
    return cap.graph


def course_part(scene, car) -> None:
    """The step without the physics (what ``Scene.body`` does after ``physics()``)."""
    course, frame, t = scene.course, scene.course.localizer.frame, scene.course.result
    scene.poses.update(scene.state0.body_q)
    res = course.step()
    wp.launch(
        car.control,
        scene.E,
        inputs=[res.valid, t.center, t.count, frame.segment, scene.state0.body_q]
        + [scene.state0.body_qd, scene.chassis, scene.steer_q, scene.drive_qd, scene.throttle]
        + [t.N_max, car.LOOKAHEAD, 2.0 * car.AXLE[0], car.STEER_LIMIT, car.TORQUE, car.TOP_SPEED],
        outputs=[scene.control.joint_target_q, scene.control.joint_f],
        device=scene.device,
    )
    wp.launch(
        car.episode_done,
        scene.E,
        inputs=[res.valid, res.contacts.oob, res.events.laps, frame.n_up]
        + [scene.poses.orientation, scene.force, scene.max_laps, scene.max_age],
        outputs=[scene.age, scene.done],
        device=scene.device,
    )
    course.regenerate(mask=scene.done, advance=True)
    scene.shapes.write(scene.done)
    scene.spawn(scene.done)


def bench(E: int, device, calls: int, car) -> dict:
    t0 = time.perf_counter()
    scene = car.Scene(E, device, max_laps=1000, max_age=2**30)
    scene.record()
    build = time.perf_counter() - t0
    dev = scene.device
    for _ in range(30):  # settle
        scene.step()
    out = {"E": E, "build s": build}
    physics = capture(scene.physics, dev)
    out["physics"] = timed(lambda: wp.capture_launch(physics), dev, calls)
    rest = capture(lambda: course_part(scene, car), dev)
    out["course"] = timed(lambda: wp.capture_launch(rest), dev, calls)
    out["step"] = timed(lambda: wp.capture_launch(scene.graph), dev, calls)
    out["eager step"] = timed(scene.body, dev, max(3, calls // 4))
    for k in (1, E):
        mask = np.zeros(E, np.int32)
        mask[:k] = 1
        m = wp.array(mask, dtype=wp.int32, device=dev)
        scene.course.regenerate(mask=m, advance=True)
        out[f"write {k if k == 1 else 'E'}"] = timed(lambda m=m: scene.shapes.write(m), dev, calls)
    out["grid"] = f"{scene.shapes.resolution}^2"
    out["shapes/world"] = scene.model.shape_count // E
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--E", type=int, nargs="+", default=[4, 32])
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args(argv)
    if any(e < 1 for e in args.E) or args.calls < 1:
        ap.error("--E values and --calls must be >= 1")
    wp.config.log_level = wp.LOG_WARNING
    car = load_example()
    import newton  # noqa: PLC0415 (checked by the example's require_newton first)

    print(
        f"# {wp.get_device(args.device)}, warp {wp.config.version}, newton {newton.__version__}, "
        f"median of {args.calls} calls; ms wall / ms process CPU; load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    cols = ["physics", "course", "step", "eager step", "write 1", "write E"]
    print("   E  grid   shapes/world  build s  " + "  ".join(f"{c:>15}" for c in cols))
    for E in args.E:
        r = bench(E, args.device, args.calls, car)
        cells = "  ".join(f"{r[c][0]:7.2f} /{r[c][1]:6.2f}" for c in cols)
        print(f"{E:4d}  {r['grid']:>5}  {r['shapes/world']:12d}  {r['build s']:7.1f}  {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
