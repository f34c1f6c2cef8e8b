"""``track-gen explore``: a local web page to tune generators live (optional extra
``track_gen[explore]``, standard library only).

:class:`ExploreState` holds one generator and applies change requests to it (rebuilding only
when a static field changes); :func:`make_server` serves it and the page over HTTP on
127.0.0.1; :class:`Settings` is what the page exports as JSON and :func:`read_settings`
reads back. See ``docs/explore.md``.
"""

from .server import make_server, serve
from .settings import FORMAT, Settings, read_settings
from .state import ExploreError, ExploreState

__all__ = [
    "FORMAT",
    "ExploreError",
    "ExploreState",
    "Settings",
    "make_server",
    "read_settings",
    "serve",
]
