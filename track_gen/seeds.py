"""Per-env seeds, epochs and the (seed, epoch) hash.

A course is a pure function of the env's *effective seed* and the parameters:
``effective_seed(seed, 0) == seed`` and any other epoch gives a well-mixed 32-bit hash of
the pair. Each pipeline stage derives its own random stream from the effective seed and a
fixed per-stage salt (:func:`stage_seed`), so adding a stage never shifts another stage's
numbers, and the env index never enters.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np
import warp as wp

from .core.checks import (
    INT32_MAX,
    INT32_MIN,
    check_array,
    check_env_ids,
    check_int,
    check_seed_values,
    is_bool,
    is_int,
)
from .core.exec import require_not_capturing
from .core.tunable import Tunable

__all__ = ["NUM_ENVS", "PerEnvSeededRNG", "SeedState", "effective_seed", "stage_seed"]

wp.set_module_options({"enable_backward": False})

_M1 = 0x85EBCA6B
_M2 = 0xC2B2AE35
_GOLDEN = 0x9E3779B9
_EPOCH_OFFSET = 0x632BE5AB
_MASK = 0xFFFFFFFF

#: The batch size, declared once: generators (``config.num_envs``) and PerEnvSeededRNG use it.
NUM_ENVS = Tunable(
    "num_envs",
    1,
    lo=1,
    hi=2**24,
    unit="envs",
    doc="batch size E, fixed for the generator's life.",
    surfaces=("seeds.PerEnvSeededRNG",),
)


def _fmix32(h: int) -> int:
    h &= _MASK
    h ^= h >> 16
    h = (h * _M1) & _MASK
    h ^= h >> 13
    h = (h * _M2) & _MASK
    h ^= h >> 16
    return h


def _to_int32(u: int) -> int:
    u &= _MASK
    return u - (1 << 32) if u >= (1 << 31) else u


def effective_seed(seed: int, epoch: int) -> int:
    """The seed that rebuilds env course ``(seed, epoch)`` in a fresh generator at epoch 0.

    Args:
        seed: the env's int32 seed.
        epoch: the env's epoch (>= 0).

    Returns:
        ``seed`` when ``epoch == 0``, else a 32-bit hash of the pair, as a signed int32.
    """
    seed = check_int("seed", seed, INT32_MIN, INT32_MAX)
    epoch = check_int("epoch", epoch, 0, INT32_MAX)
    if epoch == 0:
        return _to_int32(seed)
    h = _fmix32((epoch & _MASK) * _GOLDEN + _EPOCH_OFFSET)
    return _to_int32(_fmix32((seed & _MASK) ^ h))


def stage_seed(eff_seed: int, salt: int) -> int:
    """Host mirror of the per-stage stream seed (used by tests and tools)."""
    return _to_int32(_fmix32((int(eff_seed) & _MASK) ^ _fmix32(salt & _MASK)))


_M1_U32 = wp.constant(wp.uint32(_M1))
_M2_U32 = wp.constant(wp.uint32(_M2))
_GOLDEN_U32 = wp.constant(wp.uint32(_GOLDEN))
_EPOCH_OFFSET_U32 = wp.constant(wp.uint32(_EPOCH_OFFSET))


@wp.func
def fmix32_wp(h: wp.uint32) -> wp.uint32:
    h = h ^ (h >> wp.uint32(16))
    h = h * _M1_U32
    h = h ^ (h >> wp.uint32(13))
    h = h * _M2_U32
    h = h ^ (h >> wp.uint32(16))
    return h


@wp.func
def effective_seed_wp(seed: wp.int32, epoch: wp.int32) -> wp.int32:
    """Device twin of :func:`effective_seed` (bit-identical)."""
    if epoch == 0:
        return seed
    h = fmix32_wp(wp.uint32(epoch) * _GOLDEN_U32 + _EPOCH_OFFSET_U32)
    return wp.int32(fmix32_wp(wp.uint32(seed) ^ h))


@wp.func
def stage_rng(eff_seed: wp.int32, salt: wp.uint32) -> wp.uint32:
    """A Warp RNG state for one stage's stream of one env."""
    return wp.rand_init(wp.int32(fmix32_wp(wp.uint32(eff_seed) ^ fmix32_wp(salt))))


