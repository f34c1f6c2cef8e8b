"""The ``track-gen`` command line.

``track-gen preview`` builds a batch, times warm :meth:`~track_gen.TrackGenerator.generate`
calls, prints a summary (device, ms per call, yield, fail bits) and writes a PNG grid of
tracks (coloured by height when ``--z-profile`` elevates them). ``track-gen export`` builds
a batch and writes it in a simulator format (``track_gen.io``); ``track-gen import`` reads
circuits in the TUM racetrack-database layout and draws them. ``track-gen`` with no
subcommand runs ``preview`` with its defaults.
"""

from __future__ import annotations

import argparse
import sys
import time

from .cli_args import (
    PROG,
    ArgumentError,
    Progress,
    add_batch_arguments,
    add_device_argument,
    check_count,
    check_picture_option,
    refuse_special_inputs,
)
from .cli_io import add_export_parser, add_import_parser

__all__ = ["main"]

#: Most timed calls ``preview --calls`` makes (a longer timing run: ``benchmarks/generate.py``).
MAX_CALLS = 1000

#: Elevation defaults of ``preview`` when ``--z-profile`` is not flat (track units; grade).
Z_MIN_DEFAULT = 0.0
Z_MAX_DEFAULT = 0.5
Z_MAX_STEP_DEFAULT = 0.1


def _z_profiles() -> list[str]:
    from .stages.elevate import Z_PROFILE

    return list(Z_PROFILE.choices)


def _elevation(args) -> dict:
    """The TrackGenConfig elevation keywords of ``preview`` (none for a flat profile, so a
    flat preview builds exactly the config it built before elevation existed)."""
    options = {"--z-min": args.z_min, "--z-max": args.z_max, "--z-max-step": args.z_max_step}
    given = [opt for opt, v in options.items() if v is not None]
    if args.z_profile == "flat":
        if given:
            need = "a non-flat --z-profile (uniform, random_walk or noise)"
            raise ArgumentError(f"{', '.join(given)}: only with {need}")
        return {}
    out = {
        "z_profile": args.z_profile,
        "z_min": Z_MIN_DEFAULT if args.z_min is None else args.z_min,
        "z_max": Z_MAX_DEFAULT if args.z_max is None else args.z_max,
    }
    if args.z_max_step is not None:
        out["z_max_step"] = args.z_max_step
    elif args.z_profile == "random_walk":
        out["z_max_step"] = Z_MAX_STEP_DEFAULT
    return out


def _height_summary(track, valid) -> str:
    """``"heights 0.012 .. 0.487, steepest grade 0.153"`` over the valid envs (host copy)."""
    import numpy as np

    E, n_max = track.num_envs, track.N_max
    center = track.center.numpy().reshape(E, n_max, 3)
    count = track.count.numpy()
    lo, hi, grade = np.inf, -np.inf, 0.0
    for e in np.flatnonzero(valid):
        c = center[e, : int(min(max(count[e], 0), n_max))]
        c = c[np.all(np.isfinite(c), axis=1)]
        if len(c) < 2:
            continue
        lo, hi = min(lo, float(c[:, 2].min())), max(hi, float(c[:, 2].max()))
        d = np.roll(c, -1, axis=0) - c
        plan = np.hypot(d[:, 0], d[:, 1])
        ok = plan > 0
        if ok.any():
            grade = max(grade, float((np.abs(d[ok, 2]) / plan[ok]).max()))
    if lo > hi:
        return "no valid env"
    return f"heights {lo:.3f} .. {hi:.3f}, steepest grade {grade:.3f} (valid envs)"


