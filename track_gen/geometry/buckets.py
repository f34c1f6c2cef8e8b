"""A uniform bucket grid per env, packed as compressed rows (CSR): the candidate lists the
lidar and the ego raster build over each env's border segments (and props).

Each env owns ``g * g + 1`` offsets from ``base`` and a row of entries. Building one takes
three passes over the env's items, each item covering a rectangle of buckets
``[ix0, ix1] x [iy0, iy1]`` (the tool decides its own bucket index rule):

1. :func:`bucket_clear`, then :func:`bucket_count` per item: ``offsets[b]`` counts the items
   of bucket ``b``;
2. :func:`bucket_scan`: ``offsets[b]`` becomes the end of bucket ``b``'s list and
   ``offsets[g * g]`` the total (check it against the entries' capacity before filling);
3. :func:`bucket_fill` per item, the items in descending order: ``offsets[b]`` becomes the
   start of bucket ``b``'s list and every list holds its items in ascending order.

Bucket ``b`` (row-major, ``b = iy * g + ix``) then lists ``entries[offsets[b] ..
offsets[b + 1] - 1]``. Everything is integer arithmetic: the same bytes on every device.
"""

from __future__ import annotations

import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.func
def bucket_clear(offsets: wp.array(dtype=wp.int32), base: int, cells: int):
    """Zero the ``cells + 1`` offsets of a grid of ``cells`` buckets from ``base``."""
    for b in range(cells + 1):
        offsets[base + b] = 0


@wp.func
def bucket_count(offsets: wp.array(dtype=wp.int32), base: int, g: int, ix: wp.vec2i, iy: wp.vec2i):
    """Count one item in every bucket of ``[ix[0], ix[1]] x [iy[0], iy[1]]`` of a ``g x g``
    grid."""
    for by in range(iy[0], iy[1] + 1):
        for bx in range(ix[0], ix[1] + 1):
            offsets[base + by * g + bx] += 1


@wp.func
def bucket_scan(offsets: wp.array(dtype=wp.int32), base: int, cells: int) -> int:
    """Turn the counts of ``cells`` buckets into the ends of their lists (inclusive prefix
    sums), set ``offsets[base + cells]`` to the total and return it."""
    total = int(0)
    for b in range(cells):
        total += offsets[base + b]
        offsets[base + b] = total
    offsets[base + cells] = total
    return total


@wp.func
def bucket_fill(
    offsets: wp.array(dtype=wp.int32),
    base: int,
    g: int,
    ix: wp.vec2i,
    iy: wp.vec2i,
    entries: wp.array(dtype=wp.int32),
    entry_base: int,
    item: int,
):
    """Put ``item`` in every bucket of ``[ix[0], ix[1]] x [iy[0], iy[1]]``, each bucket's
    offset moving back one entry (call it for the items in descending order, after
    :func:`bucket_scan`)."""
    for by in range(iy[0], iy[1] + 1):
        for bx in range(ix[0], ix[1] + 1):
            slot = offsets[base + by * g + bx] - 1
            offsets[base + by * g + bx] = slot
            entries[entry_base + slot] = item
