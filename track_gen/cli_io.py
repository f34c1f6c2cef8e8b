"""``track-gen export`` and ``track-gen import`` (the :mod:`track_gen.io` side of the CLI;
:mod:`track_gen.cli` registers them)."""

from __future__ import annotations

import os
import re
import sys

from .cli_args import (
    PROG,
    ArgumentError,
    Progress,
    add_batch_arguments,
    add_device_argument,
    check_picture_option,
)

#: ``export --format`` -> (file name ending, one file per env).
EXPORT_FORMATS = {
    "tum": (".csv", True),
    "cones": (".cones.csv", True),
    "json": (".json", False),
    "npz": (".npz", False),
    "gltf": (".glb", True),
    "usd": (".usda", True),
}
#: Formats ``export --gates`` can write (gate poses).
GATE_FORMATS = ("json", "npz", "usd")


def add_export_parser(sub) -> None:
    p = sub.add_parser(
        "export",
        help="generate a batch and write it as files simulators read",
        description=(
            "Build a TrackGenerator (GateGenerator with --gates), generate once and write the "
            "batch: one file per valid env for the per-course formats (tum, cones, gltf, usd: "
            "<generator>_env<e>.<ext>, invalid envs skipped with a note), one file for json "
            "and npz (<generator>.<ext>, with what rebuilds the batch)."
        ),
    )
    add_batch_arguments(p)
    p.add_argument(
        "--format",
        required=True,
        choices=list(EXPORT_FORMATS),
        help="file format (tum, cones, gltf, usd: one file per env)",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output folder (created when its parent exists; . for the current folder)",
    )
    p.add_argument(
        "--half-width",
        type=float,
        default=None,
        help="half the road width, track units (default: the config's)",
    )
    p.add_argument(
        "--scale",
        type=float,
        default=None,
        help="course size, track units (default: the config's); FSDS and most "
        "simulators read metres: --generator circuit exports circuits in metres (no --scale)",
    )
    p.add_argument(
        "--cone-spacing",
        type=float,
        default=None,
        help="cone spacing along each border for --format cones, track units "
        "(default: one road width, 2 * half_width)",
    )
    p.add_argument(
        "--gates",
        action="store_true",
        help=f"export gate courses (GateGenerator; formats {', '.join(GATE_FORMATS)})",
    )
    add_device_argument(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=_export)


def add_import_parser(sub) -> None:
    p = sub.add_parser(
        "import",
        help="read circuits in the TUM racetrack-database CSV layout and draw them",
        description=(
            "Read each PATH with track_gen.io.read_tum, print one line per circuit (points, "
            "closed length, width ranges) and, with --preview, draw them (road band from the "
            "real left/right widths, one panel per circuit)."
        ),
    )
    p.add_argument(
        "paths", nargs="+", metavar="PATH", help="CSV files (x_m,y_m,w_tr_right_m,w_tr_left_m)"
    )
    p.add_argument(
        "--preview",
        default=None,
        metavar="PNG",
        help="write a picture of the circuits (a file in an existing folder, its suffix naming "
        "the format: .png, .pdf, .svg, ...)",
    )
    p.set_defaults(func=_import)


def _device_or_error(device):
    import warp as wp

    if device is None:
        return
    try:
        wp.get_device(device)
    except (ValueError, RuntimeError) as exc:
        known = ", ".join(str(d) for d in wp.get_devices())
        raise ArgumentError(
            f"--device {device!r} is not available here (devices: {known})"
        ) from exc


def _out_dir(path: str) -> str:
    """``--out``: an existing, writable folder, or a new one whose parent exists (created
    here); ``''`` is refused (``--out .`` names the current folder)."""
    from .io.paths import check_in_path, check_writable_folder

    if path == "":
        raise ArgumentError("--out '': give a folder name (--out . is the current folder)")
    try:
        check_in_path("--out", path)
    except (TypeError, ValueError) as exc:
        raise ArgumentError(str(exc)) from None
    full = os.path.abspath(path)
    if os.path.exists(full) and not os.path.isdir(full):
        raise ArgumentError(f"--out {path}: exists and is not a folder")
    if not os.path.isdir(full):
        parent = os.path.dirname(full)
        if not os.path.isdir(parent):
            raise ArgumentError(f"--out {path}: folder {parent} does not exist")
        try:
            os.mkdir(full)
        except OSError as exc:
            raise ArgumentError(f"--out {path}: cannot create the folder: {exc}") from exc
    if not os.access(full, os.W_OK | os.X_OK):
        raise ArgumentError(f"--out {path}: folder {full} is not writable: choose another")
    try:
        check_writable_folder("--out", full)
    except OSError as exc:
        raise ArgumentError(str(exc)) from None
    return full


def _check_targets(out: str, stem: str, ext: str, per_env: bool, num_envs: int) -> None:
    """No file the export would write is an existing folder (a file there is replaced; a
    folder cannot be): refused before anything is written, naming the folder."""
    if not per_env:
        names = [stem + ext]
    else:
        pattern = re.compile(re.escape(stem) + r"_env(\d+)" + re.escape(ext))
        names = []
        for entry in os.listdir(out):
            m = pattern.fullmatch(entry)
            if m and int(m.group(1)) < num_envs and str(int(m.group(1))) == m.group(1):
                names.append(entry)
    for name in sorted(names):
        target = os.path.join(out, name)
        if os.path.isdir(target):
            raise ArgumentError(
                f"--out {out}: {name} is a folder where the export writes a file: remove it "
                "or choose another folder"
            )


