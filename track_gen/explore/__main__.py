"""``python -m track_gen.explore``: ``track-gen explore`` alone."""

import sys

from .cli import main

sys.exit(main())
