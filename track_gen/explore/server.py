"""The HTTP side of ``track-gen explore``: the page and its JSON endpoints (standard library
``http.server`` only).

Endpoints (every answer is JSON unless it is the page itself):

==========================  ==========================================================
``GET /``                   the page (``page.html``, ``page.js``, ``page.css``: no
                            external asset, works offline)
``GET /api/state``          samplers, settings, the pipeline's stages, every dynamic
                            parameter (value, declared range, slider window, unit, doc,
                            randomizer) and the static fields of the pipeline's sections
``GET /api/batch``          the current batch's geometry (no regeneration)
``POST /api/generate``      a change request (``family``, ``seed``, ``config``,
                            ``params``, ``randomize``); regenerates, answers the batch
                            plus ``rebuilt`` and ``state``
``POST /api/next``          ``{"env": e}``: next course of env ``e`` (masked
                            regeneration with ``advance=True``); ``{}``: every env
``GET /api/export``         ``{"json": settings, "python": snippet, "name": stem}``
==========================  ==========================================================

A refused value answers HTTP 400 ``{"error": "<the library's message>", "type": "ValueError"}``
and changes nothing; the server keeps serving. Requests are served one at a time on the one
generator (:class:`~track_gen.explore.state.ExploreState` holds a lock).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import urlsplit

from .state import ExploreState

__all__ = ["MAX_BODY", "STOP_SIGNALS", "ExploreServer", "make_server", "serve"]

#: Largest request body accepted (bytes).
MAX_BODY = 1 << 20
#: The page's files: URL path -> (package file, content type).
PAGE_FILES = {
    "/": ("page.html", "text/html; charset=utf-8"),
    "/index.html": ("page.html", "text/html; charset=utf-8"),
    "/page.js": ("page.js", "text/javascript; charset=utf-8"),
    "/page.css": ("page.css", "text/css; charset=utf-8"),
}
#: Exceptions whose text is the library's answer to a bad value (HTTP 400).
REFUSALS = (ValueError, TypeError, KeyError, OverflowError, IndexError)
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def _message(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc) or type(exc).__name__


class _Handler(BaseHTTPRequestHandler):
    server: ExploreServer
    protocol_version = "HTTP/1.1"

    # ------------------------------------------------------------------ plumbing
    def log_message(self, format, *args):  # noqa: A002 - http.server's signature
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload) -> None:
        body = json.dumps(payload, allow_nan=False, separators=(",", ":")).encode()
        self._send(status, body, "application/json")

    def _error(self, status: int, message: str, kind: str = "") -> None:
        self._json(status, {"error": message, "type": kind})

    def _host_ok(self) -> bool:
        """A loopback server answers only requests addressed to a loopback name (no DNS
        rebinding) and refuses POSTs from another origin (no cross-site requests)."""
        if not self.server.loopback:
            return True
        host = self.headers.get("Host")
        if host is not None:
            name = host.strip().lower()
            if (not name.startswith("[") and name.count(":") == 1) or "]:" in name:
                name = name.rsplit(":", 1)[0]  # drop the port
            if name not in _LOOPBACK:
                return False
        origin = self.headers.get("Origin")
        if self.command == "POST" and origin and origin != "null":
            o = urlsplit(origin).hostname or ""
            return o in _LOOPBACK or o == "::1"
        return True

    def _body(self):
        length = self.headers.get("Content-Length")
        try:
            n = int(length) if length is not None else 0
        except ValueError:
            raise ValueError(f"Content-Length {length!r} is not a number") from None
        if n < 0 or n > MAX_BODY:
            raise _BodyTooLargeError(f"request body of {n} bytes: at most {MAX_BODY} bytes")
        raw = self.rfile.read(n) if n else b""
        if not raw.strip():
            return {}
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"request body is not JSON: {exc}") from None
        except RecursionError:
            raise ValueError("request body is nested too deeply") from None

    def _dispatch(self, fn) -> None:
        if not self._host_ok():
            self._error(HTTPStatus.FORBIDDEN, "requests must address the server by 127.0.0.1")
            return
        try:
            payload = fn()
        except _BodyTooLargeError as exc:
            self.close_connection = True
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, str(exc), "ValueError")
            return
        except REFUSALS as exc:
            if self.command == "POST":
                self.close_connection = True  # the body may be unread: no keep-alive
            self._error(HTTPStatus.BAD_REQUEST, _message(exc), type(exc).__name__)
            return
        except RecursionError:
            self._error(HTTPStatus.BAD_REQUEST, "value nested too deeply", "ValueError")
            return
        except Exception as exc:  # a bug: answer it, keep serving
            traceback.print_exc(file=sys.stderr)
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"internal error: {exc!r}", "")
            return
        if isinstance(payload, tuple):
            self._send(HTTPStatus.OK, *payload)
        else:
            self._json(HTTPStatus.OK, payload)

    # ------------------------------------------------------------------ routes
    def do_GET(self):  # noqa: N802 - http.server's name
        path = urlsplit(self.path).path
        state = self.server.state
        routes = {
            "/api/state": state.state,
            "/api/batch": state.batch,
            "/api/export": state.export,
        }
        if path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        elif path in PAGE_FILES:
            name, ctype = PAGE_FILES[path]
            self._dispatch(lambda: (_page_file(name), ctype))
        elif path in routes:
            self._dispatch(routes[path])
        else:
            self._error(HTTPStatus.NOT_FOUND, f"no page {path!r}")

    do_HEAD = do_GET  # noqa: N815

    def do_POST(self):  # noqa: N802 - http.server's name
        path = urlsplit(self.path).path
        state = self.server.state
        routes = {"/api/generate": state.change, "/api/next": state.next_course}
        if path not in routes:
            self.close_connection = True
            self._error(HTTPStatus.NOT_FOUND, f"no endpoint POST {path!r}")
            return
        self._dispatch(lambda: routes[path](self._body()))


class _BodyTooLargeError(ValueError):
    pass


def _page_file(name: str) -> bytes:
    return resources.files(__package__).joinpath(name).read_bytes()


class ExploreServer(ThreadingHTTPServer):
    """A threading HTTP server bound to one :class:`ExploreState` (``.state``)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, state: ExploreState, verbose: bool = False):
        super().__init__(address, _Handler)
        self.state = state
        self.verbose = verbose
        self.loopback = address[0] in _LOOPBACK

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{port}/"


