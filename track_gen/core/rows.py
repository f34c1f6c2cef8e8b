"""One base for per-env row batches (:class:`RowBatch`): the results whose arrays are flat
``[E*M]`` rows (env ``e`` owns rows ``e*M .. e*M + M - 1``) and ``[E]`` per-env values;
:class:`BoxRowBatch` for the per-box answers of the colliders."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np
import warp as wp

from .budget import planned_buffers
from .checks import check_choice

__all__ = ["BoxRowBatch", "RowBatch"]


class RowBatch:
    """Shared behaviour of a dataclass of ``wp.array`` fields holding a batch of envs.

    A subclass names its row arrays (``[E*M]``, ``M`` rows per env) in ``_row_arrays`` and its
    env arrays (``[E]``) in ``_env_arrays``; any other field (a host str, a stride) is copied
    as is by :meth:`clone`, and so are the instance attributes named in ``_host_attrs``. An
    array field may be None (an answer the tool does not compute).
    A batch without env arrays sets ``_stride_field`` to the name of an int attribute (not a
    dataclass field) that holds ``M`` (0: unknown, the whole batch is one env's rows).
    """

    _row_arrays: ClassVar[tuple[str, ...]] = ()
    _env_arrays: ClassVar[tuple[str, ...]] = ()
    _stride_field: ClassVar[str | None] = None
    #: Host attributes that are not dataclass fields (a unit name) and that :meth:`clone`
    #: and :meth:`env_range` carry over.
    _host_attrs: ClassVar[tuple[str, ...]] = ()

    def _carry(self, out):
        for name in self._host_attrs:
            if name in vars(self):
                setattr(out, name, getattr(self, name))
        return out

    @classmethod
    def buffers(cls, *args, **kwargs) -> list[tuple[int, type]]:
        """``(elements, dtype)`` of every array ``allocate(*args, **kwargs)`` makes, in order
        (the same call run through a :class:`~track_gen.core.budget.BufferPlan`: nothing is
        allocated). Pass the arguments :meth:`allocate` takes, less ``device`` and
        ``budget``."""
        return planned_buffers(
            lambda plan: cls.allocate(*args, device="cpu", budget=plan, **kwargs)
        )

    def _first(self, names: tuple[str, ...]) -> wp.array | None:
        for name in names:
            arr = getattr(self, name)
            if arr is not None:
                return arr
        return None

    @property
    def num_envs(self) -> int:
        """Envs E in the batch."""
        env = self._first(self._env_arrays)
        if env is not None:
            return env.shape[0]
        return self._first(self._row_arrays).shape[0] // self.rows_per_env

    @property
    def rows_per_env(self) -> int:
        """Rows M each env owns (the row stride; 1 for a batch of per-env values only)."""
        stride = int(getattr(self, self._stride_field)) if self._stride_field else 0
        if stride > 0:
            return stride
        row = self._first(self._row_arrays)
        if row is None:
            return 1
        if self._first(self._env_arrays) is None:
            return max(row.shape[0], 1)
        return row.shape[0] // self.num_envs

    @property
    def device(self) -> wp.context.Device:
        """The device every array of the batch lives on."""
        return self._first(self._row_arrays + self._env_arrays).device

    def arrays(self, exclude: tuple[str, ...] = ()) -> list[wp.array | None]:
        """The row arrays, then the env arrays, in their declared order, less the names in
        ``exclude``: the slice of a kernel's launch list that reads or writes the batch."""
        return [getattr(self, n) for n in self._row_arrays + self._env_arrays if n not in exclude]

    def clone(self):
        """A detached deep copy (allocates: call it outside your graph)."""
        copies = {
            f.name: wp.clone(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if isinstance(getattr(self, f.name), wp.array)
        }
        out = dataclasses.replace(self, **copies)
        if self._stride_field:
            setattr(out, self._stride_field, getattr(self, self._stride_field))
        return self._carry(out)

    def env_range(self, lo: int, hi: int):
        """The same batch restricted to envs ``[lo, hi)``: every row and env array cut to
        the range, sharing the memory (no copy; a kernel writing the range writes the
        batch). For a batch with env arrays only."""
        M = self.rows_per_env
        cuts = {}
        for name in self._row_arrays + self._env_arrays:
            arr = getattr(self, name)
            if arr is not None:
                k = M if name in self._row_arrays else 1
                cuts[name] = arr[lo * k : hi * k]
        return self._carry(dataclasses.replace(self, **cuts))

    def host(self, name: str) -> np.ndarray | None:
        """Array ``name`` on the host, shaped per env: ``[E, M, ...]`` for a row array,
        ``[E, ...]`` for an env array (vector dtypes add their components as the last axis);
        None when the array is None. Reads the device (synchronizes): for tests and
        inspection, never in a hot path. On the CPU the result may share the array's
        memory (copy it before the next update if you keep it)."""
        name = check_choice(
            f"{type(self).__name__}.host name", name, self._row_arrays + self._env_arrays
        )
        if name in self._row_arrays:
            arr = getattr(self, name)
            if arr is None:
                return None
            out = arr.numpy()
            return out.reshape((self.num_envs, self.rows_per_env, *out.shape[1:]))
        arr = getattr(self, name)
        return None if arr is None else arr.numpy()


class BoxRowBatch(RowBatch):
    """A row batch of per-box answers (box ``b`` of env ``e`` at row ``e*B + b``) with no env
    arrays: the allocating collider sets ``_boxes_per_env`` to ``B``."""

    _stride_field = "_boxes_per_env"
    _boxes_per_env = 0  # set by allocate (not a dataclass field)

    @property
    def max_boxes(self) -> int:
        """Boxes per env ``B`` (the row stride; 0 for a batch built by hand: the whole batch
        is then one env's rows)."""
        return self._boxes_per_env
