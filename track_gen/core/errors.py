"""Exceptions and warnings raised by track_gen."""

from __future__ import annotations

__all__ = ["CaptureError", "NotCapturableError", "RebindAfterCaptureWarning"]


class CaptureError(RuntimeError):
    """A call is not allowed while a graph capture is recording on its device.

    Raised, for example, when a generator is constructed inside ``wp.ScopedCapture``:
    construction allocates buffers, which a capture cannot hold.
    """


class NotCapturableError(CaptureError):
    """A stage whose registration declared ``capturable=False`` was recorded into a capture."""


class RebindAfterCaptureWarning(UserWarning):
    """Inputs were rebound after a graph that reads the old inputs was recorded."""
