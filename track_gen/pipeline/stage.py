"""The stage interface every pipeline stage (built-in or plugin) implements."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import warp as wp

__all__ = ["ParamSpec", "Stage", "Workspace", "Layout"]


@dataclass(frozen=True)
class ParamSpec:
    """A dynamic per-env parameter of a stage, stored on the device as ``[E]`` float32.

    Attributes:
        name: field name inside the stage (the public name is ``"<stage>.<name>"``).
        config_field: the :class:`~track_gen.TrackGenConfig` field giving its default
            (or None with ``default``).
        lo, hi: allowed closed range (None: unbounded); ``lo_open`` makes ``lo`` exclusive.
        doc: meaning and unit.
    """

    name: str
    config_field: str | None = None
    default: float = 0.0
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    doc: str = ""
    write_lo_open: bool = False

    def check(self, qualified: str, value: float, write: bool = False) -> None:
        """Raise ValueError naming the parameter when ``value`` is out of range.

        ``write=True`` checks a value written after construction: with ``write_lo_open``
        its lower bound is exclusive there (a gate width may start at 0, but a width set
        later must be > 0).
        """
        import math

        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"params[{qualified!r}] = {value!r} must be finite")
        lo_open = self.lo_open or (write and self.write_lo_open)
        if self.lo is not None and (v <= self.lo if lo_open else v < self.lo):
            op = ">" if lo_open else ">="
            raise ValueError(
                f"params[{qualified!r}] = {value!r} is out of range: must be {op} {self.lo}"
            )
        if self.hi is not None and v > self.hi:
            raise ValueError(
                f"params[{qualified!r}] = {value!r} is out of range: must be <= {self.hi}"
            )


@dataclass(frozen=True)
class Layout:
    """The fixed shapes of a generator (never change after construction).

    Attributes:
        family: ``"track"``.
        num_envs: batch size E.
        N_max: per-env bead capacity (stride of every per-bead array).
        num_points: sampler output resolution (stride of ``Workspace.line``).
        device: the Warp device.
    """

    family: str
    num_envs: int
    N_max: int
    num_points: int
    device: Any


@dataclass
class Workspace:
    """Buffers shared between stages, allocated once by the program.

    Attributes:
        layout: the :class:`Layout`.
        config: the :class:`~track_gen.TrackGenConfig` the pipeline was built from.
        active: int32 ``[E]``: 1 for envs rebuilt by the current call (mask), else 0.
            Every stage skips inactive envs, which therefore stay bitwise unchanged.
        eff_seed: int32 ``[E]``: effective seed of each env for the current call.
        fail: int32 ``[E]``: :class:`~track_gen.FailBit` flags raised so far this call.
        line: vec2f ``[E*num_points]``: the sampler's closed centerline (written by the sampler).
        beads: vec2f ``[E*N_max]``: constant-spacing beads (resample -> relax -> inflate).
        count: int32 ``[E]``: real beads in ``beads``.
        result: the :class:`~track_gen.Track` being built.
        diagnostics: name -> device array that stages expose (e.g. relax overflow counts).
        inputs: name -> stable device array a stage reads and the user writes in place
            (declared with :meth:`add_input`; exposed as ``generator.inputs``).
        input_info: name -> description of each input.
    """

    layout: Layout
    config: Any
    active: wp.array
    eff_seed: wp.array
    fail: wp.array
    line: wp.array
    beads: wp.array
    count: wp.array
    result: Any
    diagnostics: dict = dataclasses.field(default_factory=dict)
    inputs: dict = dataclasses.field(default_factory=dict)
    input_info: dict = dataclasses.field(default_factory=dict)

    def add_input(self, name: str, array: wp.array, doc: str) -> wp.array:
        """Expose ``array`` as a user-writable generator input named ``name``
        (``"<stage>.<field>"``). Every regeneration and every replay reads it in place."""
        if name in self.inputs or name == "regen_mask":
            raise ValueError(f"generator input {name!r} is declared twice")
        self.inputs[name] = array
        self.input_info[name] = doc
        return array


class Stage:
    """Base class of a pipeline stage.

    A stage is built once per program with ``Stage(name, config, options)``; it allocates its
    scratch in :meth:`allocate` and launches its kernels in :meth:`enqueue`, which must not
    allocate, synchronize or read device data on the host (unless the stage is registered
    with ``capturable=False``). It reads and writes only the rows of envs with
    ``ws.active[e] != 0``.

    Class attributes:
        role: ``"sampler"`` (writes ``ws.line``) or ``"process"`` (anything after).
        PARAMS: the stage's dynamic per-env parameters (:class:`ParamSpec`).
    """

    role: ClassVar[str] = "process"
    PARAMS: ClassVar[tuple[ParamSpec, ...]] = ()

    def __init__(self, name: str, config, options: dict | None = None):
        self.name = name
        self.config = config
        self.options = dict(options or {})

    def resolve(self, registry) -> None:
        """Look up other stages in ``registry`` (composite stages); called before params."""

    def param_groups(self) -> list[tuple[str, tuple[ParamSpec, ...]]]:
        """``(prefix, PARAMS)`` groups this stage declares; default: its own PARAMS under its
        name. ``enqueue`` receives each field by short name (own group) and by
        ``"<prefix>.<field>"``."""
        return [(self.name, type(self).PARAMS)]

    def host_stages(self) -> list[str]:
        """Names of contained stages registered with ``capturable=False`` (composites)."""
        return []

    def allocate(self, ws: Workspace) -> None:
        """Allocate scratch buffers (called once, outside any capture)."""

    def enqueue(self, ws: Workspace, params: dict) -> None:
        """Launch the stage's kernels on the current stream.

        Args:
            ws: the shared :class:`Workspace`.
            params: ``field name -> [E] float32 device array`` for this stage's PARAMS.
        """
        raise NotImplementedError(f"stage {type(self).__name__} must implement enqueue()")
