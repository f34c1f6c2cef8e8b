"""One body's pose per env, gathered from a Newton state: :class:`BodyPoses`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_array, host_values
from ...core.exec import require_not_capturing
from .kernels import _poses_kernel


class BodyPoses:
    """Stable ``position`` and ``orientation`` arrays of one body per env (a car's chassis),
    refreshed from a Newton state's ``body_q`` by one launch: bind them to a course once.

    Args:
        bodies: the body index of each env, ``E`` ints (``[E]``), each a body of the model
            whose ``body_q`` :meth:`update` reads.
        device: the course's device.

    Attributes: ``position`` (vec3f ``[E]``, track units: the body origin),
    ``orientation`` (quatf ``[E]``, (x, y, z, w), body to world), ``bodies`` (int32
    ``[E]``), ``num_envs``, ``device``.
    """

    def __init__(
        self, bodies: Sequence[int] | np.ndarray | wp.array, device: str | wp.Device | None = None
    ):
        ids = host_values("bodies", bodies, "int")
        if ids.ndim != 1 or ids.size < 1 or (ids < 0).any() or (ids > 2**31 - 1).any():
            raise ValueError(
                f"BodyPoses(bodies): expected one body index >= 0 per env (a 1-D sequence), "
                f"got shape {ids.shape} with values {ids.reshape(-1)[:4].tolist()}..."
            )
        self.device = wp.get_device(device)
        require_not_capturing(self.device, "BodyPoses construction")
        self.num_envs = E = int(ids.size)
        budget = AllocationBudget(self.device, "lower num_envs", owner="these BodyPoses'")
        self.bodies = budget.array(ids.astype(np.int32), wp.int32, "body ids")
        self.position = budget.zeros(E, wp.vec3f, "positions")
        self.orientation = budget.full(E, wp.quatf(0.0, 0.0, 0.0, 1.0), wp.quatf, "orientations")
        self._max_body = int(ids.max())

    def update(self, body_q: wp.array, *, stream=None) -> None:
        """Copy each env's body pose from ``body_q`` (``wp.transform`` ``[body_count]``, a
        Newton ``State.body_q`` on this device): one launch, no allocation, no host
        synchronization (recordable)."""
        if not isinstance(body_q, wp.array) or body_q.ndim != 1:
            raise TypeError(
                f"BodyPoses.update(body_q): body_q must be a 1-D wp.array of wp.transform (a "
                f"newton State's body_q), got {type(body_q).__name__}"
            )
        if body_q.shape[0] <= self._max_body:
            raise ValueError(
                f"BodyPoses.update(body_q): body_q has {body_q.shape[0]} bodies, body "
                f"{self._max_body} is asked for: pass the state of the model the bodies belong to"
            )
        check_array("body_q", body_q, wp.transformf, body_q.shape[0], self.device)
        wp.launch(
            _poses_kernel,
            self.num_envs,
            inputs=[self.bodies, body_q],
            outputs=[self.position, self.orientation],
            device=self.device,
            stream=stream,
        )
