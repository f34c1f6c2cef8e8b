"""``python -m track_gen`` runs the ``track-gen`` command."""

from .cli import main

raise SystemExit(main())
