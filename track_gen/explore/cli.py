"""``track-gen explore``: the command that serves the page.

``track_gen.cli`` adds it with :func:`add_parser`; ``python -m track_gen.explore`` runs it
alone (:func:`main`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

__all__ = ["DEFAULT_PORT", "add_parser", "main", "run"]

#: Port of ``track-gen explore`` without ``--port``.
DEFAULT_PORT = 8765
PROG = "track-gen explore"


def _configure(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help="TCP port; 0 picks a free one (default: %(default)s)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default: %(default)s, this machine only)",
    )
    p.add_argument(
        "--generator",
        default=None,
        metavar="NAME",
        help="sampler to start with: a built-in one or a registered plugin's (default: bezier)",
    )
    p.add_argument(
        "--gates",
        action="store_true",
        help="start with gate courses (GateGenerator) instead of tracks",
    )
    p.add_argument(
        "-E",
        "--num-envs",
        type=int,
        default=None,
        metavar="E",
        help="batch size to start with (default: 16; the page changes it)",
    )
    p.add_argument("--seed", type=int, default=None, help="base seed (default: 0)")
    p.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="start from settings JSON exported by the page (--generator, --gates, -E and "
        "--seed override it)",
    )
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first, so the samplers it registers are offered (repeatable)",
    )
    p.add_argument(
        "--device",
        default="cpu",
        help="Warp device of the generator (default: %(default)s: small batches, no kernel "
        "compile on first use)",
    )
    p.add_argument("--verbose", action="store_true", help="log every request on stderr")
    p.set_defaults(func=run)
    return p


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``explore`` subcommand to ``track-gen``'s subparsers."""
    p = subparsers.add_parser(
        "explore",
        help="serve a local web page to tune generators live",
        description=(
            "Serve a local web page (127.0.0.1, no external assets) that draws a batch of "
            "courses and regenerates it as you move the controls: sampler, batch size, seed, "
            "every dynamic parameter of the pipeline with its declared range, epoch stepping, "
            "half width, elevation. Export the settings as Python or JSON and the picture as "
            "PNG. Ctrl-C stops the server."
        ),
    )
    return _configure(p)


def _error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def _settings(args):
    from .settings import Settings, read_settings

    if args.config is not None:
        settings = read_settings(args.config)
        doc = settings.to_json()
    else:
        doc = {"config": {"generator": "bezier", "num_envs": 16}}
    family = "gates" if args.gates else doc.get("family", "track")
    config = dict(doc["config"])
    if family != doc.get("family", "track"):
        config = {k: config[k] for k in ("generator", "num_envs") if k in config}
        doc["params"], doc["randomize"] = {}, {}
    if family == "gates" and args.config is None:
        from .state import GATE_START

        config.update(GATE_START)
    if args.generator is not None:
        config["generator"] = args.generator
    if args.num_envs is not None:
        config["num_envs"] = args.num_envs
    doc.update(family=family, config=config)
    if args.seed is not None:
        doc["seed"] = args.seed
    return Settings.from_json(doc)


def run(args) -> int:
    """Run ``track-gen explore`` with parsed ``args``; returns the exit status (0 after
    Ctrl-C, 2 for a bad option, a plugin that fails to import or a port in use)."""
    t0 = time.perf_counter()
    for module in args.plugin:
        try:
            importlib.import_module(module)
        except Exception as exc:  # any import failure is the user's module's
            return _error(f"--plugin {module}: import failed: {exc!r}")
    from .server import make_server, serve
    from .state import ExploreState

    try:
        settings = _settings(args)
    except OSError as exc:
        return _error(f"--config {args.config}: {exc}")
    except (ValueError, TypeError) as exc:
        where = f"--config {args.config}: " if args.config else ""
        return _error(f"{where}{exc}")
    try:
        state = ExploreState(settings, device=args.device)
    except (ValueError, TypeError, KeyError, RuntimeError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        return _error(msg)
    try:
        server = make_server(state, args.host, args.port, verbose=args.verbose)
    except (OSError, ValueError, TypeError) as exc:
        hint = " (--port 0 picks a free port)" if isinstance(exc, OSError) else ""
        return _error(f"cannot serve on {args.host}:{args.port}: {exc}{hint}")
    s = state.settings
    first = (time.perf_counter() - t0) * 1e3
    print(
        f"{PROG}: serving {server.url}  ({s.family}, {state.generator.config.generator}, "
        f"E={state.generator.num_envs}, device {state.device}; first batch in {first:.0f} ms; "
        "Ctrl-C stops)",
        flush=True,
    )
    serve(server)
    print(f"{PROG}: stopped", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m track_gen.explore [options]``: the subcommand alone."""
    import warp as wp

    parser = _configure(argparse.ArgumentParser(prog=PROG, description=add_parser.__doc__))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    wp.config.log_level = max(wp.config.log_level, wp.LOG_WARNING)
    try:
        return run(args)
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
