"""Look-ups on a row of cumulative arc lengths (``arclen[i]``: the arc before bead ``i``)."""

from __future__ import annotations

import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.func
def bead_at_arc(arclen: wp.array(dtype=wp.float32), base: int, n: int, s: float) -> int:
    """The last bead ``i`` in ``[0, n - 1]`` with ``arclen[base + i] <= s`` (bead 0 when
    none): a binary search of the non-decreasing row ``arclen[base .. base + n - 1]``."""
    lo = int(0)
    hi = n - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if arclen[base + mid] <= s:
            lo = mid
        else:
            hi = mid - 1
    return lo
