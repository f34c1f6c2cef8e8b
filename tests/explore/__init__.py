"""Tests of ``track-gen explore`` (``track_gen.explore``) and their shared helpers."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

from track_gen.explore import ExploreState, Settings, make_server

#: Seconds any wait of these tests may take: a generous bound for a loaded CI machine (a wait
#: ends as soon as its event happens; only a hang reaches it).
WAIT = 300.0


def request(url: str, body=None, raw: bytes | None = None, headers=None):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=WAIT) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


class Served:
    """An ExploreState served on a free port in a thread."""

    def __init__(self, settings: Settings, device: str = "cpu"):
        self.state = ExploreState(settings, device=device)
        self.server = make_server(self.state, port=0)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = self.server.url

    def get(self, path):
        return request(self.url + path.lstrip("/"))

    def post(self, path, body=None, **kw):
        return request(self.url + path.lstrip("/"), {} if body is None else body, **kw)

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(WAIT)
