"""Seeding data-parallel ranks: every env has a global id, and its courses depend on it alone.

Rank ``r`` of ``R`` with ``E`` envs each owns the global env ids ``r*E .. r*E+E-1``. Env ``g``
(global) gets seed ``base_seed + g``; its course at epoch ``k`` is that of
``(base_seed + g, k)``, a pure function of the pair (:mod:`track_gen.seeds`: the env's slot
never enters). So rank ``r`` draws exactly the courses envs ``r*E .. r*E+E-1`` of one process
with ``R*E`` envs draw, the ranks never overlap, and env ``g``'s courses do not depend on
``R``::

    from track_gen import distributed
    from track_gen.envs import RaceEnv

    layout = distributed.RankLayout.from_torch(num_envs=E)  # torch.distributed rank, size
    env = RaceEnv(E, device, seeds=layout.seeds(base_seed))

:func:`course_hashes` hashes each env's course (for a cross-rank check:
``examples/torchrun_seeding.py``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os

import numpy as np

from .core.checks import INT32_MAX, INT32_MIN, check_int

__all__ = ["RankLayout", "course_hashes"]


@dataclasses.dataclass(frozen=True)
class RankLayout:
    """Which global envs a rank owns.

    Attributes:
        rank: r, in ``[0, world_size)``.
        world_size: R >= 1.
        num_envs: E >= 1, envs on this rank (every rank holds the same E).
    """

    rank: int
    world_size: int
    num_envs: int

    def __post_init__(self):
        check_int("world_size", self.world_size, 1, 2**20)
        check_int("rank", self.rank, 0, self.world_size - 1)
        check_int("num_envs", self.num_envs, 1, 2**24)
        if self.world_size * self.num_envs > 2**31:
            raise ValueError(
                f"world_size * num_envs = {self.world_size * self.num_envs} global envs: "
                "at most 2**31"
            )

    @property
    def first(self) -> int:
        """The global id of this rank's env 0: ``rank * num_envs``."""
        return self.rank * self.num_envs

    @property
    def global_ids(self) -> np.ndarray:
        """int64 ``[E]``: the global ids ``rank*E .. rank*E+E-1`` of this rank's envs."""
        return np.arange(self.first, self.first + self.num_envs, dtype=np.int64)

    def seeds(self, base_seed: int = 0) -> np.ndarray:
        """int32 ``[E]``: ``base_seed + global id`` per local env (pass as ``seeds=`` of
        :class:`~track_gen.envs.RaceEnv` or a generator). ValueError when a global seed leaves
        int32, naming the range ``base_seed`` must lie in."""
        base = check_int("base_seed", base_seed, INT32_MIN, INT32_MAX)
        total = self.world_size * self.num_envs
        if base + total - 1 > INT32_MAX:
            raise ValueError(
                f"base_seed = {base} gives global seeds up to {base + total - 1}, beyond int32: "
                f"pass base_seed <= {INT32_MAX - total + 1}"
            )
        return (base + self.global_ids).astype(np.int32)

    @classmethod
    def from_torch(cls, num_envs: int) -> RankLayout:
        """Rank and world size of the initialised ``torch.distributed`` process group, else
        of the ``RANK`` / ``WORLD_SIZE`` variables torchrun sets, else rank 0 of 1."""
        try:
            import torch.distributed as dist

            if dist.is_available() and dist.is_initialized():
                return cls(dist.get_rank(), dist.get_world_size(), num_envs)
        except ImportError:
            pass
        rank = _env_int("RANK", 0)
        world = _env_int("WORLD_SIZE", 1)
        return cls(rank, world, num_envs)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"environment variable {name}={raw!r} is not an int") from None


def course_hashes(track) -> list[str]:
    """One hex digest (blake2b, 16 bytes) per env of its course: the bytes of its centerline,
    border and arc-length rows, its count, length, validity, fail bits and generation.

    ``track``: a :class:`~track_gen.results.Track` (``course.result``). Reads device memory
    (a host call). Equal digests mean bitwise-equal courses built at the same epoch.
    """
    count = track.count.numpy()
    E = count.shape[0]
    n_max = track.center.shape[0] // E
    rows = [
        track.center.numpy().reshape(E, n_max, 3),
        track.outer.numpy().reshape(E, n_max, 3),
        track.inner.numpy().reshape(E, n_max, 3),
        track.arclen.numpy().reshape(E, n_max),
    ]
    per_env = [count, track.length.numpy(), track.valid.numpy(), track.fail_mask.numpy()]
    per_env.append(track.generation.numpy())
    out = []
    for e in range(E):
        h = hashlib.blake2b(digest_size=16)
        for a in rows:
            h.update(np.ascontiguousarray(a[e]).tobytes())
        for a in per_env:
            h.update(np.ascontiguousarray(a[e]).tobytes())
        out.append(h.hexdigest())
    return out
