"""Per-env seeds, epochs and the (seed, epoch) hash.

A course is a pure function of the env's *effective seed* and the parameters:
``effective_seed(seed, 0) == seed`` and any other epoch gives a well-mixed 32-bit hash of
the pair. Each pipeline stage derives its own random stream from the effective seed and a
fixed per-stage salt (:func:`stage_seed`), so adding a stage never shifts another stage's
numbers, and the env index never enters.
"""

from __future__ import annotations

import numpy as np
import warp as wp

__all__ = ["PerEnvSeededRNG", "SeedState", "effective_seed", "stage_seed"]

wp.set_module_options({"enable_backward": False})

_M1 = 0x85EBCA6B
_M2 = 0xC2B2AE35
_GOLDEN = 0x9E3779B9
_EPOCH_OFFSET = 0x632BE5AB
_MASK = 0xFFFFFFFF


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
    seed, epoch = int(seed), int(epoch)
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
    seeds: wp.array(dtype=wp.int32),
    epochs: wp.array(dtype=wp.int32),
    out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    out[e] = effective_seed_wp(seeds[e], epochs[e])


def _as_seed_array(seeds, num_envs: int, device, what: str) -> wp.array:
    """Validate a user seed array: contiguous [E] int32 on ``device``."""
    if not isinstance(seeds, wp.array):
        raise TypeError(f"{what} must be an int or a wp.array, got {type(seeds).__name__}")
    dev = wp.get_device(device)
    if seeds.dtype != wp.int32 or seeds.ndim != 1 or seeds.shape[0] != num_envs:
        raise ValueError(
            f"{what} must be a [{num_envs}] int32 array, got shape {seeds.shape} dtype "
            f"{wp.types.type_repr(seeds.dtype)}; build it with wp.array(..., dtype=wp.int32)"
        )
    if seeds.device != dev:
        raise ValueError(f"{what} is on {seeds.device}, the generator is on {dev}; copy it there")
    if not seeds.is_contiguous:
        raise ValueError(f"{what} must be contiguous; pass a contiguous copy")
    return seeds


class PerEnvSeededRNG:
    """Per-env integer seeds on a device.

    Args:
        seeds: an int ``s`` (env ``e`` gets ``s + e``) or a contiguous ``[E]`` int32
            ``wp.array`` on ``device``, used by pointer (never copied).
        num_envs: batch size E.
        device: Warp device.

    Attributes:
        seeds_warp: ``wp.array`` int32 ``[E]``, the seeds generation reads (stable address).
    """

    def __init__(self, seeds=0, num_envs: int = 1, device=None):
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1
        ):
            raise ValueError(f"num_envs = {num_envs!r} must be an int >= 1")
        self.num_envs = int(num_envs)
        self.device = wp.get_device(device)
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
            self._seeds = wp.array(
                _int_seeds(int(seeds), np.arange(self.num_envs)), dtype=wp.int32, device=self.device
            )
        else:
            self._seeds = _as_seed_array(seeds, self.num_envs, self.device, "seeds")

    @property
    def seeds_warp(self) -> wp.array:
        """int32 ``[E]`` seeds (stable address)."""
        return self._seeds

    def set_seeds_warp(self, seeds, ids=None) -> None:
        """Overwrite seeds in place, for every env (``ids=None``) or for ``ids``.

        Args:
            seeds: an int ``s`` (env ``e`` gets ``s + e``), or an array-like of int32 with
                one entry per selected env (``[E]`` when ``ids`` is None).
            ids: None, or a sequence / array of env indices.
        """
        E = self.num_envs
        idx = (
            np.arange(E)
            if ids is None
            else np.asarray(
                ids.numpy() if isinstance(ids, wp.array) else ids, dtype=np.int64
            ).reshape(-1)
        )
        if idx.size and (idx.min() < 0 or idx.max() >= E):
            raise IndexError(f"ids must be env indices in [0, {E}), got {idx.min()}..{idx.max()}")
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
            vals = _int_seeds(int(seeds), idx)
        else:
            vals = np.asarray(seeds.numpy() if isinstance(seeds, wp.array) else seeds)
            vals = vals.reshape(-1)
            if vals.shape[0] != idx.shape[0]:
                raise ValueError(f"seeds has {vals.shape[0]} entries for {idx.shape[0]} envs")
            vals = vals.astype(np.int64).astype(np.int32)
        if ids is None:
            self._seeds.assign(vals)
        else:
            host = self._seeds.numpy().copy()
            host[idx] = vals
            self._seeds.assign(host)


def _int_seeds(s: int, idx: np.ndarray) -> np.ndarray:
    return ((s + idx.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)


class SeedState:
    """The seeds and epochs a generator reads.

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

    @classmethod
    def create(cls, seeds, num_envs: int, device) -> SeedState:
        """Build from what ``TrackGenerator(seeds=)`` takes: int, [E] int32 array, rng, state."""
        device = wp.get_device(device)
        if isinstance(seeds, SeedState):
            if seeds.seeds.shape[0] != num_envs or seeds.seeds.device != device:
                raise ValueError(
                    "seeds: the SeedState's batch size or device differs from the "
                    f"generator's ({num_envs} envs on {device})"
                )
            return seeds
        epochs = wp.zeros(num_envs, dtype=wp.int32, device=device)
        if seeds is None:
            seeds = 0
        if isinstance(seeds, PerEnvSeededRNG):
            if seeds.num_envs != num_envs or seeds.device != device:
                raise ValueError(
                    f"seeds: the PerEnvSeededRNG has {seeds.num_envs} envs on {seeds.device}, "
                    f"the generator {num_envs} envs on {device}; build the rng to match"
                )
            return cls(seeds.seeds_warp, epochs, seeds, owned=False)
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
            arr = wp.array(
                _int_seeds(int(seeds), np.arange(num_envs)), dtype=wp.int32, device=device
            )
            return cls(arr, epochs, None, owned=True)
        return cls(_as_seed_array(seeds, num_envs, device, "seeds"), epochs, None, owned=False)

    def reset_epoch(self) -> None:
        """Set every env's epoch to 0 (takes effect at the env's next regeneration)."""
        self.epochs.zero_()

    def set(self, seeds) -> None:
        """Write new seeds for every env (an int ``s`` gives ``s + e``, or ``[E]`` values).

        Seeds owned by the generator are written directly; seeds of a
        :class:`PerEnvSeededRNG` are written through it. Seeds bound to your own array are
        never written by the library: that raises RuntimeError.
        """
        if self.rng is not None:
            self.rng.set_seeds_warp(seeds, None)
            return
        if not self.owned:
            raise RuntimeError(
                "the seeds are bound to your own array: the library never writes it; write "
                "new values into that array, then regenerate()"
            )
        E = self.seeds.shape[0]
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
            vals = _int_seeds(int(seeds), np.arange(E))
        else:
            vals = np.asarray(seeds.numpy() if isinstance(seeds, wp.array) else seeds).reshape(-1)
            if vals.shape[0] != E:
                raise ValueError(f"seeds has {vals.shape[0]} entries, expected {E}")
            vals = vals.astype(np.int64).astype(np.int32)
        self.seeds.assign(vals)

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