def make_server(
    state: ExploreState, host: str = "127.0.0.1", port: int = 0, verbose: bool = False
) -> ExploreServer:
    """An :class:`ExploreServer` for ``state`` bound to ``host:port`` (port 0: a free port;
    read it from ``server.url``). Start it with ``serve_forever()``, stop it with
    ``shutdown()`` from another thread, then ``server_close()``.

    Raises:
        TypeError: ``state`` is not an ExploreState, ``port`` not an int.
        ValueError: ``port`` outside 0..65535.
        OSError: the address cannot be bound (in use, unknown host).
    """
    if not isinstance(state, ExploreState):
        raise TypeError(f"state must be an ExploreState, got {type(state).__name__}")
    if isinstance(port, bool) or not isinstance(port, int):
        raise TypeError(f"port must be an int, got {type(port).__name__} {port!r}")
    if not 0 <= port <= 65535:
        raise ValueError(f"port = {port} is out of range: must be >= 0 and <= 65535 (0: free)")
    return ExploreServer((host, port), state, verbose=verbose)


#: Signals that stop :func:`serve` cleanly (exit status 0 from ``track-gen explore``).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _serve_blocking_stop_signals(server: ExploreServer) -> None:
    # the stop signals go to the waiting (main) thread, whose wait they interrupt at once: a
    # signal delivered to a serving thread would only be seen at the main thread's next poll
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    server.serve_forever(poll_interval=0.1)


def serve(server: ExploreServer, poll: float = 0.5) -> None:
    """Serve until Ctrl-C (SIGINT), SIGTERM or ``server.shutdown()``, then close the socket.

    The server runs in a worker thread (which blocks the stop signals, and so do the threads
    it starts for requests); the calling thread waits for it. Called from the main thread,
    ``serve`` installs its own SIGINT and SIGTERM handlers for the time it serves (the previous
    ones come back afterwards), so the server stops at once on either signal even when the
    process inherited SIGINT ignored (a command started in the background of a
    non-interactive shell does)."""
    worker = threading.Thread(
        target=_serve_blocking_stop_signals, args=(server,), name="track-gen-explore", daemon=True
    )
    previous = {}
    try:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                previous[sig] = signal.signal(sig, _raise_interrupt)
        worker.start()
        while worker.is_alive():
            worker.join(poll)
    except KeyboardInterrupt:
        if worker.is_alive():  # shutdown() waits for a serve_forever() that started
            server.shutdown()
            worker.join()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.server_close()
