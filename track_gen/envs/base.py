"""What every batched env of :mod:`track_gen.envs` shares: :class:`BatchedEnv`.

An env is ``E`` agents, one per env, each on its own course of one
:class:`~track_gen.course.Course`. The base owns everything but the agent:

* the device state in typed containers, allocated once through the allocation budget:
  :class:`StepOutputs` (observation, reward, done flags), :class:`EpisodeState` (the running
  episode's bookkeeping), :class:`EpisodeStats` (what :meth:`BatchedEnv.stats` sums);
* the observation: the env's own state columns first (written by the env's ONE state
  writer, for a step and for a reset alike), then the columns of every observed
  :class:`~track_gen.tools.ObservationTerm`, in the order of ``config.observations``;
* the step (:meth:`BatchedEnv.step`): act, course step, observe, close the step, the
  curriculum's update, and the masked auto-reset of the done envs (a masked regeneration, the
  curriculum's pick, or the same course), recordable into one graph (:meth:`capture`);
* final observations (a done env's last observation of its ended episode), reseeding,
  statistics.

A subclass is its agent (``RaceEnv``: a car): its config (with ``dt``, s, ``max_laps`` and
``max_episode_steps``, which the base reads for the episode's rules), its state container,
and four methods the base calls in order:

* ``_act()``: move the agents by :attr:`actions` (the dynamics kernel);
* ``_write_state(res, mask, masked_only, write_final)``: the env's state columns and the
  usable-env flags ``outputs.ok`` (and, on a reset, the episode's first progress mark);
* ``_close_step(res)``: reward, done flags and bookkeeping of the step, one launch of the
  env's episode kernel, which takes ``self._episode_rules``
  (:class:`~track_gen.envs.episode.EpisodeRules`) among its static parameters and
  ``self._episode_arrays`` (:class:`~track_gen.envs.episode.EpisodeArrays`) as its first
  output, and hands both to :func:`~track_gen.envs.episode.close_step` (the shared part);
* ``_respawn(mask)``: the masked envs' agents at the start of their course.

:class:`FixedArrays`: the public device arrays of an env are allocated once and read by
pointer (by every step, by a recorded graph, and through ``_episode_arrays``, built once
at construction): rebinding one (``env.actions = new``, ``env.episode.length = new``)
would be ignored silently, so it raises, naming the way to write into it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import warp as wp

from ..core.budget import AllocationBudget
from ..core.checks import INT32_MAX, INT32_MIN, check_bool, check_seed_values, is_int
from ..core.tunable import Tunable
from ..curriculum import LevelReplay
from ..curriculum import fields as curriculum_fields
from ..tools import observation_term, observation_terms
from ..tools.terms import FINAL_ALL, FINAL_NONE, FINAL_UNMASKED, TermContext, TermOutputs
from .episode import EpisodeArrays, episode_rules

__all__ = [
    "BatchedEnv",
    "EnvStats",
    "EpisodeState",
    "EpisodeStats",
    "FixedArrays",
    "StepOutputs",
    "device_of",
    "env_seeds",
    "observation_fields",
    "observation_namespace",
]


class FixedArrays:
    """A mixin: after :meth:`_seal`, assigning any public attribute that holds a ``wp.array``
    or a container of them (another :class:`FixedArrays`, e.g. a :class:`DeviceArrays`),
    or is listed in ``_FIXED`` (an optional array that may be None), raises AttributeError;
    private attributes and other attributes are unaffected."""

    #: Public names that are fixed even while they hold None (an optional array).
    _FIXED: tuple[str, ...] = ()
    #: How the error names the object holding the attribute (``env.actions.assign(...)``).
    _HOLDER = "env"
    _sealed = False

    def _seal(self) -> None:
        object.__setattr__(self, "_sealed", True)

    def __setattr__(self, name: str, value) -> None:
        if self._sealed and not name.startswith("_"):
            current = getattr(self, name, None)
            if isinstance(current, (wp.array, FixedArrays)) or name in self._FIXED:
                what = type(self).__name__
                if current is None:
                    raise AttributeError(
                        f"{what}.{name} is None in this env (it was not enabled at "
                        "construction) and cannot be set afterwards: enable it when building "
                        "the env"
                    )
                where = f"{self._HOLDER}.{name}"
                if isinstance(current, FixedArrays):
                    raise AttributeError(
                        f"{what}.{name} holds arrays every step (and a recorded graph) reads "
                        f"from their allocation at construction, so it cannot be rebound: "
                        f"write into its arrays, {where}.<array>.assign(values)"
                    )
                raise AttributeError(
                    f"{what}.{name} is read by every step (and a recorded graph) from the "
                    f"array allocated at construction, so it cannot be rebound: write into it, "
                    f"{where}.assign(values) or wp.copy({where}, src)"
                )
        object.__setattr__(self, name, value)


# ------------------------------------------------------------------------------ containers
def array(dtype, shape: str = "E", fill: Any = 0, doc: str = ""):
    """A field of a device container: ``dtype``, ``shape`` ``"E"`` (one per env) or
    ``"E,D"`` (one row of ``D`` per env), initial value ``fill``."""
    return dataclasses.field(default=None, metadata={"dtype": dtype, "shape": shape, "fill": fill})


class DeviceArrays(FixedArrays):
    """The base of a typed container of device arrays: :meth:`allocate` makes every field
    (its dtype, shape and fill from the field's :func:`array` declaration) through a budget.

    A container is sealed once built (:class:`FixedArrays`): the env's kernels, its
    recorded graph and its :class:`~track_gen.envs.episode.EpisodeArrays` read these very
    arrays, so ``container.field = other`` raises; write into the array instead."""

    _HOLDER = "container"

    def __post_init__(self) -> None:
        self._seal()

    @classmethod
    def allocate(cls, budget: AllocationBudget, E: int, D: int = 0, **given):
        """Every field of the class on the budget's device (``given``: fields passed in, e.g.
        an array another part owns)."""
        out = {}
        for f in dataclasses.fields(cls):
            if f.name in given:
                out[f.name] = given[f.name]
                continue
            m = f.metadata
            shape = (E, D) if m["shape"] == "E,D" else E
            what = f"{cls.__name__}.{f.name}"
            fill = m["fill"]
            if isinstance(fill, (int, float)) and fill == 0:  # (NaN != 0)
                out[f.name] = budget.zeros(shape, m["dtype"], what)
            else:
                out[f.name] = budget.full(shape, fill, m["dtype"], what)
        return cls(**out)

    def arrays(self) -> tuple[wp.array, ...]:
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self))


@dataclasses.dataclass
class StepOutputs(DeviceArrays):
    """What a step answers (``E`` envs, ``D`` observation columns).

    Attributes:
        obs: float32 ``[E, D]``: the observation after the last step (for a done env, its new
            episode's first observation).
        final_obs: float32 ``[E, D]``: the observation the last step computed before any reset
            (for a done env, its ended episode's last observation).
        reward: float32 ``[E]``.
        done: int32 ``[E]``: 1 where the episode ended this step (the auto-reset mask).
        time_out: int32 ``[E]``: 1 where it ended by ``max_episode_steps`` alone (truncated).
        done_reason: int32 ``[E]``: :class:`~track_gen.envs.RaceDone` flags (0 when not done).
        ok: int32 ``[E]``: 1 where the env's course and agent are usable this step.
    """

    obs: wp.array = array(wp.float32, "E,D")
    final_obs: wp.array = array(wp.float32, "E,D")
    reward: wp.array = array(wp.float32)
    done: wp.array = array(wp.int32)
    time_out: wp.array = array(wp.int32)
    done_reason: wp.array = array(wp.int32)
    ok: wp.array = array(wp.int32)


@dataclasses.dataclass
class EpisodeState(DeviceArrays):
    """The running episode of each env.

    Attributes:
        length: int32 ``[E]``: steps of the running episode.
        progress: float32 ``[E]``: laps gained in the running episode.
        final_progress: float32 ``[E]``: laps gained by the episode as of the last step (its
            total for a done env).
        s_prev: float32 ``[E]``: the agent's arc position on the course line at the last
            step, length units (NaN: none yet).
        lap_mark: int32 ``[E]``: the step the last lap completed on (-1: none yet).
        lap_last: float32 ``[E]``: s, the episode's last timed lap (NaN: none yet).
        final_lap_time: float32 ``[E]``: s, the episode's last timed lap as of the last step
            (a done env: its ended episode's), NaN before one completes.
    """

    length: wp.array = array(wp.int32)
    progress: wp.array = array(wp.float32)
    final_progress: wp.array = array(wp.float32)
    s_prev: wp.array = array(wp.float32, fill=math.nan)
    lap_mark: wp.array = array(wp.int32, fill=-1)
    lap_last: wp.array = array(wp.float32, fill=math.nan)
    final_lap_time: wp.array = array(wp.float32, fill=math.nan)


@dataclasses.dataclass
class EpisodeStats(DeviceArrays):
    """Sums per env since the last clearing :meth:`BatchedEnv.stats` call.

    Attributes:
        episodes: int32 ``[E]``: episodes ended. progress: float32 ``[E]``: their laps.
        laps: int32 ``[E]``: those that completed ``max_laps``. steps: int32 ``[E]``: their
            steps. timed: int32 ``[E]``: timed laps. lap_time: float32 ``[E]``: their sum, s.
        par_laps: int32 ``[E]``: timed laps on courses with a par. par_ratio: float32 ``[E]``:
            the sum of their lap time / par.
    """

    episodes: wp.array = array(wp.int32)
    progress: wp.array = array(wp.float32)
    laps: wp.array = array(wp.int32)
    steps: wp.array = array(wp.int32)
    timed: wp.array = array(wp.int32)
    lap_time: wp.array = array(wp.float32)
    par_laps: wp.array = array(wp.int32)
    par_ratio: wp.array = array(wp.float32)


@dataclasses.dataclass(frozen=True)
class EnvStats:
    """Episodes that ended, and laps timed, since the last :meth:`BatchedEnv.stats` call with
    ``clear=True``.

    Attributes:
        episodes: episodes ended (all envs).
        mean_progress: mean episode progress, laps (NaN when no episode ended).
        lap_rate: fraction of those episodes that completed ``max_laps`` laps.
        mean_length: mean episode length, steps.
        laps_timed: timed laps completed in the same period (every lap of an episode after
            its first: one loop of the course from the last checkpoint to the last
            checkpoint).
        mean_lap_time: mean time of those laps, s (NaN when none).
        mean_par_percent: mean of ``100 * lap time / par lap time`` over the timed laps on
            courses with a par (NaN without a par or when none): 100 is the par pace, below
            100 faster.
    """

    episodes: int
    mean_progress: float
    lap_rate: float
    mean_length: float
    laps_timed: int = 0
    mean_lap_time: float = math.nan
    mean_par_percent: float = math.nan


# ------------------------------------------------------------------------------ config
#: An env's own observation term (its agent's state columns).
STATE_TERM = "state"


def _known_terms(names: tuple, lookup) -> str | None:
    known = (STATE_TERM, *observation_terms())
    bad = [n for n in names if n not in known]
    if bad:
        return f"{bad} is not an observation term; terms: {known}"
    return None


def observation_fields(state_doc: str) -> tuple[Tunable, ...]:
    """The observation fields of an env's config: ``observations`` (a list-valued field of
    term names, in column order: ``"state"``, the env's own columns described by
    ``state_doc``, and every registered term), then one nested settings field per term
    registered now (the term's settings class with the env's defaults; its flat keywords
    ``<term>_<field>`` as aliases)."""
    observations = Tunable(
        "observations",
        (STATE_TERM,),
        kind="names",
        length=(1, 16),
        rule=_known_terms,
        doc=f"the observation's terms, in column order: 'state' ({state_doc}) and any "
        "registered sensor term ('lidar', 'lookahead', 'cones', 'raster'; docs/training.md); "
        "'state+lidar' is taken for ('state', 'lidar').",
    )
    settings = tuple(
        Tunable(
            term.field,
            term.default_settings(),
            kind="settings",
            settings_class=term.settings,
            flat_prefix=f"{name}_",
            doc=f"the settings of the {name!r} term ({term.settings.__name__}), read only "
            f"when it is observed; flat keywords {name}_<field> set one field.",
        )
        for name, term in observation_terms().items()
    )
    return (observations, *settings)


def _term_settings(self, name: str):
    """The settings of the term ``name``: the config's field of a term registered when the
    config class was made, else the term's own defaults (a term registered later)."""
    term = observation_term(name)
    if term.field in self.__field_names__:
        return getattr(self, term.field)
    return term.default_settings()


def observation_namespace(state_dim, speed_scale) -> dict:
    """The members ``config_class(namespace=)`` gives an env's config with
    :func:`observation_fields`: ``obs_dim``, ``state_dim`` (``state_dim(config)``, the
    state term's columns), ``observed``, ``sensor_dims`` (``{term: columns}`` of the
    observed sensor terms), ``term_context`` (``speed_scale(config)``: 1 / the top speed)
    and ``term_settings(name)``."""

    def context(self) -> TermContext:
        return TermContext(observed=self.observations, speed_scale=speed_scale(self))

    def sensor_dims(self) -> dict[str, int]:
        ctx = context(self)
        return {
            n: observation_term(n).dim(_term_settings(self, n), ctx)
            for n in self.observations
            if n != STATE_TERM
        }

    def obs_dim(self) -> int:
        state = state_dim(self) if STATE_TERM in self.observations else 0
        return state + sum(sensor_dims(self).values())

    return {
        "obs_dim": property(obs_dim, doc="Columns of the observation."),
        "state_dim": property(state_dim, doc="Columns of the state term."),
        "observed": property(lambda self: self.observations, doc="The observed terms."),
        "sensor_dims": property(sensor_dims, doc="Columns of each observed sensor term."),
        "term_context": property(context, doc="What the terms read of the env."),
        "term_settings": _term_settings,
    }


# ------------------------------------------------------------------------------ checks
def device_of(device) -> wp.context.Device:
    """``device`` (None, a name such as ``"cpu"`` / ``"cuda:0"``, or a wp Device) as a Warp
    device; ValueError naming ``device`` and the devices present otherwise."""
    try:
        return wp.get_device(device)
    except Exception:
        names = [d.alias for d in wp.get_devices()]
        raise ValueError(
            f"device = {device!r} is not a Warp device here: pass None or one of {names}"
        ) from None


def env_seeds(seeds, E: int) -> np.ndarray:
    """``seeds`` as int32 ``[E]``: an int ``s`` gives ``s + e``, else one int per env."""
    if is_int(seeds):
        s = int(seeds)
        if s < INT32_MIN or s + E - 1 > INT32_MAX:
            raise ValueError(
                f"seeds = {s} gives env seeds {s}..{s + E - 1}, outside the int32 range: pass "
                f"an int in [{INT32_MIN}, {INT32_MAX - E + 1}]"
            )
        return (s + np.arange(E, dtype=np.int64)).astype(np.int32)
    if isinstance(seeds, (str, bytes, float, bool, np.floating, np.bool_)) or seeds is None:
        raise TypeError(
            f"seeds must be an int (env e gets seeds + e) or one int per env, got "
            f"{type(seeds).__name__} {seeds!r}"
        )
    return check_seed_values("seeds", seeds, E)


#: The settings ``curriculum={...}`` takes: LevelReplay's own declarations.
CURRICULUM_FIELDS = {
    t.name: t
    for t in (
        curriculum_fields.BUFFER_SIZE,
        curriculum_fields.REPLAY_PROB,
        curriculum_fields.SCORE,
        curriculum_fields.STALENESS,
        curriculum_fields.TEMPERATURE,
        curriculum_fields.SEED,
    )
}


def curriculum_settings(curriculum, new_course_on_reset: bool, has_par: bool) -> dict | None:
    """``curriculum`` (None or a mapping of LevelReplay keyword arguments) checked: the
    keyword arguments with normalized values, or None; TypeError / ValueError naming
    ``curriculum.<key>`` otherwise (nothing is built before). ``has_par``: whether the env
    plans a par (``score="regret"`` needs one)."""
    if curriculum is None:
        return None
    names = ", ".join(CURRICULUM_FIELDS)
    if not isinstance(curriculum, Mapping):
        raise TypeError(
            f"curriculum must be None or a mapping of LevelReplay settings ({names}), e.g. "
            f"{{'buffer_size': 256, 'replay_prob': 0.5}}, got {type(curriculum).__name__}"
        )
    for key in curriculum:
        if key not in CURRICULUM_FIELDS:
            raise ValueError(
                f"curriculum.{key!s} ({key!r}) is not a LevelReplay setting: use only {names}"
            )
    for key in ("buffer_size", "replay_prob"):
        if key not in curriculum:
            raise ValueError(
                f"curriculum.{key} is missing: LevelReplay has no default for it, pass e.g. "
                "curriculum={'buffer_size': 256, 'replay_prob': 0.5}"
            )
    kw = {k: CURRICULUM_FIELDS[k].check(v, f"curriculum.{k}") for k, v in curriculum.items()}
    if not new_course_on_reset:
        raise ValueError(
            "curriculum needs new_course_on_reset=True (a curriculum picks each done env's "
            "next course; with False every episode restarts on the same course): pass "
            "new_course_on_reset=True or curriculum=None"
        )
    if kw.get("score") == "regret" and not has_par:
        raise ValueError(
            "curriculum.score = 'regret' scores each lap time against the racing line's par "
            "time, and config plans no racing line: pass config=RaceConfig(racing_line='par') "
            "(or 'observe'), or pick curriculum.score 'learnability' or 'value_loss'"
        )
    return kw


# ------------------------------------------------------------------------------ the base
class BatchedEnv(FixedArrays):
    """The machinery every batched env shares (the module docs give the contract).

    Attributes (besides the subclass's): ``num_envs``, ``device``, ``config``, ``course``,
    ``observed`` (the observation's terms, in column order), ``term_dims`` (``{term:
    columns}``, the env's state term included), ``obs_dim``, ``outputs``
    (:class:`StepOutputs`), ``episode`` (:class:`EpisodeState`), ``curriculum`` and
    ``curriculum_signal`` (None without a curriculum), ``graph`` (the recorded step, or
    None), ``sensors`` (``{term: result}`` of the observed sensor terms, as of the last
    step), and the :class:`StepOutputs` arrays by name (``obs``, ``reward``, ...).
    """

    #: The env's own observation term (its state columns).
    STATE_TERM = STATE_TERM
    _FIXED = ("curriculum_signal",)

    # ------------------------------------------------------------------ construction
    def _init_terms(self, config, speed_scale: float, state_dim: int) -> None:
        """The observed terms of ``config.observations`` (``STATE_TERM`` for the env's own
        columns) with their settings (``config.term_settings(name)``) and columns."""
        self.observed = tuple(config.observations)
        self._ctx = TermContext(observed=self.observed, speed_scale=speed_scale)
        self._terms = []
        dims = {}
        for name in self.observed:
            if name == self.STATE_TERM:
                dims[name] = state_dim
                continue
            term = observation_term(name)
            settings = config.term_settings(name)
            self._terms.append((term, settings))
            dims[name] = term.dim(settings, self._ctx)
        self.term_dims = dims
        self.obs_dim = sum(dims.values())
        self.state_dim = state_dim

    def term_components(self) -> list:
        """The course components of the observed terms: every term's prerequisites, then
        every term's own components, in column order."""
        out = []
        for term, settings in self._terms:
            out.extend(term.prerequisites(settings, self._ctx))
        for term, settings in self._terms:
            out.extend(term.components(settings, self._ctx))
        return out

    def stochastic_terms(self) -> bool:
        """Whether an observed sensor draws noise or dropout (each course step draws anew)."""
        return any(term.stochastic(s) for term, s in self._terms)

    def _init_state(
        self,
        budget: AllocationBudget,
        new_course_on_reset: bool,
        curriculum_kw: dict | None,
        signal_mode: int,
        host_guard: bool,
    ) -> None:
        """The shared device state (after the course and the subclass's agent state)."""
        E = self.num_envs
        self.new_course_on_reset = new_course_on_reset
        self.outputs = StepOutputs.allocate(budget, E, self.obs_dim)
        self.episode = EpisodeState.allocate(budget, E)
        self._stats = EpisodeStats.allocate(budget, E)
        for name in ("obs", "final_obs", "reward", "done", "time_out", "done_reason"):
            setattr(self, name, getattr(self.outputs, name))
        for name in ("final_progress", "final_lap_time"):
            setattr(self, name, getattr(self.episode, name))
        self.episode_length = self.episode.length
        self.episode_progress = self.episode.progress
        # the state columns: the observation itself when observed, else scratch
        if self.STATE_TERM in self.observed:
            self._state_obs, self._state_final = self.obs, self.final_obs
        else:
            S = self.state_dim
            self._state_obs = budget.zeros((E, S), wp.float32, "state scratch")
            self._state_final = budget.zeros((E, S), wp.float32, "state scratch")
        cols, col = {}, 0
        for name, dim in self.term_dims.items():
            cols[name] = col
            col += dim
        self._term_cols = cols
        self._term_out = TermOutputs(obs=self.obs, final_obs=self.final_obs, ok=self.outputs.ok)
        self.sensors: dict = {}
        self._everyone = budget.full(E, 1, wp.int32, "all-envs mask")
        self._signal = budget.full(E, wp.nan, wp.float32, "curriculum signals")
        self._curriculum_kw = curriculum_kw
        self.curriculum = (
            None if curriculum_kw is None else LevelReplay(self.course, **curriculum_kw)
        )
        self.curriculum_signal = None if curriculum_kw is None else self._signal
        self._host_guard = host_guard
        self.graph = None
        # built once: a launch (and a recorded graph) copies the structs by value
        c = self.config
        self._episode_rules = episode_rules(c.dt, c.max_laps, c.max_episode_steps, signal_mode)
        self._episode_arrays = self._make_episode_arrays()

    def _finish_init(self, captured: bool) -> None:
        self._respawn_observe(self._everyone)
        if captured:
            self.capture()
        self._seal()

    # ------------------------------------------------------------------ the step
    def _observe(self, res, mask: wp.array, masked_only: int, write_final: int) -> None:
        """Every observation column: the env's state writer, then every observed term's."""
        self._write_state(res, mask, masked_only, write_final)
        if not self._terms:
            return
        if not self.sensors:  # the sensors answer into the same arrays every step
            self.sensors = {term.name: res[term.name] for term, _ in self._terms}
        sensor_final = FINAL_ALL if write_final == FINAL_ALL else FINAL_UNMASKED
        for term, settings in self._terms:
            col = self._term_cols[term.name]
            term.write(settings, self._ctx, res, col, mask, sensor_final, self._term_out)

    def _make_episode_arrays(self) -> EpisodeArrays:
        """The :class:`~track_gen.envs.episode.EpisodeArrays` of this env: its own episode
        state, statistics, step outputs and curriculum signal (the same ``wp.array``
        objects, referenced)."""
        ep, st, out = self.episode, self._stats, self.outputs
        arrays = EpisodeArrays()
        for name in ("length", "s_prev", "progress", "lap_mark", "lap_last"):
            setattr(arrays, name, getattr(ep, name))
        for f in dataclasses.fields(st):
            setattr(arrays, f"stat_{f.name}", getattr(st, f.name))
        for name in ("reward", "done", "time_out", "done_reason"):
            setattr(arrays, name, getattr(out, name))
        arrays.final_progress = ep.final_progress
        arrays.final_lap_time = ep.final_lap_time
        arrays.signal = self._signal
        return arrays

    def _respawn_observe(self, mask: wp.array) -> None:
        """Respawn the masked agents at the start of their current course, step the course
        once and write their first observation (the others' sensor columns are drawn again
        too, in their observation and their final one)."""
        self._respawn(mask)
        self._observe(self.course.step(), mask, 1, FINAL_NONE)

    def _auto_reset(self) -> None:
        done = self.outputs.done
        if self.curriculum is not None:
            self.curriculum.regenerate(done)
        elif self.new_course_on_reset:
            self.course.regenerate(mask=done, advance=True)
        else:
            self.course.reset(done)
        self._respawn_observe(done)

    def _simulate(self, guard: bool) -> None:
        self._act()
        res = self.course.step()
        self._observe(res, self._everyone, 0, FINAL_ALL)
        self._close_step(res)
        if self.curriculum is not None:  # every step: the staleness counts steps
            self.curriculum.update(self.outputs.done, self._signal)
        if guard and not self.outputs.done.numpy().any():  # CPU only: host memory, no sync
            return
        self._auto_reset()

    # ------------------------------------------------------------------ public API
    def step(self, actions: wp.array | None = None) -> None:
        """Advance every env one step and auto-reset the done ones (see the module docs).

        ``actions``: None (use :attr:`actions` as it is: write into it first) or a float32
        ``[E, A]`` wp.array on the env's device, copied into :attr:`actions`. The outputs
        are the env's stable arrays (:attr:`obs`, :attr:`reward`, :attr:`done`, ...),
        overwritten by the next step. On CUDA nothing is read back to the host.
        """
        if actions is not None and actions is not self.actions:
            self._check_array("actions", actions, wp.float32, tuple(self.actions.shape))
            wp.copy(self.actions, actions)
        if self.graph is not None:
            wp.capture_launch(self.graph)
        else:
            self._simulate(self._host_guard)

    def reset(self, mask: wp.array | None = None) -> None:
        """Restart the episodes of the envs with ``mask[e] != 0`` (None: every env) on their
        SAME course: the agent at rest at the start, progress, localizer and episode counters
        reset, first observation in :attr:`obs`. Other envs are unchanged.

        ``mask``: a contiguous int32 ``[E]`` wp.array on the env's device (checked first).
        """
        if mask is None:
            mask = self._everyone
        else:
            self._check_array("mask", mask, wp.int32, (self.num_envs,))
        self.course.reset(mask)
        self._respawn_observe(mask)

    def reseed(self, seeds) -> None:
        """New seeds for every env (int ``s``: env ``e`` gets ``s + e``; or one int32 per
        env), epochs back to 0, new courses, every episode restarted.

        With a curriculum, :attr:`curriculum` becomes a new ``LevelReplay`` of the same
        settings (an empty buffer; its fresh levels follow the new seeds) and a recorded
        step is recorded again (it launched the old one's kernels)."""
        self.course.generate(seeds=env_seeds(seeds, self.num_envs))
        if self.curriculum is not None:
            self.curriculum = LevelReplay(self.course, **self._curriculum_kw)
            self._signal.fill_(wp.nan)
        self._respawn_observe(self._everyone)
        if self.curriculum is not None and self.graph is not None:
            self.graph = None
            self.capture()

    def capture(self):
        """Record :meth:`step` (without the action copy) once; every later :meth:`step`
        replays it. Returns the graph. Recording runs nothing."""
        if self.graph is None:
            with wp.ScopedCapture(device=self.device) as cap:
                self._simulate(False)
            self.graph = cap.graph
        return self.graph

    @property
    def seeds(self) -> wp.array:
        """int32 ``[E]``: each env's seed (read-only use)."""
        return self.course.generator.seeds.seeds

    @property
    def epochs(self) -> wp.array:
        """int32 ``[E]``: each env's epoch (its course is that of ``(seed, epoch)``)."""
        return self.course.generator.seeds.epochs

    def term_slices(self) -> dict[str, tuple[int, int]]:
        """Each observed term's columns ``[a, b)`` in the observation, in order."""
        return {n: (c, c + self.term_dims[n]) for n, c in self._term_cols.items()}

    def term_bounds(self, name: str) -> tuple[float, float]:
        """``(low, high)`` of every column of the observed term ``name``."""
        if name == self.STATE_TERM:
            return (-math.inf, math.inf)
        return observation_term(name).bounds

    def stats(self, clear: bool = True) -> EnvStats:
        """Episodes ended (and laps timed) since the last clearing call, summed on the host
        (reads device memory: call it between rollouts, not per step)."""
        clear = check_bool("clear", clear)
        st = self._stats

        def total(a, as_float=False) -> float | int:
            v = a.numpy().astype(np.float64 if as_float else np.int64).sum()
            return float(v) if as_float else int(v)

        n, laps, steps = total(st.episodes), total(st.laps), total(st.steps)
        prog = total(st.progress, True)
        timed, lap_s = total(st.timed), total(st.lap_time, True)
        par_laps, ratio = total(st.par_laps), total(st.par_ratio, True)
        if clear:
            for a in st.arrays():
                a.zero_()
        nan = math.nan
        return EnvStats(
            episodes=n,
            mean_progress=prog / n if n else nan,
            lap_rate=laps / n if n else nan,
            mean_length=steps / n if n else nan,
            laps_timed=timed,
            mean_lap_time=lap_s / timed if timed else nan,
            mean_par_percent=100.0 * ratio / par_laps if par_laps else nan,
        )

    def _check_array(self, name: str, arr, dtype, shape: tuple[int, ...]) -> None:
        if not isinstance(arr, wp.array):
            raise TypeError(f"{name} must be a wp.array, got {type(arr).__name__}")
        if arr.dtype != dtype:
            raise TypeError(f"{name} must have dtype {dtype.__name__}, got {arr.dtype.__name__}")
        if tuple(arr.shape) != shape:
            raise ValueError(f"{name} must have shape {shape}, got {tuple(arr.shape)}")
        if arr.device != self.device:
            raise ValueError(f"{name} is on {arr.device}, the env on {self.device}")
        if not arr.is_contiguous:
            raise ValueError(f"{name} must be contiguous")