def _build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .viz import MAX_SHOWN  # --envs-shown's bound: the most tracks one figure draws

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Procedural race tracks for batched RL on NVIDIA Warp.",
        epilog="Without a subcommand, 'preview' runs with its defaults.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "preview",
        help="generate a batch, time it and write a PNG grid of tracks",
        description=(
            "Build a TrackGenerator, run one warm-up generate() (reported as the first-call "
            "time: kernel load or compile, CUDA graph recording), then --calls timed calls "
            "that each advance the epoch (new courses every call); print a summary and "
            "write a PNG of the last batch."
        ),
    )
    add_batch_arguments(p)
    p.add_argument(
        "--half-width",
        type=float,
        default=None,
        help="half the road width, in track units (default: 0.1; --generator circuit: the "
        "widest half width in metres, default the preset's)",
    )
    p.add_argument(
        "--z-profile",
        choices=_z_profiles(),
        default="flat",
        help="height profile along the loop (default: %(default)s, a level track; see "
        "TrackGenConfig.z_profile)",
    )
    p.add_argument(
        "--z-min",
        type=float,
        default=None,
        help=f"lowest height, track units (default: {Z_MIN_DEFAULT:g} with a non-flat profile)",
    )
    p.add_argument(
        "--z-max",
        type=float,
        default=None,
        help=f"highest height, track units (default: {Z_MAX_DEFAULT:g} with a non-flat profile)",
    )
    p.add_argument(
        "--z-max-step",
        type=float,
        default=None,
        help="random_walk step bound, a grade (default: "
        f"{Z_MAX_STEP_DEFAULT:g} with --z-profile random_walk)",
    )
    add_device_argument(p)
    p.add_argument(
        "--calls",
        type=int,
        default=3,
        help=f"timed warm generate(advance=True) calls, 0 .. {MAX_CALLS} (default: %(default)s)",
    )
    p.add_argument(
        "--envs-shown",
        type=int,
        default=None,
        metavar="N",
        help=f"tracks drawn in the picture, 1 .. {MAX_SHOWN} (default: min(E, 16))",
    )
    p.add_argument(
        "-o",
        "--output",
        default="track_gen_preview.png",
        help="picture path in an existing folder, its suffix naming the format: .png, .pdf, "
        ".svg, ... (default: %(default)s)",
    )
    p.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="settings JSON exported by track-gen explore (replaces --generator, -E, --seed, "
        "--half-width and the --z-* options)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=_preview)
    from .explore.cli import add_parser as add_explore_parser

    add_export_parser(sub)
    add_import_parser(sub)
    add_explore_parser(sub)
    return parser


