"""A smooth closed line through the gates of a gate course: :class:`CourseLineResult`,
:class:`CourseLineUtility` and the :class:`CenterlineFromGates` component.

A gate course has no centerline of its own. :class:`CourseLineUtility` samples one, shaped
like a :class:`~track_gen.Track`'s centerline arrays (``center``, ``tangent``, ``normal``,
``arclen``, ``length``, ``count``, ``valid``), so a localizer reads either.

The curve is the closed cubic Hermite spline through the gate centres: span ``g -> g+1``
(mod ``count``) runs from ``P0 = position[g]`` to ``P1 = position[g+1]`` with the
chord-scaled gate tangents ``m0 = T_g * d`` and ``m1 = T_{g+1} * d`` (``d = |P1 - P0|``,
``T`` the gate's unit ``tangent``)::

    c(u) = (2u^3 - 3u^2 + 1) P0 + (u^3 - 2u^2 + u) m0 + (-2u^3 + 3u^2) P1 + (u^3 - u^2) m1

sampled at ``u = k / K``, ``k = 0 .. K-1`` (``K = samples_per_gate``): bead ``g*K + k``. Bead
``g*K`` is gate ``g``'s centre exactly (the gate position itself is written there) and the
curve leaves it along the gate's tangent; the spline is C1 (one tangent per gate shared by
both spans).

Hairpins: the line passes every gate along the gate's tangent (so it crosses every gate
forward, through the centre of its opening). Where a gate's tangent points away from the next
gate (a hairpin: about 3% of spans of the default bezier gate courses), no curve leaving along
that tangent can reach the next gate without turning around, and the spline turns tightly
near the gate, in a small loop at the sharpest ones. The curvature there is high (a
curvature-limited speed profile slows down) but the line stays continuous and C1 in its
parameter; more ``samples_per_gate`` resolve the turn, they do not remove it.
"""

from ...core.deprecation import deprecated_names
from .component import CenterlineFromGates
from .fields import SAMPLES_PER_GATE, CourseLineSettings
from .kernels import VERTICAL_EPS
from .result import CourseLineResult
from .utility import CourseLineUtility

__all__ = [
    "CenterlineFromGates",
    "CourseLineResult",
    "CourseLineUtility",
    "CourseLineSettings",
    "SAMPLES_PER_GATE",
    "VERTICAL_EPS",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "CourseLine": "CourseLineResult",
    "CourseLineBuilder": "CourseLineUtility",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
