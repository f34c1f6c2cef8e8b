"""The episode bookkeeping every batched env shares: why an episode ended
(:class:`RaceDone`), the curriculum signal modes, the arrays of the shared bookkeeping in one
``@wp.struct`` (:class:`EpisodeArrays`) with its launch constants (:class:`EpisodeRules`),
and the ``@wp.func`` that closes a step of one env (step count, lap timing, the done flags,
the running statistics, the curriculum signal). An env's own kernel computes its progress
and reward, then calls :func:`close_step`.

:class:`~track_gen.envs.BatchedEnv` builds both structs once, at construction
(``env._episode_arrays``, ``env._episode_rules``): a struct passed to a launch is copied by
value (the arrays' pointers) when a graph records it, so it must reference the env's own
arrays for good; the env refuses a rebinding of any of them
(:class:`~track_gen.envs.base.FixedArrays`)."""

from __future__ import annotations

import enum

import warp as wp

__all__ = [
    "SIGNAL_LAP_TIME",
    "SIGNAL_NONE",
    "SIGNAL_SUCCESS",
    "EpisodeArrays",
    "EpisodeRules",
    "RaceDone",
    "close_step",
    "episode_rules",
]

wp.set_module_options({"enable_backward": False})


class RaceDone(enum.IntFlag):
    """Why an episode ended (``env.done_reason[e]``; several bits may be set)."""

    OOB = 1  #: the agent left the course (off the road, or a crash): terminated
    LAPS = 2  #: ``max_laps`` laps completed (terminated)
    TIME_OUT = 4  #: ``max_episode_steps`` steps taken (truncated, alone)
    INVALID = 8  #: no usable course (``valid == 0``) or a non-finite agent state (terminated)


_OOB = wp.constant(int(RaceDone.OOB))
_LAPS = wp.constant(int(RaceDone.LAPS))
_TIME_OUT = wp.constant(int(RaceDone.TIME_OUT))
_INVALID = wp.constant(int(RaceDone.INVALID))

#: What an env writes into the curriculum signal (its ``signal_mode``): nothing, the
#: episode's success (``"learnability"``) or its last timed lap time (``"regret"``).
SIGNAL_NONE, SIGNAL_SUCCESS, SIGNAL_LAP_TIME = 0, 1, 2
_SIGNAL_SUCCESS = wp.constant(SIGNAL_SUCCESS)
_SIGNAL_LAP_TIME = wp.constant(SIGNAL_LAP_TIME)


@wp.struct
class EpisodeArrays:
    """The per-env arrays of the shared episode bookkeeping, each ``[E]`` (one per env): the
    ONE output parameter (``episode_inout``) of an env's episode kernel, handed whole to
    :func:`close_step`. The env's kernel writes ``s_prev``, ``progress`` and ``reward``
    itself (its own measure of progress and its own reward); :func:`close_step` updates
    every other field. Every field is the env's own array (the same ``wp.array`` object as
    ``env.episode.<name>``, ``env.outputs.<name>``, ...), referenced, never copied.

    Attributes:
        length: int32 ``[E]``: steps of the running episode (``env.episode_length``).
        s_prev: float32 ``[E]``: the agent's arc position on the course line at the last
            step, length units of the course (NaN: none yet).
        progress: float32 ``[E]``: laps gained in the running episode
            (``env.episode_progress``).
        lap_mark: int32 ``[E]``: the step (of the running episode) the last lap completed
            on (-1: none yet).
        lap_last: float32 ``[E]``: s, the episode's last timed lap (NaN: none yet).
        stat_episodes: int32 ``[E]``: episodes ended since the statistics were cleared.
        stat_progress: float32 ``[E]``: laps, the sum of their progress.
        stat_laps: int32 ``[E]``: those of them that completed ``max_laps`` laps.
        stat_steps: int32 ``[E]``: steps, the sum of their lengths.
        stat_timed: int32 ``[E]``: laps timed.
        stat_lap_time: float32 ``[E]``: s, the sum of the timed laps.
        stat_par_laps: int32 ``[E]``: laps timed on a course with a par.
        stat_par_ratio: float32 ``[E]``: the sum of their lap time / par (no unit).
        reward: float32 ``[E]``: the step's reward (``env.reward``).
        done: int32 ``[E]``: 1 where the episode ended this step (``env.done``).
        time_out: int32 ``[E]``: 1 where it ended by ``max_episode_steps`` alone
            (``env.time_out``).
        done_reason: int32 ``[E]``: :class:`RaceDone` flags, 0 when not done
            (``env.done_reason``).
        final_progress: float32 ``[E]``: laps gained by the episode as of this step
            (``env.final_progress``).
        final_lap_time: float32 ``[E]``: s, the episode's last timed lap as of this step,
            NaN before one (``env.final_lap_time``).
        signal: float32 ``[E]``: the curriculum signal (``env.curriculum_signal``; written
            per :class:`EpisodeRules` ``signal_mode``).
    """

    length: wp.array(dtype=wp.int32)
    s_prev: wp.array(dtype=wp.float32)
    progress: wp.array(dtype=wp.float32)
    lap_mark: wp.array(dtype=wp.int32)
    lap_last: wp.array(dtype=wp.float32)
    stat_episodes: wp.array(dtype=wp.int32)
    stat_progress: wp.array(dtype=wp.float32)
    stat_laps: wp.array(dtype=wp.int32)
    stat_steps: wp.array(dtype=wp.int32)
    stat_timed: wp.array(dtype=wp.int32)
    stat_lap_time: wp.array(dtype=wp.float32)
    stat_par_laps: wp.array(dtype=wp.int32)
    stat_par_ratio: wp.array(dtype=wp.float32)
    reward: wp.array(dtype=wp.float32)
    done: wp.array(dtype=wp.int32)
    time_out: wp.array(dtype=wp.int32)
    done_reason: wp.array(dtype=wp.int32)
    final_progress: wp.array(dtype=wp.float32)
    final_lap_time: wp.array(dtype=wp.float32)
    signal: wp.array(dtype=wp.float32)


