"""Capture state helpers shared by generators (and, later, courses)."""

from __future__ import annotations

import warp as wp

from .errors import CaptureError

__all__ = ["is_capturing", "require_not_capturing"]


def is_capturing(device) -> bool:
    """True while a graph capture records on ``device`` (CPU captures included)."""
    return bool(wp.get_device(device).is_capturing)


def require_not_capturing(device, what: str) -> None:
    """Raise :class:`CaptureError` when a capture records on ``device``."""
    if is_capturing(device):
        raise CaptureError(
            f"{what} cannot run inside a graph capture on {wp.get_device(device)}: it "
            "allocates buffers. Build it before wp.ScopedCapture / torch.cuda.graph."
        )
