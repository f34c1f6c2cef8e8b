"""Where an agent is along a closed line: :class:`LocalizerUtility` and :class:`TrackFrame`.

The line is a polyline of beads per env: a :class:`~track_gen.results.Track`'s centerline or a
gate course's :class:`~track_gen.tools.course_line.CourseLineResult` (anything with the arrays
``center``, ``arclen``, ``length``, ``count``, ``valid``). Segment ``i`` runs from bead ``i``
to bead ``(i + 1) % count`` (the closing segment included). :meth:`LocalizerUtility.locate`
projects each env's position onto the closest segment in 3D and answers the arc length ``s``
of that point, the signed offsets ``n`` (left, horizontal) and ``n_up`` and the distance.

Full search and warm window
    A full search visits every segment (ties: the lowest index; zero-length segments are
    skipped, their one point belongs to their neighbours too). With ``warm_window = W`` a
    locate first visits only the ``2W + 1`` segments ``last - W .. last + W`` (mod ``count``)
    around the env's previous answer ``last`` (its *memory*), so a step costs O(W) instead of
    O(count). The warm answer is kept only when

    * the env has a memory (none after construction, :meth:`~LocalizerUtility.reset`,
      :meth:`~LocalizerUtility.refresh`, an invalid env or a non-finite position), and
      ``2W + 1 < count``;
    * its best segment is not one of the two window-end segments (there the distance may
      still decrease beyond the window: the agent moved farther than the window reaches); and
    * its distance is at most the *bound* ``W * length / count`` (W mean segment lengths,
      about the arc the window reaches on either side): farther from the line than that,
      parts of the loop outside the window may be as close, so the answer is not trusted.

    Otherwise the locate does a full search, in the same launch. The warm answer equals the
    full one whenever the closest segment lies inside the window; it can differ only where
    another part of the line comes within the bound of the agent (a hairpin or a pinch), and
    then the warm answer stays on the branch the agent travels (the continuous choice). After
    a teleport, :meth:`~LocalizerUtility.reset` the env to force a full search.

Frame axes (per segment, from its unit chord ``t``)
    ``left = normalize(cross(z, t)) = normalize(-t.y, t.x, 0)`` (the horizontal left normal;
    +y when the chord is vertical: plan-view length below 1e-6) and
    ``up = normalize(cross(t, left))`` (+z for a level chord). ``n = dot(p - closest, left)``,
    ``n_up = dot(p - closest, up)``; past a segment's end (the outside of a corner)
    ``distance`` exceeds ``hypot(n, n_up)``.

Curvature
    :meth:`~LocalizerUtility.refresh` derives a signed curvature per bead: the 3D turning angle
    between the chords into and out of the bead divided by the mean of their lengths, signed
    by the plan-view turn (left / counter-clockwise positive; positive when the plan-view turn
    is zero). A counter-clockwise circle of radius R reads about ``+1/R``.

Input range
    :meth:`~LocalizerUtility.locate` clamps a finite position to ``COORD_LIMIT`` (1e18 track
    units, :mod:`~track_gen.core.extents`; a position within it is used bit for bit), skips
    non-finite and zero-length segments and answers "no answer" rather than a non-finite
    value (:class:`TrackFrame`): every answer is finite. The curvature of a bead whose
    neighbourhood holds a non-finite coordinate is NaN (and so are ``curvature_at`` and
    ``speed_profile`` there).

Every per-step call is one launch, allocation-free and free of host synchronization (safe to
record into a graph); construction allocates every buffer once.
"""

from ...core.deprecation import deprecated_names
from .component import Localizer
from .fields import WARM_WINDOW, LocalizerSettings
from .result import TrackFrame
from .utility import LocalizerUtility

__all__ = [
    "Localizer",
    "LocalizerSettings",
    "TrackFrame",
    "LocalizerUtility",
    "WARM_WINDOW",
]

#: Names before the naming convention (one suffix per role, CONTRIBUTING.md), kept
#: for one release: each one warns and gives the class it was renamed to.
RENAMED = {
    "TrackLocalizer": "LocalizerUtility",
}
__getattr__ = deprecated_names(__name__, RENAMED, globals())
