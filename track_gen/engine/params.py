"""Dynamic per-env parameters on the device, their device-side range check, and their
per-env randomizers. Every range comes from the field's :class:`~track_gen.pipeline.Tunable`."""

from __future__ import annotations

import zlib
from collections.abc import Mapping

import numpy as np
import warp as wp

from ..core.budget import AllocationBudget
from ..core.checks import as_float, check_array, host_values, is_number
from ..core.exec import is_capturing
from ..core.tunable import Tunable
from ..results import FailBit
from ..seeds import stage_rng

__all__ = ["MAX_RANDOMIZED", "Params", "Randomizers", "as_range", "check_randomizer"]

wp.set_module_options({"enable_backward": False})

_PARAM_RANGE = wp.constant(int(FailBit.PARAM_RANGE))


@wp.kernel
def _draw_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    eff_seed: wp.array(dtype=wp.int32),
    index: wp.array(dtype=wp.int32),
    salts: wp.array(dtype=wp.uint32),
    ranges: wp.array(dtype=wp.vec2f),
    # static
    num_draws: int,
    num_envs: int,
    env_lo: int,
    # outputs
    block_out: wp.array(dtype=wp.float32),
):
    e = wp.tid() + env_lo
    if active[e] == 0:
        return
    for r in range(num_draws):
        st = stage_rng(eff_seed[e], salts[r])
        lo_hi = ranges[r]
        u = wp.randf(st)
        block_out[index[r] * num_envs + e] = lo_hi[0] + u * (lo_hi[1] - lo_hi[0])


@wp.kernel
def _check_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    block: wp.array(dtype=wp.float32),
    bounds: wp.array(dtype=wp.vec2f),
    open_flags: wp.array(dtype=wp.int32),
    # static
    num_fields: int,
    num_envs: int,
    env_lo: int,
    # outputs
    fail_inout: wp.array(dtype=wp.int32),
):
    e = wp.tid() + env_lo
    if active[e] == 0:
        return
    bad = int(0)
    for f in range(num_fields):
        v = block[f * num_envs + e]
        b = bounds[f]
        flags = open_flags[f]
        ok = wp.isfinite(v)
        if (flags & 1) != 0:
            ok = ok and v > b[0]
        else:
            ok = ok and v >= b[0]
        if (flags & 2) != 0:
            ok = ok and v < b[1]
        else:
            ok = ok and v <= b[1]
        if not ok:
            bad = 1
    if bad != 0:
        fail_inout[e] = fail_inout[e] | _PARAM_RANGE


def randomizer_salt(name: str) -> int:
    """The stream salt of a randomized field: a fixed hash of its name."""
    return zlib.crc32(("randomize:" + name).encode()) & 0xFFFFFFFF


