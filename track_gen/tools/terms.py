"""Observation terms: a sensor's columns in a batched env's observation, declared beside the
sensor (``tools/<sensor>/term.py``) and registered once (``tools/__init__.py``: one line per
term). An env (:mod:`track_gen.envs`) assembles its observation from the terms its config
names, in that order, after its own state columns; it never names a sensor itself.

A term is a small :class:`ObservationTerm` subclass:

* ``name``: the name an env's ``observations`` field takes (``"lidar"``);
* ``settings``: the settings class of the term (the tool's own, made by
  :func:`settings_class` from its Tunable declarations: ``LidarSettings``), and
  ``env_defaults``: the values an env uses where the tool's own default does not suit a
  policy input (64 beams, not 360) or where the tool has none (a look-ahead's point count);
* :meth:`~ObservationTerm.components`: the course components the term reads (a lidar, a
  cone detector), named after the term, and :meth:`~ObservationTerm.prerequisites`: those
  other sensors may see too (the cones' props, added before every term's components);
* :meth:`~ObservationTerm.dim` and :attr:`~ObservationTerm.bounds`: its columns and their
  range (a gymnasium ``Box``);
* :meth:`~ObservationTerm.write`: one launch of the term's kernel, which calls the term's
  ``@wp.func`` writer per env and writes its columns into the observation (and into the
  final observation, :func:`final_flag`), 0 where the env is not usable or the sensor has no
  answer: every column finite.

``docs/writing-a-sensor.md`` walks a sensor and its term through it.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

import warp as wp

from ..core.component import Component
from ..core.settings import settings_class  # the one maker of settings classes: re-exported

__all__ = [
    "FINAL_ALL",
    "FINAL_NONE",
    "FINAL_UNMASKED",
    "ObservationTerm",
    "TermContext",
    "TermOutputs",
    "final_flag",
    "observation_term",
    "observation_terms",
    "put_column",
    "register_term",
    "unregister_term",
    "settings_class",
    "settings_kwargs",
    "unit_or_zero",
]

wp.set_module_options({"enable_backward": False})

#: Which envs' final observation a writer updates too (its ``write_final``): none (a reset's
#: first observation of the masked envs), every env (a step), or the envs outside the mask
#: (the pass after an auto-reset: the course stepped every env again, and a done env's final
#: observation keeps its ended episode's).
FINAL_NONE, FINAL_ALL, FINAL_UNMASKED = 0, 1, 2
_FINAL_ALL = wp.constant(FINAL_ALL)
_FINAL_UNMASKED = wp.constant(FINAL_UNMASKED)


@wp.func
def final_flag(write_final: int, masked: int) -> int:
    """1 where the env's final observation is written too: every env with ``FINAL_ALL``, the
    envs with ``masked == 0`` with ``FINAL_UNMASKED``, none with ``FINAL_NONE``."""
    fin = int(0)
    if write_final == _FINAL_ALL:
        fin = 1
    elif write_final == _FINAL_UNMASKED and masked == 0:
        fin = 1
    return fin


@wp.func
def unit_or_zero(ok: bool, x: float) -> float:
    """``x`` where ``ok`` and finite, else 0."""
    return wp.where(ok and wp.isfinite(x), x, 0.0)


@wp.func
def put_column(
    obs_out: wp.array2d(dtype=wp.float32),
    final_obs_out: wp.array2d(dtype=wp.float32),
    e: int,
    col: int,
    v: float,
    fin: int,
):
    """``v`` into column ``col`` of env ``e``'s observation, and of its final one when
    ``fin != 0``."""
    obs_out[e, col] = v
    if fin != 0:
        final_obs_out[e, col] = v


@dataclasses.dataclass(frozen=True)
class TermContext:
    """What a term may read of the env that observes it.

    Attributes:
        observed: every term the env observes, in column order (the raster draws a cone
            channel when ``"cones"`` is observed too).
        speed_scale: 1 / the env's top speed, 1/(length unit / s): speeds are observed as
            fractions of it.
    """

    observed: tuple[str, ...]
    speed_scale: float


@dataclasses.dataclass(frozen=True)
class TermOutputs:
    """The arrays a term's writer reads and writes, the same every call.

    Attributes:
        obs: float32 ``[E, D]``: the observation (the term writes its columns).
        final_obs: float32 ``[E, D]``: the final observation (written where
            :func:`final_flag` says so).
        ok: int32 ``[E]``: 1 where the env is usable (its state columns' test); a term writes
            0 elsewhere.
    """

    obs: wp.array
    final_obs: wp.array
    ok: wp.array


class ObservationTerm(abc.ABC):
    """The base of an observation term (the module docs give the contract): a subclass
    implements :meth:`components`, :meth:`dim` and :meth:`write`.

    Class attributes:
        name: the term's name in an env's ``observations``.
        config_field: the settings field of an env's config when not ``name``.
        settings: the settings class (``settings_class``, or ``config_class``); an env's
            config holds one instance per built-in term (``RaceConfig.lidar``).
        env_defaults: field values an env uses instead of the tool's defaults.
        bounds: ``(low, high)`` of every column (a gymnasium ``Box``).
    """

    name: ClassVar[str] = ""
    #: The settings field of an env's config (default: ``name``; another name where the env
    #: has a field of that name already: ``RaceConfig.lookahead`` is the car's look-ahead
    #: distances, so the look-ahead sensor's settings are ``lookahead_points``).
    config_field: ClassVar[str] = ""
    settings: ClassVar[type]
    env_defaults: ClassVar[Mapping[str, Any]] = {}
    bounds: ClassVar[tuple[float, float]] = (float("-inf"), float("inf"))

    @property
    def field(self) -> str:
        """The settings field of an env's config: :attr:`config_field`, else :attr:`name`."""
        return self.config_field or self.name

    def default_settings(self):
        """The settings an env uses when its config names none: the tool's defaults with
        :attr:`env_defaults` over them."""
        return self.settings(**self.env_defaults)

    def prerequisites(self, settings, ctx: TermContext) -> list[Component]:
        """Course components the term needs that other terms' sensors may see too (the
        cones' props, which a lidar sees): an env adds every observed term's prerequisites
        before any term's :meth:`components`. None by default."""
        return []

    @abc.abstractmethod
    def components(self, settings, ctx: TermContext) -> list[Component]:
        """The course components the term reads, in course order (their names are the
        keys :meth:`write` reads from the step's results)."""

    @abc.abstractmethod
    def dim(self, settings, ctx: TermContext) -> int:
        """Columns of the term."""

    def stochastic(self, settings) -> bool:
        """Whether the term's sensor draws noise or dropout (each course step draws anew)."""
        return False

    def needs_racing_line(self, settings) -> bool:
        """Whether the term reads the course's racing line."""
        return False

    @abc.abstractmethod
    def write(
        self,
        settings,
        ctx: TermContext,
        res,
        col: int,
        mask: wp.array,
        write_final: int,
        out: TermOutputs,
    ) -> None:
        """Launch the term's kernel: its columns ``[col, col + dim)`` of every env from the
        step's results ``res`` (a :class:`~track_gen.course.StepResult`)."""

    @staticmethod
    def launch(kernel, inputs: list, out: TermOutputs) -> None:
        """One launch of a term's ``kernel`` (one thread per env) with ``inputs`` (its
        parameters before the outputs), writing ``out.obs`` and ``out.final_obs``."""
        wp.launch(
            kernel,
            out.obs.shape[0],
            inputs=inputs,
            outputs=[out.obs, out.final_obs],
            device=out.obs.device,
        )


def settings_kwargs(settings) -> dict[str, Any]:
    """``settings`` (a settings object, or a term's ``config_class`` instance) as keyword
    arguments of its tool."""
    return {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}


_TERMS: dict[str, ObservationTerm] = {}


def register_term(term: ObservationTerm) -> ObservationTerm:
    """Register ``term`` under ``term.name`` (a lowercase identifier; a third-party term uses
    a namespaced name, ``"acme.sonar"``): TypeError for a non-term or a term without a
    settings class, ValueError for a bad or taken name."""
    if not isinstance(term, ObservationTerm):
        raise TypeError(f"register_term takes an ObservationTerm, got {type(term).__name__}")
    name = term.name
    parts = name.split(".") if isinstance(name, str) else [""]
    if not all(p.isidentifier() and p == p.lower() for p in parts):
        raise ValueError(
            f"observation term name {name!r} must be a lowercase identifier, or dotted "
            "identifiers for a third-party term ('acme.sonar')"
        )
    if name in _TERMS:
        raise ValueError(f"observation term {name!r} is already registered")
    if not (isinstance(term.settings, type) and hasattr(term.settings, "__tunables__")):
        raise TypeError(f"term {name!r}: settings must be a config_class settings class")
    _TERMS[name] = term
    return term


def unregister_term(name: str) -> ObservationTerm:
    """Remove the registered term ``name`` and return it (a plugin reloaded, a test that
    registered its own); ValueError listing the registered ones for an unknown name. An env
    built while it was registered keeps the term it assembled."""
    term = observation_term(name)
    del _TERMS[name]
    return term


def observation_terms() -> dict[str, ObservationTerm]:
    """The registered terms by name, in registration order (a copy)."""
    return dict(_TERMS)


def observation_term(name: str) -> ObservationTerm:
    """The registered term ``name``; ValueError listing the registered ones otherwise."""
    try:
        return _TERMS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"{name!r} is not a registered observation term; registered: {sorted(_TERMS)}"
        ) from None