def _want_progress(args) -> bool:
    if args.no_progress or args.calls <= 1:
        return False
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def _preview(args) -> int:
    import numpy as np
    import warp as wp

    from . import FailBit, TrackGenConfig, TrackGenerator

    check_count("--calls", args.calls, 0, MAX_CALLS, "a longer timing run: benchmarks/generate.py")
    if args.envs_shown is not None:
        from .viz import MAX_SHOWN

        check_count("--envs-shown", args.envs_shown, 1, MAX_SHOWN, "")
    check_picture_option("--output", args.output)
    if args.device is not None:
        try:
            wp.get_device(args.device)
        except (ValueError, RuntimeError) as exc:
            known = ", ".join(str(d) for d in wp.get_devices())
            raise ArgumentError(
                f"--device {args.device!r} is not available here (devices: {known})"
            ) from exc
    if args.config is not None:
        from .explore.settings import track_generator_from_file

        try:
            gen, args.seed = track_generator_from_file(args.config, device=args.device)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise ArgumentError(f"--config {args.config}: {exc}") from exc
        config = gen.config
        elevation = {} if config.z_profile == "flat" else {"z_profile": config.z_profile}
    else:
        elevation = _elevation(args)
        try:
            if args.generator == "circuit":  # metres: the preset's beads and capacity
                from .pipeline import presets

                extra = {} if args.half_width is None else {"half_width": args.half_width}
                spec = presets.circuit(args.num_envs, device=args.device, **extra, **elevation)
                config = spec.config
                gen = TrackGenerator(spec, seeds=args.seed)
            else:
                config = TrackGenConfig(
                    generator=args.generator,
                    num_envs=args.num_envs,
                    half_width=0.1 if args.half_width is None else args.half_width,
                    device=args.device,
                    **elevation,
                )
                gen = TrackGenerator(config, seeds=args.seed)
        except (ValueError, TypeError) as exc:
            raise ArgumentError(str(exc)) from exc

    dev = gen.device
    E = config.num_envs

    t0 = time.perf_counter()
    gen.generate(advance=True)
    wp.synchronize_device(dev)
    first_ms = (time.perf_counter() - t0) * 1e3

    times = []
    progress = Progress(args.calls, sys.stderr, "generate ") if _want_progress(args) else None
    for k in range(args.calls):
        t0 = time.perf_counter()
        gen.generate(advance=True)
        wp.synchronize_device(dev)
        times.append((time.perf_counter() - t0) * 1e3)
        if progress is not None:
            progress.update(k + 1)
    if progress is not None:
        progress.close()
    track = gen.result

    valid = track.valid.numpy()
    fail = track.fail_mask.numpy()
    count = track.count.numpy()
    n_valid = int(valid.sum())
    track_bits = [b for b in FailBit if not b.name.startswith(("GATE_", "CROSSING_", "GRADE"))]
    fails = ", ".join(f"{b.name} {int(np.count_nonzero(fail & int(b)))}" for b in track_bits)
    if times:
        per_call = (
            f"{float(np.mean(times)):.3f} ms (mean of {len(times)} warm calls, "
            f"{E / (float(np.mean(times)) * 1e-3):,.0f} tracks/s)"
        )
    else:
        per_call = "n/a (--calls 0)"

    warm_what = "kernel load/compile" + (", CUDA graph recording" if dev.is_cuda else "")
    rows = [
        ("device", str(dev)),
        ("generator", config.generator),
        ("E", f"{E} (seed {args.seed}, half_width {config.half_width:g}, N_max {config.N_max})"),
        ("first call", f"{first_ms:.1f} ms (warm-up: {warm_what})"),
        ("ms per call", per_call),
        ("yield", f"{n_valid / E:.1%} ({n_valid}/{E} valid in the last batch)"),
        ("fail bits", fails),
        ("count", f"mean {float(count.mean()):.1f}, max {int(count.max())} beads"),
    ]
    if elevation:
        z = f"{config.z_profile}, z in [{config.z_min:g}, {config.z_max:g}]"
        if config.z_profile == "random_walk":
            z += f", z_max_step {config.z_max_step:g}"
        rows.append(("elevation", f"{z}: {_height_summary(track, valid)}"))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    sys.stdout.flush()

    from .viz import plot_tracks

    shown = min(E, args.envs_shown if args.envs_shown is not None else 16)
    profile = f", z {config.z_profile}" if elevation else ""
    title = (
        f"{config.generator}{profile}, E={E}, seed {args.seed}: "
        f"first {shown} envs of the last batch"
    )
    try:
        plot_tracks(track, envs=shown, path=args.output, title=title)
    except ImportError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{PROG}: error: could not write {args.output}: {exc}", file=sys.stderr)
        return 1
    print(f"{'output':<{width}}  {args.output}")
    return 0


def _normalize_argv(argv: list[str]) -> list[str]:
    """Run ``preview`` when no subcommand is given (``track-gen`` or ``track-gen -E 64``)."""
    if not argv:
        return ["preview"]
    if argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        return ["preview", *argv]
    return argv


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``track-gen``; returns the exit status (2 for bad arguments)."""
    argv = _normalize_argv(list(sys.argv[1:] if argv is None else argv))
    try:  # a device or a FIFO as an input file: refused before Warp is imported
        refuse_special_inputs(argv[0], argv[1:])
    except ArgumentError as exc:
        print(f"{PROG} {argv[0]}: error: {exc}", file=sys.stderr)
        return 2
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse error (2) or --help/--version (0)
        return exc.code if isinstance(exc.code, int) else 2

    import warp as wp

    saved_level = wp.config.log_level
    wp.config.log_level = max(saved_level, wp.LOG_WARNING)  # no init banner / module-load lines
    try:
        return args.func(args)
    except ArgumentError as exc:
        print(f"{PROG} {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
    finally:
        wp.config.log_level = saved_level