@wp.kernel
def _effective_seeds_kernel(
    # inputs
    seeds: wp.array(dtype=wp.int32),
    epochs: wp.array(dtype=wp.int32),
    # outputs
    eff_seed_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    eff_seed_out[e] = effective_seed_wp(seeds[e], epochs[e])


def _int_seeds(name: str, s, idx: np.ndarray) -> np.ndarray:
    """Seeds ``s + e`` for the env indices ``idx``, refusing any that leaves int32."""
    s = int(s)
    hi = int(idx.max()) if idx.size else 0
    if s < INT32_MIN or s + hi > INT32_MAX:
        raise ValueError(
            f"{name} = {s} gives env seeds {s}..{s + hi}, outside the int32 range "
            f"[{INT32_MIN}, {INT32_MAX}]: pass an int in [{INT32_MIN}, {INT32_MAX - hi}]"
        )
    return (s + idx.astype(np.int64)).astype(np.int32)


def _seed_values(name: str, seeds, idx: np.ndarray) -> np.ndarray:
    """int32 seeds for the env indices ``idx``: an int ``s`` gives ``s + e``, else one int per
    env in ``idx`` (checked: integral, int32, the right count)."""
    if is_int(seeds):
        return _int_seeds(name, seeds, idx)
    if isinstance(seeds, (float, np.floating)) or is_bool(seeds) or seeds is None:
        raise TypeError(
            f"{name} must be an int or one int per env, got {type(seeds).__name__} {seeds!r}"
        )
    return check_seed_values(name, seeds, idx.shape[0])


class PerEnvSeededRNG:
    """Per-env integer seeds on a device.

    Args:
        seeds: an int ``s`` (env ``e`` gets ``s + e``; every seed must fit int32) or a
            contiguous ``[E]`` int32 ``wp.array`` on ``device``, used by pointer (never
            copied).
        num_envs: batch size E (the ``NUM_ENVS`` declaration's range).
        device: Warp device.

    Attributes:
        seeds_warp: ``wp.array`` int32 ``[E]``, the seeds generation reads (stable address).
    """

    def __init__(self, seeds: int | wp.array = 0, num_envs: int = 1, device: str | None = None):
        self.num_envs = NUM_ENVS.check(num_envs, "PerEnvSeededRNG num_envs")
        self.device = wp.get_device(device)
        if is_int(seeds):
            self._seeds = wp.array(
                _int_seeds("seeds", seeds, np.arange(self.num_envs)),
                dtype=wp.int32,
                device=self.device,
            )
        elif isinstance(seeds, wp.array):
            self._seeds = check_array("seeds", seeds, wp.int32, self.num_envs, self.device)
        else:
            raise TypeError(
                f"seeds must be an int or a [{self.num_envs}] int32 wp.array, got "
                f"{type(seeds).__name__} {seeds!r}"
            )

    @property
    def seeds_warp(self) -> wp.array:
        """int32 ``[E]`` seeds (stable address)."""
        return self._seeds

    def set_seeds_warp(
        self,
        seeds: int | Sequence[int] | np.ndarray | wp.array,
        ids: Sequence[int] | np.ndarray | wp.array | None = None,
    ) -> None:
        """Overwrite seeds in place, for every env (``ids=None``) or for ``ids``.

        Args:
            seeds: an int ``s`` (env ``e`` gets ``s + e``), or one int per selected env
                (``[E]`` when ``ids`` is None): a sequence, a NumPy int array or an int
                ``wp.array``. Floats, NaN and values outside int32 are refused, never coerced.
            ids: None, or unique env indices (ints in ``[0, E)``).

        Checked before anything is written; a host call (not inside a graph capture).
        """
        require_not_capturing(self.device, "PerEnvSeededRNG.set_seeds_warp()")
        E = self.num_envs
        idx = np.arange(E) if ids is None else check_env_ids("ids", ids, E)
        vals = _seed_values("seeds", seeds, idx)
        if ids is None:
            self._seeds.assign(vals)
        elif idx.size:
            host = self._seeds.numpy().copy()
            host[idx] = vals
            self._seeds.assign(host)


class SeedState:
    """The seeds and epochs a generator reads.

    One SeedState belongs to one generator: building a second generator on a SeedState a live
    generator uses is refused (the two would share and advance the same epochs). Share a
    :class:`PerEnvSeededRNG` or a seed array instead: each generator then keeps epochs of
    its own.

    Attributes:
        seeds: ``wp.array`` int32 ``[E]``: per-env seeds (owned, the rng's, or your array).
        epochs: ``wp.array`` int32 ``[E]``: per-env epochs, advanced by masked regeneration.
        rng: the :class:`PerEnvSeededRNG` the seeds came from, or None.
        owned: True when the generator owns ``seeds`` (built from an int).
    """

    def __init__(self, seeds, epochs: wp.array, rng: PerEnvSeededRNG | None, owned: bool):
        self.seeds = seeds
        self.epochs = epochs
        self.rng = rng
        self.owned = owned
        self._user = None

    @classmethod
    def check(cls, seeds, num_envs: int, device=None) -> None:
        """Every check :meth:`create` makes, without allocating anything (``device`` None:
        the device is not compared)."""
        device = None if device is None else wp.get_device(device)
        if isinstance(seeds, SeedState):
            if seeds.seeds.shape[0] != num_envs or (
                device is not None and seeds.seeds.device != device
            ):
                raise ValueError(
                    "seeds: the SeedState's batch size or device differs from the "
                    f"generator's ({num_envs} envs on {device})"
                )
            user = seeds._user() if seeds._user is not None else None
            if user is not None:
                raise ValueError(
                    f"seeds: this SeedState belongs to {user!r}; two generators on one "
                    "SeedState would advance the same epochs. Pass its seed array "
                    "(state.seeds) or its rng instead: each generator keeps its own epochs"
                )
            return
        if seeds is None:
            return
        if isinstance(seeds, PerEnvSeededRNG):
            if seeds.num_envs != num_envs or (device is not None and seeds.device != device):
                raise ValueError(
                    f"seeds: the PerEnvSeededRNG has {seeds.num_envs} envs on {seeds.device}, "
                    f"the generator {num_envs} envs on {device}; build the rng to match"
                )
            return
        if is_int(seeds):
            _int_seeds("seeds", seeds, np.arange(num_envs))
            return
        if isinstance(seeds, wp.array):
            check_array("seeds", seeds, wp.int32, num_envs, device or seeds.device)
            return
        raise TypeError(
            "seeds must be an int, a [E] int32 wp.array, a PerEnvSeededRNG or a SeedState, "
            f"got {type(seeds).__name__} {seeds!r}"
        )

    @classmethod
    def create(cls, seeds, num_envs: int, device) -> SeedState:
        """Build from what ``TrackGenerator(seeds=)`` takes: int, [E] int32 array, rng, state
        (checked by :meth:`check` first)."""
        device = wp.get_device(device)
        cls.check(seeds, num_envs, device)
        if isinstance(seeds, SeedState):
            return seeds
        epochs = wp.zeros(num_envs, dtype=wp.int32, device=device)
        if seeds is None:
            seeds = 0
        if isinstance(seeds, PerEnvSeededRNG):
            return cls(seeds.seeds_warp, epochs, seeds, owned=False)
        if is_int(seeds):
            arr = wp.array(
                _int_seeds("seeds", seeds, np.arange(num_envs)), dtype=wp.int32, device=device
            )
            return cls(arr, epochs, None, owned=True)
        return cls(seeds, epochs, None, owned=False)

    def claim(self, user) -> None:
        """Record the generator this state belongs to (see the class docs)."""
        self._user = weakref.ref(user)

    def reset_epoch(self) -> None:
        """Set every env's epoch to 0 (takes effect at the env's next regeneration)."""
        self.epochs.zero_()

    def check_set(self, seeds) -> np.ndarray:
        """Everything :meth:`set` checks, without writing; returns the int32 values."""
        if self.rng is None and not self.owned:
            raise RuntimeError(
                "the seeds are bound to your own array: the library never writes it; write "
                "new values into that array, then regenerate()"
            )
        return _seed_values("seeds", seeds, np.arange(self.seeds.shape[0]))

    def set(self, seeds) -> None:
        """Write new seeds for every env (an int ``s`` gives ``s + e``, or ``[E]`` ints).

        Seeds owned by the generator are written directly; seeds of a
        :class:`PerEnvSeededRNG` are written through it. Seeds bound to your own array are
        never written by the library: that raises RuntimeError. The same checks as at
        construction apply (integers in the int32 range; floats and NaN are refused).
        """
        vals = self.check_set(seeds)
        require_not_capturing(self.seeds.device, "SeedState.set()")
        self.seeds.assign(vals)

    def snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        """Host copies of the seeds and epochs (reads the device)."""
        return self.seeds.numpy().copy(), self.epochs.numpy().copy()

    def restore(self, saved: tuple[np.ndarray, np.ndarray]) -> None:
        """Write back a :meth:`snapshot`."""
        seeds, epochs = saved
        self.seeds.assign(seeds)
        self.epochs.assign(epochs)

    def effective_seeds(self) -> np.ndarray:
        """Host copy of every env's effective seed (reads the device: not for hot paths)."""
        out = wp.empty_like(self.seeds)
        wp.launch(
            _effective_seeds_kernel,
            self.seeds.shape[0],
            inputs=[self.seeds, self.epochs],
            outputs=[out],
            device=self.seeds.device,
        )
        return out.numpy()
