"""Course timings: track or gate courses (step, regenerate), and the localizer's warm search.

Run from the repository root:

    PYTHONPATH=. python benchmarks/course.py --device cpu --E 1024
    PYTHONPATH=. python benchmarks/course.py --device cuda:0 --E 8192
    PYTHONPATH=. python benchmarks/course.py --mode gates --device cpu

--mode track (the default): step (segments, sdf; the step is the progress update plus the
collision query, each also timed alone), sdf bake, regenerate (masked, full), and the cost of
regenerate(mask=...) with 0, 1, 10, 100 and E masked envs, the generation cost of each
z_profile and the 128 x 128 height-field bake.
--mode gates: a Course.gates(presets.gates(gate_width=0.1), collision=0.02, localize_window=8)
course: generate (the full regeneration body, regenerate(advance=True)), step (progress +
post collision + localizer, agents on the course line) and a masked regeneration.

Thread section (CPU, both modes): a whole regeneration of a track course (sdf collision,
checkpoints, a 128 x 128 height field, cones) and of a gate course at each ``--cpu-threads``
value (default ``1 auto``), side by side with the speedup over the first value.

Localizer section (on with --mode gates, off with --mode track; --localizer /
--no-localizer override): LocalizerUtility.locate with a warm window (warm_window=8) against a
full search, on E tracks with N_max=384 whose lines really have close to 384 segments
(scale=LOCATE_SCALE; invalid envs are regenerated until every env is valid, and the mean
count is printed), agents moving smoothly along the line (half a bead per locate, ping-pong,
off the line by a third of the half width), so the warm path is the one exercised.

Each figure is the median of --calls synchronized calls after a warm-up (a localizer call is
one pass over the agents' path, divided by its length). "masked" regenerates 1% of the envs
(advance=True); "full" every env. On the CPU a masked call costs in proportion to the masked
envs (every kernel skips unmasked envs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import warp as wp

from track_gen import TrackGenerator
from track_gen.course import Course
from track_gen.engine.threads import cpu_threads_values
from track_gen.pipeline import presets
from track_gen.tools import LocalizerUtility

#: Localizer section: the bead capacity, the track scale that fills it (default spacing), the
#: warm half-window, and the agents' path (locates per pass, beads per locate).
LOCATE_N_MAX, LOCATE_SCALE, LOCATE_WINDOW = 384, 4.4, 8
PATH_FRAMES, PATH_STEP = 32, 0.5


def timed(fn, device, calls: int) -> float:
    fn()
    wp.synchronize_device(device)
    out = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        wp.synchronize_device(device)
        out.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(out)


def masked_one_percent(course) -> tuple[wp.array, int]:
    regen = course.inputs["regen_mask"]
    m = np.zeros(course.result.count.shape[0], np.int32)
    m[::100] = 1
    regen.assign(m)
    return regen, int(m.sum())


def track_section(device, E: int, calls: int) -> None:
    for method in ("segments", "sdf"):
        course = Course.track(
            presets.track(num_envs=E, device=str(device)),
            checkpoint_spacing=0.6,
            collision=method,
            seeds=0,
        )
        n = course.generator.layout.N_max
        center = course.result.center.numpy().reshape(E, n, 3)
        pos = wp.array(
            np.nan_to_num(center[:, 3]).astype(np.float32), dtype=wp.vec3f, device=device
        )
        quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)
        he = wp.full(E, wp.vec2f(0.02, 0.01), dtype=wp.vec2f, device=device)
        course.bind(position=pos, orientation=quat, half_extents=he)
        step_ms = timed(course.step, device, calls)
        # what the step is made of: the progress update and the collision query, each alone
        progress_ms = timed(lambda c=course, p=pos: c.progress.update(p), device, calls)
        query_ms = timed(lambda c=course, a=(pos, quat, he): c.collision.query(*a), device, calls)
        row = (
            f"{method:<9} step {step_ms:8.3f} ms (progress {progress_ms:6.3f} + collision "
            f"{query_ms:6.3f} + course)"
        )
        if method == "sdf":
            bake_ms = timed(course.collision.refresh, device, max(calls // 2, 1))
            row += f"   bake (all envs) {bake_ms:8.1f} ms"
        print(row, flush=True)
    regen, k = masked_one_percent(course)
    masked = timed(lambda: course.regenerate(mask=regen, advance=True), device, calls)
    full = timed(lambda: course.regenerate(advance=True), device, max(calls // 2, 1))
    print(
        f"regenerate (sdf course): masked {k} envs {masked:8.1f} ms   full {full:8.1f} ms",
        flush=True,
    )


def masked_cost_section(device, E: int, calls: int) -> None:
    """regenerate(mask=..., advance=True) of a segments track course with 0, 1, 10, 100 and E
    masked envs: eager on the CPU (the body skips unmasked envs in every kernel), the course's
    own graph on CUDA (an all-zero mask skipped behind a conditional node where supported)."""
    course = Course.track(
        presets.track(num_envs=E, device=str(device)),
        checkpoint_spacing=0.6,
        collision="segments",
        seeds=0,
    )
    regen = course.inputs["regen_mask"]
    rng = np.random.default_rng(0)
    row = []
    for k in sorted({0, 1, 10, 100, E}):
        if k > E:
            continue
        m = np.zeros(E, np.int32)
        m[rng.choice(E, size=k, replace=False)] = 1
        regen.assign(m)
        ms = timed(lambda: course.regenerate(mask=regen, advance=True), device, calls)
        row.append(f"{k} envs {ms:8.2f} ms")
    print("regenerate masked (segments course): " + "   ".join(row), flush=True)


def elevation_section(device, E: int, calls: int) -> None:
    """generate(advance=True) of each z_profile (z in [0, 0.5], random-walk grade 0.3), and
    the height-field bake (tools.HeightFieldUtility, 128 x 128) of the noise batch."""
    from track_gen.tools import HeightFieldUtility

    row = []
    gen = None
    for profile in ("flat", "uniform", "random_walk", "noise"):
        extra = {} if profile == "flat" else dict(z_min=0.0, z_max=0.5, z_max_step=0.3)
        gen = TrackGenerator(
            presets.track(num_envs=E, device=str(device), z_profile=profile, **extra), seeds=0
        )
        ms = timed(lambda g=gen: g.generate(advance=True), device, max(calls // 2, 1))
        row.append(f"{profile} {ms:7.1f} ms")
    print("generate by z_profile: " + "   ".join(row), flush=True)
    baker = HeightFieldUtility(gen.result, resolution=128)
    bake = timed(baker.bake, device, max(calls // 2, 1))
    regen = gen.inputs["regen_mask"]
    m = np.zeros(E, np.int32)
    m[::100] = 1
    regen.assign(m)
    masked = timed(lambda: baker.bake(regen), device, calls)
    print(
        f"height-field bake 128x128: all envs {bake:7.1f} ms   masked {int(m.sum())} envs "
        f"{masked:6.2f} ms",
        flush=True,
    )


def gates_section(device, E: int, calls: int) -> None:
    course = Course.gates(
        presets.gates(num_envs=E, device=str(device), gate_width=0.1),
        collision=0.02,
        localize_window=8,
        seeds=0,
    )
    full = timed(lambda: course.regenerate(advance=True), device, max(calls // 2, 1))
    line = course.course_line.line
    center = line.center.numpy().reshape(E, line.N_max, 3)
    pos = wp.array(np.nan_to_num(center[:, 3]), dtype=wp.vec3f, device=device)  # on the line
    quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)
    he = wp.full(E, wp.vec2f(0.01, 0.01), dtype=wp.vec2f, device=device)
    course.bind(position=pos, orientation=quat, half_extents=he)
    step_ms = timed(course.step, device, calls)
    regen, k = masked_one_percent(course)
    masked = timed(lambda: course.regenerate(mask=regen, advance=True), device, calls)
    valid = (course.result.valid.numpy() != 0).mean()
    print(
        f"gates: generate (full body) {full:8.1f} ms   step (progress + posts + localizer) "
        f"{step_ms:8.3f} ms   regenerate masked {k} envs {masked:8.1f} ms   "
        f"(valid {valid:.3f}, max_gates {course.result.max_gates})",
        flush=True,
    )


def agent_path(track, E: int) -> list[np.ndarray]:
    """Agent positions per locate: half a bead further along the line each time, a third of
    the half width to its left, out and back (a smooth path, the warm path's case)."""
    n_max = LOCATE_N_MAX
    count = track.count.numpy()
    center = track.center.numpy().reshape(E, n_max, 3)
    normal = track.normal.numpy().reshape(E, n_max, 3)
    offset = np.float32(track_half_width(track) / 3.0)
    env = np.arange(E)
    start = (env * 37) % np.maximum(count, 1)
    frames = []
    for k in range(PATH_FRAMES):
        u = start + k * PATH_STEP
        i = np.floor(u).astype(np.int64)
        t = (u - i)[:, None].astype(np.float32)
        a, b = i % count, (i + 1) % count
        p = (1 - t) * center[env, a] + t * center[env, b] + offset * normal[env, a]
        frames.append(p.astype(np.float32))
    return frames + frames[::-1]


def track_half_width(track) -> float:
    return float(np.nanmedian(np.linalg.norm(track.outer.numpy() - track.center.numpy(), axis=1)))


def localizer_section(device, E: int, calls: int) -> None:
    spec = presets.track(num_envs=E, device=str(device), N_max=LOCATE_N_MAX, scale=LOCATE_SCALE)
    gen = TrackGenerator(spec, seeds=0)
    gen.generate()
    for _ in range(30):  # regenerate invalid (mostly truncated) envs: every env answers
        bad = gen.result.valid.numpy() == 0
        if not bad.any():
            break
        gen.inputs["regen_mask"].assign(bad.astype(np.int32))
        gen.generate(advance=True, mask=gen.inputs["regen_mask"])
    track = gen.result
    valid = track.valid.numpy() != 0
    count = track.count.numpy()
    path = [wp.array(p, dtype=wp.vec3f, device=device) for p in agent_path(track, E)]
    warm = LocalizerUtility(track, warm_window=LOCATE_WINDOW)
    full = LocalizerUtility(track, warm_window=None)

    def run(loc):
        for p in path:
            loc.locate(p)

    agree = []
    for p in path:
        a = warm.locate(p).segment.numpy().copy()
        b = full.locate(p).segment.numpy()
        agree.append((a == b)[valid].mean())
    warm_ms = timed(lambda: run(warm), device, calls) / len(path)
    full_ms = timed(lambda: run(full), device, calls) / len(path)
    print(
        f"localizer: E {E}, N_max {LOCATE_N_MAX}, mean count {count[valid].mean():.1f} "
        f"(min {count[valid].min()}, max {count[valid].max()}, valid {valid.mean():.3f})\n"
        f"  locate warm (warm_window={LOCATE_WINDOW}) {warm_ms:8.3f} ms   full search "
        f"{full_ms:8.3f} ms   full / warm {full_ms / warm_ms:6.1f}x   "
        f"(same segment {np.mean(agree):.4f})",
        flush=True,
    )


def threads_section(device, E: int, calls: int, threads: list) -> None:
    """A whole regeneration of a track course (sdf collision, checkpoints, a 128 x 128
    height field and cones) and of a gate course at each ``cpu_threads`` value, side by side:
    ms per call and the speedup over the first value (the resolved count in brackets)."""
    from track_gen import tools

    def track_course(t):
        return Course.track(
            presets.track(num_envs=E, device=str(device), cpu_threads=t),
            checkpoint_spacing=0.6,
            collision="sdf",
            extra=(tools.HeightFieldBake(128), tools.Props("cone", spacing=0.1)),
            seeds=0,
        )

    def gate_course(t):
        return Course.gates(
            presets.gates(num_envs=E, device=str(device), gate_width=0.1, cpu_threads=t),
            collision=0.02,
            localize_window=8,
            seeds=0,
        )

    for label, make in (
        ("track course (sdf, height field, props)", track_course),
        ("gate course", gate_course),
    ):
        runs = []
        for t in threads:
            course = make(t)
            ms = timed(lambda c=course: c.regenerate(advance=True), device, max(calls // 2, 1))
            runs.append((t, course.generator.cpu_threads, ms))
        base = runs[0][2]
        text = ", ".join(f"{t}({n}) {ms:8.1f} ms x{base / ms:.2f}" for t, n, ms in runs)
        print(f"regenerate by cpu_threads, {label}: {text}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--mode", choices=("track", "gates"), default="track")
    ap.add_argument("--E", type=int, default=None, help="default 1024 (cpu), 8192 (cuda)")
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument(
        "--localizer",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the warm vs full localizer section (default: on with --mode gates)",
    )
    ap.add_argument(
        "--cpu-threads",
        nargs="+",
        default=["1", "auto"],
        metavar="N",
        help="cpu_threads values of the thread section (ints or 'auto'; default: 1 auto)",
    )
    args = ap.parse_args(argv)
    try:
        threads = cpu_threads_values(args.cpu_threads)
    except (TypeError, ValueError) as exc:
        ap.error(str(exc))
    wp.config.log_level = wp.LOG_WARNING
    device = wp.get_device(args.device) if args.device else wp.get_preferred_device()
    E = args.E or (8192 if device.is_cuda else 1024)
    print(f"# course: mode {args.mode}, device {device}, E {E}, calls {args.calls}", flush=True)
    if args.mode == "track":
        track_section(device, E, args.calls)
        masked_cost_section(device, E, args.calls)
        elevation_section(device, E, args.calls)
    else:
        gates_section(device, E, args.calls)
    if args.localizer if args.localizer is not None else args.mode == "gates":
        localizer_section(device, E, args.calls)
    if not device.is_cuda:
        threads_section(device, E, args.calls, threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
