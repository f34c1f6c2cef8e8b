"""Checkpoint progress of one agent per env: :class:`ProgressTracker` and
:class:`ProgressEvents`.

Each :meth:`ProgressTracker.update` sweeps the agent's motion since the previous update
(a segment) through the plane of its next target checkpoint: landing on or past the plane
from its negative side, inside the opening, passes the checkpoint; going back through it,
inside the opening, is a wrong-way event. Checkpoint 0 is the start line, so spawn agents just
behind it; a lap is counted when the last checkpoint is passed.
"""

from .component import Progress
from .result import ProgressEvents
from .utility import ProgressTracker

__all__ = [
    "Progress",
    "ProgressEvents",
    "ProgressTracker",
]
