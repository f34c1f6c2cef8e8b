"""The poses of the next gates relative to the agent: :class:`NextGates` (the course
component ``"next_gates"``), :class:`NextGatesUtility` (its utility) and
:class:`NextGatesResult` (its result). See ``docs/sensors/next-gates.md``.

Per env and step, slot ``k`` (``k < num_gates``) answers gate ``(next + k) % count``, where
``next`` is the progress target (``ProgressEvents.next_index``: the gate to pass next), in the
agent's body frame: ``position = rotate(conj(q), gate - agent)`` and ``orientation =
conj(q) * gate_orientation``, ``q`` the agent's orientation normalized (world-from-body).

Reveal. With ``reveal_range = r`` each gate has a nominal pose, drawn per env and gate at
every regeneration from a stream that is a pure function of the env's effective seed
(``nominal_noise`` sizes the error), and a revealed flag. At each step, before answering,
every gate whose true centre lies within ``r`` (3D) of the agent is revealed; a revealed
gate answers its true pose, any other its nominal one (``revealed`` says which). The flags
are runtime state: ``reset(mask)`` and every regeneration clear them.
"""

from ...core.deprecation import deprecated_names
from .component import NextGates
from .fields import NOMINAL_NOISE, NUM_GATES, REVEAL_RANGE, NextGatesSettings
from .kernels import SALT_NOMINAL
from .result import NextGatesResult
from .utility import NextGatesUtility

__all__ = [
    "NextGatesSettings",
    "NOMINAL_NOISE",
    "NUM_GATES",
    "NextGatesResult",
    "NextGatesUtility",
    "NextGates",
    "REVEAL_RANGE",
    "SALT_NOMINAL",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "NextGatePoses": "NextGatesResult",
    "NextGateSensor": "NextGatesUtility",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
