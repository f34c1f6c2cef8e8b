"""The kernel layout choice: one thread per env or one per item (bead, cell, box part), the
``kernel_layout`` field that picks it, and its resolution for a device."""

from __future__ import annotations

import warp as wp

from .tunable import Tunable

__all__ = ["KERNEL_LAYOUT", "PER_ENV", "PER_ITEM", "resolve_kernel_layout"]

#: The two thread layouts a stage may implement (``kernel_layout`` resolves to one of them).
PER_ENV = "per_env"
PER_ITEM = "per_item"


def resolve_kernel_layout(value: str, device) -> str:
    """``"per_env"`` or ``"per_item"`` for a ``kernel_layout`` value on ``device``
    (``"auto"``: per_env on the CPU, per_item on CUDA)."""
    if value == "auto":
        return PER_ITEM if wp.get_device(device).is_cuda else PER_ENV
    if value not in (PER_ENV, PER_ITEM):
        raise ValueError(f"kernel_layout = {value!r} is not one of ('auto', 'per_env', 'per_item')")
    return value


KERNEL_LAYOUT = Tunable(
    "kernel_layout",
    "auto",
    choices=("auto", "per_env", "per_item"),
    doc="thread layout of the heavy track stages (resample, relax, inflate): per_env runs one "
    "thread per env (suits the single-threaded CPU backend), per_item one thread per bead with "
    "deterministic per-env reductions (fills a GPU); auto is per_env on the CPU and per_item "
    "on CUDA. Both layouts give bitwise-identical tracks.",
)