@wp.struct
class EpisodeRules:
    """The launch constants of the shared episode bookkeeping (one value for every env; a
    ``# static`` parameter of an env's episode kernel, named ``rules``).

    Attributes:
        dt: s, the env's step.
        max_laps: laps that end an episode (:attr:`RaceDone.LAPS`).
        max_episode_steps: steps that end an episode (:attr:`RaceDone.TIME_OUT`).
        signal_mode: what :func:`close_step` writes into ``signal``: :data:`SIGNAL_NONE`,
            :data:`SIGNAL_SUCCESS` or :data:`SIGNAL_LAP_TIME`.
    """

    dt: float
    max_laps: int
    max_episode_steps: int
    signal_mode: int


def episode_rules(dt: float, max_laps: int, max_episode_steps: int, signal_mode: int):
    """An :class:`EpisodeRules` of these values (``dt`` in s; the env's config checked
    them)."""
    rules = EpisodeRules()
    rules.dt = float(dt)
    rules.max_laps = int(max_laps)
    rules.max_episode_steps = int(max_episode_steps)
    rules.signal_mode = int(signal_mode)
    return rules


@wp.func
def close_step(
    e: int,
    ok: bool,
    crashed: bool,
    lap_completed: bool,
    laps: int,
    prog: float,
    par: float,
    has_par: bool,
    rules: EpisodeRules,
    ep: EpisodeArrays,
):
    """Close env ``e``'s step: count it, time a lap completed on it, decide why the episode
    ends (``ok`` False: INVALID; ``crashed``: OOB; ``laps >= rules.max_laps``: LAPS; the step
    count: TIME_OUT), write the done flags, add an ended episode to the statistics and write
    the curriculum signal (``rules.signal_mode`` 1: 1.0 where ``max_laps`` laps were
    completed, else 0.0; 2: the last timed lap, s, ``+inf`` when none was timed; 0 leaves it
    as it is). Every array it writes is a field of ``ep`` (:class:`EpisodeArrays`, the
    episode kernel's ``episode_inout``); ``prog``: laps, the episode's progress as of this step.

    Lap timing: on the step a lap completes (``lap_completed``), the time since the previous
    completion of the same episode, ``(steps - lap_mark) * rules.dt``, is a timed lap (one
    loop of the course at racing speed; the first lap of an episode, from the standing
    start, is not timed); with a par (``has_par``, ``par`` in s) its ratio to ``par`` is
    summed too."""
    steps = ep.length[e] + 1
    ep.length[e] = steps
    lap_last = ep.lap_last[e]
    if ok and lap_completed:
        mark = ep.lap_mark[e]
        if mark >= 0:
            lap_s = float(steps - mark) * rules.dt
            lap_last = lap_s
            ep.stat_timed[e] = ep.stat_timed[e] + 1
            ep.stat_lap_time[e] = ep.stat_lap_time[e] + lap_s
            if has_par:
                ep.stat_par_laps[e] = ep.stat_par_laps[e] + 1
                ep.stat_par_ratio[e] = ep.stat_par_ratio[e] + lap_s / par
        ep.lap_mark[e] = steps
    ep.lap_last[e] = lap_last
    ep.final_lap_time[e] = lap_last
    reason = int(0)
    if not ok:
        reason = reason | _INVALID
    else:
        if crashed:
            reason = reason | _OOB
        if laps >= rules.max_laps:
            reason = reason | _LAPS
    if steps >= rules.max_episode_steps:
        reason = reason | _TIME_OUT
    ep.done_reason[e] = reason
    done = reason != 0
    ep.done[e] = wp.where(done, 1, 0)
    ep.time_out[e] = wp.where(reason == _TIME_OUT, 1, 0)  # truncated, not terminated
    ep.final_progress[e] = prog
    if done:
        ep.stat_episodes[e] = ep.stat_episodes[e] + 1
        ep.stat_progress[e] = ep.stat_progress[e] + prog
        ep.stat_steps[e] = ep.stat_steps[e] + steps
        if (reason & _LAPS) != 0:
            ep.stat_laps[e] = ep.stat_laps[e] + 1
    if rules.signal_mode == _SIGNAL_SUCCESS:
        ep.signal[e] = wp.where((reason & _LAPS) != 0, 1.0, 0.0)
    elif rules.signal_mode == _SIGNAL_LAP_TIME:
        ep.signal[e] = wp.where(wp.isfinite(lap_last), lap_last, wp.inf)
