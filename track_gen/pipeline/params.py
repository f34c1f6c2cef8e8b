"""Dynamic per-env parameters on the device, and their per-env randomizers."""

from __future__ import annotations

import zlib
from collections.abc import Mapping

import numpy as np
import warp as wp

from ..seeds import stage_rng
from .stage import ParamSpec

__all__ = ["Params", "Randomizers"]

wp.set_module_options({"enable_backward": False})


@wp.kernel
def _draw_kernel(
    active: wp.array(dtype=wp.int32),
    eff_seed: wp.array(dtype=wp.int32),
    index: wp.array(dtype=wp.int32),
    salts: wp.array(dtype=wp.uint32),
    ranges: wp.array(dtype=wp.vec2f),
    num_draws: int,
    num_envs: int,
    block_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    for r in range(num_draws):
        st = stage_rng(eff_seed[e], salts[r])
        lo_hi = ranges[r]
        u = wp.randf(st)
        block_out[index[r] * num_envs + e] = lo_hi[0] + u * (lo_hi[1] - lo_hi[0])


def randomizer_salt(name: str) -> int:
    """The stream salt of a randomized field: a fixed hash of its name."""
    return zlib.crc32(("randomize:" + name).encode()) & 0xFFFFFFFF


class Params(Mapping):
    """``name -> [E] float32 device array`` for every dynamic stage field.

    All fields live in one device block allocated at construction; each name is a stable
    view of it. Reading gives that array (kernels read it at launch, so a recorded graph
    sees new values at its next replay). Writing fills it in place:

    * ``params["bezier.rad"] = 0.3`` writes every env (range-checked first);
    * ``params["bezier.rad"] = values`` with ``[E]`` values writes per env (host values are
      range-checked; a ``wp.array`` is copied as is).

    A randomized field (``with_randomize``) is redrawn for every env a regeneration rebuilds,
    so a write to it lasts until then.
    """

    def __init__(self, num_envs: int, device, declarations: list[tuple[str, ParamSpec, float]]):
        self._num_envs = num_envs
        self._device = device
        self._specs: dict[str, ParamSpec] = {}
        self._index: dict[str, int] = {}
        values = []
        for k, (name, spec, value) in enumerate(declarations):
            if name in self._specs:
                raise ValueError(f"dynamic parameter {name!r} is declared twice")
            spec.check(name, value)
            self._specs[name] = spec
            self._index[name] = k
            values.append(np.full(num_envs, float(value), np.float32))
        host = np.concatenate(values) if values else np.zeros(1, np.float32)
        self.block = wp.array(host, dtype=wp.float32, device=device)
        self._arrays = {
            name: self.block[k * num_envs : (k + 1) * num_envs] for name, k in self._index.items()
        }

    def spec(self, name: str) -> ParamSpec:
        """The :class:`ParamSpec` (range, meaning) of ``name``."""
        self._key(name)
        return self._specs[name]

    def index(self, name: str) -> int:
        self._key(name)
        return self._index[name]

    def _key(self, name: str) -> None:
        if name not in self._arrays:
            raise KeyError(f"no dynamic parameter {name!r}; parameters: {sorted(self._arrays)}")

    def check_value(self, name: str, value) -> None:
        """Raise like a write of ``value`` would, without writing."""
        self._key(name)
        self._specs[name].check(name, value)

    def __getitem__(self, name: str) -> wp.array:
        self._key(name)
        return self._arrays[name]

    def __setitem__(self, name: str, value) -> None:
        self._key(name)
        arr = self._arrays[name]
        spec = self._specs[name]
        if isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool):
            spec.check(name, value, write=True)
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
            spec.check(name, v, write=True)
        arr.assign(host.astype(np.float32))

    def __iter__(self):
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    def __repr__(self) -> str:
        return f"Params({sorted(self._arrays)})"


class Randomizers(Mapping):
    """``name -> (lo, hi)``: per-env draws of dynamic fields, keyed on (seed, epoch).

    Before the stages run, every env a regeneration rebuilds draws each randomized field
    uniformly in its live range ``[lo, hi)`` from a stream of its effective seed salted with
    the field name: the drawn values are part of what ``(seed, epoch)`` determines.
    ``gen.randomizers[name] = (lo, hi)`` changes a live range in place (checked against the
    field's range); the next regeneration draws from it.
    """

    def __init__(self, params: Params, ranges: dict[str, tuple[float, float]]):
        self._params = params
        self._names = list(ranges)
        device, E = params._device, params._num_envs
        for name, (lo, hi) in ranges.items():
            _check_range(params, name, lo, hi)
        n = max(len(self._names), 1)
        self.index = wp.array(
            [params.index(k) for k in self._names] or [0], dtype=wp.int32, device=device
        )
        self.salts = wp.array(
            [randomizer_salt(k) for k in self._names] or [0], dtype=wp.uint32, device=device
        )
        self.ranges = wp.array(
            np.array([ranges[k] for k in self._names] or [(0.0, 0.0)], np.float32).reshape(n, 2),
            dtype=wp.vec2f,
            device=device,
        )
        self._num_envs = E
        self._host = {k: (float(lo), float(hi)) for k, (lo, hi) in ranges.items()}

    def enqueue(self, active: wp.array, eff_seed: wp.array) -> None:
        """Draw every randomized field for the active envs (no-op without randomizers)."""
        if not self._names:
            return
        wp.launch(
            _draw_kernel,
            self._num_envs,
            inputs=[
                active,
                eff_seed,
                self.index,
                self.salts,
                self.ranges,
                len(self._names),
                self._num_envs,
            ],
            outputs=[self._params.block],
            device=self._params._device,
        )

    def __getitem__(self, name: str) -> tuple[float, float]:
        if name not in self._names:
            raise KeyError(f"{name!r} is not randomized; randomized fields: {self._names}")
        return self._host[name]

    def __setitem__(self, name: str, lo_hi) -> None:
        if name not in self._names:
            raise KeyError(
                f"{name!r} is not randomized (randomized fields: {self._names}); "
                "declare it with spec.with_randomize({name: (lo, hi)})"
            )
        lo, hi = _as_range(name, lo_hi)
        _check_range(self._params, name, lo, hi)
        self._host[name] = (lo, hi)
        self.ranges.assign(np.array([self._host[k] for k in self._names], np.float32))

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _as_range(name: str, lo_hi) -> tuple[float, float]:
    try:
        lo, hi = lo_hi
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise TypeError(
            f"randomizer {name!r}: expected a (lo, hi) pair of numbers, got {lo_hi!r}"
        ) from None
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        raise ValueError(f"randomizer {name!r} = ({lo}, {hi}): need finite lo <= hi")
    return lo, hi


def _check_range(params: Params, name: str, lo: float, hi: float) -> None:
    if name not in params:
        raise KeyError(
            f"with_randomize: no dynamic parameter {name!r}; parameters: {sorted(params)}"
        )
    lo, hi = _as_range(name, (lo, hi))
    params.check_value(name, lo)
    params.check_value(name, hi)