class Params(Mapping):
    """``name -> [E] float32 device array`` for every dynamic stage field.

    All fields live in one device block allocated at construction; each name is a stable
    view of it. Reading gives that array (kernels read it at launch, so a recorded graph
    sees new values at its next replay). Writing fills it in place, checked on the host
    against the field's declared range first (nothing is written when a value is refused):

    * ``params["bezier.rad"] = 0.3`` writes every env;
    * ``params["bezier.rad"] = values`` with ``[E]`` host values (a list, a NumPy array)
      writes per env;
    * ``params["bezier.rad"] = arr`` with a ``[E]`` float32 ``wp.array`` copies it on the
      device; outside a capture its values are read back and checked first. Inside a capture
      the copy is recorded as is and the device check below covers it.

    Device check: every regeneration re-checks each rebuilt env's dynamic values (NaN, inf,
    outside the declared range), so a value written into ``params[name]`` directly (a kernel,
    ``wp.copy``, ``fill_``) can never yield a valid course: such an env is built, marked
    invalid with ``FailBit.PARAM_RANGE`` and every stage stays in bounds.

    A randomized field (``with_randomize``) is redrawn for every env a regeneration rebuilds,
    so a write to it lasts until then.
    """

    def __init__(self, num_envs: int, device, declarations, budget=None):
        self._num_envs = num_envs
        self._device = wp.get_device(device)
        self._specs: dict[str, Tunable] = {}
        self._index: dict[str, int] = {}
        self.guard = None
        values = []
        for k, (name, spec, value) in enumerate(declarations):
            if name in self._specs:
                raise ValueError(f"dynamic parameter {name!r} is declared twice")
            spec.check(value, f"params[{name!r}]")
            self._specs[name] = spec
            self._index[name] = k
            values.append(np.full(num_envs, float(value), np.float32))
        host = np.concatenate(values) if values else np.zeros(1, np.float32)
        if budget is None:
            budget = AllocationBudget(self._device, "declare fewer dynamic fields")
        self._budget = budget
        self.block = budget.array(host, wp.float32, "params")
        self._arrays = {
            name: self.block[k * num_envs : (k + 1) * num_envs] for name, k in self._index.items()
        }
        n = max(len(self._specs), 1)
        bounds = [self._specs[k].device_bounds() for k in self._index] or [(0.0, 0.0, 0)]
        self._bounds = budget.array(
            np.array([b[:2] for b in bounds], np.float32).reshape(n, 2), wp.vec2f, "param bounds"
        )
        self._open = budget.array(
            np.array([b[2] for b in bounds], np.int32), wp.int32, "param bound flags"
        )

    def spec(self, name: str) -> Tunable:
        """The :class:`~track_gen.pipeline.Tunable` (range, meaning) of ``name``."""
        self._key(name)
        return self._specs[name]

    def index(self, name: str) -> int:
        self._key(name)
        return self._index[name]

    def _key(self, name) -> None:
        if not isinstance(name, str):
            raise TypeError(f"params keys are str names such as 'bezier.rad', got {name!r}")
        if name not in self._arrays:
            raise KeyError(f"no dynamic parameter {name!r}; parameters: {sorted(self._arrays)}")

    def enqueue_check(
        self, active: wp.array, fail: wp.array, envs: tuple[int, int] | None = None
    ) -> None:
        """Launch the device check: ``FailBit.PARAM_RANGE`` for every active env with a
        dynamic value outside its declared range (no-op without dynamic fields); ``envs``:
        the ``(lo, hi)`` env range to check (default: the whole batch; ``active`` and
        ``fail`` are the batch's ``[E]`` arrays either way)."""
        if not self._specs:
            return
        lo, hi = envs if envs is not None else (0, self._num_envs)
        wp.launch(
            _check_kernel,
            hi - lo,
            inputs=[
                active,
                self.block,
                self._bounds,
                self._open,
                len(self._specs),
                self._num_envs,
                lo,
            ],
            outputs=[fail],
            device=self._device,
        )

    def env_range(self, lo: int, hi: int) -> dict[str, wp.array]:
        """``name -> [hi - lo]`` view of every field for envs ``[lo, hi)`` (same memory)."""
        return {name: arr[lo:hi] for name, arr in self._arrays.items()}

    def __getitem__(self, name: str) -> wp.array:
        self._key(name)
        return self._arrays[name]

    def __setitem__(self, name: str, value) -> None:
        self._key(name)
        if self.guard is not None:
            with self.guard("params write"):
                self._write(name, value)
        else:
            self._write(name, value)

    def _write(self, name: str, value) -> None:
        arr = self._arrays[name]
        spec = self._specs[name]
        owner = f"params[{name!r}]"
        if is_number(value):
            arr.fill_(spec.check(value, owner, write=True))
            return
        if isinstance(value, wp.array):
            check_array(owner, value, wp.float32, self._num_envs, self._device)
            if not is_capturing(self._device):
                spec.check_host_array(value.numpy(), owner)
            wp.copy(arr, value)
            return
        if isinstance(value, (str, bytes)) or value is None or isinstance(value, (bool, np.bool_)):
            raise TypeError(
                f"{owner} takes a number, [{self._num_envs}] host values or a [{self._num_envs}] "
                f"float32 wp.array, got {type(value).__name__} {value!r}"
            )
        host = host_values(owner, value, "float")
        if host.shape[0] != self._num_envs:
            raise ValueError(f"{owner}: expected {self._num_envs} values, got {host.shape[0]}")
        spec.check_host_array(host, owner)
        arr.assign(host.astype(np.float32))

    def __iter__(self):
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and name in self._arrays

    def __repr__(self) -> str:
        return f"Params({sorted(self._arrays)})"


