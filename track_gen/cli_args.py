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
