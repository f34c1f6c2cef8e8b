"""What the ``track-gen`` subcommands share: the program name, the one-line argument error,
the batch and device options, the count and picture checks, the progress bar
(:mod:`track_gen.cli` and :mod:`track_gen.cli_io` read them). Heavy imports stay inside the
functions that need them, so ``track-gen --help`` starts without loading Warp."""

from __future__ import annotations

__all__ = [
    "PROG",
    "ArgumentError",
    "Progress",
    "add_batch_arguments",
    "add_device_argument",
    "check_count",
    "check_picture_option",
    "refuse_special_inputs",
    "samplers",
]

PROG = "track-gen"


class ArgumentError(Exception):
    """A bad option value found after parsing; printed as one line, exit code 2."""


def check_count(option: str, value: int, lo: int, hi: int, hint: str) -> None:
    """A count option in its declared range ``[lo, hi]``, else a one-line refusal."""
    from .core.checks import check_int

    try:
        check_int(option, value, lo, hi, hint=hint)
    except (TypeError, ValueError) as exc:
        raise ArgumentError(str(exc)) from None


def check_picture_option(option: str, path: str) -> None:
    """A picture file option by the rule of every writer (``track_gen.io.paths``): a file
    name in an existing, writable folder with a suffix matplotlib writes (``''``, a folder,
    a name too long or without such a suffix, a missing folder are refused), the folder
    tried by creating and removing a file in it (``/proc`` is refused here, not after the
    run)."""
    from .io.paths import check_picture_path, check_writable_folder

    try:
        p = check_picture_path(option, path)
        check_writable_folder(option, p.parent if str(p.parent) else ".")
    except (TypeError, ValueError, OSError) as exc:
        raise ArgumentError(str(exc)) from None


#: The input files each subcommand reads: ``(option, reader, what)`` with ``option`` None for the
#: positional arguments; ``reader`` and ``what`` word the refusal as that reader does. Import's
#: only option that takes a value is ``--preview`` (a test holds this table to the parser).
INPUT_FILES = {
    "import": ((None, "read_tum", "CSV file"),),
    "preview": (("--config", "read_settings", "settings JSON file"),),
    "explore": (("--config", "read_settings", "settings JSON file"),),
}
#: The options of ``import`` that take a value (their value is not an input path).
IMPORT_VALUE_OPTIONS = ("--preview",)


def _input_paths(command: str, rest: list[str]) -> list[tuple[str | None, str, str, str]]:
    """``(option, path, reader, what)`` for each input file named in ``rest`` (the arguments
    after the subcommand) as written there: ``--config X`` or ``--config=X``, and for
    ``import`` its positional paths."""
    out = []
    for option, reader, what in INPUT_FILES.get(command, ()):
        i = 0
        while i < len(rest):
            tok = rest[i]
            if option is None:  # positionals: skip the options and the values they take
                if tok == "--":
                    out += [(None, t, reader, what) for t in rest[i + 1 :]]
                    break
                if tok in IMPORT_VALUE_OPTIONS:
                    i += 1
                elif not tok.startswith("-") or tok == "-":
                    out.append((None, tok, reader, what))
            elif tok == option and i + 1 < len(rest):
                out.append((option, rest[i + 1], reader, what))
                i += 1
            elif tok.startswith(option + "="):
                out.append((option, tok[len(option) + 1 :], reader, what))
            i += 1
    return out


def refuse_special_inputs(command: str, rest: list[str]) -> None:
    """Refuse an input file that is a folder, a device, a FIFO or a socket (``/dev/zero``, a
    named pipe) from its ``stat`` alone, before Warp and the package are imported, by the
    readers' own rule (:func:`track_gen.core.files.check_mode`, the same words as the reader
    that would refuse it later): an ArgumentError. A missing or unreadable path and every other
    check are left to the reader (this only makes the refusal immediate)."""
    import os

    from .core.files import check_mode

    for option, path, reader, what in _input_paths(command, rest):
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError):  # missing, a NUL in the name, ...: the reader says
            continue
        try:
            check_mode(mode, reader, path, what)
        except (ValueError, IsADirectoryError) as exc:
            head = "" if option is None else f"{option} {path}: "
            raise ArgumentError(f"{head}{exc}") from None


def samplers() -> list[str]:
    from .pipeline import default_registry

    # samplers a config alone can build ("mix" needs a weight table, "centerline" user loops,
    # "real_track" a table of circuits)
    return [
        s for s in default_registry().samplers() if s not in ("mix", "centerline", "real_track")
    ]


def add_batch_arguments(p) -> None:
    """The batch every generating subcommand builds: --generator, -E, --seed."""
    p.add_argument(
        "--generator",
        choices=samplers(),
        default="bezier",
        help="centerline sampler (default: %(default)s)",
    )
    p.add_argument(
        "-E",
        "--num-envs",
        type=int,
        default=16,
        metavar="E",
        help="batch size (default: %(default)s)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="env e is seeded with seed + e (default: %(default)s)"
    )


def add_device_argument(p) -> None:
    p.add_argument(
        "--device",
        default=None,
        help="Warp device such as cpu or cuda:0 (default: CUDA when present, else cpu)",
    )


class Progress:
    """A one-line text progress bar on a stream (``\\r`` updates, newline when done)."""

    def __init__(self, total: int, stream, label: str = "", width: int = 30):
        self.total, self.stream, self.label, self.width = total, stream, label, width
        self.done = 0

    def update(self, done: int) -> None:
        self.done = done
        frac = done / self.total if self.total else 1.0
        fill = int(round(frac * self.width))
        bar = "#" * fill + "-" * (self.width - fill)
        self.stream.write(f"\r{self.label}[{bar}] {done}/{self.total}")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()
