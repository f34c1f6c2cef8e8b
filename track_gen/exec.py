"""Capture state helpers shared by generators (and, later, courses)."""

from __future__ import annotations

import warp as wp

from .errors import CaptureError

__all__ = ["check_mask", "is_capturing", "require_not_capturing"]


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


def check_mask(mask, num_envs: int, device, name: str = "mask", hint: str = "") -> None:
    """Raise unless ``mask`` is None or a contiguous ``[num_envs]`` int32 array on ``device``
    (TypeError for a non-array, ValueError otherwise); ``hint`` is appended to the message."""
    if mask is None:
        return
    dev = wp.get_device(device)
    tail = f"; {hint}" if hint else ""
    if not isinstance(mask, wp.array):
        raise TypeError(
            f"{name} must be a contiguous [{num_envs}] int32 wp.array on {dev} (or None for "
            f"every env), got {type(mask).__name__}{tail}"
        )
    if mask.dtype != wp.int32 or mask.ndim != 1 or mask.shape[0] != num_envs:
        raise ValueError(
            f"{name} must be a contiguous [{num_envs}] int32 array, got shape {mask.shape} "
            f"dtype {wp.types.type_repr(mask.dtype)}{tail}"
        )
    if mask.device != dev:
        raise ValueError(
            f"{name} is on {mask.device}, expected {dev}: pass an array on {dev}{tail}"
        )
    if not mask.is_contiguous:
        raise ValueError(
            f"{name} must be contiguous: pass a contiguous [{num_envs}] int32 array{tail}"
        )