#: Most fields one generator may randomize.
MAX_RANDOMIZED = 256


class Randomizers(Mapping):
    """``name -> (lo, hi)``: per-env draws of dynamic fields, keyed on (seed, epoch).

    Before the stages run, every env a regeneration rebuilds draws each randomized field
    uniformly in its live range ``[lo, hi)`` from a stream of its effective seed salted with
    the field name: the drawn values are part of what ``(seed, epoch)`` determines.
    ``gen.randomizers[name] = (lo, hi)`` changes a live range in place (both ends checked
    against the field's declared range); the next regeneration draws from it.
    """

    def __init__(self, params: Params, ranges: dict[str, tuple[float, float]]):
        self._params = params
        self._names = list(ranges)
        if len(self._names) > MAX_RANDOMIZED:
            raise ValueError(f"with_randomize: {len(self._names)} fields, at most {MAX_RANDOMIZED}")
        E = params._num_envs
        host = {}
        for name, lo_hi in ranges.items():
            host[name] = check_randomizer(params._specs, name, lo_hi)
        n = max(len(self._names), 1)
        budget = params._budget
        self.index = budget.array(
            np.array([params.index(k) for k in self._names] or [0], np.int32),
            wp.int32,
            "randomized field indices",
        )
        self.salts = budget.array(
            np.array([randomizer_salt(k) for k in self._names] or [0], np.uint32),
            wp.uint32,
            "randomizer salts",
        )
        self.ranges = budget.array(
            np.array([host[k] for k in self._names] or [(0.0, 0.0)], np.float32).reshape(n, 2),
            wp.vec2f,
            "randomizer ranges",
        )
        self._num_envs = E
        self._host = host

    def enqueue(
        self, active: wp.array, eff_seed: wp.array, envs: tuple[int, int] | None = None
    ) -> None:
        """Draw every randomized field for the active envs (no-op without randomizers);
        ``envs``: the ``(lo, hi)`` env range to draw (default: the whole batch; ``active``
        and ``eff_seed`` are the batch's ``[E]`` arrays either way)."""
        if not self._names:
            return
        lo, hi = envs if envs is not None else (0, self._num_envs)
        wp.launch(
            _draw_kernel,
            hi - lo,
            inputs=[
                active,
                eff_seed,
                self.index,
                self.salts,
                self.ranges,
                len(self._names),
                self._num_envs,
                lo,
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
        lo, hi = check_randomizer(self._params._specs, name, lo_hi)
        self._host[name] = (lo, hi)
        self.ranges.assign(np.array([self._host[k] for k in self._names], np.float32))

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def as_range(name: str, lo_hi) -> tuple[float, float]:
    """``(lo, hi)`` as two finite floats with ``lo <= hi`` (TypeError / ValueError)."""
    if isinstance(lo_hi, (str, bytes)) or not hasattr(lo_hi, "__len__") or len(lo_hi) != 2:
        raise TypeError(f"randomizer {name!r}: expected a (lo, hi) pair of numbers, got {lo_hi!r}")
    lo, hi = lo_hi
    if not (is_number(lo) and is_number(hi)):
        raise TypeError(f"randomizer {name!r}: expected a (lo, hi) pair of numbers, got {lo_hi!r}")
    lo, hi = as_float(f"randomizer {name!r} lo", lo), as_float(f"randomizer {name!r} hi", hi)
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        raise ValueError(f"randomizer {name!r} = ({lo}, {hi}): need finite lo <= hi")
    return lo, hi


def check_randomizer(declarations: Mapping[str, Tunable], name, lo_hi) -> tuple[float, float]:
    """``(lo, hi)`` of the randomized field ``name``, both ends checked against its
    declaration (``declarations``: public name -> Tunable of every dynamic field); KeyError
    listing the fields when ``name`` is none of them."""
    if not isinstance(name, str) or name not in declarations:
        raise KeyError(
            f"with_randomize: no dynamic parameter {name!r}; parameters: {sorted(declarations)}"
        )
    lo, hi = as_range(name, lo_hi)
    spec = declarations[name]
    spec.check(lo, f"randomizer {name!r} lo")
    spec.check(hi, f"randomizer {name!r} hi")
    return lo, hi
