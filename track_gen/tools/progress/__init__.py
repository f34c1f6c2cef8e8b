"""Checkpoint progress of one agent per env: :class:`ProgressUtility` and
:class:`ProgressEvents`.

Each :meth:`ProgressUtility.update` sweeps the agent's motion since the previous update
(a segment) through the plane of its next target checkpoint: landing on or past the plane
from its negative side, inside the opening, passes the checkpoint; going back through it,
inside the opening, is a wrong-way event. Checkpoint 0 is the start line, so spawn agents just
behind it; a lap is counted when the last checkpoint is passed.
"""

from ...core.deprecation import deprecated_names
from .component import Progress
from .result import ProgressEvents
from .utility import ProgressUtility

__all__ = [
    "Progress",
    "ProgressEvents",
    "ProgressUtility",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "ProgressTracker": "ProgressUtility",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
