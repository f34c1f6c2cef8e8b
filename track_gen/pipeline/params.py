"""Dynamic per-env parameters stored on the device."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import warp as wp

from .stage import ParamSpec

__all__ = ["Params"]


class Params(Mapping):
    """``name -> [E] float32 device array`` for every dynamic stage field.

    Reading gives the stable device array (kernels read it at launch, so a recorded graph
    sees new values at its next replay). Writing fills it in place:

    * ``params["bezier.rad"] = 0.3`` writes every env (range-checked first);
    * ``params["bezier.rad"] = values`` with an ``[E]`` array-like writes per env
      (range-checked when it is host data).
    """

    def __init__(self, num_envs: int, device):
        self._num_envs = num_envs
        self._device = device
        self._arrays: dict[str, wp.array] = {}
        self._specs: dict[str, ParamSpec] = {}

    def _declare(self, qualified: str, spec: ParamSpec, value: float) -> wp.array:
        spec.check(qualified, value)
        arr = wp.full(self._num_envs, float(value), dtype=wp.float32, device=self._device)
        self._arrays[qualified] = arr
        self._specs[qualified] = spec
        return arr

    def spec(self, name: str) -> ParamSpec:
        """The :class:`ParamSpec` (range, meaning) of ``name``."""
        self._key(name)
        return self._specs[name]

    def _key(self, name: str) -> None:
        if name not in self._arrays:
            raise KeyError(f"no dynamic parameter {name!r}; parameters: {sorted(self._arrays)}")

    def __getitem__(self, name: str) -> wp.array:
        self._key(name)
        return self._arrays[name]

    def __setitem__(self, name: str, value) -> None:
        self._key(name)
        arr = self._arrays[name]
        spec = self._specs[name]
        if isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool):
            spec.check(name, value)
            arr.fill_(float(value))
            return
        if isinstance(value, wp.array):
            if value.shape != arr.shape or value.dtype != wp.float32:
                raise ValueError(
                    f"params[{name!r}]: expected a [{self._num_envs}] float32 array, "
                    f"got shape {value.shape}"
                )
            wp.copy(arr, value)
            return
        host = np.asarray(value, dtype=np.float64).reshape(-1)
        if host.shape[0] != self._num_envs:
            raise ValueError(
                f"params[{name!r}]: expected {self._num_envs} values, got {host.shape[0]}"
            )
        for v in np.unique(host):
            spec.check(name, v)
        arr.assign(host.astype(np.float32))

    def __iter__(self):
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    def __repr__(self) -> str:
        return f"Params({sorted(self._arrays)})"