def _export(args) -> int:
    from . import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
    from . import io as tio

    if args.gates and args.format not in GATE_FORMATS:
        raise ArgumentError(
            f"--format {args.format} is not available with --gates (use one of "
            f"{', '.join(GATE_FORMATS)})"
        )
    if args.cone_spacing is not None and args.format != "cones":
        raise ArgumentError("--cone-spacing: only with --format cones")
    _device_or_error(args.device)
    fields = {"generator": args.generator, "num_envs": args.num_envs, "device": args.device}
    circuit = args.generator == "circuit" and not args.gates
    if args.scale is not None:
        if circuit:
            raise ArgumentError(
                "--scale: circuits are drawn in metres at their real size (length_min / "
                "length_max); no --scale"
            )
        fields["scale"] = args.scale
    if args.half_width is not None:
        if args.gates:
            raise ArgumentError("--half-width: only for tracks (gate width: GateGenConfig)")
        fields["half_width"] = args.half_width
    try:
        if args.gates:
            config = GateGenConfig(**fields)
            gen = GateGenerator(config, seeds=args.seed)
        elif circuit:  # metres: the preset's beads and capacity
            from .pipeline import presets

            fields.pop("generator")
            spec = presets.circuit(fields.pop("num_envs"), **fields)
            config = spec.config
            gen = TrackGenerator(spec, seeds=args.seed)
        else:
            config = TrackGenConfig(**fields)
            gen = TrackGenerator(config, seeds=args.seed)
    except (ValueError, TypeError) as exc:
        raise ArgumentError(str(exc)) from exc
    spacing = None
    if args.format == "cones":
        spacing = 2.0 * config.half_width if args.cone_spacing is None else args.cone_spacing
        if not (spacing > 0 and spacing < float("inf")):
            raise ArgumentError(f"--cone-spacing {spacing!r}: must be finite and > 0")
    out = _out_dir(args.out)
    ext, per_env = EXPORT_FORMATS[args.format]
    stem = f"{args.generator}_gates" if args.gates else args.generator
    _check_targets(out, stem, ext, per_env, config.num_envs)

    gen.generate()
    result = gen.result
    if not per_env:
        path = os.path.join(out, stem + ext)
        writer = tio.write_json if args.format == "json" else tio.write_npz
        try:
            writer(result, path, generator=gen)
        except OSError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 1
        print(f"wrote {path} ({config.num_envs} envs, {int(result.valid.numpy().sum())} valid)")
        return 0

    valid = result.valid.numpy()
    fail = result.fail_mask.numpy()
    E = config.num_envs
    progress = None
    if E > 1 and not args.no_progress and getattr(sys.stderr, "isatty", lambda: False)():
        progress = Progress(E, sys.stderr, "export ")
    written, skipped = 0, []
    try:
        for e in range(E):
            if not valid[e]:
                skipped.append(e)
            else:
                path = os.path.join(out, f"{stem}_env{e}{ext}")
                try:
                    if args.format == "tum":
                        tio.write_tum(result, e, path)
                    elif args.format == "cones":
                        tio.write_cones(result, e, path, spacing=spacing)
                    elif args.format == "gltf":
                        tio.write_gltf(result, e, path)
                    else:
                        tio.write_usd(result, e, path)
                except ValueError as exc:
                    raise ArgumentError(str(exc)) from exc
                written += 1
            if progress is not None:
                progress.update(e + 1)
    except (ImportError, OSError) as exc:  # a missing extra, a full disk
        if progress is not None:
            progress.close()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    if progress is not None:
        progress.close()
    from .results import FailBit

    for e in skipped:
        print(f"env {e} skipped: invalid ({FailBit(int(fail[e])).name})", file=sys.stderr)
    print(f"wrote {written} {args.format} files to {out} ({len(skipped)} invalid envs skipped)")
    return 0


def _import(args) -> int:
    from . import io as tio
    from .io.tum import MAX_PANELS

    if args.preview is not None:
        check_picture_option("--preview", args.preview)
        if len(args.paths) > MAX_PANELS:
            raise ArgumentError(
                f"--preview draws at most {MAX_PANELS} circuits, got {len(args.paths)} "
                "paths: draw them in several calls"
            )
    tracks = []
    for path in args.paths:
        try:
            tracks.append(tio.read_tum(path))
        except (OSError, ValueError) as exc:
            raise ArgumentError(str(exc)) from exc
    for t in tracks:
        u = t.unit
        print(
            f"{t.name}: {t.num_points} points, length {t.length:,.1f} {u}, width right "
            f"{t.width_right.min():.2f}..{t.width_right.max():.2f} {u}, left "
            f"{t.width_left.min():.2f}..{t.width_left.max():.2f} {u}"
        )
    if args.preview is None:
        return 0
    try:
        tio.plot_real_tracks(tracks, args.preview)
    except ImportError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{PROG}: error: could not write {args.preview}: {exc}", file=sys.stderr)
        return 1
    print(f"output: {args.preview}")
    return 0
